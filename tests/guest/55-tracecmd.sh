#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tools other than bpftrace read swapalloc's tracepoints: their formats in
# tracefs call no module function (lists and sources are __print_symbolic
# over TRACE_DEFINE_ENUM values), so `trace-cmd report` prints list,
# source and device names, `perf list` lists the events and `perf script`
# prints them too.  Events name the device as debugfs does (name= is the
# name column of devices, type= its type column).  And every debugfs table
# is one header row plus rows of the same number of columns.  Outputs are
# kept in results/tracecmd/ of the VM output.
#
# vm: --mem 1G --timeout 420
. "$(dirname "$0")/../lib/guest.sh"
require_cmd trace-cmd

verify=$(tool swapverify) || exit 1
dbg=/sys/kernel/debug/swapalloc
events=/sys/kernel/tracing/events/swapalloc
out=/mnt/out/results/tracecmd
mkdir -p "$out"

# col FILE KEYCOL KEY COL: column COL of FILE's rows whose KEYCOL is KEY.
col() {
	awk -v kc="$2" -v k="$3" -v c="$4" 'NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next }
		$h[kc] == k { print $h[c] }' "$1"
}
order4_ok() { col "$dbg/zram0/alloc" order 4 success; }

mthp_enable 64
insmod "$SWAPALLOC_TOP/swapalloc.ko" || { fail insmod; finish; }
setup_zram 128M >/dev/null || { fail "setup_zram 128M"; finish; }
v=$(<"$SWAPALLOC_TOP/VERSION")
grep -qx "swapalloc $v swap_alloc_api [0-9]*" "$dbg/version" &&
	[ "$(</sys/module/swapalloc/version)" = "$v" ] &&
	pass "debugfs version and /sys/module/swapalloc/version are VERSION's $v" ||
	fail "debugfs version and /sys/module/swapalloc/version are VERSION's $v" \
		"$(cat "$dbg/version" /sys/module/swapalloc/version)"
type=$(col "$dbg/devices" name zram0 type)
[ "$(col "$dbg/devices" name zram0 owner)" = swapalloc ] && [[ "$type" =~ ^[0-9]+$ ]] &&
	pass "devices: zram0 bound, swap type $type" ||
	fail "devices: zram0 bound, with a swap type" "$(<"$dbg/devices")"

# --- formats: nothing a parser outside the kernel cannot evaluate
bad=$(grep -H '^print fmt:' "$events"/*/format | grep -E 'swapalloc_[a-z_]+\(' || true)
[ -z "$bad" ] && grep -q '__print_symbolic' "$events/swapalloc_alloc/format" &&
	pass "event formats call no module function" ||
	fail "event formats call no module function" "$bad"
cp "$events/swapalloc_alloc/format" "$out/swapalloc_alloc.format"

# --- trace-cmd record + report
a0=$(order4_ok)
trace-cmd record -q -e 'swapalloc:*' -o /tmp/trace.dat \
	"$verify" -s 32M -f 64k -i 1 -q -n > "$out/record.log" 2>&1 ||
	fail "trace-cmd record -e 'swapalloc:*'" "$(tail -n 3 "$out/record.log")"
a=$(( $(order4_ok) - a0 ))
trace-cmd report -i /tmp/trace.dat > "$out/report.txt" 2> "$out/report.err" ||
	fail "trace-cmd report" "$(tail -n 3 "$out/report.err")"
head -n 40 "$out/report.txt" | sed 's/^/# /'
if grep -q 'FAILED TO PARSE\|swapalloc_src_name\|swapalloc_list_name' "$out/report.txt" "$out/report.err"; then
	fail "trace-cmd report parses every event" "$(grep -m 3 'FAILED TO PARSE\|swapalloc_' "$out/report.err" "$out/report.txt")"
else
	pass "trace-cmd report parses every event"
fi
src="(cursor|free|nonfull|frag|steal)"
n=$(grep -cE "swapalloc_alloc: +name=zram0 type=$type order=4 offset=[0-9]+ src=$src\$" "$out/report.txt" || true)
odd=$(grep -E 'swapalloc_alloc: ' "$out/report.txt" | grep -vcE "src=$src\$" || true)
note "trace-cmd: $n order-4 swapalloc_alloc events, swapalloc counted $a"
[ "$n" -gt 0 ] && [ "$n" -eq "$a" ] && [ "$odd" -eq 0 ] &&
	pass "trace-cmd report: every order-4 allocation with name, type and source name" ||
	fail "trace-cmd report: every order-4 allocation with name, type and source name" \
		"$n events for $a allocations, $odd without a source name"
list="(free|nonfull|frag|full|discard)"
m=$(grep -cE "swapalloc_cluster_move: +name=zram0 type=$type cluster=[0-9]+ $list -> $list order=[0-9]+\$" \
	"$out/report.txt" || true)
[ "$m" -gt 0 ] && pass "trace-cmd report: cluster moves with list names ($m)" ||
	fail "trace-cmd report: cluster moves with list names" "$(grep -m 3 cluster_move "$out/report.txt")"
f=$(grep -cE "swapalloc_free: +name=zram0 type=$type offset=[0-9]+ nr=[0-9]+\$" "$out/report.txt" || true)
[ "$f" -gt 0 ] && pass "trace-cmd report: frees with name and type ($f)" ||
	fail "trace-cmd report: frees with name and type" "$(grep -m 3 swapalloc_free "$out/report.txt")"

# --- perf, when the host has it
if command -v perf >/dev/null 2>&1; then
	perf list 'swapalloc:*' > "$out/perf-list.txt" 2>&1 || true
	missing=
	for e in "$events"/*/; do
		e=$(basename "$e")
		grep -q "swapalloc:$e" "$out/perf-list.txt" || missing="$missing $e"
	done
	[ -z "$missing" ] && pass "perf list shows every swapalloc event" ||
		fail "perf list shows every swapalloc event" "missing:$missing; $(head -n 5 "$out/perf-list.txt")"
	perf record -q -e swapalloc:swapalloc_alloc -a -o /tmp/perf.data \
		"$verify" -s 16M -f 64k -i 1 -q -n > "$out/perf-record.log" 2>&1 || true
	perf script -i /tmp/perf.data > "$out/perf-script.txt" 2>&1 || true
	p=$(grep -cE "swapalloc:swapalloc_alloc: +name=zram0 type=$type order=4 offset=[0-9]+ src=$src\$" \
		"$out/perf-script.txt" || true)
	[ "$p" -gt 0 ] && pass "perf script: allocations with source names ($p)" ||
		fail "perf script: allocations with source names" "$(tail -n 3 "$out/perf-record.log" "$out/perf-script.txt")"
else
	skip "perf" "perf is not installed on the host (apt-get install linux-perf)"
fi

# --- debugfs: every table one header row plus rows of as many columns
for t in "$dbg/devices" "$dbg"/zram0/{clusters,alloc,reclaim,discard,cursors}; do
	r=$(awk 'NR == 1 { n = NF; next } NF != n { bad = NR } END { print NR - 1, bad + 0 }' "$t")
	if [ "${r#* }" = 0 ] && [ "${r% *}" -gt 0 ] && head -n 1 "$t" | grep -qvE '(^| )[0-9]+( |$)'; then
		pass "debugfs ${t#"$dbg"/}: header row and ${r% *} rows of its width"
	else
		fail "debugfs ${t#"$dbg"/}: header row and rows of its width" "$(head -n 4 "$t")"
	fi
done
sum=$(awk 'NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next } { s += $h["clusters"] }
	END { print s + 0 }' "$dbg/zram0/clusters")
total=$(col "$dbg/devices" name zram0 clusters)
[ "$sum" = "$total" ] && pass "debugfs zram0/clusters adds up to devices' clusters ($total)" ||
	fail "debugfs zram0/clusters adds up to devices' clusters" "$sum vs $total"
for t in "$dbg/devices" "$dbg"/zram0/*; do
	[ -r "$t" ] || continue
	{ echo "== $t"; cat "$t"; } >> "$out/debugfs.txt" 2>&1
done

swapoff_all
rmmod swapalloc
finish
