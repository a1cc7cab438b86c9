#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# usage: dkms-guest.sh [--smp N] SERIES DEB
# One guest of the series' stock kernel and Debian release (12 for 6.1,
# 13 for 6.12) with dkms, the compiler and the kernel's headers
# (build-dkms-rootfs.sh) and no qpnic module, where scripts/guest/dkms.sh
# installs DEB with apt-get, lets DKMS build it, loads it, moves data and
# purges it. Log: build/dkms-SERIES.log; exits with the guest's status.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

smp=2
if [ "${1:-}" = --smp ]; then
	smp=$2
	shift 2
fi
series=${1:?usage: dkms-guest.sh [--smp N] SERIES DEB} deb=${2:?usage: dkms-guest.sh [--smp N] SERIES DEB}
[ -f "$deb" ] || die "no package at $deb (make deb)"
suite=$(series_suite "$series")
sdir=$("$QPNIC_TOP/scripts/stock-kernel.sh" "$series")
moddir=$(ls -d "$sdir"/modroot/usr/lib/modules/*)
rootfs=$("$QPNIC_TOP/scripts/build-dkms-rootfs.sh" "$series")
initrd=$QPNIC_BUILD/initrd-dkms-$series.cpio
"$QPNIC_TOP/scripts/mkinitrd.sh" --rootfs "$rootfs" --deb "$deb" \
	"$suite" "$initrd" "$moddir"
# (no init_on_free: the compiler's every exit would zero its pages)
exec "$QPNIC_TOP/scripts/run-vm.sh" --quiet --timeout 1800 --mem 4G --keep-freed-pages \
	--smp "$smp" \
	--log "$QPNIC_BUILD/dkms-$series.log" "$sdir/vmlinuz" "$initrd" dkms
