#!/usr/bin/env bats
# Documentation that cannot rot: tests/tools/doccmds.py reads every command
# and expected output of the READMEs, and the runners (this file and
# docs_*.bats) run each command for real. A README's runner is a test named
# "FILE: ..." that ends with doc_readme FILE or doc_all_run FILE, which fail
# when one of FILE's commands did not run and the not-run table
# (docs_helpers.bash) does not list it; a README without a runner fails in
# doccmds.bats, beside the extractor's own tests. This file: the READMEs
# whose examples read files (bbrplot, upfbench).

load helpers
load docs_helpers

setup() { DOC_ID=; }

teardown() { doc_teardown; }

@test "plots/README.md: every example draws its picture from real inputs" {
	requires gnuplot
	doc_setup
	fix=$TK_ROOT/tests/fixtures
	# real runs: repro/dip.sh's trace and capture, udpdwell's records,
	# upfbench's sweep, repro/sweep.sh's CSV at sweep.sh's default place
	mkdir -p "$DOC_CWD/build/sweep"
	cp "$fix/pcap/dip-paced.jsonl" "$DOC_CWD/trace.jsonl"
	cp "$fix/pcap/dip-paced.pcap" "$DOC_CWD/capture.pcap"
	cp "$fix/plots/dwell.jsonl" "$DOC_CWD/udpdwell.jsonl"
	cp "$fix/upf/sweep-sample.csv" "$DOC_CWD/upf.csv"
	cp "$fix/plots/sweep.csv" "$DOC_CWD/build/sweep/sweep.csv"
	doc_readme plots/README.md
}

@test "upf/README.md: every example runs (smaller: see the substitution table), check-identity exits 22" {
	doc_setup
	# the capture decode reads: a real run's traffic
	(cd "$DOC_CWD" && "$BIN/upfbench" run --sessions 1000 --packets 4k --floor-mib 0 --pcap-out n3.pcap -q >/dev/null)
	doc_readme upf/README.md
}
