#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest side of `make profile`: perftest runs on one device to its own
# address under perf sampling every CPU; prints "@@P " lines: each run's
# figure and its hottest symbols (self time, kernel and user).
. /opt/qpnic/guest/lib.sh
modprobe ib_uverbs
export LD_LIBRARY_PATH=/opt/perf/lib
PERF=/opt/perf/perf
echo 0 >/proc/sys/kernel/kptr_restrict
echo -1 >/proc/sys/kernel/perf_event_paranoid

out() { sed 's/^/@@P /'; }

# One perftest pair (server in the background) under perf record.
profiled() { # driver dev label program args...
	local drv=$1 dev=$2 label=$3 prog=$4 gid
	shift 4
	gid=$(gid_index "$dev" 10.0.0.1)
	timeout 120 "$prog" -d "$dev" -x "$gid" -F -p 18700 "$@" >/tmp/srv.log 2>&1 &
	sleep 1
	timeout 150 $PERF record -q -a -g -e cpu-clock -F 2000 -o /tmp/perf.data -- \
		timeout 120 "$prog" -d "$dev" -x "$gid" -F -p 18700 "$@" 127.0.0.1 \
		>/tmp/cli.log 2>&1
	wait
	echo "== $drv $label: $prog $*" | out
	awk '$1 ~ /^[0-9]+$/ && NF >= 5' /tmp/cli.log | head -n 1 | out
	$PERF report -i /tmp/perf.data --stdio --no-children --sort sym \
		--percent-limit 0.7 -g none 2>/dev/null | grep -v -E '^(#|$)' | head -n 45 | out
	echo "-- by module" | out
	$PERF report -i /tmp/perf.data --stdio --no-children --sort dso \
		-g none 2>/dev/null | grep -v -E '^(#|$)' | head -n 12 | out
}

for drv in ${*:-qpnic rxe}; do
	driver_up $drv || { echo "$drv: set-up failed" | out; continue; }
	dev=$(dev_of $drv)
	profiled $drv $dev send_64b ib_send_bw -s 64 -n 30000
	profiled $drv $dev send_lat_2b ib_send_lat -s 2 -n 5000
	profiled $drv $dev write_lat_2b ib_write_lat -s 2 -n 5000
	profiled $drv $dev write_64k ib_write_bw -s 65536 -n 2000
	driver_down $drv
done
exit 0
