#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Compile the guest tests (tests/*.c, userspace C against libibverbs) into
# build/guest-bin. The guest runs Debian 12 too, so host binaries run there.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mkdir -p "$QPNIC_BUILD/guest-bin"
for src in "$QPNIC_TOP"/tests/*.c; do
	[ -e "$src" ] || continue
	bin=$QPNIC_BUILD/guest-bin/$(basename "$src" .c)
	[ "$bin" -nt "$src" ] && continue
	gcc -O2 -g -Wall -Wextra -Werror -o "$bin" "$src" -libverbs ||
		die "compiling $src failed"
done
