#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Load the KUnit module (its suites run at load) and print their KTAP,
# read from debugfs before the module is removed.
. /opt/qpnic/guest/lib.sh
modprobe ib_core || exit 1
modprobe qpnic_kunit || echo "@@ modprobe qpnic_kunit failed"
echo "@@KTAP-BEGIN"
for r in /sys/kernel/debug/kunit/*/results; do
	[ -e "$r" ] && cat "$r"
done
echo "@@KTAP-END"
rmmod qpnic_kunit
rmmod qpnic
exit 0
