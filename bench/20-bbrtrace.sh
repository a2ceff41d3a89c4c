#!/usr/bin/env bash
# bbrtrace benchmark, all figures from one run:
#  1. per-ACK cost of each backend's BPF programs from bpf_stats (ns/event),
#     and for struct_ops the tap's own cost: bbr_traced with the tap minus
#     bbr_traced without it (which is bbr_main plus the struct_ops call);
#     with --detect, the write tap's cost per write, as a ratio to that per ACK;
#  2. throughput of an iperf3 flow on bbr_traced while traced against bbr
#     untraced, in alternating runs (ratio; the aim is >= 0.97);
#  3. events per second that the user-space side decodes and writes (json and
#     csv, the median of 3 alternating runs, against the aim of 2M events/s).
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
BIN=$PWD/bin
BENCH_BIN=${BENCH_BIN:-build/rel/bench}
CSV=build/bench/bbrtrace.csv
NS=bt-bench-$$
PAIRS=${BBRTRACE_BENCH_PAIRS:-5}
SECS=${BBRTRACE_BENCH_SECS:-3}

cleanup() {
	bench_pair_down $NS
	rm -rf "$tmp"
}
tmp=$(mktemp -d)
trap cleanup EXIT
trap 'exit 130' INT TERM

bench_lock_bbr_traced

bench_pair_up $NS 10.202.0
ip netns exec $NS-b iperf3 -s -p 5201 -D -I "$tmp/iperf.pid" || exit 1
sleep 0.5

echo "cores: $(nproc); load average: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine inflates every figure)"
mkdir -p "$(dirname "$CSV")"
echo "metric,backend,value,unit" > "$CSV"

# 1. bpf_stats ----------------------------------------------------------------------------
# The same flow for every run: 100 Mbit/s in 500-byte segments (about 25,000
# packets/s), so that both variants see the same ACK rate; alternating runs.
stats_run() { # $1: extra bbrtrace options; prints bt_main's "ns/run runs"
	local out=$tmp/stats.jsonl
	"$BIN/bbrtrace" -b struct_ops --stats $1 -f json -o "$out" \
		-d $((SECS + 2)) --set-default-in $NS-a -q &
	local pid=$!
	for _ in $(seq 50); do
		[ "$(ip netns exec $NS-a sysctl -n net.ipv4.tcp_congestion_control)" = bbr_traced ] && break
		sleep 0.1
	done
	ip netns exec $NS-a iperf3 -c 10.202.0.2 -p 5201 -t $SECS -b 100M -M 500 -N -l 500 > /dev/null
	wait $pid
	jq -r 'select(.type=="prog_stats" and .program=="bt_main") | "\(.ns_per_run) \(.run_cnt)"' "$out"
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
printf '%-6s %22s %22s\n' "run" "no tap: ns/ACK (ACKs)" "tap: ns/ACK (ACKs)"
ref_all=() tap_all=()
for i in $(seq 3); do
	read -r ref_ns ref_runs < <(stats_run "--no-tap")
	read -r tap_ns tap_runs < <(stats_run "")
	ref_all+=("$ref_ns") tap_all+=("$tap_ns")
	printf '%-6s %13.1f (%6s) %13.1f (%6s)\n' "$i" "$ref_ns" "$ref_runs" "$tap_ns" "$tap_runs"
done
ref_ns=$(printf '%s\n' "${ref_all[@]}" | median)
tap_ns=$(printf '%s\n' "${tap_all[@]}" | median)
tap_cost=$(awk -v a="$tap_ns" -v b="$ref_ns" 'BEGIN {printf "%.1f", a - b}')
echo "struct_ops, medians: bbr_traced without the tap (bbr_main + struct_ops call) $ref_ns ns/ACK;"
echo "  with the tap $tap_ns ns/ACK; the tap's own cost $tap_cost ns/ACK (aim <= 100; step by step: bench/21-bbrtap.sh)"
echo "ns_per_ack_no_tap,struct_ops,$ref_ns,ns" >> "$CSV"
echo "ns_per_ack_tap,struct_ops,$tap_ns,ns" >> "$CSV"
echo "tap_cost,struct_ops,$tap_cost,ns" >> "$CSV"
# 1b. the write tap (--detect): ns per write against ns per ACK, in the same runs.
# iperf3 writes 500 bytes at a time, so writes come about as often as ACKs.
write_run() { # prints "ACK ns/run, write ns/run, writes, its program"
	local out=$tmp/wstats.jsonl
	"$BIN/bbrtrace" -b struct_ops --stats --detect -f json -o "$out" \
		-d $((SECS + 2)) --set-default-in $NS-a -q 2>/dev/null &
	local pid=$!
	for _ in $(seq 50); do
		[ "$(ip netns exec $NS-a sysctl -n net.ipv4.tcp_congestion_control)" = bbr_traced ] && break
		sleep 0.1
	done
	ip netns exec $NS-a iperf3 -c 10.202.0.2 -p 5201 -t $SECS -b 100M -M 500 -N -l 500 > /dev/null
	wait $pid
	jq -rs '[.[] | select(.type == "prog_stats")] as $p
		| ($p | map(select(.program == "bt_main")))[0] as $a
		| ($p | map(select(.program | startswith("bt_write"))))[0] as $w
		| "\($a.ns_per_run // "-") \($w.ns_per_run // "-") \($w.run_cnt // 0) \($w.program // "none")"' "$out"
}
echo
printf '%-6s %14s %16s %9s %8s\n' "run" "ns/ACK" "ns/write" "writes" "ratio"
wr_all=()
for i in $(seq 3); do
	read -r a_ns w_ns w_runs w_prog < <(write_run)
	[ "$w_prog" != none ] || { echo "no write tap here (see bbrtrace --help, Stalls)"; break; }
	r=$(awk -v w="$w_ns" -v a="$a_ns" 'BEGIN {printf "%.2f", w / a}')
	wr_all+=("$r")
	printf '%-6s %14.1f %16.1f %9s %8s\n' "$i" "$a_ns" "$w_ns" "$w_runs" "$r"
	echo "ns_per_write,$w_prog,$w_ns,ns" >> "$CSV"
done
if [ ${#wr_all[@]} -gt 0 ]; then
	wr=$(printf '%s\n' "${wr_all[@]}" | median)
	echo "write tap ($w_prog): median $wr x bbr_traced's ns per ACK in the same run"
	echo "write_over_ack_ratio_median,struct_ops,$wr,ratio" >> "$CSV"
fi

"$BIN/bbrtrace" --probe | while read -r name rest; do
	[ "$name" = struct_ops ] && continue
	printf '%-10s %s\n' "$name" "not measurable here: $rest"
	echo "ns_per_ack_tap,$name,,n/a" >> "$CSV"
done

# 2. throughput: bbr_traced traced vs bbr untraced, alternating ----------------------------
echo
printf '%-6s %16s %16s %8s\n' "pair" "bbr Mbit/s" "traced Mbit/s" "ratio"
ratios=()
for i in $(seq "$PAIRS"); do
	plain=$(ip netns exec $NS-a iperf3 -c 10.202.0.2 -p 5201 -t $SECS -C bbr -J |
		jq '.end.sum_received.bits_per_second / 1e6')
	"$BIN/bbrtrace" -b struct_ops -f json -o "$tmp/tp.jsonl" -d $((SECS + 2)) -q &
	pid=$!
	for _ in $(seq 50); do grep -qw bbr_traced /proc/sys/net/ipv4/tcp_available_congestion_control && break; sleep 0.1; done
	traced=$(ip netns exec $NS-a iperf3 -c 10.202.0.2 -p 5201 -t $SECS -C bbr_traced -J |
		jq '.end.sum_received.bits_per_second / 1e6')
	wait $pid
	samples=$(jq 'select(.type=="summary") | .samples' "$tmp/tp.jsonl")
	r=$(awk -v a="$traced" -v b="$plain" 'BEGIN {printf "%.3f", a / b}')
	ratios+=("$r")
	printf '%-6s %16.0f %16.0f %8s   (%s samples traced)\n' "$i" "$plain" "$traced" "$r" "$samples"
	echo "throughput_bbr,struct_ops,$plain,Mbit/s" >> "$CSV"
	echo "throughput_traced,struct_ops,$traced,Mbit/s" >> "$CSV"
done
median=$(printf '%s\n' "${ratios[@]}" | median)
echo "median throughput ratio traced/untraced: $median (aim >= 0.97)"
echo "throughput_ratio_median,struct_ops,$median,ratio" >> "$CSV"

# 3. user-space decode --------------------------------------------------------------------
# reorder + decode + write of 2M events from memory to /dev/null, json and csv
# alternating, 3 runs each; the median against the aim: 2M events/s
# per format, on one core
DECODE_AIM=2000000
echo
declare -A decode_rates
for i in $(seq 3); do
	for f in json csv; do
		line=$("$BENCH_BIN/bbrtrace_decode" 2000000 "$f")
		echo "user-space decode + write, run $i: $line"
		rate=$(awk '{print $6}' <<< "$line")
		decode_rates[$f]+="$rate "
		echo "decode_events_per_s,$f,$rate,events/s" >> "$CSV"
	done
done
for f in json csv; do
	median_rate=$(tr ' ' '\n' <<< "${decode_rates[$f]}" | grep . | median)
	printf 'decode %-4s median %10.0f events/s, %.2f x the aim of %d events/s\n' "$f" "$median_rate" \
		"$(awk -v a="$median_rate" -v b="$DECODE_AIM" 'BEGIN {print a / b}')" "$DECODE_AIM"
	echo "decode_events_per_s_median,$f,$median_rate,events/s" >> "$CSV"
done
