#!/usr/bin/env bats
# bbrtrace on a busy sender: 1,000 app-limited iperf3 flows to 20 healthy
# receivers, and one pushsim push to a receiver that delays its ACKs (the
# app-ack receiver, whose delayed ACKs throttle BBR at this RTT: repro.bats).
# The verdict names that receiver with its fix, and no healthy one; every
# flow is tracked and no event is lost. A flow's results alone and among
# 1,000 others: tests/unit/test_detect.c (test_judged_alike_in_a_crowd).

load helpers

NS=sc-${BATS_ROOT_PID}
BAD=10.205.0.100

setup_file() {
	requires root netns btf bbr struct_ops iperf3 jq
	tk_lock_bbr_traced
	local i
	for i in a b; do
		ip netns add "$NS-$i" && echo "$NS-$i" >> "$TK_STATE_DIR/netns.list"
		ip -n "$NS-$i" link set lo up
	done
	ip -n "$NS-a" link add veth0 type veth peer name veth1 netns "$NS-b"
	ip -n "$NS-a" addr add 10.205.0.1/24 dev veth0
	for i in $(seq 2 21) 100; do ip -n "$NS-b" addr add "10.205.0.$i/24" dev veth1; done
	ip -n "$NS-a" link set veth0 up
	ip -n "$NS-b" link set veth1 up
}

teardown_file() {
	tk_cleanup
	tk_unlock_bbr_traced
}

@test "1,000 healthy flows and one receiver that delays its ACKs: the verdict names it alone, nothing lost or untracked" {
	local d=$BATS_TEST_TMPDIR i pids=() bt
	for i in $(seq 2 21); do
		ip netns exec "$NS-b" iperf3 -s -1 -B "10.205.0.$i" -p 5301 -D
	done
	ip netns exec "$NS-b" "$BIN/pushsim" recv --listen "$BAD:5400" --mode app-ack --fps 20 --playout-ms 100 \
		--ack-bytes 65536 --json > "$d/recv.jsonl" 2> "$d/recv.err" &
	tk_wait_listen 5400 5 "$NS-b"
	for i in $(seq 2 21); do tk_wait_listen 5301 5 "$NS-b"; done
	# at its unit's priority (Nice=-10): on cores the flows fill, the reader keeps up
	nice -n -10 bbrtrace -b struct_ops --detect --records events -f json -o "$d/trace.jsonl" \
		--set-default-in "$NS-a" -d 40 2> "$d/bt.err" &
	bt=$!
	tk_wait_for "[ \$(ip netns exec $NS-a sysctl -n net.ipv4.tcp_congestion_control) = bbr_traced ]" 30
	# 1,000 flows of 200 kbit/s in 1400-byte writes: streams that never fill
	# their path. With TCP_NODELAY (-N), as a media server sends: without
	# it, on a loaded machine iperf3 catches up with two writes at once and
	# Nagle holds the second until the receiver's delayed ACK, a true stall
	# of 40 ms that the verdict rightly blames (a make test run: 4,963)
	for i in $(seq 2 21); do
		ip netns exec "$NS-a" timeout 60 iperf3 -c "10.205.0.$i" -p 5301 -P 50 -t 30 -b 200K -l 1400 -N \
			-C bbr_traced > "$d/cli.$i.txt" 2>&1 &
		pids+=($!)
	done
	ip netns exec "$NS-a" "$BIN/pushsim" send --connect "$BAD:5400" --duration 30 --fps 20 --bitrate-kbps 4000 \
		--cc bbr_traced --json > "$d/send.jsonl" 2> "$d/send.err"
	wait "${pids[@]}"
	# the pushes done, so is the trace (its -d 40 only bounds it): Ctrl-C
	kill -INT "$bt"
	wait "$bt"
	jq -c 'select(.type=="summary") | {samples, lost, samples_untracked}' "$d/trace.jsonl" | sed 's/^/# /'
	jq -c 'select(.type=="verdict") | {flows, peers, peers_harmed, worst_peers}' "$d/trace.jsonl" | sed 's/^/# /'
	# the 1,000 data flows connected (iperf3's own report)
	expect_equal "$(cat "$d"/cli.*.txt | grep -c 'connected to')" 1000 "iperf3 streams connected"
	# (-s: jq 1.6's -e misjudges a select() that ends empty)
	jq -e -s 'map(select(.type=="summary"))[0] | .lost == 0 and .samples_untracked == 0 and .samples > 10000' \
		"$d/trace.jsonl"
	# all 21 peers seen; the bad receiver, and only it, is harmed: its held
	# ACKs throttle it at least once, and its fix is quickack on that
	# receiver. Which fix depends on how much they held back, which the
	# machine's load sets: past the fix's floors (8 throttles in 30 s with
	# the shake's three lanes beside it; once for 198 ms, 81 kB, with a
	# fourth lane) the collapses' fix, a host route to this sender; under
	# them (an idle fresh clone: once, 9.1 ms, 3.7 kB) the fix of the Nagle
	# stalls its late ACKs end (22 in 30 s, 0.79 s), TCP_NODELAY on the
	# sender and quickack on its port. The choice between them is the
	# verdict's unit tests' (test_detect: the fix's floors)
	jq -e -s --arg bad "$BAD" 'map(select(.type=="verdict"))[0] | .flows >= 1000 and .peers >= 21 and .peers_harmed == 1
		and (.worst_peers | length == 1 and .[0].peer == $bad and .[0].delayed_ack >= 1
		and .[0].port == 5400
		and (.[0].fix == "on the receiver \($bad), `quickack on --to 10.205.0.1 --host` (a host route to this sender alone), so that it ACKs at once; a socket scope on its port, `quickack on --port 5400`, touches no route but does not stop these: it caps each hold at 2 jiffies (8 ms at HZ 250) at best, and holds that long still collapse the estimate"
			or (.[0].nagle_stalls >= 1 and (.[0].fix | contains("and on the receiver \($bad), `quickack on --port 5400`")))))' "$d/trace.jsonl" ||
		{ jq -r 'select(.type=="verdict") | .text' "$d/trace.jsonl"; return 1; }
	jq -e -s --arg bad "$BAD" 'map(select(.type=="verdict"))[0] | .fix | test("on the receiver \($bad), `quickack on --(to 10.205.0.1 --host|port 5400)`")' \
		"$d/trace.jsonl"
}
