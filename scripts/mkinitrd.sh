#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# usage: mkinitrd.sh [--rootfs CPIO] [--deb FILE] SUITE OUT MODDIR [KO...]
# The guest's initramfs: the cached Debian SUITE rootfs cpio (or CPIO)
# followed by a small cpio with the kernel's modules (MODDIR, a
# lib/modules/<version> folder), qpnic's modules KO..., /init, the guest
# scripts and the guest tests (and FILE in /opt/qpnic/deb).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

rootfs="" deb=""
while [ $# -gt 0 ]; do
	case $1 in
	--rootfs) rootfs=$2; shift 2 ;;
	--deb) deb=$2; shift 2 ;;
	*) break ;;
	esac
done
suite=$1 out=$2 moddir=$3
shift 3
kver=$(basename "$moddir")
[ -n "$rootfs" ] || rootfs=$("$QPNIC_TOP/scripts/build-rootfs.sh" "$suite")
stage=$(mktemp -d "$QPNIC_BUILD/initrd.XXXXXX")
trap 'rm -rf "$stage" "$stage.cpio"' EXIT
mkdir -p "$stage/usr/lib/modules" "$stage/opt/qpnic"
cp -a "$moddir" "$stage/usr/lib/modules/"
if [ $# -gt 0 ]; then
	mkdir -p "$stage/usr/lib/modules/$kver/updates"
	cp "$@" "$stage/usr/lib/modules/$kver/updates/"
fi
ln -s usr/lib "$stage/lib"
depmod -b "$stage" "$kver"
rm "$stage/lib"
install -m 755 "$QPNIC_TOP/scripts/guest/init" "$stage/init"
cp -a "$QPNIC_TOP/scripts/guest" "$stage/opt/qpnic/guest"
[ -d "$QPNIC_BUILD/guest-bin" ] && cp -a "$QPNIC_BUILD/guest-bin" "$stage/opt/qpnic/bin"
if [ -n "$deb" ]; then
	mkdir -p "$stage/opt/qpnic/deb"
	cp "$deb" "$stage/opt/qpnic/deb/"
fi
(cd "$stage" && find . | cpio -o -H newc -R 0:0 --quiet) >"$stage.cpio"
cat "$rootfs" "$stage.cpio" >"$out"
