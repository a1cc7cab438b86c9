# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Shared helpers for qpnic's scripts; sourced, not run.

QPNIC_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
QPNIC_CACHE=${QPNIC_CACHE:-$HOME/.cache/qpnic}
QPNIC_BUILD=${QPNIC_BUILD:-$QPNIC_TOP/build}
mkdir -p "$QPNIC_CACHE" "$QPNIC_BUILD"

# Progress lines go to stderr so they show even when stdout is captured.
say() { printf '[qpnic %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf '[qpnic] ERROR: %s\n' "$*" >&2; exit 1; }

# need_free_mb DIR MB: fail with a clear reason when DIR's disk is nearly full.
need_free_mb() {
	local avail
	avail=$(df -Pm "$1" | awk 'NR==2 {print $4}')
	[ "${avail:-0}" -ge "$2" ] ||
		die "only ${avail} MiB free under $1, need ${2} MiB (free some disk space)"
}

# Version of an installed Debian package, empty when it is not installed.
pkg_version() { dpkg-query -W -f='${db:Status-Status} ${Version}\n' "$1" 2>/dev/null | awk '$1=="installed" {print $2}'; }

# The kernel series qpnic is built and tested on, each Debian's stock
# kernel from Debian 12's archive, and the Debian release whose userspace
# its guests run (rdma-core 44 and 56).
QPNIC_SERIES="6.1 6.12"
# series_set SERIES: what a series is, in one place (a new series is one
# line): s_suite its guests' Debian release, s_pkg the headers package
# deps.sh installs (it pulls the newest ABI), s_glob the ABI names.
series_set() {
	case $1 in
	6.1) s_suite=bookworm s_pkg=linux-headers-amd64 s_glob='6.1.0-*-amd64' ;;
	6.12) s_suite=trixie s_pkg=linux-headers-6.12-amd64 s_glob='6.12.*+deb12-amd64' ;;
	*) die "kernel series $1 is not one of: $QPNIC_SERIES" ;;
	esac
}
series_suite() { series_set "$1" && echo "$s_suite"; }
series_headers_pkg() { series_set "$1" && echo "$s_pkg"; }

# series_kver SERIES: the Debian ABI name of the newest installed kernel
# headers of SERIES (6.1.0-N-amd64, 6.12.N+deb12-amd64).
series_kver() {
	local h
	series_set "$1"
	# shellcheck disable=SC2086 # the glob is meant to expand
	h=$(ls -d /usr/src/linux-headers-$s_glob 2>/dev/null | sort -V | tail -n 1)
	[ -n "$h" ] || die "no linux-headers-$s_glob installed (run scripts/deps.sh)"
	basename "$h" | sed 's/^linux-headers-//'
}
stock_kver() { series_kver 6.1; }

# timed DESC CMD...: run CMD, report its wall time.
timed() {
	local desc=$1 start=$SECONDS
	shift
	say "$desc ..."
	"$@" || die "$desc failed"
	say "$desc done in $((SECONDS - start)) s"
}
