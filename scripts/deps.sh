#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Install the Debian 12 packages qpnic's build, VMs and tests need (the
# headers of both kernel series, lib.sh's QPNIC_SERIES).
# Only missing packages are installed; nothing is done when all are there.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

packages=(
	build-essential bc bison flex libelf-dev libssl-dev dwarves patch
	linux-source-6.1 sparse
	qemu-system-x86 cpio kmod zstd xz-utils debootstrap python3 iproute2
	libibverbs-dev librdmacm-dev ibverbs-providers rdma-core
	dpkg-dev debhelper dh-dkms dkms lintian
)
for s in $QPNIC_SERIES; do packages+=("$(series_headers_pkg "$s")"); done
missing=()
for p in "${packages[@]}"; do
	[ -n "$(pkg_version "$p")" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
[ "$(id -u)" = 0 ] || die "missing packages (${missing[*]}); run scripts/deps.sh as root"
say "installing ${#missing[@]} Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y --no-install-recommends "${missing[@]}" >"$QPNIC_BUILD/apt.log" 2>&1; then
	apt-get update >>"$QPNIC_BUILD/apt.log" 2>&1 || true
	apt-get install -y --no-install-recommends "${missing[@]}" >>"$QPNIC_BUILD/apt.log" 2>&1 ||
		{ tail -n 5 "$QPNIC_BUILD/apt.log" >&2; die "apt-get install failed (log: $QPNIC_BUILD/apt.log)"; }
fi
say "packages installed"
