#!/usr/bin/env bats
# repro/dip.sh end to end: the live-stream push between namespaces, traced by
# bbrtrace --detect, with quickack off and then on, in the same test.

load helpers

setup_file() {
	tk_lock_bbr_traced
	export RP_OUT=$BATS_FILE_TMPDIR/runs
	export RP_ID=b${BATS_ROOT_PID}
	mkdir -p "$RP_OUT"
}

teardown_file() {
	tk_del_dip_netns "$RP_ID"
	tk_unlock_bbr_traced
}

teardown() {
	if [ -n "${DIP_PID:-}" ]; then
		kill -TERM "$DIP_PID" 2>/dev/null
		for _ in $(seq 100); do kill -0 "$DIP_PID" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$DIP_PID" 2>/dev/null
	fi
	tk_cleanup
}

dack_count() { jq -s '[.[] | select(.type=="collapse" and .cause=="delayed_ack")] | length' "$1/trace.jsonl"; }

# the single summary record's field $2 of trace $1 (jq 1.6's -e misjudges a select() that ends empty)
summary_field() { jq -s -r "[.[] | select(.type==\"summary\")] | if length == 1 then .[0].$2 else error(\"\(length) summaries\") end" "$1"; }


@test "app-ack receiver at native RTT: >= 5 delayed_ack collapses with quickack off, <= 20% of that rate with quickack on" {
	requires root netns bbr struct_ops btf tcpdump jq tc
	# 20 s: 30 to 34 delayed_ack collapses per 60 s with quickack off, none
	# with it on (three runs, one beside a busy core), so about 10 in 20 s;
	# the fewest seen in 30 s were 7, and 4 beside a busy core and two
	# guests (0.13 a second: under 3 in 20 s). Under 5, the ratio below says
	# little, so the push with quickack off goes on for another 20 s while it
	# has fewer (60 s at most: 8 at that slowest rate), and the two are
	# compared as rates per second
	local secs=20 off_secs=20 k more
	tk_run "$TK_ROOT/repro/dip.sh" --receiver app-ack --quickack off --duration $secs --out "$RP_OUT/off" --id "${RP_ID}f" --port 43101
	expect_status 0
	off=$(dack_count "$RP_OUT/off")
	for k in 1 2; do
		[ "$off" -lt 5 ] || break
		echo "# quickack off: $off delayed_ack collapses in $off_secs s; pushing $secs s more" >&3
		tk_run "$TK_ROOT/repro/dip.sh" --receiver app-ack --quickack off --duration $secs --out "$RP_OUT/off-more$k" \
			--id "${RP_ID}m$k" --port $((43110 + k))
		expect_status 0
		more=$(dack_count "$RP_OUT/off-more$k")
		off=$((off + more)) off_secs=$((off_secs + secs))
	done
	tk_run "$TK_ROOT/repro/dip.sh" --receiver app-ack --quickack on --duration $secs --out "$RP_OUT/on" --id "${RP_ID}n" --port 43102
	expect_status 0
	on=$(dack_count "$RP_OUT/on")
	for r in off on; do
		echo "# quickack $r: delayed_ack $(dack_count "$RP_OUT/$r") of $(jq .collapses "$RP_OUT/$r/verdict.json") collapses in $secs s, $(summary_field "$RP_OUT/$r/trace.jsonl" samples) samples, $(summary_field "$RP_OUT/$r/trace.jsonl" lost) lost, $(jq .push.send.stalls "$RP_OUT/$r/verdict.json") stalls" >&3
	done
	# RP_FIGURES=FILE keeps the figures of every run (make test deletes its logs)
	[ -z "${RP_FIGURES:-}" ] || echo "$(date -u +%FT%TZ) delayed_ack collapses: quickack off $off in $off_secs s, quickack on $on in $secs s; load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$RP_FIGURES"
	# the receiver's kernel is the witness: its delayed-ACK timer fired with
	# quickack off, never with it on
	jq -e '.receiver_delayed_acks > 0' "$RP_OUT/off/verdict.json" > /dev/null &&
		jq -e '.receiver_delayed_acks == 0' "$RP_OUT/on/verdict.json" > /dev/null ||
		{ echo "# TcpExtDelayedACKs: off $(jq .receiver_delayed_acks "$RP_OUT/off/verdict.json"), on $(jq .receiver_delayed_acks "$RP_OUT/on/verdict.json")"; return 1; }
	[ "$off" -ge 5 ] || { echo "# only $off delayed_ack collapses in $off_secs s with quickack off"; return 1; }
	[ $((on * 5 * off_secs)) -le $((off * secs)) ] || { echo "# quickack on left $on in $secs s against $off in $off_secs s"; return 1; }
}

@test "every delayed_ack collapse record: not app-limited and rcv_interval_us >= 5 x snd_interval_us" {
	requires root jq
	[ -s "$RP_OUT/off/trace.jsonl" ] || { echo "# the first test's run is missing"; return 1; }
	n=$(dack_count "$RP_OUT/off")
	expect_cmp "$n" -gt 0 "delayed_ack collapse records"
	bad=$(jq -s '[.[] | select(.type=="collapse" and .cause=="delayed_ack") |
		select(.is_app_limited != false or .rcv_interval_us < 5 * .snd_interval_us)] | length' \
		"$RP_OUT/off/trace.jsonl")
	[ "$bad" -eq 0 ] || { echo "# $bad of $n records break the rule"; return 1; }
	# each collapse record names a drop of at least 30% of the estimate
	jq -e -s '[.[] | select(.type=="collapse") | select(.bw_bps >= 0.7 * .bw_prev_bps)] | length == 0' "$RP_OUT/off/trace.jsonl"
}

@test "summary and verdict count the same collapses by cause as the records" {
	requires root jq
	[ -s "$RP_OUT/off/trace.jsonl" ] || { echo "# the first test's run is missing"; return 1; }
	for c in delayed_ack rate_drop loss_policer other; do
		rec=$(jq -s "[.[] | select(.type==\"collapse\" and .cause==\"$c\")] | length" "$RP_OUT/off/trace.jsonl")
		expect_cmp "$(summary_field "$RP_OUT/off/trace.jsonl" "collapses_by_cause.$c")" -eq "$rec" "summary's $c collapses, against the records"
		jq -e ".collapses_by_cause.$c == $rec" "$RP_OUT/off/verdict.json"
	done
	# the throttled time by cause adds up to the whole: each cause's is
	# whole us (at most 1 us short, 9 causes), the whole rounded to 1 ms
	jq -s -e '[.[] | select(.type == "summary")] | length == 1 and (.[0] |
		(([.throttled_us_by_cause[]] | add) - .throttled_s * 1e6 | fabs) <= 509 and .throttled_s > 0)' \
		"$RP_OUT/off/trace.jsonl" ||
		{ jq -c 'select(.type == "summary") | {throttled_s, throttled_us_by_cause}' "$RP_OUT/off/trace.jsonl"; return 1; }
	grep -q 'caused by delayed ACKs (rcv_interval ≈ ' "$RP_OUT/off/verdict.txt"
	# a host route; the receiver's port scope (dip.sh's --port), and why it
	# does not stop them
	grep -q 'Fix: on the receiver 10.77.2.2, `quickack on --to 10.77.1.2 --host` (a host route to this sender alone), so that it ACKs at once; a socket scope on its port, `quickack on --port 43101`, touches no route but does not stop these' "$RP_OUT/off/verdict.txt"
	grep -q '^scenario: receiver app-ack, quickack off, RTT native' "$RP_OUT/off/verdict.txt"
}

@test "impact: with quickack off the delayed ACKs throttled the push; with quickack on none did, and no receiver fix is proposed" {
	requires root jq
	[ -s "$RP_OUT/on/verdict.json" ] || { echo "# the first test's runs are missing"; return 1; }
	jq -e '.throttling_by_cause.delayed_ack >= 1 and .throttled_s > 0' "$RP_OUT/off/verdict.json"
	jq -e '.throttling_by_cause.delayed_ack == 0' "$RP_OUT/on/verdict.json"
	# every collapse record carries its impact and headroom
	jq -e -s '[.[] | select(.type=="collapse") | select((.impact | IN("throttling", "harmless")) and .headroom > 0 | not)] | length == 0' \
		"$RP_OUT/on/trace.jsonl"
	! jq -e '.fix // "" | test("quickack")' "$RP_OUT/on/verdict.json" || false
	# nearly every collapse has a named cause: other at most 5% (one in fewer than 20)
	for d in off on; do
		jq -e '.collapses_by_cause.other <= ([.collapses / 20 | floor, 1] | max)' "$RP_OUT/$d/verdict.json" ||
			{ jq -c 'select(.type=="collapse" and .cause=="other") | .evidence' "$RP_OUT/$d/trace.jsonl" | head -3; return 1; }
	done
}

@test "dip.sh leaves its outputs: a readable capture, both pushsim summaries, the verdict" {
	requires root jq tcpdump
	d=$RP_OUT/off
	[ -s "$d/trace.jsonl" ] || { echo "# the first test's run is missing"; return 1; }
	pkts=$(tcpdump -r "$d/capture.pcap" -nn 2>/dev/null | wc -l)
	expect_cmp "$pkts" -gt 1000 "packets in the capture"
	jq -e -s '[.[] | select(.type=="summary")] | map(.role) | sort == ["recv","send"]' "$d/pushsim.json"
	# the receiver got every byte the sender's peer ACKed
	jq -e -s '([.[] | select(.type=="summary" and .role=="send")][0].bytes) == ([.[] | select(.type=="summary" and .role=="recv")][0].bytes)' "$d/pushsim.json"
	jq -e '.type == "verdict" and .scenario.quickack == "off" and .scenario.receiver == "app-ack"' "$d/verdict.json"
	# what a viewer feels: the verdict's text gives the receiver's frame
	# latency as recv.jsonl's summary has it, in ms to a tenth
	local want
	want=$(jq -r 'select(.type == "summary") | [.frame_latency_mean_us, .frame_latency_p99_us,
		.frame_latency_max_us] | map(. / 100 | round / 10 | tostring) |
		"receiver: frame latency mean \(.[0]), p99 \(.[1]), max \(.[2]) ms"' "$d/recv.jsonl")
	grep -qF "$want" "$d/verdict.txt" || { echo "# want: $want"; cat "$d/verdict.txt"; return 1; }
	jq -e 'select(.type == "summary") | .frame_latency_mean_us <= .frame_latency_max_us and
		.frame_latency_p99_us <= .frame_latency_max_us and .frame_latency_p99_us > 0' "$d/recv.jsonl" > /dev/null
	# the wire's silences: the verdict counts the pusher's in gaps.jsonl, by
	# state, and says so in words
	local idle inflight
	idle=$(jq -s '[.[] | select((.src | startswith("10.77.1.2:")) and .state == "idle")] | length' "$d/gaps.jsonl")
	inflight=$(jq -s '[.[] | select((.src | startswith("10.77.1.2:")) and .state == "in_flight")] | length' "$d/gaps.jsonl")
	jq -e --argjson i "$idle" --argjson f "$inflight" \
		'.wire_silences.idle.count == $i and .wire_silences.in_flight.count == $f' "$d/verdict.json"
	if [ $((idle + inflight)) -eq 0 ]; then
		want="^wire: never silent for 100 ms or more$"
	else
		want="^wire: silent for 100 ms or more $((idle + inflight)) times: $idle idle, .*, $inflight with data unACKed"
	fi
	grep -qE "$want" "$d/verdict.txt" || { cat "$d/verdict.txt"; return 1; }
	tk_expect_acks_sampled "$d" 43101
	# every output --help lists is there, and nothing else
	local listed present
	listed=$("$TK_ROOT/repro/dip.sh" --help | sed -n '/^Outputs in DIR:/,/^$/p' | awk '/^  [a-z]/ {print $1}' | grep -v '^\*' | sort)
	present=$(cd "$d" && ls | grep -v '\.log$' | sort)
	[ "$listed" = "$present" ] || { echo "# --help lists: $(echo $listed)"; echo "# the run left: $(echo $present)"; return 1; }
}

@test "dip.sh leaves nothing behind: namespaces, bbr_traced, default congestion control" {
	requires root
	[ -s "$RP_OUT/on/trace.jsonl" ] || { echo "# the first test's run is missing"; return 1; }
	run bash -c "ls -1 /run/netns 2>/dev/null | grep -E '^rp-(push|rtr|recv)-${RP_ID}'"
	[ -z "$output" ] || { echo "# left: $output"; grep -h 'namespace' "$RP_OUT"/*.log 2>/dev/null; return 1; }
	! grep -qw bbr_traced /proc/sys/net/ipv4/tcp_available_congestion_control || false
	[ "$(sysctl -n net.ipv4.tcp_congestion_control)" != bbr_traced ]
}

@test "Ctrl-C during a run: exit 130, quickack restored, namespaces removed, no process left, bbr_traced unregistered" {
	requires root netns struct_ops tcpdump jq
	# a terminal's Ctrl-C signals the whole foreground process group: job
	# control gives the run its own group (and SIGINT not ignored, as it is
	# for a non-interactive shell's background jobs)
	set -m
	"$TK_ROOT/repro/dip.sh" --receiver app-ack --quickack on --duration 120 --out "$RP_OUT/int" --id "${RP_ID}i" --port 43103 >"$RP_OUT/int.log" 2>&1 &
	DIP_PID=$!
	set +m
	tk_wait_for "grep -q 'pushing for' '$RP_OUT/int.log' 2>/dev/null" 60
	[ -s "$RP_OUT/int/quickack.journal" ]
	sleep 1
	kill -INT -- "-$DIP_PID"
	rc=0
	for _ in $(seq 300); do kill -0 "$DIP_PID" 2>/dev/null || break; sleep 0.1; done
	wait "$DIP_PID" || rc=$?
	DIP_PID=
	[ "$rc" -eq 130 ] || { cat "$RP_OUT/int.log"; return 1; }
	grep -q 'interrupted, cleaning up' "$RP_OUT/int.log"
	# the route was restored from the journal before the namespace went
	[ ! -s "$RP_OUT/int/quickack.journal" ]
	! grep -q 'quickack restore failed' "$RP_OUT/int.log" || false
	run bash -c "ls -1 /run/netns 2>/dev/null | grep -E '^rp-(push|rtr|recv)-${RP_ID}i'"
	[ -z "$output" ] || { echo "# left: $output"; cat "$RP_OUT/int.log"; return 1; }
	! grep -qw bbr_traced /proc/sys/net/ipv4/tcp_available_congestion_control || false
	! pgrep -f -- '10.77.2.2:43103|port 43103|--dport 43103' >/dev/null || false
}

@test "bbrtrace --prometheus during a run: promtool accepts the page, collapses by cause, the receiver as a peer, /verdict" {
	requires root netns struct_ops tcpdump jq curl promtool
	addr=127.0.0.1:$(tk_free_tcp_port 43900 44000)
	d=$RP_OUT/prom
	"$TK_ROOT/repro/dip.sh" --receiver app-ack --quickack off --duration 15 --out "$d" --id "${RP_ID}p" --port 43105 \
		--prometheus "$addr" >"$RP_OUT/prom.log" 2>&1 &
	DIP_PID=$!
	tk_wait_for "grep -q 'pushing for' '$RP_OUT/prom.log' 2>/dev/null" 60
	# scrape until the page shows a collapse and the receiver's active time
	# (bounded by the run)
	got=false
	for _ in $(seq 120); do
		kill -0 "$DIP_PID" 2>/dev/null || break
		curl -sSf --max-time 2 "http://$addr/metrics" >"$d.page" 2>"$d.curl" || { sleep 0.25; continue; }
		mv -f "$d.page" "$d.metrics"
		if grep -qE '^bbrtrace_collapses_total\{cause="[a-z_]+"\} [1-9]' "$d.metrics" &&
			grep -qE '^bbrtrace_peer_active_seconds\{peer="10\.77\.2\.2"\} [0-9.]*[1-9]' "$d.metrics"; then
			curl -sSf --max-time 2 "http://$addr/verdict" >"$d.verdict" 2>>"$d.curl" && got=true
			break
		fi
		sleep 0.25
	done
	rc=0
	wait "$DIP_PID" || rc=$?
	DIP_PID=
	[ "$rc" -eq 0 ] || { cat "$RP_OUT/prom.log"; return 1; }
	$got || {
		echo "# no collapse, no receiver or no /verdict on http://$addr during the run; last page, then the logs:"
		sed 's/^/#   /' "$d.metrics" "$d.curl" "$RP_OUT/prom.log" "$d/bbrtrace.log"
		return 1
	}
	tk_run promtool check metrics <"$d.metrics"
	expect_status 0
	grep -qx '# TYPE bbrtrace_collapses_total counter' "$d.metrics"
	grep -qx '# TYPE bbrtrace_peer_held_seconds gauge' "$d.metrics"
	# every cause has its counter, at most the final count (the page was live)
	for c in delayed_ack rate_drop loss_policer other; do
		scraped=$(sed -nE "s/^bbrtrace_collapses_total\\{cause=\"$c\"\\} ([0-9]+)\$/\\1/p" "$d.metrics")
		[ -n "$scraped" ] || { echo "# no counter for cause $c"; return 1; }
		expect_cmp "$scraped" -le "$(summary_field "$d/trace.jsonl" "collapses_by_cause.$c")" "scraped $c collapses, against the summary's"
	done
	echo "# page: $(grep -E '^bbrtrace_(collapses_total|peer_)' "$d.metrics" | tr '\n' ' ')" >&3
	# bounded series: the peer and "other", no label per connection
	! grep -qE 'sport=|cookie=' "$d.metrics" || { grep -E 'sport=|cookie=' "$d.metrics"; return 1; }
	expect_cmp "$(grep -c '^bbrtrace_peer_active_seconds{' "$d.metrics")" -le 2 "peer active-time series on the page"
	# /verdict: the window's verdict record, JSON
	jq -e '.type == "window_verdict" and .window_s == 300 and (.text | startswith("In the last 5 min"))' "$d.verdict"
	# the trace kept its samples, and a final verdict that is the last of its kind
	expect_cmp "$(jq -c 'select(.type=="sample")' "$d/trace.jsonl" | wc -l)" -gt 100 "sample records in the trace"
	expect_cmp "$(jq -c 'select(.type=="verdict")' "$d/trace.jsonl" | wc -l)" -eq 1 "verdict records in the trace"
}

@test "dip.sh --rtt 200us: netem where the kernel has it, else one line and the native RTT" {
	requires root netns struct_ops tcpdump jq
	tk_run "$TK_ROOT/repro/dip.sh" --rtt 200us --receiver prompt --duration 2 --out "$RP_OUT/rtt" --id "${RP_ID}r" --port 43104
	expect_status 0
	if ip netns add "rp-nq-$$" && ip netns exec "rp-nq-$$" tc qdisc add dev lo root netem delay 1ms 2>/dev/null; then
		ip netns del "rp-nq-$$"
		jq -e '.scenario.rtt_effective == "200us"' "$RP_OUT/rtt/verdict.json"
	else
		ip netns del "rp-nq-$$"
		expect_output "dip.sh: sch_netem is missing in this kernel: running at the native RTT instead of 200us"
		jq -e '.scenario.rtt == "200us" and .scenario.rtt_effective == "native"' "$RP_OUT/rtt/verdict.json"
		grep -q 'RTT native (netem missing: 200us not applied)' "$RP_OUT/rtt/verdict.txt"
	fi
}

@test "dip.sh --rate 50 --queue-packets 20: the router's bottleneck queues 20 packets, and the scenario says so" {
	requires root netns struct_ops tcpdump jq tc
	local seen=$BATS_TEST_TMPDIR/qdisc
	"$TK_ROOT/repro/dip.sh" --rate 50 --queue-packets 20 --receiver prompt --duration 3 --no-plot \
		--out "$RP_OUT/queue" --id "${RP_ID}q" --port 43105 > "$BATS_TEST_TMPDIR/dip.out" 2>&1 &
	local pid=$!
	# tc's own reading of the router while the push runs
	tk_wait_for "tc -n rp-rtr-${RP_ID}q qdisc show dev v0 2>/dev/null | grep -q 'parent 1:10' && tc -n rp-rtr-${RP_ID}q qdisc show dev v0 > '$seen'" 60
	wait "$pid" || { cat "$BATS_TEST_TMPDIR/dip.out"; return 1; }
	cat "$seen"
	grep -Eq '^qdisc pfifo 10: .*parent 1:10 limit 20p' "$seen"
	jq -e '.scenario.queue_packets == "20" and .scenario.htb_mbit == "50"' "$RP_OUT/queue/verdict.json"
	grep -q ', a 20-packet queue,' "$RP_OUT/queue/verdict.txt"
}

@test "dip.sh --push iperf3 through a 200 Mbit/s htb with a 64 kB burst: iperf3's count within the htb's rate, the router's class as asked; no rate drop from the burst's maximum, the bulk flow not throttled" {
	requires root netns struct_ops tcpdump jq tc iperf3
	local d=$RP_OUT/iperf3 seen=$BATS_TEST_TMPDIR/class
	"$TK_ROOT/repro/dip.sh" --push iperf3 --rate 200 --burst 65536 --duration 4 --no-plot \
		--out "$d" --id "${RP_ID}3" --port 43106 > "$BATS_TEST_TMPDIR/dip.out" 2>&1 &
	local pid=$!
	# tc's own reading of the router's class while the push runs
	tk_wait_for "tc -n rp-rtr-${RP_ID}3 class show dev v0 2>/dev/null | grep -q 'rate 200Mbit' && tc -n rp-rtr-${RP_ID}3 class show dev v0 > '$seen'" 60
	wait "$pid" || { cat "$BATS_TEST_TMPDIR/dip.out"; return 1; }
	cat "$seen" "$d/verdict.txt"
	# htb keeps the burst in its own units: 65500b or 64Kb for 65536 bytes
	grep -Eq 'rate 200Mbit ceil 200Mbit burst (64Kb|65[0-9]{3}b)' "$seen"
	jq -e '.push.send.tool == "iperf3" and .push.send.flows == 1 and .scenario.htb_burst_bytes == "65536"' "$d/verdict.json"
	# the witness: iperf3's receiver counted at most the htb's rate (2% over:
	# its count and htb's rate tables round). At least 90% of it idle; beside a
	# busy core the sender itself falls short (176 Mbit/s once, never
	# throttled), so the floor is only that it moved
	jq -e '.push.send.goodput_bps <= 204e6 and .push.send.goodput_bps > 0' "$d/verdict.json"
	grep -q '1 iperf3 flow(s), bulk, 4 s, htb 200 Mbit/s (burst 65536 bytes)' "$d/verdict.txt"
	[ -s "$d/iperf3.raw.json" ] || { echo "# no iperf3.raw.json"; return 1; }
	expect_cmp "$(jq -r '.samples' "$d/verdict.json")" -gt 0 "the verdict's samples"
	# the flow ran at its path's rate: nothing throttled it, and no rate_drop
	# falls from a rate over twice the path's
	jq -e '[.throttling_by_cause[]] | add == 0' "$d/verdict.json"
	jq -e -s '[.[] | select(.type == "collapse" and .cause == "rate_drop" and .demand_bps > 400e6)] | length == 0' "$d/trace.jsonl"
	jq -e '.collapses_by_cause.rate_drop == 0' "$d/verdict.json" ||
		grep -Eq 'delivered less \(≈ [0-9.]+ Mbit/s, what the flow had delivered' "$d/verdict.txt"
}

@test "dip.sh --loss 1 through a 200 Mbit/s htb: the router's drops are the flow's retransmissions; no policer, and no throttle at 90% of the rate" {
	requires root netns struct_ops tcpdump jq tc iperf3 ethtool
	local d=$RP_OUT/loss drops dups rtx
	tk_run "$TK_ROOT/repro/dip.sh" --push iperf3 --rate 200 --loss 1 --duration 4 --no-plot \
		--out "$d" --id "${RP_ID}l" --port 43107
	expect_status 0
	cat "$d/verdict.txt"
	jq -e '.scenario.loss_pct == "1"' "$d/verdict.json"
	# the witnesses: each segment TCP sent again was either dropped by tc's
	# class or sent though not lost, and then the receiver got it twice (its
	# D-SACK count: a veth reorders when the sender moves between CPUs, and
	# TCP resends what the reordering looked to have lost). A retransmission
	# dropped too counts once on each side. What is left: drops of iperf3's
	# control connection, of its SYN or FIN, which the data flow's count
	# lacks (1% of a few dozen packets), and a duplicate that arrives while
	# a D-SACK is pending, which extends it uncounted (tcp_dsack_extend).
	# Measured: off by 0 to 2 segments in 10 runs on 2 CPUs, beside two or
	# three busy loops, and with iperf3 moved between CPUs every 3 ms; 5% and
	# 2 segments keep the bound this check had before it counted duplicates
	drops=$(jq .scenario.loss_dropped_packets "$d/verdict.json")
	dups=$(jq .receiver_duplicate_segments "$d/verdict.json")
	rtx=$(jq .push.send.retransmits "$d/verdict.json")
	expect_cmp "$drops" -gt 0 "the packets tc's class dropped"
	[ $(( 100 * (rtx > drops + dups ? rtx - drops - dups : drops + dups - rtx) )) -le $(( 5 * drops + 200 )) ] ||
		{ echo "# $drops dropped + $dups received twice != $rtx retransmitted"; return 1; }
	# BBR does not slow for a 1% random loss (its policer mode needs 20%)
	jq -e '.collapses_by_cause.loss_policer == 0' "$d/verdict.json"
	# a bulk flow that delivered at least 90% of the htb's rate is never
	# called throttled, unless the path did deliver less: a veth's path is
	# also the machine's CPU (see the GRO test below). Idle, it delivers 95%;
	# beside a busy core it may not (TSO off costs CPU: 80% once), and then
	# this says nothing
	jq -e '.push.send.goodput_bps < 180e6' "$d/verdict.json" > /dev/null || throttles_shown_on_wire "$d"
}

# whether each throttling collapse of run $1 is a rate drop the wire shows:
# the flow's ACKed rate in the capture over the 10 rounds before it (BBR's
# maximum filter; 10 ms at least, ten 1 ms bins) nearer the new estimate
# than the rate the flow had delivered (the midpoint: a fall from a
# maximum a burst or a queue's drain set leaves the wire at the old rate).
# Each is printed, with the wire's rate then and over the 100 ms after it;
# the trace and the capture share one host's clock
throttles_shown_on_wire() {
	local d=$1 rec flow line bad=0
	while read -r rec; do
		jq -r '"# \(.cause) at \(.wall_ns / 1e9): \(.bw_prev_bps / 1e6) to \(.bw_bps / 1e6) Mbit/s, "
			+ "demand \(.demand_bps / 1e6) Mbit/s; its sample: \(.delivered) segments, sent over "
			+ "\(.snd_interval_us) us, ACKed over \(.rcv_interval_us) us, rtt \(.rtt_us) us; \(.evidence)"' <<< "$rec"
		flow=$(jq -r '"\(.saddr):\(.sport)"' <<< "$rec")
		line=$(bbrpcap throughput --bin-ms 1 -f json --flow "$flow" "$d/capture.pcap" |
			jq -r -s --argjson c "$rec" --arg src "$flow" '($c.wall_ns / 1e9) as $t
				| ([10 * $c.rtt_us / 1e6, 0.01] | max) as $w
				| [.[] | select(.src == $src)] as $b
				| def mbit: if . == null then null else . / 1e5 | round / 10 end;
				  def mean(f): [$b[] | select(f) | .acked_bps] | if length > 0 then add / length else null end;
				  mean(.epoch_s >= $t - $w and .epoch_s + 0.001 <= $t) as $before
				| mean(.epoch_s >= $t and .epoch_s + 0.001 <= $t + 0.1) as $after
				| (if $c.cause == "rate_drop" and $before != null
				     and $before <= ($c.bw_bps + $c.demand_bps) / 2 then "shown" else "not shown" end) as $v
				| "#   \($v): ACKed \($before | mbit) Mbit/s over the \($w * 1000 | round) ms before, \($after | mbit) Mbit/s over the 100 ms after"')
		echo "$line"
		[[ $line == "#   shown:"* ]] || bad=$((bad + 1))
	done < <(jq -c 'select(.type == "collapse" and .impact == "throttling")' "$d/trace.jsonl")
	[ "$bad" -eq 0 ]
}

@test "dip.sh --gro on, an unshaped bulk flow: GRO on at the receiver, every collapse named, no fall told from a maximum, at most 1% of the run throttled" {
	requires root netns struct_ops tcpdump tshark jq iperf3 ethtool
	local d=$RP_OUT/gro seen=$BATS_TEST_TMPDIR/gro
	"$TK_ROOT/repro/dip.sh" --push iperf3 --gro on --duration 4 --no-plot \
		--out "$d" --id "${RP_ID}g" --port 43108 > "$BATS_TEST_TMPDIR/dip.out" 2>&1 &
	local pid=$!
	# ethtool's own reading of the receiver's veth while the push runs
	tk_wait_for "ip netns exec rp-recv-${RP_ID}g ethtool -k eth0 2>/dev/null > '$seen' && grep -q 'generic-receive-offload: on' '$seen'" 60
	wait "$pid" || { cat "$BATS_TEST_TMPDIR/dip.out"; return 1; }
	cat "$d/verdict.txt"
	jq -e '.scenario.gro == "on" and .push.send.goodput_bps > 0' "$d/verdict.json"
	# a veth's path is the machine's CPU: beside a busy core it does fall (once
	# 5.6 Gbit/s to 130 Mbit/s for 4 ms), but a rate drop is told from what
	# the flow delivered, never from a maximum a burst of compressed ACKs set
	# (the count, not the words: "No fix is proposed: neither ... nor a rate
	# drop caused ..." names rate drops where there are none)
	jq -e '.collapses_by_cause.rate_drop == 0' "$d/verdict.json" ||
		grep -Eq 'delivered less \(≈ [0-9.]+ [MG]bit/s, what the flow had delivered' "$d/verdict.txt"
	# nor is a receiver setting proposed for a sender's own path
	jq -e '.throttling_by_cause.delayed_ack == 0' "$d/verdict.json"
	# other at most 5%, one in a run of fewer than 20
	jq -e '.collapses_by_cause.other <= ([.collapses / 20, 1] | max)' "$d/verdict.json"
	# a receiver descheduled for a millisecond or two on a busy 2-core machine
	# holds a bulk flow back for a few ms (measured: 4 throttles, 21 ms in all,
	# for 20 flows over 5 s). More than 1% of the run must be true on the
	# wire: a rate drop told from what the flow delivered (checked above; a
	# veth's path is the CPU, and beside a busy core it held the flow 278 ms,
	# 2.1 Gbit/s to 143 Mbit/s), or a collapse after which the sender fell
	# silent (a descheduled receiver's lone late segment took BBR's estimate
	# from 47 Gbit/s to 7.7 Mbit/s, and its pacing held 77 kB for 54 ms:
	# the capture's silence began 0.3 ms after the collapse and lasted 54 ms)
	jq -e '.throttled_s <= 0.04 or ([.throttling_by_cause | to_entries[] | select(.key != "rate_drop") | .value] | add == 0)' \
		"$d/verdict.json" > /dev/null || gro_held_on_wire "$d"
}

# the throttling collapses of run $1 other than rate drops, one line each:
# "C WALL_S CAUSE SPORT" (the pusher's new data on the wire is held against
# these)
gro_throttles() {
	jq -r 'select(.type == "collapse" and .impact == "throttling" and .cause != "rate_drop")
			| "C \(.wall_ns / 1e9) \(.cause) \(.sport)"' "$1/trace.jsonl"
}

# the new data the pusher sent in run $1's capture, in time order, one line
# per frame: "N TIME_S SPORT". New data only: a throttle holds new data,
# while the receiver's late ACKs of the data in flight at the collapse, and
# any retransmission, still cross the wire during it (beside a busy core one
# such ACK came 6.9 ms into a 42 ms hold), so a silence of every frame
# (bbrpcap gaps) can end well before the throttle does
gro_new_data() {
	tshark -r "$1/capture.pcap" -Y 'ip.src == 10.77.1.2 && tcp.len > 0' -T fields \
		-e frame.time_epoch -e tcp.srcport -e tcp.seq -e tcp.len 2> /dev/null |
		awk '{ end = ($3 + $4) % 2^32
		       # sequence space wraps at 2^32 (a 4 s bulk flow sends more)
		       if (($2 in top) && ((end - top[$2] + 2^32) % 2^32 == 0 || (end - top[$2] + 2^32) % 2^32 >= 2^31)) next
		       top[$2] = end
		       print "N", $1, $2 }'
}

# the throttling collapses ("C" lines) held against the new data ("N"
# lines), on stdin: for each collapse, its flow's first new data at or after
# it and the silence that followed, "HELD COLLAPSE_S CAUSE FIRST_MS SILENT_MS"
# (FIRST_MS from the collapse; "NONE COLLAPSE_S CAUSE" without new data
# after it; a silence counts for one collapse only). The first new data may wait for the application (beside a busy
# core iperf3 wrote 7 ms after a collapse, then the pacing held the next 47
# ms); "at or after" has 0.5 ms of slack, ten times the 44 us by which a
# trace's sample trails its ACK's frame in 90% of a push (tk_trace_clock)
gro_first_silences() {
	awk '$1 == "N" { n++; t[n] = $2; p[n] = $3; next }
	     { f = 0; g = 0
	       for (i = 1; i <= n && !g; i++) if (p[i] == $4 && t[i] >= $2 - 0.0005) { if (!f) f = i; else g = i }
	       if (!f) printf "NONE %.6f %s\n", $2, $3
	       else if (f in used) printf "HELD %.6f %s %.3f 0 (the silence of an earlier collapse)\n", $2, $3, (t[f] - $2) * 1e3
	       else { used[f] = 1; printf "HELD %.6f %s %.3f %.3f\n", $2, $3, (t[f] - $2) * 1e3, g ? (t[g] - t[f]) * 1e3 : 0 } }'
}

# the run $1's throttled time, less the rate drops' (told from what the flow
# delivered, checked by the caller: the summary's throttled_us_by_cause) and
# less the silences of 10 ms or more that followed the first new data after
# each other throttling collapse (gro_first_silences), is at most 1% of the
# run: the silences are throttles the wire shows
gro_held_on_wire() {
	local d=$1 shown rate
	rate=$(summary_field "$d/trace.jsonl" 'throttled_us_by_cause.rate_drop / 1e6') || return 1
	gro_new_data "$d" > "$BATS_TEST_TMPDIR/new-data"
	gro_throttles "$d" | cat "$BATS_TEST_TMPDIR/new-data" - | gro_first_silences > "$BATS_TEST_TMPDIR/held"
	sed 's/^/# /' "$BATS_TEST_TMPDIR/held" >&3
	shown=$(awk '$1 == "HELD" && $5 >= 10 { s += $5 / 1e3 } END { printf "%.6f\n", s }' "$BATS_TEST_TMPDIR/held")
	jq -e --argjson shown "$shown" --argjson rate "$rate" '.throttled_s - $rate - $shown <= 0.04' "$d/verdict.json" ||
		{ echo "# throttled $(jq .throttled_s "$d/verdict.json") s, by rate drops $rate s, the wire shows $shown s of the rest"
		  sed 's/^/# /' "$BATS_TEST_TMPDIR/held"; return 1; }
}

@test "sweep.sh: without netem the RTT axis collapses to native and the table says so; CSV columns" {
	requires root netns struct_ops tcpdump jq tc
	if ip netns add "rp-nq-$$" && ip netns exec "rp-nq-$$" tc qdisc add dev lo root netem delay 1ms 2>/dev/null; then
		ip netns del "rp-nq-$$"
		skip_reason="netem exists here: the native-only behaviour cannot be shown"
		tk_run "$TK_ROOT/repro/sweep.sh" --rtts "native 1ms" --duration 2 --receiver prompt --out "$RP_OUT/sweep"
		expect_status 0
		expect_cmp "$(tail -n +2 "$RP_OUT/sweep/sweep.csv" | wc -l)" -eq 4 "rows in sweep.csv"
		return 0
	fi
	ip netns del "rp-nq-$$"
	tk_run "$TK_ROOT/repro/sweep.sh" --rtts "native 60us 1ms" --duration 3 --receiver prompt --out "$RP_OUT/sweep"
	expect_status 0
	expect_output "sweep.sh: sch_netem is missing in this kernel: the RTT axis collapses to native"
	grep -q '^note: sch_netem is missing in this kernel: the RTT axis collapses to native' "$RP_OUT/sweep/sweep.txt"
	head -1 "$RP_OUT/sweep/sweep.csv" | grep -qx 'rtt,rtt_effective,quickack,receiver,duration_s,collapses,delayed_ack_per_min,rate_drop_per_min,loss_policer_per_min,other_per_min,lone_segment_per_min,max_expired_per_min,sender_limited_per_min,ack_jitter_per_min,burst_max_per_min,stalls,late_frames,goodput_bps,receiver_delayed_acks,dir'
	expect_cmp "$(tail -n +2 "$RP_OUT/sweep/sweep.csv" | wc -l)" -eq 2 "rows in sweep.csv"
	tail -n +2 "$RP_OUT/sweep/sweep.csv" | cut -d, -f1-3 | sort | tr '\n' ' ' | grep -qx 'native,native,off native,native,on '
}

