#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# usage: build-rootfs.sh [SUITE]   (bookworm, the default, or trixie)
# Guest userspace: a Debian 12 (or 13) minbase debootstrap with the RDMA
# userspace, trimmed and packed into an uncompressed cpio (the test kernel
# has no compressed-initrd support). Cached under $QPNIC_CACHE/rootfs/<key>.
# Prints the cpio path on stdout.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

suite=${1:-bookworm}
packages=iproute2,kmod,procps,e2fsprogs,rdma-core,ibverbs-providers,ibverbs-utils,perftest,rdmacm-utils,python3-pyverbs,libibverbs1,fio,nfs-kernel-server,nfs-common,rpcbind,open-iscsi,cifs-utils,libnl-3-200,libnl-genl-3-200
case $suite in
# (bookworm's ksmbd-tools comes from trixie, below: its libraries are
# here; iperf3 and ethtool serve make bench's two-guest link)
bookworm) packages+=,librdmacm1,libglib2.0-0,iperf3,ethtool ;;
trixie) packages+=,librdmacm1t64,ksmbd-tools ;;
*) die "build-rootfs.sh: suite is bookworm or trixie, not $suite" ;;
esac
mirror=${QPNIC_MIRROR:-http://deb.debian.org/debian}
key=$( { cat "$0"; echo "$suite $packages $mirror"; } | sha256sum | cut -c1-12)
dir=$QPNIC_CACHE/rootfs/$key
if [ -f "$dir/.done" ]; then
	echo "$dir/rootfs.cpio"
	exit 0
fi
command -v debootstrap >/dev/null || die "debootstrap is not installed (run scripts/deps.sh)"
need_free_mb "$QPNIC_CACHE" 2000
rm -rf "$dir" && mkdir -p "$dir"
root=$dir/root
say "debootstrap of the $suite guest userspace (about 3 min; log: $dir/debootstrap.log)"
start=$SECONDS
debootstrap --variant=minbase --include="$packages" "$suite" "$root" "$mirror" \
	>"$dir/debootstrap.log" 2>&1 ||
	{ tail -n 20 "$dir/debootstrap.log" >&2; die "debootstrap failed (log: $dir/debootstrap.log)"; }
say "debootstrap done in $((SECONDS - start)) s"

# Debian 12's ksmbd-tools (3.4.7) predates the share config's payload_sz
# that 6.1.192's ksmbd checks: every tree connect fails. Trixie's (3.5.3)
# fills it, and runs on bookworm's libraries (libglib2.0-0t64 is
# libglib2.0-0 renamed, the same ABI on amd64).
if [ "$suite" = bookworm ]; then
	apt_dir=$dir/apt-trixie
	mkdir -p "$apt_dir/lists/partial"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie main" \
		>"$apt_dir/sources.list"
	apt_opts=(-o Dir::Etc::SourceList="$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache::archives="$apt_dir")
	apt-get "${apt_opts[@]}" update >"$dir/apt-trixie.log" 2>&1 &&
		(cd "$apt_dir" && apt-get "${apt_opts[@]}" download ksmbd-tools) >>"$dir/apt-trixie.log" 2>&1 ||
		{ tail -n 5 "$dir/apt-trixie.log" >&2; die "fetching trixie's ksmbd-tools failed (log: $dir/apt-trixie.log)"; }
	dpkg -x "$apt_dir"/ksmbd-tools_*.deb "$root"
	say "ksmbd-tools from trixie: $(basename "$apt_dir"/ksmbd-tools_*.deb)"
	rm -rf "$apt_dir"
fi

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
