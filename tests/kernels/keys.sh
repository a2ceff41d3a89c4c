#!/usr/bin/env bash
# Inside a kernel-matrix guest: hold on, for the guest's life, the static
# keys of the tracepoints the toolkit's BPF programs attach to (each
# SEC("tp_btf/NAME") or SEC("?tp_btf/NAME") in bpf/), so that a suite's
# attach and detach never patch the kernel's text there.
#
#   tests/kernels/keys.sh         prints "guest: tracepoints held on: ..."
#                                 and the names this kernel lacks
#   tests/kernels/keys.sh --list  prints the names, one a line, and no more
#
# Why: the first probe on a tracepoint flips its static key, and Linux
# patches the jump through an int3 (text_poke_bp). Under QEMU 7.2's
# multi-threaded TCG a vCPU can run its stale translation of that int3 after
# the patch is done, and the kernel dies of an int3 no patch explains
# (fault.bash). call_timer_fn, which timer_expire_entry and _exit sit in, runs
# on every vCPU at every tick: a CI run's 6.12 guest died there twice in one
# run, at ackhold's attach. A key already on is only counted up and down by
# the suites' programs; the text stays as it is. A real CPU cannot take that
# fault, so a host's run patches its text as a user's does.
#
# Each event is enabled in an ftrace instance of its own whose recording is
# off: its probe runs on every event and finds the ring buffer off, which
# costs a guest (nothing in a guest asserts speed) and changes no record.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

# the tracepoints named in the BPF sources' section names
tp_names() {
	sed -n 's/^SEC("?\{0,1\}tp_btf\/\([a-z0-9_]*\)")$/\1/p' bpf/*.bpf.[ch] | sort -u
}
if [ "${1:-}" = --list ]; then
	tp_names
	exit 0
fi
# the events stay on for the system's life: a host's tracing is its own
if [ -z "${TK_GUEST_KERNEL:-}" ]; then
	echo "keys.sh: runs inside a kernel-matrix guest only (TK_GUEST_KERNEL is unset; tests/kernels/run.sh sets it)" >&2
	exit 2
fi
tracefs=/sys/kernel/tracing
[ -d "$tracefs/instances" ] || tracefs=/sys/kernel/debug/tracing
inst=$tracefs/instances/tk-keys
if ! { [ -d "$inst" ] || mkdir "$inst"; } 2> /dev/null; then
	echo "guest: no tracepoint held on: no ftrace instance can be made under $tracefs"
	exit 0
fi
echo 0 > "$inst/tracing_on"
held=() missing=()
for name in $(tp_names); do
	enable=$(printf '%s\n' "$inst"/events/*/"$name"/enable)
	if [ -w "$enable" ] && echo 1 > "$enable" 2> /dev/null; then
		held+=("$name")
	else
		missing+=("$name")
	fi
done
echo "guest: tracepoints held on: ${held[*]:-none}${missing[*]:+ (not in this kernel: ${missing[*]})}"
