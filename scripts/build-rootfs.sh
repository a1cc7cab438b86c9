#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest userspace: a Debian 12 minbase debootstrap with the RDMA userspace,
# trimmed and packed into an uncompressed cpio (the test kernel has no
# compressed-initrd support). Cached under $QPNIC_CACHE/rootfs/<key>.
# Prints the cpio path on stdout.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

packages=iproute2,kmod,procps,rdma-core,ibverbs-providers,ibverbs-utils,perftest,rdmacm-utils,python3-pyverbs,libibverbs1,librdmacm1,fio,nfs-kernel-server,nfs-common,rpcbind,open-iscsi,ksmbd-tools,cifs-utils
mirror=${QPNIC_MIRROR:-http://deb.debian.org/debian}
key=$( { cat "$0"; echo "$packages $mirror"; } | sha256sum | cut -c1-12)
dir=$QPNIC_CACHE/rootfs/$key
if [ -f "$dir/.done" ]; then
	echo "$dir/rootfs.cpio"
	exit 0
fi
command -v debootstrap >/dev/null || die "debootstrap is not installed (run scripts/deps.sh)"
need_free_mb "$QPNIC_CACHE" 2000
rm -rf "$dir" && mkdir -p "$dir"
root=$dir/root
say "debootstrap of the guest userspace (about 3 min; log: $dir/debootstrap.log)"
start=$SECONDS
debootstrap --variant=minbase --include="$packages" bookworm "$root" "$mirror" \
	>"$dir/debootstrap.log" 2>&1 ||
	{ tail -n 20 "$dir/debootstrap.log" >&2; die "debootstrap failed (log: $dir/debootstrap.log)"; }
say "debootstrap done in $((SECONDS - start)) s"

# Trim what the guest never reads; keep rdma-core's docs: the pyverbs tests live there.
rm -rf "$root"/usr/share/man "$root"/usr/share/info "$root"/usr/share/locale \
	"$root"/var/cache/apt/* "$root"/var/lib/apt/lists/* "$root"/usr/share/zoneinfo
find "$root/usr/share/doc" -mindepth 1 -maxdepth 1 ! -name rdma-core -exec rm -rf {} +
find "$root/usr/share/doc/rdma-core/tests" -name '*.gz' -exec gunzip -f {} +
echo qpnic-guest >"$root/etc/hostname"

(cd "$root" && find . -xdev | cpio -o -H newc -R 0:0 --quiet) >"$dir/rootfs.cpio"
say "guest rootfs: $(du -h "$dir/rootfs.cpio" | cut -f1)"
touch "$dir/.done"
echo "$dir/rootfs.cpio"
