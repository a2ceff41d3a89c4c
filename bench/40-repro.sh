#!/usr/bin/env bash
# The reproduction as a measurement: what quickack on the receiver's route buys
# a live push at the native veth RTT. Alternating repro/dip.sh runs, quickack
# off then on, app-ack receiver (RTMP-like, ping-pong mode), REPRO_BENCH_RUNS
# pairs (default 3) of REPRO_BENCH_SECS seconds (default 20). Per run:
# collapses of BBR's estimate per minute by cause (bbrtrace --detect), the
# sender's stalls, late frames and goodput, and the receiver's frame latency
# (scheduled send time to last byte read). The table gives the median and the
# range of each, off and on, and their ratio (off / on). The pairs alternate so
# that a change in the machine's load falls on both sides alike; the spread
# between pairs is the noise of a shared machine.
# CSV: build/bench/repro.csv, one row per run.
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
RUNS=${REPRO_BENCH_RUNS:-3}
SECS=${REPRO_BENCH_SECS:-20}
CSV=build/bench/repro.csv
tmp=$(mktemp -d /tmp/rp-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" -eq 0 ] || { echo "40-repro: needs root" >&2; exit 1; }
for t in pushsim bbrtrace quickack; do
	[ -x "bin/$t" ] || { echo "40-repro: bin/$t is missing: make" >&2; exit 1; }
done

echo "cores: $(nproc); load average: $(cut -d' ' -f1-3 /proc/loadavg) (a shared machine: see the ranges)"
echo "$RUNS pairs of $SECS s runs, quickack off then on; app-ack receiver, 4 Mbit/s, 20 fps, native veth RTT"
mkdir -p "$(dirname "$CSV")"
: >"$CSV"
# the header, once the first verdict names bbrtrace's causes (in its order)
csv_header() {
	jq -r '["pair", "quickack", "elapsed_s", "collapses"] + (.collapses_by_cause | keys_unsorted)
		+ ["delayed_ack_per_min", "collapses_per_min", "throttling", "throttled_s", "stalls",
		"late_frames", "goodput_bps", "frame_latency_mean_us", "frame_latency_max_us",
		"lost_events"] | join(",")' "$1"
}
for ((i = 1; i <= RUNS; i++)); do
	for qa in off on; do
		d=$tmp/$i-$qa
		# dip.sh does not take the machine-wide bbr_traced lock: the bench does
		if ! flock -w 900 "$BENCH_LOCK" repro/dip.sh --receiver app-ack --quickack "$qa" --duration "$SECS" \
			--out "$d" --id "bn$$$qa" --port 43400 >"$d.log" 2>&1; then
			echo "40-repro: pair $i quickack $qa failed: $(tail -1 "$d.log")" >&2
			exit 1
		fi
		lost=$(jq -s '[.[] | select(.type=="summary")][0].lost' "$d/trace.jsonl")
		[ -s "$CSV" ] || csv_header "$d/verdict.json" >"$CSV"
		jq -r --argjson i "$i" --arg qa "$qa" --argjson lost "$lost" '[$i, $qa, .elapsed_s, .collapses]
			+ (.collapses_by_cause | to_entries | map(.value))
			+ [(.collapses_by_cause.delayed_ack * 60 / .elapsed_s), .collapses_per_min,
			([.throttling_by_cause[]] | add), .throttled_s,
			.push.send.stalls, .push.send.late_frames, .push.send.goodput_bps,
			.push.recv.frame_latency_mean_us, .push.recv.frame_latency_max_us, $lost] | @csv' \
			"$d/verdict.json" | tr -d '"' >>"$CSV"
		echo "  pair $i, quickack $qa: $(jq -r '"\(.collapses_by_cause.delayed_ack) delayed_ack, \(.collapses_by_cause.other) other collapses, \(.push.send.stalls) stalls, frame latency max \(.push.recv.frame_latency_max_us / 1000) ms"' "$d/verdict.json")"
	done
done

# median (range) of the column named $1 for quickack $2, scaled by $3
stat() {
	awk -F, -v name="$1" -v q="$2" -v s="${3:-1}" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i; next }
		$2 == q { v[n++] = $c * s }
		END { if (!n) { print "nan nan nan"; exit }
			for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
			m = (n % 2) ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2
			print m, v[0], v[n - 1] }' "$CSV"
}
echo
printf '%-28s %-24s %-24s %10s\n' "per run (median, min..max)" "quickack off" "quickack on" "off / on"
row() { # label column-name scale format
	local off on ratio
	read -r om olo ohi < <(stat "$2" off "$3")
	read -r nm nlo nhi < <(stat "$2" on "$3")
	off=$(printf "$4 ($4..$4)" "$om" "$olo" "$ohi")
	on=$(printf "$4 ($4..$4)" "$nm" "$nlo" "$nhi")
	ratio=$(awk -v a="$om" -v b="$nm" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else if (a > 0) print "inf (on: 0)"; else print "-" }')
	printf '%-28s %-24s %-24s %10s\n' "$1" "$off" "$on" "$ratio"
}
row "delayed_ack collapses/min" delayed_ack_per_min 1 "%.1f"
row "all collapses/min" collapses_per_min 1 "%.1f"
row "throttling collapses" throttling 1 "%.0f"
row "time throttled ms" throttled_s 1e3 "%.0f"
row "stalls/min" stalls "$(awk -v s="$SECS" 'BEGIN { print 60 / s }')" "%.1f"
row "late frames" late_frames 1 "%.0f"
row "goodput Mbit/s" goodput_bps 1e-6 "%.2f"
row "frame latency mean ms" frame_latency_mean_us 1e-3 "%.1f"
row "frame latency max ms" frame_latency_max_us 1e-3 "%.1f"
row "lost trace events" lost_events 1 "%.0f"
echo "CSV: $CSV"
