#!/usr/bin/env bats
# The reproduction with netem, for real: repro/sweep.sh on a kernel that has
# sch_netem (the build machine's has not). The kernel matrix runs this file in
# a guest (tests/kernels/suites). Its CPU is emulated, slow and uneven: the
# test asserts behaviour and counts (rows, qdiscs, RTT floors, the receiver
# kernel's delayed-ACK count, the detector's causes), never speed or a curve.

load ../../bats/helpers
load repro_helpers

setup_file() {
	requires root netns btf bbr netem tcpdump jq tc
	tk_lock_bbr_traced
	export RP_OUT=$BATS_FILE_TMPDIR/runs
	mkdir -p "$RP_OUT"
}

teardown_file() {
	tk_unlock_bbr_traced
}

teardown() {
	rp_stop_runs
}

@test "sweep with netem on the router: a row per RTT and quickack as asked; quickack on leaves no delayed ACK, off the receiver holds ACKs" {
	local out=$RP_OUT/sweep seen=$RP_OUT/qdiscs.log secs=4 ns
	"$TK_ROOT/repro/sweep.sh" --rtts "native 1ms" --duration $secs --no-plot --out "$out" > "$RP_OUT/sweep.log" 2>&1 &
	BG_PIDS=$!
	# during the runs, every 3 s (each run lasts 15 s or more here, and a tc
	# costs a vCPU half a second): the qdiscs of each router's and pusher's
	# namespace (bounded: the four runs take one to three minutes)
	for _ in $(seq 200); do
		kill -0 "$BG_PIDS" 2>/dev/null || break
		for ns in $(ip netns list | awk '{print $1}' | grep -E '^rp-(rtr|push)-'); do
			tc -n "$ns" qdisc show 2>/dev/null | sed "s/^/$ns: /"
		done >> "$seen"
		sleep 3
	done
	wait "$BG_PIDS" || { cat "$RP_OUT/sweep.log"; BG_PIDS=; return 1; }
	BG_PIDS=
	sed 's/^/# /' "$out/sweep.txt" >&3
	# one row per RTT and quickack setting, each with the RTT asked for applied
	[ "$(tail -n +2 "$out/sweep.csv" | wc -l)" -eq 4 ]
	tail -n +2 "$out/sweep.csv" | cut -d, -f1-4 | sort | tr '\n' ' ' |
		grep -qx '1ms,1ms,off,app-ack 1ms,1ms,on,app-ack native,native,off,app-ack native,native,on,app-ack '
	# netem was on the router's egress towards the receiver, never on the pusher
	grep -qE '^rp-rtr-[0-9]+: qdisc netem [0-9a-f]+: dev v0 root .*delay 1ms' "$seen" ||
		{ echo "# no netem delay 1ms seen on a router's v0:"; sort -u "$seen" | sed 's/^/#   /'; return 1; }
	if grep -E '^rp-push-[0-9]+: qdisc netem' "$seen"; then echo "# netem on the pusher"; return 1; fi
	for qa in off on; do
		d=$out/1ms-quickack-$qa
		# the RTT BBR measured cannot be under netem's delay
		[ "$(min_rtt_us "$d/trace.jsonl")" -ge 1000 ] || { echo "# 1ms, quickack $qa: min rtt_us $(min_rtt_us "$d/trace.jsonl")"; return 1; }
		# and BBR's own min_rtt agrees
		jq -e -s '[.[] | select(.type == "sample" and .min_rtt_us > 0) | .min_rtt_us] |
			length > 0 and min >= 1000' "$d/trace.jsonl" > /dev/null
	done
	for r in native 1ms; do
		on=$out/$r-quickack-on/verdict.json off=$out/$r-quickack-off/verdict.json
		echo "# $r: quickack off: $(jq -c .collapses_by_cause "$off"), receiver $(jq .receiver_delayed_acks "$off") delayed ACKs; on: $(jq -c .collapses_by_cause "$on"), receiver $(jq .receiver_delayed_acks "$on")" >&3
		# the push ran kernel BBR, traced (whichever backend auto chose here)
		for v in "$on" "$off"; do
			jq -e --arg cc "$(push_cc_for "$(jq -r .scenario.backend "$v")")" \
				'.samples > 0 and .push.send.cc == $cc' "$v" > /dev/null
		done
		# quickack on: the receiver's kernel held no ACK (its TcpExtDelayedACKs,
		# the ground truth), and at most one collapse in five of quickack off's
		# (and one at least) is blamed on one: under emulation a starved vCPU
		# can send an immediate ACK 10 ms late, which no sender can tell from a
		# held one (seen once: 1 delayed_ack, the receiver's timer silent)
		jq -e --argjson off "$(jq .collapses_by_cause.delayed_ack "$off")" \
			'.receiver_delayed_acks == 0 and .collapses_by_cause.delayed_ack <= ([$off / 5 | floor, 1] | max)' \
			"$on" > /dev/null ||
			{ echo "# $r, quickack on:"; jq -c '{receiver_delayed_acks, collapses_by_cause}' "$on"
			  jq -c 'select(.type == "collapse" and .cause == "delayed_ack")' "$out/$r-quickack-on/trace.jsonl"; return 1; }
		# quickack off: it held ACKs, and the detector's delayed_ack records (a
		# short run may have none: repro_demo asserts them) obey their rule
		jq -e '.receiver_delayed_acks > 0' "$off" > /dev/null
		delayed_ack_records_ok "$out/$r-quickack-off/trace.jsonl"
	done
}
