#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# NFSv4.2 over RDMA helpers for guest scripts (ulp.sh, peer.sh); sourced.
# The server is nfsd with an RDMA listener only (svcrdma), the client a
# proto=rdma mount (xprtrdma).
NFS_FILES="1 4096 131072 1048577 $((ULP_MIB << 20))"

# nfs_server_up NET: /srv/nfs (a tmpfs) exported to NET, nfsd listening
# on RDMA port 20049 and nothing else.
nfs_server_up() {
	local d=/proc/fs/nfsd
	mkdir -p /srv/nfs /var/lib/nfs/v4recovery
	mount -t tmpfs tmpfs /srv/nfs || { echo "tmpfs on /srv/nfs"; return 1; }
	mountpoint -q $d || mount -t nfsd nfsd $d || { echo "mount nfsd"; return 1; }
	echo "/srv/nfs $1(rw,no_root_squash,insecure,fsid=0,sync,no_subtree_check)" \
		>/etc/exports
	rpcbind </dev/null >/dev/null 2>&1 || { echo "rpcbind"; return 1; }
	exportfs -ra || { echo "exportfs"; return 1; }
	rpc.mountd </dev/null >/dev/null 2>&1 || { echo "rpc.mountd"; return 1; }
	# rpc.nfsd insists on TCP for NFSv4; the kernel does not: an RDMA
	# listener alone
	echo "-3 +4 +4.1 +4.2" >$d/versions || { echo "versions: $(cat $d/versions)"; return 1; }
	echo 10 >$d/nfsv4gracetime && echo 10 >$d/nfsv4leasetime ||
		{ echo "grace and lease times"; return 1; }
	echo "rdma 20049" >$d/portlist || { echo "portlist"; return 1; }
	echo 4 >$d/threads || { echo "threads"; return 1; }
	# no client can have state to reclaim: no grace period for opens to
	# wait out (what nfsdcld says when it knows no clients)
	echo Y >$d/v4_end_grace || { echo "v4_end_grace"; return 1; }
	# (one listener per address family, each of them RDMA)
	grep -q '^rdma 20049$' $d/portlist && ! grep -qv '^rdma 20049$' $d/portlist ||
		{ echo "portlist: $(cat $d/portlist)"; return 1; }
}

nfs_server_down() {
	echo 0 >/proc/fs/nfsd/threads
	exportfs -ua
	pkill rpc.mountd
	pkill rpcbind
	umount /srv/nfs
	umount /proc/fs/nfsd
}

# nfs_mount ADDR: the server's root on /mnt/nfs over RDMA.
nfs_mount() {
	mkdir -p /mnt/nfs
	mount -t nfs4 -o vers=4.2,proto=rdma,port=20049 "$1:/" /mnt/nfs &&
		grep -q 'proto=rdma' /proc/mounts
}

# nfs_umount: /mnt/nfs unmounted and the client gone. The last client
# is freed (DESTROY_SESSION, DESTROY_CLIENTID) after umount returns, and
# holds nfsv4 until then: the server must stay up and nfsv4 cannot
# unload meanwhile.
nfsv4_unused() { test "$(cat /sys/module/nfsv4/refcnt)" = 0; }
nfs_umount() {
	umount /mnt/nfs || return 1
	retry_s 30 nfsv4_unused ||
		{ echo "nfsv4 still held: refcnt $(cat /sys/module/nfsv4/refcnt)"; return 1; }
}

# nfs_write PATTERN: files of several sizes cut from PATTERN written
# through the mount, and on stable storage when this returns.
nfs_write() {
	local f
	for f in $NFS_FILES; do
		head -c "$f" "$1" >/mnt/nfs/f"$f" || return 1
	done
	sync
}

# nfs_compare PATTERN DIR: the files in DIR equal by sha256 to PATTERN's.
nfs_compare() {
	local f
	for f in $NFS_FILES; do
		test "$(head -c "$f" "$1" | sha256sum)" = "$(sha256sum <"$2/f$f")" ||
			{ echo "$2/f$f differs"; return 1; }
	done
}

# nfs_reread PATTERN ADDR: after a remount (no client cache), the files
# read back through the mount.
nfs_reread() {
	umount /mnt/nfs && nfs_mount "$2" && nfs_compare "$1" /mnt/nfs
}

# nfs_fio: O_DIRECT random writes of 4 KiB to 1 MiB, each verified by
# crc32c on read-back.
nfs_fio() {
	fio --thread --name=nfsverify --filename=/mnt/nfs/fio.dat --direct=1 --ioengine=libaio \
		--rw=randwrite --bs=4k-1m --size=${ULP_MIB}M --iodepth=8 --verify=crc32c \
		--verify_fatal=1 --output=/tmp/fio-nfs.out && grep -q 'err= 0' /tmp/fio-nfs.out
}
