#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# usage: soak.sh [test|stock] [SECONDS]
# `make soak`: the long runs that do not fit `make check` (the send race
# for SECONDS, 300 by default) in one guest, counted like `make check`.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

flavour=${1:-stock} seconds=${2:-300}
mapfile -t prep < <("$QPNIC_TOP/scripts/prepare.sh" "$flavour")
[ ${#prep[@]} = 3 ] || die "preparing the $flavour guest failed"
log=$QPNIC_BUILD/soak-$flavour.log
"$QPNIC_TOP/scripts/run-vm.sh" --quiet --timeout $((seconds + 600)) --log "$log" \
	"${prep[0]}" "${prep[1]}" soak "$seconds"
"$QPNIC_TOP/scripts/parse-results.py" "$flavour=$log"
