#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `make demo`: boot Debian's stock kernel, load qpnic, make a device and
# show what it can do, with the guest console on the terminal.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mapfile -t prep < <("$QPNIC_TOP/scripts/prepare.sh" stock)
[ ${#prep[@]} = 3 ] || die "preparing the stock guest failed"
"$QPNIC_TOP/scripts/run-vm.sh" --timeout 900 --log "$QPNIC_BUILD/demo.log" \
	"${prep[0]}" "${prep[1]}" demo
