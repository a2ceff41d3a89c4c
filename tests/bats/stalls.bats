#!/usr/bin/env bats
# Stalls that are not collapses (issue 12): pushsim pushes a live stream
# between namespaces (repro/dip.sh), bbrtrace --detect traces its writes and
# ACKs, and the sender's stalls must be found, explained and fixed. The
# independent check is pushsim's own count: a frame interval at whose end
# bytes written before it were still unsent, by the kernel's tcp_info
# (tcpi_notsent_bytes), read by the application, not by BPF.
#
# - 30 fps (33 ms between frames, under the 40 ms delayed-ACK timer), Nagle
#   on, quickack off: each frame's sub-MSS tail waits for the ACK of the
#   data in flight, which the receiver delays, until the next frame's write
#   takes it along: Nagle stalls, as many as pushsim counts.
# - The same with quickack on: the receiver ACKs at once, no stall.
# - 20 fps (50 ms, over the timer): the receiver's delayed-ACK timer ends
#   each hold, before the next frame: Nagle stalls ended by the late ACK,
#   never more than the receiver's timer sent (TcpExtDelayedACKs), and
#   bbrpcap join finds in the capture the late ACK each waited for, as late
#   after its data as the stall was long.

load helpers

ID=st${BATS_ROOT_PID}

setup_file() {
	requires root netns btf bbr struct_ops jq tcpdump
	tk_lock_bbr_traced
}

teardown_file() {
	tk_unlock_bbr_traced
}

teardown() {
	tk_del_dip_netns "$ID"
	tk_cleanup
}

# push FPS QUICKACK DIR: a 6 s pushsim push; DIR/verdict.json and DIR/trace.jsonl
push() {
	tk_run "$TK_ROOT/repro/dip.sh" --fps "$1" --quickack "$2" --duration 6 --backend struct_ops \
		--no-plot --out "$3" --id "$ID" --port 43192
	expect_status 0
	grep -q 'stalls: the write tap runs on' "$3/bbrtrace.log" || { cat "$3/bbrtrace.log"; return 1; }
	echo "# $1 fps, quickack $2: pushsim stalls $(jq .push.send.stalls "$3/verdict.json")" \
		"bbrtrace $(jq -c '{stalls_by_cause, nagle_stalls_ended_by, stalled_s}' "$3/verdict.json")" >&3
}

# the push's stalled frame intervals, by pushsim (tcp_info)
pushsim_stalls() {
	jq .push.send.stalls "$1/verdict.json"
}

@test "30 fps, quickack off: Nagle stalls, as many as pushsim's tcp_info sees, explained and fixed" {
	local d=$BATS_TEST_TMPDIR/f30off ours theirs
	push 30 off "$d"
	ours=$(jq .stalls_by_cause.nagle "$d/verdict.json")
	theirs=$(pushsim_stalls "$d")
	echo "# nagle stalls $ours, pushsim's stalled intervals $theirs" >&3
	[ "$theirs" -ge 5 ]
	# one stall per stalled interval, within a fifth (a stall that spans two
	# ticks is one stall and two intervals)
	[ "$ours" -ge $((theirs * 4 / 5)) ] && [ "$ours" -le $((theirs * 6 / 5 + 1)) ]
	# Nagle held most; the rest waited on BBR's pacing after a collapse
	# (pacing_limited); each Nagle record has its evidence and fix
	jq -e '.stalls_by_cause.nagle >= ([.stalls_by_cause[]] | add) * 0.8 and
		([.stalls_by_cause[]] | add) == .stalls_by_cause.nagle + .stalls_by_cause.pacing_limited' "$d/verdict.json"
	jq -e -s '[.[] | select(.type=="stall" and .cause=="nagle")] | length > 0 and all(
		.held_bytes > 0 and .held_bytes < .mss and .in_flight_bytes > 0 and
		.nonagle == 0 and .duration_us >= 10000 and (.evidence | test("under one MSS")) and
		(.fix | test("TCP_NODELAY")))' "$d/trace.jsonl"
	# the frames are 33 ms apart: the next write ends each hold
	jq -e '.nagle_stalls_ended_by.write >= .stalls_by_cause.nagle * 0.8' "$d/verdict.json"
	jq -e '.text | test("The sender stalled [0-9]+ times") and test("Fix: TCP_NODELAY on the sender 10.77.1.2, or on the receiver 10.77.2.2 `quickack on --to 10.77.1.2`")' \
		"$d/verdict.json"
	jq -e '.stall_fix | test("TCP_NODELAY")' "$d/verdict.json"
	# the records' time is the stall's start, inside the push
	jq -e -s '([.[] | select(.type=="stall") | .t_ns] | min) >= ([.[] | select(.type=="sample") | .t_ns] | min)' "$d/trace.jsonl"
}

@test "30 fps, quickack on: no stall, by bbrtrace or by pushsim, and no stall fix" {
	local d=$BATS_TEST_TMPDIR/f30on
	push 30 on "$d"
	[ "$(pushsim_stalls "$d")" -eq 0 ]
	jq -e '.stalls_by_cause.nagle == 0 and .stall_fix == null' "$d/verdict.json"
	! jq -e '.text | test("stalled")' "$d/verdict.json" > /dev/null
}

@test "20 fps, quickack off: the receiver's delayed-ACK timer ends each Nagle hold, about 40 ms on" {
	local d=$BATS_TEST_TMPDIR/f20off by_ack timer
	push 20 off "$d"
	by_ack=$(jq .nagle_stalls_ended_by.ack "$d/verdict.json")
	timer=$(jq .receiver_delayed_acks "$d/verdict.json")
	echo "# nagle stalls ended by the late ACK: $by_ack; the receiver's timer sent $timer ACKs" >&3
	[ "$by_ack" -ge 1 ]
	[ "$by_ack" -le "$timer" ]
	# each of those holds lasted the timer: 40 ms at least, well under 200
	jq -e -s '[.[] | select(.type=="stall" and .cause=="nagle" and .ended_by=="ack") | .duration_us] |
		all(. >= 35000 and . <= 200000)' "$d/trace.jsonl"
	# and the capture agrees: bbrpcap join finds the ACK each waited for, and
	# that ACK came as long after the data it covers as the stall lasted
	bbrpcap join "$d/trace.jsonl" "$d/capture.pcap" -o "$d/joined.jsonl" 2> "$d/join.err" ||
		{ cat "$d/join.err"; return 1; }
	grep -q "matched [0-9]* of [0-9]* stalls" "$d/join.err"
	jq -c -s '[.[] | select(.type=="stall" and .cause=="nagle" and .ended_by=="ack") |
		{duration_us, frame, ack_delay_us}] | .[0:3]' "$d/joined.jsonl" | sed 's/^/# joined: /' >&3
	jq -e -s '[.[] | select(.type=="stall" and .cause=="nagle" and .ended_by=="ack")] | length >= 1 and
		all(.frame != null and ((.ack_delay_us - .duration_us) | fabs) < 2000)' "$d/joined.jsonl"
}
