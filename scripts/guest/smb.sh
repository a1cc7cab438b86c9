#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# SMB Direct helpers for guest scripts (ulp.sh, smbpeer.sh); sourced. The
# server is ksmbd sharing /srv/smb (a tmpfs) to the user qpnic, SMB Direct
# included; the client cifs with the "rdma" mount option.
SMB_FILES="1 4096 131072 1048577 $((ULP_MIB << 20))"

smb_server_up() {
	mkdir -p /etc/ksmbd /srv/smb /mnt/smb
	mount -t tmpfs tmpfs /srv/smb || { echo "tmpfs on /srv/smb"; return 1; }
	id qpnic >/dev/null 2>&1 || useradd -M qpnic || { echo "useradd"; return 1; }
	chown qpnic /srv/smb
	printf '[global]\n\tnetbios name = qpnic\n[share]\n\tpath = /srv/smb\n\tread only = no\n' \
		>/etc/ksmbd/ksmbd.conf
	rm -f /etc/ksmbd/ksmbdpwd.db
	ksmbd.adduser -a qpnic -p qpnic-smb >/dev/null || { echo "ksmbd.adduser"; return 1; }
	ksmbd.mountd </dev/null >/dev/null 2>&1 || { echo "ksmbd.mountd"; return 1; }
}

smb_server_down() {
	ksmbd.control -s >/dev/null 2>&1
	for _ in $(seq 50); do
		pgrep -x ksmbd.mountd >/dev/null || break
		sleep 0.1
	done
	umount /srv/smb
}

# smb_tcp_works ADDR: the share mounts over TCP (ksmbd serves it at all).
smb_tcp_works() {
	mkdir -p /mnt/smb
	mount -t cifs "//$1/share" /mnt/smb \
		-o vers=3.1.1,username=qpnic,password=qpnic-smb,cache=none &&
		umount /mnt/smb
}

# smb_mount ADDR: the share on /mnt/smb over SMB Direct, not TCP.
smb_mount() {
	mkdir -p /mnt/smb
	mount -t cifs "//$1/share" /mnt/smb \
		-o rdma,vers=3.1.1,username=qpnic,password=qpnic-smb,cache=none ||
		{ echo "mount.cifs"; return 1; }
	grep -q 'RDMA' /proc/fs/cifs/DebugData || { echo "no RDMA transport in DebugData"; return 1; }
}

# smb_put PATTERN DIR PREFIX: files of several sizes cut from PATTERN.
smb_put() {
	local f
	for f in $SMB_FILES; do
		head -c "$f" "$1" >"$2/$3$f" || return 1
	done
}

# smb_compare PATTERN DIR PREFIX: those files equal by sha256.
smb_compare() {
	local f
	for f in $SMB_FILES; do
		test "$(head -c "$f" "$1" | sha256sum)" = "$(sha256sum <"$2/$3$f")" ||
			{ echo "$2/$3$f differs"; return 1; }
	done
}

# cifs_let_go LABEL: after an SMB Direct unmount, cifs must let go of its
# module (its demultiplex thread tears the connection down, 2-3 s here;
# Documentation/ulps.md tells how that teardown hung until destroy_qp let
# the consumer poll). If it does not within 60 s, this prints the blocked
# tasks, the device's resources and qpnic's last debug lines, records a
# FAIL and returns 1: the caller must not remove the RDMA device, whose
# removal would wait for that cm_id forever.
cifs_let_go() {
	local t0=$SECONDS
	if retry 600 modprobe -r cifs; then
		result PASS "$1 cifs unloads ($((SECONDS - t0)) s after the unmount)"
		return 0
	fi
	echo w >/proc/sysrq-trigger
	rdma res show
	cat /proc/fs/cifs/DebugData
	dmesg | grep -i 'qpnic\|smbd\|cifs' | tail -n 40
	result FAIL "$1 cifs unloads" "cifs' SMB Direct teardown did not end within 60 s of the unmount (blocked tasks above)"
	return 1
}
