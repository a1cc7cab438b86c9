#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# usage: pyverbs.sh DEVICE LABEL [all]
# Run Debian's rdma-core pyverbs tests on DEVICE. The classes of the QP
# contract (QPTest, CQAPITest, PDTest, DeviceTest) must have no failure
# or error; with "all", the whole suite runs and its counts are reported.
. /opt/qpnic/guest/lib.sh
dev=$1 label=$2 scope=${3:-}
tests=/usr/share/doc/rdma-core/tests
out=/tmp/pyverbs-$label.log
classes=(QPTest CQAPITest PDTest DeviceTest)
if [ "$scope" = all ]; then
	filter=()
else
	filter=()
	for c in "${classes[@]}"; do filter+=(-k "$c"); done
fi
timeout 900 python3 "$tests/run_tests.py" --dev "$dev" -v "${filter[@]}" >"$out" 2>&1
summary=$(grep -E '^(Ran|OK|FAILED)' "$out" | tr '\n' ' ')
ran=$(sed -n 's/^Ran \([0-9]*\) test.*/\1/p' "$out")
nfail=$(grep -cE '\.\.\. FAIL$' "$out")
nerr=$(grep -cE '\.\.\. ERROR$' "$out")
nskip=$(grep -cE '\.\.\. skipped' "$out")
echo "@@PYVERBS $label ran=${ran:-0} passed=$(( ${ran:-0} - nfail - nerr - nskip )) failed=$nfail errors=$nerr skipped=$nskip :: $summary"
for c in "${classes[@]}"; do
	bad=$(grep -E "\.$c\.[a-z_0-9]*\) \.\.\. (FAIL|ERROR)" "$out" | sed 's/ (.*) \.\.\./:/' | tr '\n' ' ')
	good=$(grep -cE "\.$c\.[a-z_0-9]*\) \.\.\. ok" "$out")
	if [ -z "$bad" ] && [ "$good" -gt 0 ]; then
		result PASS "pyverbs $c on $label ($good ok)"
	else
		result FAIL "pyverbs $c on $label" "ok=$good bad: $bad"
	fi
done
# Every failing test, with the reason, for the log.
grep -E '^(FAIL|ERROR):' "$out" | sed "s/^/@@PYVERBS-$label /"
awk '/^(FAIL|ERROR):/{p=1} p&&/^[A-Za-z]*Error|^pyverbs|Error:/{print "@@PYVERBS-'"$label"'   " $0; p=0}' "$out" | head -60
