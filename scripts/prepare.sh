#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# usage: prepare.sh test|stock
# Build whatever is stale for one guest kernel and print three lines:
# the kernel image, the initramfs, and the module folder qpnic was built in.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

flavour=$1
"$QPNIC_TOP/scripts/deps.sh"
"$QPNIC_TOP/scripts/build-guest-tests.sh"
case $flavour in
test)
	kbuild=$("$QPNIC_TOP/scripts/build-test-kernel.sh")
	kimage=$kbuild/arch/x86/boot/bzImage
	moddir=$(ls -d "$(dirname "$kbuild")"/modroot/lib/modules/*)
	kdir=$kbuild
	;;
stock)
	sdir=$("$QPNIC_TOP/scripts/stock-kernel.sh")
	kimage=$sdir/vmlinuz
	moddir=$(ls -d "$sdir"/modroot/usr/lib/modules/*)
	kdir=/usr/src/linux-headers-$(stock_kver)
	;;
*) die "prepare.sh: flavour is test or stock, not $flavour" ;;
esac
out=$QPNIC_BUILD/mod-$flavour
say "building qpnic against the $flavour kernel ($kdir)"
"$QPNIC_TOP/scripts/build-modules.sh" "$kdir" "$out"
kos=$(find "$out" -name '*.ko' | sort)
"$QPNIC_TOP/scripts/mkinitrd.sh" "$QPNIC_BUILD/initrd-$flavour.cpio" "$moddir" $kos
echo "$kimage"
echo "$QPNIC_BUILD/initrd-$flavour.cpio"
echo "$out"
