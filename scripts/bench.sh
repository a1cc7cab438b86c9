#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `make bench`: QP lifecycle and data path figures for qpnic and rdma_rxe
# (and the data path for siw), measured in one boot of Debian's stock
# kernel (no debug checks), then the data path across two guests,
# printed as a table with ratios and saved to build/bench.txt.
# usage: bench.sh [ROUNDS [DRIVER...]] (3 rounds of the data path; qpnic
# rxe siw)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mapfile -t prep < <("$QPNIC_TOP/scripts/prepare.sh" stock)
[ ${#prep[@]} = 3 ] || die "preparing the stock guest failed"
# siw, the third software device, built out of tree for the stock kernel
# and added to the guest's modules
kver=$(series_kver 6.1)
siw=$("$QPNIC_TOP/scripts/build-siw.sh" "/usr/src/linux-headers-$kver" "$QPNIC_BUILD/siw-6.1")
moddir=$(ls -d "$("$QPNIC_TOP/scripts/stock-kernel.sh" 6.1)"/modroot/usr/lib/modules/*)
initrd=$QPNIC_BUILD/initrd-bench.cpio
"$QPNIC_TOP/scripts/mkinitrd.sh" bookworm "$initrd" "$moddir" \
	$(find "${prep[2]}" -name '*.ko' | sort) "$siw"
log=$QPNIC_BUILD/bench.log
"$QPNIC_TOP/scripts/run-vm.sh" --quiet --timeout 3000 --mem 6G --log "$log" \
	"${prep[0]}" "$initrd" bench "$@"
# The two-guest rows (BENCH_PAIR=0: none): both guests boot the same
# kernel and initramfs with one vCPU each (the host has two), joined by
# 4-queue virtio-net NICs on a host bridge; B's log has the figures.
logs=("$log")
if [ "${BENCH_PAIR:-1}" = 1 ]; then
	"$QPNIC_TOP/scripts/run-pair.sh" --timeout 3000 --smp 1 --keep-freed-pages --queues 4 --watch 90 \
		--name benchpair "${prep[0]}" "$initrd" benchpeer benchpeer "$@" ||
		say "the two-guest run failed (logs: $QPNIC_BUILD/benchpair-a.log, -b.log)"
	logs+=("$QPNIC_BUILD/benchpair-b.log")
fi
"$QPNIC_TOP/scripts/bench-table.py" "${logs[@]}" | tee "$QPNIC_BUILD/bench.txt"
say "table saved in $QPNIC_BUILD/bench.txt"
