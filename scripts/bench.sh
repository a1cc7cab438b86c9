#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `make bench`: QP lifecycle figures for qpnic and rdma_rxe, measured in one boot of Debian's stock kernel (no debug
# checks), printed as a table with ratios and saved to build/bench.txt.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mapfile -t prep < <("$QPNIC_TOP/scripts/prepare.sh" stock)
[ ${#prep[@]} = 3 ] || die "preparing the stock guest failed"
log=$QPNIC_BUILD/bench.log
"$QPNIC_TOP/scripts/run-vm.sh" --quiet --timeout 3000 --mem 6G --log "$log" \
	"${prep[0]}" "${prep[1]}" bench "$@"
"$QPNIC_TOP/scripts/bench-table.py" "$log" | tee "$QPNIC_BUILD/bench.txt"
say "table saved in $QPNIC_BUILD/bench.txt"
