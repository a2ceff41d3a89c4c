# shellcheck shell=bash
# How the runners (tests/run.sh, tests/shake.sh) run one bats file and stop
# the files still running: sourced by both, from the checkout's root.
#
# A file runs under `timeout`, which leads a process group of its own,
# passes a signal it gets on to the whole group and KILLs the group
# BATS_FILE_KILL_AFTER_S later. The signal the runners pass is INT, as
# Ctrl-C on a bats run: bats then runs the test's teardown and the file's
# teardown_file, which remove what the test made (a TERM kills bats before
# they run and leaves the test's namespaces behind). A Ctrl-C at the
# terminal does not reach the file itself: its process group is timeout's.

BATS_FILE_KILL_AFTER_S=30

# bats_file_run FILE TAP TIMES LIMIT_S: FILE's TAP into TAP, each test's time
# appended to TIMES; a file that timed out or crashed without a failing test
# gets a "not ok 999" line saying so. Returns bats's status.
bats_file_run() {
	local f=$1 tap=$2 times=$3 limit=$4 name rc
	name=$(basename "$f" .bats)
	timeout --kill-after="$BATS_FILE_KILL_AFTER_S" "$limit" bats --tap --timing "$f" 2>&1 |
		awk -v times="$times" -v suite="$name" -f tests/taptime.awk > "$tap"
	rc=${PIPESTATUS[0]}
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "not ok 999 - $name timed out after ${limit}s" >> "$tap"
	elif [ "$rc" -ne 0 ] && ! grep -qE '^not ok' "$tap"; then
		echo "not ok 999 - $name: bats exited with status $rc" >> "$tap"
	fi
	return "$rc"
}

# bats_files_stop PID...: the background jobs PID, each a bats_file_run,
# interrupted and waited for (at most the kill-after grace)
bats_files_stop() {
	local p t
	[ $# -gt 0 ] || return 0
	for p in "$@"; do
		for t in $(pgrep -P "$p" -x timeout); do kill -INT "$t" 2> /dev/null; done
	done
	wait "$@" 2> /dev/null
}
