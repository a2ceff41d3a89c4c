#!/usr/bin/env bats
# Every CSV output of every tool loads with a strict CSV reader
# (tests/tools/csvcheck.py: one header, every row as wide as it, RFC 4180
# quoting), and holds the record types the tool writes, under one header
# with a "type" column when there are several. Real runs, small ones.

load helpers

NS=csv-${BATS_ROOT_PID}

setup_file() {
	requires root netns jq
	tk_netns_pair "$NS"
}

teardown_file() {
	tk_cleanup
}

teardown() {
	jobs -p | xargs -r kill -INT 2>/dev/null || true
	sleep 0.2
	jobs -p | xargs -r kill -9 2>/dev/null || true
	return 0
}

# csv_loads FILE TYPE...: FILE loads strictly and holds at least one row of
# each TYPE ("row" for a file of one untyped record type)
csv_loads() {
	local f=$1 t counts
	shift
	counts=$(/usr/bin/python3 "$TK_ROOT/tests/tools/csvcheck.py" "$f") || { echo "# $f: $counts"; head -5 "$f"; return 1; }
	echo "# $(basename "$f"): $(tr '\n' ' ' <<< "$counts")"
	for t in "$@"; do
		grep -q "^$t [1-9]" <<< "$counts" || { echo "# $f: no $t rows"; head -5 "$f"; return 1; }
	done
}

@test "bbrpcap: flows, throughput, acks and acks --each" {
	local cap=$TK_ROOT/tests/fixtures/pcap/dip-paced.pcap d=$BATS_TEST_TMPDIR
	bbrpcap flows "$cap" -f csv -o "$d/flows.csv"
	csv_loads "$d/flows.csv" flow capture
	bbrpcap throughput "$cap" -f csv -o "$d/tput.csv"
	csv_loads "$d/tput.csv"
	bbrpcap acks "$cap" -f csv -o "$d/acks.csv"
	csv_loads "$d/acks.csv"
	bbrpcap acks --each "$cap" -f csv -o "$d/each.csv"
	csv_loads "$d/each.csv" ack
}

@test "quickack: show, on, status and restore" {
	local d=$BATS_TEST_TMPDIR j=$BATS_TEST_TMPDIR/journal
	ip -n "$NS-a" route add 10.77.9.0/24 via 10.201.0.2 mtu 1400
	quickack show --netns "$NS-a" -f csv -o "$d/show.csv"
	csv_loads "$d/show.csv" row
	quickack on 10.77.9.0/24 --netns "$NS-a" --journal "$j" -f csv -o "$d/on.csv"
	csv_loads "$d/on.csv" change
	quickack status --netns "$NS-a" --journal "$j" -f csv -o "$d/status.csv"
	csv_loads "$d/status.csv"
	quickack restore --netns "$NS-a" --journal "$j" -f csv -o "$d/restore.csv"
	csv_loads "$d/restore.csv" change
}

@test "pushsim: send and recv" {
	local d=$BATS_TEST_TMPDIR
	ip netns exec "$NS-b" "$BIN/pushsim" recv --listen 10.201.0.2:43300 -f csv -o "$d/recv.csv" 2> /dev/null &
	local rx=$!
	tk_wait_listen 43300 5 "$NS-b"
	ip netns exec "$NS-a" "$BIN/pushsim" send --connect 10.201.0.2:43300 -d 1.5 -f csv -o "$d/send.csv" 2> /dev/null
	wait "$rx"
	csv_loads "$d/send.csv" summary
	csv_loads "$d/recv.csv" summary
}

@test "rtpsend and sfu_echo" {
	local d=$BATS_TEST_TMPDIR
	ip netns exec "$NS-b" "$BIN/sfu_echo" --listen 10.201.0.2:41300 --idle-exit 1 -f csv -o "$d/sfu.csv" &
	local rx=$!
	sleep 0.3
	ip netns exec "$NS-a" "$BIN/rtpsend" --to 10.201.0.2:41300 --rate 500 -d 1 -f csv -o "$d/send.csv"
	wait "$rx"
	csv_loads "$d/send.csv" row
	csv_loads "$d/sfu.csv" row
}

@test "udpdwell: intervals and sockets under one header" {
	requires btf
	local d=$BATS_TEST_TMPDIR
	ip netns exec "$NS-b" "$BIN/sfu_echo" --listen 10.201.0.2:41301 --idle-exit 2 -f json > /dev/null &
	sleep 0.3
	udpdwell --ports 41301 --intervals 2 --interval 0.5 -f csv -o "$d/ud.csv" 2> "$d/ud.err" &
	local ud=$!
	tk_wait_for "grep -q 'udpdwell: backend' '$d/ud.err'" 30
	ip netns exec "$NS-a" "$BIN/rtpsend" --to 10.201.0.2:41301 --rate 2000 -d 1.5 -f json > /dev/null
	wait "$ud"
	csv_loads "$d/ud.csv" interval socket
}

@test "upfbench: run, sweep, lookup and decode" {
	local d=$BATS_TEST_TMPDIR small=(--sessions 300 --packets 20000 --floor-mib 0)
	upfbench run "${small[@]}" --pcap-out "$d/n3.pcap" -f csv -o "$d/run.csv"
	csv_loads "$d/run.csv"
	upfbench sweep --sessions 300 --packets 20000 --floor-mib 0 --presets before,best -f csv -o "$d/sweep.csv"
	csv_loads "$d/sweep.csv"
	upfbench lookup --sessions 1k -f csv -o "$d/lookup.csv"
	csv_loads "$d/lookup.csv"
	upfbench decode --pcap-in "$d/n3.pcap" -f csv -o "$d/decode.csv"
	csv_loads "$d/decode.csv"
}

@test "bbrtrace: samples, collapses, the summary and the verdict under one header" {
	requires bbr struct_ops bpftool
	tk_lock_bbr_traced
	local d=$BATS_TEST_TMPDIR cc
	ip netns exec "$NS-b" "$TK_ROOT/tests/tools/tcpflow.py" sink 5501 &
	tk_wait_listen 5501 5 "$NS-b"
	bbrtrace --set-default-in "$NS-a" --detect -f csv -o "$d/trace.csv" 2> "$d/bt.err" &
	local bt=$!
	tk_wait_for "grep -q 'bbrtrace: backend' '$d/bt.err'" 30
	if grep -q 'backend struct_ops' "$d/bt.err"; then
		cc=bbr_traced
		tk_wait_for "[ \$(ip netns exec $NS-a sysctl -n net.ipv4.tcp_congestion_control) = bbr_traced ]" 10
	else
		cc=bbr
	fi
	ip netns exec "$NS-a" "$TK_ROOT/tests/tools/tcpflow.py" send 10.201.0.2 5501 --bytes 3000000 --cc "$cc" > /dev/null
	kill -INT "$bt"
	wait "$bt"
	tk_unlock_bbr_traced
	csv_loads "$d/trace.csv" sample summary verdict
}
