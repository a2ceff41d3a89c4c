#!/usr/bin/env bats
# The kernel matrix from a clone under /tmp whose path holds a space: users
# clone anywhere, and the guest mounts a tmpfs of its own on /tmp, /run and
# /dev/shm. tests/kernels/run.sh runs this file on the host, once, after the
# suites of the kernel TK_CLONE_KERNEL; it boots that kernel again from the
# clone and runs the guest suite `checkout` there.

load ../bats/helpers

setup() {
	TK_CLONE_PARENT=$(mktemp -d /tmp/tk-clone.XXXXXX)
}

teardown() {
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
