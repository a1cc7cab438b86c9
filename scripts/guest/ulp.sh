#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Kernel ULPs over qpnic0 alone, target and host on its own IP (10.0.0.1):
# NVMe over Fabrics (nvmet-rdma + nvme-rdma), NFSv4.2 over RDMA (nfsd's
# svcrdma + xprtrdma), SRP (ib_srpt + ib_srp), iSER (ib_isert +
# open-iscsi's ib_iser) and SMB Direct (ksmbd + cifs), with the data
# checked end to end; afterwards the ULP modules unload and the device
# holds what it held before. Then all again with ib_core's force_mr=1 (a load parameter:
# every RDMA module goes first), which makes the targets register through
# REG_MR and LOCAL_INV instead of plain SGEs. Run by check.sh, or alone.
#   ulp.sh [--force-mr "ULP..."] [ULP...]
# ULPs: nvme nfs srp iser smb (all by default); --force-mr names those
# of them that run again with force_mr=1 (by default the same).
. /opt/qpnic/guest/lib.sh
. /opt/qpnic/guest/nvme.sh
. /opt/qpnic/guest/nfs.sh
. /opt/qpnic/guest/srp.sh
. /opt/qpnic/guest/iser.sh
. /opt/qpnic/guest/smb.sh
PAT=/tmp/ulp-pat

# No driver or ULP complaint in the kernel log since the phase began.
log_clean() {
	! dmesg | sed -n "/qpnic-ulp-begin $mode/,\$p" |
		grep -E "Bogus remote invalidation|MEMREG|LOCAL_INV|REG_MR|failed.*rdma|nvme.*error|I/O error"
}

have_modules() {
	local m
	for m in "$@"; do
		modinfo "$m" >/dev/null 2>&1 || return 1
	done
}

# $ULP_MIB MiB written in 1 MiB direct I/Os (FRWR MRs of 256 pages), read
# back, compared with the pattern and with the target's file.
nvme_data() {
	local dev
	dev=$(nvme_dev)
	dd if=$PAT of="/dev/$dev" bs=1M count=$ULP_MIB oflag=direct status=none &&
		dd if="/dev/$dev" of=/tmp/ulp-back bs=1M count=$ULP_MIB iflag=direct status=none &&
		cmp $PAT /tmp/ulp-back && cmp -n $((ULP_MIB << 20)) $PAT /tmp/ns0.img
}

# What qpnic0's QPs and counters say, for a log that shows a stall.
dump_state() {
	echo "== qpnic0 state: $1"
	rdma -dd res show qp link qpnic0/1
	grep . /sys/class/infiniband/qpnic0/ports/1/hw_counters/* | sed 's|.*/||'
}

# check ARGS..., dumping qpnic0's state if it still runs after SECS (a
# stall leaves the QPs and counters in the log for whoever reads it).
check_watched() { # secs check-args...
	local secs=$1 watcher
	shift
	(sleep "$secs"; dump_state "$1 still running after $secs s") &
	watcher=$!
	check "$@"
	kill $watcher 2>/dev/null
}

phase_nvme() {
	local before after
	if ! have_modules nvme-rdma nvmet-rdma; then
		result FAIL "$t NVMe-oF" "nvme-rdma or nvmet-rdma missing from this kernel"
		return
	fi
	before=$(res_counts qpnic0)
	check "$t load nvmet-rdma and nvme-rdma" bash -c "modprobe nvmet-rdma && modprobe nvme-rdma"
	check "$t nvmet target on 10.0.0.1:4420 (file namespace)" nvme_target_up 10.0.0.1
	check "$t nvme-rdma host connects" nvme_connect 10.0.0.1
	check "$t NVMe-oF: $ULP_MIB MiB written and read back equal (host and target file)" nvme_data
	if command -v fio >/dev/null; then
		check_watched 20 "$t NVMe-oF: fio randwrite 4 jobs depth 32, verify=crc32c" \
			nvme_fio
	else
		result FAIL "$t NVMe-oF: fio" "fio is not installed in the guest"
	fi
	# a reset of the controller in the middle of I/O, then the data again
	# (a reader of 16384 direct 4 KiB reads is still at it after 0.5 s on
	# any kernel here; once the controller is back, the rest of its I/O
	# proves nothing more: the debug kernel would read for a minute)
	local dev ctrl reader
	dev=$(nvme_dev)
	ctrl=$(nvme_ctrl)
	dd if="/dev/$dev" of=/dev/null bs=4k count=16384 iflag=direct status=none &
	reader=$!
	sleep 0.5
	check "$t NVMe-oF: controller reset during I/O" \
		bash -c "kill -0 $reader && echo 1 >/sys/class/nvme/$ctrl/reset_controller"
	check "$t NVMe-oF: the controller is live again" \
		retry 100 grep -q live "/sys/class/nvme/$ctrl/state"
	kill $reader 2>/dev/null
	wait $reader
	check "$t NVMe-oF: data again after the reset" nvme_data
	# a disconnect and a reconnect
	check "$t NVMe-oF: disconnect" nvme_disconnect
	check "$t NVMe-oF: reconnect" nvme_connect 10.0.0.1
	check "$t NVMe-oF: data after the reconnect" nvme_data
	check "$t NVMe-oF: disconnect again" nvme_disconnect
	nvme_target_down
	check "$t nvme-rdma and nvmet-rdma unload" bash -c \
		"modprobe -r nvme-rdma && modprobe -r nvmet-rdma"
	after=$(res_counts qpnic0)
	# (QP1's CQ is always there: a count of 0 would mean the format moved)
	check "$t qpnic0 holds what it held before NVMe-oF (rdma res: $before / $after)" \
		bash -c "test '$before' = '$after' && echo '$before' | grep -q 'cq in use [1-9]'"
}

phase_nfs() {
	local before after
	if ! have_modules rpcrdma nfsd nfsv4 || ! command -v rpc.nfsd >/dev/null; then
		result FAIL "$t NFS/RDMA" "rpcrdma, nfsd, nfsv4 or nfs-kernel-server missing"
		return
	fi
	before=$(res_counts qpnic0)
	check "$t load rpcrdma, nfsd and nfsv4" bash -c "modprobe rpcrdma && modprobe nfsd && modprobe nfsv4"
	check "$t nfsd with an RDMA listener only (10.0.0.1:20049)" nfs_server_up 10.0.0.0/24
	check "$t NFSv4.2 mount with proto=rdma" nfs_mount 10.0.0.1
	check "$t NFS/RDMA: files of 1 B to $ULP_MIB MiB written" nfs_write $PAT
	check "$t NFS/RDMA: the files equal by sha256 on the server" nfs_compare $PAT /srv/nfs
	check "$t NFS/RDMA: the files equal by sha256 read back after a remount" nfs_reread $PAT 10.0.0.1
	check "$t NFS/RDMA: fio O_DIRECT randwrite 4 KiB..1 MiB, verify=crc32c" nfs_fio
	check "$t NFS/RDMA: unmount, and the client lets go of nfsv4" nfs_umount
	nfs_server_down
	check "$t rpcrdma unloads" modprobe -r nfsv4 rpcrdma
	after=$(res_counts qpnic0)
	check "$t qpnic0 holds what it held before NFS (rdma res: $before / $after)" \
		test "$before" = "$after"
}

# The disk's data, and the target's file under it, equal to the pattern.
srp_data_here() {
	srp_data $PAT && sync && cmp -n $((ULP_MIB << 20)) $PAT /tmp/srp0.img
}

# SRP: ib_srpt and the ib_srp initiator over rdma_cm, first registering
# through FRWR (its default now that qpnic claims it: partial maps with
# sg_offset, several MRs per command), then with never_register=1 (the
# PD's global rkey).
phase_srp() {
	local before after m
	if ! have_modules ib_srp ib_srpt target_core_file; then
		result SKIP "$t SRP" "ib_srp, ib_srpt or target_core_file not in this kernel"
		return
	fi
	before=$(res_counts qpnic0)
	check "$t load ib_srpt, target_core_file and sd_mod" srp_load
	check "$t ib_srpt LUN on a file, rdma_cm port 5555" srp_target_up qpnic0 10.0.0.1
	for m in fr never_register; do
		if [ $m = fr ]; then
			modprobe ib_srp
		else
			modprobe ib_srp never_register=1
		fi
		check "$t SRP ($m): ib_srp logs in over rdma_cm" srp_login qpnic0 10.0.0.1
		check_watched 40 \
			"$t SRP ($m): $ULP_MIB MiB written and read back equal (host and target file)" \
			srp_data_here
		check "$t SRP ($m): log out" srp_logout
		rmmod ib_srp
	done
	srp_target_down qpnic0 10.0.0.1
	check "$t ib_srpt unloads" bash -c "rmmod ib_srpt && modprobe -r target_core_file"
	after=$(res_counts qpnic0)
	check "$t qpnic0 holds what it held before SRP (rdma res: $before / $after)" \
		test "$before" = "$after"
}

# iSER: LIO's ib_isert target and open-iscsi's ib_iser initiator, a
# filesystem made, filled, unmounted, logged out and in again, checked.
phase_iser() {
	local before after
	if ! have_modules ib_iser ib_isert iscsi_target_mod target_core_file ext4 ||
	   ! command -v iscsiadm >/dev/null; then
		result SKIP "$t iSER" "ib_iser, ib_isert, the iSCSI target, ext4 or open-iscsi missing"
		return
	fi
	before=$(res_counts qpnic0)
	check "$t load ib_isert, ib_iser, target_core_file, sd_mod and ext4" iser_load
	check "$t LIO iSCSI target with an iSER portal on 10.0.0.1:3260" iser_target_up 10.0.0.1
	check "$t open-iscsi with a node record on its iser iface" iser_initiator_up 10.0.0.1
	check "$t iSER: log in" iser_login 10.0.0.1
	check "$t iSER: ext4 made on the LUN, files of 1 B to $ULP_MIB MiB written" iser_write $PAT
	check "$t iSER: log out" iser_logout 10.0.0.1
	check "$t iSER: log in again" iser_login 10.0.0.1
	check "$t iSER: the files read back equal by sha256" iser_read $PAT
	check "$t iSER: log out again" iser_logout 10.0.0.1
	check "$t iSER: the files in the target's LUN file equal by sha256" iser_compare_image $PAT
	iser_initiator_down
	iser_target_down 10.0.0.1
	check "$t ib_iser and ib_isert unload" iser_unload
	after=$(res_counts qpnic0)
	check "$t qpnic0 holds what it held before iSER (rdma res: $before / $after)" \
		test "$before" = "$after"
}

# Files copied both ways: written through the mount and on the server's
# side, then after a remount each compared on the other side.
smb_files() {
	smb_put $PAT /mnt/smb c && smb_put $PAT /srv/smb s && sync &&
		umount /mnt/smb && smb_mount 10.0.0.1 &&
		smb_compare $PAT /srv/smb c && smb_compare $PAT /mnt/smb s
}

# SMB Direct: ksmbd and the cifs client with "rdma", in the test kernel
# (Debian's stock kernel builds neither side of SMB Direct).
phase_smb() {
	local before after
	if ! have_modules cifs ksmbd || ! modinfo -p cifs | grep -q '^smbd_' ||
	   ! modinfo -F depends ksmbd | grep -q rdma_cm || ! command -v ksmbd.mountd >/dev/null; then
		result SKIP "$t SMB Direct" "cifs or ksmbd without SMB Direct in this kernel (Debian's stock kernel), or ksmbd-tools missing"
		return
	fi
	before=$(res_counts qpnic0)
	check "$t load ksmbd and cifs" bash -c "modprobe ksmbd && modprobe cifs"
	check "$t ksmbd shares /srv/smb" smb_server_up
	# (over TCP first: a share ksmbd does not serve is no RDMA matter)
	check "$t SMB 3.1.1 mount over TCP" smb_tcp_works 10.0.0.1
	check "$t SMB 3.1.1 mount over SMB Direct (rdma)" smb_mount 10.0.0.1
	check "$t SMB Direct: files of 1 B to $ULP_MIB MiB copied both ways, equal by sha256" smb_files
	check "$t SMB Direct: unmount" umount /mnt/smb
	smb_server_down
	if ! cifs_let_go "$t"; then
		smb_stuck=1
		return
	fi
	check "$t ksmbd unloads" modprobe -r ksmbd
	after=$(res_counts qpnic0)
	check "$t qpnic0 holds what it held before SMB Direct (rdma res: $before / $after)" \
		test "$before" = "$after"
}

run_mode() {
	mode=$1
	t="ulp ($mode):"
	echo "qpnic-ulp-begin $mode" >/dev/kmsg
	setup_veth
	check "$t load qpnic, qpnic0 on veth0" qpnic_up qpnic0 veth0
	# every error path of qpnic says why in the kernel log
	echo 'module qpnic +p' >/sys/kernel/debug/dynamic_debug/control 2>/dev/null
	for ulp in $ulps; do
		"phase_$ulp"
	done
	# (a cifs stuck with its connection would hang the device's removal
	# and every unload after it: cifs_let_go recorded why; stop here)
	[ -n "${smb_stuck:-}" ] && exit 0
	qpnic_down qpnic0
	teardown_veth
	check "$t no ULP or driver complaint in the kernel log" log_clean
}

force_mr_ulps=
if [ "${1:-}" = --force-mr ]; then
	force_mr_ulps=$2
	shift 2
fi
ulps=${*:-nvme nfs srp iser smb}
force_mr_ulps=${force_mr_ulps:-$ulps}
head -c ${ULP_MIB}M /dev/urandom >$PAT
run_mode plain
check "ulp: every RDMA module unloads" rdma_unload
check "ulp: ib_core loads with force_mr=1" modprobe ib_core force_mr=1
ulps=$force_mr_ulps
run_mode force_mr
rm -f $PAT /tmp/ulp-back
