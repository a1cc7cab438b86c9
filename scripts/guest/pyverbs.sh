#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# usage: pyverbs.sh DEVICE LABEL [all|cm [POLL_TIMEOUT TEST_TIMEOUT]]
# Run Debian's rdma-core pyverbs tests on DEVICE. The classes of the QP
# contract (QPTest, CQAPITest, PDTest, DeviceTest) and of the data path's
# atomics and extended posting (AtomicTest, QpExTestCase) and of memory
# windows (MWTest), and qpnic's own FLUSH cases (QpnicFlushTest, with an
# rdma-core that has FLUSH) must have no failure or error; with "all" the whole suite runs and its counts are
# reported. "cm" runs the rdma_cm tests (CMTestCase) alone, which must
# pass: they need a device whose netdev has a parent device (virtio, not
# veth) and an address.
# POLL_TIMEOUT shortens the suite's wait for each completion, TEST_TIMEOUT
# ends any one test (both in seconds).
. /opt/qpnic/guest/lib.sh
dev=$1 label=$2 scope=${3:-} limits="${4:+--poll-timeout $4} ${5:+--test-timeout $5}"
out=/tmp/pyverbs-$label.log
classes=(QPTest CQAPITest PDTest DeviceTest AtomicTest QpExTestCase MWTest)
# qpnic's FLUSH refusals (pyverbs_qpnic.py), where pyverbs posts FLUSH
python3 -c 'import pyverbs.enums as e; e.IBV_WR_FLUSH' 2>/dev/null &&
	classes+=(QpnicFlushTest)
[ "$scope" = cm ] && classes=(CMTestCase)
if [ "$scope" = all ]; then
	only=()
else
	only=("${classes[@]}")
fi
# shellcheck disable=SC2086
timeout 1200 python3 /opt/qpnic/guest/pyverbs_run.py $limits "$dev" "${only[@]}" >"$out" 2>&1
echo "@@PYVERBS $label $(sed -n 's/^@@PYTEST-SUMMARY //p' "$out")"
for c in "${classes[@]}"; do
	bad=$(grep -E "^@@PYTEST (FAIL|ERROR) $c\." "$out" | cut -d' ' -f3 | tr '\n' ' ')
	good=$(grep -cE "^@@PYTEST ok $c\." "$out")
	if [ -z "$bad" ] && [ "$good" -gt 0 ]; then
		result PASS "pyverbs $c on $label ($good ok)"
	else
		result FAIL "pyverbs $c on $label" "ok=$good failed: $bad"
	fi
done
# The whole suite on qpnic: nothing fails and nothing errors (a test may
# skip for what the device does not offer; rdma_rxe is only compared).
if [ "$scope" = all ] && [ "$label" = qpnic ]; then
	sum=$(sed -n 's/^@@PYTEST-SUMMARY //p' "$out")
	if echo "$sum" | grep -q ' fail=0 error=0 '; then
		result PASS "pyverbs whole suite on $label: no failure, no error ($sum)"
	else
		result FAIL "pyverbs whole suite on $label: no failure, no error" "${sum:-no summary: the run died}"
	fi
fi
# For the log: every test's outcome in a whole-suite run (the host compares
# drivers), otherwise those that did not pass, with their reasons.
if [ "$scope" = all ]; then
	grep -E '^@@PYTEST ' "$out" | sed "s/^@@PYTEST/@@PYVERBS-$label/"
else
	grep -E '^@@PYTEST (FAIL|ERROR)' "$out" | sed "s/^@@PYTEST/@@PYVERBS-$label/"
fi
grep -q '^@@PYTEST-SUMMARY' "$out" || tail -n 20 "$out"
