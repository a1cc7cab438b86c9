#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# usage: stock-kernel.sh [SERIES]   (lib.sh's QPNIC_SERIES; default 6.1)
# A stock guest kernel: Debian's linux-image matching the installed
# linux-headers of SERIES, unpacked with dpkg-deb (never installed on the host), with
# the subset of its modules the guest needs. Cached per kernel version.
# Prints the directory (vmlinuz, modroot/) on stdout.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kver=$(series_kver "${1:-6.1}")
# keyed by this script too: a module added below makes a new cache entry
dir=$QPNIC_CACHE/stock-kernel/$kver-$(sha256sum <"$0" | cut -c1-12)
if [ -f "$dir/.done" ]; then
	echo "$dir"
	exit 0
fi
need_free_mb "$QPNIC_CACHE" 1500
rm -rf "$dir" && mkdir -p "$dir"
cd "$dir"
say "downloading linux-image-$kver"
apt-get download "linux-image-$kver" >download.log 2>&1 ||
	{ tail -n 5 download.log >&2; die "apt-get download linux-image-$kver failed"; }
dpkg-deb -x linux-image-"${kver}"_*.deb full
depmod -b full "$kver"
mods=(ib_core ib_uverbs rdma_ucm rdma_cm ib_umad rdma_rxe veth virtio_net virtio_pci
      sch_netem 8021q udp_tunnel ip6_udp_tunnel crc32_generic crc32_pclmul
      nvme-rdma nvmet-rdma rpcrdma nfsd nfsv4 ib_srp ib_srpt target_core_file sd_mod
      ib_iser ib_isert iscsi_target_mod ext4 rds_rdma
      9p 9pnet_virtio	# (run-vm.sh --share: the DKMS guests' compiler cache)
      libcrc32c)	# (what make bench's out-of-tree siw needs)
for m in "${mods[@]}"; do
	modprobe -d full -S "$kver" --show-depends "$m" ||
		die "module $m missing from linux-image-$kver"
done | awk '$1 == "insmod" {print $2}' | sort -u >modules.list
mkdir -p "modroot/usr/lib/modules/$kver"
cp full/lib/modules/"$kver"/modules.{builtin,builtin.modinfo,order} "modroot/usr/lib/modules/$kver/"
while read -r ko; do
	rel=${ko#"$dir"/full/}
	mkdir -p "modroot/usr/$(dirname "$rel")"
	cp "$ko" "modroot/usr/$rel"
done <modules.list
cp "full/boot/vmlinuz-$kver" vmlinuz
rm -rf full linux-image-*.deb
say "stock kernel $kver ready: $(wc -l <modules.list) modules"
touch .done
echo "$dir"
