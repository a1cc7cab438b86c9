#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# usage: dkms-guest.sh [--smp N] [--background] SERIES DEB
# One guest of the series' stock kernel and Debian release (12 for 6.1,
# 13 for 6.12) with dkms, the compiler and the kernel's headers
# (build-dkms-rootfs.sh) and no qpnic module, where scripts/guest/dkms.sh
# installs DEB with apt-get, lets DKMS build it, loads it, moves data and
# purges it. Log: build/dkms-SERIES.log; exits with the guest's status.
# The guest's compiler goes through ccache, its cache kept on the host in
# $QPNIC_CACHE/ccache/SERIES (QPNIC_DKMS_CCACHE=0: none): DKMS runs make
# as on a user's machine, but a file it compiled before, with the same
# source, headers, flags and compiler, comes from the cache (under TCG
# the compile is most of the guest's time: ~400 CPU-seconds per series).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# --background: run-vm.sh's (the lowest host priority, no lockup detectors)
smp=2 vmargs=()
while [ $# -gt 0 ]; do
	case $1 in
	--smp) smp=$2; shift 2 ;;
	--background) vmargs+=(--background --timeout 3600); shift ;;
	*) break ;;
	esac
done
usage="usage: dkms-guest.sh [--smp N] [--background] SERIES DEB"
series=${1:?$usage} deb=${2:?$usage}
[ -f "$deb" ] || die "no package at $deb (make deb)"
suite=$(series_suite "$series")
sdir=$("$QPNIC_TOP/scripts/stock-kernel.sh" "$series")
moddir=$(ls -d "$sdir"/modroot/usr/lib/modules/*)
rootfs=$("$QPNIC_TOP/scripts/build-dkms-rootfs.sh" "$series")
initrd=$QPNIC_BUILD/initrd-dkms-$series.cpio
guest_args=()
if [ "${QPNIC_DKMS_CCACHE:-1}" != 0 ]; then
	mkdir -p "$QPNIC_CACHE/ccache/$series"
	vmargs+=(--share "$QPNIC_CACHE/ccache/$series")
	guest_args=(ccache)
fi
"$QPNIC_TOP/scripts/mkinitrd.sh" --rootfs "$rootfs" --deb "$deb" \
	"$suite" "$initrd" "$moddir"
# (no init_on_free: the compiler's every exit would zero its pages)
exec "$QPNIC_TOP/scripts/run-vm.sh" --quiet --timeout 1800 --mem 4G --keep-freed-pages \
	--smp "$smp" "${vmargs[@]}" \
	--log "$QPNIC_BUILD/dkms-$series.log" "$sdir/vmlinuz" "$initrd" dkms "${guest_args[@]}"
