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
if [ -x "$QPNIC_BIN/qp_demo" ]; then
	show "$QPNIC_BIN/qp_demo" qpnic0
fi
show rdma link delete qpnic0
show rmmod qpnic
