#!/usr/bin/env bats
# tier: check
# The kernel matrix's clean-up check (tests/kernels/snapshot.bash, run by
# tests/kernels/suites.sh before and after each guest suite) against the
# commands it replaced: ip, ps, bpftool, tc and sort, a pipeline per line.
# Run on the host: the same bash, procfs and bpftool as in a guest, and a
# struct_ops tracer here costs 0.1 s where a guest takes tens of seconds.

load helpers

NS=tk-snap-$$

setup_file() {
	requires root netns bpftool struct_ops
	tk_lock_bbr_traced
}

teardown_file() { tk_unlock_bbr_traced; }

setup() { . "$TK_ROOT/tests/kernels/snapshot.bash"; }

teardown() {
	[ -z "${TRACER:-}" ] || { kill -INT "$TRACER" 2> /dev/null; wait "$TRACER" 2> /dev/null; }
	ip netns del "$NS-b" 2> /dev/null
	ip netns del "$NS-a" 2> /dev/null
	true
}

# the snapshot as the witness commands make it
witness_snapshot() {
	echo "netns: $(ip netns list 2>/dev/null | awk '{print $1}' | sort | tr '\n' ' ')"
	echo "default cc: $(sysctl -n net.ipv4.tcp_congestion_control)"
	echo "available cc: $(tr ' ' '\n' < /proc/sys/net/ipv4/tcp_available_congestion_control | grep -v '^$' | sort | tr '\n' ' ')"
	echo "bpf programs: $(bpftool prog show 2>/dev/null | awk '$2 ~ /^(tracing|kprobe|struct_ops|tracepoint|raw_tracepoint|sched_cls|perf_event)$/ && $3 == "name" {print $4}' | sort | tr '\n' ' ')"
	echo "struct_ops: $(bpftool struct_ops show 2>/dev/null | awk '{print $2}' | sort | tr '\n' ' ')"
	echo "qdiscs on lo: $(tc qdisc show dev lo | awk '{print $2}' | tr '\n' ' ')"
	echo "processes: $(ps -eo comm= | grep -xE 'bbrtrace|bbrtrace-guard|udpdwell|iperf3|tcpdump|pushsim|sfu_echo|rtpsend|upfbench|bbrpcap|qa-.*|nginx|ffmpeg' | sort | tr '\n' ' ')"
}

# tk_snapshot into SNAP and the witness's into WITNESS, taken between two
# witness snapshots. Other tests on this host may change what all three
# read between two reads, and change it back: a process that exits while
# tk_snapshot reads, as another of its name starts (upfbench.bats runs
# upfbench after upfbench beside this file). So a try counts when all three
# agree; after 10 tries, the caller compares the last one's, which a
# snapshot that reads wrong makes differ in every try.
snapshot_pair() {
	local i w
	for ((i = 0; i < 10; i++)); do
		WITNESS=$(witness_snapshot)
		SNAP=$(tk_snapshot)
		w=$(witness_snapshot)
		[ "$w" = "$WITNESS" ] && [ "$SNAP" = "$WITNESS" ] && return 0
	done
	[ "$w" = "$WITNESS" ] || echo "# the system changed during the last try's pair of witness snapshots"
	return 0
}

@test "the clean-up check's snapshot equals the witness commands' on this host, as it is" {
	snapshot_pair
	expect_equal "$SNAP" "$WITNESS"
}

@test "the clean-up check's snapshot sees namespaces, BPF programs, a struct_ops, a congestion control and a process" {
	local want
	ip netns add "$NS-b"
	ip netns add "$NS-a"
	bbrtrace -b struct_ops -f json -o /dev/null -d 60 -q &
	TRACER=$!
	tk_wait_for "grep -qw bbr_traced /proc/sys/net/ipv4/tcp_available_congestion_control" 20
	snapshot_pair
	expect_equal "$SNAP" "$WITNESS"
	for want in "netns: .*$NS-a $NS-b " "available cc: .*bbr_traced " "bpf programs: .*bt_main " \
		"struct_ops: .*bbr_traced " "processes: .*bbrtrace "; do
		grep -qx "$want.*" <<< "$SNAP" || { echo "# no line '$want' in:"; echo "$SNAP" | sed 's/^/#   /'; return 1; }
	done
	teardown
	TRACER=
	# once they are gone, they are gone from it (bbrtrace's guard ends a
	# moment after bbrtrace: suites.sh allows 5 s); other tests on this host
	# may have changed the rest since the first snapshot
	tk_wait_for '! tk_snapshot | grep -qE "$NS-|bbr_traced"' 5 || true
	snapshot_pair
	expect_equal "$SNAP" "$WITNESS"
	if grep -E "$NS-|bbr_traced" <<< "$SNAP"; then echo "# left in the snapshot"; return 1; fi
}
