#!/usr/bin/env bats
# ackhold, the receiving host's view, on real connections between namespaces,
# against independent witnesses on the same flows:
#   - the receiver's capture (ack_holds.awk): each hold ackhold reports is one
#     the wire shows, as long;
#   - the kernel's own count of the ACKs its delayed-ACK timer sent
#     (TcpExtDelayedACKs in the receiver's namespace);
#   - bbrtrace on the pusher's side, at the same time (repro/dip.sh runs it):
#     each delayed_ack collapse that throttled the stream follows one of
#     ackhold's holds by the ACK's way to the pusher.
# Then quick ACKs (nothing held, the kernel agrees), IPv6 beside IPv4, the
# timer's ACK of a lone FIN (counted as the kernel counts it), bad
# input, and a SIGKILL that leaves nothing attached.

load helpers

ID=ah${BATS_ROOT_PID}
NS=ah-${BATS_ROOT_PID}
PORT=43193
TRICKLE=$BATS_TEST_DIRNAME/../fixtures/quickack/tcp_trickle.py
LATE_CLOSE=$BATS_TEST_DIRNAME/../fixtures/quickack/tcp_late_close.py
# the holds ackhold reports one by one (its --min-hold default)
CUT_MS=10
# AH_EMULATED=1 (the kernel matrix's suite line): under TCG, beside the other
# guest, a segment waited up to 20 ms between the capture's timestamp and the
# kernel's processing of it (bbrpcap's delay and ackhold's quiet time apart
# by 3 to 19 ms; the longest holds by 19 ms), so what is compared there is
# what no timing moves: each of bbrpcap's candidates and bbrtrace's
# collapses by its ACK number, and the timer's ACKs against the kernel's
AH_EMULATED=${AH_EMULATED:-0}
# The receiver's capture and ackhold date a hold at different places: the
# capture as the interface gets the segment and sends the ACK, ackhold from
# the kernel's processing of the segment to the ACK's leaving the stack: the
# longest holds 0.00 to 0.05 ms apart on the host (busy beside two guests), a
# hold at the cut at most 2 ms off in either view, with ample room
NEAR_MS=2
# how far before its packet's tap ackhold may date it, on the run's clock
# offset: the taps and ackhold's times are 0.01 to 0.02 ms apart, either
# way, against the median (20 runs on the host); five times that
STALL_SLACK_MS=0.1

setup_file() {
	requires root netns btf bbr jq tcpdump tshark
	tk_lock_bbr_traced
}

teardown_file() {
	tk_unlock_bbr_traced
}

teardown() {
	[ -z "${AH_PID:-}" ] || kill -9 "$AH_PID" 2> /dev/null || true
	tk_end_test_processes "$NS"
	tk_del_dip_netns "$ID"
	tk_cleanup
}

# ackhold_start OUT ARGS...: ackhold in the background, its records (JSON)
# in OUT, its stderr in OUT.err; returns once it traces
ackhold_start() {
	local out=$1
	shift
	ackhold -f json -o "$out" "$@" 2> "$out.err" &
	AH_PID=$!
	tk_wait_for "grep -q 'tracing the ACKs' '$out.err'" 30 || { cat "$out.err"; return 1; }
}

# ackhold_stop OUT: Ctrl-C, and its exit status 0
ackhold_stop() {
	local rc=0
	kill -INT "$AH_PID"
	wait "$AH_PID" || rc=$?
	AH_PID=
	[ "$rc" -eq 0 ] || { echo "# ackhold exited $rc"; cat "$1.err"; return 1; }
	echo "# ackhold: $(grep ' peer(s); ' "$1.err" | tail -n 1)" >&3
}

# push RECEIVER QUICKACK DIR SECONDS: a dip.sh push of pushsim into RECEIVER,
# with the receiver's view: ackhold's records (every hold) in DIR/ackhold.jsonl,
# the receiver's capture in DIR/capture-recv.pcap
push() {
	tk_run "$TK_ROOT/repro/dip.sh" --receiver "$1" --quickack "$2" --out "$3" --duration "$4" --no-plot \
		--id "$ID" --port "$PORT" --receiver-view
	expect_status 0
	echo "# ackhold: $(tail -n 1 "$3/ackhold.log")" >&3
}

# expect_holds_agree RECORDS CAPTURE_HOLDS [PEER]: ackhold's holds of CUT_MS
# or more (of PEER alone when given) are the capture's, as many within the
# holds near the cut and the ACKs ackhold says it did not see (their holds
# not judged: bpf/ackhold.bpf.c's unseen_ack), the longest as long within
# NEAR_MS
expect_holds_agree() {
	local mine wire near unseen max_mine max_wire
	mine=$(jq -r --arg p "${3:-}" 'select(.type == "hold" and .hold_ms != null and ($p == "" or .peer == $p)) | .hold_ms' "$1" |
		awk -v c=$CUT_MS '$1 >= c' | sort -n)
	wire=$(awk -v c=$CUT_MS '$1 >= c' "$2" | sort -n)
	near=$(awk -v c=$CUT_MS -v b=$NEAR_MS '$1 >= c - b && $1 < c + b' "$2" | grep -c . || true)
	unseen=$(jq 'select(.type == "verdict") | .unseen_acks' "$1")
	echo "# holds of ${CUT_MS} ms or more${3:+ from $3}: ackhold $(grep -c . <<< "$mine"), capture" \
		"$(grep -c . <<< "$wire") ($near near the cut, $unseen ACKs unseen); longest $(tail -n 1 <<< "$mine")" \
		"and $(tail -n 1 <<< "$wire") ms" >&3
	expect_cmp "$(grep -c . <<< "$wire")" -gt 0 "holds in the capture"
	[ "$AH_EMULATED" = 1 ] && return 0
	expect_cmp "$(($(grep -c . <<< "$mine") - $(grep -c . <<< "$wire")))" -le "$near" "ackhold's holds over the capture's"
	expect_cmp "$(($(grep -c . <<< "$wire") - $(grep -c . <<< "$mine")))" -le "$((near + unseen))" \
		"the capture's holds over ackhold's"
	max_mine=$(tail -n 1 <<< "$mine") max_wire=$(tail -n 1 <<< "$wire")
	[ "$unseen" -gt 0 ] && return 0 # the longest may be an unseen ACK's
	awk -v a="$max_mine" -v b="$max_wire" -v n=$NEAR_MS 'BEGIN { d = a - b; exit !(d <= n && -d <= n) }' ||
		{ echo "# the longest hold: ackhold $max_mine ms, the capture $max_wire ms"; return 1; }
}

# HOLD_OF: jq, the hold of ACK number $a among $holds: the one with that
# number; else, when the hold before it (by sequence, modulo 2^32) was
# written unseen, that one: ackhold writes a hold unseen when its programs
# missed the ACK that ended it or a segment with it (on 6.18, about once a
# push), with the held data's end as its number, and a later ACK of that
# stretch (its missed segment's) is one it could not see either
HOLD_OF='def hold_of($a; $holds):
	([$holds[] | select(.ack == $a)][0]) //
	([$holds[] | {h: ., d: (($a - .ack) | if . < 0 then . + 4294967296 else . end)} |
	  select(.d > 0 and .d < 2147483648)] | min_by(.d) | .h | if . != null and .ended_by == "unseen" then . else null end);'

# expect_bbrpcap_agrees RECORDS PCAP PORT...: each delayed-ACK candidate
# bbrpcap finds among the receiver's ACKs (from PORT) in its capture (an ACK
# 10 ms or more after the newest data it covers, a runt or a single segment)
# is, by its ACK number, one of ackhold's holds, whose quiet time (its latest
# segment to the ACK: bbrpcap's delay) is as long within NEAR_MS, or one
# ackhold wrote unseen (AH_EMULATED: any length). The capture dates a packet
# at the device's tap, ackhold after it, where the kernel takes it (the
# segment in TCP, the ACK at the driver): 0.01 ms apart on the host, but a
# stall between the two points, real time, parts them: a segment in the
# socket's backlog while the application holds the socket (1.7 ms once);
# the ACK between the transmit tap and the driver (beside a busy core, 0.6
# to 1.5 ms for 8 of 87 ACKs in one run of 72, 2.0 ms once in 20 others;
# ftrace's net_dev_queue to net_dev_start_xmit, 0.65 ms once in 4,330
# packets). So a longer disagreement passes when each of ackhold's two
# times is at or after its packet's tap (on the run's clock offset, the
# median over its ACKs; within STALL_SLACK_MS) with no other packet of the
# flow between them: ackhold's time before its tap, or a packet between, is
# another packet taken for it
expect_bbrpcap_agrees() {
	local rec=$1 pcap=$2 bad ports
	shift 2
	ports=$(IFS='|'; echo "$*")
	bbrpcap acks "$pcap" -f json 2> /dev/null |
		jq -c --arg p ":($ports)\$" 'select(.type == "ack" and .candidate and (.src | test($p))) |
			{ack, ms: (.delay_us / 1000), frame, data_frame}' > "$BATS_TEST_TMPDIR/candidates"
	tshark -r "$pcap" -T fields -e frame.number -e frame.time_epoch -e tcp.stream 2> /dev/null |
		jq -R -c 'split("\t") | {n: (.[0] | tonumber), t: (.[1] | tonumber), s: (.[2] | tonumber? // -1)}' \
		> "$BATS_TEST_TMPDIR/frames"
	bad=$(jq -n -r --slurpfile h "$rec" --slurpfile c "$BATS_TEST_TMPDIR/candidates" \
		--slurpfile f "$BATS_TEST_TMPDIR/frames" --argjson emulated "$AH_EMULATED" --argjson near "$NEAR_MS" \
		--argjson slack "$STALL_SLACK_MS" "$HOLD_OF"'
		 ($f | map({key: (.n | tostring), value: .}) | from_entries) as $ft
		 | [$h[] | select(.type == "hold")] as $holds
		 | [$c[] | .m = hold_of(.ack; $holds)] as $cs
		 | ([$cs[] | select(.m != null and .m.ended_by != "unseen") | $ft[.frame | tostring].t * 1e3 - .m.t_ns / 1e6]
		    | sort | .[length / 2 | floor]) as $off
		 | def tap($n): $ft[$n | tostring].t * 1e3 - $off;
		   def none_between($s; $from; $to): all($f[]; .s != $s or .t * 1e3 - $off <= $from or .t * 1e3 - $off > $to);
		 $cs[] | .m as $m | select($m == null or ($emulated == 0 and $m.ended_by != "unseen"
			and (($m.quiet_ms - .ms) | fabs) > $near))
		 | . + if $m == null then {} else {late_ack_ms: ($m.t_ns / 1e6 - tap(.frame)),
			late_seg_ms: ($m.t_ns / 1e6 - $m.quiet_ms - tap(.data_frame))} end
		 | select($m == null or .late_ack_ms < -$slack or .late_seg_ms < -$slack
			or (none_between($ft[.frame | tostring].s; tap(.frame); tap(.frame) + .late_ack_ms) | not)
			or (none_between($ft[.frame | tostring].s; tap(.data_frame); tap(.data_frame) + .late_seg_ms) | not))
		 | {ack, ms, frame, data_frame, late_ack_ms, late_seg_ms, hold: $m} | tojson')
	echo "# bbrpcap's delayed-ACK candidates: $(grep -c . "$BATS_TEST_TMPDIR/candidates"), not one of ackhold's" \
		"holds as long: $(grep -c . <<< "$bad" || true)" >&3
	expect_cmp "$(grep -c . "$BATS_TEST_TMPDIR/candidates")" -gt 0 "bbrpcap's candidates"
	[ -z "$bad" ] || { holds_disagree "$pcap" <<< "$bad"; return 1; }
}

# each ACK (JSON lines on stdin) whose hold ackhold and bbrpcap tell apart:
# both lengths, ackhold's record, and the capture's frames from 3 before
# the newest data it covers to the one after it (tshark), what would tell
# a segment ackhold dated late or early from an ACK it took for another
holds_disagree() {
	local pcap=$1 line from to
	while read -r line; do
		jq -r '"# ack \(.ack): bbrpcap \(.ms) ms, ackhold \(.hold.quiet_ms // "none") ms (its ACK \(.late_ack_ms) ms"
			+ " after the tap, its segment \(.late_seg_ms) ms); its record: \(.hold | tojson)"' <<< "$line"
		from=$(jq '(.data_frame // .frame) - 3' <<< "$line") to=$(jq '.frame + 1' <<< "$line")
		tshark -r "$pcap" -Y "frame.number >= $from and frame.number <= $to" -T fields -e frame.number \
			-e frame.time_epoch -e ip.src -e ipv6.src -e tcp.srcport -e tcp.seq_raw -e tcp.len -e tcp.ack_raw \
			-e tcp.flags.str 2> /dev/null | sed 's/^/#   /'
	done
}

@test "a push with delayed ACKs: ackhold's holds are the receiver's capture's (tshark, bbrpcap), its timer's the kernel's, each throttling delayed_ack collapse one of its delayed ACKs; the verdict names the pusher" {
	local d=$BATS_TEST_TMPDIR/off peer timer kernel collapses rec bad
	push app-ack off "$d" 15
	rec=$d/ackhold.jsonl
	peer=$(jq -r 'select(.type == "peer") | .peer' "$rec")
	expect_equal "$(grep -c . <<< "$peer")" 1 "peers"
	tk_ack_holds "$d/capture-recv.pcap" $PORT > "$BATS_TEST_TMPDIR/wire"
	expect_holds_agree "$rec" "$BATS_TEST_TMPDIR/wire"
	expect_bbrpcap_agrees "$rec" "$d/capture-recv.pcap" $PORT
	expect_cmp "$(jq .receiver_delayed_acks "$d/verdict.json")" -gt 0 "TcpExtDelayedACKs"
	tk_expect_dip_timer_acks "$d"
	# bbrtrace's collapse carries the pusher's snd_una once it had the ACK:
	# the number of the ACK ackhold saw leave the receiver (or found gone
	# unseen)
	jq -c 'select(.type == "collapse" and .cause == "delayed_ack" and .impact == "throttling") |
		{ack: .snd_una, rcv_ms: (.rcv_interval_us / 1000)}' "$d/trace.jsonl" > "$BATS_TEST_TMPDIR/collapses"
	collapses=$(jq -n -r --slurpfile h "$rec" --slurpfile c "$BATS_TEST_TMPDIR/collapses" \
		"$HOLD_OF"'[$h[] | select(.type == "hold")] as $holds | $c[] | .ack as $a |
		 (hold_of($a; $holds) // {ended_by: "none", hold_ms: 0}) as $m |
		 "\(.rcv_ms) \($m.ended_by) \($m.hold_ms)"')
	echo "# bbrtrace's throttling delayed_ack collapses (its rcv_interval ms, what ended ackhold's hold of" \
		"that ACK, the hold ms): $(paste -sd, <<< "$collapses")" >&3
	expect_cmp "$(grep -c . <<< "$collapses")" -gt 0 "throttling delayed_ack collapses"
	# a hold ackhold wrote unseen is one it reports, without its length. In
	# an emulated guest starved by a busy host, the receiver can send an ACK
	# 10 ms late with no delayed ACK scheduled ("late": not the ACK policy's,
	# ackhold says, and it is right), and the pusher, which sees only a late
	# ACK, names it delayed_ack: one such collapse in ci78 (6.12 beside the
	# 6.1 guest and a busy core, where ackhold counted none of 668 ACKs the
	# timer's, every firing deferred to the application's release)
	local allowed='$2 != "timer" && $2 != "read" && $2 != "answer" && $2 != "unseen"'
	[ "$AH_EMULATED" = 1 ] && allowed="$allowed"' && $2 != "late"'
	bad=$(awk "$allowed" <<< "$collapses")
	[ -z "$bad" ] || echo "# collapses whose ACK this host did not delay (rcv ms, end, hold ms): $(paste -sd, <<< "$bad")"
	expect_equal "$(grep -c . <<< "$bad" || true)" 0 "collapses whose ACK this host did not delay"
	tk_run jq -r 'select(.type == "verdict") | .text' "$rec"
	expect_output "This host held back 1 of its 1 peer(s). $peer (to port $PORT): this host delayed"
	expect_output "Fix: on the receiver 10.77.2.2, \`quickack on --to $peer --host\`"
	# what it could not see (an ACK unseen: 1 in 1,000 on 6.18) comes first
	grep -q "^receiver's view (ackhold): .*This host held back 1 of its 1 peer(s)" "$d/verdict.txt" ||
		{ cat "$d/verdict.txt"; return 1; }
}

@test "quick ACKs on the receiver's route: nothing from the timer, as the kernel counts; the verdict says none held back" {
	local d=$BATS_TEST_TMPDIR/on
	push app-ack on "$d" 5
	expect_equal "$(jq .receiver_delayed_acks "$d/verdict.json")" 0 "TcpExtDelayedACKs"
	expect_equal "$(jq 'select(.type == "peer") | .timer_acks' "$d/ackhold.jsonl")" 0 "ACKs the timer sent"
	expect_cmp "$(jq 'select(.type == "peer") | .acks' "$d/ackhold.jsonl")" -gt 100 "ACKs of new data"
	tk_run jq -r 'select(.type == "verdict") | .text' "$d/ackhold.jsonl"
	expect_output "This host held back none of its 1 peer(s)"
}

# scrape ADDR PAGE: /metrics into PAGE once every flow ackhold traced has
# ended (ackhold_flows_ended_total N: their last records are counted; the
# ring buffer keeps a flow's order), 10 s at most
scrape() {
	local i
	for i in $(seq 50); do
		curl -sSf --max-time 2 "http://$1/metrics" > "$2" 2> "$2.err" &&
			grep -qx "ackhold_flows_ended_total $3" "$2" && return 0
		sleep 0.2
	done
	echo "# /metrics never showed $3 flows ended; the last page:"
	sed 's/^/#   /' "$2" "$2.err"
	return 1
}

# metric PAGE SERIES: the value of one series (name and labels as written)
metric() {
	awk -v s="$2" '$1 == s { print $2 }' "$1"
}

# expect_metrics_agree PAGE RECORDS: /metrics, scraped once the flows had
# ended and before ackhold's exit, says what its records say: the holds by
# what ended them, the held time since the start and, with --metrics-peers
# 1, the worst peer's held time and "other"'s (the rest); within 1 us, the
# records' held_ms having 3 decimals
expect_metrics_agree() {
	local page=$1 rec=$2 e n worst other
	tk_run promtool check metrics < "$page"
	expect_status 0
	for e in timer data read answer repair late unseen; do
		n=$(jq -s --arg e "$e" '[.[] | select(.type == "hold" and .ended_by == $e)] | length' "$rec")
		expect_equal "$(metric "$page" "ackhold_holds_total{ended_by=\"$e\"}")" "$n" "holds ended by $e, /metrics against the records"
	done
	jq -s '[.[] | select(.type == "peer")] | sort_by(-.held_ms)' "$rec" > "$BATS_TEST_TMPDIR/peers.json"
	worst=$(jq -r '.[0].peer' "$BATS_TEST_TMPDIR/peers.json")
	echo "# /metrics: $(grep -E '^ackhold_(peer_held|holds_total|held)' "$page" | paste -sd ' ')" >&3
	expect_equal "$(grep -c '^ackhold_peer_held_seconds{' "$page")" 2 "peer series: the worst and other"
	awk -v a="$(metric "$page" "ackhold_peer_held_seconds{peer=\"$worst\"}")" \
		-v b="$(jq '.[0].held_ms / 1000' "$BATS_TEST_TMPDIR/peers.json")" \
		-v c="$(metric "$page" 'ackhold_peer_held_seconds{peer="other"}')" \
		-v d="$(jq '[.[1:][].held_ms] | add / 1000' "$BATS_TEST_TMPDIR/peers.json")" \
		-v t="$(metric "$page" ackhold_held_seconds_total)" \
		'function off(x, y) { return x - y > 1e-6 || y - x > 1e-6 }
		 BEGIN { exit off(a, b) || off(c, d) || off(t, b + d) }' ||
		{ echo "# held seconds: $worst and other, /metrics against the records"; return 1; }
}

@test "IPv6 beside IPv4: each sender a peer of its own, its holds the receiver's capture's (tshark, bbrpcap), the timer's ACKs the kernel's; /metrics and --stats as its records say" {
	local rec=$BATS_TEST_TMPDIR/v6.jsonl pcap=$BATS_TEST_TMPDIR/v6.pcap p4=43194 p6=43195 td pids=() p before locked addr
	local page=$BATS_TEST_TMPDIR/metrics
	[ -x /usr/bin/python3 ] || { echo "/usr/bin/python3 is missing (Debian's python3)" >&2; return 1; }
	requires curl promtool
	addr=127.0.0.1:$(tk_free_tcp_port 43900 44000)
	tk_netns_pair "$NS"
	# each small write its own segment, 50 ms apart: each held alone until
	# the delayed-ACK timer (40 ms and more) sends its ACK; the receiver
	# reads nothing until the end (tcp_trickle.py), so no read ends a hold
	ip netns exec "$NS-a" sysctl -qw net.ipv4.tcp_autocorking=0
	tk_wait_local6 "$NS-b" fe80:: 1 veth1
	tk_tcpdump_start "$NS-b" "$pcap" -s 128 -B 16384 -i veth1 "tcp port $p4 or tcp port $p6"
	td=$TK_TCPDUMP_PID
	ackhold_start "$rec" --port $p4 --port $p6 --min-hold 0 --prometheus "$addr" --metrics-peers 1 --stats
	before=$(tk_netstat "$NS-b" TcpExtDelayedACKs) locked=$(tk_netstat "$NS-b" TcpExtDelayedACKLocked)
	ip netns exec "$NS-b" timeout 60 /usr/bin/python3 "$TRICKLE" recv 10.201.0.2 $p4 6000 50 > /dev/null &
	pids+=($!)
	ip netns exec "$NS-b" timeout 60 /usr/bin/python3 "$TRICKLE" recv fd00:201::2 $p6 6000 50 > /dev/null &
	pids+=($!)
	tk_wait_listen $p4 10 "$NS-b" && tk_wait_listen $p6 10 "$NS-b"
	for p in 10.201.0.2:$p4 fd00:201::2:$p6; do
		ip netns exec "$NS-a" timeout 60 /usr/bin/python3 "$TRICKLE" send "${p%:*}" "${p##*:}" 60 100 50 50 &
		pids+=($!)
	done
	wait "${pids[@]}"
	scrape "$addr" "$page" 2
	ackhold_stop "$rec"
	tk_tcpdump_stop "$td" "$pcap"
	expect_equal "$(jq -r 'select(.type == "peer") | "\(.peer) \(.port)"' "$rec" | sort | paste -sd ' ')" \
		"10.201.0.1 $p4 fd00:201::1 $p6" "peers and their ports"
	expect_metrics_agree "$page" "$rec"
	# --stats: the segment program ran for each data segment, at least
	expect_cmp "$(jq 'select(.type == "prog_stats" and .program == "ah_tcp_probe") | .run_cnt' "$rec")" -ge \
		"$(jq -s '[.[] | select(.type == "peer") | .segs] | add' "$rec")" "ah_tcp_probe's runs against the data segments"
	tk_ack_holds "$pcap" $p4 > "$BATS_TEST_TMPDIR/wire4"
	tk_ack_holds "$pcap" $p6 > "$BATS_TEST_TMPDIR/wire6"
	expect_holds_agree "$rec" "$BATS_TEST_TMPDIR/wire4" 10.201.0.1
	expect_holds_agree "$rec" "$BATS_TEST_TMPDIR/wire6" fd00:201::1
	expect_bbrpcap_agrees "$rec" "$pcap" $p4 $p6
	tk_expect_timer_acks "$rec" "$(jq -s '[.[] | select(.type == "peer") | .timer_acks] | add' "$rec")" \
		"$(($(tk_netstat "$NS-b" TcpExtDelayedACKs) - before))" \
		"$(($(tk_netstat "$NS-b" TcpExtDelayedACKLocked) - locked))"
	# the page's count of the timer's ACKs, live, as the kernel's
	tk_expect_timer_acks "$rec" "$(metric "$page" ackhold_timer_acks_total)" \
		"$(($(tk_netstat "$NS-b" TcpExtDelayedACKs) - before))" \
		"$(($(tk_netstat "$NS-b" TcpExtDelayedACKLocked) - locked))"
}

@test "a FIN that came alone, its application closing late: the timer's ACK of it is one of ackhold's timer ACKs, as the kernel counts it, and ends no hold" {
	local rec=$BATS_TEST_TMPDIR/fin.jsonl go=$BATS_TEST_TMPDIR/go p=43196 pids=() before locked delayed peer
	[ -x /usr/bin/python3 ] || { echo "/usr/bin/python3 is missing (Debian's python3)" >&2; return 1; }
	tk_netns_pair "$NS"
	ackhold_start "$rec" --port $p
	before=$(tk_netstat "$NS-b" TcpExtDelayedACKs) locked=$(tk_netstat "$NS-b" TcpExtDelayedACKLocked)
	ip netns exec "$NS-b" timeout 30 /usr/bin/python3 "$LATE_CLOSE" recv 10.201.0.2 $p "$go" 20 &
	pids+=($!)
	tk_wait_listen $p 10 "$NS-b"
	ip netns exec "$NS-a" timeout 30 /usr/bin/python3 "$LATE_CLOSE" send 10.201.0.2 $p 100 20 &
	pids+=($!)
	# the receiver reads and closes only once the kernel has counted a
	# delayed ACK: its data's ACK left at once (quick ACKs open a
	# connection), so that is the FIN's, and no read held the socket
	tk_wait_for "[ \$((\$(tk_netstat '$NS-b' TcpExtDelayedACKs) - before)) -ge 1 ]" 10
	touch "$go"
	wait "${pids[@]}"
	ackhold_stop "$rec"
	delayed=$(($(tk_netstat "$NS-b" TcpExtDelayedACKs) - before))
	expect_equal "$(($(tk_netstat "$NS-b" TcpExtDelayedACKLocked) - locked))" 0 "TcpExtDelayedACKLocked"
	peer=$(jq -c 'select(.type == "peer") | {acks, timer_acks, timer_holds}' "$rec")
	echo "# TcpExtDelayedACKs $delayed; ackhold's peer: $peer" >&3
	expect_equal "$(jq .timer_acks <<< "$peer")" "$delayed" "ACKs the timer sent, ackhold against TcpExtDelayedACKs"
	# the FIN's ACK covers no data: it ends no hold
	expect_equal "$(jq '.timer_acks - .timer_holds' <<< "$peer")" 1 "timer ACKs that ended no hold"
}

# bats test_tags=userspace
@test "bad input: one line naming the option, exit 2; no privilege: exit 3; no BTF: exit 4" {
	local p args=()
	tk_run ackhold --port 0
	expect_status 2
	expect_one_line_stderr
	expect_stderr "--port: port 0 is no port a stream is received on"
	tk_run ackhold --port 70000
	expect_status 2
	expect_one_line_stderr
	for p in 1 2 3 4 5 6 7 8 9; do args+=(--port "4300$p"); done
	tk_run ackhold "${args[@]}"
	expect_status 2
	expect_equal "$stderr" "ackhold: --port: at most 8 ports"
	tk_run ackhold --min-hold -1
	expect_status 2
	expect_one_line_stderr
	tk_run ackhold --prometheus 1.2.3.4
	expect_status 2
	expect_equal "$stderr" "ackhold: --prometheus: '1.2.3.4' is not ADDR:PORT (write IPv6 as [ADDR]:PORT)"
	tk_run ackhold extra
	expect_status 2
	expect_equal "$stderr" "ackhold: unexpected argument 'extra' (see --help)"
	tk_run setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$BIN/ackhold" -d 1
	expect_status 3
	expect_one_line_stderr
	TK_VMLINUX_BTF=/nonexistent tk_run ackhold -d 1
	expect_status 4
	expect_one_line_stderr
	expect_stderr "/nonexistent"
}

@test "SIGKILL while tracing: none of its programs stays attached; a second on the same /metrics address: exit 1, nothing left" {
	local rec=$BATS_TEST_TMPDIR/kill.jsonl addr progs
	requires bpftool
	addr=127.0.0.1:$(tk_free_tcp_port 43900 44000)
	# ackhold attaches each program of its object, one per section
	progs=$(grep -c '^SEC(' "$TK_ROOT/bpf/ackhold.bpf.c")
	ackhold_start "$rec" --prometheus "$addr"
	expect_cmp "$(bpftool prog show | grep -c ' name ah_')" -eq "$progs" "ackhold's programs while it runs"
	tk_run ackhold --prometheus "$addr" -d 1 -o /dev/null
	expect_status 1
	expect_equal "$stderr" "ackhold: --prometheus: cannot listen on $addr: Address already in use"
	# a closed program leaves bpftool's list once the kernel frees it, after
	# an RCU grace period: waited for, as after the SIGKILL below
	tk_wait_for "[ \"\$(bpftool prog show | grep -c ' name ah_')\" -eq $progs ]" 10
	kill -9 "$AH_PID"
	wait "$AH_PID" || true
	AH_PID=
	tk_wait_for "[ \"\$(bpftool prog show | grep -c ' name ah_')\" -eq 0 ]" 10
}
