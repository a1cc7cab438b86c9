#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# One end of a two-guest link (scripts/run-pair.sh) for peer.sh and
# smbpeer.sh; sourced with the role, a or b. Addresses eth0 as 10.1.0.1
# (a, $me) or 10.1.0.2 (b), proves the wire between the two QEMUs with a
# UDP exchange, and cuts $PAT. use_driver puts qpnic or rdma_rxe on eth0;
# peer_wait and peer_tell let B say when it is done with what A serves;
# res_kept checks that a ULP leaves the device as it found it.
role=$1
# (built in on the test kernel, modules on the stock one)
modprobe virtio_pci 2>/dev/null
modprobe virtio_net 2>/dev/null
for _ in $(seq 50); do [ -e /sys/class/net/eth0 ] && break; sleep 0.1; done
if [ "$role" = a ]; then me=10.1.0.1 peer=10.1.0.2; else me=10.1.0.2 peer=10.1.0.1; fi
# Both guests cut the same pattern: each checks what the other wrote.
PAT=/tmp/peer-pat
python3 -c 'import random, sys
sys.stdout.buffer.write(random.Random(15).randbytes(int(sys.argv[1]) << 20))' "$ULP_MIB" >$PAT
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
# qpnic|rxe|siw: the RDMA device on eth0 is then $rdev (siw, iWARP, has
# no GID to wait for; only the bench's guests carry it)
use_driver() {
	rdma link delete "$rdev" 2>/dev/null
	for m in qpnic rdma_rxe siw; do rmmod $m 2>/dev/null; done
	case $1 in
	qpnic) rdev=qpnicp
		modprobe qpnic && rdma link add $rdev type qpnic netdev eth0 ;;
	rxe) rdev=rxe0
		modprobe rdma_rxe && rdma link add $rdev type rxe netdev eth0 ;;
	siw) rdev=siw0
		modprobe siw && rdma link add $rdev type siw netdev eth0
		return ;;
	esac && [ -n "$(gid_index $rdev $me)" ]
}
# res_kept FUNCTION: run a ULP's pair function ($phase names the
# pairing); afterwards the device holds what it held before (rdma res),
# unless the function set ulp_held to why the ULP still holds it (a SKIP).
res_kept() {
	local before after
	before=$(res_counts $rdev)
	"$1"
	after=$(res_counts $rdev)
	if [ -n "${ulp_held:-}" ]; then
		result SKIP "peer $role ($phase): $rdev holds what it held before ${1%_pair}" "$ulp_held"
		return
	fi
	check "peer $role ($phase): $rdev holds what it held before ${1%_pair} (rdma res: $before / $after)" \
		test "$before" = "$after"
}
# One guest tells the other that it reached a point: peer_tell TOKEN
# says it until the other acknowledges (at most 300 s), peer_wait TOKEN
# waits for it (at most 300 s) and acknowledges, also the repeats a lost
# acknowledgement brings for a second.
peer_wait() {
	[ -z "${peer_lost:-}" ] || return 1
	python3 - "$me" "$1" <<'PY' ||
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 18660))
token = sys.argv[2].encode()
s.settimeout(300)
try:
    while True:
        data, addr = s.recvfrom(64)
        if data == token:
            break
except socket.timeout:
    sys.exit(1)
end = time.time() + 1
while True:
    s.sendto(b"ack " + token, addr)
    s.settimeout(max(end - time.time(), 0.01))
    try:
        data, addr = s.recvfrom(64)
    except socket.timeout:
        break
PY
		peer_silent "$1"
}
peer_tell() {
	[ -z "${peer_lost:-}" ] || return 1
	python3 - "$me" "$peer" "$1" <<'PY' ||
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 0))
s.settimeout(0.2)
token = sys.argv[3].encode()
end = time.time() + 300
while time.time() < end:
    try:
        # (blocks, and times out, while this guest's own transmit queue
        # holds the socket's buffer: a stalled link, not a lost word)
        s.sendto(token, (sys.argv[2], 18660))
        if s.recv(64) == b"ack " + token:
            sys.exit(0)
    except socket.timeout:
        pass
sys.exit(1)
PY
		peer_silent "$1"
}
# (a failure of its own: the step that hung on the other end has its own)
# With eth0's own counts per queue: a transmit queue that stopped (the
# bench's 4-queue link has lost one for good, twice) shows as a
# tx_timeouts count, and its kicks say whether the guest still rang QEMU;
# packets its qdisc still holds (backlog) say it stopped on this side.
# The link or the other guest stopped for good each time one went
# unheard, so the words after it fail at once (their steps' rows as
# failed) instead of 300 s each.
peer_silent() {
	local counts backlog
	peer_lost=1
	counts=$(ethtool -S eth0 2>/dev/null | awk '$1 ~ /^(rx_queue_[0-9]+_packets|tx_queue_[0-9]+_(packets|kicks|tx_timeouts)):$/ {printf "%s%s ", $1, $2}')
	backlog=$(tc -s qdisc show dev eth0 2>/dev/null | awk '/^qdisc/ {q = $4 == "root" ? "root" : $5}
		/^ backlog/ {printf "%s:%s ", q, $3}')
	result FAIL "peer $role${phase:+ ($phase)}: no word '$1' between the guests within 300 s" \
		"(last kernel lines: $(kernel_last_lines); eth0: $counts; qdisc backlog: $backlog)"
	return 1
}
