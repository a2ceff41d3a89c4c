#!/usr/bin/env bats
# The kernel matrix's own harness, on the host. tests/kernels/run.sh runs
# this file once, after the suites of the kernel TK_CLONE_KERNEL, which it
# boots again:
# - from a clone under /tmp whose path holds a space: users clone anywhere,
#   and the guest mounts a tmpfs of its own on /tmp, /run and /dev/shm; the
#   clone's guest runs the suite `checkout`;
# - and stopped with a TERM while it boots, as tests/run.sh and the shake
#   stop it: no QEMU and no guest directory may be left behind.

load ../bats/helpers

setup() {
	TK_CLONE_PARENT=$(mktemp -d /tmp/tk-clone.XXXXXX)
}

teardown() {
	[ -z "${RUN:-}" ] || { kill -TERM "$RUN" 2> /dev/null; wait "$RUN"; }
	rm -rf "$TK_CLONE_PARENT"
}

# this checkout, cloned to $1: its commit, then its uncommitted changes and
# untracked files, and the tools built from it (a clone has none)
clone_checkout() {
	local to=$1 f
	git clone -q "$TK_ROOT" "$to" || return 1
	git -C "$TK_ROOT" diff --binary HEAD | git -C "$to" apply --allow-empty || return 1
	git -C "$TK_ROOT" ls-files -z --others --exclude-standard | while IFS= read -r -d '' f; do
		mkdir -p "$to/$(dirname "$f")" && cp -a "$TK_ROOT/$f" "$to/$f"
	done
	cp -a "$TK_ROOT/bin" "$to/bin"
}

@test "a clone under /tmp, at a path with a space, runs a guest suite from there" {
	requires root git qemu
	[ -n "${TK_CLONE_KERNEL:-}" ] || { echo "# TK_CLONE_KERNEL is unset: tests/kernels/run.sh sets it"; return 1; }
	local clone="$TK_CLONE_PARENT/bbr kit" out=$TK_CLONE_PARENT/out tap
	clone_checkout "$clone"
	(cd "$clone" && TESTS='^checkout$' BBRKIT_CLONE_KERNEL=none tests/kernels/run.sh "$out" "$TK_CLONE_KERNEL") \
		> "$TK_CLONE_PARENT/run.log" 2>&1
	tap=$(cat "$out/$TK_CLONE_KERNEL"/*.tap 2> /dev/null)
	if grep -q '^not ok' <<< "$tap" || [ "$(grep -c '^ok ' <<< "$tap")" -lt 4 ]; then
		echo "# the guest suite from $clone:"
		sed 's/^/#   /' <<< "$tap"
		sed 's/^/#   /' "$TK_CLONE_PARENT/run.log"
		return 1
	fi
}

# the QEMU that the process $1 started, by descent: another guest of the same
# kernel may run beside it (a shake's)
qemu_of() {
	local c
	for c in $(pgrep -P "$1"); do
		if [ "$(cat "/proc/$c/comm" 2> /dev/null)" = qemu-system-x86 ]; then echo "$c"; else qemu_of "$c"; fi
	done
}

# a TERM to $RUN, then its exit status in $status once it has ended; fails
# when its QEMU, $1, outlives it. QEMU ends on a TERM at once; boot.sh's
# timeout would kill it 10 s on, so 20 s bound the wait.
stop_run() {
	local i
	kill -TERM "$RUN"
	for ((i = 0; i < 200; i++)); do kill -0 "$RUN" 2> /dev/null || break; sleep 0.1; done
	status=0
	wait "$RUN" || status=$?
	RUN=
	! kill -0 "$1" 2> /dev/null || { echo "# QEMU ($1) still runs"; return 1; }
}

@test "a TERM stops the matrix at once: its QEMU ends, its guest directory goes, and its TAP says why" {
	requires root qemu
	[ -n "${TK_CLONE_KERNEL:-}" ] || { echo "# TK_CLONE_KERNEL is unset: tests/kernels/run.sh sets it"; return 1; }
	local out=$TK_CLONE_PARENT/out qemu io
	TESTS='^checkout$' BBRKIT_CLONE_KERNEL=none "$TK_ROOT/tests/kernels/run.sh" "$out" "$TK_CLONE_KERNEL" \
		> "$TK_CLONE_PARENT/run.log" 2>&1 &
	RUN=$!
	# the kernel is fetched already (its suites ran): QEMU starts in seconds
	tk_wait_for 'qemu=$(qemu_of "$RUN") && [ -n "$qemu" ]' 60
	io=$(tr '\0' '\n' < "/proc/$qemu/cmdline" | sed -n 's|^local,path=\(/tmp/tk-guest-[^,]*\),mount_tag=tkio.*|\1|p')
	[[ $io == /tmp/tk-guest-$TK_CLONE_KERNEL.* ]] || { echo "# the guest's directory, from QEMU's command line: '$io'"; return 1; }
	stop_run "$qemu"
	expect_status 143
	[ ! -e "$io" ] || { echo "# $io is left behind"; return 1; }
	grep -q '^# stopped by a signal before the guest finished' "$out/$TK_CLONE_KERNEL/99-guest.tap" ||
		{ cat "$out/$TK_CLONE_KERNEL/99-guest.tap" "$TK_CLONE_PARENT/run.log"; return 1; }
}

@test "a TERM stops a shake's guests too, with the shake" {
	requires root qemu
	[ -n "${TK_CLONE_KERNEL:-}" ] || { echo "# TK_CLONE_KERNEL is unset: tests/kernels/run.sh sets it"; return 1; }
	local qemu
	"$TK_ROOT/tests/shake.sh" --runs 1 --kernels "$TK_CLONE_KERNEL" --out "$TK_CLONE_PARENT/shake" '^checkout$' \
		> "$TK_CLONE_PARENT/shake.log" 2>&1 &
	RUN=$!
	tk_wait_for 'qemu=$(qemu_of "$RUN") && [ -n "$qemu" ]' 60
	stop_run "$qemu" || { cat "$TK_CLONE_PARENT/shake.log"; return 1; }
	expect_status 130
}

@test "a guest that does not reach its command in time is booted once more, and the run says so" {
	requires root qemu
	[ -n "${TK_CLONE_KERNEL:-}" ] || { echo "# TK_CLONE_KERNEL is unset: tests/kernels/run.sh sets it"; return 1; }
	local out=$TK_CLONE_PARENT/out
	# no TCG boot here reaches the guest's command in 1 s (8 to 30 s seen):
	# both boots are stopped as hung, as one that hung in the kernel is
	status=0
	TESTS='^checkout$' BBRKIT_CLONE_KERNEL=none BBRKIT_BOOT_WAIT=1 \
		"$TK_ROOT/tests/kernels/run.sh" "$out" "$TK_CLONE_KERNEL" > "$TK_CLONE_PARENT/run.log" 2>&1 || status=$?
	expect_status 0
	expect_cmp "$(grep -c "did not start the guest's command in 1 s" "$TK_CLONE_PARENT/run.log")" -eq 2 \
		"boots stopped as hung (the first, then the one more)"
	grep -q 'booting it again' "$TK_CLONE_PARENT/run.log" || { cat "$TK_CLONE_PARENT/run.log"; return 1; }
	grep -q '^not ok 1 .* the guest finished its suites' "$out/$TK_CLONE_KERNEL/99-guest.tap" ||
		{ cat "$out/$TK_CLONE_KERNEL/99-guest.tap"; return 1; }
}
