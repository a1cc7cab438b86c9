#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# usage: trace.sh DEV ADDR -- qpnic's tracepoints (system qpnic) through
# tracefs: an ibv_rc_pingpong on DEV to its own GID for ADDR must leave,
# per QP, RESET -> INIT -> RTR -> RTS, its posted WQEs, packets sent and
# received (SENDs and ACKs), successful completions and none in error; a
# frame with a bad ICRC from veth1 a drop with its reason; and with
# the events off again, nothing more is recorded.
. /opt/qpnic/guest/lib.sh
dev=$1 addr=$2
T=/sys/kernel/tracing
mountpoint -q $T || mount -t tracefs nodev $T
if [ ! -d $T/events/qpnic ]; then
	result FAIL "tracepoints: $T/events/qpnic exists" "$(ls $T/events 2>&1 | head -c 200)"
	exit 0
fi
check "tracepoints: the qpnic system has its 9 events" bash -c \
	"test \$(ls -d $T/events/qpnic/*/ | wc -l) = 9"
echo 0 >$T/tracing_on
echo >$T/trace
echo 8192 >$T/buffer_size_kb
echo 1 >$T/events/qpnic/enable
echo 1 >$T/tracing_on

gid=$(gid_index "$dev" "$addr")
timeout 60 ibv_rc_pingpong -d "$dev" -g "$gid" -p 18600 -n 20 -c >/tmp/tr-srv.log 2>&1 &
srv=$!
for _ in $(seq 50); do
	grep -q ":18600 " <(ss -ltn) && break
	sleep 0.1
done
timeout 60 ibv_rc_pingpong -d "$dev" -g "$gid" -p 18600 -n 20 -c 127.0.0.1 >/tmp/tr-cli.log 2>&1
cli=$?
wait $srv
check "tracepoints: ibv_rc_pingpong with every qpnic event on" test "$cli.$?" = 0.0
python3 /opt/qpnic/guest/roce_inject.py veth1 "$(cat /sys/class/net/veth0/address)" \
	10.0.0.3 10.0.0.1 bad_icrc 1
sleep 0.5
echo 0 >$T/tracing_on
cp $T/trace /tmp/qpnic.trace
echo 0 >$T/events/qpnic/enable

# The two RC QPs the pingpong made (its QPNs from its own output).
qpns=$(sed -n 's/.*local address:.*QPN \(0x[0-9a-f]*\).*/\1/p' /tmp/tr-srv.log /tmp/tr-cli.log)
check "tracepoints: the pingpong printed its two QPNs ($(echo $qpns))" \
	test "$(echo "$qpns" | wc -w)" = 2
for q in $qpns; do
	n=$((q))
	check "tracepoints: QP $n goes RESET -> INIT -> RTR -> RTS, in order" bash -c \
		"grep -E 'qpnic_qp_state: $dev qpn $n ' /tmp/qpnic.trace | sed 's/.*qpn $n //' |
		 head -n 3 | tr '\n' ' ' | grep -qx 'RESET -> INIT INIT -> RTR RTR -> RTS '"
	check "tracepoints: QP $n's 20 SENDs taken in from its user ring" bash -c \
		"test \$(grep -cE 'qpnic_post_send: $dev qpn $n wr_id .* opcode 2 length 4096 \(user ring\)' /tmp/qpnic.trace) -ge 20"
	check "tracepoints: QP $n's successful completions: its SENDs and RECVs" bash -c \
		"test \$(grep -cE 'qpnic_complete: $dev qpn $n .* status 0 ' /tmp/qpnic.trace) -ge 40"
	check "tracepoints: packets to QP $n sent and received" bash -c \
		"grep -qE 'qpnic_pkt_send: $dev opcode 0x0[0-4] dqpn $n ' /tmp/qpnic.trace &&
		 grep -qE 'qpnic_pkt_recv: $dev opcode 0x0[0-4] dqpn $n ' /tmp/qpnic.trace &&
		 grep -qE 'qpnic_pkt_recv: $dev opcode 0x11 dqpn [0-9]+ ' /tmp/qpnic.trace"
	check "tracepoints: no completion of QP $n in error" bash -c \
		"! grep -E 'qpnic_complete: $dev qpn $n .* status [1-9]' /tmp/qpnic.trace"
done
check "tracepoints: a bad ICRC is a drop with the counter's name" \
	grep -qE "qpnic_pkt_drop: $dev rx_icrc_errors opcode" /tmp/qpnic.trace
before=$(wc -l <$T/trace)
echo 1 >$T/tracing_on
python3 /opt/qpnic/guest/roce_inject.py veth1 "$(cat /sys/class/net/veth0/address)" \
	10.0.0.3 10.0.0.1 bad_icrc 1
sleep 0.2
echo 0 >$T/tracing_on
check "tracepoints: with the events off nothing more is recorded" \
	test "$(wc -l <$T/trace)" = "$before"
echo >$T/trace
