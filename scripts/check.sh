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
kernels=${KERNELS:-$QPNIC_SERIES}
# On a fresh machine the guests' userspace (debootstrap, apt in a chroot,
# the stock kernels: mostly waiting on the archive and the disk) is built
# while the test kernel compiles; when cached, these return at once.
(
	for k in $kernels; do
		"$QPNIC_TOP/scripts/stock-kernel.sh" "$k" &&
			"$QPNIC_TOP/scripts/build-dkms-rootfs.sh" "$k" || exit 1
	done >/dev/null
) &
userspace=$!
"$QPNIC_TOP/scripts/build-test-kernel.sh" >/dev/null || die "building the test kernel failed"
wait $userspace || die "building the guests' userspace failed"
flavours=()
for k in $kernels; do
	series_suite "$k" >/dev/null
	[ "$k" = 6.1 ] && flavours+=(test)
	flavours+=("stock-$k")
done
# The debug guest first; then the stock guests and the wire pair side by
# side, and the SMB Direct pair once the stock guests are done; the two
# DKMS guests in the background from the start (see below).
declare -A kimage initrd
prepare() {
	local prep
	mapfile -t prep < <("$QPNIC_TOP/scripts/prepare.sh" "$1") ||
		die "preparing the $1 guest failed"
	[ ${#prep[@]} = 3 ] || die "preparing the $1 guest failed"
	kimage[$1]=${prep[0]} initrd[$1]=${prep[1]}
}
for flavour in "${flavours[@]}"; do
	[ "$flavour" = test ] && prepare test
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
	[ "$1" = stock-6.1 ] && args=(compare debugged)
	"$QPNIC_TOP/scripts/run-vm.sh" --quiet --timeout 1800 --log "$(guest_log "$1")" \
		"${kimage[$1]}" "${initrd[$1]}" check "${args[@]}"
}
# The package, then a guest per series that installs it with apt-get and
# lets DKMS build it (scripts/dkms-guest.sh, its compiles mostly from a
# cache). No other guest waits for them: one vCPU each at the lowest host
# priority, so they use only the CPU the guests in front leave idle (the
# debug guest keeps one of the two mostly idle), and never take it from a
# guest whose vCPUs wait on each other.
{
	if out=$("$QPNIC_TOP/scripts/build-deb.sh" 2>&1); then
		echo "@@RESULT PASS make deb: $(basename "$(echo "$out" | tail -n 1)") lintian clean"
	else
		echo "@@RESULT FAIL make deb: qpnic-dkms builds lintian clean $(echo "$out" | tail -n 5 | tr '\n' ' ')"
	fi
	echo "@@QPNIC-EXIT 0"
} >"$QPNIC_BUILD/check-deb.log"
logs+=("deb=$QPNIC_BUILD/check-deb.log")
deb=$(ls "$QPNIC_BUILD"/deb/qpnic-dkms_*_all.deb 2>/dev/null | head -n 1)
dkms_pids=() lint="" pairs=()
# (if a guest in front fails, make check must not leave these running)
kill_tree() {
	local child
	for child in $(pgrep -P "$1"); do kill_tree "$child"; done
	kill "$1" 2>/dev/null
}
trap 'for p in "${dkms_pids[@]}" $lint "${pairs[@]}"; do kill_tree "$p"; done' EXIT
for series in $kernels; do
	rm -f "$QPNIC_BUILD/dkms-$series.log"
	"$QPNIC_TOP/scripts/dkms-guest.sh" --smp 1 --background "$series" "$deb" &
	dkms_pids+=($!)
	logs+=("dkms-$series=$QPNIC_BUILD/dkms-$series.log")
done
# The static checks build the stock kernels' modules (which the stock
# guests' preparation then finds built), also at the lowest priority.
(
	say "static checks: sparse, W=1, checkpatch --strict (in the background)"
	nice -n 19 "$QPNIC_TOP/scripts/lint.sh" >"$QPNIC_BUILD/check-lint.log" 2>&1
) &
lint=$!
logs+=("lint=$QPNIC_BUILD/check-lint.log")
if [ -n "${kimage[test]:-}" ]; then
	run_guest test
	logs+=(--expect-ktap "test=$(guest_log test)")
fi
wait $lint
lint=""
for flavour in "${flavours[@]}"; do
	[ "$flavour" = test ] || prepare "$flavour"
done
pids=()
for flavour in "${flavours[@]}"; do
	[ "$flavour" = test ] && continue
	run_guest "$flavour" &
	pids+=($!)
done
# Beside the stock guests, two stock guests joined by a QEMU socket
# netdev: A on 6.1, B on 6.12 when that series runs, so the wire carries
# qpnic on each series against rdma_rxe of the other (and qpnic against
# qpnic). One vCPU per guest: a pair keeps about one host CPU busy, and
# single-vCPU guests have no sibling vCPU to spin on while the host runs
# another guest (the wire pair took 481-495 s with two vCPUs per guest,
# 435 s with one). No init_on_free: no ring-lifetime canary runs across
# guests, and zeroing every freed page makes each fork and exec a fifth
# slower.
port=$((20000 + RANDOM % 20000))
if [ -n "${kimage[stock-6.1]:-}" ]; then
	pair_b=() b_series=6.1
	if [ -n "${kimage[stock-6.12]:-}" ]; then
		pair_b=(--b "${kimage[stock-6.12]}" "${initrd[stock-6.12]}") b_series=6.12
	fi
	"$QPNIC_TOP/scripts/run-pair.sh" --smp 1 --keep-freed-pages --port $port "${pair_b[@]}" \
		"${kimage[stock-6.1]}" "${initrd[stock-6.1]}" peer peer &
	pairs=($!)
	logs+=("pair-a-6.1=$QPNIC_BUILD/pair-a.log" "pair-b-$b_series=$QPNIC_BUILD/pair-b.log")
fi
wait "${pids[@]}"
for flavour in "${flavours[@]}"; do
	[ "$flavour" = test ] && continue
	logs+=("$(guest_name "$flavour")=$(guest_log "$flavour")")
done
if [ -n "${kimage[stock-6.1]:-}" ]; then
	# (into the file first: a head behind a tee would close the pipe)
	"$QPNIC_TOP/scripts/pyverbs-compare.py" "$QPNIC_BUILD/check-stock.log" \
		>"$QPNIC_BUILD/pyverbs-compare.txt"
	head -n 3 "$QPNIC_BUILD/pyverbs-compare.txt"
	say "pyverbs qpnic/rdma_rxe comparison: $QPNIC_BUILD/pyverbs-compare.txt"
fi
# Once the stock guests are done, beside the wire pair's second half: SMB
# Direct across two debug-kernel guests (the stock kernels have none),
# also one vCPU each. Without kmemleak: the debug guest checks SMB Direct
# over qpnic for leaks, and the two closing scans alone took each guest
# of the pair ~35 s.
if [ -n "${kimage[test]:-}" ]; then
	"$QPNIC_TOP/scripts/run-pair.sh" --smp 1 --keep-freed-pages --no-kmemleak \
		--port $((port + 1)) --name smb \
		"${kimage[test]}" "${initrd[test]}" smbpeer smbpeer &
	pairs+=($!)
	logs+=("smb-a=$QPNIC_BUILD/smb-a.log" "smb-b=$QPNIC_BUILD/smb-b.log")
fi
[ ${#pairs[@]} = 0 ] || wait "${pairs[@]}"
pairs=()
say "waiting for the DKMS guests"
wait "${dkms_pids[@]}"
dkms_pids=()
say "make check took $((SECONDS - start)) s"
"$QPNIC_TOP/scripts/parse-results.py" "${logs[@]}"
