#!/usr/bin/env bats
# Real pushes with known answers: ffmpeg (libx264, a lavfi test source) into
# nginx-rtmp, between namespaces, through repro/dip.sh --push ffmpeg: its
# topology, bbrtrace --detect, tcpdump, quickack and verdict. Each test is one
# push; the last one compares them.
#
# What the mechanism predicts, whatever one run's numbers:
# - nginx-rtmp reads each frame at once and, after the RTMP handshake, sends
#   the pusher nothing (ffmpeg announces no acknowledgement window), so its
#   socket never goes back to ping-pong mode: its kernel ACKs a frame when
#   nginx reads it, and the delayed-ACK timer fires only around the
#   handshake, at 20 fps (50 ms between frames, longer than the 40 ms timer)
#   as at 60 fps (17 ms, shorter). The receiver's TcpExtDelayedACKs stay far
#   below the frame count.
# - On the native veth path BBR's estimate is Gbit/s against a 4 or 12 Mbit/s
#   demand: the collapses are harmless, except a delayed_ack one while the
#   handshake's ping-pong holds an ACK (quickack off only, at most one per
#   push, before the video flows), which throttles for under a millisecond:
#   too little to act on, so there too the verdict says no action is needed.
# - ffmpeg leaves Nagle on (its tcp_nodelay option is off by default): a
#   frame's sub-MSS tail waits for the ACK of the data in flight, which the
#   receiver delays. At 60 fps the next frame (17 ms on) comes first and
#   takes the tail along: the sender stalls a frame interval on many frames
#   (Nagle stalls ended by the next write). At 20 fps a few tails wait for
#   the timer itself. The verdict says so, with the fix (TCP_NODELAY; and
#   quickack on the receiver's port only when its late ACK ended as many
#   holds as the next write did), while the collapses need no action.
# - With quickack on the receiver ACKs at once: ackhold on the ingest sees no
#   ACK leave with a delayed ACK scheduled, the stream is never throttled
#   enough to act on, nothing stalls, and the verdict says "No action is
#   needed".
# - Socket scopes (quickack on --port, quickack nodelay --dport) fix one
#   port's connections and touch no route: with TCP_NODELAY on the pusher's
#   connections to nginx, no Nagle stall, and the wire shows tails Nagle
#   would have held (nagle_wire.awk); with the receiver's port scope, nginx
#   in a cgroup of its own, no ACK of the push is held past the scope's cap
#   while a control flow on another port of the same hosts and route still
#   has its ACKs held by the delayed-ACK timer, and the routes are
#   byte-identical before and after (ack_holds.awk on both captures).
# - A named cause explains the collapses: `other` is at most 5% of them, or
#   one collapse in a push that made fewer than 20 (a 60 fps push makes a
#   handful, and one spurious retransmit after reordering is `other`: no cause
#   names a lone loss yet).

load helpers

# seconds per push: 8 s hold 160 frames at 20 fps, 480 at 60
RT_SECS=8
TRICKLE=$BATS_TEST_DIRNAME/../fixtures/quickack/tcp_trickle.py
NAGLE_WIRE=$BATS_TEST_DIRNAME/../fixtures/quickack/nagle_wire.awk
# `other` may be at most this share of a push's collapses
RT_OTHER_MAX_SHARE=0.05

setup_file() {
	tk_lock_bbr_traced
	tk_bpffs_note
	export RT_OUT=$BATS_FILE_TMPDIR/runs
	export RT_ID=r${BATS_ROOT_PID}
	mkdir -p "$RT_OUT"
}

teardown_file() {
	tk_del_dip_netns "$RT_ID"
	tk_bpffs_restore
	tk_unlock_bbr_traced
}

teardown() {
	local cg
	# a push still running (a test failed beside it): TERM, and dip.sh
	# restores its quickack journals and deletes what it made
	if [ -n "${RT_DIP_PID:-}" ] && kill -0 "$RT_DIP_PID" 2> /dev/null; then
		kill -TERM "$RT_DIP_PID"
		wait "$RT_DIP_PID" 2> /dev/null
	fi
	# a push that failed half-way: nginx and ffmpeg die with their namespaces
	tk_del_dip_netns "$RT_ID"
	for cg in $(findmnt -n -t cgroup2 -o TARGET | head -1)/bbrkit-dip-"$RT_ID"*; do
		[ -d "$cg" ] && rmdir "$cg" 2> /dev/null
	done
	tk_cleanup
}

# one push in the background (RT_DIP_PID): NAME FPS KBIT/S QUICKACK PORT
# [dip.sh's options]; rt_push_end waits for it
rt_push_start() {
	local name=$1 fps=$2 kbps=$3 qa=$4 port=$5
	shift 5
	"$TK_ROOT/repro/dip.sh" --push ffmpeg --fps "$fps" --bitrate-kbps "$kbps" --quickack "$qa" \
		--duration $RT_SECS --out "$RT_OUT/$name" --id "${RT_ID}${name:0:4}" --port "$port" --no-plot "$@" \
		> "$BATS_TEST_TMPDIR/$name.out" 2>&1 &
	RT_DIP_PID=$!
}

# the push started as NAME FPS KBIT/S QUICKACK PORT: its end, and what every
# push must show
rt_push_end() {
	local name=$1 fps=$2 kbps=$3 qa=$4 port=$5 rc=0
	wait "$RT_DIP_PID" || rc=$?
	RT_DIP_PID=
	[ $rc -eq 0 ] || { echo "# dip.sh exited with $rc:"; tail -5 "$BATS_TEST_TMPDIR/$name.out"; return 1; }
	# the verdict, verbatim, for the log (make test keeps it with RT_FIGURES=FILE)
	sed "s/^/# $name: /" "$RT_OUT/$name/verdict.txt" >&3
	[ -z "${RT_FIGURES:-}" ] || sed "s/^/$(date -u +%FT%TZ) $name: /" "$RT_OUT/$name/verdict.txt" >>"$RT_FIGURES"
	rt_common "$RT_OUT/$name" "$fps" "$kbps" "$qa" "$port"
}

# one push: NAME FPS KBIT/S QUICKACK PORT [dip.sh's options]
rt_push() {
	rt_push_start "$@"
	rt_push_end "$@"
}

# "TAILS n EARLY k" of push NAME to PORT: the tails its pusher sent, and
# those sent while an earlier tail was unACKed, which Nagle forbids
rt_wire_tails() {
	local d=$RT_OUT/$1 mss
	mss=$(jq -s '[.[] | select(.type == "sample") | .mss] | max' "$d/trace.jsonl")
	tshark -r "$d/capture.pcap" -T fields -E separator=, -e frame.time_relative -e tcp.srcport -e tcp.dstport \
		-e tcp.len -e tcp.seq -e tcp.ack 2> /dev/null | awk -v port="$2" -v mss="$mss" -f "$NAGLE_WIRE"
}

# "ACKS OVER MAX" of the ACKs the receiver sent on PORT in capture PCAP: how
# many, how many it held over CUT ms (ack_holds.awk), and the longest hold, ms
rt_holds() {
	tk_ack_holds "$1" "$2" |
		awk -v cut="$3" '{ n++; if ($1 > cut) over++; if ($1 > max) max = $1 } END { printf "%d %d %.2f\n", n, over, max }'
}

# what every push must show: the scenario, ffmpeg's push, the receiver's
# ground truth, the records agreeing with the summary, `other` rare, and a
# sample for every ACK the pusher's stack processed
rt_common() {
	local d=$1 fps=$2 kbps=$3 qa=$4 port=$5 c rec
	jq -e --argjson fps "$fps" --argjson kbps "$kbps" --arg qa "$qa" \
		'.type == "verdict" and .scenario.push == "ffmpeg" and .scenario.receiver == "nginx-rtmp"
		and .scenario.fps == $fps and .scenario.bitrate_kbps == $kbps and .scenario.quickack == $qa
		and .push.send.tool == "ffmpeg" and .push.send.frames > 0 and .push.send.bytes > 0' "$d/verdict.json"
	# nginx took the publish and saw it end
	grep -q "publish: name='test'" "$d/nginx/error.log"
	grep -q 'PUBLISH "live" "test"' "$d/nginx/access.log"
	# nginx-rtmp holds no ACK for its timer beyond the handshake's
	jq -e '.receiver_delayed_acks * 10 < .push.send.frames' "$d/verdict.json" ||
		{ echo "# the receiver's delayed-ACK timer fired $(jq .receiver_delayed_acks "$d/verdict.json") times"; return 1; }
	for c in $(jq -r '.collapses_by_cause | keys[]' "$d/verdict.json"); do
		rec=$(jq -s --arg c "$c" '[.[] | select(.type == "collapse" and .cause == $c)] | length' "$d/trace.jsonl")
		jq -e --arg c "$c" --argjson n "$rec" '.collapses_by_cause[$c] == $n' "$d/verdict.json" >/dev/null ||
			{ echo "# $c: $rec records, the verdict counts $(jq ".collapses_by_cause.$c" "$d/verdict.json")"; return 1; }
	done
	jq -e --argjson m "$RT_OTHER_MAX_SHARE" '.collapses_by_cause.other <= ([$m * .collapses, 1] | max)' "$d/verdict.json" ||
		{ echo "# other: $(jq .collapses_by_cause.other "$d/verdict.json") of $(jq .collapses "$d/verdict.json")"; return 1; }
	tk_expect_acks_sampled "$d" "$port"
}

# whatever throttled the push was too little to act on: the verdict says so
# and proposes no fix for its collapses (a lone segment ACKed a few ms late
# can throttle a 12 Mbit/s push for a few ms: once 3.24 ms, 0.29 of the
# demand for an instant)
rt_expect_negligible() {
	local d=$1
	jq -e '([.throttling_by_cause[]] | add) == 0 or (.text | test("too little to act on"))' "$d/verdict.json" ||
		{ jq -r .text "$d/verdict.json"; jq -c 'select(.type == "collapse" and .impact == "throttling")' "$d/trace.jsonl"; return 1; }
	grep -qiE 'no action is needed|never collapsed' "$d/verdict.txt" || { head -1 "$d/verdict.txt"; return 1; }
	jq -e '.fix == null' "$d/verdict.json" || { jq -r .text "$d/verdict.json"; return 1; }
}

# quickack on, as the receiver's kernel shows it (dip.sh --receiver-view:
# ackhold on the ingest, every ACK a hold record): no ACK left while a
# delayed ACK was scheduled, so no ACK the policy held. bbrtrace, on the
# pusher, names a lone segment ACKed late delayed_ack whatever held it; one
# the receiver's kernel sent with no delayed ACK scheduled was late for the
# receiver's CPU (under load, 69.5 ms once), which no quickack setting
# changes, and passes when ackhold saw that very ACK leave
rt_expect_no_policy_hold() {
	local d=$1 a h
	jq -e -s '[.[] | select(.type == "hold")] | length > 0' "$d/ackhold.jsonl" > /dev/null ||
		{ echo "# ackhold on the ingest recorded no ACK"; tail -3 "$d/ackhold.log"; return 1; }
	jq -e -s '[.[] | select(.type == "hold" and (.armed or .timer))] | length == 0' "$d/ackhold.jsonl" > /dev/null ||
		{ echo "# ACKs the receiver sent with a delayed ACK scheduled, quickack on:";
		  jq -c 'select(.type == "hold" and (.armed or .timer))' "$d/ackhold.jsonl" | head -5; return 1; }
	for a in $(jq -r 'select(.type == "collapse" and .cause == "delayed_ack") | .snd_una' "$d/trace.jsonl"); do
		h=$(jq -c --argjson a "$a" 'select(.type == "hold" and .ack == $a)' "$d/ackhold.jsonl" | head -1)
		echo "# delayed_ack collapse at ACK $a; the receiver's record of it: ${h:-none}" >&3
		[ -n "$h" ] && jq -e '.ended_by != "unseen"' <<< "$h" > /dev/null ||
			{ echo "# delayed_ack collapse at ACK $a, which ackhold on the ingest did not see leave: ${h:-no record}"; return 1; }
	done
}

# quickack on: nothing held, nothing worth a fix, no Nagle stall (what quick
# ACKs remove), the verdict says so; a stall of another cause may come, too
# short to act on (under load nginx closed its window for 12.9 ms once:
# rwnd_limited, the peer's window 0, true on the wire)
rt_expect_clean() {
	local d=$1
	rt_expect_no_policy_hold "$d"
	rt_expect_negligible "$d"
	jq -e '.stalls_by_cause.nagle == 0 and .stall_fix == null' "$d/verdict.json" ||
		{ jq -c 'select(.type == "stall")' "$d/trace.jsonl" | head -3; return 1; }
	! grep -q 'Fix:' "$d/verdict.txt" || false
}

# quickack off: at most the handshake's held ACK throttles as a delayed_ack,
# once, in STARTUP (before the video flows), with what its throttle spans;
# the rest is too little to act on
rt_expect_handshake_only() {
	local d=$1
	jq -e '.throttling_by_cause.delayed_ack <= 1' "$d/verdict.json" ||
		{ jq -c 'select(.type == "collapse" and .impact == "throttling")' "$d/trace.jsonl"; return 1; }
	jq -e -s '[.[] | select(.type == "collapse" and .impact == "throttling" and .cause == "delayed_ack"
		and .mode != "STARTUP")] | length == 0' "$d/trace.jsonl" ||
		{ jq -c 'select(.type == "collapse" and .impact == "throttling")' "$d/trace.jsonl"; return 1; }
	# that one is small (under 1 ms and 0 kB; once 12 ms and 5 kB): under the
	# verdict's floor (100 ms and 4 kB) no action is needed for the collapses
	# and no fix is proposed (Nagle's stalls have their own); over it, the
	# fix is the receiver's quickack, for that held ACK alone. A collapse
	# while its throttle holds throttles too (the detector's rule: a
	# throttle lasts until the pacing is back over the need), so any other
	# throttling collapse came after it, within the throttled time (under
	# load, a lone late segment came 60 ms into a 60 ms throttle)
	# (the floor's edges are test_detect's; here, the verdict's own word)
	if jq -e '([.throttling_by_cause[]] | add) > 0 and (.text | test("too little to act on") | not)' \
		"$d/verdict.json" > /dev/null; then
		jq -e '.throttling_by_cause.delayed_ack == 1 and
			(.fix | test("`quickack on --to 10.77.1.2 --host` .*; a socket scope on its port, `quickack on --port [0-9]+`"))' \
			"$d/verdict.json" || { jq -r .text "$d/verdict.json"; return 1; }
		jq -e -s --argjson s "$(jq .throttled_s "$d/verdict.json")" \
			'[.[] | select(.type == "collapse" and .impact == "throttling")] | sort_by(.t_ns)
			 | .[0].cause == "delayed_ack" and (.[-1].t_ns - .[0].t_ns) <= $s * 1e9' "$d/trace.jsonl" ||
			{ jq -c 'select(.type == "collapse" and .impact == "throttling")' "$d/trace.jsonl"; return 1; }
	else
		rt_expect_negligible "$d"
	fi
}

# Nagle's stalls: at least one (how many varies with the receiver's ACK
# timing: 5 to 557 in a 12 to 20 s push here, 99 in an 8 s one), each with
# its evidence and each as the wire shows it (tk_stalls_vs_wire: the data
# before the held tail all sent by its start, nothing new until its end), and
# the verdict's fix when they held the data long enough to act on, for the
# push's port: TCP_NODELAY, and the receiver's port scope too only when its
# late ACK ended at least as many holds as the next write did
rt_expect_nagle() {
	local d=$1 port=$2 bad n
	jq -e '.stalls_by_cause.nagle >= 1' "$d/verdict.json" ||
		{ jq -c '{stalls_by_cause, nagle_stalls_ended_by}' "$d/verdict.json"; return 1; }
	jq -e -s '[.[] | select(.type=="stall" and .cause=="nagle")] | all(.nonagle == 0 and .held_bytes < .mss)' \
		"$d/trace.jsonl"
	bad=$(tk_stalls_vs_wire "$d/trace.jsonl" "$d/capture.pcap" nagle 10.77.1.2 10.77.2.2)
	n=$(head -1 <<<"$bad" | awk '{print $2}')
	bad=$(tail -n +2 <<<"$bad")
	echo "# $n Nagle stalls, ended by $(jq -c .nagle_stalls_ended_by "$d/verdict.json"); on the wire: $(wc -l <<<"$bad" | awk -v b="$bad" '{print b == "" ? "all agree" : $1 " disagree"}')" >&3
	[ -z "$bad" ] || { head -5 <<<"$bad"; tk_trace_clock "$d/trace.jsonl" "$d/capture.pcap" 10.77.1.2 10.77.2.2; return 1; }
	if jq -e '.text | test("too little to act on \\(under [0-9]+ ms in all\\): no action is needed for the stalls")' \
		"$d/verdict.json" > /dev/null; then
		jq -e '.stall_fix == null' "$d/verdict.json"
	else
		jq -e --argjson port "$port" '(.stall_fix | startswith("TCP_NODELAY on the sender 10.77.1.2, with `quickack nodelay --dport \($port)` there or the pusher\u0027s own option (ffmpeg: -tcp_nodelay 1)"))
			and (.text | test("Nagle"))' "$d/verdict.json"
		if jq -e '.nagle_stalls_ended_by | .ack > 0 and .ack >= .write' "$d/verdict.json" > /dev/null; then
			jq -e --argjson port "$port" '.stall_fix | endswith("; and on the receiver 10.77.2.2, `quickack on --port \($port)`, whose ACKs within 2 jiffies end each hold sooner")' "$d/verdict.json"
		else
			jq -e '.stall_fix | test("receiver") | not' "$d/verdict.json"
		fi
	fi
}

# the receiver's view of push DIR to PORT (dip.sh --receiver-view): ackhold,
# run on the ingest, sees one peer, the pusher, on PORT; its timer's ACKs are
# the kernel's (within those it says it did not see); a push whose ACKs the
# timer held is named, with them
rt_expect_receiver_view() {
	local d=$1 port=$2
	jq -e -s --argjson port "$port" '[.[] | select(.type == "peer")] | length == 1 and
		.[0].peer == "10.77.1.2" and .[0].port == $port' "$d/ackhold.jsonl" > /dev/null ||
		{ jq -c 'select(.type == "peer")' "$d/ackhold.jsonl"; return 1; }
	tk_expect_dip_timer_acks "$d"
	if jq -e 'select(.type == "peer") | .timer_holds > 0' "$d/ackhold.jsonl" > /dev/null; then
		# what it could not see (an ACK unseen: 1 in 1,000 on 6.18) comes first
		grep -q "^receiver's view (ackhold): .*This host held back 1 of its 1 peer(s). 10.77.1.2 (to port $port)" \
			"$d/verdict.txt" || { cat "$d/verdict.txt"; return 1; }
	fi
}

@test "ffmpeg into nginx-rtmp, 20 fps, 4 Mbit/s, quickack off: harmless collapses, the timer fires only around the handshake; ackhold on the ingest names the pusher" {
	requires root netns bbr struct_ops btf tcpdump jq tc ffmpeg nginx-rtmp
	rt_push f20b4off 20 4000 off 43601 --receiver-view
	rt_expect_handshake_only "$RT_OUT/f20b4off"
	rt_expect_receiver_view "$RT_OUT/f20b4off" 43601
}

@test "ffmpeg into nginx-rtmp, 20 fps, 4 Mbit/s, quickack on: the ingest schedules no delayed ACK, No action is needed" {
	requires root netns bbr struct_ops btf tcpdump jq tc ffmpeg nginx-rtmp
	rt_push f20b4on 20 4000 on 43602 --receiver-view
	rt_expect_clean "$RT_OUT/f20b4on"
	rt_expect_receiver_view "$RT_OUT/f20b4on" 43602
}

@test "ffmpeg into nginx-rtmp, 60 fps, 4 Mbit/s, quickack off: frames closer than the timer, harmless collapses, Nagle stalls a frame's tail until the next" {
	requires root netns bbr struct_ops btf tcpdump jq tc ffmpeg nginx-rtmp
	rt_push f60b4off 60 4000 off 43603
	rt_expect_handshake_only "$RT_OUT/f60b4off"
	# a frame's tail held until the next frame, or the receiver's late ACK
	rt_expect_nagle "$RT_OUT/f60b4off" 43603
}

@test "ffmpeg into nginx-rtmp, 20 fps, 12 Mbit/s, quickack off: three times the demand, still harmless" {
	requires root netns bbr struct_ops btf tcpdump jq tc ffmpeg nginx-rtmp
	rt_push f20b12off 20 12000 off 43604
	rt_expect_handshake_only "$RT_OUT/f20b12off"
}

@test "ffmpeg into nginx-rtmp, 20 fps, 12 Mbit/s, quickack on: No action is needed" {
	requires root netns bbr struct_ops btf tcpdump jq tc ffmpeg nginx-rtmp
	rt_push f20b12on 20 12000 on 43605 --receiver-view
	rt_expect_clean "$RT_OUT/f20b12on"
	rt_expect_receiver_view "$RT_OUT/f20b12on" 43605
}

@test "ffmpeg into nginx-rtmp, 60 fps, 4 Mbit/s, TCP_NODELAY by a socket scope on the pusher: no Nagle stall, and the wire shows Nagle off" {
	requires root netns bbr struct_ops btf tcpdump tshark jq tc ffmpeg nginx-rtmp cgroup2
	local ton eon toff eoff
	[ -s "$RT_OUT/f60b4off/capture.pcap" ] || { echo "# the push f60b4off (Nagle on) is missing"; return 1; }
	rt_push f60b4nd 60 4000 off 43606 --nodelay
	jq -e '.scenario.nodelay == true and .stalls_by_cause.nagle == 0 and .stall_fix == null' "$RT_OUT/f60b4nd/verdict.json" ||
		{ jq -c '{stalls_by_cause, stall_fix}' "$RT_OUT/f60b4nd/verdict.json"; return 1; }
	rt_expect_handshake_only "$RT_OUT/f60b4nd"
	read -r _ ton _ eon <<< "$(rt_wire_tails f60b4nd 43606)"
	read -r _ toff _ eoff <<< "$(rt_wire_tails f60b4off 43603)"
	echo "# tails sent while an earlier one was unACKed: $eon of $ton with the scope, $eoff of $toff with Nagle on" >&3
	# TCP_NODELAY: ffmpeg writes each RTMP chunk on its own (a 1-byte header,
	# then up to 4 kB) and each leaves at once, the last one's tail unACKed:
	# 1,615 of 2,766 measured, 1,730 of 2,760; a tenth is far under that.
	# Nagle on, none but a timer's: a tail loss probe sends the held tail
	# with Nagle off when no ACK came for its timeout (one 72-byte tail 12.7
	# ms after the last send, its ACK 49 us later), more often under load:
	# 2 of 2,343, 4 of 1,640, 12 of 1,447 measured. The scope's share of
	# such tails is at least ten times Nagle's (76 to 260 times measured)
	expect_cmp $((eon * 10)) -ge "$ton" "tails sent early with TCP_NODELAY (x10), against all its tails"
	expect_cmp $((eon * toff)) -ge $((10 * eoff * ton)) \
		"early tails with the scope against Nagle's, each over its tails (x10: $eon/$ton against $eoff/$toff)"
}

@test "ffmpeg into nginx-rtmp, 20 fps, 4 Mbit/s, quick ACKs on nginx's port alone (a socket scope, nginx in its cgroup): no ACK of the push held, a control port's held, no route changed" {
	requires root netns bbr struct_ops btf tcpdump tshark jq tc ffmpeg nginx-rtmp cgroup2
	local name=f20b4port port=43607 ctl=43697 id d pcap td rx delack cut n over max set
	id=${RT_ID}${name:0:4} d=$RT_OUT/$name pcap=$BATS_TEST_TMPDIR/control.pcap
	[ -s "$RT_OUT/f20b4off/capture.pcap" ] || { echo "# the push f20b4off (no fix) is missing"; return 1; }
	rt_push_start $name 20 4000 port $port
	# nginx listens: the namespaces are up, the scope attached before it
	tk_wait_for "ip netns exec rp-recv-$id ss -Hltn 'sport = :$port' 2> /dev/null | grep -q ." 120 ||
		{ tail -5 "$BATS_TEST_TMPDIR/$name.out"; return 1; }
	# the control: from the pusher to the receiver on another port, through
	# the same route, to a receiver outside nginx's cgroup that reads nothing
	# until all has come (tcp_trickle.py: only the kernel decides its ACKs)
	tk_tcpdump_start "rp-push-$id" "$pcap" -s 128 -i eth0 "tcp port $ctl" || return 1
	td=$TK_TCPDUMP_PID
	ip netns exec "rp-recv-$id" timeout 30 /usr/bin/python3 "$TRICKLE" recv 10.77.2.2 $ctl 30000 20 \
		> "$BATS_TEST_TMPDIR/rx.out" &
	rx=$!
	tk_wait_listen $ctl 10 "rp-recv-$id" || return 1
	ip netns exec "rp-push-$id" timeout 30 /usr/bin/python3 "$TRICKLE" send 10.77.2.2 $ctl 300 100 2 20 || return 1
	wait $rx
	[ "$(cat "$BATS_TEST_TMPDIR/rx.out")" = 30000 ] || { echo "# the control got $(cat "$BATS_TEST_TMPDIR/rx.out") bytes"; return 1; }
	tk_tcpdump_stop "$td" "$pcap" || return 1
	# the scope set nginx's connection from ffmpeg, and not the control's
	tk_wait_for "quickack status --netns rp-recv-$id --journal $d/quickack.journal -f json 2> /dev/null |
		jq -e 'select(.type == \"scope\") | .set_new >= 1' > /dev/null" 60 || return 1
	read -r set delack <<< "$(quickack status --netns "rp-recv-$id" --journal "$d/quickack.journal" -f json |
		jq -r 'select(.type == "scope") | "\(.set_new) \(.delack_max_us)"')"
	rt_push_end $name 20 4000 port $port
	[ "$set" = 1 ] || { echo "# the scope set $set connections, not nginx's one"; return 1; }
	# held over halfway from the scope's cap (2 jiffies) to the kernel's
	# shortest delayed ACK without it (TCP_DELACK_MIN, 40 ms): at HZ 250, 24
	# ms. Scoped holds measured up to 15.7 ms (two caps: the timer wheel's
	# jiffy, a busy softirq; three test lanes on two cores beside it), the
	# push's unscoped ones 37 to 48 ms around its handshake, the control's
	# up to 32 ms
	cut=$(((delack / 1000 + 40) / 2))
	read -r n over max <<< "$(rt_holds "$d/capture.pcap" $port $cut)"
	echo "# the push with the scope: $n ACKs, $over held over $cut ms, the longest $max ms; TcpExtDelayedACKs $(jq .receiver_delayed_acks "$d/verdict.json") (the timer fires, 2 jiffies on)" >&3
	[ "$n" -gt 0 ] && [ "$over" = 0 ] || { echo "# $over of the push's $n ACKs held over $cut ms"; return 1; }
	read -r n over max <<< "$(rt_holds "$pcap" $ctl $cut)"
	echo "# the control beside it: $n ACKs, $over held over $cut ms, the longest $max ms" >&3
	[ "$over" -gt 0 ] || { echo "# none of the control's $n ACKs held over $cut ms (longest $max)"; return 1; }
	read -r n over max <<< "$(rt_holds "$RT_OUT/f20b4off/capture.pcap" 43601 $cut)"
	echo "# the same push without a fix (f20b4off): $n ACKs, $over held over $cut ms, the longest $max ms" >&3
	[ "$over" -gt 0 ] || { echo "# none of f20b4off's $n ACKs held over $cut ms (longest $max)"; return 1; }
	# no route changed: the receiver's routes, byte for byte
	[ -s "$d/routes.before" ] && cmp "$d/routes.before" "$d/routes.after" ||
		{ diff "$d/routes.before" "$d/routes.after"; return 1; }
	[ ! -e "$(findmnt -n -t cgroup2 -o TARGET | head -1)/bbrkit-dip-$id" ] || { echo "# nginx's cgroup is left"; return 1; }
}

@test "the pushes: the bitrate asked for is the bitrate pushed; nothing left behind" {
	requires root jq
	local r
	for r in f20b4off f20b4on f60b4off f20b12off f20b12on f60b4nd f20b4port; do
		[ -s "$RT_OUT/$r/verdict.json" ] || { echo "# the push $r is missing"; return 1; }
	done
	# CBR (nal-hrd=cbr): each push's mean within 25% of its --bitrate-kbps,
	# so the 12 Mbit/s pushes carry about three times the 4 Mbit/s ones' bytes
	for r in f20b4off f20b4on f60b4off f20b12off f20b12on f60b4nd f20b4port; do
		jq -e '(.push.send.goodput_bps / (.scenario.bitrate_kbps * 1000) - 1) | fabs < 0.25' "$RT_OUT/$r/verdict.json" ||
			{ echo "# $r: $(jq .push.send "$RT_OUT/$r/verdict.json")"; return 1; }
	done
	run bash -c "ls -1 /run/netns 2>/dev/null | grep -E '^rp-(push|rtr|recv)-${RT_ID}'"
	[ -z "$output" ] || { echo "# left: $output"; return 1; }
	! pgrep -f -- "$RT_OUT/" >/dev/null || { pgrep -af -- "$RT_OUT/"; return 1; }
	! grep -qw bbr_traced /proc/sys/net/ipv4/tcp_available_congestion_control || false
	# the scopes are detached: no sock_ops program of quickack's is loaded
	! bpftool prog show 2> /dev/null | grep -q qs_sockops || { bpftool prog show | grep -A2 qs_sockops; return 1; }
}

