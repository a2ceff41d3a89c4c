# shellcheck shell=bash
# The kernel matrix's one excused death of a guest: the signature of QEMU's
# stale code on a guest's console (tests/kernels/run.sh boots such a guest
# once more; tests/bats/guest_fault.bats checks the signature).

# emulator_fault CONSOLE: true when the guest's kernel died of an "Oops:
# int3" in kernel mode, a breakpoint its code no longer held. Linux patches
# its text (a static key flipped as a BPF program attaches to a tracepoint,
# a kprobe) by writing an int3 first and taking it away once every CPU has
# synchronised (text_poke_bp), so a real CPU cannot trap there: only an
# emulator that ran its stale translation of the patched bytes can, as
# QEMU 7.2's multi-threaded TCG did (the console's code then shows the
# finished jump where the int3 fired). Any other panic is the kernel's or
# the suites', and fails the kernel.
emulator_fault() {
	[ -r "$1" ] && grep -q 'Oops: int3:' "$1" &&
		grep -A3 'Oops: int3:' "$1" | grep -q 'RIP: 0010:'
}
