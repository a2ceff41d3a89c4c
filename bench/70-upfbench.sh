#!/usr/bin/env bash
# upfbench at 2.2M sessions on one worker (issue 7), in one run of this script:
#   - the memory floor (cycles per random DRAM access, 1 and many outstanding);
#   - the incident's "before" design (global, fat, batch 1, no prefetch) against
#     the best design, with the steps in between; aim: >= 5x fewer cycles/packet;
#   - the project's table against rte_hash bulk lookup, same keys; aim: <= 0.5x;
#   - the best design as a multiple of the floor; aim: <= 3x. The same design
#     with 1000 sessions (all in cache) is run too: its compute alone.
# Each sweep is repeated (REPEAT, default 5) and the median is reported: the
# machine is shared, so look at the ratios, cpu_share and the load average.
#   SESSIONS=2.2M PACKETS=10M REPEAT=5 bench/70-upfbench.sh
set -uo pipefail
cd "$(dirname "$0")/.."
out=build/bench
mkdir -p "$out"
B=bin/upfbench
SESSIONS=${SESSIONS:-2.2M}
PACKETS=${PACKETS:-10M}
REPEAT=${REPEAT:-5}

[ -x "$B" ] || { echo "70-upfbench: $B is not built"; exit 1; }
presets=before,affinity,batched,split,best,sharded
lookup_tables=own
# not "--help | grep -q": with pipefail, grep's early exit can fail the pipeline
help=$("$B" --help)
if [[ $help == *"rte_hash (DPDK; built in)"* ]]; then
	presets=$presets,rte,before-rte
	lookup_tables=own,rte_hash
else
	echo "70-upfbench: upfbench was built without DPDK: rte_hash left out"
fi

thp=$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)
echo "machine: $(nproc) CPUs, L3 $(getconf LEVEL3_CACHE_SIZE 2>/dev/null | awk '{printf "%.0f MiB", $1/1048576}'), THP $thp, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

# median of column $2 for rows whose column 1 is $3, over CSV files $4...
median() {
	local colname=$1 label=$2
	shift 2
	awk -F, -v c="$colname" -v l="$label" '
		FNR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next }
		$1 == l && $k != "" { v[n++] = $k }
		END {
			if (!n) { print "-"; exit }
			for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
			print (n % 2) ? v[int(n / 2)] : (v[n / 2 - 1] + v[n / 2]) / 2
		}' "$@"
}

sweeps=() lookups=() cached=()
for r in $(seq 1 "$REPEAT"); do
	f=$out/upfbench-sweep-$r.csv
	echo "-- sweep $r/$REPEAT: $presets at $SESSIONS sessions, $PACKETS packets each, 1 worker"
	if ! "$B" sweep --sessions "$SESSIONS" --packets "$PACKETS" --workers 1 --presets "$presets" \
		-f csv -o "$f" 2> "$out/upfbench-sweep-$r.log"; then
		cat "$out/upfbench-sweep-$r.log"
		exit 1
	fi
	grep "memory floor" "$out/upfbench-sweep-$r.log" | sed 's/^upfbench: /   /'
	sweeps+=("$f")
	f=$out/upfbench-lookup-$r.csv
	if ! "$B" lookup --sessions "$SESSIONS" --tables "$lookup_tables" --batch 1,32 -f csv -o "$f" 2> "$out/upfbench-lookup-$r.log"; then
		cat "$out/upfbench-lookup-$r.log"
		exit 1
	fi
	lookups+=("$f")
	# the same design with every session in cache: its compute alone, in this run
	f=$out/upfbench-cached-$r.csv
	if ! "$B" run --preset best --sessions 1000 --packets "$PACKETS" --floor-mib 0 -f csv -q -o "$f" 2> "$out/upfbench-cached-$r.log"; then
		cat "$out/upfbench-cached-$r.log"
		exit 1
	fi
	cached+=("$f")
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

summary=$out/upfbench.csv
echo "label,cycles_per_pkt,mpps,rx_cycles,parse_cycles,lookup_cycles,rules_cycles,counters_cycles,floor_cycles,floor_multiple,identity_ratio,hugepages_kib,cpu_share,cpu_cycles_per_pkt" > "$summary"
echo
echo "== cycles per packet at $SESSIONS sessions, 1 worker (median of $REPEAT; TSC cycles; rx is the generator, as a NIC's receive)"
printf '%-11s %9s %7s %5s %6s %7s %6s %6s %8s %6s %7s %5s %8s\n' design cyc/pkt Mpps rx parse lookup rules cntrs "x floor" ident "THP MiB" cpu "cpu cyc"
for p in ${presets//,/ }; do
	row=$p
	for c in cycles_per_pkt mpps rx_cycles parse_cycles lookup_cycles rules_cycles counters_cycles floor_cycles \
		floor_multiple identity_ratio hugepages_kib cpu_share cpu_cycles_per_pkt; do
		row=$row,$(median $c "$p" "${sweeps[@]}")
	done
	echo "$row" >> "$summary"
	echo "$row" | awk -F, '{ printf "%-11s %9.1f %7.2f %5.1f %6.1f %7.1f %6.1f %6.1f %8.2f %6.2f %7.0f %5.2f %8.1f\n",
		$1, $2, $3, $4, $5, $6, $7, $8, $10, $11, $12 / 1024, $13, $14 }'
done

echo
# median of column $1 over the lookup rows of table $2 at batch $3
median_lookup() {
	awk -F, -v c="$1" -v t="$2" -v b="$3" '
		FNR == 1 { for (i = 1; i <= NF; i++) { if ($i == c) k = i; if ($i == "batch") kb = i }; next }
		$1 == t && $kb == b { v[n++] = $k }
		END {
			if (!n) { print "-"; exit }
			for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (v[j] < v[i]) { t2 = v[i]; v[i] = v[j]; v[j] = t2 }
			print (n % 2) ? v[int(n / 2)] : (v[n / 2 - 1] + v[n / 2]) / 2
		}' "${lookups[@]}"
}
echo
echo "== session table alone: cycles per lookup at $SESSIONS keys, same keys (median of $REPEAT)"
printf '%-9s %12s %12s %11s %10s\n' table "single cyc" "bulk32 cyc" single/bulk "table MiB"
for t in ${lookup_tables//,/ }; do
	one=$(median_lookup cycles_per_lookup "$t" 1)
	bulk=$(median_lookup cycles_per_lookup "$t" 32)
	mib=$(median_lookup table_bytes "$t" 32)
	awk -v t="$t" -v o="$one" -v b="$bulk" -v m="$mib" 'BEGIN {
		printf "%-9s %12.1f %12.1f %11.2f %10.1f\n", t, o, b, o / b, m / 1048576 }'
done

before=$(median cycles_per_pkt before "${sweeps[@]}")
best=$(median cycles_per_pkt best "${sweeps[@]}")
best_cpu=$(median cpu_cycles_per_pkt best "${sweeps[@]}")
best_rx=$(median rx_cycles best "${sweeps[@]}")
best_multiples=$(median floor_multiple best "${sweeps[@]}")
# every run's own multiple (its cycles over the floor of its own sweep), lowest and highest
mult_range=$(awk -F, 'FNR == 1 { for (i = 1; i <= NF; i++) if ($i == "floor_multiple") k = i; next }
	$1 == "best" && $k != "" { v = $k + 0; if (!n++ || v < lo) lo = v; if (v > hi) hi = v }
	END { if (n) printf "%.2fx to %.2fx", lo, hi; else print "-" }' "${sweeps[@]}")
floor=$(median floor_cycles best "${sweeps[@]}")
best_cached=$(median cycles_per_pkt best "${cached[@]}")
serial=$(median floor_serial_cycles best "${sweeps[@]}")
own=$(median_lookup cycles_per_lookup own 32)
rte=$(median_lookup cycles_per_lookup rte_hash 32)
echo
echo "== the issue's aims, measured in this run"
awk -v b="$before" -v x="$best" -v xc="$best_cpu" -v xr="$best_rx" -v xm="$best_multiples" -v mr="$mult_range" -v xk="$best_cached" -v f="$floor" -v s="$serial" -v o="$own" -v r="$rte" 'BEGIN {
	printf "memory floor:           %.1f cycles per DRAM access, one outstanding; %.1f at maximum MLP\n", s, f
	printf "before / best:          %.0f / %.1f cycles/packet = %.1fx fewer (aim >= 5x)\n", b, x, b / x
	if (r != "-") printf "own table / rte_hash:   %.1f / %.1f cycles/lookup = %.2fx (aim <= 0.5x)\n", o, r, o / r
	printf "best / memory floor:    %.1f / %.1f = %.2fx (aim <= 3x); each run over its own floor: median %.2fx, %s\n", x, f, x / f, xm, mr
	printf "                        %.2fx in CPU cycles (without descheduled time); %.2fx without the generator'"'"'s rx stage (%.1f cycles)\n", xc / f, (x - xr) / f, xr
	printf "                        the same with 1000 sessions, all in cache: %.1f cycles = %.2fx, its compute alone\n", xk, xk / f
}'
"$B" check-identity -f csv 2>&1 >/dev/null | sed 's/^upfbench: /identity, the incident: /'
echo "CSV: $summary (medians), $out/upfbench-sweep-N.csv, $out/upfbench-lookup-N.csv (every run)"
