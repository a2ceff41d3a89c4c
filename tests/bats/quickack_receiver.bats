#!/usr/bin/env bats
# Receiver behaviour: with quickack on the receiver's route to the sender, a
# TCP receiver ACKs every data segment at once; with it off (and after
# restore) it delays ACKs and sends far fewer. Counted on the wire with
# tcpdump (capture) and tshark (analysis).
#
# The sender (namespace -a) writes 300 chunks of 100 bytes with TCP_NODELAY,
# 2 ms apart; the receiver (namespace -b) reads nothing until all 30000 bytes
# are queued, so only the kernel's ACK policy decides when it ACKs. The
# assertions are ratios with wide margins (measured here: about 1.0 with
# quickack on, about 0.12 off; the thresholds are 0.9 and 0.6), and the
# capture is checked to hold every byte, so a loaded machine cannot make the
# test pass or fail by accident.

load helpers

NS=qa-${BATS_ROOT_PID}-rx
TRICKLE=$BATS_TEST_DIRNAME/../fixtures/quickack/tcp_trickle.py
CHUNKS=300
CHUNK_BYTES=100
TOTAL=$((CHUNKS * CHUNK_BYTES))

setup_file() {
	requires root netns tcpdump tshark
	[ -x /usr/bin/python3 ] || { echo "/usr/bin/python3 is missing (Debian's python3)" >&2; return 1; }
	tk_netns_pair "$NS"
	# more segments on the wire: no coalescing of the small writes at the sender
	ip netns exec "$NS-a" sysctl -qw net.ipv4.tcp_autocorking=0
	# room for every small segment while the receiver does not read
	ip netns exec "$NS-b" sysctl -qw net.ipv4.tcp_rmem="4096 4194304 8388608"
}

teardown_file() {
	tk_cleanup
}

teardown() {
	jobs -p | xargs -r kill -9 2>/dev/null || true
	ip netns pids "$NS-a" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
	ip netns pids "$NS-b" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
	return 0
}

# transfer ADDR PORT: run one trickle transfer to ADDR in -b, captured on
# veth1; sets DATA (data segments from the sender) and ACKS (pure ACKs from
# the receiver: no payload, no SYN, FIN or RST)
transfer() {
	local addr=$1 port=$2 pcap=$BATS_TEST_TMPDIR/rx-$2.pcap td rx bytes i
	# headers only, and a 16 MB buffer: a slow (emulated) CPU must not drop any
	tk_tcpdump_start "$NS-b" "$pcap" -s 128 -B 16384 -i veth1 "tcp port $port" || return 1
	td=$TK_TCPDUMP_PID
	ip netns exec "$NS-b" timeout 60 /usr/bin/python3 "$TRICKLE" recv "$addr" "$port" "$TOTAL" 50 > "$BATS_TEST_TMPDIR/rx.out" &
	rx=$!
	tk_wait_listen "$port" 10 "$NS-b"
	ip netns exec "$NS-a" timeout 60 /usr/bin/python3 "$TRICKLE" send "$addr" "$port" "$CHUNKS" "$CHUNK_BYTES" 2 50
	wait "$rx"
	[ "$(cat "$BATS_TEST_TMPDIR/rx.out")" = "$TOTAL" ] || { echo "# the receiver got $(cat "$BATS_TEST_TMPDIR/rx.out") bytes"; return 1; }
	sleep 0.3
	# the capture must hold the whole transfer, or its counts mean nothing (a
	# delayed ACK can make the sender retransmit a tail segment: counted too)
	tk_tcpdump_stop "$td" "$pcap" || return 1
	# one tshark pass (it takes seconds to start on an emulated CPU): per
	# packet its source port, payload length, next relative seq and SYN/FIN/RST
	tshark -r "$pcap" -T fields -E separator=, -e tcp.srcport -e tcp.len -e tcp.nxtseq \
		-e tcp.flags.syn -e tcp.flags.fin -e tcp.flags.reset > "$BATS_TEST_TMPDIR/rx-$port.csv" 2>/dev/null
	read -r DATA ACKS bytes < <(awk -F, -v p="$port" '
		# tshark prints flags as 1/0 or True/False, by version
		function set(f) { return f == "1" || f == "True" }
		$1 != p && $2 > 0 { data++; if ($3 > end) end = $3 }
		$1 == p && $2 == 0 && !set($4) && !set($5) && !set($6) { acks++ }
		END { print data + 0, acks + 0, end + 0 }' "$BATS_TEST_TMPDIR/rx-$port.csv")
	[ "$bytes" = $((TOTAL + 1)) ] || { echo "# the capture ends at relative seq $bytes, not $((TOTAL + 1))"; return 1; }
	echo "# $addr: $DATA data segments, $ACKS pure ACKs from the receiver" >&3
	# enough segments for a ratio to mean something
	[ "$DATA" -ge 100 ] || { echo "# only $DATA data segments"; return 1; }
}

receiver_test() {
	local prefix=$1 peer=$2 addr=$3 base=$4 J=$BATS_TEST_TMPDIR/quickack.journal
	# off (the kernel's default): delayed ACKs, well under one per segment
	transfer "$addr" $((base + 1))
	[ $((ACKS * 10)) -le $((DATA * 6)) ] || { echo "# quickack off: $ACKS ACKs for $DATA segments (want <= 0.6 per segment)"; false; }
	# on, on the receiver's route to the sender: one ACK per data segment
	tk_run quickack on "$prefix" --netns "$NS-b" --journal "$J"
	expect_status 0
	ip -n "$NS-b" route get "$peer" | grep -q "quickack 1" || { ip -n "$NS-b" route get "$peer"; false; }
	transfer "$addr" $((base + 2))
	[ $((ACKS * 10)) -ge $((DATA * 9)) ] || { echo "# quickack on: $ACKS ACKs for $DATA segments (want >= 0.9 per segment)"; false; }
	# restored: delayed ACKs again
	tk_run quickack restore --netns "$NS-b" --journal "$J"
	expect_status 0
	transfer "$addr" $((base + 3))
	[ $((ACKS * 10)) -le $((DATA * 6)) ] || { echo "# after restore: $ACKS ACKs for $DATA segments (want <= 0.6 per segment)"; false; }
}

@test "IPv4: quickack on the receiver's route makes it ACK every segment; off and restored, it does not" {
	receiver_test 10.201.0.0/24 10.201.0.1 10.201.0.2 5300
}

@test "IPv6: quickack on the receiver's route makes it ACK every segment; off and restored, it does not" {
	receiver_test fd00:201::/64 fd00:201::1 fd00:201::2 5400
}
