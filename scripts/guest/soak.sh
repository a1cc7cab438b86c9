#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# usage: soak.sh SECONDS -- the long runs `make soak` does: the send race
# (tests/test_send_race.c) for SECONDS on qpnic0.
. /opt/qpnic/guest/lib.sh
seconds=${1:-300}
setup_veth
check "load qpnic and rdma link add" qpnic_up qpnic0 veth0
"$QPNIC_BIN/test_send_race" -d qpnic0 -t "$seconds"
check "rdma link delete" rdma link delete qpnic0
check "rmmod qpnic" rmmod qpnic
teardown_veth
exit 0
