#!/usr/bin/env bats
# tier: check
# The kernel matrix's answer to a guest killed by the emulator
# (tests/kernels/fault.bash): the signature on a recorded console,
# tests/kernels/suites.sh's second boot, which runs only the suites the
# first did not finish, and the tracepoints a guest holds on from boot
# (tests/kernels/keys.sh).

load helpers

setup() { . "$TK_ROOT/tests/kernels/fault.bash"; }

@test "a kernel-mode int3 no patch explains is the emulator's; a user-mode one, another oops or a clean console are not" {
	# a 6.12 guest's console under QEMU 7.2's TCG, as the matrix kept it
	emulator_fault "$TK_ROOT/tests/fixtures/kernels/console-int3.log"
	local c=$BATS_TEST_TMPDIR/console
	sed 's/RIP: 0010:call_timer_fn/RIP: 0033:call_timer_fn/' "$TK_ROOT/tests/fixtures/kernels/console-int3.log" |
		sed '/RIP: 0010:irqentry/d' > "$c"
	run emulator_fault "$c"
	expect_status 1
	sed 's/Oops: int3:/Oops: general protection fault:/' "$TK_ROOT/tests/fixtures/kernels/console-int3.log" > "$c"
	run emulator_fault "$c"
	expect_status 1
	echo "[    1.000000] Run /init as init process" > "$c"
	run emulator_fault "$c"
	expect_status 1
	run emulator_fault "$BATS_TEST_TMPDIR/no-such-console"
	expect_status 1
}

@test "a guest booted once more runs no suite whose TAP the first boot left" {
	local out=$BATS_TEST_TMPDIR/tap
	mkdir -p "$out"
	echo "ok 1 [6.12] checkout: the first boot's" > "$out/01-checkout.tap"
	tk_run env TESTS='^checkout$' "$TK_ROOT/tests/kernels/suites.sh" 6.12 "$out"
	expect_status 0
	expect_output "-- [6.12] checkout finished before the guest was booted once more"
	expect_equal "$(cat "$out/01-checkout.tap")" "ok 1 [6.12] checkout: the first boot's"
	if [ -e "$out/times" ] && grep -q '^checkout ' "$out/times"; then cat "$out/times"; return 1; fi
}

@test "a guest holds on every tracepoint the BPF sources attach to, and a host refuses to" {
	# every tp_btf name anywhere in bpf/, however its line is written
	local want
	want=$(grep -rhoE 'tp_btf/[A-Za-z0-9_]+' "$TK_ROOT/bpf" | sed 's|^tp_btf/||' | sort -u)
	[ -n "$want" ]
	tk_run "$TK_ROOT/tests/kernels/keys.sh" --list
	expect_status 0
	expect_equal "$output" "$want"
	grep -qx timer_expire_entry <<< "$output"
	tk_run env -u TK_GUEST_KERNEL "$TK_ROOT/tests/kernels/keys.sh"
	expect_status 2
	expect_stderr "runs inside a kernel-matrix guest only"
}
