#!/usr/bin/env bash
# The shake harness: run chosen test files many times, with cores kept busy,
# and print each test's pass rate. A test that does not pass every run is a
# flake, and a flake is a bug (the test's or the tool's).
#
#   tests/shake.sh [--runs N] [--load N] [--kernels LIST] [--out DIR] REGEX
#   tests/shake.sh --report --out DIR
#   make shake TESTS=REGEX RUNS=20 LOAD=1 KERNELS="6.1 6.12"
#
#   REGEX      host bats files (tests/bats/NAME.bats) and guest suites
#              (tests/kernels/suites) whose name matches
#   --runs N   runs of each (default 20)
#   --load N   busy loops beside the tests, each one core's worth (default 0)
#   --kernels  the guests to shake the matching guest suites in, as in
#              make test (default "none": the host's files only)
#   --out DIR  where each run's TAP is kept (default build/shake/TIMESTAMP)
#   --from K   number the host's runs from K (default 1): a later batch into
#              the same --out adds to the table instead of replacing runs
#   --report   run nothing: print the table of the runs already in --out
#              (the batches of one table, taken over days) of the files
#              REGEX matches, or of all of them
#
# The host's files run round by round (every file once, then again), so that
# a slow hour of the machine is spread over all of them. Each guest boots once
# and runs its suites N times in turn (tests/kernels/suites.sh's
# BBRKIT_SUITE_RUNS). Exit status: 0 when every test passed every run, 1
# otherwise, 2 on bad usage.
set -uo pipefail
caller=$PWD
cd "$(dirname "$0")/.." || exit 2
. tests/bats_file.bash

runs=20 load=0 kernels=none out="" from=1 report=false
usage() { sed -n '6,21p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--runs) runs=${2:-}; shift 2 ;;
	--load) load=${2:-}; shift 2 ;;
	--kernels) kernels=${2:-}; shift 2 ;;
	--out) out=${2:-}; shift 2 ;;
	--from) from=${2:-}; shift 2 ;;
	--report) report=true; shift ;;
	-h | --help) usage ;;
	-*) echo "shake: unknown option $1" >&2; usage ;;
	*) break ;;
	esac
done
[ $# -eq 1 ] || { $report && [ $# -eq 0 ]; } || usage
filter=${1:-.}
[[ $runs =~ ^[1-9][0-9]{0,3}$ ]] || { echo "shake: --runs wants 1 to 9999, not '$runs'" >&2; exit 2; }
[[ $load =~ ^[0-9]{1,3}$ ]] || { echo "shake: --load wants a count of busy cores, not '$load'" >&2; exit 2; }
[[ $from =~ ^[1-9][0-9]{0,3}$ ]] || { echo "shake: --from wants a run number, not '$from'" >&2; exit 2; }
[ -z "$out" ] || [[ $out == /* ]] || out=$caller/$out # as the caller names it
if $report; then
	[ -d "${out:-/nonexistent}" ] || { echo "shake: --report wants --out DIR, a directory of earlier runs" >&2; exit 2; }
fi

files=()
for f in tests/bats/*.bats; do
	[[ $(basename "$f" .bats) =~ $filter ]] && files+=("$f")
done
suites=$(awk -v re="$filter" '$1 !~ /^#/ && NF >= 2 && $2 ~ re {print $2}' tests/kernels/suites | sort -u)
[ "$kernels" != none ] || suites=
$report || [ ${#files[@]} -gt 0 ] || [ -n "$suites" ] ||
	{ echo "shake: no host file (or, with --kernels, guest suite) matches '$filter'" >&2; exit 2; }
out=${out:-build/shake/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out/host"

# every run's TAP kept in $out that the filter selects: "NAME<TAB>PATH", NAME
# the file's (r1.tap's run number and the check tier's order prefix cut), a
# guest's suite prefixed with its kernel
tap_files() {
	local f file
	for f in "$out"/host/*.tap "$out"/guests/*/*.tap; do
		[ -e "$f" ] || continue
		# a guest that a signal stopped (an interrupted shake) is no
		# result: the suites it finished count, the stop does not
		[[ $f != */99-guest.tap ]] || ! grep -q '^# stopped by a signal' "$f" || continue
		file=$(basename "$f" .tap)
		file=${file%.r[0-9]*}
		file=${file#[0-9][0-9]-}
		[[ $file =~ $filter ]] || continue
		[[ $f != "$out"/guests/* ]] || file=$(basename "$(dirname "$f")")/$file
		printf '%s\t%s\n' "$file" "$f"
	done
}

# every result line of every run: "FILE<TAB>TEST<TAB>ok|fail"; a test is
# named by its file and its text, without its number
results() {
	local file f
	tap_files | while IFS=$'\t' read -r file f; do
		awk -v file="$file" '
			/^ok [0-9]+ / && !/# ?(skip|SKIP)/ { sub(/^ok [0-9]+ (- )?/, ""); print file "\t" $0 "\tok" }
			/^ok [0-9]+ .*# ?(skip|SKIP)/ { sub(/^ok [0-9]+ (- )?/, ""); sub(/ *# ?(skip|SKIP).*$/, ""); print file "\t" $0 "\tfail" }
			/^not ok [0-9]+ / { sub(/^not ok [0-9]+ (- )?/, ""); print file "\t" $0 "\tfail" }' "$f"
	done
}

# how many runs each file (or guest suite) had: a test seen in fewer did
# not run in some (its file crashed or timed out)
file_runs() {
	tap_files | cut -f1 | sort | uniq -c | awk '{print $2 "\t" $1}'
}

# the table: each test's passes and its file's runs, a flaky one marked;
# status 1 when any test is flaky
print_table() {
	printf '%-6s %-6s %s\n' passes runs test
	{ file_runs | sed 's/^/R\t/'; results | sed 's/^/T\t/'; } | awk -F'\t' '
		$1 == "R" { fr[$2] = $3; next }
		{ key = $2 ": " $3; file[key] = $2; n[key]++; if ($4 == "ok") p[key]++ }
		END {
			for (k in n) {
				flaky = p[k] < n[k] || n[k] < fr[file[k]]
				printf "%-6d %-6d %s%s\n", p[k], fr[file[k]], k, flaky ? "   <-- flaky" : ""
				bad += flaky
			}
			exit bad > 0
		}' | sort -t' ' -k1,1n -k3
	rc=${PIPESTATUS[1]}
	echo "shake: the TAP of every run, with the diagnostics of each failure, is in $out"
	exit "$rc"
}

$report && print_table

# the busy loops: plain spinning processes at normal priority, stopped with
# this script (and bounded by a day in case it is killed)
busy=() file_pid= guest_pid=
stop_busy() { [ ${#busy[@]} -eq 0 ] || kill "${busy[@]}" 2> /dev/null; busy=(); }
# an interrupted shake stops its guests too: run.sh keeps the TAP of the
# suites they finished, for a later --report
stop_guests() { [ -z "$guest_pid" ] || { kill -TERM "$guest_pid" 2> /dev/null; wait "$guest_pid"; }; }
trap 'stop_busy; [ -z "$file_pid" ] || bats_files_stop "$file_pid"; stop_guests' EXIT
trap 'exit 130' INT TERM
for ((i = 0; i < load; i++)); do
	timeout 86400 bash -c 'while :; do :; done' &
	busy+=($!)
done
echo "shake: ${#files[@]} host file(s), guest suites [${suites//$'\n'/ }] in kernels '$kernels'," \
	"$runs runs, $load busy core(s); TAP in $out"

t0=$(date +%s)
for ((r = from; r < from + runs; r++)); do
	for f in "${files[@]}"; do
		name=$(basename "$f" .bats)
		tap=$out/host/$name.r$r.tap
		# in the background, waited for: an INT or TERM is handled at once
		bats_file_run "$f" "$tap" "$out/host/test-times" "${BATS_TIMEOUT:-1200}" &
		file_pid=$!
		wait "$file_pid"
		file_pid=
	done
	[ ${#files[@]} -eq 0 ] || echo "shake: host run $r ($((r - from + 1)) of $runs) done at $(( $(date +%s) - t0 )) s"
done

if [ -n "$suites" ]; then
	echo "shake: booting $kernels for the guest suites"
	# in the background, waited for, as the host's files
	# shellcheck disable=SC2086 # the labels are words
	TESTS=$filter BBRKIT_SUITE_RUNS=$runs BBRKIT_CLONE_KERNEL=none \
		BBRKIT_GUEST_TIMEOUT=$((runs * ${BBRKIT_SHAKE_GUEST_RUN_S:-1500})) \
		tests/kernels/run.sh "$out/guests" $kernels > >(grep -vE '^   (ok|not ok|#)') &
	guest_pid=$!
	wait "$guest_pid"
	guest_pid=
fi
echo "shake: done in $(( $(date +%s) - t0 )) s"
stop_busy

print_table
