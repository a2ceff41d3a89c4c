#!/usr/bin/env bash
# repro/sweep.sh: the matrix {RTT} x {quickack off, on} of repro/dip.sh runs,
# as a table (collapses per minute by cause, stalls, mean goodput) and a CSV.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PROG=sweep.sh

usage() {
	cat <<'EOF'
Usage: repro/sweep.sh [OPTIONS]

Runs repro/dip.sh for every RTT and for quickack off then on, and prints one
table row per run. Where the kernel has no sch_netem (as on the build
machine), the RTT axis collapses to `native`, and the table says so.

Options:
  --rtts "LIST"     RTTs to sweep (default "native 60us 200us 1ms")
  --receiver MODE   prompt | paced | app-ack (default app-ack)
  --duration S      seconds per run (default 30)
  --out DIR         where runs and results go (default build/sweep)
  --no-plot         no dip.png per run (bbrplot takes seconds on a slow CPU)
  -h, --help        this help

Outputs: DIR/RTT-quickack-on|off/ (each dip.sh run), DIR/sweep.txt (the
table) and DIR/sweep.csv, one row per run, with these columns:
  rtt                   the RTT asked for (native, 60us, ...)
  rtt_effective         the RTT applied: native when netem is missing
  quickack              on or off
  receiver              the receiver mode
  duration_s            seconds the trace ran
  collapses             collapses of BBR's estimate, all causes
  CAUSE_per_min         collapses per minute of each of bbrtrace's causes,
                        in its order: delayed_ack_per_min, rate_drop_per_min,
                        loss_policer_per_min, other_per_min,
                        lone_segment_per_min, max_expired_per_min,
                        sender_limited_per_min, ack_jitter_per_min,
                        burst_max_per_min
                        (bbrtrace --help)
  stalls                sender frame intervals that ended with unsent data
  late_frames           frames the sender started late
  goodput_bps           mean sender goodput (bytes ACKed x 8 / duration)
  receiver_delayed_acks ACKs the receiver's delayed-ACK timer sent (its
                        kernel's TcpExtDelayedACKs): 0 with quickack on
  dir                   the run's output directory

Where netem exists (e.g. a Debian or Ubuntu kernel with sch_netem), run as
root after `make`:   repro/sweep.sh --rtts "native 60us 200us 1ms"
The delay is added on the router's egress towards the receiver.
Exit status: 0 ok, 1 a run failed, 2 bad arguments, 130 interrupted.
EOF
}

rtts="native 60us 200us 1ms" receiver=app-ack duration=30 out=$ROOT/build/sweep dip_opts=()
while [ $# -gt 0 ]; do
	case $1 in
	--rtts) [ $# -ge 2 ] || { echo "$PROG: --rtts needs a value" >&2; exit 2; }; rtts=$2; shift ;;
	--receiver) [ $# -ge 2 ] || { echo "$PROG: --receiver needs a value" >&2; exit 2; }; receiver=$2; shift ;;
	--duration) [ $# -ge 2 ] || { echo "$PROG: --duration needs a value" >&2; exit 2; }; duration=$2; shift ;;
	--out) [ $# -ge 2 ] || { echo "$PROG: --out needs a value" >&2; exit 2; }; out=$2; shift ;;
	--no-plot) dip_opts+=(--no-plot) ;;
	-h | --help) usage; exit 0 ;;
	*) echo "$PROG: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done
for r in $rtts; do
	[ "$r" = native ] || [[ $r =~ ^[1-9][0-9]{0,5}(us|ms)$ ]] ||
		{ echo "$PROG: --rtts: '$r' is not native or a delay such as 60us, 1ms" >&2; exit 2; }
done
[ -n "$rtts" ] || { echo "$PROG: --rtts: the list is empty" >&2; exit 2; }
case $receiver in prompt | paced | app-ack) ;; *) echo "$PROG: --receiver: '$receiver' is not one of prompt|paced|app-ack" >&2; exit 2 ;; esac
[[ $duration =~ ^[0-9]{1,4}$ ]] && [ "$duration" -ge 1 ] && [ "$duration" -le 3600 ] ||
	{ echo "$PROG: --duration: '$duration' is not an integer in 1..3600" >&2; exit 2; }
# Ctrl-C reaches dip.sh too, which cleans up and exits 130: stop the sweep then
trap 'echo "$PROG: interrupted" >&2; exit 130' INT TERM
[ "$(id -u)" -eq 0 ] || { echo "$PROG: needs root" >&2; exit 1; }

# does this kernel have netem? (a throw-away namespace, removed at once)
probe=rp-netem-$$
netem=false
if ip netns add "$probe" 2>/dev/null; then
	ip netns exec "$probe" tc qdisc add dev lo root netem delay 1ms 2>/dev/null && netem=true
	ip netns del "$probe"
fi
note=""
if ! $netem; then
	note="sch_netem is missing in this kernel: the RTT axis collapses to native"
	echo "$PROG: $note"
	rtts=native
fi

mkdir -p "$out" || exit 1
csv=$out/sweep.csv
: >"$csv"
status=0
# the header, once the first run's verdict names bbrtrace's causes (in its order)
csv_header() {
	jq -r '["rtt", "rtt_effective", "quickack", "receiver", "duration_s", "collapses"]
		+ (.collapses_by_cause | keys_unsorted | map(. + "_per_min"))
		+ ["stalls", "late_frames", "goodput_bps", "receiver_delayed_acks", "dir"] | join(",")' "$1"
}
for r in $rtts; do
	for qa in off on; do
		d=$out/$r-quickack-$qa
		echo "$PROG: rtt $r, quickack $qa ..."
		"$ROOT/repro/dip.sh" --rtt "$r" --quickack "$qa" --receiver "$receiver" \
			--duration "$duration" --out "$d" "${dip_opts[@]}" >"$d.log" 2>&1
		rc=$?
		if [ $rc -eq 130 ]; then
			echo "$PROG: interrupted" >&2
			exit 130
		elif [ $rc -ne 0 ]; then
			echo "$PROG: run failed, see $d.log" >&2
			status=1
			continue
		fi
		mv -f "$d.log" "$d/dip.log"
		[ -s "$csv" ] || csv_header "$d/verdict.json" >"$csv"
		jq -r --arg d "$d" '.elapsed_s as $s | [.scenario.rtt, .scenario.rtt_effective,
			.scenario.quickack, .scenario.receiver, .elapsed_s, .collapses]
			+ (.collapses_by_cause | to_entries | map(.value * 60 / $s))
			+ [.push.send.stalls, .push.send.late_frames, .push.send.goodput_bps,
			.receiver_delayed_acks, $d] | @csv' \
			"$d/verdict.json" | tr -d '"' >>"$csv"
	done
done

{
	[ -n "$note" ] && echo "note: $note"
	# columns by name: one per cause, whatever causes bbrtrace has
	awk -F, 'NR == 1 {
		for (i = 1; i <= NF; i++) { col[$i] = i; if ($i ~ /_per_min$/) cause[++nc] = i }
		printf "%-8s %-8s %-8s", "rtt", "applied", "quickack"
		for (k = 1; k <= nc; k++) { h = $cause[k]; sub(/_per_min$/, "", h); printf " %13s", substr(h, 1, 9) "/min" }
		printf " %7s %9s %9s\n", "stalls", "Mbit/s", "rx-delack"
		next
	}
	{
		printf "%-8s %-8s %-8s", $1, $2, $3
		for (k = 1; k <= nc; k++) printf " %13.1f", $cause[k]
		printf " %7d %9.2f %9d\n", $col["stalls"], $col["goodput_bps"] / 1e6, $col["receiver_delayed_acks"]
	}' "$csv"
} | tee "$out/sweep.txt"
echo "table: $out/sweep.txt   csv: $csv"
exit $status
