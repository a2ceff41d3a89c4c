#!/usr/bin/env bash
# Boot one unpacked kernel (fetch.sh's DIR) under QEMU/TCG with the host's /
# read-only, run a bash script inside, and bring back its output and status.
#
#   tests/kernels/boot.sh [--timeout S] [--cpus N] [--mem MB] [--keep PATH]...
#                         DIR IODIR SCRIPT
#
# SCRIPT runs inside the guest as root with IODIR's share at /tk-io; what it
# writes there comes back. IODIR gets console.log (the serial console),
# out.log (SCRIPT's stdout and stderr), guest.log and dmesg.log.
# The guest mounts fresh tmpfs on /tmp, /run and /dev/shm, which hides what the
# host keeps there: each --keep PATH (a host directory, e.g. the checkout) is
# seen at the same path inside the guest all the same. A path may hold spaces,
# not a newline.
# Exit status: SCRIPT's, or 125 when the guest did not finish (no status: the
# kernel did not boot, panicked, or the timeout hit; see console.log). A
# guest whose command has not started BBRKIT_BOOT_WAIT seconds (300) after
# QEMU did is booted once more (console.hung.log keeps the first console).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
timeout_s=1800 cpus=2 mem=3072
# The guest's command must start within boot_wait seconds of QEMU's start
# (the guest's PID 1 then writes guest.log): a boot takes 15 to 30 s under
# TCG here, and a guest kernel can hang at boot under TCG (a 6.1 guest spun
# in its crypto self-test, cryptomgr_test, from 2 s on, with soft lockups
# until the timeout). Such a boot is stopped and made once more, and stderr
# says so.
boot_wait=${BBRKIT_BOOT_WAIT:-300}
qemu=
# A TERM (or INT) ends this script only once QEMU has ended: timeout passes
# the signal on to QEMU, and is waited for. A caller that waits for this
# script (run.sh) then finds no QEMU left.
stop() {
	[ -z "$qemu" ] || { kill -TERM "$qemu" 2> /dev/null; wait "$qemu" || true; }
	exit "$1"
}
trap 'stop 143' TERM
trap 'stop 130' INT
keep=()
usage="usage: boot.sh [--timeout S] [--cpus N] [--mem MB] [--keep PATH]... DIR IODIR SCRIPT"
while [ $# -gt 3 ]; do
	case $1 in
	--timeout) timeout_s=$2; shift 2 ;;
	--cpus) cpus=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--keep)
		p=$(cd "$2" 2> /dev/null && pwd) || { echo "boot.sh: --keep $2: no such directory" >&2; exit 2; }
		keep+=("$p")
		shift 2 ;;
	*) echo "boot.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
[ $# -eq 3 ] || { echo "$usage" >&2; exit 2; }
dir=$1 io=$2 script=$3
kver=$(cat "$dir/version")
command -v qemu-system-x86_64 > /dev/null ||
	{ echo "boot.sh: qemu-system-x86_64 is missing (Debian package qemu-system-x86; run ./scripts/install-deps.sh)" >&2; exit 4; }
initrd=$("$here/initramfs.sh" "$dir")
mkdir -p "$io"
cp "$script" "$io/cmd"
# what the guest's PID 1 runs, and what it must keep in view, travel in the
# share (guest.sh reads them): the kernel command line splits at spaces
cp "$here/guest.sh" "$io/guest.sh"
printf '%s\n' "$(cd "$dir/lib/modules" && pwd)" > "$io/modules"
printf '%s\n' "${keep[@]}" > "$io/keep"
# What the guest's kernel is told about the emulated CPU, for speed; no test
# depends on either word:
# - tsc=reliable: TCG's TSC is the host's own (constant, synchronised across
#   the host's CPUs, the host's clocksource), but 6.1's boot-time check finds
#   the vCPUs "unsynchronized" and falls back to HPET, whose every read is an
#   emulated device access: 200,000 clock reads took 1.31 s on HPET, 0.43 s on
#   the TSC, and iperf3 over loopback gave 277 Mbit/s against 430. 6.12
#   trusts the same TSC on its own.
# - norandmaps: QEMU 7.2's TCG finds a translated block by its virtual
#   address, so a process whose libraries land at new random addresses
#   translates their code afresh: with ASLR off an exec took half its time
#   (/bin/true 92 to 48 ms, stat 280 to 134, python3 about 830 to 550; 6.1,
#   alternated in one boot), and the suites exec a program at almost every step.
emulated_cmdline="tsc=reliable norandmaps"
# One boot: QEMU in the background under its timeout; status 0 once it
# ended, 1 when the guest's command did not start within boot_wait seconds
# (QEMU stopped then). KVM does not work on these machines (no vmx/svm):
# TCG, a CPU with every feature QEMU emulates, and nothing on the network.
# --foreground keeps QEMU in this script's process group (timeout would give
# it one of its own), so that a caller that stops the group
# (tests/kernels/run.sh) stops QEMU too; QEMU starts no process of its own
# for the timeout to reach.
boot_once() {
	local i
	rm -f "$io/status" "$io/status.tmp" "$io/out.log" "$io/console.log" "$io/guest.log"
	timeout --foreground --kill-after=10 "$timeout_s" qemu-system-x86_64 \
		-accel tcg,thread=multi -cpu max -smp "$cpus" -m "$mem" \
		-kernel "$dir/vmlinuz" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 loglevel=4 $emulated_cmdline" \
		-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
		-virtfs "local,path=$io,mount_tag=tkio,security_model=none" \
		-nic none -display none -monitor none -serial "file:$io/console.log" \
		-no-reboot < /dev/null > "$io/qemu.log" 2>&1 &
	qemu=$!
	for ((i = 0; i < boot_wait * 10; i++)); do
		[ ! -e "$io/guest.log" ] && kill -0 "$qemu" 2> /dev/null || break
		sleep 0.1
	done
	if [ ! -e "$io/guest.log" ] && kill -0 "$qemu" 2> /dev/null; then
		kill -TERM "$qemu"
		wait "$qemu" || true
		qemu=
		return 1
	fi
	wait "$qemu" || true
	qemu=
	return 0
}

if ! boot_once; then
	cp "$io/console.log" "$io/console.hung.log"
	echo "boot.sh: $kver did not start the guest's command in $boot_wait s (a boot hang; its console: $(tail -n 1 "$io/console.hung.log")); booting it again" >&2
	boot_once ||
		echo "boot.sh: $kver did not start the guest's command in $boot_wait s again" >&2
fi
if [ ! -s "$io/status" ]; then
	exit 125
fi
exit "$(cat "$io/status")"
