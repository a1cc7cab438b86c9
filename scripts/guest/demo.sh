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
show rdma link delete qpnic0
show rmmod qpnic
