#!/usr/bin/env bash
# Inside a kernel-matrix guest: run this kernel's suites from
# tests/kernels/suites, one bats run each, and leave their TAP in OUT with
# every test named "[LABEL] tag: name". After each suite, a test of its own
# checks that the suite left nothing behind (namespaces, bbr_traced, BPF
# programs, the default congestion control, processes).
#
#   tests/kernels/suites.sh LABEL OUT      TESTS=REGEX selects suites by name,
#                                          or one line by name-tag
#                                          (bbrtrace_flow-kprobe)
#
# BBRKIT_SUITE_RUNS=N runs each suite N times in turn (tests/shake.sh), each
# run's TAP in a file of its own (NN-NAME.rK.tap). A suite whose TAP is
# already in OUT is not run again (a guest booted once more, run.sh).
set -uo pipefail
cd "$(dirname "$0")/../.."
label=$1 out=$2
filter=${TESTS:-.}
suite_timeout=${BBRKIT_SUITE_TIMEOUT:-900}
runs=${BBRKIT_SUITE_RUNS:-1}
mkdir -p "$out"
. tests/kernels/snapshot.bash
. tests/clock.bash

# one bats run of a suite into FILE (TAP, each test named PREFIX...), only
# its tests tagged TAGS unless TAGS is "-", then the clean-up check as a test
# of its own
run_suite() {
	local suite=$1 path=$2 file=$3 prefix=$4 tags=$5 before after start rc secs last i select=()
	shift 5
	[ "$tags" = - ] || select=(--filter-tags "$tags")
	before=$(tk_snapshot)
	start=$EPOCHREALTIME
	env "$@" timeout --kill-after=30 "$suite_timeout" bats --tap --timing "${select[@]}" "$path" 2>&1 < /dev/null |
		awk -v times="$out/test-times" -v suite="$(basename "$file" .tap)" -f tests/taptime.awk > "$file.raw"
	rc=${PIPESTATUS[0]}
	secs=$(since "$start")
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		echo "not ok 999 $suite timed out after ${suite_timeout}s" >> "$file.raw"
	elif [ $rc -ne 0 ] && ! grep -qE '^not ok' "$file.raw"; then
		echo "not ok 999 $suite: bats exited with status $rc" >> "$file.raw"
	elif ! grep -qE '^(not )?ok ' "$file.raw"; then
		# a tag no test carries (renamed, or a typo) would pass unseen
		echo "not ok 999 $suite: no test is tagged $tags" >> "$file.raw"
	fi
	# the clean-up check: killed processes take a moment to go (up to 5 s)
	for ((i = 0; i < 25; i++)); do
		after=$(tk_snapshot)
		[ "$before" = "$after" ] && break
		sleep 0.2
	done
	last=$(grep -cE '^(not )?ok ' "$file.raw")
	if [ "$before" = "$after" ]; then
		echo "ok $((last + 1)) $suite left nothing behind" >> "$file.raw"
	else
		{
			echo "not ok $((last + 1)) $suite left nothing behind"
			diff <(echo "$before") <(echo "$after") | sed 's/^/# /'
		} >> "$file.raw"
	fi
	sed -E "s/^(not )?ok ([0-9]+) /\\1ok \\2 $(printf '%s' "$prefix" | sed 's/[\/&]/\\&/g')/" "$file.raw" > "$file"
	rm -f "$file.raw"
	SUITE_SECS=$secs
}

n=0
while read -r kernels suite tag tests env; do
	case $kernels in '' | '#'*) continue ;; esac
	[ "$kernels" = all ] || [[ ",$kernels," == *",$label,"* ]] || continue
	name=$suite
	prefix="[$label] "
	[ "$tag" = - ] || { name=$suite-$tag; prefix="[$label] $tag: "; }
	[[ $suite =~ $filter || $name =~ $filter ]] || continue
	n=$((n + 1))
	vars=()
	[ "$env" = - ] || read -ra vars <<< "$env"
	path=tests/bats/$suite.bats
	[ -e "$path" ] || path=tests/kernels/bats/$suite.bats
	for ((r = 1; r <= runs; r++)); do
		file=$out/$(printf '%02d' "$n")-$name.tap
		[ "$runs" -eq 1 ] || file=${file%.tap}.r$r.tap
		# its TAP is there: this guest was booted once more after an
		# emulator fault (run.sh's emulator_fault), and it had finished
		if [ -e "$file" ]; then
			echo "-- [$label] $name finished before the guest was booted once more"
			continue
		fi
		echo "-- [$label] $name$( [ "$runs" -eq 1 ] || echo " (run $r of $runs)")"
		run_suite "$suite" "$path" "$file" "$prefix" "$tests" "${vars[@]}"
		echo "$name $SUITE_SECS" >> "$out/times"
		echo "   $(grep -cE '^ok ' "$file") ok, $(grep -cE '^not ok ' "$file") not ok in ${SUITE_SECS} s"
	done
done < tests/kernels/suites
[ "$n" -gt 0 ] || echo "-- [$label] no suite matches TESTS=$filter"
exit 0
