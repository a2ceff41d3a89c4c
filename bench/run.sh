#!/usr/bin/env bash
# `make bench`: runs every bench/NN-*.sh in order. Each prints its figures as
# a table with units and writes CSV under build/bench/. Benchmarks measure;
# they do not pass or fail (an error in the harness itself is reported).
#   BENCH=REGEX   run only the benchmarks whose file name matches
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p build/bench
# a SANITIZE=1 build in bin/ would be measured instead of the real tools
if [ "$(cat build/variant 2>/dev/null)" != rel ]; then
	echo "bench: bin/ holds a sanitizer build; run 'make bench' (it rebuilds without SANITIZE)" >&2
	exit 1
fi
status=0
for b in bench/[0-9]*.sh; do
	[ -e "$b" ] || continue
	[[ $(basename "$b") =~ ${BENCH:-.} ]] || continue
	echo "== $(basename "$b" .sh)"
	if ! "$b"; then
		echo "!! $(basename "$b") did not complete"
		status=1
	fi
	echo
done
echo "CSV results: build/bench/"
exit $status
