#!/usr/bin/env bash
# make demo: the live-stream push incident, reproduced between
# network namespaces, three times: with the receiver's delayed ACKs
# (quickack off), with a socket scope on the receiver's port (quickack on
# --port: no route touched, each hold capped at 2 jiffies), then with
# quickack on its route to the pusher. Prints the first and last verdicts
# side by side, the scope's below, with the paths of every output. Leaves
# nothing running and no namespace, qdisc, route change, socket scope or
# bpffs mount behind (repro/dip.sh cleans up, also on Ctrl-C);
# the outputs stay in $DEMO_OUT (default build/demo). DEMO_DURATION
# sets each run's seconds (30), DEMO_RTT a delay netem adds on the router
# (default native: the veth RTT), as repro/dip.sh --rtt takes it.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${DEMO_OUT:-build/demo}
DUR=${DEMO_DURATION:-30}
RTT=${DEMO_RTT:-native}
where="at the native veth RTT"
[ "$RTT" = native ] || where="with netem adding $RTT on the router"

if [ "$(id -u)" -ne 0 ]; then
	echo "demo: needs root (network namespaces and BPF)" >&2
	exit 3
fi
trap 'echo "demo: interrupted" >&2; exit 130' INT TERM
mkdir -p "$OUT" || exit 1

cat <<EOF
demo: a live push (pushsim: 4 Mbit/s, 20 fps, Nagle on, 4 KB RTMP-like chunks)
      to a receiver that sends application ACKs (ping-pong mode, as RTMP),
      over pusher -- router -- receiver namespaces $where.
      bbrtrace --detect watches BBR on the pusher; tcpdump captures the push.
      Run 1: quickack off (the kernel's delayed ACKs). Run 2: a socket scope
      on the receiver's port (quickack on --port: no route touched, each
      hold capped at 2 jiffies). Run 3: quickack on the receiver's route to
      the pusher. $DUR s each.

EOF
status=0
# both plots on the same axes, so that side by side they compare: rates from
# 0.01 Mbit/s (bbrplot's floor) to 100 Gbit/s (above a veth's estimates), and
# the run's seconds with one to spare for the trace's last ACKs
axes=0.01:100000:$((DUR + 1))
runs=(off on) port_run=false
if grep -qw cgroup2 /proc/self/mountinfo; then
	runs=(off port on) port_run=true
else
	echo "== the socket scope's run is left out: no cgroup v2 hierarchy is mounted (mount -t cgroup2 none /sys/fs/cgroup)"
fi
for qa in "${runs[@]}"; do
	echo "== quickack $qa"
	if ! repro/dip.sh --receiver app-ack --quickack "$qa" --duration "$DUR" --rtt "$RTT" --receiver-view \
		--plot-axes "$axes" --out "$OUT/quickack-$qa" --id "demo$qa" >"$OUT.quickack-$qa.log" 2>&1; then
		status=1
	fi
	sed 's/^/   /' "$OUT.quickack-$qa.log" | grep -vE '^   (The bandwidth|scenario|push:|receiver|outputs)' || true
	mv -f "$OUT.quickack-$qa.log" "$OUT/quickack-$qa/dip.log" 2>/dev/null
done
[ $status -eq 0 ] || { echo "demo: a run failed; see $OUT/quickack-*/dip.log" >&2; exit 1; }

# the two verdicts side by side
col() {
	local d=$OUT/quickack-$1
	{
		case $1 in
		port) echo "QUICKACK ON --PORT (a socket scope, no route touched)" ;;
		*) echo "QUICKACK $(echo "$1" | tr a-z A-Z)" ;;
		esac
		echo
		jq -r '"collapses: \(.collapses) in \(.elapsed_s|round) s (\(.collapses_per_min*10|round/10)/min)",
			(.throttling_by_cause as $t | .collapses_by_cause | to_entries
				| map("  \(.key): \(.value), \($t[.key]) throttling") | .[]),
			"throttled \(.throttled_s*1000|round) ms, \(.late_bytes/1000|round) kB held back",
			"push: \(.push.send.stalls) frames still unsent at the next,",
			"      \(.push.send.late_frames) late frames, goodput \(.push.send.goodput_bps/1e6*100|round/100) Mbit/s",
			(.push.recv // {} | select(.frame_latency_mean_us != null) |
			 "frame latency at the receiver, what a viewer feels:",
			 "      mean \(.frame_latency_mean_us / 100 | round / 10) ms, p99 \(.frame_latency_p99_us / 100 | round / 10) ms, max \(.frame_latency_max_us / 100 | round / 10) ms"),
			"receiver: \(.receiver_delayed_acks) delayed ACKs (its kernel)",
			(.wire_silences | "wire: \(.idle.count + .in_flight.count) silences of \(.min_ms) ms or more,",
			 "      \(.in_flight.count) of them waiting on an ACK")' "$d/verdict.json"
		echo
		head -1 "$d/verdict.txt" | fold -s -w 58 | sed 's/ *$//'
	}
}
echo
# two columns of 60 characters (widths counted in characters: the verdict has "≈")
side_by_side() {
	local LC_ALL=C.UTF-8 i n s
	local -a l r
	mapfile -t l < <(col off)
	mapfile -t r < <(col on)
	n=${#l[@]}
	[ ${#r[@]} -gt "$n" ] && n=${#r[@]}
	for ((i = 0; i < n; i++)); do
		s=${l[i]:-}
		if [ -n "${r[i]:-}" ]; then
			printf '%s%*s  %s\n' "$s" $((60 - ${#s})) '' "${r[i]}"
		else
			printf '%s\n' "$s"
		fi
	done
}
side_by_side
if $port_run; then
	echo
	col port
fi
echo
# the gain in one line: what a viewer feels, off against on
gain() {
	jq -rn --arg to "$1" --slurpfile a "$OUT/quickack-off/verdict.json" --slurpfile b "$OUT/quickack-$1/verdict.json" '
		def ms(k): (k / 100 | round / 10 | tostring) + " ms";
		def pair(k): "\($a[0].push.recv[k] | ms(.)) -> \($b[0].push.recv[k] | ms(.))";
		select($a[0].push.recv.frame_latency_mean_us != null and $b[0].push.recv.frame_latency_mean_us != null)
		| "quickack off -> \($to), frame latency at the receiver: mean \(pair("frame_latency_mean_us")), p99 \(pair("frame_latency_p99_us")), max \(pair("frame_latency_max_us"))"'
}
gain on
! $port_run || gain port
echo
# the same pushes from the ingest's side: ackhold, which an operator runs
# on the receiver without the pusher's host
echo "THE RECEIVER'S VIEW (ackhold, run on the ingest)"
for qa in "${runs[@]}"; do
	jq -r --arg qa "$qa" 'select(.type == "peer") |
		"quickack \($qa): \(.peer) \(.timer_holds + .app_holds) ACKs delayed (\(.timer_holds) by the timer), holding its data \(.held_ms | round) ms (\(.held_pct * 10 | round / 10)% of its time), longest \(.max_hold_ms * 10 | round / 10) ms"' \
		"$OUT/quickack-$qa/ackhold.jsonl"
done
jq -r 'select(.type == "verdict") | .text' "$OUT/quickack-off/ackhold.jsonl" | sed 's/\. Fix: .*/./' | fold -s -w 78 | sed 's/ *$//'
echo
for qa in "${runs[@]}"; do
	d=$OUT/quickack-$qa
	echo "quickack $qa: $d/{trace.jsonl,capture.pcap,capture-recv.pcap,ackhold.jsonl,gaps.jsonl,pushsim.json,verdict.txt,verdict.json}"
	[ -f "$d/dip.png" ] && echo "               plot: $d/dip.png"
done
exit 0
