#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# usage: peer.sh a|b -- one end of a two-guest link (scripts/run-pair.sh):
# address eth0 as 10.1.0.1 (a) or 10.1.0.2 (b) and exchange UDP datagrams
# with the other guest, proving the wire between the two QEMUs.
. /opt/qpnic/guest/lib.sh
role=$1
# (built in on the test kernel, modules on the stock one)
modprobe virtio_pci 2>/dev/null
modprobe virtio_net 2>/dev/null
for _ in $(seq 50); do [ -e /sys/class/net/eth0 ] && break; sleep 0.1; done
if [ "$role" = a ]; then me=10.1.0.1 peer=10.1.0.2; else me=10.1.0.2 peer=10.1.0.1; fi
$IP addr add $me/24 dev eth0
$IP link set eth0 up
check "peer $role: eth0 is up" bash -c \
	"for i in \$(seq 50); do grep -qx up /sys/class/net/eth0/operstate && exit 0; sleep 0.1; done; exit 1"
check "peer $role: UDP exchange with $peer" python3 - "$me" "$peer" <<'PY'
import socket, sys, time
me, peer = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((me, 5555))
s.settimeout(0.5)
# Say hello until the peer acks; answer the peer's hellos a while longer.
heard_at = None
deadline = time.time() + 60
while time.time() < deadline:
    if heard_at is None:
        s.sendto(b'hello', (peer, 5555))
    elif time.time() - heard_at > 3:
        break
    try:
        data, _ = s.recvfrom(64)
    except socket.timeout:
        continue
    if data == b'hello':
        s.sendto(b'ack', (peer, 5555))
    elif data == b'ack' and heard_at is None:
        heard_at = time.time()
sys.exit(0 if heard_at else 1)
PY
# On a NIC with a parent device the RDMA device hangs below it, as an
# RNIC does: rdma-core's rdma_cm tests look for device/net/<netdev>.
modprobe qpnic
rdma link add qpnicp type qpnic netdev eth0
check "peer $role: qpnicp's parent device lists eth0" test -e /sys/class/infiniband/qpnicp/device/net/eth0
rdma link delete qpnicp
rmmod qpnic
exit 0
