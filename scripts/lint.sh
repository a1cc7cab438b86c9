#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Static checks, one @@RESULT line each (the format guest logs use, so
# parse-results.py counts them): sparse (C=1) with W=1 against both guest
# kernels, and checkpatch --strict on every source file of the module.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

src=$(ls -d "$QPNIC_CACHE"/src/linux-source-* 2>/dev/null | head -n 1)
kbuild=$("$QPNIC_TOP/scripts/build-test-kernel.sh") || die "no test kernel"
for k in "stock /usr/src/linux-headers-$(stock_kver)" "test $kbuild"; do
	set -- $k
	if out=$("$QPNIC_TOP/scripts/build-modules.sh" "$2" "$QPNIC_BUILD/lint-$1" C=1 2>&1); then
		echo "@@RESULT PASS sparse and W=1 clean against the $1 kernel"
	else
		echo "@@RESULT FAIL sparse and W=1 clean against the $1 kernel $(echo "$out" | grep -m3 -E 'warning|error' | tr '\n' ' ')"
	fi
done
files=$(cd "$QPNIC_TOP" && ls drivers/infiniband/sw/qpnic/*.[ch] include/qpnic/*.h kunit/*.c tests/kmod/*.c)
for f in $files; do
	out=$(cd "$QPNIC_TOP" && "$src/scripts/checkpatch.pl" --strict --no-tree --terse -f "$f" 2>&1 |
	      grep -E ': (ERROR|WARNING|CHECK):')
	if [ -z "$out" ]; then
		echo "@@RESULT PASS checkpatch --strict $f"
	else
		echo "@@RESULT FAIL checkpatch --strict $f $(echo "$out" | head -n 2 | tr '\n' ' ')"
	fi
done
echo "@@QPNIC-EXIT 0"
