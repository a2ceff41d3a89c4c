#!/usr/bin/env bash
# The kernel matrix: boot each of Debian's kernels under QEMU (TCG) with the
# host's / read-only, run its suites from tests/kernels/suites inside, and
# bring their TAP back into OUT/LABEL/*.tap, with each test named
# "[LABEL] ...".
#
#   tests/kernels/run.sh OUT LABEL...
#
# TESTS=REGEX selects suites. After the suites of the kernel that finishes
# first, tests/kernels/clone.bats boots it again from a clone under /tmp,
# and stops it with a TERM (BBRKIT_CLONE_KERNEL=LABEL after that kernel's,
# =none for no clone test). A TERM or an INT stops every guest at once,
# keeps the TAP of the suites they finished, and exits 143.
# A kernel that cannot be fetched or booted gives
# one TAP result, "not ok" under CI=true, a skip naming what is missing
# otherwise. OUT/LABEL/times holds the boot time and each suite's time.
#
# The kernels boot at the same time (BBRKIT_GUESTS_PARALLEL=0: one after the
# other): an emulated guest keeps less than one host CPU busy, its tests
# wait on timers and the network as much as they compute, and nothing in a
# guest asserts speed. Each kernel's lines are printed together once all
# are done.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/tests/clock.bash"
. "$here/fault.bash"
out=${1:?usage: run.sh OUT LABEL...}
shift
guest_timeout=${BBRKIT_GUEST_TIMEOUT:-3000}
# A guest killed by the emulator (fault.bash) is booted again, at most this
# many times: each boot runs only the suites not yet finished, so a boot
# more costs a boot and the suite it died in. A CI run's 6.12 guest died
# twice in one run (keys.sh now takes that patching away; kprobes and
# fentry still patch), and the count stays bounded.
fault_boots=${BBRKIT_GUEST_FAULT_BOOTS:-2}

# one TAP result for a kernel that never ran its suites
kernel_unavailable() {
	local label=$1 why=$2 dir=$out/$1
	mkdir -p "$dir"
	if [ "${CI:-}" = true ]; then
		printf 'not ok 1 [%s] the kernel runs its suites\n' "$label" > "$dir/00-kernel.tap"
		printf '%s\n' "$why" | sed 's/^/# /' >> "$dir/00-kernel.tap"
	else
		printf 'ok 1 [%s] the kernel runs its suites # skip %s\n' "$label" "$(head -n 1 <<< "$why")" > "$dir/00-kernel.tap"
	fi
}

# fetch, boot and run one kernel's suites; its lines on stdout
run_kernel() {
	local label=$1 dir=$out/$1 tree io start rc secs f
	rm -rf "$dir"
	mkdir -p "$dir"
	echo "-- [$label] fetching the kernel"
	if ! command -v qemu-system-x86_64 > /dev/null; then
		kernel_unavailable "$label" "qemu-system-x86_64 is missing (Debian package qemu-system-x86; run ./scripts/install-deps.sh)"
		return
	fi
	if ! tree=$("$here/fetch.sh" "$label" 2> "$dir/fetch.err"); then
		kernel_unavailable "$label" "the kernel image cannot be had: $(tail -n 1 "$dir/fetch.err")"
		return
	fi
	io=$(mktemp -d /tmp/tk-guest-$label.XXXXXX)
	# an interrupted run (tests/run.sh stops the matrix with a TERM) leaves no
	# guest directory behind: each kernel runs in a subshell of its own
	trap 'rm -rf "$io"' EXIT
	trap stop_guest TERM
	cat > "$io/script" <<-CMD
		cd $(printf '%q' "$root")
		export CI=$(printf '%q' "${CI:-}") TESTS=$(printf '%q' "${TESTS:-.}")
		export TK_HOST_ROOT=$(printf '%q' "$root") TK_GUEST_KERNEL=$(printf '%q' "$(cat "$tree/version")")
		export BBRKIT_SUITE_RUNS=$(printf '%q' "${BBRKIT_SUITE_RUNS:-1}")
		# the modules the suites use, loaded up front so that a suite's
		# clean-up check sees the same kernel before and after it
		for m in tcp_bbr sch_netem sch_fq sch_tbf sch_htb veth; do
			modprobe \$m || echo "guest: modprobe \$m failed"
		done
		tests/kernels/keys.sh
		tests/kernels/suites.sh '$label' /tk-io/tap
	CMD
	echo "-- [$label] booting $(cat "$tree/package") under QEMU (TCG)"
	start=$EPOCHREALTIME
	boot_guest "$tree" "$io"
	rc=$?
	for ((f = 1; f <= fault_boots; f++)); do
		if [ $rc -ne 125 ] || $stopped || ! emulator_fault "$io/console.log"; then break; fi
		cp "$io/console.log" "$dir/console.fault.$f.log"
		echo "-- [$label] the guest's kernel died of the emulator's stale code (an int3 no patch explains; $dir/console.fault.$f.log): booting once more ($f of $fault_boots) for the suites it did not finish"
		boot_guest "$tree" "$io"
		rc=$?
	done
	secs=$(since "$start")
	sed 's/^/   /' "$io/out.log" 2>/dev/null | grep -vE '^   (ok|not ok|#)' || true
	cp "$io"/tap/*.tap "$io"/tap/test-times "$dir/" 2>/dev/null
	{
		echo "kernel $(cat "$tree/version")"
		awk '/up .* s at the command/ {print "boot", $3} /clocksource/ {print "clocksource", $3}' \
			"$io/guest.log" 2>/dev/null
		cat "$io/tap/times" 2>/dev/null
		echo "total $secs"
	} > "$dir/times"
	# the guest's kernel log stays for a reader of a failure: a CI run's 6.12
	# guest jumped its clock by days (a soft lockup "stuck for 436355s") and
	# only the console's three lines said so
	cp "$io/console.log" "$dir/console.log" 2>/dev/null
	cp "$io/dmesg.log" "$dir/dmesg.log" 2>/dev/null
	if [ $rc -ne 0 ]; then
		{
			printf 'not ok 1 [%s] the guest finished its suites\n' "$label"
			if $stopped; then
				echo "# stopped by a signal before the guest finished; the console's last lines:"
			elif [ $rc -eq 125 ]; then
				echo "# the guest did not finish in ${guest_timeout} s or did not boot; the console's last lines:"
			else
				echo "# the guest's script exited $rc; the console's last lines:"
			fi
			tail -n 25 "$io/console.log" 2>/dev/null | sed 's/^/#   /'
			tail -n 10 "$io/out.log" 2>/dev/null | sed 's/^/#   /'
		} > "$dir/99-guest.tap"
	fi
	echo "-- [$label] done in $secs s (boot $(awk '$1 == "boot" {print $2}' "$dir/times") s)"
	rm -rf "$io"
	! $stopped || exit 143
	! clone_after "$label" || run_clone_test "$label" "$dir"
}

# whether the clone test follows LABEL's suites: the kernel named, or the
# first to get here (mkdir claims the turn atomically)
clone_after() {
	[[ clone =~ ${TESTS:-.} ]] || return 1
	case $clone_label in
	none) return 1 ;;
	first) mkdir "$out/.clone-claimed" 2> /dev/null ;;
	*) [ "$1" = "$clone_label" ] ;;
	esac
}

# boot.sh in a process group of its own, in the background, waited for, so
# that a TERM to the kernel's subshell (stop_kernels) stops the guest at
# once: boot.sh, its timeout and QEMU; then the TAP of the suites the guest
# finished is kept, as after a timeout. Status: boot.sh's.
boot=
stop_guest() {
	stopped=true
	[ -z "$boot" ] || kill -TERM -- "-$boot" 2> /dev/null
}
boot_guest() {
	local tree=$1 io=$2 i rc=143
	$stopped && return "$rc"
	setsid "$here/boot.sh" --timeout "$guest_timeout" --keep "$root" "$tree" "$io" "$io/script" &
	boot=$!
	! $stopped || stop_guest # a TERM that came before $boot was known
	# a trapped signal ends a wait early: wait again, once a signal
	for ((i = 0; i < 10; i++)); do
		wait "$boot"
		rc=$?
		kill -0 "$boot" 2> /dev/null || break
	done
	return "$rc"
}

# tests/kernels/clone.bats on the host: this kernel booted again from a clone
# under /tmp at a path with a space, and stopped with a TERM
run_clone_test() {
	local label=$1 dir=$2 start secs
	echo "-- [$label] the matrix from a clone under /tmp"
	start=$EPOCHREALTIME
	TK_CLONE_KERNEL=$label timeout --kill-after=30 900 bats --tap "$here/clone.bats" 2>&1 |
		sed -E "s/^(not )?ok ([0-9]+) /\\1ok \\2 [$label] clone: /" > "$dir/98-clone.tap"
	secs=$(since "$start")
	echo "clone $secs" >> "$dir/times"
}

# the kernel whose suites are followed by tests/kernels/clone.bats: the
# first to finish (the clone's guest then runs beside the other's last
# suites, not after them: which lane is longer changes with the machine and
# its load), a label, or none
clone_label=${BBRKIT_CLONE_KERNEL:-first}

# the kernel images are fetched one at a time (apt and the unpacked cache
# are shared), then booted
for label in "$@"; do
	"$here/fetch.sh" "$label" > /dev/null 2>&1 || true
done
# Each kernel runs in a background subshell, waited for, so that a TERM or
# an INT here is handled at once: it is passed on to the subshells as a TERM
# (a background job ignores INT), each stops its guest and keeps its TAP,
# and this script prints their lines and exits 143.
stopped=false kernels=()
stop_kernels() {
	stopped=true
	[ ${#kernels[@]} -eq 0 ] || kill -TERM "${kernels[@]}" 2> /dev/null
}
# the kernels started so far; a trapped signal ends a wait early: wait
# again, once a signal
wait_kernels() {
	local i
	for ((i = 0; i < 10; i++)); do
		wait
		[ -n "$(jobs -pr)" ] || return 0
	done
}
trap stop_kernels TERM INT
mkdir -p "$out"
rm -rf "$out/.clone-claimed"
logs=()
for label in "$@"; do
	$stopped && break
	log=$out/$label.log
	logs+=("$log")
	run_kernel "$label" > "$log" 2>&1 &
	kernels+=($!)
	[ "${BBRKIT_GUESTS_PARALLEL:-1}" != 0 ] || wait_kernels
done
wait_kernels
cat "${logs[@]}"
rm -rf "$out/.clone-claimed"
! $stopped || exit 143
rm -f "${logs[@]}"
exit 0
