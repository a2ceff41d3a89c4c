#!/usr/bin/env bats
# The guest's view of the checkout: it is at the host's own path, whatever
# mount that path lies under (the guest mounts fresh tmpfs on /tmp, /run and
# /dev/shm), and the tools built on the host run from it. The kernel matrix
# runs this in every guest; tests/kernels/clone.bats boots a guest from a
# clone under /tmp whose path has a space, and runs it there.

load ../../bats/helpers

@test "the suites run from the host's checkout path" {
	[ -n "${TK_HOST_ROOT:-}" ] || { echo "# TK_HOST_ROOT is unset: not run by tests/kernels/run.sh"; return 1; }
	expect_equal "$(cd "$TK_ROOT" && pwd)" "$TK_HOST_ROOT"
	[ -r "$TK_ROOT/tests/kernels/suites" ] || { echo "# $TK_ROOT/tests/kernels/suites is not readable"; return 1; }
}

@test "the tools built on the host run in the guest" {
	tk_run "$BIN/bbrtrace" --version
	expect_status 0
	expect_output bbrtrace
}

@test "the guest runs its own kernel, not the host's" {
	[ -n "${TK_GUEST_KERNEL:-}" ] || { echo "# TK_GUEST_KERNEL is unset: not run by tests/kernels/run.sh"; return 1; }
	expect_equal "$(uname -r)" "$TK_GUEST_KERNEL"
}
