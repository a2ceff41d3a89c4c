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
# kernel did not boot, panicked, or the timeout hit; see console.log).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
timeout_s=1800 cpus=2 mem=3072
# A TERM (or INT) ends this script only once QEMU has ended: bash runs a
# trap after the foreground command, and timeout passes the signal on to
# QEMU and waits for it. A caller that waits for this script (run.sh) then
# finds no QEMU left.
trap 'exit 143' TERM
trap 'exit 130' INT
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
rm -f "$io/status" "$io/status.tmp" "$io/out.log" "$io/console.log"
cp "$script" "$io/cmd"
# what the guest's PID 1 runs, and what it must keep in view, travel in the
# share (guest.sh reads them): the kernel command line splits at spaces
cp "$here/guest.sh" "$io/guest.sh"
printf '%s\n' "$(cd "$dir/lib/modules" && pwd)" > "$io/modules"
printf '%s\n' "${keep[@]}" > "$io/keep"
# KVM does not work on these machines (no vmx/svm): TCG, a CPU with every
# feature QEMU emulates, and nothing on the network. --foreground keeps QEMU
# in this script's process group (timeout would give it one of its own), so
# that a caller that stops the group (tests/kernels/run.sh) stops QEMU too;
# QEMU starts no process of its own for the timeout to reach.
timeout --foreground --kill-after=10 "$timeout_s" qemu-system-x86_64 \
	-accel tcg,thread=multi -cpu max -smp "$cpus" -m "$mem" \
	-kernel "$dir/vmlinuz" -initrd "$initrd" \
	-append "console=ttyS0 panic=-1 loglevel=4" \
	-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
	-virtfs "local,path=$io,mount_tag=tkio,security_model=none" \
	-nic none -display none -monitor none -serial "file:$io/console.log" \
	-no-reboot < /dev/null > "$io/qemu.log" 2>&1 || true
if [ ! -s "$io/status" ]; then
	exit 125
fi
exit "$(cat "$io/status")"
