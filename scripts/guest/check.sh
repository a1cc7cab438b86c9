#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest side of `make check`: KUnit (when the kernel has it), then the
# userspace tests through unmodified rdma-core.
#   check.sh [kunit] [whole] [compare] [debugged]
#   whole: the whole pyverbs suite on qpnic (not only the contract's classes)
#   compare: the whole suite on qpnic and on rdma_rxe
#   debugged: the debug kernel of this series ran NVMe-oF and NFS
. /opt/qpnic/guest/lib.sh
for a in "$@"; do declare "want_$a=1"; done
[ "${want_compare:-0}" = 1 ] && want_whole=1

if [ "${want_kunit:-0}" = 1 ]; then
	bash /opt/qpnic/guest/kunit.sh
fi

setup_veth
check "load qpnic and rdma link add" qpnic_up qpnic0 veth0
check "rdma link lists qpnic0" bash -c "rdma link show | grep -q 'qpnic0/1 state ACTIVE.*netdev veth0'"
check "ibv_devices lists qpnic0" bash -c "ibv_devices | grep -q qpnic0"
check "ibv_devinfo binds librxe" bash -c "ibv_devinfo -d qpnic0 | grep -q 'transport:.*InfiniBand'"
check "RoCEv2 GID for 10.0.0.1" test -n "$(gid_index qpnic0 10.0.0.1)"
# The port follows its netdev.
$IP link set veth0 down
check "port goes DOWN with its netdev" bash -c "rdma link show qpnic0/1 | grep -q 'state DOWN'"
$IP link set veth0 up
check "port comes back ACTIVE" bash -c \
	"for i in \$(seq 50); do rdma link show qpnic0/1 | grep -q 'state ACTIVE' && exit 0; sleep 0.1; done; exit 1"
for t in "$QPNIC_BIN"/test_*; do
	[ -x "$t" ] && "$t" -d qpnic0
done
# The receive path on the wire: frames built by hand (scripts/guest/
# roce_inject.py) leave veth1, arrive on veth0 and are counted by reason.
hw_counter() { cat "/sys/class/infiniband/qpnic0/ports/1/hw_counters/$1"; }
rx_case() { # kind counter
	local before after
	before=$(hw_counter "$2")
	python3 /opt/qpnic/guest/roce_inject.py veth1 "$(cat /sys/class/net/veth0/address)" \
		10.0.0.3 10.0.0.1 "$1" 5
	for _ in $(seq 50); do
		after=$(hw_counter "$2")
		[ $((after - before)) -ge 5 ] && break
		sleep 0.1
	done
	check "5 $1 packets from the wire are counted in $2" test $((after - before)) = 5
}
rx_case good rx_drop_unknown_qp
rx_case bad_icrc rx_icrc_errors
rx_case bad_opcode rx_drop_bad_opcode
rx_case truncated rx_drop_malformed
check "rdma statistic shows qpnic0's port counters" \
	bash -c "rdma statistic show link qpnic0/1 | grep -q 'rx_icrc_errors 5'"
bash /opt/qpnic/guest/data.sh qpnic0 10.0.0.1
bash /opt/qpnic/guest/trace.sh qpnic0 10.0.0.1
# Memory and rdma cgroups bound what a process can make (stock kernel only:
# the debug test kernel is built without cgroups).
if [ "${want_kunit:-0}" = 0 ]; then
	bash /opt/qpnic/guest/cgroup.sh qpnic0
fi
# a completion comes at once or not at all: short waits keep the suite fast
bash /opt/qpnic/guest/pyverbs.sh qpnic0 qpnic ${want_whole:+all 1 10}
check "rdma link delete" rdma link delete qpnic0
check "ibv_devices no longer lists qpnic0" bash -c "! ibv_devices | grep -q qpnic0"
# A device goes away with its netdev, QPs or not.
rdma link add qpnic1 type qpnic netdev veth1
$IP link del veth1 2>/dev/null
# (the netdev notifier queues the unregistration: give it up to 10 s)
check "device removed with its netdev" bash -c \
	"for i in \$(seq 100); do rdma link show | grep -q qpnic1 || exit 0; sleep 0.1; done; exit 1"
# A device goes away under a live process that holds QPs and mapped rings.
setup_veth
rdma link add qpnic2 type qpnic netdev veth0
mkfifo /tmp/hold.in
"$QPNIC_BIN/bench_qp" qpnic2 live rc 16 1 100 </tmp/hold.in >/tmp/hold.out 2>&1 &
holder=$!
exec 8>/tmp/hold.in
for _ in $(seq 100); do grep -q live= /tmp/hold.out && break; sleep 0.2; done
check "a process holds 100 QPs on qpnic2" grep -q "live=100 " /tmp/hold.out
# the driver's view of each QP: 16 WRs asked, a librxe ring of 32 slots
# holds 31 (QPs still in RESET have no port: no link filter)
# (JSON: iproute2 6.15 wraps the text form's driver attributes)
rdma -dd -j res show qp >/tmp/res.json 2>&1
check "rdma res show qp shows qpnic's queue and PSN view of the 100 QPs" python3 -c '
import json, sys
want = {"drv_sq_queued": 0, "drv_sq_depth": 31, "drv_rq_queued": 0, "drv_rq_depth": 31,
        "drv_rd_atomic_outstanding": 0, "drv_sq_window": 256}
qps = [q for q in json.load(open("/tmp/res.json")) if q.get("ifname") == "qpnic2" and q["lqpn"] > 1]
good = [q for q in qps if all(q.get(k) == v for k, v in want.items()) and
        all(k in q for k in ("drv_sq_next_psn", "drv_sq_unacked_psn", "drv_rq_expected_psn"))]
print(f"{len(good)} of {len(qps)} QPs as expected", qps[:1])
sys.exit(len(good) != 100 or len(qps) != 100)'
check "rdma link delete while a process holds QPs" timeout 60 rdma link delete qpnic2
echo >&8
exec 8>&-
check "the process exits after its device went away" timeout 30 tail --pid=$holder -f /dev/null
teardown_veth
# qpnic's UDP sockets live in init_net: a netdev in another network
# namespace is refused (by qpnic: EOPNOTSUPP, not "no such device").
# (stock kernel only: the debug test kernel has no network namespaces)
if [ "${want_kunit:-0}" = 0 ]; then
	setup_veth
	ip netns add qpns
	$IP link set veth1 netns qpns
	ip netns exec qpns rdma link add qpnicns type qpnic netdev veth1 >/tmp/netns.out 2>&1
	check "rdma link add on a netdev in another namespace is EOPNOTSUPP" \
		grep -qi "not supported" /tmp/netns.out
	check "no device was made in the other namespace" bash -c "! rdma link show | grep -q qpnicns"
	ip netns del qpns
	teardown_veth
fi
# A process keeps exactly what it wrote to its ring mappings when its
# device goes away under it and the core destroys its CQ, QP and SRQ:
# ring_holder DEVICE LABEL CMD... (CMD removes DEVICE, which is on veth0).
ring_holder() {
	local dev=$1 label=$2 t="ring holder ($2):" holder rc
	shift 2
	setup_veth
	rdma link add "$dev" type qpnic netdev veth0
	rm -f /tmp/ring-hold.in
	mkfifo /tmp/ring-hold.in
	"$QPNIC_BIN/test_ring_hostile" -d "$dev" -H -n "$label" \
		</tmp/ring-hold.in >/tmp/ring-hold.out 2>&1 &
	holder=$!
	exec 8>/tmp/ring-hold.in
	for _ in $(seq 100); do grep -q '^test_ring_hostile: holding' /tmp/ring-hold.out && break; sleep 0.1; done
	check "$t a process maps 4 rings of $dev twice" grep -q '^test_ring_hostile: holding 4 rings' /tmp/ring-hold.out
	check "$t removing $dev returns" timeout 60 "$@"
	# (the core disassociates the process before the sysfs entry goes; a
	# netdev's unregistration is queued: give it up to 10 s)
	check "$t $dev is gone" bash -c \
		"for i in \$(seq 100); do test -e /sys/class/infiniband/$dev || exit 0; sleep 0.1; done; exit 1"
	# EOF releases the holder (no write that could SIGPIPE this script)
	exec 8>&-
	if timeout 90 tail --pid=$holder -s 0.1 -f /dev/null; then
		wait $holder
		rc=$?
	else
		rc="none after 90 s"
		kill -9 $holder
	fi
	cat /tmp/ring-hold.out
	if [ "$rc" = 0 ]; then
		result PASS "$t the holder exits 0"
	else
		result FAIL "$t the holder exits 0" "exit status $rc"
	fi
	rm -f /tmp/ring-hold.in
	teardown_veth
}
ring_holder qpnic4 "rdma link delete" rdma link delete qpnic4
ring_holder qpnic5 "netdev deletion" $IP link del veth0
# A netdev's removal queues its device's unregistration; an rmmod right
# behind it must wait for that, not unload the code it runs in.
setup_veth
rdma link add qpnic6 type qpnic netdev veth0
check "rmmod qpnic at once after a netdev removal queued its device's unregistration" \
	bash -c "$IP link del veth0 && rmmod qpnic"
check "qpnic6 went with its netdev" test ! -e /sys/class/infiniband/qpnic6
teardown_veth
# The QP limit: what query_device reports is where creation stops.
setup_veth
modprobe qpnic max_qp=64
rdma link add qpnic3 type qpnic netdev veth0
check "max_qp=64 is what query_device reports" \
	bash -c "ibv_devinfo -v -d qpnic3 | grep -qE 'max_qp:[[:space:]]+64\$'"
"$QPNIC_BIN/bench_qp" qpnic3 live rc 1 1 100 </dev/null >/tmp/limit.out 2>&1
check "QP creation stops at max_qp (63 + QP1) with ENOMEM" grep -q "live=63 errno=12" /tmp/limit.out
# qpnic's own count gave every destroyed QP back: the same 63 fit again.
"$QPNIC_BIN/bench_qp" qpnic3 live rc 1 1 100 </dev/null >/tmp/limit.out 2>&1
check "after destroying them, max_qp QPs fit again (no leaked count)" grep -q "live=63 errno=12" /tmp/limit.out
rdma link delete qpnic3
teardown_veth
rmmod qpnic
check "max_qp=1 is refused at load" bash -c "! modprobe qpnic max_qp=1"
# qpnic touches no RDMA_DRIVER_RXE device but its own. rdma_rxe cannot load
# next to qpnic in 6.1 (UDP port 4791), so tests/kmod/qpnic_fakerxe.c stands
# in: fakerxe0, driver_id RDMA_DRIVER_RXE, on its own veth pair fk0/fk1. Port
# events anybody dispatches on it are counted in its parameter `events`.
fakerxe_events() { cat /sys/module/qpnic_fakerxe/parameters/events; }
fakerxe_alone() {	# $1: "fakerxe first" or "qpnic first"
	local t="$1:" del
	setup_veth
	$IP link add fk0 type veth peer name fk1
	$IP link set fk0 up
	$IP link set fk1 up
	if [ "$1" = "fakerxe first" ]; then
		check "$t load qpnic_fakerxe on fk1" modprobe qpnic_fakerxe netdev=fk1
		check "$t load qpnic, qpnic0 on veth0" qpnic_up qpnic0 veth0
	else
		check "$t load qpnic, qpnic0 on veth0" qpnic_up qpnic0 veth0
		check "$t load qpnic_fakerxe on fk1" modprobe qpnic_fakerxe netdev=fk1
	fi
	check "$t fakerxe0 is on fk1" bash -c "rdma link show fakerxe0/1 | grep -q 'netdev fk1'"
	# NETDEV_DOWN and NETDEV_UP on fk1, then NETDEV_CHANGE (carrier) via its peer.
	$IP link set fk1 down
	$IP link set fk1 up
	$IP link set fk0 down
	$IP link set fk0 up
	sleep 2	# (port events reach handlers through the ib_wq work queue)
	check "$t qpnic sends no port events to fakerxe0" test "$(fakerxe_events)" = 0
	# NETDEV_UNREGISTER of fk1 (deleting fk0 deletes the pair).
	$IP link del fk0 &
	del=$!
	check "$t deleting fk1 completes (no netdev reference left behind)" bash -c \
		"for i in \$(seq 100); do kill -0 $del 2>/dev/null || exit 0; sleep 0.1; done; exit 1"
	sleep 2	# (a driver's unregistration may be queued)
	check "$t fakerxe0 outlives its netdev" test -e /sys/class/infiniband/fakerxe0
	check "$t qpnic0 stays on veth0" bash -c "rdma link show qpnic0/1 | grep -q 'netdev veth0'"
	# qpnic's exit removes its own devices, and only those.
	check "$t rmmod qpnic with qpnic0 in place" rmmod qpnic
	check "$t qpnic0 went with qpnic" test ! -e /sys/class/infiniband/qpnic0
	check "$t fakerxe0 outlives qpnic" test -e /sys/class/infiniband/fakerxe0
	check "$t fakerxe0 is still registered" \
		test "$(cat /sys/module/qpnic_fakerxe/parameters/registered)" = 1
	check "$t fakerxe0 received no port event at all" test "$(fakerxe_events)" = 0
	check "$t rmmod qpnic_fakerxe" rmmod qpnic_fakerxe
	check "$t fakerxe0 went with qpnic_fakerxe" test ! -e /sys/class/infiniband/fakerxe0
	teardown_veth
}
fakerxe_alone "fakerxe first"
fakerxe_alone "qpnic first"
# qpnic and rdma_rxe both need UDP port 4791.
modprobe rdma_rxe
if modprobe qpnic 2>/tmp/err; then
	result FAIL "qpnic refuses to load while rdma_rxe holds port 4791"
	rmmod qpnic
else
	check "qpnic refuses to load while rdma_rxe holds port 4791" \
		bash -c "dmesg | grep -q 'qpnic: UDP port 4791 is taken'"
fi
if [ "${want_compare:-0}" = 1 ]; then
	# The same suite on rdma_rxe, on a fresh veth pair, for comparison.
	setup_veth
	rdma link add rxe0 type rxe netdev veth0
	bash /opt/qpnic/guest/pyverbs.sh rxe0 rxe all 10 120 | grep '^@@PYVERBS'
	rdma link delete rxe0
	teardown_veth
fi
rmmod rdma_rxe
# Kernel ULPs over qpnic0, plain and with force_mr=1, 4 MiB at most per
# ULP go (still 1024 packets of 4 KiB, in 1 MiB I/Os of 256-page MRs).
# The debug kernel runs NVMe-oF, NFS and SMB Direct (which the stock
# kernel lacks), force_mr for NVMe-oF only (nvmet through rdma_rw); a
# stock kernel runs every ULP it has (SRP and iSER there only), both
# ways, except where its series' debug kernel ran NVMe-oF and NFS
# ("debugged": 6.1, whose two-guest run also has them, force_mr included).
ulp_args=()	# (every ULP, both ways)
if [ "${want_kunit:-0}" = 1 ]; then
	ulp_args=(--force-mr nvme nvme nfs smb)
elif [ "${want_debugged:-0}" = 1 ]; then
	ulp_args=(srp iser smb)
fi
ULP_MIB=4 bash /opt/qpnic/guest/ulp.sh "${ulp_args[@]}"
exit 0
