#!/bin/bash
# PID 1 of a kernel-matrix guest, on the host's own bash over the read-only
# 9p root with a tmpfs overlay (tests/kernels/init set that up). Mounts what a
# booted system has, makes the kernel's modules (unpacked on the host by
# fetch.sh) visible to modprobe, runs /tk-io/cmd, leaves its status in
# /tk-io/status, and powers off. boot.sh puts it in /tk-io, with
#   /tk-io/modules  the unpacked tree's lib/modules on the host
#   /tk-io/keep     host directories, one a line, to keep in view at their
#                   own paths (the checkout): the tmpfs mounted below on /tmp,
#                   /run and /dev/shm would hide them
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb LANG=C.UTF-8 LC_ALL=C.UTF-8
umask 022

poweroff_now() {
	sync
	echo o > /proc/sysrq-trigger
	sleep 30
}
trap poweroff_now EXIT

mount -t proc proc /proc
mount -t sysfs sys /sys

# each kept directory, and the modules tree, bound aside before the tmpfs
# mounts and bound back at its own path after them
kept=()
while IFS= read -r p; do
	[ -n "$p" ] && [ -d "$p" ] || continue
	mkdir -p "/tk-keep/${#kept[@]}"
	mount --bind "$p" "/tk-keep/${#kept[@]}" && kept+=("$p")
done < /tk-io/keep
mods=$(cat /tk-io/modules 2> /dev/null)
[ -z "$mods" ] || { mkdir -p /tk-mods && mount --bind "$mods" /tk-mods; }

mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
ln -sfn /proc/self/fd /dev/fd
ln -sfn /proc/self/fd/0 /dev/stdin
ln -sfn /proc/self/fd/1 /dev/stdout
ln -sfn /proc/self/fd/2 /dev/stderr
mount -t tmpfs -o mode=755 tmpfs /run
mkdir -p /run/netns /run/lock
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || true
mount -t bpf bpf /sys/fs/bpf
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -t securityfs securityfs /sys/kernel/security 2>/dev/null || true
for i in "${!kept[@]}"; do
	mkdir -p "${kept[$i]}" && mount --bind "/tk-keep/$i" "${kept[$i]}"
done
kver=$(uname -r)
if [ -d "/tk-mods/$kver" ]; then
	mkdir -p "/lib/modules/$kver"
	mount --bind "/tk-mods/$kver" "/lib/modules/$kver"
fi
hostname "tk-${kver%%[-+]*}"
ip link set lo up
# the guest's console is the serial port: keep kernel chatter off it
echo 4 > /proc/sys/kernel/printk

{
	echo "guest: kernel $kver, $(nproc) CPUs, $(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo) MiB"
	echo "guest: up $(cut -d' ' -f1 /proc/uptime) s at the command"
	echo "guest: clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"
} > /tk-io/guest.log
if [ -r /tk-io/cmd ]; then
	bash /tk-io/cmd > /tk-io/out.log 2>&1 < /dev/null
	echo $? > /tk-io/status.tmp
else
	echo "guest: no /tk-io/cmd" >> /tk-io/guest.log
	echo 127 > /tk-io/status.tmp
fi
dmesg > /tk-io/dmesg.log 2>&1
mv /tk-io/status.tmp /tk-io/status
