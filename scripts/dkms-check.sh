#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# usage: dkms-check.sh [SERIES...]   (`make dkms-check`; default: 6.1 6.12)
# The package as users install it: `make deb`, then for each series a
# guest of its stock kernel and Debian release (12 for 6.1, 13 for 6.12)
# with dkms, the compiler and the kernel's headers (build-dkms-rootfs.sh)
# and no qpnic module, where scripts/guest/dkms.sh installs the .deb with
# apt-get, lets DKMS build it, loads it, moves data and purges it. The
# guests run one after the other (DKMS compiles under TCG); counted like
# `make check`.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

series_list=${*:-$QPNIC_SERIES}
"$QPNIC_TOP/scripts/deps.sh"
"$QPNIC_TOP/scripts/build-guest-tests.sh"
deb=$("$QPNIC_TOP/scripts/build-deb.sh" | tail -n 1)
logs=()
for series in $series_list; do
	suite=$(series_suite "$series")
	sdir=$("$QPNIC_TOP/scripts/stock-kernel.sh" "$series")
	moddir=$(ls -d "$sdir"/modroot/usr/lib/modules/*)
	rootfs=$("$QPNIC_TOP/scripts/build-dkms-rootfs.sh" "$series")
	initrd=$QPNIC_BUILD/initrd-dkms-$series.cpio
	"$QPNIC_TOP/scripts/mkinitrd.sh" --rootfs "$rootfs" --deb "$deb" \
		"$suite" "$initrd" "$moddir"
	log=$QPNIC_BUILD/dkms-$series.log
	"$QPNIC_TOP/scripts/run-vm.sh" --quiet --timeout 1800 --mem 4G --log "$log" \
		"$sdir/vmlinuz" "$initrd" dkms
	logs+=("dkms-$series=$log")
done
"$QPNIC_TOP/scripts/parse-results.py" "${logs[@]}"
