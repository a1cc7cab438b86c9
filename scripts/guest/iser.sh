#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# iSER helpers for guest scripts (ulp.sh, peer.sh); sourced. The target is
# LIO's iSCSI target with an iSER portal (ib_isert) on a file LUN, the
# initiator open-iscsi through its built-in "iser" iface (ib_iser).
ISER_IQN=iqn.2026-12.org.qpnic:iser0
ISER_TPG=$LIO/iscsi/$ISER_IQN/tpgt_1
ISER_FILES="1 4096 131072 1048577 $((ULP_MIB << 20))"

# Both sides' modules, the SCSI disk driver and ext4 (the guest has no
# udev to load them).
iser_load() {
	modprobe target_core_file && modprobe iscsi_target_mod && modprobe ib_isert &&
		modprobe ib_iser && modprobe sd_mod && modprobe ext4
}

iser_unload() {
	rmmod ib_iser && rmmod ib_isert && modprobe -r iscsi_target_mod target_core_file
}

# iser_target_up ADDR: a 64 MiB file LUN behind an iSER portal on
# ADDR:3260, open to any initiator without authentication.
iser_target_up() {
	lio_fileio_up 1 /tmp/iser0.img || return 1
	mkdir -p $ISER_TPG/lun/lun_0 && ln -s $LIO/core/fileio_1/d1 $ISER_TPG/lun/lun_0/ ||
		{ echo "iscsi lun"; return 1; }
	echo 0 >$ISER_TPG/attrib/authentication &&
		echo 1 >$ISER_TPG/attrib/generate_node_acls &&
		echo 1 >$ISER_TPG/attrib/cache_dynamic_acls &&
		echo 0 >$ISER_TPG/attrib/demo_mode_write_protect || { echo "tpg attributes"; return 1; }
	mkdir "$ISER_TPG/np/$1:3260" && echo 1 >"$ISER_TPG/np/$1:3260/iser" ||
		{ echo "iSER portal"; return 1; }
	echo 1 >$ISER_TPG/enable || { echo "tpg enable"; return 1; }
}

# iser_target_down ADDR
iser_target_down() {
	echo 0 >$ISER_TPG/enable
	echo 0 >"$ISER_TPG/np/$1:3260/iser"
	rmdir "$ISER_TPG/np/$1:3260"
	rm -f $ISER_TPG/lun/lun_0/d1
	# (the fabric's own directory holds iscsi_target_mod)
	rmdir $ISER_TPG/lun/lun_0 $ISER_TPG $LIO/iscsi/$ISER_IQN $LIO/iscsi
	lio_fileio_down 1 /tmp/iser0.img
}

# iser_initiator_up ADDR: iscsid and a node record for the target on
# ADDR through the "iser" iface (no discovery: the record says all).
iser_initiator_up() {
	mkdir -p /etc/iscsi /run/lock/iscsi /var/lib/iscsi
	grep -q '^InitiatorName=iqn' /etc/iscsi/initiatorname.iscsi 2>/dev/null ||
		echo "InitiatorName=iqn.2026-12.org.qpnic:host" >/etc/iscsi/initiatorname.iscsi
	iscsid </dev/null >/dev/null 2>&1 || { echo "iscsid"; return 1; }
	iscsiadm -m node -o new -T $ISER_IQN -p "$1:3260" -I iser >/dev/null ||
		{ echo "iscsiadm node"; return 1; }
}

iser_initiator_down() {
	iscsiadm -m node -o delete -T $ISER_IQN >/dev/null
	iscsiadm -k 0 2>/dev/null || pkill iscsid
}

# The SCSI disk of the iSCSI session, if one is logged in.
iser_dev() {
	local b
	for b in /sys/class/iscsi_session/session*/device/target*/*/block/*; do
		[ -e "$b" ] && { echo "${b##*/}"; return; }
	done
}

# iser_login ADDR
iser_login() {
	iscsiadm -m node -T $ISER_IQN -p "$1:3260" -I iser --login >/dev/null || return 1
	# ("iser: [1] 10.0.0.1:3260,1 iqn...": the session's transport)
	iscsiadm -m session | grep -q "^iser: .*$ISER_IQN" ||
		{ echo "not over iser: $(iscsiadm -m session)"; return 1; }
	retry 100 disk_up iser_dev || { echo "no SCSI disk appeared"; return 1; }
}

# iser_logout ADDR
iser_logout() {
	iscsiadm -m node -T $ISER_IQN -p "$1:3260" -I iser --logout >/dev/null || return 1
	retry 100 disk_gone iser_dev
}

# iser_write PATTERN: an ext4 filesystem on the LUN with files of several
# sizes cut from PATTERN.
iser_write() {
	local dev f
	dev=$(iser_dev)
	[ -n "$dev" ] || { echo "no disk"; return 1; }
	mkdir -p /mnt/iser
	mkfs.ext4 -q -F "/dev/$dev" && mount "/dev/$dev" /mnt/iser ||
		{ echo "mkfs and mount"; return 1; }
	for f in $ISER_FILES; do
		head -c "$f" "$1" >/mnt/iser/f"$f" || return 1
	done
	umount /mnt/iser
}

# iser_read PATTERN: after a new login (nothing cached on this side), the
# files again, compared by sha256.
iser_read() {
	local f
	mount "/dev/$(iser_dev)" /mnt/iser || { echo "mount"; return 1; }
	for f in $ISER_FILES; do
		test "$(head -c "$f" "$1" | sha256sum)" = "$(sha256sum </mnt/iser/f"$f")" ||
			{ umount /mnt/iser; echo "f$f differs"; return 1; }
	done
	umount /mnt/iser
}

# iser_compare_image PATTERN: the files in the target's LUN file, read
# with debugfs (no mount on this side), equal by sha256 to PATTERN's.
iser_compare_image() {
	local f
	for f in $ISER_FILES; do
		test "$(head -c "$f" "$1" | sha256sum)" = \
			"$(debugfs -R "cat /f$f" /tmp/iser0.img 2>/dev/null | sha256sum)" ||
			{ echo "f$f differs in the LUN's file"; return 1; }
	done
}
