#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# usage: run-pair.sh [--timeout SEC] [--port PORT] [--name NAME] [--smp N]
#                    [--keep-freed-pages] [--no-kmemleak] [--queues N]
#                    [--watch SEC] [--b KERNEL_B INITRD_B]
#                    KERNEL INITRD SCRIPT_A SCRIPT_B [ARG...]
# Boot two guests joined by a QEMU socket netdev on 127.0.0.1:PORT (each
# sees the link as eth0): A listens, B connects; or, with --queues N,
# by two host taps of N queue pairs each on a host bridge of their own
# (a multi-queue virtio-net NIC; root only). A runs SCRIPT_A with
# argument "a", B runs SCRIPT_B with "b", each then with the ARGs. Both
# boot KERNEL and INITRD, or B boots KERNEL_B and INITRD_B (another
# kernel series on the other end of the wire). Logs: build/NAME-a.log,
# -b.log (NAME "pair" by default).
# With --watch SEC, a guest whose serial log stays silent for SEC seconds
# before it finished (the guest scripts that want it print a line every
# 20 s) is stuck: the log gets where its vCPUs are, then an NMI makes its
# kernel panic with a backtrace.
# Exits non-zero unless both guests finish with status 0.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

timeout=900 port=$((20000 + RANDOM % 20000)) name=pair kernel_b="" initrd_b="" vm_opts=() queues="" watch=""
while [ $# -gt 0 ]; do
	case $1 in
	--timeout) timeout=$2; shift 2 ;;
	--port) port=$2; shift 2 ;;
	--name) name=$2; shift 2 ;;
	--smp) vm_opts+=("$1" "$2"); shift 2 ;;
	--keep-freed-pages | --no-kmemleak) vm_opts+=("$1"); shift ;;
	--queues) queues=$2; shift 2 ;;
	--watch) watch=$2; shift 2 ;;
	--b) kernel_b=$2 initrd_b=$3; shift 3 ;;
	*) break ;;
	esac
done
[ $# -ge 4 ] || die "usage: run-pair.sh [--timeout SEC] [--port PORT] [--name NAME] [--smp N] [--keep-freed-pages] [--no-kmemleak] [--queues N] [--watch SEC] [--b KERNEL_B INITRD_B] KERNEL INITRD SCRIPT_A SCRIPT_B [ARG...]"
kernel=$1 initrd=$2
kernel_b=${kernel_b:-$kernel} initrd_b=${initrd_b:-$initrd}
run=$QPNIC_TOP/scripts/run-vm.sh
if [ -n "$queues" ]; then
	# (names of this run's own: another pair may be up meanwhile)
	br=qpnicbr$$ tap_a=qpnic$$a tap_b=qpnic$$b
	trap 'ip link del $tap_a 2>/dev/null; ip link del $tap_b 2>/dev/null; ip link del $br 2>/dev/null' EXIT
	{ ip link add "$br" type bridge &&
	  ip tuntap add dev "$tap_a" mode tap multi_queue &&
	  ip tuntap add dev "$tap_b" mode tap multi_queue &&
	  ip link set "$tap_a" master "$br" && ip link set "$tap_b" master "$br" &&
	  ip link set "$tap_a" up && ip link set "$tap_b" up && ip link set "$br" up; } ||
		die "no host bridge and taps for the pair (root only)"
	nic_a=tap:$tap_a:$queues:01 nic_b=tap:$tap_b:$queues:02
else
	nic_a=listen:$port nic_b=connect:$port
fi

# A command to guest ROLE's QEMU monitor; its answer on stdout.
hmp() { # role command
	python3 - "$QPNIC_BUILD/$name-$1.monitor" "$2" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
def answer():
    out = b""
    try:
        while not out.endswith(b"(qemu) "):
            data = s.recv(65536)
            if not data:
                break
            out += data
    except socket.timeout:
        pass
    return out.decode(errors="replace")
answer()
s.sendall(sys.argv[2].encode() + b"\n")
print(answer())
PY
}
watch_guest() { # role
	local log=$QPNIC_BUILD/$name-$1.log size last="" quiet=0
	while sleep 10; do
		grep -q '^@@QPNIC-EXIT' "$log" 2>/dev/null && return
		size=$(stat -c %s "$log" 2>/dev/null) || continue
		if [ "$size" != "$last" ]; then
			last=$size quiet=0
			continue
		fi
		quiet=$((quiet + 10))
		[ "$quiet" -ge "$watch" ] || continue
		say "guest $1 silent for ${quiet}s: its vCPUs' RIP, then an NMI (log: $log)"
		hmp "$1" "info registers -a" | grep -ao 'CPU#[0-9]*\|RIP=[0-9a-f]*' | paste -sd' ' >&2
		hmp "$1" nmi >/dev/null
		return
	done
}
monitor_a=() monitor_b=() watchers=()
if [ -n "$watch" ]; then
	monitor_a=(--monitor "$QPNIC_BUILD/$name-a.monitor")
	monitor_b=(--monitor "$QPNIC_BUILD/$name-b.monitor")
	rm -f "$QPNIC_BUILD/$name-a.log" "$QPNIC_BUILD/$name-b.log"
	watch_guest a & watchers+=($!)
	watch_guest b & watchers+=($!)
fi
"$run" --quiet --timeout "$timeout" "${vm_opts[@]}" "${monitor_a[@]}" --mem 2G --nic "$nic_a" \
	--log "$QPNIC_BUILD/$name-a.log" "$kernel" "$initrd" "$3" a "${@:5}" &
pid_a=$!
# B's QEMU connects once, at its start: wait until A's listens (on a busy
# host that took more than the 2 s once waited here, and B came up
# with a dead link). A probe connection would be the one A takes. (Taps
# need no wait: the bridge is up before either.)
[ -z "$queues" ] && for _ in $(seq 300); do
	ss -Hltn "sport = :$port" | grep -q . && break
	kill -0 $pid_a 2>/dev/null || break
	sleep 0.1
done
"$run" --quiet --timeout "$timeout" "${vm_opts[@]}" "${monitor_b[@]}" --mem 2G --nic "$nic_b" \
	--log "$QPNIC_BUILD/$name-b.log" "$kernel_b" "$initrd_b" "$4" b "${@:5}"
rc_b=$?
wait $pid_a
rc_a=$?
if [ -n "$watch" ]; then
	kill "${watchers[@]}" 2>/dev/null
	rm -f "$QPNIC_BUILD/$name-a.monitor" "$QPNIC_BUILD/$name-b.monitor"
fi
say "pair finished: A status $rc_a, B status $rc_b"
[ "$rc_a" = 0 ] && [ "$rc_b" = 0 ]
