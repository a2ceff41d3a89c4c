#!/usr/bin/env bats
# Stalls that are not collapses: pushsim pushes a live stream
# between namespaces (repro/dip.sh), bbrtrace --detect traces its writes and
# ACKs, and the sender's stalls must be found, explained and fixed. The
# independent check is pushsim's own count: a frame interval at whose end
# bytes written before it were still unsent, by the kernel's tcp_info
# (tcpi_notsent_bytes), read by the application, not by BPF.
#
# - 30 fps (33 ms between frames, under the 40 ms delayed-ACK timer), Nagle
#   on, quickack off: each frame's sub-MSS tail waits for the ACK of the
#   data in flight, which the receiver delays, until the next frame's write
#   takes it along: Nagle stalls, as many as pushsim counts, also when the
#   sender falls behind its clock twice and catches up.
# - The same with quickack on: the receiver ACKs at once, no stall.
# - 20 fps (50 ms, over the timer), into a player that reads each frame at
#   its playout time: the receiver's delayed-ACK timer ends each hold,
#   before the next frame: Nagle stalls ended by the late ACK, never more
#   than the receiver's timer sent (TcpExtDelayedACKs), and bbrpcap join
#   finds in the capture the late ACK each waited for, as late after its
#   data as the stall was long.
# - A receiver that reads slowly from a small buffer: its window fills and
#   the sender stalls, rwnd_limited, for about as long as the kernel's own
#   rwnd-limited chrono (tcp_info, as ss -ti prints it) says.

load helpers

ID=st${BATS_ROOT_PID}
NS=stw-${BATS_ROOT_PID}
# dip.sh's default pusher and receiver (its --id names the namespaces, not
# the addresses) and the push's port
SENDER=10.77.1.2 RECEIVER=10.77.2.2 PORT=43192

setup_file() {
	requires root netns btf bbr struct_ops jq tcpdump
	tk_lock_bbr_traced
}

teardown_file() {
	tk_unlock_bbr_traced
}

teardown() {
	tk_end_test_processes "$NS"
	tk_del_dip_netns "$ID"
	tk_cleanup
}

# push FPS QUICKACK DIR [SECONDS [RECEIVER]]: a pushsim push of 6 s (or
# SECONDS) into dip.sh's default receiver (or RECEIVER); DIR/verdict.json and
# DIR/trace.jsonl
push() {
	tk_run "$TK_ROOT/repro/dip.sh" --fps "$1" --quickack "$2" --duration "${4:-6}" --backend struct_ops \
		--no-plot --out "$3" --id "$ID" --port "$PORT" ${5:+--receiver "$5"}
	expect_status 0
	grep -q 'stalls: the write tap runs on' "$3/bbrtrace.log" || { cat "$3/bbrtrace.log"; return 1; }
	echo "# $1 fps, quickack $2: pushsim stalls $(jq .push.send.stalls "$3/verdict.json")," \
		"late frames $(jq .push.send.late_frames "$3/verdict.json");" \
		"bbrtrace $(jq -c '{stalls_by_cause, nagle_stalls_ended_by, stalled_s}' "$3/verdict.json")" >&3
}

# stop_sender_twice: 2 s into the push, stop its sender for 200 ms, twice,
# 1 s apart: a sender descheduled under load, then catching up, writes its
# late frames back to back, after their intervals have ended. The sender
# starts once dip.sh has bbrtrace running, which may wait for bbr_traced
# (DIP_BBRTRACE_WAIT, 300 s): waited for as long as dip.sh runs, and said
# when it never came (10 s bounded it, and a push that started later went
# unstopped, its late frames 0)
stop_sender_twice() {
	local pid= i
	for ((i = 0; i < 3100; i++)); do
		pid=$(pgrep -f "pushsim send --connect $RECEIVER:$PORT") && break
		[ $i -lt 50 ] || pgrep -f "repro/dip.sh .*--id $ID " > /dev/null || break
		sleep 0.1
	done
	[ -n "$pid" ] || { echo "# stop_sender_twice: no pushsim sender came: nothing stopped" >&2; return 0; }
	for i in 1 2; do
		sleep $((3 - i))
		kill -STOP "$pid" && sleep 0.2
		kill -CONT "$pid"
	done
}

# the push's stalled frame intervals, by pushsim (tcp_info)
pushsim_stalls() {
	jq .push.send.stalls "$1/verdict.json"
}

# expect_timer_ended DIR: the ACKs that ended the push's Nagle holds are the
# receiver's delayed-ACK timer's: in the capture each came the timer's 40 ms
# (TCP_DELACK_MIN) after the oldest segment it covers, the one that armed
# the timer (ack_holds.awk), in the median, within a quarter: idle, 40.1 to
# 44.1 ms (median 43.9; the timer fires on a jiffy, 4 ms at HZ=250), and its
# softirq runs late beside a busy core. Measured from that segment, not
# from the hold's start: the hold begins when the frame's tail is written,
# which is most of a frame interval after the segment when BBR, throttled,
# paces the frame out (a push of ci110 with 34 pacing_limited stalls: its 3
# timer-ended holds lasted 10.2 ms each)
expect_timer_ended() {
	local d=$1 ended=$BATS_TEST_TMPDIR/ended holds=$BATS_TEST_TMPDIR/armed
	jq -r 'select(.type=="stall" and .cause=="nagle" and .ended_by=="ack") | .frame' \
		"$d/joined.jsonl" | sort -u > "$ended"
	tk_ack_holds_by_frame "$d/capture.pcap" "$PORT" |
		awk 'FILENAME == ARGV[1] { want[$1] = 1; next } ($1 in want) { print $2 }' "$ended" - |
		sort -n > "$holds"
	echo "# the timer's ACKs, from the segment that armed it: $(awk '{ v[NR] = $1 }
		END { printf "%d, %.1f to %.1f ms, median %.1f", NR, v[1], v[NR], v[int(NR / 2) + 1] }' "$holds")" >&3
	expect_cmp "$(wc -l < "$holds")" -eq "$(wc -l < "$ended")" "the holds' ACKs found in the capture"
	awk '{ v[NR] = $1 } END { m = v[int(NR / 2) + 1]; exit !(m >= 30 && m <= 50) }' "$holds" ||
		{ tr '\n' ' ' < "$holds"; return 1; }
}

@test "30 fps, quickack off, the sender late twice: Nagle stalls, as many as pushsim's tcp_info sees, explained and fixed" {
	local d ours theirs k late excused write
	# Whether a tail waits on a delayed ACK depends on the ACKs' timing
	# (Nagle holds it only while a small segment is unACKed): idle, 3 of 17
	# pushes stalled fewer than 5 times, one of them never, the others 6 to
	# 53. The premise, not the tool: a push without it is done again, 3 at
	# most
	for k in 1 2 3; do
		d=$BATS_TEST_TMPDIR/f30off$k
		stop_sender_twice 3>&- &
		push 30 off "$d"
		wait
		theirs=$(pushsim_stalls "$d")
		[ "$theirs" -lt 5 ] || break
	done
	ours=$(jq .stalls_by_cause.nagle "$d/verdict.json")
	echo "# push $k: nagle stalls $ours, pushsim's stalled intervals $theirs" >&3
	expect_cmp "$theirs" -ge 5 "pushsim's stalled frame intervals (the premise)"
	# the sender was behind its clock: 6 frames late per stop of 200 ms at 30 fps
	late=$(jq .push.send.late_frames "$d/verdict.json")
	expect_cmp "$late" -ge 2 "frames the stopped sender wrote late"
	# one stall per stalled interval, within a fifth (a stall that spans two
	# ticks is one stall and two intervals)
	expect_cmp "$ours" -ge $((theirs * 4 / 5)) "stalls (the wire's stalled intervals: $theirs)"
	expect_cmp "$ours" -le $((theirs * 6 / 5 + 1)) "stalls (the wire's stalled intervals: $theirs)"
	# Nagle held most (the rest, when any, waited on BBR's pacing after a
	# collapse); each Nagle record has its evidence and fix
	jq -e '.stalls_by_cause.nagle >= ([.stalls_by_cause[]] | add) * 0.7' "$d/verdict.json" ||
		{ jq -c .stalls_by_cause "$d/verdict.json"; return 1; }
	jq -e -s '[.[] | select(.type=="stall" and .cause=="nagle")] | length > 0 and all(
		.held_bytes > 0 and .held_bytes < .mss and .in_flight_bytes > 0 and
		.nonagle == 0 and .duration_us >= 10000 and (.evidence | test("under one MSS")) and
		(.fix | test("TCP_NODELAY")))' "$d/trace.jsonl"
	# the frames are 33 ms apart: the next write ends each hold. A frame
	# written late cannot end its hold before the delayed ACK does: each
	# frame late beyond the two stops' 12 (6 a stop of 200 ms at 30 fps;
	# under three cores of demand on two a push had 37 late, and 4 of its
	# 16 holds ended by the ACK) excuses one hold
	excused=$((late > 12 ? late - 12 : 0))
	write=$(jq .nagle_stalls_ended_by.write "$d/verdict.json")
	expect_cmp $((write + excused)) -ge $(((ours * 4 + 4) / 5)) \
		"Nagle holds ended by the next write ($write) or excused by a frame late beyond the stops' ($excused), against 80% of the $ours"
	# the fix: TCP_NODELAY on the sender; the receiver's port scope too only
	# when its late ACK ended at least as many holds as the next write did
	jq -e --arg snd "$SENDER" --arg rcv "$RECEIVER" --argjson port "$PORT" '.text | test("The sender stalled [0-9]+ times") and
		test("Fix: TCP_NODELAY on the sender \($snd), with `quickack nodelay --dport \($port)` there or the pusher.s own option \\(ffmpeg: -tcp_nodelay 1\\)")' \
		"$d/verdict.json"
	if jq -e '.nagle_stalls_ended_by | .ack > 0 and .ack >= .write' "$d/verdict.json" > /dev/null; then
		jq -e --arg rcv "$RECEIVER" --argjson port "$PORT" '.stall_fix | test("; and on the receiver \($rcv), `quickack on --port \($port)`, whose ACKs within 2 jiffies end each hold sooner$")' "$d/verdict.json"
	else
		jq -e '.stall_fix | test("receiver") | not' "$d/verdict.json"
	fi
	jq -e '.stall_fix | test("TCP_NODELAY")' "$d/verdict.json"
	# the records' time is the stall's start, inside the push
	jq -e -s '([.[] | select(.type=="stall") | .t_ns] | min) >= ([.[] | select(.type=="sample") | .t_ns] | min)' "$d/trace.jsonl"
}

@test "30 fps, quickack on: no stall, by bbrtrace or by pushsim, and no stall fix" {
	local d=$BATS_TEST_TMPDIR/f30on
	push 30 on "$d"
	expect_cmp "$(pushsim_stalls "$d")" -eq 0 "pushsim's stalled frame intervals"
	jq -e '.stalls_by_cause.nagle == 0 and .stall_fix == null' "$d/verdict.json"
	! jq -e '.text | test("stalled")' "$d/verdict.json" > /dev/null
}

@test "20 fps, quickack off: the receiver's delayed-ACK timer ends each Nagle hold, about 40 ms on" {
	local d=$BATS_TEST_TMPDIR/f20off by_ack timer
	# A player that reads each frame at its playout time, not at once: a
	# reader that drains a small pushed segment at once makes the kernel ACK
	# it then (tcp_cleanup_rbuf), and no hold waits on the timer. Into
	# dip.sh's default app-ack receiver the holds ended by the timer's ACK
	# numbered 0 in 5 of 12 pushes of 15 s beside a busy core (BBR's pacing
	# held the tails instead); into the paced player, in 8 pushes of 10 s
	# beside a busy core, 99 to 147, or 2 and 3 in the two where most holds
	# ended unseen: 15 s, for at least one in those. An idle fresh clone's
	# run still saw 0. And a player behind its schedule reads frames as
	# they come, and its reads ACK them: beside a busy core 254 holds ended
	# by ACKs, about 20 ms each, against the timer's 85 ACKs. Both are the
	# premise, not the tool (TcpExtDelayedACKs, the kernel's own count,
	# tells), so such a push is done again, 3 pushes at most
	local k
	for k in 1 2 3; do
		d=$BATS_TEST_TMPDIR/f20off$k
		push 20 off "$d" 15 paced
		by_ack=$(jq .nagle_stalls_ended_by.ack "$d/verdict.json")
		timer=$(jq .receiver_delayed_acks "$d/verdict.json")
		echo "# push $k: nagle stalls ended by the late ACK: $by_ack; the receiver's timer sent $timer ACKs" >&3
		[ "$by_ack" -lt 1 ] || [ "$by_ack" -gt "$timer" ] || break
	done
	expect_cmp "$by_ack" -ge 1 "Nagle stalls ended by the late ACK"
	expect_cmp "$by_ack" -le "$timer" "Nagle stalls ended by the late ACK (the receiver's timer sent $timer ACKs)"
	# each hold ends within the timer's longest (TCP_DELACK_MAX, 200 ms)
	jq -e -s '[.[] | select(.type=="stall" and .cause=="nagle" and .ended_by=="ack") | .duration_us] |
		all(. <= 200000)' "$d/trace.jsonl" > /dev/null ||
		{ jq -c -s '[.[] | select(.type=="stall" and .cause=="nagle" and .ended_by=="ack") | .duration_us]' "$d/trace.jsonl"; return 1; }
	# and the capture agrees: bbrpcap join finds the ACK each waited for, at
	# the stall's end
	bbrpcap join "$d/trace.jsonl" "$d/capture.pcap" -o "$d/joined.jsonl" 2> "$d/join.err" ||
		{ cat "$d/join.err"; return 1; }
	grep -q "matched [0-9]* of [0-9]* stalls" "$d/join.err"
	tk_acks_end_stalls "$d/joined.jsonl"
	expect_timer_ended "$d"
}

@test "a receiver that reads slowly: rwnd_limited stalls, as long in all as tcp_info's rwnd-limited time, within a tenth" {
	requires iperf3 ss
	local out=$BATS_TEST_TMPDIR/rw tracer chrono ours
	tk_netns_pair "$NS"
	bbrtrace -b struct_ops --detect -f json -o "$out.jsonl" 2> "$out.err" &
	tracer=$!
	tk_wait_for "grep -q 'stalls: the write tap runs on' '$out.err'" 60 || { cat "$out.err"; return 1; }
	# 64 kB of receive buffer, read at 400 kB/s; 600 kB sent, then 3 s idle
	ip netns exec "$NS-b" "$TK_ROOT/tests/tools/tcpflow.py" sink 5400 --rcvbuf 65536 --read-bps 400000 &
	tk_wait_listen 5400 5 "$NS-b"
	ip netns exec "$NS-a" "$TK_ROOT/tests/tools/tcpflow.py" send 10.201.0.2 5400 --bytes 600000 \
		--cc bbr_traced --hold 3 > "$out.send" &
	tk_wait_for "grep -q '^sent' '$out.send'" 30
	# every byte read (1.5 s at 400 kB/s), the connection still open: the
	# kernel's chrono counters for the whole transfer
	sleep 2
	ip netns exec "$NS-a" ss -tin 'dport = :5400' | tail -n 1 > "$out.ss"
	kill -INT "$tracer"
	wait "$tracer"
	chrono=$(grep -oP '(?<=rwnd_limited:)[0-9]+(?=ms)' "$out.ss")
	ours=$(jq -s '[.[] | select(.type=="stall" and .cause=="rwnd_limited") | .duration_us] | add // 0 | . / 1000 | floor' "$out.jsonl")
	echo "# tcp_info rwnd_limited ${chrono} ms; bbrtrace's rwnd_limited stalls $ours ms; $(jq -c 'select(.type=="summary") | .stalls_by_cause' "$out.jsonl")" >&3
	expect_cmp "$chrono" -ge 100 "tcp_info's rwnd_limited, ms"
	# the two agree within a tenth (+ 20 ms): a stall that a window update
	# ends (no tap sees one) ends at the first event that shows the data
	# gone, a little after the kernel's chrono stopped; the chrono counts
	# holds under 10 ms too (here: 1256 ms of stalls against 1304 ms, 5 stalls)
	expect_cmp "$ours" -le $((chrono * 11 / 10 + 20)) "rwnd_limited stalls, ms (tcp_info's: $chrono ms)"
	expect_cmp "$ours" -ge $((chrono / 2)) "rwnd_limited stalls, ms (tcp_info's: $chrono ms)"
	jq -e -s 'map(select(.type=="summary"))[0] | .stalls_by_cause.nagle == 0 and .stalls_by_cause.rwnd_limited >= 1' "$out.jsonl"
	jq -e -s '[.[] | select(.type=="stall" and .cause=="rwnd_limited")] | all(.evidence | test("window"))' "$out.jsonl"
}
