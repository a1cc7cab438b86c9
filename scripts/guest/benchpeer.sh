#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# One end of `make bench`'s two-guest rows (scripts/bench.sh boots the
# pair through run-pair.sh --queues 4: two virtio-net NICs of 4 queue
# pairs on a host bridge). A serves, B measures and prints
# "@@BENCH pair_<metric> <driver> <value>" lines: per round, the link's
# own limits (iperf3: TCP, and UDP at the highest offered rate that lost
# under 0.5%), then per driver perftest through rdma_cm (-R, as siw
# needs), with the packets each of B's transmit queues sent during the
# 16-QP WRITE run.
# usage: benchpeer.sh a|b [ROUNDS [DRIVER...]] (3 rounds of qpnic rxe siw)
ULP_MIB=1	# (pair.sh's pattern file: not used here)
. /opt/qpnic/guest/lib.sh
. /opt/qpnic/guest/pair.sh "$1"
rounds=${2:-3}
shift
[ $# -gt 0 ] && shift
drivers=${*:-qpnic rxe siw}
modprobe ib_uverbs
modprobe rdma_ucm
bench() { echo "@@BENCH pair_$1 $2 $3"; }
# a line every 20 s: run-pair.sh --watch takes a silent guest for stuck
while sleep 20; do echo "@@ alive at $(cut -d' ' -f1 /proc/uptime) s"; done &

# Both guests go through the same steps. In each, A serves once B says it
# is ready, and B measures once A says it serves: neither end meets a
# stale or missing server whatever the other's previous step cost.
step=0
a_serves() { # (A) step begins: wait for B
	step=$((step + 1))
	peer_wait "ready $step"
}
a_serving() { sleep 1; peer_tell "serving $step"; }
b_measures() { # (B) step begins: wait for A's server
	step=$((step + 1))
	peer_tell "ready $step" && peer_wait "serving $step"
}

check "peer $role: eth0 has 4 queue pairs" bash -c \
	"ethtool -L eth0 combined 4 && ethtool -l eth0 | awk '/^Current/ {c = 1} c && /^Combined/ {print \$2}' | grep -qx 4"

# perftest, A the server and B the client: B prints column COL of its
# result line ("size iters peak avg msgrate" for bandwidth tests; for a
# latency test, run with -C, METRIC_typical and METRIC_p99 in
# microseconds by the CPU clock).
pt() { # driver metric col|lat program args...
	local drv=$1 metric=$2 col=$3 line srv units=
	shift 3
	if [ "$role" = a ]; then
		a_serves || return
		timeout 120 "$@" -d "$rdev" -R -F -p 18700 >/dev/null 2>&1 &
		srv=$!
		a_serving
		wait $srv
		return
	fi
	[ "$col" = lat ] && set -- "$@" -C && units=cycles
	# (no line, so failed rows, when the step never began)
	b_measures &&
		line=$(timeout 120 "$@" -d "$rdev" -R -F -p 18700 "$peer" 2>&1 | perftest_result $units)
	if [ "$col" = lat ]; then
		echo "$line" | lat_rows "$metric" "" "$drv"
		return
	fi
	line=$(echo "$line" | awk -v c="$col" '{print $c}')
	bench "$metric" "$drv" "${line:-failed}"
}

# Packets sent on each of eth0's transmit queues: "QUEUE PACKETS" lines
# from mq's child qdiscs (child :N holds queue N - 1).
txq_packets() {
	tc -s qdisc show dev eth0 | awk '
		/^qdisc/ { q = ""; for (i = 1; i < NF; i++) if ($i == "parent") q = $(i + 1) }
		/^ Sent/ && q ~ /^:[0-9a-f]+$/ { print substr(q, 2), $4 }' |
		while read -r q n; do echo $((16#$q - 1)) "$n"; done
}

# Packets eth0's qdiscs dropped so far (the root's count covers its
# children).
qdisc_drops() {
	tc -s qdisc show dev eth0 | awk '/^qdisc/ {root = $0 ~ / root /}
		root && /^ Sent/ {sub(/,$/, "", $7); print $7; exit}'
}

# qpnic's own view of a run: "NAME VALUE" for the port counters that say
# why packets went twice.
qpnic_resends() {
	local c=/sys/class/infiniband/$rdev/ports/1/hw_counters
	[ -e "$c/tx_drop_stack" ] || return 0	# not qpnic
	for n in tx_packets tx_retransmits tx_drop_stack tx_stack_full rx_seq_naks \
		 ack_timeouts ack_probes rx_cnps window_cuts; do
		echo "$n $(cat "$c/$n")"
	done
}

# The 16-QP WRITE run, with the packets each of B's transmit queues sent
# meanwhile (the QPs' flows spread over the NIC's queues) and the packets
# B's own qdiscs dropped.
write_q16_spread() { # driver
	local before after drops counters
	if [ "$role" = b ]; then
		before=$(txq_packets) drops=$(qdisc_drops) counters=$(qpnic_resends)
	fi
	pt "$1" write_bw_64k_q16_MBps 4 ib_write_bw -s 65536 -n 200 -q 16
	# (no counts of a run that never began)
	[ "$role" = b ] && [ -z "${peer_lost:-}" ] || return
	after=$(txq_packets)
	join <(echo "$before" | sort) <(echo "$after" | sort) |
		while read -r q n0 n1; do bench "txq${q}_packets_write_64k_q16" "$1" $((n1 - n0)); done
	bench qdisc_drops_write_64k_q16 "$1" $(($(qdisc_drops) - drops))
	[ -n "$counters" ] && echo "@@ $1 counters over the 16-QP WRITE run:" \
		$(join <(echo "$counters" | sort) <(qpnic_resends | sort) |
			awk '{printf "%s=%d ", $1, $3 - $2}')
}

data_path() { # driver
	pt "$1" write_bw_4k_MBps 4 ib_write_bw -s 4096 -n 10000
	pt "$1" write_bw_64k_MBps 4 ib_write_bw -s 65536 -n 2000
	pt "$1" read_bw_4k_MBps 4 ib_read_bw -s 4096 -n 10000
	pt "$1" read_bw_64k_MBps 4 ib_read_bw -s 65536 -n 1000
	pt "$1" send_rate_64b_Mpps 5 ib_send_bw -s 64 -n 20000
	write_q16_spread "$1"
	pt "$1" send_rate_64b_q16_Mpps 5 ib_send_bw -s 64 -n 2000 -q 16
	pt "$1" send_lat_2b_usec lat ib_send_lat -s 2 -n 1000
	pt "$1" write_lat_2b_usec lat ib_write_lat -s 2 -n 1000
	pt "$1" read_lat_2b_usec lat ib_read_lat -s 2 -n 1000
}

# iperf3 from B to A: TCP for 5 s, then UDP of 1024-byte datagrams (a
# RoCE packet's payload at path MTU 1024) at rising offered rates; the
# goodput of the fastest that lost under 0.5% is the link's bound (the
# steps go on until one loses more).
link_limits() {
	local rate best=0 v srv
	if [ "$role" = a ]; then
		a_serves || return
		iperf3 -s >/dev/null 2>&1 &
		srv=$!
		a_serving
		peer_wait "measured $step"
		kill $srv
		wait $srv 2>/dev/null
		return
	fi
	b_measures || { bench link_tcp_MBps limit failed; return; }
	v=$(iperf3 -c "$peer" -t 5 -J 2>/dev/null | python3 -c 'import json, sys
print(round(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 8e6, 1))' 2>/dev/null)
	bench link_tcp_MBps limit "${v:-failed}"
	for rate in 100M 150M 200M 300M 400M 600M 800M 1200M 1600M 2400M 3200M; do
		v=$(iperf3 -c "$peer" -u -l 1024 -b $rate -t 3 -J 2>/dev/null | python3 -c 'import json, sys
s = json.load(sys.stdin)["end"]["sum"]
print(round(s["bits_per_second"] * (1 - s["lost_percent"] / 100) / 8e6, 1) if s["lost_percent"] < 0.5 else "lossy")' 2>/dev/null)
		case $v in "" | lossy) break ;; esac
		best=$v
	done
	bench link_udp_goodput_MBps limit "$best"
	peer_tell "measured $step"
}

for r in $(seq "$rounds"); do
	echo "@@ two-guest round $r of $rounds"
	link_limits
	for d in $drivers; do
		use_driver "$d" || echo "@@ $d: device set-up failed on $role"
		data_path "$d"
	done
done
rdma link delete "$rdev" 2>/dev/null
exit 0
