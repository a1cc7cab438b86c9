#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest side of `make check`: KUnit (when the kernel has it), then the
# userspace tests through unmodified rdma-core.
#   check.sh [kunit] [compare]
#   compare: also run the whole pyverbs suite on qpnic and on rdma_rxe
. /opt/qpnic/guest/lib.sh
for a in "$@"; do declare "want_$a=1"; done

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
# (no data path yet: traffic tests fail, so they need not wait long)
bash /opt/qpnic/guest/pyverbs.sh qpnic0 qpnic ${want_compare:+all 1 10}
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
check "rdma link delete while a process holds QPs" timeout 60 rdma link delete qpnic2
echo >&8
exec 8>&-
check "the process exits after its device went away" timeout 30 tail --pid=$holder -f /dev/null
teardown_veth
check "rmmod qpnic" rmmod qpnic
# The QP limit: what query_device reports is where creation stops.
setup_veth
modprobe qpnic max_qp=64
rdma link add qpnic3 type qpnic netdev veth0
check "max_qp=64 is what query_device reports" \
	bash -c "ibv_devinfo -v -d qpnic3 | grep -qE 'max_qp:[[:space:]]+64\$'"
"$QPNIC_BIN/bench_qp" qpnic3 live rc 1 1 100 </dev/null >/tmp/limit.out 2>&1
check "QP creation stops at max_qp (63 + QP1) with ENOMEM" grep -q "live=63 errno=12" /tmp/limit.out
rdma link delete qpnic3
teardown_veth
rmmod qpnic
check "max_qp=1 is refused at load" bash -c "! modprobe qpnic max_qp=1"
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
exit 0
