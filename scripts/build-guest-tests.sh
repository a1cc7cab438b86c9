#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Compile the guest tests (tests/*.c, userspace C against libibverbs) into
# build/guest-bin. The guest runs Debian 12 too, so host binaries run there.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# The tests include tests/*.h (guest_test.h): a binary is stale when its
# source or the newest of those headers is newer than it.
newest_h=
for h in "$QPNIC_TOP"/tests/*.h; do
	[ -e "$h" ] || continue
	if [ -z "$newest_h" ] || [ "$h" -nt "$newest_h" ]; then
		newest_h=$h
	fi
done

mkdir -p "$QPNIC_BUILD/guest-bin"
for src in "$QPNIC_TOP"/tests/*.c; do
	[ -e "$src" ] || continue
	bin=$QPNIC_BUILD/guest-bin/$(basename "$src" .c)
	if [ "$bin" -nt "$src" ] &&
	   { [ -z "$newest_h" ] || [ "$bin" -nt "$newest_h" ]; }; then
		continue
	fi
	gcc -O2 -g -Wall -Wextra -Werror -o "$bin" "$src" -libverbs ||
		die "compiling $src failed"
done
