#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest side of `make demo`.
. /opt/qpnic/guest/lib.sh
show() { echo; echo "### \$ $*"; "$@"; }
setup_veth
show modprobe qpnic
show rdma link add qpnic0 type qpnic netdev veth0
show rdma link
show ibv_devices
show ibv_devinfo -v -d qpnic0
echo; echo "### userspace: ibv_create_qp_ex/ibv_destroy_qp through librxe"
show "$QPNIC_BIN/qp_demo" qpnic0
echo; echo "### kernel: ib_create_qp/ib_destroy_qp from a module (tests/kmod/qpnic_qpdemo.c)"
show modprobe qpnic_qpdemo dev=qpnic0
dmesg | grep 'qpnic_qpdemo:' | sed 's/^\[[ 0-9.]*\] //'
rmmod qpnic_qpdemo
gid=$(gid_index qpnic0 10.0.0.1)
echo; echo "### data: ibv_rc_pingpong between two processes, through qpnic0's own GID ($gid)"
ibv_rc_pingpong -d qpnic0 -g "$gid" -s 4096 -n 1000 -c >/tmp/pp-srv.log 2>&1 &
sleep 1
show ibv_rc_pingpong -d qpnic0 -g "$gid" -s 4096 -n 1000 -c 127.0.0.1
wait
echo; echo "### data: rping -V (rdma_cm over QP1, then RDMA READ and WRITE, data verified)"
rping -s -a 10.0.0.1 -C 20 -S 4096 -V >/dev/null 2>&1 &
sleep 1
show rping -c -a 10.0.0.1 -C 20 -S 4096 -V
wait
echo; echo "### data: a kernel ULP (tests/kmod/qpnic_datademo.c) through ib_post_send"
show modprobe qpnic_datademo dev=qpnic0 gid="$gid"
dmesg | grep 'qpnic_datademo:' | sed 's/^\[[ 0-9.]*\] //'
rmmod qpnic_datademo
show rdma statistic show link qpnic0/1
show rdma link delete qpnic0
show rmmod qpnic
