#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot the patched kernel from scripts/kernel-build.sh in QEMU and run one
# script inside it.
#
#   scripts/vm-run.sh [--mem SIZE] [--smp N] [--disk NAME:SIZE ...]
#                     [--timeout SECONDS] [--out DIR] [--keep] [--env NAME=VALUE ...]
#                     [--cmdline ARG ...]
#                     -- /abs/path/script [args...]
#
#   --mem SIZE         guest memory (default 2G)
#   --smp N            guest CPUs (default 2)
#   --disk NAME:SIZE   sparse raw image DIR/NAME.img, attached as virtio-blk with
#                      serial=NAME and discard=unmap (the guest finds it with
#                      find_disk NAME from tests/lib/guest.sh, or /sys/block/vd*/serial)
#   --timeout SECONDS  kill the guest after this long (default 900)
#   --out DIR          where the console log, disks and results go; kept.
#                      Default: a new /tmp/swapalloc-vm.XXXXXX, removed on
#                      success unless --keep.
#   --env NAME=VALUE   export NAME in the guest workload's environment
#   --cmdline ARG      one more kernel argument (e.g. lockdown=integrity, from a
#                      suite's `# vm:` line)
#
# The guest's root is the host's root, read-only over 9p; scripts/guest-init
# is PID 1.  DIR is a second, writable 9p share, mounted at /mnt/out in the
# guest.  Host paths under /tmp, /run, /var/tmp, /root and /mnt are hidden by
# tmpfs mounts in the guest; guest-init finds them under /mnt/host instead.
#
# Files in DIR: console.log (serial console), qemu.log, output.log (the
# workload's stdout+stderr), status (its exit code), dmesg.log, timing
# (guest uptimes), and on failure vm-failure (one line per reason),
# diagnosis (what was printed about it) and kernel-problems; hang.log when
# the workload overran the guest's deadline (a minute before --timeout):
# every task's state, and the kernel stacks of running and blocked ones;
# vcpus.log when the guest timed out: each vCPU's RIP and its symbol.
#
# Exit status: the workload's exit code; 1 when the kernel log shows a
# warning, oops, lockdep splat, etc., when the guest times out, or when the
# guest never wrote its status.
#
# Environment: VM_ACCEL=tcg|kvm (default tcg: /dev/kvm on the dev machines
# cannot run guests), SWAPALLOC_KERNEL_TREE (a built tree; default: the one
# scripts/kernel-build.sh prints), VM_CMDLINE_EXTRA (more kernel arguments),
# VM_MACHINE (QEMU machine type, default q35).
#
# Why q35: the kernel configs have no CONFIG_PCI_MSI, so every virtio-pci
# device takes its interrupt through ACPI _PRT, which the kernel evaluates
# once per device.  On QEMU's default i440fx machine _PRT is an AML loop
# building 128 entries: about a second per device under TCG (19.1 s from
# power-on to the workload with 8 disks, 8.6 s on q35, whose _PRT returns
# a fixed package), and over ACPICA's 30 s loop timeout on the debug
# flavor's KASAN kernel, which then leaves the devices without an
# interrupt: "can't derive routing for PCI INT A", and a guest that hangs.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
prog=vm-run

die() { echo "$prog: $*" >&2; exit 2; }
usage() {
	sed -n '/^#   scripts\/vm-run.sh/,/^#   .*# vm:. line)$/p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit "${1:-2}"
}

mem=2G
smp=2
tmo=900
out=
keep=0
disks=()
envs=()
cmdargs=()
while [ $# -gt 0 ]; do
	case "$1" in
	--mem) [ $# -ge 2 ] || usage; mem=$2; shift 2 ;;
	--smp) [ $# -ge 2 ] || usage; smp=$2; shift 2 ;;
	--disk) [ $# -ge 2 ] || usage; disks+=("$2"); shift 2 ;;
	--timeout) [ $# -ge 2 ] || usage; tmo=$2; shift 2 ;;
	--out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
	--keep) keep=1; shift ;;
	--env) [ $# -ge 2 ] || usage; envs+=("$2"); shift 2 ;;
	--cmdline) [ $# -ge 2 ] || usage; cmdargs+=("$2"); shift 2 ;;
	--) shift; break ;;
	-h|--help) usage 0 ;;
	*) echo "$prog: unknown option '$1'" >&2; usage ;;
	esac
done
[ $# -ge 1 ] || { echo "$prog: no script given after --" >&2; usage; }
script=$1
shift

case "$script" in
/*) ;;
*) die "the script must be an absolute path (the guest sees the host root), not '$script'" ;;
esac
[ -f "$script" ] || die "no such script: $script"
[[ "$mem" =~ ^[0-9]+[MG]?$ ]] || die "--mem wants e.g. 2G or 1536M, not '$mem'"
[[ "$smp" =~ ^[1-9][0-9]*$ ]] || die "--smp wants a number, not '$smp'"
[[ "$tmo" =~ ^[1-9][0-9]*$ ]] || die "--timeout wants seconds, not '$tmo'"
for e in "${envs[@]}"; do
	[[ "$e" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die "--env wants NAME=VALUE, not '$e'"
done

# A path inside one of QEMU's key=value options: a comma in it is doubled
# (the legacy "-monitor unix:PATH" and "-serial file:PATH" forms have no
# such escape, and took "tsc=unstable" in a path for an option).
qpath() { printf '%s' "${1//,/,,}"; }

accel=${VM_ACCEL:-tcg}
# shellcheck disable=SC2054 # the commas are QEMU's option syntax
case "$accel" in
# Under TCG a KASAN kernel spends half a minute at a time in boot-time
# ACPI setup, which the default soft-lockup (20 s) and RCU stall (21 s)
# limits report as lockups; a real one still shows after 120 s and 60 s.
#
# TCG gives the guest the host's TSC plus an offset.  A host that is
# itself a virtual machine can see its TSC jump when it is snapshotted or
# moved (seen here: a "virtual machine fork" moved it 27 hours ahead), and
# a guest keeping time with the TSC then jumps too and every timeout in it
# fires at once: guest-init's deadline killed a make bench boot 49 minutes
# in (its clocksource watchdog read 98908 s of TSC against 0.34 s of
# HPET).  tsc=unstable makes the guest keep time with the HPET, which QEMU
# drives from the host's monotonic clock, and bounds sched_clock's steps;
# it costs 6-15 % of wall time (a cost and throughput boot: 50.4 s
# against 47.4 s; make bench's thp runs on zram and the 64 MiB
# rotational disk: 154 and 181 s against 134 and 162 s; make check:
# 19m13s against 17m29s).
#
# Without ERMS the guest clears pages with "rep stosq" instead of "rep
# stosb", and glibc's memset and memcpy keep to vector stores: TCG runs a
# rep string instruction one element per pass through its translation
# block, so each cleared page took 4096 passes instead of 512 (20-integrity's
# workload: 67.4 s against 72.8 s).  KVM guests keep the host's CPU.
tcg) accel_args=(-accel tcg,thread=multi -cpu max,-erms)
     accel_cmdline="watchdog_thresh=60 rcupdate.rcu_cpu_stall_timeout=60 tsc=unstable" ;;
kvm) accel_args=(-accel kvm -cpu host); accel_cmdline= ;;
*) die "VM_ACCEL must be tcg or kvm, not '$accel'" ;;
esac

"$top/scripts/deps.sh" vm >&2

tree=${SWAPALLOC_KERNEL_TREE:-}
if [ -z "$tree" ]; then
	tree=$("$top/scripts/kernel-build.sh" -q) || die "scripts/kernel-build.sh failed"
fi
kernel=$tree/arch/x86/boot/bzImage
[ -f "$kernel" ] || die "no kernel image at $kernel"
[ -f "$tree/kernelrelease" ] || die "no kernelrelease file in $tree"
release=$(cat "$tree/kernelrelease")

own_out=0
if [ -z "$out" ]; then
	out=$(mktemp -d /tmp/swapalloc-vm.XXXXXX)
	own_out=1
	echo "$prog: output in $out" >&2
else
	mkdir -p "$out"
	out=$(cd "$out" && pwd)
	rm -f "$out"/{console.log,qemu.log,output.log,status,dmesg.log,timing,cmd,vm-failure,kernel-problems,diagnosis,hang.log,vcpus.log,timed-out,monitor.sock}
fi

drive_args=()
for d in "${disks[@]}"; do
	name=${d%%:*}
	size=${d#*:}
	[ "$name" != "$d" ] || die "--disk wants NAME:SIZE, not '$d'"
	[[ "$name" =~ ^[A-Za-z0-9_-]{1,20}$ ]] || die "disk name '$name' must be 1-20 of [A-Za-z0-9_-] (virtio-blk serial)"
	[[ "$size" =~ ^[0-9]+[KMGT]?$ ]] || die "disk size for $name wants e.g. 256M, not '$size'"
	img=$out/$name.img
	rm -f "$img"
	truncate -s "$size" "$img"
	drive_args+=(-drive "file=$(qpath "$img"),format=raw,if=none,id=disk-$name,discard=unmap,cache=unsafe,aio=threads"
		-device "virtio-blk-pci,drive=disk-$name,serial=$name")
done

# What guest-init runs, as bash it sources.
{
	echo "# SPDX-License-Identifier: GPL-2.0"
	echo "# written by scripts/vm-run.sh for scripts/guest-init"
	printf 'SWAPALLOC_ARGV=('
	printf ' %q' "$script" "$@"
	printf ' )\n'
	printf 'export SWAPALLOC_TOP=%q\n' "$top"
	printf 'export SWAPALLOC_KERNEL_TREE=%q\n' "$tree"
	printf 'export SWAPALLOC_KERNELRELEASE=%q\n' "$release"
	# guest-init's own deadline (guest uptime), early enough to report task states.
	printf 'export SWAPALLOC_GUEST_TIMEOUT=%d\n' $((tmo > 120 ? tmo - 60 : tmo * 3 / 4))
	for e in "${envs[@]}"; do
		printf 'export %s=%q\n' "${e%%=*}" "${e#*=}"
	done
} > "$out/cmd"

cmdline="root=/dev/root rootfstype=9p rootflags=trans=virtio,version=9p2000.L,msize=512000,cache=loose"
cmdline+=" ro console=ttyS0 panic=-1 panic_on_warn=1 init=$top/scripts/guest-init"
cmdline+=" $accel_cmdline ${VM_CMDLINE_EXTRA:-}${cmdargs[*]:+ ${cmdargs[*]}}"

# The QEMU monitor, for a hung guest's vCPU registers (a unix socket path
# must fit in 108 bytes).
monitor_args=()
sock=$out/monitor.sock
[ ${#sock} -lt 100 ] &&
	monitor_args=(-chardev "socket,id=monitor,path=$(qpath "$sock"),server=on,wait=off"
		      -mon chardev=monitor,mode=readline)

# vcpu_report: every vCPU's registers from the monitor, each RIP with the
# kernel symbol it is in: where a guest that stopped talking is spinning.
vcpu_report() {
	[ -S "$sock" ] || { echo "no QEMU monitor socket"; return 0; }
	python3 - "$sock" > "$out/vcpus.raw" 2>&1 <<'PY' || true
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
def prompt():
    buf = b''
    try:
        while not buf.endswith(b'(qemu) '):
            d = s.recv(65536)
            if not d:
                break
            buf += d
    except socket.timeout:
        pass
    return buf.decode(errors='replace')
prompt()
s.sendall(b'info registers -a\n')
print(prompt())
PY
	awk -v map="$tree/System.map" '
		BEGIN { while ((getline l < map) > 0) { split(l, f, " "); a[++n] = f[1]; s[n] = f[3] } }
		/^CPU#/ { cpu = $1 }
		/RIP=/ {
			match($0, /RIP=[0-9a-f]+/); rip = substr($0, RSTART + 4, RLENGTH - 4)
			best = ""; for (i = 1; i <= n; i++) if (a[i] <= rip) best = s[i]; else break
			print cpu " RIP=" rip " in " (best == "" ? "?" : best)
		}' "$out/vcpus.raw"
	echo "# full register dump: $out/vcpus.raw"
}

start=$(date +%s.%N)
# timeout(1) puts QEMU in a process group of its own, away from the
# terminal's ^C: pass INT/TERM/HUP on to it.  Our own deadline comes first,
# so the vCPUs can be looked at; timeout(1) is the backstop.
qpid=
interrupted=0
# shellcheck disable=SC2317 # called by trap
on_signal() {
	interrupted=1
	[ -z "$qpid" ] || kill -TERM "$qpid" 2>/dev/null || true
}
trap on_signal INT TERM HUP
timeout -k 10 $((tmo + 60)) qemu-system-x86_64 \
	"${accel_args[@]}" -M "${VM_MACHINE:-q35}" -m "$mem" -smp "$smp" \
	-nographic -nodefaults -no-reboot "${monitor_args[@]}" \
	-chardev "file,id=console,path=$(qpath "$out/console.log")" -serial chardev:console \
	-kernel "$kernel" -append "$cmdline" \
	-fsdev "local,id=root,path=/,security_model=none,readonly=on,multidevs=remap" \
	-device virtio-9p-pci,fsdev=root,mount_tag=/dev/root \
	-fsdev "local,id=out,path=$(qpath "$out"),security_model=none" \
	-device virtio-9p-pci,fsdev=out,mount_tag=swapalloc-out \
	"${drive_args[@]}" \
	</dev/null >"$out/qemu.log" 2>&1 &
qpid=$!
(
	end=$((SECONDS + tmo))
	while kill -0 "$qpid" 2>/dev/null; do
		if [ $SECONDS -ge $end ]; then
			: > "$out/timed-out"
			vcpu_report > "$out/vcpus.log" 2>&1
			kill -TERM "$qpid" 2>/dev/null
			exit 0
		fi
		sleep 1
	done
) </dev/null >/dev/null 2>&1 &
watch=$!
qrc=0
wait "$qpid" || qrc=$?
while kill -0 "$qpid" 2>/dev/null; do
	qrc=0
	wait "$qpid" || qrc=$?
done
# The watchdog looks once a second: stop it rather than wait for it.
kill "$watch" 2>/dev/null || true
wait "$watch" 2>/dev/null || true
trap - INT TERM HUP
if [ $interrupted -eq 1 ]; then
	echo "$prog: interrupted; output kept in $out" >&2
	exit 130
fi
wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN {printf "%.1f", e - s}')

console=$out/console.log
touch "$console"
failed=0
# What went wrong, printed after the guest's output.
diag=$out/diagnosis
: > "$diag"

# Anything here means the kernel is unhappy, whatever the workload said
# (scripts/kernel-reports.sh), and so does any stack.
. "$top/scripts/kernel-reports.sh"
pattern="$sa_report_pattern|Call Trace:"
allow=$sa_report_allow
grep -naE "$pattern" "$console" | grep -vaE "$allow" > "$out/kernel-problems" || true
if [ -s "$out/kernel-problems" ]; then
	failed=1
	first=$(head -n 1 "$out/kernel-problems" | cut -d: -f1)
	from=$((first > 10 ? first - 10 : 1))
	{
		echo "$prog: the kernel log has warnings or errors ($console):"
		head -n 20 "$out/kernel-problems" | sed 's/^/  /'
		echo "$prog: console from line $from:"
		sed -n "$from,$((first + 50))p" "$console" | sed 's/^/  | /'
	} >> "$diag"
	echo "kernel log: $(head -n 1 "$out/kernel-problems" | cut -d: -f2- | tr -d '\r' | cut -c1-160)" > "$out/vm-failure"
else
	rm -f "$out/kernel-problems"
fi

if [ -s "$out/hang.log" ]; then
	failed=1
	{
		echo "$prog: the workload overran its deadline and was killed; task states ($out/hang.log):"
		head -n 200 "$out/hang.log" | sed "s/^/  > /"
	} >> "$diag"
	echo "workload hung: killed at guest uptime $(awk '/^# guest-init: workload still running/ { print $(NF-1); exit }' "$out/hang.log") s" >> "$out/vm-failure"
fi
if [ -e "$out/timed-out" ] || [ $qrc -eq 124 ] || [ $qrc -eq 137 ]; then
	failed=1
	{
		echo "$prog: guest timed out after $tmo s; last 30 console lines:"
		tail -n 30 "$console" | sed 's/^/  | /'
		if [ -s "$out/vcpus.log" ]; then
			echo "$prog: where the vCPUs were:"
			sed 's/^/  @ /' "$out/vcpus.log"
		fi
	} >> "$diag"
	echo "guest timed out after $tmo s" >> "$out/vm-failure"
elif grep -q 'terminating on signal' "$out/qemu.log"; then
	failed=1
	why=$(grep -m1 -o 'terminating on signal.*' "$out/qemu.log")
	echo "$prog: QEMU was stopped from outside: $why" >> "$diag"
	echo "QEMU was stopped from outside ($why)" >> "$out/vm-failure"
elif [ $qrc -ne 0 ]; then
	failed=1
	{
		echo "$prog: qemu exited with status $qrc:"
		tail -n 20 "$out/qemu.log" | sed 's/^/  ! /'
	} >> "$diag"
	echo "qemu exited with status $qrc" >> "$out/vm-failure"
fi

status=
if [ -f "$out/status" ]; then
	status=$(tr -dc '0-9' < "$out/status")
fi
if [ -z "$status" ]; then
	if [ ! -e "$out/vm-failure" ]; then
		{
			echo "$prog: the guest wrote no exit status; last 30 console lines:"
			tail -n 30 "$console" | sed 's/^/  | /'
		} >> "$diag"
	fi
	echo "the guest wrote no exit status" >> "$out/vm-failure"
	failed=1
	status=1
fi

if [ -f "$out/output.log" ]; then
	cat "$out/output.log"
fi
cat "$diag" >&2
[ -s "$diag" ] || rm -f "$diag"

kboot=$(awk '/^init-start/ {print $2}' "$out/timing" 2>/dev/null || true)
boot=$(awk '/^workload-start/ {print $2}' "$out/timing" 2>/dev/null || true)
run=$(awk '/^workload-end/ {e=$2} /^workload-start/ {s=$2} END {if (e != "") printf "%.1f", e - s}' "$out/timing" 2>/dev/null || true)
printf '%s: %s, %s, boot to workload %s s (init started at %s s), workload %s s, VM wall %s s, status %s\n' \
	"$prog" "$release" "$accel" "${boot:-?}" "${kboot:-?}" "${run:-?}" "$wall" "$status" >&2

if [ $failed -ne 0 ]; then
	echo "$prog: FAILED; output kept in $out" >&2
	exit 1
fi
if [ "$status" -ne 0 ]; then
	echo "$prog: the guest script exited with status $status; output kept in $out" >&2
	exit "$status"
fi
if [ $own_out -eq 1 ] && [ $keep -eq 0 ]; then
	rm -rf "$out"
fi
exit 0
