#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `make check`: build what is stale, run KUnit and the guest tests in the
# debug test kernel, the guest tests in Debian's stock kernels, and count.
# KERNELS (default: lib.sh's QPNIC_SERIES, "6.1 6.12") names the series
# whose stock kernels run; the debug test kernel (6.1) runs with 6.1.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

start=$SECONDS
need_free_mb "$QPNIC_BUILD" 2000
logs=()
"$QPNIC_TOP/scripts/deps.sh" || die "installing dependencies failed"
"$QPNIC_TOP/scripts/build-test-kernel.sh" >/dev/null || die "building the test kernel failed"
kernels=${KERNELS:-$QPNIC_SERIES}
flavours=()
for k in $kernels; do
	series_suite "$k" >/dev/null
	[ "$k" = 6.1 ] && flavours+=(test)
	flavours+=("stock-$k")
done
# Build every guest first, then boot them: the two stock guests side by
# side (each is mostly one busy vCPU, and waits), the pairs alone.
declare -A kimage initrd
for flavour in "${flavours[@]}"; do
	mapfile -t prep < <("$QPNIC_TOP/scripts/prepare.sh" "$flavour") ||
		die "preparing the $flavour guest failed"
	[ ${#prep[@]} = 3 ] || die "preparing the $flavour guest failed"
	kimage[$flavour]=${prep[0]} initrd[$flavour]=${prep[1]}
done
# (6.1's names stay what they were before there were two series)
guest_name() { if [ "$1" = stock-6.1 ]; then echo stock; else echo "$1"; fi; }
guest_log() { echo "$QPNIC_BUILD/check-$(guest_name "$1").log"; }
# KUnit needs the test kernel; the whole pyverbs suite belongs on the
# stock kernels (debug checks slow everything down), and the comparison
# with rdma_rxe's run on 6.1 (on 6.12 it would cost 1.5 min more).
run_guest() {
	local args=(whole)
	[ "$1" = test ] && args=(kunit)
	[ "$1" = stock-6.1 ] && args=(compare)
	"$QPNIC_TOP/scripts/run-vm.sh" --quiet --timeout 1800 --log "$(guest_log "$1")" \
		"${kimage[$1]}" "${initrd[$1]}" check "${args[@]}"
}
# The static checks run beside the debug guest, whose start (boot, KUnit)
# keeps one CPU busy; the .deb they build is installed at the end.
(
	say "static checks: sparse, W=1, checkpatch --strict (beside the debug guest)"
	"$QPNIC_TOP/scripts/lint.sh" >"$QPNIC_BUILD/check-lint.log" 2>&1
) &
lint=$!
logs+=("lint=$QPNIC_BUILD/check-lint.log")
if [ -n "${kimage[test]:-}" ]; then
	run_guest test
	logs+=(--expect-ktap "test=$(guest_log test)")
	# SMB Direct across two guests: the stock kernel has none.
	"$QPNIC_TOP/scripts/run-pair.sh" --name smb "${kimage[test]}" "${initrd[test]}" smbpeer smbpeer
	logs+=("smb-a=$QPNIC_BUILD/smb-a.log" "smb-b=$QPNIC_BUILD/smb-b.log")
fi
pids=()
for flavour in "${flavours[@]}"; do
	[ "$flavour" = test ] && continue
	run_guest "$flavour" &
	pids+=($!)
done
wait "${pids[@]}"
for flavour in "${flavours[@]}"; do
	[ "$flavour" = test ] && continue
	logs+=("$(guest_name "$flavour")=$(guest_log "$flavour")")
done
if [ -n "${kimage[stock-6.1]:-}" ]; then
	"$QPNIC_TOP/scripts/pyverbs-compare.py" "$QPNIC_BUILD/check-stock.log" |
		tee "$QPNIC_BUILD/pyverbs-compare.txt" | head -n 3
	say "pyverbs qpnic/rdma_rxe comparison: $QPNIC_BUILD/pyverbs-compare.txt"
	# Two stock guests joined by a QEMU socket netdev: A on 6.1, B on
	# 6.12 when that series runs, so the wire carries qpnic on each
	# series against rdma_rxe of the other (and qpnic against qpnic).
	pair_b=() b_series=6.1
	if [ -n "${kimage[stock-6.12]:-}" ]; then
		pair_b=(--b "${kimage[stock-6.12]}" "${initrd[stock-6.12]}") b_series=6.12
	fi
	"$QPNIC_TOP/scripts/run-pair.sh" "${pair_b[@]}" "${kimage[stock-6.1]}" "${initrd[stock-6.1]}" peer peer
	logs+=("pair-a-6.1=$QPNIC_BUILD/pair-a.log" "pair-b-$b_series=$QPNIC_BUILD/pair-b.log")
fi
wait $lint
# The .deb installed and built by DKMS in a guest per series
# (scripts/dkms-guest.sh), the guests side by side with one vCPU each: a
# guest's make -j2 beside another guest's busy vCPUs would leave vCPUs
# spinning on locks whose holders the host descheduled.
deb=$(ls "$QPNIC_BUILD"/deb/qpnic-dkms_*_all.deb 2>/dev/null | head -n 1)
pids=()
for series in $kernels; do
	rm -f "$QPNIC_BUILD/dkms-$series.log"
	"$QPNIC_TOP/scripts/dkms-guest.sh" --smp 1 "$series" "$deb" &
	pids+=($!)
	logs+=("dkms-$series=$QPNIC_BUILD/dkms-$series.log")
done
wait "${pids[@]}"
say "make check took $((SECONDS - start)) s"
"$QPNIC_TOP/scripts/parse-results.py" "${logs[@]}"
