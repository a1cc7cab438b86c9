#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# usage: dkms-check.sh [SERIES...]   (`make dkms-check`; default: 6.1 6.12)
# The package as users install it: `make deb`, then for each series a
# guest that installs it (scripts/dkms-guest.sh), one after the other
# (DKMS compiles under TCG); counted like `make check`, which runs the
# same guests beside its own.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

series_list=${*:-$QPNIC_SERIES}
"$QPNIC_TOP/scripts/deps.sh"
"$QPNIC_TOP/scripts/build-guest-tests.sh"
deb=$("$QPNIC_TOP/scripts/build-deb.sh" | tail -n 1)
logs=()
for series in $series_list; do
	"$QPNIC_TOP/scripts/dkms-guest.sh" "$series" "$deb" || true
	logs+=("dkms-$series=$QPNIC_BUILD/dkms-$series.log")
done
"$QPNIC_TOP/scripts/parse-results.py" "${logs[@]}"
