#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# usage: build-deb.sh   (`make deb`)
# qpnic-dkms_<version>_all.deb from packaging/debian: the module's sources
# (the driver and include/qpnic, no tests) under /usr/src/qpnic-<version>,
# built by DKMS for every installed kernel. Checked by lintian; prints the
# .deb's path.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

for p in dpkg-dev debhelper dh-dkms dkms lintian; do
	[ -n "$(pkg_version "$p")" ] || die "$p is not installed (run scripts/deps.sh)"
done
version=$(dpkg-parsechangelog -l "$QPNIC_TOP/packaging/debian/changelog" -SVersion)
out=$QPNIC_BUILD/deb
src=$out/qpnic-$version
rm -rf "$out" && mkdir -p "$src/drivers/infiniband/sw/qpnic" "$src/include"
cp "$QPNIC_TOP"/drivers/infiniband/sw/qpnic/{*.c,*.h,Kbuild} "$src/drivers/infiniband/sw/qpnic/"
cp -r "$QPNIC_TOP/include/qpnic" "$src/include/"
cp "$QPNIC_TOP/packaging/Kbuild" "$src/Kbuild"
cp -r "$QPNIC_TOP/packaging/debian" "$src/debian"
say "building qpnic-dkms $version (log: $out/build.log)"
(cd "$src" && dpkg-buildpackage -b -us -uc) >"$out/build.log" 2>&1 ||
	{ tail -n 20 "$out/build.log" >&2; die "dpkg-buildpackage failed (log: $out/build.log)"; }
deb=$out/qpnic-dkms_${version}_all.deb
[ -f "$deb" ] || die "dpkg-buildpackage made no $deb"
if ! lintian --fail-on error,warning "$deb" >"$out/lintian.log" 2>&1; then
	cat "$out/lintian.log" >&2
	die "lintian: $deb has errors or warnings"
fi
say "lintian clean: $(basename "$deb")"
echo "$deb"
