#!/usr/bin/env bash
# ackhold benchmark: the per-event cost of each of its BPF programs, from
# bpf_stats (ackhold --stats), on one iperf3 flow between namespaces,
# 100 Mbit/s in 500-byte segments (about 25,000 segments/s and as many
# ACKs at the receiver's delayed-ACK pace), in alternating runs of two kinds:
#   traced: ackhold --port on the flow's port: every segment is a traced
#           flow's, every ACK one it checks;
#   other:  ackhold --port on a port nothing uses: what a host's other
#           traffic costs (the filter alone).
# Figures: ns per run of each program, median of the runs; the ratio of
# the other-port run to the traced one, program by program. Every
# tracepoint runs host-wide: net_dev_start_xmit for each packet the host
# sends (the sender's data too), net_dev_queue for each too (one load while
# no traced flow's delayed-ACK timer runs), timer_expire_entry and _exit for
# each timer.
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
BIN=$PWD/bin
CSV=build/bench/ackhold.csv
NS=ah-bench-$$
RUNS=${ACKHOLD_BENCH_RUNS:-3}
SECS=${ACKHOLD_BENCH_SECS:-3}
PORT=5201 OTHER=5999

cleanup() {
	bench_pair_down $NS
	rm -rf "$tmp"
}
tmp=$(mktemp -d)
trap cleanup EXIT
trap 'exit 130' INT TERM

bench_pair_up $NS 10.203.0
ip netns exec $NS-b iperf3 -s -p $PORT -D -I "$tmp/iperf.pid" || exit 1
for _ in $(seq 50); do
	ip netns exec $NS-b ss -Hltn "sport = :$PORT" | grep -q . && break
	sleep 0.1
done

echo "cores: $(nproc); load average: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine inflates every figure)"
mkdir -p "$(dirname "$CSV")"
echo "metric,program,value,unit" > "$CSV"

# one run: ackhold on port $1 around the flow; prints "program ns/run runs", one a line
stats_run() {
	local out=$tmp/stats.jsonl
	"$BIN/ackhold" --port "$1" --stats --records none -f json -o "$out" -d $((SECS + 2)) 2> "$tmp/err" &
	local pid=$!
	for _ in $(seq 100); do
		grep -q 'tracing the ACKs' "$tmp/err" && break
		kill -0 $pid 2> /dev/null || break
		sleep 0.1
	done
	ip netns exec $NS-a iperf3 -c 10.203.0.2 -p $PORT -t $SECS -b 100M -M 500 -N -l 500 > /dev/null
	wait $pid || { echo "ackhold failed:" >&2; cat "$tmp/err" >&2; return 1; }
	jq -r 'select(.type == "prog_stats") | "\(.program) \(.ns_per_run) \(.run_cnt)"' "$out"
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

: > "$tmp/all"
for i in $(seq "$RUNS"); do
	for kind in traced other; do
		port=$PORT
		[ $kind = other ] && port=$OTHER
		stats_run $port | sed "s/^/$kind /" >> "$tmp/all" || exit 1
	done
done

printf '%-14s %16s %16s %9s\n' "program" "traced ns/run" "other ns/run" "other/traced"
for prog in $(awk '{print $2}' "$tmp/all" | sort -u); do
	t=$(awk -v p="$prog" '$1 == "traced" && $2 == p {print $3}' "$tmp/all" | median)
	o=$(awk -v p="$prog" '$1 == "other" && $2 == p {print $3}' "$tmp/all" | median)
	n=$(awk -v p="$prog" '$1 == "traced" && $2 == p {print $4}' "$tmp/all" | median)
	r=$(awk -v a="$o" -v b="$t" 'BEGIN {if (a != "" && b > 0) printf "%.2f", a / b; else print "-"}')
	printf '%-14s %9.1f (%5s) %16s %9s\n' "$prog" "${t:-0}" "$n" "${o:--}" "$r"
	echo "ns_per_run_traced,$prog,$t,ns" >> "$CSV"
	echo "ns_per_run_other,$prog,$o,ns" >> "$CSV"
done
echo "(runs in parentheses: the traced runs' median count; medians of $RUNS runs of ${SECS} s each)"
