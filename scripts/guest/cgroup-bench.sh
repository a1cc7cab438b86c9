#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest side of `make bench`, memory cgroup part: the bytes charged to a
# process's memory cgroup (memory.current) per live user QP (RC, 16 WRs
# and 1 SGE each way, one shared CQ), read in one cg_flood process before
# and while it holds COUNT QPs. Everything the QPs cost the process
# counts: rings and kernel objects the driver charges, page tables, VMAs,
# librxe's heap; unaccounted kernel memory does not.
#   cgroup-bench.sh DRIVER DEVICE [COUNT]      (COUNT: 2000)
# Prints "@@BENCH user_cgroup_bytes_per_qp_at_COUNT DRIVER N" as bench.sh
# does, plus a "@@ " line with the memory.stat split; nothing but that
# line when the kernel has no memory controller.
. /opt/qpnic/guest/lib.sh
drv=${1:?usage: cgroup-bench.sh DRIVER DEVICE [COUNT]}
dev=${2:?usage: cgroup-bench.sh DRIVER DEVICE [COUNT]}
n=${3:-2000}
CG=/sys/fs/cgroup
cg=$CG/qpbench
out=/tmp/cgbench.out
fifo=/tmp/cgbench.in

bench() { echo "@@BENCH $1 $2 $3"; }
stat_of() { awk -v k="$1" '$1 == k {v = $2} END {print v + 0}' "$cg/memory.stat"; }
# kernel (slab included), slab, pagetables, anon of memory.stat, one line
stats() {
	echo "$(stat_of kernel) $(($(stat_of slab_reclaimable) + $(stat_of slab_unreclaimable)))" \
		"$(stat_of pagetables) $(stat_of anon)"
}

if grep -qw cgroup2 /proc/filesystems &&
	! awk -v m=$CG '$2 == m && $3 == "cgroup2" {f = 1} END {exit !f}' /proc/mounts; then
	mount -t cgroup2 none $CG
fi
if ! grep -qw memory $CG/cgroup.controllers 2>/dev/null; then
	echo "@@ cgroup-bench $drv: no memory cgroup controller, nothing measured"
	exit 0
fi
grep -qw memory $CG/cgroup.subtree_control || echo +memory >$CG/cgroup.subtree_control
rmdir $cg 2>/dev/null
mkdir $cg
rm -f $fifo
mkfifo $fifo
# shellcheck disable=SC2016
bash -c 'echo $$ >"$1/cgroup.procs" && exec "${@:2}"' _ $cg \
	"$QPNIC_BIN/cg_flood" "$dev" qp "$n" hold <$fifo >$out 2>&1 &
pid=$!
trap '' PIPE
exec 7>$fifo
c0="" c1=""
if wait_for '^cg_flood: ready' $out $pid 600; then
	c0=$(cat $cg/memory.current) s0=$(stats)
	echo >&7
	if wait_for '^cg_flood: kind=' $out $pid 600; then
		c1=$(cat $cg/memory.current) s1=$(stats)
	fi
fi
echo >&7
exec 7>&-
trap - PIPE
wait $pid
rc=$?
rm -f $fifo
made=$(sed -n 's/^cg_flood: kind=.* created=\([0-9]*\).*/\1/p' $out)
err=$(sed -n 's/^cg_flood: kind=.* errno=\([0-9-]*\).*/\1/p' $out)
if [ "${made:-0}" -gt 0 ] && [ -n "$c0" ] && [ -n "$c1" ]; then
	bench "user_cgroup_bytes_per_qp_at_$n" "$drv" $(((c1 - c0) / made))
	read -r k0 sl0 pt0 an0 <<<"$s0"
	read -r k1 sl1 pt1 an1 <<<"$s1"
	echo "@@ cgroup-bench $drv: $made QPs (errno ${err:-?}, exit $rc):" \
		"memory.current $c0 -> $c1; per QP from memory.stat:" \
		"kernel=$(((k1 - k0) / made)) slab=$(((sl1 - sl0) / made))" \
		"pagetables=$(((pt1 - pt0) / made)) anon=$(((an1 - an0) / made))"
else
	echo "@@ cgroup-bench $drv: measurement failed (exit $rc): $(tail -n 3 $out | tr '\n' ' ')"
fi
rmdir $cg
exit 0
