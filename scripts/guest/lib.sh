# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Helpers for guest scripts; sourced. Results are lines the host counts:
#   @@RESULT PASS|FAIL|SKIP <name> [reason]
IP=/usr/sbin/ip
QPNIC_BIN=/opt/qpnic/bin
# The most data, in MiB, one ULP test moves in one go (file, disk write,
# fio job); make check runs the debug kernel's with less.
ULP_MIB=${ULP_MIB:-16}

# (@@AT: the guest's uptime, so a log shows where the time goes)
result() {
	local up _
	read -r up _ </proc/uptime
	echo "@@AT $up"
	echo "@@RESULT $1 $2${3:+ $3}"
}

# check NAME CMD...: one result for one command's exit status.
check() {
	local name=$1 out
	shift
	echo "in '$name'" >/tmp/qpnic-step	# (for watchdog)
	if out=$("$@" 2>&1); then
		result PASS "$name"
	else
		result FAIL "$name" "exit $?: $(echo "$out" | tail -n 3 | tr '\n' ' ')"
	fi
	echo "after '$name'" >/tmp/qpnic-step
}

# The kernel's last two lines on one line (without virtio-net's noise).
kernel_last_lines() { dmesg | grep -v 'speed is unknown' | tail -n 2 | tr '\n' ' '; }

# watchdog SECONDS: once the guest has been up that long, one FAIL line
# saying where it is stuck (the check it runs, its tasks in D state, the
# kernel's last words), for a host that kills it soon after and a CI run
# whose logs are gone.
watchdog() {
	(
		local up _ left
		read -r up _ </proc/uptime
		left=$(($1 - ${up%.*}))
		[ $left -gt 0 ] && sleep $left
		result FAIL "watchdog: still running after $1 s, $(cat /tmp/qpnic-step 2>/dev/null)" \
			"D state: $(ps -eo stat=,comm=,wchan= | awk '$1 ~ /^D/ {n++; printf "%s(%s) ", $2, $3} END {if (!n) printf "none"}'); last kernel lines: $(kernel_last_lines)"
	) &
}

# A veth pair with IPv4 addresses; $1 gets the RDMA device.
setup_veth() {
	modprobe veth
	$IP link add veth0 type veth peer name veth1
	$IP addr add 10.0.0.1/24 dev veth0
	$IP addr add 10.0.0.2/24 dev veth1
	$IP link set veth0 up
	$IP link set veth1 up
}

teardown_veth() {
	$IP link del veth0 2>/dev/null
}

# A software RDMA device per driver (qpnic, rxe, siw) on veth0, for the
# bench and profile guests.
dev_of() { echo "${1}0"; } # driver: its device's name

# The driver's device on veth0, or a line saying why not and status 1.
driver_up() { # driver
	setup_veth
	case $1 in
	qpnic) modprobe qpnic && rdma link add qpnic0 type qpnic netdev veth0 ;;
	rxe) modprobe rdma_rxe && rdma link add rxe0 type rxe netdev veth0 ;;
	siw) modprobe siw && rdma link add siw0 type siw netdev veth0 ;;
	esac || { echo "@@ $1: device set-up failed"; teardown_veth; return 1; }
	echo "@@ measuring $1"
}

driver_down() { # driver
	rdma link delete "$(dev_of "$1")"
	teardown_veth
	case $1 in
	rxe) rmmod rdma_rxe ;;
	qpnic) rmmod qpnic ;;
	siw) rmmod siw ;;
	esac
}

# The RDMA stack, qpnic and a device named $1 on netdev $2.
qpnic_up() {
	modprobe ib_uverbs && modprobe rdma_ucm && modprobe qpnic &&
		rdma link add "$1" type qpnic netdev "$2"
}

qpnic_down() {
	rdma link delete "$1"
	rmmod qpnic
}

# Every RDMA module out, ib_core last (to load it again with parameters).
rdma_unload() {
	local m
	for m in rdma_ucm ib_uverbs ib_umad rdma_cm iw_cm ib_cm ib_core; do
		if grep -q "^$m " /proc/modules; then
			rmmod $m || return 1
		fi
	done
	! grep -q "^ib_core " /proc/modules
}

# wait_for PATTERN FILE PID SECONDS: until FILE has a line matching
# PATTERN, or PID (the process writing FILE) is gone, or SECONDS pass.
wait_for() {
	local i
	for i in $(seq $(($4 * 5))); do
		grep -q "$1" "$2" && return 0
		kill -0 "$3" 2>/dev/null || { grep -q "$1" "$2"; return; }
		sleep 0.2
	done
	return 1
}

# retry TENTHS CMD...: CMD every 0.1 s until it succeeds, at most TENTHS times.
retry() {
	local n=$1
	shift
	for _ in $(seq "$n"); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

# retry_s SECONDS CMD...: CMD every second, its output dropped, until it
# succeeds, at most SECONDS times (a peer's server that is still coming up).
retry_s() {
	local n=$1
	shift
	for _ in $(seq "$n"); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 1
	done
	return 1
}

# LIO's configfs, where the SCSI targets (ib_srpt, iSCSI over iSER) live.
LIO=/sys/kernel/config/target

# lio_fileio_up N FILE: backstore fileio_N/dN on a 64 MiB FILE, enabled.
lio_fileio_up() {
	local d=$LIO/core/fileio_$1/d$1
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	truncate -s 64M "$2"
	mkdir -p "$d" || { echo "fileio backstore"; return 1; }
	echo "fd_dev_name=$2,fd_dev_size=67108864,fd_buffered_io=1" >"$d/control" ||
		{ echo "fileio control"; return 1; }
	echo 1 >"$d/enable" || { echo "fileio enable"; return 1; }
}

# lio_fileio_down N FILE (once no LUN links it)
lio_fileio_down() {
	rmdir "$LIO/core/fileio_$1/d$1" "$LIO/core/fileio_$1"
	rm -f "$2"
}

# disk_up FN, disk_gone FN: whether the block device that function FN
# prints (nothing when there is none) is there.
disk_up() {
	local d
	d=$("$1")
	[ -n "$d" ] && [ -b "/dev/$d" ]
}
disk_gone() { [ -z "$("$1")" ]; }

# `rdma res show` counts of device $1 (pd cq qp cm_id mr ...), with the
# CQs counted that something uses: the core's CQ pool keeps idle CQs
# (users 0) for the next ULP until the device goes.
res_counts() {
	rdma res show | sed -n "s/^[0-9]*: $1: \(.*\)$/\1/p" | sed 's/cq [0-9]* //'
	echo "cq in use $(rdma res show cq | grep -c "^dev $1 .* users [1-9]")"
}

# The first RoCEv2 GID index of device $1 holding IPv4 address $2, empty
# if none. The core fills the GID table from a work item after a device
# or an address comes: on a busy single-CPU guest that can take seconds.
gid_index() {
	local idx _
	for _ in $(seq 100); do
		idx=$(ibv_devinfo -v -d "$1" |
			sed -n "s/.*GID\[ *\([0-9]*\)\]:.*ffff:$2, RoCE v2.*/\1/p" | head -n 1)
		[ -n "$idx" ] && break
		sleep 0.1
	done
	echo "$idx"
}

# stdin: a perftest client's output (stdout and stderr); stdout: its
# first result line, or nothing if the figure rests on perftest's own CPU
# clock measurement and that failed. Preempted while timing gettimeofday()
# against the cycle counter (a busy TCG guest), perftest says
# "Correlation coefficient r^2 < 0.9", takes the clock as 0 MHz and prints
# bandwidths of 0.00: a failed run, not a figure. A latency taken in
# cycles (-C, argument "cycles") does not use that clock.
perftest_result() { # [cycles]
	awk -v cycles="${1:-}" '/^Correlation coefficient/ && cycles == "" {bad = 1}
	     $1 ~ /^[0-9]+$/ && NF >= 5 && line == "" {line = $0}
	     END {if (!bad && line != "") print line}'
}

# stdin: a perftest latency result line taken with -C (cycles); stdout:
# its typical figure in microseconds by the kernel's CPU clock (bench.sh
# says why not perftest's own), then its 99th percentile, or nothing.
lat_usec() {
	local mhz
	mhz=$(awk -F: '/^cpu MHz/ {printf "%.3f", $2; exit}' /proc/cpuinfo)
	awk -v mhz="$mhz" 'mhz > 0 && $5 ~ /^[0-9.]+$/ && $8 ~ /^[0-9.]+$/ {
		printf "%.2f %.2f", $5 / mhz, $8 / mhz}'
}

# stdin: the same; reports NAME_typicalSUFFIX and NAME_p99SUFFIX for
# DRIVER through the caller's bench(), "failed" where there is no figure.
lat_rows() { # name suffix driver
	local v
	read -r -a v < <(lat_usec; echo)
	bench "${1}_typical$2" "$3" "${v[0]:-failed}"
	bench "${1}_p99$2" "$3" "${v[1]:-failed}"
}

# pingpong NAME PROGRAM ARGS...: server and client of an rdma-core
# pingpong example on $dev through GID index $gid, talking over TCP on
# localhost at port $port + 1 (it advances $port).
pingpong() {
	local name=$1 prog=$2 srv rc_srv rc_cli
	shift 2
	port=$((port + 1))
	timeout 60 "$prog" -d "$dev" -g "$gid" -p $port "$@" >/tmp/pp-srv.log 2>&1 &
	srv=$!
	for _ in $(seq 50); do
		grep -q ":$port " <(ss -ltn) && break
		sleep 0.1
	done
	timeout 60 "$prog" -d "$dev" -g "$gid" -p $port "$@" 127.0.0.1 >/tmp/pp-cli.log 2>&1
	rc_cli=$?
	wait $srv
	rc_srv=$?
	# (a failure says each end's status, 124 a timeout, and last words)
	check "$name" bash -c "test $rc_srv = 0 && test $rc_cli = 0 &&
		grep -q 'bytes in' /tmp/pp-srv.log && grep -q 'bytes in' /tmp/pp-cli.log ||
		{ echo server $rc_srv: \$(tail -n 2 /tmp/pp-srv.log | tr '\n' ' ')
		  echo client $rc_cli: \$(tail -n 2 /tmp/pp-cli.log | tr '\n' ' ');
		  exit 1; }"
}
