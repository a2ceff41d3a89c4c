#!/usr/bin/env bats
# `make soak` in short (scripts/soak.sh): bbrtrace and udpdwell for SOAK_S
# seconds under 300 churning BBR flows (each forgotten by the detector as it
# closes) and 2000 UDP sockets (more than --max-sockets) between two
# namespaces. The tests check behaviour, never speed: the tools still run at
# the end, their counts agree with what the soak sees, memory stays within
# the script's one bound (SOAK_RSS_SLACK_KIB's default), and nothing is left
# behind, also when a tool dies or the run is stopped. The last test feeds the
# report doctored readings, so each invariant is seen to fail when it should.
#
# The file takes the bbr_traced lock once for its three runs (SOAK_LOCK_HELD=1
# tells scripts/soak.sh): other bbrtrace suites on the machine make it wait.

load helpers

# 40 s: the load opens its sockets evenly over the run, and soak.sh's default
# warm-up waits until udpdwell's table is full; with its end margin, that
# leaves 19 s of steady state between the readings, for every invariant.
# The first test keeps it at 15 s or more (params.json records the warm-up
# and the margin soak.sh chose), so a changed default cannot shrink it
# unseen
SOAK_S=40
SOAK_FLOWS=300
SOAK_SOCKETS=2000
SOAK=$BATS_TEST_DIRNAME/../../scripts/soak.sh
REPORT=$BATS_TEST_DIRNAME/../../scripts/soak_report.py
RUN_BOUND_S=240 # the 40 s run and its clean-up, at most (the lock is taken before)

setup_file() {
	requires root netns btf bbr struct_ops jq ss bpftool promtool
	export D=$BATS_FILE_TMPDIR/run ID=sb$$
	date +%s > "$BATS_FILE_TMPDIR/t0"
	tk_lock_bbr_traced
	echo "# the bbr_traced lock taken $(($(date +%s) - $(cat "$BATS_FILE_TMPDIR/t0")))s into this file" >&3
	export SOAK_LOCK_HELD=1
	SOAK_DIR=$D SOAK_ID=$ID SOAK_SECONDS=$SOAK_S SOAK_FLOWS=$SOAK_FLOWS \
		SOAK_UDP_SOCKETS=$SOAK_SOCKETS timeout "$RUN_BOUND_S" "$SOAK" \
		> "$BATS_FILE_TMPDIR/out" 2> "$BATS_FILE_TMPDIR/err" && rc=0 || rc=$?
	echo "$rc" > "$BATS_FILE_TMPDIR/rc" # judged by the first test, which shows the output
	timing "the ${SOAK_S} s run"
}

# a "# " line in the TAP output: when run $1 ended, from the file's start
timing() {
	echo "# $1: done $(($(date +%s) - $(cat "$BATS_FILE_TMPDIR/t0")))s into this file" >&3
}

teardown_file() {
	tk_unlock_bbr_traced
}

teardown() {
	jobs -p | xargs -r kill -9 2> /dev/null || true
	return 0
}

# something of the run named $1, whose stderr is $2, is left: its namespaces,
# a process in them or started with their name, the tools it named
left_behind() {
	local id=$1 err=$2 pid
	ip netns list 2> /dev/null | grep -E "^soak-$id-(a|b)( |$)" && return 0
	pgrep -f "soak-$id-" && return 0
	for pid in $(grep 'are running$' "$err" | grep -o '(pid [0-9]*' | tr -dc '0-9\n'); do
		kill -0 "$pid" 2> /dev/null && { echo "pid $pid still runs"; return 0; }
	done
	return 1
}

jn() { jq -r "$2" "$D/$1"; }

@test "soak_short: the run passes: every invariant holds and the verdict is stable" {
	cat "$BATS_FILE_TMPDIR/out" "$BATS_FILE_TMPDIR/err"
	expect_cmp "$(cat "$BATS_FILE_TMPDIR/rc")" -eq 0 "soak.sh's exit status"
	expect_cmp $(($(jn params.json .seconds) - $(jn params.json .warmup) - $(jn params.json .end_margin))) \
		-ge 15 "seconds of steady state between the readings"
	grep -q '^verdict: stable$' "$BATS_FILE_TMPDIR/out"
	grep -q '^soak: all invariants hold$' "$BATS_FILE_TMPDIR/out"
	! grep -q FAIL "$BATS_FILE_TMPDIR/out" || false
	# the load made bbrtrace track its open flows and overfilled udpdwell's
	# table, so the start reading was steady state
	! grep -q 'warning:' "$BATS_FILE_TMPDIR/err" || false
	grep -q "^  ok    warm at the start: bbrtrace tracks [0-9]* flows" "$BATS_FILE_TMPDIR/out"
	grep -q "^  ok    warm at the start: udpdwell's socket table full" "$BATS_FILE_TMPDIR/out"
}

@test "soak_short: both tools still ran at the end and stopped cleanly on SIGINT" {
	expect_equal "$(cat "$D/bt.rc")" 0 "bbrtrace's exit status on SIGINT"
	expect_equal "$(cat "$D/ud.rc")" 0 "udpdwell's exit status on SIGINT"
	# the final reading was taken after the load stopped: both answered then
	expect_cmp "$(jn bt.final.json '.rss_kib')" -gt 0 "bbrtrace's RSS at the end, KiB"
	expect_cmp "$(jn ud.final.json '.rss_kib')" -gt 0 "udpdwell's RSS at the end, KiB"
	expect_equal "$(jn bt.summary.json '.type')" summary "bbrtrace's last record"
}

@test "soak_short: bbrtrace's counts agree: kernel runs = samples + lost, /metrics = summary = records" {
	local runs samples lost lines
	runs=$(jn bt.final.json '.progs.bt_main.run_cnt')
	samples=$(jn bt.final.json '.metrics.bbrtrace_samples_total')
	lost=$(jn bt.final.json '.metrics.bbrtrace_lost_events_total')
	lines=$(grep -c '^{"type":"sample"' "$D/trace.jsonl")
	echo "bt_main runs $runs, samples $samples, lost $lost, sample records $lines"
	expect_cmp "$samples" -gt 1000 "samples"
	expect_cmp "$runs" -eq $((samples + lost)) "bt_main's kernel runs (samples + lost)"
	expect_cmp "$lines" -eq "$samples" "sample records"
	expect_cmp "$(jn bt.summary.json '.samples')" -eq "$samples" "the summary's samples"
	expect_cmp "$(jn bt.summary.json '.lost')" -eq "$lost" "the summary's lost"
	# every flow tracked (fewer than --max-flows), said the same way twice,
	# and each forgotten at its close: at most the open flows are tracked
	expect_equal "$(jn bt.final.json '.metrics.bbrtrace_untracked_samples_total')" 0 "untracked samples on /metrics"
	expect_equal "$(jn bt.summary.json '.samples_untracked')" 0 "untracked samples in the summary"
	expect_cmp "$(jn bt.final.json '.metrics.bbrtrace_flows')" -le $((SOAK_FLOWS + SOAK_FLOWS / 10)) "bbrtrace_flows at the end"
}

@test "soak_short: udpdwell's counts agree with the load: every datagram read is timed or counted, evictions exact" {
	local got timed unattributed evicted table missing
	got=$(jn udp.json '.received')
	timed=$(jq -s '[.[] | select(.type == "interval") | .packets + .unmatched] | add' "$D/dwell.jsonl")
	unattributed=$(jq -s '[.[] | select(.type == "interval") | .unattributed] | add' "$D/dwell.jsonl")
	table=$(jn params.json '.max_sockets')
	evicted=$(jn ud.final.json '.metrics.udpdwell_sockets_evicted_total')
	# sockets no socket record names: their reads must be in the unattributed count
	missing=$(jq -rs --argjson n "$SOAK_SOCKETS" '[.[] | select(.type == "socket") | .port] as $seen
		| [range(20000; 20000 + $n)] - $seen | map(tostring) | join(" ")' "$D/dwell.jsonl")
	echo "datagrams read by the load $got = timed by udpdwell $timed + unattributed $unattributed;" \
		"evicted $evicted, table $table; sockets never reported: [$missing]"
	expect_equal "$(jn params.json '.udp_ports')" "20000-$((20000 + SOAK_SOCKETS - 1))" "the ports udpdwell watched"
	expect_cmp "$(jn udp.json '.opened')" -eq "$SOAK_SOCKETS" "sockets the load opened"
	expect_cmp "$got" -eq $((SOAK_SOCKETS * 3)) "datagrams the load read"
	expect_cmp "$((timed + unattributed))" -eq "$got" "datagrams timed + unattributed"
	expect_cmp "$unattributed" -ge $(($(wc -w <<< "$missing") * 3)) "unattributed reads (3 per socket never recorded)"
	expect_cmp "$(jn ud.final.json '.metrics.udpdwell_unattributed_reads_total')" -eq "$unattributed" "/metrics' unattributed reads"
	expect_cmp "$evicted" -eq $((SOAK_SOCKETS - table)) "evictions (sockets past the table)"
	expect_cmp "$(jn ud.last.json '.evicted')" -eq "$evicted" "the last interval record's evictions"
}

@test "soak_short: memory within the script's bound: RSS, BPF maps and /metrics series" {
	local bound tool grew
	bound=$(jn params.json '.rss_slack_kib')
	# the bound is the script's default, not one this test chose
	grep -q "^RSS_SLACK_KIB=\${SOAK_RSS_SLACK_KIB:-$bound}$" "$SOAK"
	for tool in bt ud; do
		grew=$(($(jn $tool.end.json '.rss_kib') - $(jn $tool.start.json '.rss_kib')))
		echo "$tool: RSS grew $grew KiB (bound $bound KiB)"
		expect_cmp "$grew" -le "$bound" "$tool's RSS growth once warm, KiB"
		expect_cmp "$(jn $tool.start.json '.map_bytes')" -gt 0 "$tool's BPF map bytes at the start"
		expect_cmp "$(jn $tool.end.json '.map_bytes')" -eq "$(jn $tool.start.json '.map_bytes')" "$tool's BPF map bytes at the end (as at the start)"
		expect_cmp "$(jn $tool.final.json '.maps | keys | length')" -eq "$(jn $tool.start.json '.maps | keys | length')" "$tool's BPF maps at the end (as at the start)"
		expect_cmp "$(jn $tool.end.json '.metrics.series')" -le "$(jn $tool.start.json '.metrics.series')" "$tool's /metrics series at the end (at most the start's)"
	done
}

@test "soak_short: nothing is left behind: namespaces, processes" {
	grep -q 'bbrtrace (pid [0-9]*,.*udpdwell (pid [0-9]*)' "$BATS_FILE_TMPDIR/err"
	! left_behind "$ID" "$BATS_FILE_TMPDIR/err"
}

@test "soak_short: a tool that dies fails the run, which still cleans up" {
	local id=sd$$ pid rc i victim
	SOAK_DIR=$BATS_TEST_TMPDIR/d SOAK_ID=$id SOAK_SECONDS=30 SOAK_WARMUP=12 SOAK_FLOWS=20 \
		SOAK_UDP_SOCKETS=600 timeout "$RUN_BOUND_S" "$SOAK" > "$BATS_TEST_TMPDIR/out" 2>&1 &
	pid=$!
	for ((i = 0; i < RUN_BOUND_S * 10; i++)); do
		grep -q 'load running' "$BATS_TEST_TMPDIR/out" && break
		kill -0 "$pid" || break
		sleep 0.1
	done
	victim=$(sed -n 's/.* and udpdwell (pid \([0-9]*\)).*/\1/p' "$BATS_TEST_TMPDIR/out")
	[ -n "$victim" ] || { echo "# the soak named no udpdwell pid"; return 1; }
	kill -9 "$victim"
	wait "$pid" && rc=0 || rc=$?
	cat "$BATS_TEST_TMPDIR/out"
	timing "the run whose udpdwell dies"
	expect_cmp "$rc" -eq 1 "soak.sh's exit status"
	grep -q "udpdwell (pid $victim) died under load" "$BATS_TEST_TMPDIR/out"
	! left_behind "$id" "$BATS_TEST_TMPDIR/out"
}

@test "soak_short: SIGINT (Ctrl-C) mid-run: exit 130, nothing left behind" {
	local id=si$$ pid rc i
	# a background job ignores SIGINT; the script is started with it restored
	SOAK_DIR=$BATS_TEST_TMPDIR/d SOAK_ID=$id SOAK_SECONDS=30 SOAK_WARMUP=12 SOAK_FLOWS=20 \
		SOAK_UDP_SOCKETS=600 python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$SOAK" > "$BATS_TEST_TMPDIR/out" 2>&1 &
	pid=$!
	for ((i = 0; i < RUN_BOUND_S * 10; i++)); do
		grep -q 'load running' "$BATS_TEST_TMPDIR/out" && break
		kill -0 "$pid" || break
		sleep 0.1
	done
	sleep 2
	kill -INT "$pid"
	for ((i = 0; i < 600; i++)); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
	wait "$pid" && rc=0 || rc=$?
	cat "$BATS_TEST_TMPDIR/out"
	timing "the run stopped by SIGINT"
	expect_cmp "$rc" -eq 130 "soak.sh's exit status"
	grep -q 'load running' "$BATS_TEST_TMPDIR/out"
	! left_behind "$id" "$BATS_TEST_TMPDIR/out" || false
	[ -d "$BATS_TEST_TMPDIR/d" ] # SOAK_DIR given: kept; a temporary one is removed
}

@test "soak_short: the report fails on growth past the bound, a lost-count mismatch and a dead tool" {
	local x=$BATS_TEST_TMPDIR/x
	# doctored copies of the first run's readings: each must fail the report
	cp -r "$D" "$x.rss" && jq -c ".rss_kib += $(jn params.json .rss_slack_kib) + 1" "$D/ud.end.json" > "$x.rss/ud.end.json"
	run "$REPORT" "$x.rss"
	expect_status 1
	expect_output "verdict: grew: udpdwell RSS +"
	cp -r "$D" "$x.lost" && jq -c '.lost += 1' "$D/bt.summary.json" > "$x.lost/bt.summary.json"
	run "$REPORT" "$x.lost"
	expect_status 1
	expect_output "FAIL  bbrtrace: lost events counted"
	cp -r "$D" "$x.uncounted" && jq -c '.progs.bt_main.run_cnt += 5' "$D/bt.final.json" > "$x.uncounted/bt.final.json"
	run "$REPORT" "$x.uncounted"
	expect_status 1
	expect_output "FAIL  bbrtrace: events the kernel made"
	# a datagram the load read that udpdwell neither timed nor counted as lost
	cp -r "$D" "$x.dgram" && python3 -c 'import re, sys
d = open(sys.argv[1]).read()
sys.stdout.write(re.sub(r"(\{\"type\":\"interval\".*?\"packets\":)([1-9][0-9]*)",
                        lambda m: m.group(1) + str(int(m.group(2)) - 1), d, count=1))' "$D/dwell.jsonl" > "$x.dgram/dwell.jsonl"
	run "$REPORT" "$x.dgram"
	expect_status 1
	expect_output "FAIL  udpdwell: datagrams the load read"
	cp -r "$D" "$x.dead" && echo 137 > "$x.dead/bt.rc"
	run "$REPORT" "$x.dead"
	expect_status 1
	expect_output "FAIL  bbrtrace: exit status 137"
	run "$REPORT" "$D"
	expect_status 0
}
