#!/usr/bin/env bash
# Where the struct_ops tap's cycles go, per ACK: bbr_traced loaded with the tap
# stopped after each stage in turn (enum bt_tap_stop in bpf/contract/bbrtrace.h,
# by bench/bbrtap_stages), one iperf3 flow between namespaces per run, bt_main's
# ns/run from bpf_stats. Every stage is run once per round, in alternating
# order, over BBRTAP_BENCH_ROUNDS rounds; a step's cost is the median over the
# rounds of the difference between two consecutive stages, which ran next to
# each other, all from this run.
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
STAGES=${BENCH_BIN:-build/rel/bench}/bbrtap_stages
CSV=build/bench/bbrtap.csv
NS=bt-tap-$$
ROUNDS=${BBRTAP_BENCH_ROUNDS:-3}
SECS=${BBRTAP_BENCH_SECS:-3}
# stage names in the order of enum bt_tap_stop's steps; "none" is no tap, 0 the whole tap
ORDER=(${BBRTAP_STAGES:-none 1 2 3 4 5 6 0})
RINGBUF_MB=${BBRTAP_RINGBUF_MB:-8}
# BBRTAP_OTHER="PATH...": other builds of bbrtap_stages (e.g. before a change),
# whose whole tap runs in every round too, as stages o1, o2, ...
read -r -a OTHER <<< "${BBRTAP_OTHER:-}"
for i in "${!OTHER[@]}"; do ORDER+=("o$((i + 1))"); done
declare -A NAME=([none]="no tap (bbr_main + call)" [1]="filter: bw before, cookie, ports, addrs"
	[2]="slot in the per-CPU batch" [3]="copy to the ring buffer /16" [4]="clock read"
	[5]="flow + tcp_sock fields" [6]="rate_sample fields" [0]="bbr fields (whole tap)"
	)
for i in "${!OTHER[@]}"; do NAME[o$((i + 1))]="whole tap: o$((i + 1))"; done

cleanup() {
	bench_pair_down $NS
	[ -n "${loader:-}" ] && kill "$loader" 2>/dev/null
	rm -rf "$tmp"
}
tmp=$(mktemp -d)
trap cleanup EXIT
trap 'exit 130' INT TERM

[ -x "$STAGES" ] || { echo "no $STAGES: run make bench"; exit 1; }
"$STAGES" check || exit 1 # the kernel's bbr_main takes 4 arguments
bench_lock_bbr_traced

bench_pair_up $NS 10.203.0
ip netns exec $NS-b iperf3 -s -p 5201 -D -I "$tmp/iperf.pid" || exit 1
sleep 0.5

# one run: prints "ns/run runs" of bt_main with the tap stopped at $1
stage_run() {
	local out=$tmp/stage.out
	if [[ $1 == o* ]]; then
		"${OTHER[${1#o} - 1]}" 0 $((SECS + 2)) "$RINGBUF_MB" > "$out" &
	else
		"$STAGES" "$1" $((SECS + 2)) "$RINGBUF_MB" > "$out" &
	fi
	loader=$!
	# loading takes a few seconds on a busy machine; the loader exits after SECS + 2
	for _ in $(seq 150); do grep -q ready "$out" && break; sleep 0.1; done
	# the same flow as bench/20-bbrtrace.sh part 1: 100 Mbit/s in 500-byte segments
	ip netns exec $NS-a iperf3 -c 10.203.0.2 -p 5201 -t $SECS -b 100M -M 500 -N -l 500 \
		-C bbr_traced > /dev/null
	wait $loader
	loader=
	tail -n 1 "$out"
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "ring buffer $RINGBUF_MB MiB; cores: $(nproc); load average: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine inflates every figure)"
declare -A ALL V # ALL[stage]: its figures; V[stage,round]: one figure
for r in $(seq "$ROUNDS"); do
	order=("${ORDER[@]}")
	((r % 2 == 0)) && order=($(printf '%s\n' "${ORDER[@]}" | tac))
	for s in "${order[@]}"; do
		read -r ns runs < <(stage_run "$s")
		# a run whose flow could not opt in (bbr_traced not yet registered) has no ACKs
		[ "${runs:-0}" -gt 0 ] && ALL[$s]+="$ns " V[$s,$r]=$ns
		printf 'round %d  %-42s %7.1f ns/ACK (%s ACKs)\n' "$r" "${NAME[$s]}" "$ns" "$runs"
	done
done

# median over the rounds of stage $1's figure minus stage $2's in the same
# round: the two ran next to each other, so the load that drifts between
# rounds cancels
paired() {
	local r d=()
	for r in $(seq "$ROUNDS"); do
		[ -n "${V[$1,$r]:-}" ] && [ -n "${V[$2,$r]:-}" ] &&
			d+=("$(awk -v a="${V[$1,$r]}" -v b="${V[$2,$r]}" 'BEGIN {printf "%.1f", a - b}')")
	done
	[ ${#d[@]} -gt 0 ] && printf '%s\n' "${d[@]}" | median || echo -
}

mkdir -p "$(dirname "$CSV")"
echo "stage,ns_per_ack_median,step_ns_paired_median" > "$CSV"
echo
printf '%-42s %14s %22s\n' "stage (cumulative)" "median ns/ACK" "step ns/ACK (paired)"
prev=
for s in "${ORDER[@]}"; do
	[[ $s == o* ]] && continue
	m=$(printf '%s\n' ${ALL[$s]:-} | median)
	step=$([ -n "$prev" ] && paired "$s" "$prev" || echo -)
	printf '%-42s %14s %22s\n' "${NAME[$s]}" "$m" "$step"
	echo "\"${NAME[$s]}\",$m,$step" >> "$CSV"
	prev=$s
done
if [ -n "${ALL[none]:-}" ] && [ -n "${ALL[0]:-}" ]; then
	cost=$(paired 0 none)
	echo "the tap's own cost (whole tap - no tap, paired by round): $cost ns/ACK (aim <= 100)"
	echo "tap_cost,,$cost" >> "$CSV"
fi
for i in "${!OTHER[@]}"; do
	o=o$((i + 1))
	[ -n "${ALL[$o]:-}" ] || continue
	echo "$o = ${OTHER[$i]}: whole tap median $(printf '%s\n' ${ALL[$o]} | median) ns/ACK;" \
		"minus this build's whole tap, paired by round: $(paired "$o" 0) ns/ACK"
	echo "\"$o ${OTHER[$i]} - whole tap\",,$(paired "$o" 0)" >> "$CSV"
done
