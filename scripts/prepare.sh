#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# usage: prepare.sh test|stock|stock-SERIES
# Build whatever is stale for one guest kernel and print three lines:
# the kernel image, the initramfs, and the module folder qpnic was built in.
# test is the debug 6.1 kernel; stock-SERIES Debian's kernel of a series
# in lib.sh's QPNIC_SERIES with that Debian release's userspace (stock is
# stock-6.1).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

flavour=$1
[ "$flavour" = stock ] && flavour=stock-6.1
suite=bookworm
"$QPNIC_TOP/scripts/deps.sh"
"$QPNIC_TOP/scripts/build-guest-tests.sh"
case $flavour in
test)
	kbuild=$("$QPNIC_TOP/scripts/build-test-kernel.sh")
	kimage=$kbuild/arch/x86/boot/bzImage
	moddir=$(ls -d "$(dirname "$kbuild")"/modroot/lib/modules/*)
	kdir=$kbuild
	;;
stock-*)
	series=${flavour#stock-}
	suite=$(series_suite "$series")
	sdir=$("$QPNIC_TOP/scripts/stock-kernel.sh" "$series")
	kimage=$sdir/vmlinuz
	moddir=$(ls -d "$sdir"/modroot/usr/lib/modules/*)
	kdir=/usr/src/linux-headers-$(series_kver "$series")
	;;
*) die "prepare.sh: flavour is test, stock or stock-SERIES, not $flavour" ;;
esac
out=$QPNIC_BUILD/mod-$flavour
say "building qpnic against the $flavour kernel ($kdir)"
"$QPNIC_TOP/scripts/build-modules.sh" "$kdir" "$out"
kos=$(find "$out" -name '*.ko' | sort)
"$QPNIC_TOP/scripts/mkinitrd.sh" "$suite" "$QPNIC_BUILD/initrd-$flavour.cpio" "$moddir" $kos
echo "$kimage"
echo "$QPNIC_BUILD/initrd-$flavour.cpio"
echo "$out"
