#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# usage: data.sh DEV ADDR -- verbs traffic through unmodified rdma-core on
# one device, to its own RoCEv2 GID for ADDR (the loopback path: the same
# transport code as the wire), every message's data checked.
. /opt/qpnic/guest/lib.sh
dev=$1 addr=$2
gid=$(gid_index "$dev" "$addr")
port=18515

hw() { cat "/sys/class/infiniband/$dev/ports/1/hw_counters/$1"; }

tx0=$(hw tx_packets)
lo0=$(hw loopback_packets)
pingpong "ibv_ud_pingpong: 200 x 512 bytes, data checked" \
	ibv_ud_pingpong -s 512 -n 200 -c
pingpong "ibv_ud_pingpong with completion events: 100 x 1024 bytes" \
	ibv_ud_pingpong -s 1024 -n 100 -c -e
# each iteration is one message each way: 2 x (200 + 100) packets at least
tx=$(($(hw tx_packets) - tx0))
lo=$(($(hw loopback_packets) - lo0))
check "tx_packets and loopback_packets count the UD messages ($tx, $lo)" \
	test "$tx" -ge 600 -a "$lo" -ge 600
pingpong "ibv_rc_pingpong: 200 x 4096 bytes, data checked" \
	ibv_rc_pingpong -s 4096 -n 200 -c
pingpong "ibv_rc_pingpong: 50 x 64 KiB, completion events" \
	ibv_rc_pingpong -s 65536 -n 50 -c -e
pingpong "ibv_uc_pingpong: 200 x 1024 bytes, data checked" \
	ibv_uc_pingpong -s 1024 -n 200 -c
pingpong "ibv_srq_pingpong: 4 QPs on one SRQ, data checked" \
	ibv_srq_pingpong -s 2048 -n 100 -q 4 -c

# perftest: bandwidth and latency tests finish with every message counted
perf() {
	local name=$1 prog=$2 srv
	shift 2
	port=$((port + 1))
	timeout 120 "$prog" -d "$dev" -x "$gid" -p $port -F "$@" >/tmp/pf-srv.log 2>&1 &
	srv=$!
	for _ in $(seq 50); do
		grep -q ":$port " <(ss -ltn) && break
		sleep 0.1
	done
	timeout 120 "$prog" -d "$dev" -x "$gid" -p $port -F "$@" 127.0.0.1 >/tmp/pf-cli.log 2>&1
	local rc_cli=$?
	wait $srv
	check "$name" bash -c "test $? = 0 && test $rc_cli = 0 ||
		{ tail -n 5 /tmp/pf-srv.log /tmp/pf-cli.log; exit 1; }"
}
perf "ib_write_bw: 100 x 64 KiB" ib_write_bw -s 65536 -n 100
perf "ib_read_bw: 100 x 64 KiB" ib_read_bw -s 65536 -n 100
perf "ib_send_bw: 200 x 4 KiB" ib_send_bw -s 4096 -n 200
perf "ib_atomic_bw: 200 FETCH_ADD" ib_atomic_bw -A FETCH_AND_ADD -n 200
perf "ib_atomic_bw: 200 CMP_SWAP" ib_atomic_bw -A CMP_AND_SWAP -n 200
perf "ib_send_lat: 100 x 64 bytes" ib_send_lat -s 64 -n 100
perf "ib_write_lat: 100 x 64 bytes" ib_write_lat -s 64 -n 100

# rdma_cm: connection management travels as MADs on QP1 (UD), then data
# on the connected QPs. rping -V checks every ping's data.
cm_pair() {	# NAME "SERVER ARGS" "CLIENT ARGS"
	local name=$1 srv rc_cli
	# shellcheck disable=SC2086
	timeout 60 $2 >/tmp/cm-srv.log 2>&1 &
	srv=$!
	sleep 1
	# shellcheck disable=SC2086
	timeout 60 $3 >/tmp/cm-cli.log 2>&1
	rc_cli=$?
	wait $srv
	check "$name" bash -c "test $? = 0 && test $rc_cli = 0 ||
		{ tail -n 4 /tmp/cm-srv.log /tmp/cm-cli.log; exit 1; }"
}
cm_pair "rping -V: 30 pings of 1 KiB through rdma_cm" \
	"rping -s -a $addr -C 30 -S 1024 -V" "rping -c -a $addr -C 30 -S 1024 -V"
cm_pair "udaddy: UD through rdma_cm (SIDR)" \
	"udaddy -b $addr" "udaddy -s $addr"
mc0=$(hw rx_multicast_packets)
cm_pair "mckey: 10 UD messages to a multicast group" \
	"mckey -m 239.1.2.3 -b $addr -C 10" "mckey -m 239.1.2.3 -b $addr -s -C 10"
check "rx_multicast_packets counts the group's messages" \
	test $(($(hw rx_multicast_packets) - mc0)) -ge 10

# A kernel ULP: SENDs, an RDMA WRITE and an RDMA READ through ib_post_send,
# every byte checked (tests/kmod/qpnic_datademo.c fails to load otherwise).
check "kernel ULP: 32 x 64 KiB SENDs, WRITE and READ, data checked" \
	modprobe qpnic_datademo dev="$dev" gid="$gid" count=32
rmmod qpnic_datademo 2>/dev/null
