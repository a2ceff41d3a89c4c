#!/usr/bin/env bats
# pushsim: the live-stream push, sender and receivers, between two namespaces.

load helpers

setup() {
	NS=rp-ps-${BATS_ROOT_PID}-$BATS_TEST_NUMBER
}

teardown() {
	tk_cleanup
}

# push for $1 s with receiver mode $2 (extra receiver options after --, sender options after ---)
push() {
	local secs=$1 mode=$2 port=$3
	shift 3
	local ropts=() sopts=()
	while [ $# -gt 0 ] && [ "$1" != --- ]; do ropts+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	sopts=("$@")
	ip netns exec "$NS-b" "$BIN/pushsim" recv --listen "10.201.0.2:$port" --mode "$mode" --json "${ropts[@]}" \
		>"$BATS_TEST_TMPDIR/recv.jsonl" 2>"$BATS_TEST_TMPDIR/recv.err" &
	local rpid=$!
	tk_wait_listen "$port" 5 "$NS-b"
	ip netns exec "$NS-a" "$BIN/pushsim" send --connect "10.201.0.2:$port" --duration "$secs" --json "${sopts[@]}" \
		>"$BATS_TEST_TMPDIR/send.jsonl" 2>"$BATS_TEST_TMPDIR/send.err"
	SEND_RC=$?
	local i
	for ((i = 0; i < 100; i++)); do kill -0 $rpid 2>/dev/null || break; sleep 0.1; done
	wait $rpid
	RECV_RC=$?
}

sum() { jq -s "[.[] | select(.type==\"summary\")][0].$2" "$BATS_TEST_TMPDIR/$1.jsonl"; }

@test "prompt receiver: both ends agree on frames and bytes, one record per second" {
	requires root netns jq
	tk_netns_pair "$NS"
	push 3 prompt 43201
	[ "$SEND_RC" -eq 0 ] && [ "$RECV_RC" -eq 0 ]
	[ "$(sum send frames)" -eq 90 ]
	[ "$(sum recv frames)" -eq 90 ]
	[ "$(sum send bytes)" -eq "$(sum recv bytes)" ]
	# 4 Mbit/s for 3 s: 1.5 MB, within the jitter
	b=$(sum recv bytes)
	[ "$b" -gt 1300000 ] && [ "$b" -lt 1700000 ]
	[ "$(jq -s '[.[] | select(.type=="second")] | length' "$BATS_TEST_TMPDIR/send.jsonl")" -ge 3 ]
	[ "$(sum recv mode)" = '"prompt"' ]
}

@test "paced receiver: frames are read one playout buffer late" {
	requires root netns jq
	tk_netns_pair "$NS"
	push 3 paced 43202 --playout-ms 200
	[ "$SEND_RC" -eq 0 ] && [ "$RECV_RC" -eq 0 ]
	lat=$(sum recv frame_latency_mean_us)
	[ "$lat" -ge 190000 ] && [ "$lat" -le 260000 ] || { echo "# mean latency $lat us"; return 1; }
	[ "$(sum recv frames)" -eq 90 ]
}

@test "app-ack receiver: one 16-byte application ACK per --ack-bytes, counted at both ends" {
	requires root netns jq
	tk_netns_pair "$NS"
	push 2 app-ack 43203 --ack-bytes 10000
	[ "$SEND_RC" -eq 0 ] && [ "$RECV_RC" -eq 0 ]
	b=$(sum recv bytes)
	[ "$(sum recv app_acks)" -eq $((b / 10000)) ]
	[ "$(sum send app_acks)" -eq "$(sum recv app_acks)" ]
}

@test "frame sizes are never a multiple of the MSS, and vary with the jitter" {
	requires root netns jq tcpdump
	tk_netns_pair "$NS"
	ip netns exec "$NS-a" tcpdump -i veth0 -s 96 -U -w "$BATS_TEST_TMPDIR/p.pcap" \
		'tcp dst port 43204 and tcp[tcpflags] & tcp-push != 0' 2>"$BATS_TEST_TMPDIR/td.err" &
	td=$!
	tk_wait_for "grep -q 'listening on' '$BATS_TEST_TMPDIR/td.err'" 5
	# one write per frame, no Nagle: each frame ends with a PSH segment
	push 2 prompt 43204 --- --keyframe-factor 1 --jitter 0.5 --chunk-size 0 --nodelay
	sleep 0.2
	kill -INT $td
	wait $td
	[ "$SEND_RC" -eq 0 ]
	mss=$(sum send mss)
	# a frame's end is the last PSH segment of its burst (bursts are 33 ms apart)
	tcpdump -r "$BATS_TEST_TMPDIR/p.pcap" -nn -S -tt 2>/dev/null |
		awk '{ for (i = 1; i <= NF; i++) if ($i == "seq") { split($(i + 1), a, "[:,]"); end = a[2] }
		       if (NR > 1 && $1 - t > 0.01) print last; last = end; t = $1 } END { print last }' |
		awk 'NR > 1 { print $1 - prev } { prev = $1 }' >"$BATS_TEST_TMPDIR/sizes"
	n=$(wc -l <"$BATS_TEST_TMPDIR/sizes")
	[ "$n" -ge 50 ] || { echo "# $n frame sizes"; return 1; }
	[ "$(awk -v m="$mss" '$1 % m == 0' "$BATS_TEST_TMPDIR/sizes" | wc -l)" -eq 0 ]
	# +-50% around 16.7 kB: the sizes spread
	[ "$(sort -n "$BATS_TEST_TMPDIR/sizes" | head -1)" -lt 12000 ]
	[ "$(sort -n "$BATS_TEST_TMPDIR/sizes" | tail -1)" -gt 21000 ]
}

@test "pushsim bad arguments: one line, exit 2" {
	tk_run "$BIN/pushsim"
	expect_status 2
	expect_one_line_stderr
	expect_stderr "pushsim: missing command: send or recv (see --help)"
	tk_run "$BIN/pushsim" push
	expect_status 2
	expect_stderr "pushsim: 'push' is not a command: use send or recv"
	tk_run "$BIN/pushsim" send --connect 10.0.0.1:80 --fps 5x
	expect_status 2
	expect_one_line_stderr
	expect_stderr "pushsim: --fps: '5x' is not an integer"
	tk_run "$BIN/pushsim" send --connect 10.0.0.1
	expect_status 2
	expect_stderr "pushsim: --connect: '10.0.0.1' is not ADDR:PORT"
	tk_run "$BIN/pushsim" send --connect 1.2.3:80
	expect_status 2
	expect_stderr "pushsim: --connect: '1.2.3' is not an IPv4 or IPv6 address"
	tk_run "$BIN/pushsim" recv --listen 43000 --mode lazy
	expect_status 2
	expect_stderr "pushsim: --mode: 'lazy' is not one of prompt|paced|app-ack"
	tk_run "$BIN/pushsim" recv --listen 43000 --fps 0
	expect_status 2
	expect_stderr "pushsim: --fps: 0 is out of range 1..240"
	tk_run "$BIN/pushsim" recv --listen 43000 --gop 5
	expect_status 2
	expect_stderr "pushsim: --gop: only for pushsim send"
	tk_run "$BIN/pushsim" send
	expect_status 2
	expect_stderr "pushsim: --connect: missing (where to push)"
	tk_run "$BIN/pushsim" send --connect 10.0.0.1:80 --jitter 1.5
	expect_status 2
	expect_stderr "pushsim: --jitter: 1.5 is out of range 0..0.9"
}

@test "pushsim: nobody listening gives a network error, exit 20" {
	requires root netns
	tk_netns_pair "$NS"
	tk_run ip netns exec "$NS-a" "$BIN/pushsim" send --connect 10.201.0.2:43205 --duration 1
	expect_status 20
	expect_stderr "pushsim: connect: Connection refused"
}

@test "pushsim --cc: an unknown congestion control is refused" {
	requires root netns
	tk_netns_pair "$NS"
	tk_run ip netns exec "$NS-a" "$BIN/pushsim" send --connect 10.201.0.2:43206 --cc nosuchcc --duration 1
	expect_status 4
	expect_stderr "pushsim: --cc: cannot use congestion control 'nosuchcc': No such file or directory"
}
