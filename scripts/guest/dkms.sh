#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# usage: dkms.sh [ccache] -- qpnic installed the way the README tells a
# user to: the qpnic-dkms package (in /opt/qpnic/deb) with apt-get, built
# by DKMS for the running kernel, loaded by modprobe and by `rdma link add`
# through its alias, a pingpong with data checked through librxe, then
# purged. The guest (scripts/dkms-check.sh) has no qpnic module of its own.
# ccache: the compiler goes through ccache (Debian's headers' own switch),
# its cache the host folder shared as 9p tag "share" (dkms-guest.sh).
. /opt/qpnic/guest/lib.sh
kver=$(uname -r)
deb=$(ls /opt/qpnic/deb/qpnic-dkms_*_all.deb 2>/dev/null | head -n 1)
port=18515	# (pingpong's)

if [ "${1:-}" = ccache ]; then
	mkdir -p /var/cache/qpnic-ccache
	check "the host's compiler cache mounted (9p)" bash -c "modprobe virtio_pci && modprobe 9pnet_virtio &&
		mount -t 9p -o trans=virtio,version=9p2000.L share /var/cache/qpnic-ccache"
	# (Debian's kernel headers then build with CC = ccache gcc-12)
	export DEBIAN_KERNEL_USE_CCACHE=1 CCACHE_DIR=/var/cache/qpnic-ccache CCACHE_MAXSIZE=500M \
		CCACHE_DEPEND=1
	ccache --zero-stats >/dev/null
fi
check "no qpnic module before the package" bash -c "! modinfo qpnic"
check "the package is in the guest" test -f "$deb"
t0=$SECONDS
check "apt-get install ./$(basename "$deb")" \
	apt-get install -y --no-install-recommends "$deb"
check "DKMS built qpnic for $kver ($((SECONDS - t0)) s with the install)" \
	bash -c "dkms status qpnic | grep -q ', $kver, x86_64: installed'"
[ "${1:-}" = ccache ] && echo "ccache: $(ccache --print-stats | grep -E '^(direct_cache_hit|preprocessed_cache_hit|cache_miss)' | tr '\t\n' '= ')"
check "modinfo qpnic: updates/dkms/qpnic.ko of $kver" \
	bash -c "modinfo -n qpnic | grep -q '^/lib/modules/$kver/updates/dkms/qpnic.ko'"
check "modprobe qpnic pulls in ib_core, ib_uverbs and udp_tunnel" \
	bash -c "modprobe qpnic && for m in ib_core ib_uverbs udp_tunnel qpnic; do grep -q \"^\$m \" /proc/modules || exit 1; done"
check "modprobe -r qpnic" modprobe -r qpnic
setup_veth
check "rdma link add qpnic0 loads qpnic through rdma-link-qpnic" \
	bash -c "rdma link add qpnic0 type qpnic netdev veth0 && grep -q '^qpnic ' /proc/modules"
dev=qpnic0 gid=$(gid_index qpnic0 10.0.0.1)
pingpong "ibv_rc_pingpong through librxe: 100 x 4096 bytes, data checked" \
	ibv_rc_pingpong -n 100 -s 4096 -c
check "rdma link delete qpnic0, modprobe -r qpnic" \
	bash -c "rdma link delete qpnic0 && modprobe -r qpnic"
teardown_veth
check "apt-get purge qpnic-dkms" apt-get purge -y qpnic-dkms
check "qpnic is gone: no module, no DKMS tree, no sources" \
	bash -c "! modinfo qpnic 2>/dev/null && ! dkms status | grep -q qpnic &&
		! ls -d /usr/src/qpnic-* 2>/dev/null"
exit 0
