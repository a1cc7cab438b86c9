#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest side of `make profile`: perftest runs on one device to its own
# address under perf sampling every CPU, the server pinned to CPU 0 and
# the client (the poster) to CPU 1; prints "@@P " lines: each run's
# figure, its hottest symbols (self time, kernel and user) and how the
# poster's CPU divides between the kernel and the userspace.
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
	taskset -c 0 timeout 120 "$prog" -d "$dev" -x "$gid" -F -p 18700 "$@" \
		>/tmp/srv.log 2>&1 &
	sleep 1
	timeout 150 $PERF record -q -a -g -e cpu-clock -F 2000 -o /tmp/perf.data -- \
		taskset -c 1 timeout 120 "$prog" -d "$dev" -x "$gid" -F -p 18700 "$@" \
		127.0.0.1 >/tmp/cli.log 2>&1
	wait
	echo "== $drv $label: $prog $*" | out
	awk '$1 ~ /^[0-9]+$/ && NF >= 5' /tmp/cli.log | head -n 1 | out
	$PERF report -i /tmp/perf.data --stdio --no-children --sort sym \
		--percent-limit 0.7 -g none 2>/dev/null | grep -v -E '^(#|$)' | head -n 45 | out
	echo "-- by module" | out
	$PERF report -i /tmp/perf.data --stdio --no-children --sort dso \
		-g none 2>/dev/null | grep -v -E '^(#|$)' | head -n 12 | out
	# a bandwidth or rate run's poster does all of the transport's work
	# for both ends (loopback): its kernel share is what a driver can cut
	echo "-- the poster's CPU (1), by module" | out
	$PERF report -i /tmp/perf.data --stdio --no-children --sort dso --cpu 1 \
		-g none 2>/dev/null | grep -v -E '^(#|$)' | head -n 6 | out
	echo "-- the poster's CPU (1), inclusive" | out
	$PERF report -i /tmp/perf.data --stdio --children --sort sym --cpu 1 \
		-g none 2>/dev/null | grep -v -E '^(#|$)' |
		grep -E 'sys_write|ib_uverbs_post_send|_post_send$|gettimeofday$|do_idle' |
		head -n 8 | out
}

for drv in ${*:-qpnic rxe}; do
	driver_up $drv || { echo "$drv: set-up failed" | out; continue; }
	dev=$(dev_of $drv)
	profiled $drv $dev send_64b ib_send_bw -s 64 -n 30000
	profiled $drv $dev atomic ib_atomic_bw -A FETCH_AND_ADD -n 20000
	profiled $drv $dev send_lat_2b ib_send_lat -s 2 -n 5000
	profiled $drv $dev write_lat_2b ib_write_lat -s 2 -n 5000
	profiled $drv $dev write_64k ib_write_bw -s 65536 -n 2000
	driver_down $drv
done
exit 0
