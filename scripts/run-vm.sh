#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# usage: run-vm.sh [options] KERNEL INITRD SCRIPT [ARG...]
# Boot one guest under TCG, run /opt/qpnic/guest/SCRIPT.sh ARG... in it and
# exit with its status. The full serial log is kept.
#   --log FILE        serial log (default build/vm-SCRIPT.log)
#   --timeout SEC     kill the guest after SEC seconds (default 1200)
#   --mem SIZE        guest memory (default 3G)
#   --nic listen:PORT|connect:PORT|tap:IFNAME:QUEUES:N
#                     add a virtio-net NIC joined to another guest through a
#                     QEMU socket netdev on 127.0.0.1:PORT, or on the host's
#                     multi-queue tap IFNAME with QUEUES queue pairs (MAC
#                     ending in byte N; run-pair.sh bridges two taps)
#   --quiet           do not echo the guest's console
#   --smp N           vCPUs (default 2)
#   --keep-freed-pages
#                     no init_on_free (a guest that tests no ring lifetime)
#   --no-kmemleak     boot with kmemleak=off (a debug-kernel guest whose
#                     leaks another guest already checks: tracking every
#                     allocation and the two closing scans cost it ~40 s)
#   --share DIR       export the host folder DIR to the guest over 9p
#                     (virtio), tag "share" (a cache that outlives the guest)
#   --monitor SOCK    a QEMU human monitor on the unix socket SOCK, and an
#                     NMI the guest did not expect panics it with a
#                     backtrace (run-pair.sh --watch asks a silent guest
#                     what its vCPU runs that way)
#   --background      run at the lowest host priority (nice 19), on what
#                     CPU time the other guests leave idle; the guest is
#                     starved at times, so its lockup and RCU stall
#                     detectors are off (a guest that tests packaging only)
set -uo pipefail
. "$(dirname "$0")/lib.sh"

log="" timeout=1200 mem=3G nic="" quiet=0 init_on_free=1 smp=2 background=0 kmemleak=""
share=() monitor=()
while [ $# -gt 0 ]; do
	case $1 in
	--log) log=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--nic) nic=$2; shift 2 ;;
	--quiet) quiet=1; shift ;;
	--keep-freed-pages) init_on_free=0; shift ;;
	--smp) smp=$2; shift 2 ;;
	--background) background=1; shift ;;
	--monitor) monitor=(-monitor "unix:$2,server=on,wait=off"); shift 2 ;;
	--no-kmemleak) kmemleak=" kmemleak=off"; shift ;;
	--share) [ -d "$2" ] || die "--share: no folder $2"
		share=(-virtfs "local,path=$2,mount_tag=share,security_model=none,multidevs=remap")
		shift 2 ;;
	*) break ;;
	esac
done
[ $# -ge 3 ] || die "usage: run-vm.sh [options] KERNEL INITRD SCRIPT [ARG...]"
kernel=$1 initrd=$2 script=$3
shift 3
[ -f "$kernel" ] || die "no kernel image at $kernel"
[ -f "$initrd" ] || die "no initramfs at $initrd"
[ -f "$QPNIC_TOP/scripts/guest/$script.sh" ] || die "no guest script $script"
log=${log:-$QPNIC_BUILD/vm-$script.log}
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing (run scripts/deps.sh)"

netargs=(-nic none)
case $nic in
"") ;;
listen:*) netargs=(-netdev "socket,id=n0,listen=127.0.0.1:${nic#listen:}"
		   -device virtio-net-pci,netdev=n0,mac=52:54:00:12:34:01) ;;
connect:*) netargs=(-netdev "socket,id=n0,connect=127.0.0.1:${nic#connect:}"
		    -device virtio-net-pci,netdev=n0,mac=52:54:00:12:34:02) ;;
tap:*:*:*)
	IFS=: read -r _ tap queues macbyte <<<"$nic"
	netargs=(-netdev "tap,id=n0,ifname=$tap,script=no,downscript=no,vhost=off,queues=$queues"
		 -device "virtio-net-pci,netdev=n0,mac=52:54:00:12:34:$macbyte,mq=on,vectors=$((2 * queues + 2))") ;;
*) die "--nic wants listen:PORT, connect:PORT or tap:IFNAME:QUEUES:N, not $nic" ;;
esac
guest_args=$(IFS=,; echo "$*")
# init_on_free: a page freed while userspace still maps it reads as zeros,
# so a ring lifetime bug shows in the tests instead of going unnoticed.
cmdline="console=ttyS0 panic=-1 oops=panic loglevel=5 init_on_free=$init_on_free$kmemleak"
prio=()
if [ "$background" = 1 ]; then
	cmdline+=" nowatchdog rcupdate.rcu_cpu_stall_suppress=1"
	prio=(nice -n 19)
else
	cmdline+=" softlockup_panic=1"
fi
[ ${#monitor[@]} -gt 0 ] && cmdline+=" unknown_nmi_panic"
# (the guest's init says where it is stuck shortly before this kills it)
cmdline+=" qpnic_deadline=$timeout"
cmdline+=" qpnic_script=$script${guest_args:+ qpnic_args=$guest_args}"

say "booting $(basename "$kernel") for '$script' (timeout ${timeout}s, log $log)"
start=$SECONDS
if [ "$quiet" = 1 ]; then sink=/dev/null; else sink=/dev/stderr; fi
# la57=off: no 5-level paging, so each TLB fill TCG emulates walks four
# levels (a module compiled 5-8% faster in a guest here). erms=off,
# fsrm=off: the kernel then copies and clears with rep movsq/stosq or
# unrolled loops, not rep movsb/stosb, which TCG runs one byte per
# iteration (dd from /dev/zero 3x faster, the stock guest's whole run
# 10% less CPU).
#
# A kernel that crashes before /init starts (no @@QPNIC-START; under
# TCG a boot once died of an int3 in run_timer_softirq, text patching
# seen half done by the other vCPU) ran nothing of qpnic: boot it once
# more.
for attempt in 1 2; do
	timeout --foreground -k 10 "$timeout" \
		"${prio[@]}" qemu-system-x86_64 -accel tcg -cpu max,la57=off,erms=off,fsrm=off -smp "$smp" -m "$mem" -nographic \
		-no-reboot -kernel "$kernel" -initrd "$initrd" -append "$cmdline" \
		"${netargs[@]}" "${share[@]}" "${monitor[@]}" </dev/null 2>&1 | sed -u 's/\r$//' | tee "$log" >"$sink"
	qrc=${PIPESTATUS[0]}
	grep -q '^@@QPNIC-START' "$log" && break
	[ "$qrc" = 124 ] || [ "$qrc" = 137 ] || [ "$attempt" = 2 ] || [ -n "$nic" ] && break
	say "guest '$script': the kernel died before /init ran; booting it again (log: $log)"
	cp "$log" "$log.boot-crash"
done
elapsed=$((SECONDS - start))
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	say "guest '$script' TIMED OUT after ${elapsed}s (log: $log)"
	exit 124
fi
rc=$(sed -n 's/^@@QPNIC-EXIT \([0-9]*\).*/\1/p' "$log" | tail -n 1)
if [ -z "$rc" ]; then
	say "guest '$script' did not finish: kernel did not boot or crashed (qemu rc $qrc, log: $log)"
	tail -n 15 "$log" >&2
	exit 125
fi
say "guest '$script' finished in ${elapsed}s with status $rc"
exit "$rc"
