#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Static checks, one @@RESULT line each (the format guest logs use, so
# parse-results.py counts them): sparse (C=2: every file, rebuilt or not)
# with W=1 against every guest kernel (the stock kernel of each series and
# the test kernel), in the folders prepare.sh builds the guests' modules
# in (build/mod-<flavour>), so that the guests' build is not a second
# one; and checkpatch --strict on every source file of the module.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

src=$(ls -d "$QPNIC_CACHE"/src/linux-source-* 2>/dev/null | head -n 1)
kbuild=$("$QPNIC_TOP/scripts/build-test-kernel.sh") || die "no test kernel"
kernels=("test $kbuild")
for series in $QPNIC_SERIES; do
	kernels+=("stock-$series /usr/src/linux-headers-$(series_kver "$series")")
done
for k in "${kernels[@]}"; do
	set -- $k
	if out=$("$QPNIC_TOP/scripts/build-modules.sh" "$2" "$QPNIC_BUILD/mod-$1" C=2 2>&1); then
		echo "@@RESULT PASS sparse and W=1 clean against the $1 kernel"
	else
		echo "@@RESULT FAIL sparse and W=1 clean against the $1 kernel $(echo "$out" | grep -m3 -E 'warning|error' | tr '\n' ' ')"
	fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
files=$(cd "$QPNIC_TOP" && ls drivers/infiniband/sw/qpnic/*.[ch] include/qpnic/*.h kunit/*.c tests/kmod/*.c)
# checkpatch FILE: one result line, in $tmp/<FILE with / as _> (they run
# on every CPU at once and are printed in the files' order)
checkpatch() {
	local f=$1 ignore=() out
	exec >"$tmp/${f//\//_}"
	# The compat header is where an out-of-tree driver must compare
	# LINUX_VERSION_CODE (checkpatch's advice is for code in the tree);
	# it is the only file that may.
	[ "$f" = include/qpnic/compat.h ] && ignore=(--ignore "LINUX_VERSION_CODE,CONSTANT_COMPARISON")
	out=$(cd "$QPNIC_TOP" && "$src/scripts/checkpatch.pl" --strict --no-tree --terse "${ignore[@]}" -f "$f" 2>&1 |
	      grep -E ': (ERROR|WARNING|CHECK):')
	if [ -z "$out" ]; then
		echo "@@RESULT PASS checkpatch --strict $f"
	else
		echo "@@RESULT FAIL checkpatch --strict $f $(echo "$out" | head -n 2 | tr '\n' ' ')"
	fi
}
export -f checkpatch
export QPNIC_TOP src tmp
# shellcheck disable=SC2086
printf '%s\n' $files | xargs -P "$(nproc)" -n 1 bash -c 'checkpatch "$1"' _
for f in $files; do
	cat "$tmp/${f//\//_}" 2>/dev/null ||
		echo "@@RESULT FAIL checkpatch --strict $f (checkpatch gave no result)"
done
# What differs between kernel series lives in compat.h alone.
scattered=$(cd "$QPNIC_TOP" && grep -ln 'LINUX_VERSION_CODE\|KERNEL_VERSION(' $files | grep -v '^include/qpnic/compat.h$')
if [ -z "$scattered" ]; then
	echo "@@RESULT PASS kernel version tests only in include/qpnic/compat.h"
else
	echo "@@RESULT FAIL kernel version tests only in include/qpnic/compat.h" "also in:" $scattered
fi
echo "@@QPNIC-EXIT 0"
