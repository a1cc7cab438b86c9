#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# usage: build-modules.sh KDIR OUTDIR [make args...]
# (an empty KDIR means Debian 12's linux-headers-6.1.0-*-amd64, installed if missing)
# Build qpnic.ko and qpnic_kunit.ko against the kernel tree KDIR in a copy
# of the sources under OUTDIR, so builds for several kernels do not mix.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kdir=$1 out=$(realpath -m "$2")
shift 2
if [ -z "$kdir" ]; then
	"$QPNIC_TOP/scripts/deps.sh"
	kdir=/usr/src/linux-headers-$(stock_kver)
fi
[ -f "$kdir/Makefile" ] || die "KDIR=$kdir is not a kernel build tree"
# Objects built against another tree (a test kernel with other config)
# would not be rebuilt by make: start over when the tree changes.
stamp="$(realpath "$kdir") $(cat "$kdir/include/config/kernel.release" 2>/dev/null) $(sha256sum <"$kdir/.config" 2>/dev/null | cut -c1-12)"
if [ -d "$out" ] && [ "$(cat "$out/.kdir" 2>/dev/null)" != "$stamp" ]; then
	rm -rf "$out"
fi
mkdir -p "$out"
echo "$stamp" >"$out/.kdir"
# Copy only what changed, so make's timestamps keep the build incremental.
for d in drivers include kunit tests/kmod; do
	mkdir -p "$out/$d"
	cp -a -u "$QPNIC_TOP/$d/." "$out/$d/"
done
cp -a -u "$QPNIC_TOP/Kbuild" "$out/"
make -s -j"$(nproc)" -C "$kdir" M="$out" W=1 "$@" modules 2>&1 | tee "$out/build.log" >&2
[ "${PIPESTATUS[0]}" = 0 ] || die "module build against $kdir failed"
if grep -q 'warning:' "$out/build.log"; then
	die "module build against $kdir has warnings (W=1 must be clean)"
fi
