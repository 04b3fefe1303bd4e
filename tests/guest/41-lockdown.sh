#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# swapalloc where Secure Boot puts users: a kernel in lockdown (booted with
# lockdown=integrity; the make check kernel has the lockdown LSM, off
# unless asked for, and module signing, not enforced).
#
#  - lockdown is on: securityfs says [integrity], and an unsigned
#    swapalloc.ko is refused (EPERM, "unsigned module loading is
#    restricted" in the kernel log), as is one signed with a key the suite
#    makes with openssl now, which the kernel does not trust
#  - swapalloc.ko signed through the kernel's scripts/sign-file with the
#    key the kernel build made and trusts (certs/signing_key.pem, as dkms
#    signs with its MOK key) loads, untainted by 'E' (signature verified)
#  - under load (a swapverify worker in a memory cgroup on zram and a
#    virtio disk) the sysfs control switches both devices through every
#    policy: each write succeeds and reads back, sa_check is ok, every
#    worker run verified its data
#  - every debugfs statistics file reads, none has a write bit; every
#    file swapalloc creates (debugfs, /sys/kernel/swapalloc,
#    /sys/module/swapalloc/parameters) opens, the sysfs control files
#    (policy, check, reset) take writes, and the kernel logs no lockdown
#    refusal once the signed module is in
#
# vm: --mem 1G --disk ssd0:96M --timeout 300 --cmdline lockdown=integrity
. "$(dirname "$0")/../lib/guest.sh"

verify=$(tool swapverify) || { fail "swapverify built"; finish; }
ko=$SWAPALLOC_TOP/swapalloc.ko
tree=${SWAPALLOC_KERNEL_TREE:-}
dbg=/sys/kernel/debug/swapalloc
ctl=/sys/kernel/swapalloc
sec=/sys/kernel/security
choices="builtin auto percpu global antifrag"

# --- lockdown is on
[ -e $sec/lockdown ] || mount -t securityfs securityfs $sec 2>/dev/null
read -r mode 2>/dev/null < $sec/lockdown || mode="(no $sec/lockdown)"
if [[ $mode == *"[integrity]"* ]]; then
	pass "lockdown: $sec/lockdown reads '$mode'"
else
	fail "lockdown: $sec/lockdown reads [integrity]" "'$mode'"
	finish
fi

# refused KO WHAT: insmod KO fails with EPERM, the module is not loaded,
# and the kernel log says lockdown refused it.
refused() {
	local n0 n1
	n0=$(dmesg | grep -c 'Lockdown: .*unsigned module loading is restricted')
	if insmod "$1" 2>/tmp/err; then
		fail "lockdown: $2 refused" "insmod succeeded"
		rmmod swapalloc
		return
	fi
	n1=$(dmesg | grep -c 'Lockdown: .*unsigned module loading is restricted')
	if grep -q "Operation not permitted" /tmp/err && [ ! -e /sys/module/swapalloc ] && [ "$n1" -gt "$n0" ]; then
		pass "lockdown: $2 refused (EPERM, the kernel log names lockdown)"
	else
		fail "lockdown: $2 refused (EPERM, the kernel log names lockdown)" \
			"insmod: $(</tmp/err); lockdown lines $n0 -> $n1"
	fi
}
refused "$ko" "unsigned swapalloc.ko"

sign=$tree/scripts/sign-file
[ -x "$sign" ] && [ -f "$tree/certs/signing_key.pem" ] ||
	{ fail "signing" "no $sign or certs/signing_key.pem in '$tree'"; finish; }
if openssl req -new -nodes -utf8 -sha256 -days 1 -batch -x509 -subj "/CN=swapalloc untrusted test key/" \
	-newkey rsa:2048 -outform DER -out /tmp/other.x509 -keyout /tmp/other.pem >/tmp/err 2>&1 &&
   cp "$ko" /tmp/other.ko && "$sign" sha256 /tmp/other.pem /tmp/other.x509 /tmp/other.ko 2>>/tmp/err; then
	refused /tmp/other.ko "swapalloc.ko signed with a key the kernel does not trust"
else
	fail "signing with a new key" "$(tail -n 3 /tmp/err)"
fi

cp "$ko" /tmp/swapalloc.ko
must "$sign" sha256 "$tree/certs/signing_key.pem" "$tree/certs/signing_key.x509" /tmp/swapalloc.ko || finish
tail -c 28 /tmp/swapalloc.ko | grep -q '~Module signature appended~' ||
	fail "sign-file appended a signature"
n0=$(dmesg | grep -c 'Lockdown: ')
if insmod /tmp/swapalloc.ko 2>/tmp/err; then
	taint=$(</sys/module/swapalloc/taint)
	[[ $taint != *E* ]] && pass "lockdown: swapalloc.ko signed with the kernel's trusted key loads (taint '$taint', no E)" ||
		fail "lockdown: signed swapalloc.ko loads with its signature verified" "taint '$taint'"
else
	fail "lockdown: signed swapalloc.ko loads" "$(</tmp/err)"
	finish
fi

# --- under load: the sysfs control switches both devices
zdev=$(setup_zram 64M -p 5) || { fail "setup_zram"; finish; }
sdev=$(find_disk ssd0) || { fail "disks"; finish; }
set_rotational "$sdev" 0 || fail "set_rotational"
must mkswap "$sdev" >/dev/null && must swapon -p 5 "$sdev" || finish
devs="${zdev##*/} ${sdev##*/}"
for d in $devs; do
	[ -e "$ctl/$d/policy" ] || { fail "sysfs: $ctl/$d/policy exists"; finish; }
done

cg=$(memcg lockdown 40M)
rm -f /tmp/stop /tmp/w.log /tmp/w.runs
repeat_until_stop /tmp/w.log /tmp/w.runs "${in_memcg[@]}" "$cg" "$verify" -q -s 16M -c 4M -f 4k -i 1 &
wp=$!
sleep 2
writes=0 bad=0 checks=0 cbad=0
for c in antifrag global percpu builtin auto; do
	for d in $devs; do
		writes=$((writes + 1))
		if ! echo "$c" > "$ctl/$d/policy" 2>/tmp/err; then
			bad=$((bad + 1)); note "$d: write $c: $(</tmp/err)"; continue
		fi
		read -r got < "$ctl/$d/policy"
		[[ $got == *"[$c]"* ]] || { bad=$((bad + 1)); note "$d: policy reads '$got' after $c"; }
	done
	sleep 0.5
	[ "$c" = builtin ] && continue
	for d in $devs; do
		checks=$((checks + 1))
		res=$(sa_check "$d") || { cbad=$((cbad + 1)); note "$c: sa_check $d: $res"; }
	done
done
[ $bad -eq 0 ] && pass "sysfs: $writes policy writes under load succeeded and read back" ||
	fail "sysfs: $writes policy writes under load succeeded and read back" "$bad wrong"
[ $cbad -eq 0 ] && pass "sysfs: sa_check ok after every switch ($checks checks)" ||
	fail "sysfs: sa_check ok after every switch" "$cbad of $checks failed"
touch /tmp/stop
wait_bounded 120 "$wp" || fail "worker stopped"
runs=$(grep -c . /tmp/w.runs 2>/dev/null || true)
nok=$(grep -c ' exit 0$' /tmp/w.runs 2>/dev/null || true)
[ "${runs:-0}" -gt 0 ] && [ "$runs" = "$nok" ] &&
	pass "swapverify: $runs runs under the switches verified their data" ||
	fail "swapverify: every run verified its data" "$nok of ${runs:-0} ok; $(tail -n 2 /tmp/w.log | tr '\n' ' ')"

# --- every file swapalloc creates opens; debugfs has statistics only
dfiles=$(find "$dbg" -type f | wc -l)
wdbg=$(find "$dbg" -type f -perm /222 | sort)
[ -z "$wdbg" ] && [ "$dfiles" -gt 2 ] && pass "debugfs: no file has a write bit ($dfiles files)" ||
	fail "debugfs: no file has a write bit" "$dfiles files; writable: $(echo $wdbg)"
n=0 nbad=0
# (reset is write-only, 0200: written below, not read)
for f in $(find "$dbg" "$ctl" /sys/module/swapalloc/parameters -type f -perm /444 | sort); do
	n=$((n + 1))
	cat "$f" > /dev/null 2>/tmp/err || { nbad=$((nbad + 1)); note "read $f: $(</tmp/err)"; }
done
for d in $devs; do
	for w in "check:1" "reset:1" "policy:auto"; do
		n=$((n + 1))
		echo "${w#*:}" > "$ctl/$d/${w%%:*}" 2>/tmp/err || { nbad=$((nbad + 1)); note "write $ctl/$d/${w%%:*}: $(</tmp/err)"; }
	done
done
for d in $devs; do
	grep -q "^$d " "$dbg/devices" || { nbad=$((nbad + 1)); note "devices has no row for $d"; }
	[ "$(wc -l < "$dbg/$d/alloc")" -gt 1 ] || { nbad=$((nbad + 1)); note "$d/alloc is empty"; }
done
n1=$(dmesg | grep -c 'Lockdown: ')
[ $nbad -eq 0 ] && [ "$n1" = "$n0" ] &&
	pass "no file swapalloc creates is refused ($n opens and writes; debugfs tables read)" ||
	fail "no file swapalloc creates is refused" "$nbad of $n failed; lockdown log lines $n0 -> $n1"

swapoff_all || fail "swapoff"
must rmmod swapalloc
finish
