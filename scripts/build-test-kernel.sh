#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Build the debug test kernel from Debian's linux-source-6.1 with the
# committed fragments and kernel-patches/ (fixes of bugs in Debian's source
# that a test runs into), cached under $QPNIC_CACHE/test-kernel/<key>,
# where the key covers the fragments, the patches, this script and the
# source package version. Prints the build directory on stdout.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

frags=("$QPNIC_TOP/scripts/kconfig/test-base.config" "$QPNIC_TOP/scripts/kconfig/test-debug.config")
srcver=$(pkg_version linux-source-6.1)
[ -n "$srcver" ] || die "linux-source-6.1 is not installed (run scripts/deps.sh)"
patches=("$QPNIC_TOP"/scripts/kernel-patches/*.patch)
key=$(cat "${frags[@]}" "${patches[@]}" "$0" | { cat; echo "$srcver"; } | sha256sum | cut -c1-12)
dir=$QPNIC_CACHE/test-kernel/$key
out=$dir/build
if [ -f "$dir/.done" ]; then
	echo "$out"
	exit 0
fi

src=$QPNIC_CACHE/src/linux-source-$srcver
if [ ! -f "$src/.done" ]; then
	need_free_mb "$QPNIC_CACHE" 3000
	rm -rf "$src" && mkdir -p "$src"
	timed "unpacking linux-source $srcver" \
		tar -xf /usr/src/linux-source-6.1.tar.xz -C "$src" --strip-components=1
	touch "$src/.done"
fi
# (each patch once: the unpacked source is kept across keys)
for p in "${patches[@]}"; do
	if ! patch -d "$src" -p1 -R -s -f --dry-run <"$p" >/dev/null 2>&1; then
		patch -d "$src" -p1 -s -f <"$p" >/dev/null || die "kernel patch $(basename "$p") does not apply"
		say "applied kernel patch $(basename "$p")"
	fi
done

need_free_mb "$QPNIC_CACHE" 4000
rm -rf "$dir" && mkdir -p "$out"
cat "${frags[@]}" >"$out/fragment.config"
make -s -C "$src" O="$out" ARCH=x86_64 KCONFIG_ALLCONFIG="$out/fragment.config" allnoconfig
# Every fragment line must survive Kconfig, or the kernel is not what we test.
missing=0
while read -r line; do
	case "$line" in
	CONFIG_*=*) grep -qx "$line" "$out/.config" || { say "config lost: $line"; missing=1; } ;;
	esac
done <"$out/fragment.config"
[ "$missing" = 0 ] || die "test kernel config does not hold the fragment (see above)"

say "building the test kernel (about 7 min on 2 cores; log: $out/build.log)"
start=$SECONDS
make -C "$src" O="$out" ARCH=x86_64 -j"$(nproc)" bzImage modules >"$out/build.log" 2>&1 &
pid=$!
while kill -0 $pid 2>/dev/null; do
	sleep 30
	kill -0 $pid 2>/dev/null &&
		say "  kernel build: $((SECONDS - start)) s, $(grep -c '^  CC' "$out/build.log") files compiled"
done
wait $pid || { tail -n 20 "$out/build.log" >&2; die "test kernel build failed (log: $out/build.log)"; }
make -s -C "$out" modules_install INSTALL_MOD_PATH="$dir/modroot" INSTALL_MOD_STRIP=1 >/dev/null
say "test kernel built in $((SECONDS - start)) s"
touch "$dir/.done"
echo "$out"
