#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# usage: smbpeer.sh a|b -- SMB Direct across a two-guest link, in the
# debug test kernel (Debian's stock kernel builds no SMB Direct): A's
# ksmbd shares files, B's cifs mounts the share with "rdma", reads them,
# writes its own; A compares those. qpnic on both ends, then A's ksmbd on
# rdma_rxe serving cifs on qpnic. (cifs on rdma_rxe does not unmount
# cleanly in 6.1, whatever the server: see phase 2.)
. /opt/qpnic/guest/lib.sh
. /opt/qpnic/guest/pair.sh "$1"
. /opt/qpnic/guest/smb.sh
# (the debug kernels of two guests share two cores: smaller files than
# ulp.sh's, still several pages and packets each)
SMB_FILES="1 4096 131072 1048577"

smb_serve() { modprobe ksmbd && smb_server_up && smb_put $PAT /srv/smb s; }
smb_pair() {
	if [ "$role" = a ]; then
		check "peer a ($phase): ksmbd shares files of 1 B to 1 MiB" smb_serve
		peer_tell smb-ready
		peer_wait smb-done
		check "peer a ($phase): SMB Direct: the files B wrote equal by sha256 in the share" \
			smb_compare $PAT /srv/smb c
		smb_server_down
		check "peer a ($phase): ksmbd unloads" modprobe -r ksmbd
		return
	fi
	modprobe cifs
	peer_wait smb-ready
	check "peer b ($phase): SMB 3.1.1 mount of 10.1.0.1 over SMB Direct" retry_s 30 smb_mount 10.1.0.1
	check "peer b ($phase): SMB Direct: A's files read equal by sha256" smb_compare $PAT /mnt/smb s
	check "peer b ($phase): SMB Direct: files of 1 B to 1 MiB written" smb_put $PAT /mnt/smb c
	check "peer b ($phase): SMB Direct: unmount" umount /mnt/smb
	cifs_let_go "peer b ($phase):" ||
		ulp_held="cifs still holds its SMB Direct connection (above)"
	peer_tell smb-done
}

use_driver qpnic
check "peer $role: qpnic on eth0" test $? = 0
phase="qpnic-qpnic"
res_kept smb_pair
# cifs on rdma_rxe: at unmount ib_drain_rq() cannot post to the full
# receive queue rdma_rxe gave cifs (WARN "failed to drain recv queue:
# -12"), and the unmount takes 200 s. That is rdma_rxe's and cifs'.
[ "$role" = b ] && result SKIP "peer b (A qpnic, B rdma_rxe): SMB Direct" \
	"cifs on rdma_rxe 6.1 cannot drain its receive queue at unmount (WARN, 200 s)"
if [ "$role" = a ]; then
	use_driver rxe
	check "peer a: switch to rdma_rxe" test $? = 0
fi
phase="A rdma_rxe, B qpnic"
res_kept smb_pair
# (a cifs that holds its connection would block the device's removal
# until the guest's timeout: its SKIP is recorded, stop here)
[ -n "${ulp_held:-}" ] && exit 0
rdma link delete $rdev
rmmod qpnic 2>/dev/null
rmmod rdma_rxe 2>/dev/null
exit 0
