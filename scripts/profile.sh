#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `make profile`: where the CPU goes while perftest streams small messages
# and ping-pongs over one device (loopback), for qpnic and rdma_rxe in one
# boot of Debian's stock 6.1 kernel. The guest samples every CPU with
# perf (cpu-clock: TCG has no hardware counters) and prints the hottest
# kernel symbols of each run; the report lands in build/profile.txt.
# usage: profile.sh [DRIVER...] (qpnic rxe)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if [ -z "$(pkg_version linux-perf)" ]; then
	say "installing linux-perf"
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends linux-perf \
		>"$QPNIC_BUILD/apt-perf.log" 2>&1 || die "apt-get install linux-perf failed"
fi
mapfile -t prep < <("$QPNIC_TOP/scripts/prepare.sh" stock)
[ ${#prep[@]} = 3 ] || die "preparing the stock guest failed"
# the stock guest's initramfs, then perf and the libraries it links (the
# host is Debian 12 like the guest: the C library and the loader stay the
# guest's) as one more cpio
initrd=$QPNIC_BUILD/initrd-profile.cpio
cp "${prep[1]}" "$initrd"
stage=$(mktemp -d "$QPNIC_BUILD/perf.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/opt/perf/lib"
cp -L "$(command -v perf)" "$stage/opt/perf/perf"
ldd "$stage/opt/perf/perf" | awk '$3 ~ /^\// {print $3}' |
	grep -v -E '/(libc|libm|ld-linux[^/]*)\.so' |
	xargs -r cp -L -t "$stage/opt/perf/lib"
(cd "$stage" && find . | cpio -o -H newc -R 0:0 --quiet) >>"$initrd"
log=$QPNIC_BUILD/profile.log
"$QPNIC_TOP/scripts/run-vm.sh" --quiet --timeout 1500 --mem 4G --log "$log" \
	"${prep[0]}" "$initrd" profile "$@"
sed -n 's/^@@P //p' "$log" | tee "$QPNIC_BUILD/profile.txt"
say "profile saved in $QPNIC_BUILD/profile.txt"
