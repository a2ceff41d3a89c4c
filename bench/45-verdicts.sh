#!/usr/bin/env bash
# The verdicts against scenarios with a known answer: fresh repro/dip.sh runs
# between namespaces, each traced by bbrtrace --detect, and one table of
# scenario x cause x impact (a confusion table). Each cell is
# "collapses (of them throttling)"; `other %` is the share no named cause
# explains; `expected` is what the scenario should show.
#
#   scenario        what runs                                  expected
#   app-ack off     live push, RTMP-like receiver, quickack off throttling delayed_ack
#   app-ack on      the same, quickack on                      nothing throttles
#   app-ack 30 fps  the same at 30 fps, quickack off and on    off: Nagle stalls; on: none
#   prompt          a receiver that reads at once              nothing throttles
#   rate cut, shallow  htb 100 -> 10 Mbit/s mid-run, a 30 Mbit/s  throttling rate_drop
#                   push, a 20-packet queue (29 kB, 23 ms at 10 Mbit/s)
#   rate cut, deep  the same behind a 2000-packet queue (2.3 s), rate_drop, never delayed_ack
#                   with a 1 ms netem delay where the kernel has it
#   policer         tbf 20 Mbit/s, 30 Mbit/s push              throttling loss_policer
#   rtmp F fps B M Q  a real push, ffmpeg (libx264) into nginx-  harmless; quickack off: at most
#                   rtmp (dip.sh --push ffmpeg), F fps, B Mbit/s, one throttling delayed_ack (the
#                   quickack Q                                   RTMP handshake's held ACK)
#   htb burst bulk  iperf3 bulk through htb 200 Mbit/s with a  the burst's maximum is burst_max;
#                   64 kB burst (line rate after an idle gap)  nothing throttles, no rate_drop
#   htb burst 20M   the same, iperf3 at 20 Mbit/s (app-limited) nothing throttles
#   veth bulk       iperf3 bulk on the unshaped veth: the CPU   nothing throttles (it runs at the
#                   is the bottleneck, RTTs of microseconds    machine's speed), no rate_drop
#   veth 20 flows   20 bulk iperf3 flows on the same           nothing throttles the aggregate;
#                                                              other <= 5%
#   veth 20M        iperf3 at 20 Mbit/s, unshaped              nothing throttles
#   htb loss bulk   iperf3 bulk through htb 200 Mbit/s, 1%     nothing throttles (BBR keeps its
#                   random loss (dip.sh --loss: cls_bpf)       rate under 20% loss), no loss_policer
#   htb loss 20M    the same at 20 Mbit/s (app-limited)        nothing throttles
#   veth gro bulk   iperf3 bulk, unshaped, GRO on the          nothing throttles, no rate_drop
#                   receiver's veth: compressed ACKs
#   veth gro 20M    the same at 20 Mbit/s                      nothing throttles
#
# VERDICT_BENCH_SECS (default 20) per run; BENCH_VERDICT_ONLY=REGEX runs only the
# scenarios it matches (rtmp: the real pushes). Each run's verdict is printed
# verbatim as it ends, then the evidence of each collapse left `other`.
# CSV: build/bench/verdicts.csv.
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
SECS=${VERDICT_BENCH_SECS:-20}
CSV=build/bench/verdicts.csv
tmp=$(mktemp -d /tmp/vd-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" -eq 0 ] || { echo "45-verdicts: needs root" >&2; exit 1; }
for t in pushsim bbrtrace quickack; do
	[ -x "bin/$t" ] || { echo "45-verdicts: bin/$t is missing: make" >&2; exit 1; }
done
# netem for the deep queue: probed in a namespace of our own
deep=(--rtt 1ms)
ip netns add "vd-nq-$$" 2>/dev/null
ip netns exec "vd-nq-$$" tc qdisc add dev lo root netem delay 1ms 2>/dev/null || deep=()
ip netns del "vd-nq-$$" 2>/dev/null

# name|dip.sh options|expected
scenarios=(
	"app-ack off|--receiver app-ack --quickack off|throttling delayed_ack"
	"app-ack on|--receiver app-ack --quickack on|nothing throttles"
	"app-ack 30 fps off|--receiver app-ack --fps 30 --quickack off|Nagle stalls"
	"app-ack 30 fps on|--receiver app-ack --fps 30 --quickack on|nothing throttles, no stall"
	"prompt|--receiver prompt|nothing throttles"
	"rate cut, shallow|--receiver prompt --rate 100 --rate-change $((SECS / 2)):10 --bitrate-kbps 30000 --queue-packets 20|throttling rate_drop"
	"rate cut, deep|--receiver prompt --rate 100 --rate-change $((SECS / 2)):10 --bitrate-kbps 30000 --queue-packets 2000 ${deep[*]}|rate_drop, never delayed_ack"
	"policer|--receiver prompt --policer 20 --bitrate-kbps 30000|throttling loss_policer"
	"rtmp 20 fps 4M off|--push ffmpeg --fps 20 --bitrate-kbps 4000 --quickack off|harmless (handshake delayed_ack <= 1)"
	"rtmp 20 fps 4M on|--push ffmpeg --fps 20 --bitrate-kbps 4000 --quickack on|nothing throttles"
	"rtmp 60 fps 4M off|--push ffmpeg --fps 60 --bitrate-kbps 4000 --quickack off|harmless (handshake delayed_ack <= 1)"
	"rtmp 60 fps 4M on|--push ffmpeg --fps 60 --bitrate-kbps 4000 --quickack on|nothing throttles"
	"rtmp 20 fps 12M off|--push ffmpeg --fps 20 --bitrate-kbps 12000 --quickack off|harmless (handshake delayed_ack <= 1)"
	"rtmp 20 fps 12M on|--push ffmpeg --fps 20 --bitrate-kbps 12000 --quickack on|nothing throttles"
	"htb burst bulk|--push iperf3 --rate 200 --burst 65536|burst_max, nothing throttles"
	"htb burst 20M|--push iperf3 --rate 200 --burst 65536 --bitrate-kbps 20000|nothing throttles"
	"veth bulk|--push iperf3|nothing throttles, no rate_drop"
	"veth 20 flows|--push iperf3 --flows 20|nothing throttles"
	"veth 20M|--push iperf3 --bitrate-kbps 20000|nothing throttles"
	"htb loss bulk|--push iperf3 --rate 200 --loss 1|nothing throttles, no loss_policer"
	"htb loss 20M|--push iperf3 --rate 200 --loss 1 --bitrate-kbps 20000|nothing throttles"
	"veth gro bulk|--push iperf3 --gro on|nothing throttles, no rate_drop"
	"veth gro 20M|--push iperf3 --gro on --bitrate-kbps 20000|nothing throttles"
)
# BENCH_VERDICT_ONLY=REGEX: only the scenarios whose name matches (the real pushes: 'rtmp')
only=${BENCH_VERDICT_ONLY:-.}

echo "cores: $(nproc); load average: $(cut -d' ' -f1-3 /proc/loadavg); $SECS s per run"
[ ${#deep[@]} -gt 0 ] || echo "no sch_netem here: 'rate cut, deep' runs at the native RTT (its queue is pfifo's)"
mkdir -p "$(dirname "$CSV")"
: >"$CSV"
n=0
for sc in "${scenarios[@]}"; do
	IFS='|' read -r name opts expected <<<"$sc"
	[[ $name =~ $only ]] || continue
	d=$tmp/$n
	n=$((n + 1))
	# shellcheck disable=SC2086 # the options are words
	if ! flock -w 900 "$BENCH_LOCK" repro/dip.sh $opts --duration "$SECS" --out "$d" --id "vd$$$n" \
		--port $((43450 + n)) --no-plot >"$d.log" 2>&1; then
		echo "45-verdicts: '$name' failed: $(tail -1 "$d.log")" >&2
		exit 1
	fi
	[ -s "$CSV" ] || jq -r '["scenario", "expected", "collapses"]
		+ (.collapses_by_cause | keys_unsorted | map(., . + "_throttling"))
		+ ["other_share", "throttled_s", "late_bytes", "stalls", "nagle_stalls", "stalled_s", "verdict"]
		| join(",")' "$d/verdict.json" >"$CSV"
	jq -r --arg s "$name" --arg e "$expected" '[$s, $e, .collapses]
		+ ([.collapses_by_cause, .throttling_by_cause] as [$c, $t] | $c | keys_unsorted | map($c[.], $t[.]))
		+ [(if .collapses > 0 then .collapses_by_cause.other / .collapses else 0 end), .throttled_s,
		.late_bytes, ([.stalls_by_cause[]?] | add // 0), (.stalls_by_cause.nagle // 0), (.stalled_s // 0),
		(.text | split(";")[0:2] | join(";") | gsub(","; ""))] | @csv' "$d/verdict.json" >>"$CSV"
	cp "$d/verdict.txt" "$tmp/$name.txt" 2>/dev/null
	echo "$name: $(head -1 "$d/verdict.txt")"
	# what no named cause explains, with its evidence
	jq -r 'select(.type == "collapse" and .cause == "other") | "  other (\(.impact)): \(.evidence)"' \
		"$d/trace.jsonl"
done

# the table: a column per cause, "n (t)" = n collapses, t of them throttling
python3 - "$CSV" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
causes = [k for k in rows[0] if k not in ("scenario", "expected", "collapses", "other_share",
          "throttled_s", "late_bytes", "stalls", "nagle_stalls", "stalled_s", "verdict")
          and not k.endswith("_throttling")]
head = ["scenario", "collapses"] + causes + ["other %", "throttled", "stalls (nagle)", "stalled", "expected"]
out = [head]
for r in rows:
    out.append([r["scenario"], r["collapses"]]
               + [f'{r[c]} ({r[c + "_throttling"]})' for c in causes]
               + [f'{100 * float(r["other_share"]):.1f}', f'{float(r["throttled_s"]):.2f} s',
                  f'{r["stalls"]} ({r["nagle_stalls"]})', f'{float(r["stalled_s"]):.2f} s', r["expected"]])
w = [max(len(row[i]) for row in out) for i in range(len(head))]
for row in out:
    print("  ".join(v.ljust(w[i]) for i, v in enumerate(row)))
print("cells: collapses of that cause (of them throttling); stalls: the sender's, 10 ms or more (of them Nagle's)")
PY
echo "CSV: $CSV"
