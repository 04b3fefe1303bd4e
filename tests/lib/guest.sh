# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers for guest suites (tests/guest/*.sh), which tests/run boots one VM
# each for with scripts/vm-run.sh.  Source it from a suite:
#
#   . "$(dirname "$0")/../lib/guest.sh"
#
# A suite prints one line per test, which tests/run counts:
#   PASS: name | FAIL: name: reason | SKIP: name: reason
# and ends with `finish` (exit 1 if anything failed, else 0).
#
# Sets SWAPALLOC_TOP (the repo as the guest sees it), SWAPALLOC_TOOLS (the
# C helpers `make -C tests/tools` builds on the host) and SUITE (the suite's
# name).

SUITE=$(basename "$0" .sh)
SWAPALLOC_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SWAPALLOC_TOOLS=$SWAPALLOC_TOP/build/tools
export SWAPALLOC_TOP SWAPALLOC_TOOLS
_guest_failed=0
# swapverify and swapfill add each checking run's totals here (figures.h).
SWAPALLOC_FIGURES=/tmp/swapalloc-figures
export SWAPALLOC_FIGURES
rm -f "$SWAPALLOC_FIGURES"

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: ${2:-failed}"; _guest_failed=1; }
skip() { echo "SKIP: $1: ${2:-skipped}"; }
note() { echo "# $*"; }

# data_figures: the "# figures: data: ..." line, the data the suite's
# swapverify and swapfill runs wrote, paged out and read back.
data_figures() {
	[ -s "$SWAPALLOC_FIGURES" ] || return 0
	awk '{ b += $1; m += $2; n++ }
		END { printf "# figures: data: %.2f GiB written and verified in %d checker runs, %d mismatches\n",
			b / 1073741824, n, m }' "$SWAPALLOC_FIGURES"
}

# finish: swap off, reset zram devices, print the data figures, end the
# suite: exit 1 if any test failed, or if a device cannot be swapped off.
finish() {
	swapoff_all || fail "finish: swapoff of every device" "see above"
	data_figures
	local z
	for z in /sys/block/zram*; do
		[ -e "$z/reset" ] && echo 1 > "$z/reset" 2>/dev/null
	done
	exit $_guest_failed
}

# require_cmd CMD...: skip the whole suite (exit 0) unless every CMD exists.
require_cmd() {
	local c
	for c in "$@"; do
		if ! command -v "$c" >/dev/null 2>&1; then
			skip "$SUITE" "$c is not installed on the host (scripts/deps.sh tools)"
			exit 0
		fi
	done
}

# tool NAME: path of the C helper built from tests/tools/NAME.c; fails if not built.
tool() {
	local t=$SWAPALLOC_TOOLS/$1
	if [ ! -x "$t" ]; then
		echo "guest.sh: $t is not built; run tests/run or make -C tests/tools on the host" >&2
		return 1
	fi
	echo "$t"
}

# setup_zram SIZE [swapon options...]: configure a free zram device of SIZE
# (e.g. 512M) with lzo-rle (or lzo), mkswap and swapon it; prints /dev/zramN.
setup_zram() {
	local size=$1 dev id alg
	shift
	if [ ! -d /sys/class/zram-control ] && [ ! -e /sys/block/zram0 ]; then
		echo "setup_zram: no zram in this kernel" >&2
		return 1
	fi
	if [ -e /sys/block/zram0 ] && [ "$(</sys/block/zram0/disksize)" = 0 ]; then
		id=0
	else
		id=$(cat /sys/class/zram-control/hot_add) || {
			echo "setup_zram: zram hot_add failed" >&2; return 1; }
	fi
	dev=/dev/zram$id
	for alg in lzo-rle lzo; do
		if echo "$alg" > "/sys/block/zram$id/comp_algorithm" 2>/dev/null; then
			break
		fi
	done
	if ! grep -q '\[lzo' "/sys/block/zram$id/comp_algorithm"; then
		echo "setup_zram: cannot select lzo-rle or lzo: $(<"/sys/block/zram$id/comp_algorithm")" >&2
		return 1
	fi
	if ! echo "$size" > "/sys/block/zram$id/disksize"; then
		echo "setup_zram: cannot set disksize $size on zram$id" >&2
		return 1
	fi
	for _ in 1 2 3 4 5; do [ -b "$dev" ] && break; sleep 0.2; done
	mkswap "$dev" >/dev/null || { echo "setup_zram: mkswap $dev failed" >&2; return 1; }
	swapon "$@" "$dev" || { echo "setup_zram: swapon $dev failed" >&2; return 1; }
	echo "$dev"
}

# find_disk NAME: /dev/vdX of the disk vm-run.sh attached with --disk NAME:SIZE.
find_disk() {
	local name=$1 b
	if [ -e "/dev/disk/by-id/virtio-$name" ]; then
		readlink -f "/dev/disk/by-id/virtio-$name"
		return 0
	fi
	for b in /sys/block/vd*; do
		[ -e "$b/serial" ] || continue
		if [ "$(<"$b/serial")" = "$name" ]; then
			echo "/dev/${b##*/}"
			return 0
		fi
	done
	echo "find_disk: no virtio disk with serial '$name'" >&2
	return 1
}

# swapalloc's control files are in sysfs, its statistics in debugfs.
SA_CTL=/sys/kernel/swapalloc
SA_DBG=/sys/kernel/debug/swapalloc

# sa_col FILE KEY COL: column COL, named by the header row, of the row of
# FILE (one of swapalloc's debugfs tables) whose first column is KEY, or
# of the first row with KEY ''; nothing if there is none.  bash only (no
# awk to start: exec is slow under TCG).  Columns may move between
# releases: look them up by name, never by position.
sa_col() {
	local -a hdr cols
	local i c=-1
	{
		read -ra hdr || return 0
		for i in "${!hdr[@]}"; do [ "${hdr[$i]}" = "$3" ] && c=$i; done
		[ $c -ge 0 ] || return 0
		while read -ra cols; do
			if [ -z "$2" ] || [ "${cols[0]}" = "$2" ]; then
				echo "${cols[$c]}"
				return 0
			fi
		done
	} < "$1"
}

# module_loaded NAME: NAME is in /proc/modules (read in bash, no grep).
module_loaded() {
	local m _
	while read -r m _; do [ "$m" = "$1" ] && return 0; done < /proc/modules
	return 1
}

# kmsg_mark: remember where the kernel log ends.  kmsg_since STRING: a
# line of the kernel log after the mark contains STRING.  One dmesg each,
# no wc, tail or grep: every process costs tens of ms under TCG.
kmsg_mark() {
	local -a l
	mapfile -t l <<<"$(dmesg)"
	_kmsg_mark=${#l[@]}
}
kmsg_since() {
	local -a l
	local x
	mapfile -t -s "${_kmsg_mark:-0}" l <<<"$(dmesg)"
	for x in "${l[@]}"; do [[ $x == *"$1"* ]] && return 0; done
	return 1
}

# sa_check DEV: run swapalloc's full invariant check of DEV and print what
# it found, `ok` or the first violation.  Reading $SA_CTL/<dev>/check only
# shows the last result; writing 1 runs the check (and fails with EUCLEAN
# on a violation).  Returns 0 only for `ok`.
sa_check() {
	local f=$SA_CTL/$1/check res
	if [ ! -e "$f" ]; then
		echo "no $f"
		return 1
	fi
	echo 1 2>/dev/null > "$f"
	# $(<) starts no process (a cat costs tens of ms under TCG), but it
	# ignores read errors: an empty result is one.
	res=$(<"$f")
	echo "${res:-nothing read from $f}"
	[ "$res" = ok ]
}

# sa_policy DEV CHOICE: switch DEV to CHOICE through its sysfs policy file.
sa_policy() {
	echo "$2" > "$SA_CTL/$1/policy"
}

# wait_gone PATH: wait up to 5 s for PATH to go (a device's sysfs directory
# is removed by a work item just after swapoff returns).
wait_gone() {
	local i
	for i in $(seq 50); do
		[ -e "$1" ] || return 0
		sleep 0.1
	done
	[ ! -e "$1" ]
}

# swap_used_wait DEV KIB SECS: wait until /proc/swaps shows at least KIB
# KiB used on DEV (a writer has reached it); 1 after SECS seconds without.
swap_used_wait() {
	local i dev used
	for ((i = 0; i < $3 * 10; i++)); do
		while read -r dev _ _ used _; do
			[ "$dev" = "$1" ] && [ "$used" -ge "$2" ] && return 0
		done < /proc/swaps
		sleep 0.1
	done
	return 1
}

# set_rotational DEV 0|1: mark a block device as SSD (0) or rotating (1).
# Swap reads this at swapon time.
set_rotational() {
	local dev=${1##*/} val=$2 f
	f=/sys/block/$dev/queue/rotational
	if ! echo "$val" > "$f" 2>/dev/null || [ "$(<"$f")" != "$val" ]; then
		echo "set_rotational: cannot set $f to $val" >&2
		return 1
	fi
}

# mthp_enable SIZE_KB [MODE]: set hugepages-SIZE_KBkB/enabled to MODE
# (default always) and PMD-size (2048kB) THP to never.
mthp_enable() {
	local kb=$1 mode=${2:-always} d=/sys/kernel/mm/transparent_hugepage
	if [ ! -d "$d/hugepages-${kb}kB" ]; then
		echo "mthp_enable: no $d/hugepages-${kb}kB" >&2
		return 1
	fi
	echo "$mode" > "$d/hugepages-${kb}kB/enabled" || return 1
	if [ "$kb" != 2048 ] && [ -d "$d/hugepages-2048kB" ]; then
		echo never > "$d/hugepages-2048kB/enabled" || return 1
	fi
}

# swapoff_all: turn off every active swap device or file.
swapoff_all() {
	local dev rest rc=0 devs=()
	# Read the list first: /proc/swaps skips entries if it changes under us.
	while read -r dev rest; do
		[ "$dev" = Filename ] || devs+=("$dev")
	done < /proc/swaps
	for dev in "${devs[@]}"; do
		swapoff "$dev" || { echo "swapoff_all: swapoff $dev failed" >&2; rc=1; }
	done
	return $rc
}

# task_stacks PID...: state, wait channel and kernel stack of each process
# and its threads, as comment lines (for a command that does not finish).
task_stacks() {
	local p t
	for p in "$@"; do
		for t in /proc/"$p"/task/*; do
			[ -d "$t" ] || continue
			echo "# ${t#/proc/} $(cat "$t/comm" 2>/dev/null)" \
				"$(awk '/^State:/ { print $2 }' "$t/status" 2>/dev/null)" \
				"wchan=$(cat "$t/wchan" 2>/dev/null)"
			sed 's/^/#     /' "$t/stack" 2>/dev/null
		done
	done
}

# wait_bounded SECS PID: wait for background PID up to SECS seconds; past
# that print its (and its children's) kernel stacks, kill it and return 124.
wait_bounded() {
	local secs=$1 pid=$2 i kids
	for ((i = 0; i < secs * 2; i++)); do
		kill -0 "$pid" 2>/dev/null || { wait "$pid"; return; }
		sleep 0.5
	done
	kids=$(cat /proc/"$pid"/task/*/children 2>/dev/null)
	echo "# pid $pid still running after $secs s:"
	# shellcheck disable=SC2086 # kids is a list of pids
	task_stacks "$pid" $kids
	# shellcheck disable=SC2086
	kill -KILL "$pid" $kids 2>/dev/null
	wait "$pid" 2>/dev/null
	return 124
}

# bpftrace_stop PID: end a bpftrace run as Ctrl-C does and wait for it;
# returns its exit status, or 124 (after printing its stacks and killing
# it) if it runs on.
# bpftrace 0.17 acts on a signal only when it interrupts its epoll_wait():
# one that lands while it reads events sets a flag its loop never looks at
# (BPFtrace::poll_perf_events()) and it traces on, as seen here under TCG.
# So if it is still running 2 s after SIGINT, send SIGTERM every 2 s: the
# same handler, and unlike SIGINT (SIG_DFL once the loop has ended) it
# cannot kill bpftrace while it prints its maps.  60 s in all.
bpftrace_stop() {
	local pid=$1 i
	kill -INT "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return; }
	for ((i = 0; i < 120; i++)); do
		kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return; }
		if [ $i -ge 4 ] && [ $((i % 4)) -eq 0 ]; then
			[ $i -gt 4 ] || echo "# bpftrace $pid still running 2 s after SIGINT: sending SIGTERM"
			kill -TERM "$pid" 2>/dev/null || true
		fi
		sleep 0.5
	done
	wait_bounded 1 "$pid"
}

# must CMD...: run CMD (swapon, swapoff, mkswap, insmod, rmmod, ...); if it
# fails, a FAIL line names the command and its error; returns its status.
must() {
	local rc=0
	"$@" 2>/tmp/must.err || rc=$?
	[ $rc -eq 0 ] || fail "$*" "exit status $rc: $(tr '\n' ' ' </tmp/must.err | cut -c1-200)"
	return $rc
}

# memcg NAME LIMIT: the memory cgroup /sys/fs/cgroup/NAME, limited to LIMIT
# bytes (K, M, G suffixes); prints its path.
memcg() {
	local cg=/sys/fs/cgroup/$1
	echo +memory > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
	mkdir -p "$cg" && echo "$2" > "$cg/memory.max" && echo "$cg"
}

# "${in_memcg[@]}" CGROUP CMD...: exec CMD in CGROUP.  An array, not a
# function, so that `"${in_memcg[@]}" "$cg" cmd &` leaves CMD's own pid in $!.
# shellcheck disable=SC2016,SC2034
in_memcg=(sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh)

# Every get_swap_pages() call, traced with two tracefs kprobe events:
# sa_gsp_in (n entries asked for, order, nr_swap_pages free) and sa_gsp_out
# (ret, entries got).  gsp_trace_on: add, clear the trace and enable them
# (1 if they cannot be added); gsp_trace_off FILE: disable, copy the trace
# to FILE, remove them.  $gsp_awk: awk functions for such a trace line:
# ts() its time in s, pid() its task, val(KEY) a KEY=N field.
gsp_tr=/sys/kernel/tracing
gsp_trace_on() {
	echo 'p:sa_gsp_in get_swap_pages n=$arg1:s32 order=$arg3:s32 free=@nr_swap_pages:s64' >> $gsp_tr/kprobe_events &&
		echo 'r:sa_gsp_out get_swap_pages ret=$retval:s32' >> $gsp_tr/kprobe_events || return 1
	echo > $gsp_tr/trace
	echo 1 > $gsp_tr/events/kprobes/sa_gsp_in/enable
	echo 1 > $gsp_tr/events/kprobes/sa_gsp_out/enable
}
gsp_trace_off() {
	echo 0 > $gsp_tr/events/kprobes/sa_gsp_in/enable
	echo 0 > $gsp_tr/events/kprobes/sa_gsp_out/enable
	cp $gsp_tr/trace "$1"
	echo '-:sa_gsp_in' >> $gsp_tr/kprobe_events
	echo '-:sa_gsp_out' >> $gsp_tr/kprobe_events
}
# shellcheck disable=SC2034 # used by the suites' awk programs
gsp_awk='
	function ts() { match($0, / [0-9]+\.[0-9]+: /); return substr($0, RSTART + 1, RLENGTH - 3) + 0 }
	function pid() { match($0, /-[0-9]+ +\[/); return substr($0, RSTART + 1, RLENGTH - 2) + 0 }
	function val(k,  s) { match($0, " " k "=-?[0-9]+"); s = substr($0, RSTART + length(k) + 2, RLENGTH - length(k) - 2); return s + 0 }
'

# wait_line FILE TEXT PID: until FILE has a line starting with TEXT (at
# most 120 s); returns 1 if it has none by then or once PID has exited.
wait_line() {
	local i
	for ((i = 0; i < 240; i++)); do
		grep -q "^$2" "$1" && return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.5
	done
	return 1
}

# repeat_until_stop LOG RUNS CMD...: CMD again and again until /tmp/stop
# exists; its output is appended to LOG, a "run N exit RC" line to RUNS.
repeat_until_stop() {
	local log=$1 runs=$2 n=0 rc
	shift 2
	while [ ! -e /tmp/stop ]; do
		n=$((n + 1))
		rc=0
		"$@" >> "$log" 2>&1 || rc=$?
		echo "run $n exit $rc" >> "$runs"
	done
}
