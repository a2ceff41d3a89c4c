#!/usr/bin/env bats
# bbrtrace's three backends on the same flows at once: fentry and kprobe tap
# bbr_main itself, so they see every call, whoever makes it; struct_ops's
# bbr_traced calls bbr_main through its kfunc, so a flow on bbr_traced is
# seen by all three. Their records must be the same, ACK for ACK, but for the
# time each took its stamp. Needs kprobes and fentry: the kernel matrix runs
# this file in its guests (tests/kernels/suites).

load ../../bats/helpers

NS=ba-${BATS_ROOT_PID}

setup_file() {
	requires root netns btf bbr struct_ops kprobe fentry iperf3 jq
	tk_lock_bbr_traced
	tk_netns_pair "$NS"
}

teardown_file() {
	tk_cleanup
	tk_unlock_bbr_traced
}

teardown() {
	tk_end_test_processes "$NS"
	return 0
}

# start BACKEND OUT EXTRA...: a tracer in the background, back once it traces
start() {
	local b=$1 out=$2
	shift 2
	bbrtrace -b "$b" -f json -o "$out" "$@" 2> "$out.err" &
	PIDS+=($!)
	tk_wait_for "grep -q 'bbrtrace: backend $b' '$out.err'" 60 || { cat "$out.err"; return 1; }
}

# the records of one connection (local port $2) of trace $1, without the
# stamps each backend takes at its own moment, one line per ACK, sorted
records() {
	jq -r "select(.type==\"sample\" and .sport==$2) | del(.type, .t_ns, .wall_ns) |
		to_entries | map(\"\(.key)=\(.value)\") | join(\" \")" "$1" | sort
}

# the connection with the most samples to port $2 in trace $1
data_port() {
	jq -r "select(.type==\"sample\" and .dport==$2) | .sport" "$1" | sort | uniq -c | sort -rn | awk 'NR==1 {print $2}'
}

# same A B: the two backends' records of connection $3 are identical
same() {
	local a=$1 b=$2 port=$3 na nb
	records "$BATS_TEST_TMPDIR/$a.jsonl" "$port" > "$BATS_TEST_TMPDIR/$a.rec"
	records "$BATS_TEST_TMPDIR/$b.jsonl" "$port" > "$BATS_TEST_TMPDIR/$b.rec"
	na=$(wc -l < "$BATS_TEST_TMPDIR/$a.rec")
	nb=$(wc -l < "$BATS_TEST_TMPDIR/$b.rec")
	echo "# port $port: $a $na samples, $b $nb samples" >&3
	[ "$na" -gt 100 ] || { echo "# too few samples from $a"; return 1; }
	if ! diff -q "$BATS_TEST_TMPDIR/$a.rec" "$BATS_TEST_TMPDIR/$b.rec" > /dev/null; then
		echo "# $a and $b differ ($na vs $nb records); the first differences:"
		diff "$BATS_TEST_TMPDIR/$a.rec" "$BATS_TEST_TMPDIR/$b.rec" | head -8 | cut -c1-400
		return 1
	fi
}

@test "one flow on bbr_traced, traced by fentry, kprobe and struct_ops at once: the same record for every ACK" {
	PIDS=()
	ip netns exec "$NS-b" iperf3 -s -1 -p 5201 -D
	tk_wait_listen 5201 5 "$NS-b"
	start fentry "$BATS_TEST_TMPDIR/fentry.jsonl"
	start kprobe "$BATS_TEST_TMPDIR/kprobe.jsonl"
	start struct_ops "$BATS_TEST_TMPDIR/struct_ops.jsonl" --set-default-in "$NS-a"
	tk_wait_for "[ \$(ip netns exec $NS-a sysctl -n net.ipv4.tcp_congestion_control) = bbr_traced ]" 10
	ip netns exec "$NS-a" iperf3 -c 10.201.0.2 -p 5201 -t 2 -b 200M > /dev/null
	sleep 1
	kill -INT "${PIDS[@]}"
	for p in "${PIDS[@]}"; do wait "$p"; done
	for b in fentry kprobe struct_ops; do
		jq -e 'select(.type=="summary") | .lost == 0' "$BATS_TEST_TMPDIR/$b.jsonl" > /dev/null ||
			{ echo "# $b lost events"; false; }
	done
	port=$(data_port "$BATS_TEST_TMPDIR/struct_ops.jsonl" 5201)
	[ -n "$port" ]
	same fentry kprobe "$port"
	same fentry struct_ops "$port"
}

@test "one flow on kernel bbr, traced by fentry and kprobe at once: the same record for every ACK" {
	PIDS=()
	ip netns exec "$NS-b" iperf3 -s -1 -p 5202 -D
	tk_wait_listen 5202 5 "$NS-b"
	start fentry "$BATS_TEST_TMPDIR/fentry.jsonl"
	start kprobe "$BATS_TEST_TMPDIR/kprobe.jsonl"
	ip netns exec "$NS-a" iperf3 -c 10.201.0.2 -p 5202 -t 2 -b 200M -C bbr > /dev/null
	sleep 1
	kill -INT "${PIDS[@]}"
	for p in "${PIDS[@]}"; do wait "$p"; done
	port=$(data_port "$BATS_TEST_TMPDIR/fentry.jsonl" 5202)
	[ -n "$port" ]
	same fentry kprobe "$port"
}
