#!/usr/bin/env bash
# `make bench`: runs every bench/NN-*.sh in order. Each prints its figures as
# a table with units and writes CSV under build/bench/. Benchmarks measure;
# they do not pass or fail (an error in the harness itself is reported).
#   BENCH=REGEX   run only the benchmarks whose file name matches
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p build/bench
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
