#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# NVMe over Fabrics helpers for guest scripts (ulp.sh, peer.sh); sourced.
# The target is nvmet on a file namespace through configfs (nvmetcli is
# not packaged in Debian 12), the host nvme-rdma through /dev/nvme-fabrics.

# The namespace's block device (with native multipath the controller's
# folder names a path, nvme0c0n1, not the disk) and its RDMA controller.
nvme_dev() {
	local b
	for b in /sys/block/nvme*n1; do
		case ${b##*/} in
		*c*) continue ;;	# a path of a multipath disk, nvme0c0n1
		esac
		[ -e "$b" ] && { echo "${b##*/}"; return; }
	done
}

nvme_ctrl() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/transport" 2>/dev/null)" = rdma ] && { basename "$c"; return; }
	done
}

# nvme_target_up ADDR: subsystem qpnicnqn on a 64 MiB file, port 4420.
nvme_target_up() {
	local S=/sys/kernel/config/nvmet/subsystems/qpnicnqn P=/sys/kernel/config/nvmet/ports/1
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	truncate -s 64M /tmp/ns0.img &&
		mkdir "$S" && echo 1 >"$S/attr_allow_any_host" &&
		mkdir "$S/namespaces/1" &&
		echo -n /tmp/ns0.img >"$S/namespaces/1/device_path" &&
		echo 1 >"$S/namespaces/1/buffered_io" &&
		echo 1 >"$S/namespaces/1/enable" &&
		mkdir "$P" && echo rdma >"$P/addr_trtype" && echo ipv4 >"$P/addr_adrfam" &&
		echo "$1" >"$P/addr_traddr" && echo 4420 >"$P/addr_trsvcid" &&
		ln -s "$S" "$P/subsystems/qpnicnqn"
}

nvme_target_down() {
	local S=/sys/kernel/config/nvmet/subsystems/qpnicnqn P=/sys/kernel/config/nvmet/ports/1
	rm -f "$P/subsystems/qpnicnqn"
	rmdir "$P" "$S/namespaces/1" "$S" 2>/dev/null
	rm -f /tmp/ns0.img
}

# nvme_connect ADDR: the host's controller and its namespace's disk. A
# controller that loses its connection fails its I/O after 60 s of trying
# to reconnect, not the default 600: a stuck transport is then a failed
# check and not a guest that runs out of time.
nvme_connect() {
	echo "transport=rdma,traddr=$1,trsvcid=4420,nqn=qpnicnqn,ctrl_loss_tmo=60" \
		>/dev/nvme-fabrics || return 1
	retry 100 disk_up nvme_dev
}

nvme_disconnect() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/transport" 2>/dev/null)" = rdma ] && echo 1 >"$c/delete_controller"
	done
	retry 100 disk_gone nvme_dev
}

# 4 jobs of random 4 KiB..128 KiB writes at depth 32, each verified by
# crc32c on read-back.
nvme_fio() { # [JOBS DEPTH] (4 and 32)
	local dev
	dev=$(nvme_dev)
	fio --thread --name=verify --filename="/dev/$dev" --direct=1 --ioengine=libaio \
		--rw=randwrite --bs=4k-128k --size=${ULP_MIB}M --iodepth=${2:-32} --numjobs=${1:-4} \
		--offset_increment=${ULP_MIB}M --verify=crc32c --verify_fatal=1 \
		--group_reporting --output=/tmp/fio.out && grep -q 'err= 0' /tmp/fio.out && return
	nvme_why
	return 1
}

# (the host's last words, for a failed check's reason)
nvme_why() { dmesg | grep -E 'nvme|rdma' | tail -n 3; }
