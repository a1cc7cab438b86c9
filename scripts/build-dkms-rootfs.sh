#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# usage: build-dkms-rootfs.sh SERIES   (6.1 or 6.12)
# The userspace of a guest that installs qpnic-dkms the way a user does:
# the series' guest rootfs (build-rootfs.sh: Debian 12 for 6.1, 13 for
# 6.12) plus dkms, make, the compiler (and ccache) and the headers of the
# series' stock kernel, installed with apt in a chroot. 6.12's headers come from
# Debian 12's security archive (the kernel is Debian 12's) and depend on
# their kernel image: it is installed too, so that apt sees a consistent
# system, and then its modules and /boot are deleted (the guest boots that
# kernel from outside and carries the modules it needs). Cached under $QPNIC_CACHE/dkms-rootfs/<key>;
# prints the cpio path on stdout.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

series=${1:?usage: build-dkms-rootfs.sh SERIES}
suite=$(series_suite "$series")
kver=$(series_kver "$series")
base=$("$QPNIC_TOP/scripts/build-rootfs.sh" "$suite")
mirror=${QPNIC_MIRROR:-http://deb.debian.org/debian}
security=${QPNIC_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
key=$( { cat "$0"; echo "$base $kver $mirror $security"; } | sha256sum | cut -c1-12)
dir=$QPNIC_CACHE/dkms-rootfs/$key
if [ -f "$dir/.done" ]; then
	echo "$dir/rootfs.cpio"
	exit 0
fi
need_free_mb "$QPNIC_CACHE" 3000
rm -rf "$dir" && mkdir -p "$dir"
root=$dir/root
say "DKMS guest userspace for $kver ($suite): copying the guest rootfs"
cp -a "$(dirname "$base")/root" "$root"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
{
	echo "deb [signed-by=$keyring] $mirror $suite main"
	echo "deb [signed-by=$keyring] $security bookworm-security main"
} >"$root/etc/apt/sources.list"
cp "$keyring" "$root$keyring"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
pkgs=(dkms make gcc-12 ccache "linux-headers-$kver")
image=linux-image-$kver
apt-cache show "linux-headers-$kver" | grep -q "^Depends:.*$image" && pkgs+=("$image")
in_root() { chroot "$root" env DEBIAN_FRONTEND=noninteractive LC_ALL=C "$@"; }
mount -t proc proc "$root/proc"
trap 'umount "$root/proc" 2>/dev/null' EXIT
say "apt-get install ${pkgs[*]} (about 2 min; log: $dir/apt.log)"
start=$SECONDS
{ in_root apt-get update && in_root apt-get install -y --no-install-recommends \
	"${pkgs[@]}"; } >"$dir/apt.log" 2>&1 ||
	{ tail -n 20 "$dir/apt.log" >&2; die "installing the DKMS tool chain failed (log: $dir/apt.log)"; }
say "installed in $((SECONDS - start)) s"
umount "$root/proc"
trap - EXIT
# (the guest has no network: apt in it installs local packages only)
rm -rf "$root"/var/cache/apt/* "$root"/var/lib/apt/lists/* "$root/etc/resolv.conf" \
	"$root"/boot/* "$root/usr/lib/modules/$kver/kernel"
[ -d "$root/usr/src/linux-headers-$kver" ] || die "no headers for $kver in the DKMS rootfs"
(cd "$root" && find . -xdev | cpio -o -H newc -R 0:0 --quiet) >"$dir/rootfs.cpio"
rm -rf "$root"
say "DKMS guest rootfs: $(du -h "$dir/rootfs.cpio" | cut -f1)"
touch "$dir/.done"
echo "$dir/rootfs.cpio"
