#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest side of `make bench`: the same QP lifecycle and data path
# measurements on qpnic and on rdma_rxe, and the data path on siw, one
# driver loaded at a time, same veth set-up.
# Prints "@@BENCH <metric> <driver> <value>" lines.
. /opt/qpnic/guest/lib.sh
. /opt/qpnic/guest/nvme.sh
. /opt/qpnic/guest/nfs.sh
modprobe ib_uverbs
modprobe rdma_ucm

mem_kb() { awk -v k="$1:" '$1 == k {print $2}' /proc/meminfo; }
used_kb() { echo $(( $(mem_kb MemTotal) - $(mem_kb MemFree) )); }
bench() { echo "@@BENCH $1 $2 $3"; }

kernel_rates() { # driver dev type wr sge iters
	dmesg -C
	modprobe qpnic_bench dev="$2" type="$3" wr="$4" sge="$5" iters="$6" 2>/dev/null
	line=$(dmesg | grep "qpnic_bench: dev=$2 type=$3" | tail -n 1)
	for k in pairs_per_s creates_per_s destroys_per_s; do
		v=$(echo "$line" | sed -n "s/.* $k=\([0-9]*\).*/\1/p")
		bench "kernel_${3}_wr${4}_sge${5}_$k" "$1" "${v:-error}"
	done
}

user_rates() { # driver dev type wr sge iters
	line=$("$QPNIC_BIN/bench_qp" "$2" rates "$3" "$4" "$5" "$6")
	for k in pairs_per_s creates_per_s destroys_per_s; do
		v=$(echo "$line" | sed -n "s/.* $k=\([0-9]*\).*/\1/p")
		bench "user_${3}_wr${4}_sge${5}_$k" "$1" "${v:-error}"
	done
}

# Bytes of memory (slab + vmalloc + pages + page tables) per live QP.
kernel_mem() { # driver dev count
	sync; echo 3 >/proc/sys/vm/drop_caches
	before=$(used_kb); slab0=$(mem_kb Slab); vm0=$(mem_kb VmallocUsed)
	modprobe qpnic_bench dev="$2" live="$3" wr=16 sge=1
	n=$(dmesg | sed -n "s/.*qpnic_bench: dev=$2 live_done=\([0-9]*\).*/\1/p" | tail -n 1)
	after=$(used_kb); slab1=$(mem_kb Slab); vm1=$(mem_kb VmallocUsed)
	rmmod qpnic_bench
	if [ "${n:-0}" -gt 0 ]; then
		bench "kernel_bytes_per_qp_at_$3" "$1" $(( (after - before) * 1024 / n ))
		bench "kernel_slab_bytes_per_qp_at_$3" "$1" $(( (slab1 - slab0) * 1024 / n ))
		bench "kernel_vmalloc_bytes_per_qp_at_$3" "$1" $(( (vm1 - vm0) * 1024 / n ))
	fi
}

user_mem() { # driver dev count
	sync; echo 3 >/proc/sys/vm/drop_caches
	before=$(used_kb)
	mkfifo /tmp/bench.in
	"$QPNIC_BIN/bench_qp" "$2" live rc 16 1 "$3" </tmp/bench.in >/tmp/bench.out &
	exec 7>/tmp/bench.in
	for _ in $(seq 600); do grep -q live= /tmp/bench.out && break; sleep 0.5; done
	n=$(sed -n 's/.*live=\([0-9]*\).*/\1/p' /tmp/bench.out)
	after=$(used_kb)
	echo >&7; exec 7>&-; wait; rm -f /tmp/bench.in
	[ "${n:-0}" -gt 0 ] && bench "user_bytes_per_qp_at_$3" "$1" $(( (after - before) * 1024 / n ))
}

scale() { # driver dev max
	dmesg -C
	modprobe qpnic_bench dev="$2" live="$3" wr=1 sge=1
	dmesg | sed -n "s/.*qpnic_bench: dev=$2 live=\([0-9]*\) ns_per_create=\([0-9]*\).*/\1 \2/p" |
		while read -r n ns; do bench "kernel_ns_per_create_at_$n" "$1" "$ns"; done
	n=$(dmesg | sed -n "s/.*qpnic_bench: dev=$2 live_done=\([0-9]*\).*/\1/p" | tail -n 1)
	bench kernel_max_live_qps "$1" "${n:-0}"
	rmmod qpnic_bench
}

# Data path on one device, to its own address (every driver loops back
# in software): perftest's client line, "size iters peak avg msgrate" for
# bandwidth tests, "size iters min max typical ..." for latency tests.
# With PERF_CM=1 the QPs connect through rdma_cm (-R), as iWARP's siw
# must; otherwise to the RoCEv2 GID, exchanged over TCP.
perf_line() { # dev program args...
	local dev=$1 prog=$2 conn peer=127.0.0.1 line srv units=
	shift 2
	[ "${*: -1}" = -C ] && units=cycles
	if [ "${PERF_CM:-0}" = 1 ]; then
		conn=(-R) peer=10.0.0.1
	else
		conn=(-x "$(gid_index "$dev" 10.0.0.1)")
	fi
	# (PERF_PIN=1: the server on CPU 0, the client on CPU 1)
	${PERF_PIN:+taskset -c 0} timeout 120 "$prog" -d "$dev" "${conn[@]}" -F -p 18700 "$@" \
		>/tmp/perf-srv.log 2>&1 &
	srv=$!
	sleep 1
	${PERF_PIN:+taskset -c 1} timeout 120 "$prog" -d "$dev" "${conn[@]}" -F -p 18700 "$@" $peer \
		>/tmp/perf-cli.log 2>&1
	wait "$srv"
	line=$(perftest_result $units </tmp/perf-cli.log)
	# a run without a figure says why in the log (the row says "failed")
	[ -n "$line" ] || { echo "$prog $*: no figure; client, then server:";
		tail -n 4 /tmp/perf-cli.log; tail -n 4 /tmp/perf-srv.log; } |
		sed 's/^/@@ /' >&2
	echo "$line"
}

# CPU time the guest spent busy (user, nice, system, irq, softirq), in
# clock ticks of /proc/stat.
busy_ticks() { awk '$1 == "cpu" {print $2 + $3 + $4 + $7 + $8}' /proc/stat; }

# The program's arguments with the iterations (-n N) cut to a fifth.
fifth_n() { # program args...
	local a prev=
	for a in "$@"; do
		[ "$prev" = -n ] && a=$((a / 5))
		printf '%s\n' "$a"
		prev=$a
	done
}

perf() { # driver dev metric column program args...
	local drv=$1 dev=$2 metric=$3 col=$4 v t0 t1 s0 s1 line short per unit
	local cpu_metric
	local -a fifth
	shift 4
	t0=$(busy_ticks)
	line=$(perf_line "$dev" "$@")
	t1=$(busy_ticks)
	# (a figure of 0 measures nothing: perftest printed one once for 16
	# QPs at 64 bytes; like "inf", it counts as a failed run)
	v=$(echo "$line" | awk -v c="$col" '$c + 0 > 0 {print $c}')
	bench "$metric" "$drv" "${v:-failed}"
	# what the whole guest spent (both ends of the transfer) per GB moved
	# (bytes x iterations) or per million messages (iterations), the
	# tool's set-up (connection, registration, clock calibration) left
	# out: the same run again with a fifth of the iterations, and the
	# difference of the two runs' CPU over the difference of what they
	# moved; single-QP rows
	case $metric in
	*_q16_*) return ;;
	*_MBps*) per=gb unit=_MBps ;;
	*_Mpps*) per=mmsg unit=_Mpps ;;
	*) return ;;
	esac
	cpu_metric="cpu_s_per_${per}_${metric%%"$unit"*}${metric##*"$unit"}"
	# (no figure: no second run, which could only wait out its timeout too)
	[ -n "$v" ] || { bench "$cpu_metric" "$drv" failed; return; }
	mapfile -t fifth < <(fifth_n "$@")
	s0=$(busy_ticks)
	short=$(perf_line "$dev" "${fifth[@]}")
	s1=$(busy_ticks)
	printf '%s\n%s\n' "$line" "${short:-x}" |
		awk -v t=$((t1 - t0 - (s1 - s0))) -v hz="$(getconf CLK_TCK)" \
		-v per=$per -v d="$drv" -v m="$cpu_metric" \
		'{ n[NR] = $2 + 0 > 0 ? (per == "gb" ? $1 * $2 / 1e9 : $2 / 1e6) : 0 }
		 END { moved = n[1] - n[2]
		       if (n[1] > 0 && n[2] > 0 && moved > 0 && t > 0)
			       printf "@@BENCH %s %s %.2f\n", m, d, t / hz / moved
		       else
			       printf "@@BENCH %s %s failed\n", m, d }'
}

# perftest turns a latency's cycles into microseconds with a CPU clock it
# measures against gettimeofday() when it reports; preempted there (a
# busy host) that measurement fails its own r^2 check, perftest divides by
# 0 and prints "inf" (what make bench once showed for qpnic's send
# latency: no stall, the numbers before the report were whole). So the
# typical latency is taken in cycles (-C) and divided by the clock the
# kernel reports in /proc/cpuinfo, the one perftest itself uses when its
# measurement agrees with it. NAME_typicalSUFFIX and NAME_p99SUFFIX (the
# 99th percentile) come from the same run.
lat() { # driver dev name suffix program args...
	local drv=$1 dev=$2 name=$3 suffix=$4
	shift 4
	perf_line "$dev" "$@" -C | lat_rows "$name" "$suffix" "$drv"
}

data_path() { # driver dev [metric suffix]
	local x=${3:-}
	perf "$1" "$2" write_bw_4k_MBps$x 4 ib_write_bw -s 4096 -n 20000
	perf "$1" "$2" write_bw_64k_MBps$x 4 ib_write_bw -s 65536 -n 5000
	perf "$1" "$2" read_bw_4k_MBps$x 4 ib_read_bw -s 4096 -n 20000
	perf "$1" "$2" read_bw_64k_MBps$x 4 ib_read_bw -s 65536 -n 2000
	perf "$1" "$2" send_bw_4k_MBps$x 4 ib_send_bw -s 4096 -n 20000
	perf "$1" "$2" send_rate_64b_Mpps$x 5 ib_send_bw -s 64 -n 50000
	# 16 QPs at once (perftest's -q: the iterations are per QP)
	perf "$1" "$2" write_bw_4k_q16_MBps$x 4 ib_write_bw -s 4096 -n 2000 -q 16
	perf "$1" "$2" write_bw_64k_q16_MBps$x 4 ib_write_bw -s 65536 -n 500 -q 16
	perf "$1" "$2" read_bw_4k_q16_MBps$x 4 ib_read_bw -s 4096 -n 2000 -q 16
	perf "$1" "$2" read_bw_64k_q16_MBps$x 4 ib_read_bw -s 65536 -n 200 -q 16
	perf "$1" "$2" send_rate_64b_q16_Mpps$x 5 ib_send_bw -s 64 -n 5000 -q 16
	perf "$1" "$2" atomic_rate_Mpps$x 5 ib_atomic_bw -A FETCH_AND_ADD -n 20000
	lat "$1" "$2" send_lat_2b_usec "$x" ib_send_lat -s 2 -n 5000
	lat "$1" "$2" write_lat_2b_usec "$x" ib_write_lat -s 2 -n 5000
	lat "$1" "$2" read_lat_2b_usec "$x" ib_read_lat -s 2 -n 5000
}

# 1, 16, 256 and 1024 RC pairs streaming at once (tests/multi_rc.c, 5 s
# each, through the GID): their aggregate message rate at 64 bytes and
# bandwidth at 4 KiB. A run in which a pair's messages came out of order,
# short or changed gives no figure.
multi_pairs() { # driver dev
	local n line
	for n in 1 16 256 1024; do
		line=$("$QPNIC_BIN/multi_rc" -d "$2" "$n" 64 5 2>/dev/null | grep '^multi_rc')
		bench "agg_rate_64b_rc${n}_Mpps" "$1" "$(multi_figure "$line" Mpps)"
		line=$("$QPNIC_BIN/multi_rc" -d "$2" "$n" 4096 5 2>/dev/null | grep '^multi_rc')
		bench "agg_bw_4k_rc${n}_MBps" "$1" "$(multi_figure "$line" MBps)"
	done
}
multi_figure() { # line field: the field of an error-free line, or "failed"
	echo "$1" | awk -v f="$2" '/ errors=0$/ {
		for (i = 1; i <= NF; i++) if (index($i, f "=") == 1) v = substr($i, length(f) + 2) }
		END {print v == "" ? "failed" : v}'
}

# 2-byte SEND latency with a busy loop on each of the guest's two CPUs,
# at nice 19 and at nice 0 (fewer iterations: under a nice-0 load a
# polling ping-pong waits for the scheduler). Each end of the ping-pong
# is pinned to a CPU of its own, beside one loop: unpinned, rdma_rxe's
# figure went from 8 ms in one run to 11 us in the next, with where the
# scheduler happened to put the four processes.
loaded_lat() { # driver dev
	local nice hogs cpu
	for nice in 19 0; do
		hogs=()
		for cpu in 0 1; do
			taskset -c $cpu nice -n "$nice" sh -c 'while :; do :; done' &
			hogs+=($!)
		done
		PERF_PIN=1 lat "$1" "$2" send_lat_2b_usec _load_nice$nice ib_send_lat -s 2 -n 500
		kill "${hogs[@]}"
		wait "${hogs[@]}" 2>/dev/null
	done
}

# The same through rdma_cm (rows ending in _cm): like for like with siw.
data_path_cm() { # driver dev
	PERF_CM=1 data_path "$1" "$2" _cm
}

# fio_rate RW BS DEPTH JOBS FILE FIELD: one 10 s run's read or write
# figure, FIELD "iops" or "bw_bytes" (printed in MB/s).
fio_rate() {
	local dir=read
	case $1 in *write) dir="write" ;; esac
	fio --thread --name=bench --filename="$5" --direct=1 --ioengine=libaio --rw="$1" \
		--bs="$2" --iodepth="$3" --numjobs="$4" --size=48M --time_based --runtime=10 \
		--group_reporting --output-format=json 2>/dev/null |
		python3 -c 'import json, sys
j = json.load(sys.stdin)["jobs"][0][sys.argv[1]]
print(int(j["iops"]) if sys.argv[2] == "iops" else round(j["bw_bytes"] / 1e6))' "$dir" "$6"
}

# Kernel ULPs over the device, target and host on 10.0.0.1: NVMe-oF 4 KiB
# random reads (4 jobs at depth 32) and NFSv4.2 sequential 1 MiB O_DIRECT
# writes and reads, the target's data in its page cache.
ulp_bench() { # driver
	if modprobe nvmet-rdma && modprobe nvme-rdma && nvme_target_up 10.0.0.1 &&
	   nvme_connect 10.0.0.1; then
		bench nvmeof_randread_4k_qd32x4_iops "$1" \
			"$(fio_rate randread 4k 32 4 "/dev/$(nvme_dev)" iops)"
		nvme_disconnect
	else
		echo "@@ $1: NVMe-oF set-up failed"
	fi
	nvme_target_down
	modprobe -r nvme-rdma nvmet-rdma
	if modprobe rpcrdma && modprobe nfsd && modprobe nfsv4 &&
	   nfs_server_up 10.0.0.0/24 >/dev/null && nfs_mount 10.0.0.1; then
		bench nfs_write_1m_MBps "$1" "$(fio_rate write 1m 4 1 /mnt/nfs/bench.dat bw_bytes)"
		bench nfs_read_1m_MBps "$1" "$(fio_rate read 1m 4 1 /mnt/nfs/bench.dat bw_bytes)"
		nfs_umount
	else
		echo "@@ $1: NFS/RDMA set-up failed"
	fi
	nfs_server_down
	modprobe -r nfsv4 rpcrdma nfsd
}

# The machine's own bound for loopback bandwidth: one CPU's memcpy of
# 64 KiB blocks into a fresh 64 MiB area (a loopback payload byte is
# copied twice, so half of it bounds a single QP's MB/s).
limits() {
	local v
	v=$("$QPNIC_BIN/memcpy_bw" 65536 | sed -n 's/.* MBps=\([0-9.]*\).*/\1/p')
	bench memcpy_64k_MBps limit "${v:-failed}"
}

# One round of the data path: through rdma_cm for all, to the RoCEv2
# GID for the RoCE devices (iWARP's siw connects through rdma_cm only).
data_round() { # driver
	local dev
	dev=$(dev_of "$1")
	driver_up "$1" || return
	data_path_cm "$1" "$dev"
	[ "$1" = siw ] || data_path "$1" "$dev"
	[ "$1" = siw ] || loaded_lat "$1" "$dev"
	[ "$1" = siw ] || multi_pairs "$1" "$dev"
	driver_down "$1"
}

# ULPs, QP lifecycle rates, memory and scale, once per RoCE device.
lifecycle() { # driver
	local drv=$1 dev
	dev=$(dev_of "$drv")
	driver_up "$drv" || return
	ulp_bench $drv
	kernel_rates $drv $dev rc 16 1 20000
	kernel_rates $drv $dev ud 16 1 20000
	kernel_rates $drv $dev rc 1024 16 2000
	user_rates $drv $dev rc 16 1 5000
	user_rates $drv $dev ud 16 1 5000
	for n in 1000 10000 100000; do kernel_mem $drv $dev $n; done
	user_mem $drv $dev 10000
	bash /opt/qpnic/guest/cgroup-bench.sh $drv $dev 2000
	if [ $drv = qpnic ]; then scale $drv $dev 1000000; else scale $drv $dev 100000; fi
	driver_down "$drv"
}

# bench.sh [ROUNDS [DRIVER...]]: the data path ROUNDS times (3 by
# default), the drivers taking turns in each round so that a slow spell of
# the host falls on all of them; bench-table.py prints each figure's
# median and its spread. The rest is measured once.
rounds=${1:-3}
[ $# -gt 0 ] && shift
drivers=${*:-qpnic rxe siw}
for r in $(seq "$rounds"); do
	echo "@@ data path round $r of $rounds"
	limits
	for d in $drivers; do data_round "$d"; done
done
for d in $drivers; do
	[ "$d" = siw ] || lifecycle "$d"
done
exit 0
