#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# usage: build-siw.sh KDIR OUT
# siw, the kernel's software iWARP device, for `make bench` to measure
# qpnic against: Debian's stock kernel does not build it (CONFIG_RDMA_SIW
# is off), but drivers/infiniband/sw/siw of linux-source-6.1 builds out
# of tree against the stock headers and loads with the stock ib_core.
# Prints the path of siw.ko.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kdir=$1 out=$(realpath -m "$2")
src=$(ls -d "$QPNIC_CACHE"/src/linux-source-*/drivers/infiniband/sw/siw 2>/dev/null | head -n 1)
if [ -z "$src" ]; then
	# (no test kernel built yet: take siw alone from Debian's tarball)
	[ -f /usr/src/linux-source-6.1.tar.xz ] || die "linux-source-6.1 is not installed (run scripts/deps.sh)"
	src=$QPNIC_CACHE/siw-src/linux-source-6.1/drivers/infiniband/sw/siw
	[ -d "$src" ] || tar -xf /usr/src/linux-source-6.1.tar.xz -C "$(mkdir -p "$QPNIC_CACHE/siw-src" && echo "$QPNIC_CACHE/siw-src")" \
		linux-source-6.1/drivers/infiniband/sw/siw
fi
rm -rf "$out" && mkdir -p "$out"
cp "$src"/*.[ch] "$src/Makefile" "$out/"
make -C "$kdir" M="$out" CONFIG_RDMA_SIW=m modules >"$out/build.log" 2>&1 ||
	{ tail -n 20 "$out/build.log" >&2; die "building siw against $kdir failed (log: $out/build.log)"; }
echo "$out/siw.ko"
