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
say "static checks: sparse, W=1, checkpatch --strict"
"$QPNIC_TOP/scripts/lint.sh" >"$QPNIC_BUILD/check-lint.log" 2>&1
logs+=("lint=$QPNIC_BUILD/check-lint.log")
kernels=${KERNELS:-$QPNIC_SERIES}
flavours=()
for k in $kernels; do
	series_suite "$k" >/dev/null
	[ "$k" = 6.1 ] && flavours+=(test)
	flavours+=("stock-$k")
done
for flavour in "${flavours[@]}"; do
	mapfile -t prep < <("$QPNIC_TOP/scripts/prepare.sh" "$flavour") ||
		die "preparing the $flavour guest failed"
	[ ${#prep[@]} = 3 ] || die "preparing the $flavour guest failed"
	log=$QPNIC_BUILD/check-${flavour/#stock-6.1/stock}.log
	# KUnit needs the test kernel; whole-suite comparisons belong on the
	# stock kernel (debug checks slow everything down).
	if [ "$flavour" = test ]; then args=(kunit); else args=(compare); fi
	"$QPNIC_TOP/scripts/run-vm.sh" --quiet --timeout 1800 --log "$log" \
		"${prep[0]}" "${prep[1]}" check "${args[@]}"
	if [ "$flavour" = test ]; then
		logs+=(--expect-ktap "test=$log")
		# SMB Direct across two guests: the stock kernel has none.
		"$QPNIC_TOP/scripts/run-pair.sh" --name smb "${prep[0]}" "${prep[1]}" smbpeer smbpeer
		logs+=("smb-a=$QPNIC_BUILD/smb-a.log" "smb-b=$QPNIC_BUILD/smb-b.log")
	elif [ "$flavour" = stock-6.1 ]; then
		logs+=("stock=$log")
		# Two stock guests joined by a QEMU socket netdev.
		"$QPNIC_TOP/scripts/run-pair.sh" "${prep[0]}" "${prep[1]}" peer peer
		logs+=("pair-a=$QPNIC_BUILD/pair-a.log" "pair-b=$QPNIC_BUILD/pair-b.log")
	else
		logs+=("$flavour=$log")
	fi
	if [ "${flavour#stock}" != "$flavour" ]; then
		cmp=$QPNIC_BUILD/pyverbs-compare-${flavour#stock-}.txt
		"$QPNIC_TOP/scripts/pyverbs-compare.py" "$log" | tee "$cmp" | head -n 3
		say "pyverbs qpnic/rdma_rxe comparison on $flavour: $cmp"
	fi
done
say "make check took $((SECONDS - start)) s"
"$QPNIC_TOP/scripts/parse-results.py" "${logs[@]}"
