#!/usr/bin/env bash
# Runs each libFuzzer harness for FUZZ_SECONDS (default 600) from its seed
# corpus (tests/fuzz/corpus/NAME). New crashes land in build/fuzz/crashes/NAME;
# once fixed, copy them to tests/fuzz/regress/NAME so that `make test` replays them.
set -uo pipefail
cd "$(dirname "$0")/../.."
secs=${FUZZ_SECONDS:-600}
status=0
for t in ${FUZZ_TARGETS:-}; do
	work=build/fuzz/work/$t crashes=build/fuzz/crashes/$t
	mkdir -p "$work" "$crashes"
	[ -d tests/fuzz/corpus/$t ] && cp -n tests/fuzz/corpus/$t/* "$work"/ 2>/dev/null
	echo "== fuzz $t for ${secs}s"
	if build/fuzz/$t -max_total_time="$secs" -artifact_prefix="$crashes/" -print_final_stats=1 \
		"$work" 2>&1 | tail -n 15; then
		echo "== $t: no crash in ${secs}s"
	else
		echo "== $t: CRASH, inputs in $crashes"
		status=1
	fi
done
exit $status
