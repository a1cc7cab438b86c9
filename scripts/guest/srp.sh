#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# SRP helpers for guest scripts (ulp.sh, peer.sh); sourced. The target is
# ib_srpt on a file LUN through LIO's configfs, the host ib_srp logging in
# over rdma_cm, as blktests' srp tests do on RoCE.
# ib_srpt's service GUID, fixed at load so that a host in another guest
# can name it (by default it is the first device's node GUID)
SRP_GUID=0x0002c903000e0001

# srp_port DEV: the target port ib_srpt made for DEV's port 1 (its GUID).
srp_port() {
	local gid
	gid=$(cat "/sys/class/infiniband/$1/ports/1/gids/0")
	echo "${gid#fe80:0000:0000:0000:}"
}

# srp_target_up DEV ADDR...: a 64 MiB file LUN on DEV's port, rdma_cm
# port 5555, with an ACL for each ADDR. ib_srpt 6.1 names an rdma_cm
# session by its cm_id's source address, which on the passive side is the
# target's own: give that one, and the host's for a kernel that fixes it.
srp_target_up() {
	local tp a
	tp=$(srp_port "$1")
	shift
	lio_fileio_up 0 /tmp/srp0.img || return 1
	mkdir -p $LIO/srpt && echo 5555 >$LIO/srpt/discovery_auth/rdma_cm_port ||
		{ echo "srpt rdma_cm_port"; return 1; }
	mkdir -p "$LIO/srpt/$tp/$tp/lun/lun_0" &&
		ln -s $LIO/core/fileio_0/d0 "$LIO/srpt/$tp/$tp/lun/lun_0/" ||
		{ echo "srpt port $tp: lun"; return 1; }
	for a in "$@"; do
		mkdir -p "$LIO/srpt/$tp/$tp/acls/$a/lun_0" &&
			ln -s "$LIO/srpt/$tp/$tp/lun/lun_0" "$LIO/srpt/$tp/$tp/acls/$a/lun_0/" ||
			{ echo "srpt acl $a"; return 1; }
	done
	echo 1 >"$LIO/srpt/$tp/$tp/enable" || { echo "srpt enable"; return 1; }
}

# srp_target_down DEV ADDR...
srp_target_down() {
	local tp a
	tp=$(srp_port "$1")
	shift
	echo 0 >"$LIO/srpt/$tp/$tp/enable"
	for a in "$@"; do
		rm -f "$LIO/srpt/$tp/$tp/acls/$a/lun_0/lun_0"
		rmdir "$LIO/srpt/$tp/$tp/acls/$a/lun_0" "$LIO/srpt/$tp/$tp/acls/$a"
	done
	rm -f "$LIO/srpt/$tp/$tp/lun/lun_0/d0"
	rmdir "$LIO/srpt/$tp/$tp/lun/lun_0" "$LIO/srpt/$tp/$tp" "$LIO/srpt/$tp" $LIO/srpt
	lio_fileio_down 0 /tmp/srp0.img
}

# The target's modules, and the SCSI disk driver for the host (the guest
# has no udev to load it).
srp_load() {
	modprobe target_core_file && modprobe ib_srpt srpt_service_guid=$SRP_GUID &&
		modprobe sd_mod
}

# The SCSI disk of the ib_srp host, if it logged in.
srp_dev() {
	local h b
	for h in /sys/class/scsi_host/host*; do
		[ "$(cat "$h/proc_name" 2>/dev/null)" = ib_srp ] || continue
		for b in "$h"/device/target*/*/block/*; do
			[ -e "$b" ] && { echo "${b##*/}"; return; }
		done
	done
}

# srp_login DEV TARGET_ADDR: ib_srp on DEV logs in to ib_srpt there.
srp_login() {
	echo "id_ext=$SRP_GUID,ioc_guid=$SRP_GUID,dest=$2:5555" \
		>"/sys/class/infiniband_srp/srp-$1-1/add_target" || return 1
	retry 100 disk_up srp_dev || { echo "no SCSI disk appeared"; return 1; }
}

srp_logout() {
	local p
	for p in /sys/class/srp_remote_ports/*; do
		[ -e "$p/delete" ] && echo 1 >"$p/delete"
	done
	retry 100 disk_gone srp_dev
}

# srp_data PATTERN: $ULP_MIB MiB of it written to the disk in 1 MiB direct
# I/Os, read back and compared.
srp_data() {
	local dev
	dev=$(srp_dev)
	dd if="$1" of="/dev/$dev" bs=1M count=$ULP_MIB oflag=direct status=none &&
		dd if="/dev/$dev" of=/tmp/srp-back bs=1M count=$ULP_MIB iflag=direct status=none &&
		cmp "$1" /tmp/srp-back
}
