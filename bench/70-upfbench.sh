#!/usr/bin/env bash
# upfbench at 2.2M sessions (issues 7 and 15), in one run of this script:
#   - the memory floor (cycles per random DRAM access, 1 and many outstanding);
#   - the incident's "before" design (global, fat, batch 1, no prefetch) against
#     the best design, with the steps in between; aim: >= 5x fewer cycles/packet;
#   - the two designs with one random line per packet against best, side by
#     side in each sweep (same sessions, same stream): inline (the hot part in
#     the table's bucket) and slot (slot-encoded TEIDs, no table); aims: <= 3x
#     the memory floor, >= 1.5x fewer cycles/packet than best. slot-unchecked
#     (the slot without its TEID check) gives the check's cost;
#   - each of them on 1 and on 2 workers, and with CACHED sessions (all in
#     cache: the compute alone) beside SESSIONS;
#   - the project's table against rte_hash bulk lookup, same keys; aim: <= 0.5x.
# Each sweep is repeated (REPEAT, default 5), its designs in turn forwards and
# backwards, and every figure is the median of the repeats with its range;
# a ratio is taken within each sweep, then its median. The machine is shared:
# look at the ratios, cpu_share and the load average.
#   SESSIONS=2.2M CACHED=1000 PACKETS=10M REPEAT=5 bench/70-upfbench.sh
set -uo pipefail
cd "$(dirname "$0")/.."
out=build/bench
mkdir -p "$out"
B=bin/upfbench
SESSIONS=${SESSIONS:-2.2M}
CACHED=${CACHED:-1000}
PACKETS=${PACKETS:-10M}
REPEAT=${REPEAT:-5}

[ -x "$B" ] || { echo "70-upfbench: $B is not built"; exit 1; }
steps=before,affinity,batched,split,best,sharded
one_line=inline,slot,slot-unchecked
lookup_tables=own
# not "--help | grep -q": with pipefail, grep's early exit can fail the pipeline
help=$("$B" --help)
if [[ $help == *"rte_hash (DPDK; built in)"* ]]; then
	steps=$steps,rte,before-rte
	lookup_tables=own,rte_hash
else
	echo "70-upfbench: upfbench was built without DPDK: rte_hash left out"
fi

thp=$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)
echo "machine: $(nproc) CPUs, L3 $(getconf LEVEL3_CACHE_SIZE 2>/dev/null | awk '{printf "%.0f MiB", $1/1048576}'), THP $thp, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

# a comma-separated list backwards
reversed() { tr ',' '\n' <<< "$1" | tac | paste -sd, -; }

# sweep NAME WORKERS SESSIONS PRESETS: one sweep into $out/upfbench-NAME-$r.csv
sweep() {
	local name=$1 workers=$2 sessions=$3 presets=$4 f=$out/upfbench-$1-$r.csv
	echo "-- $name $r/$REPEAT: $presets at $sessions sessions, $PACKETS packets each, $workers worker(s)"
	if ! "$B" sweep --sessions "$sessions" --packets "$PACKETS" --workers "$workers" --presets "$presets" \
		-f csv -o "$f" 2> "$out/upfbench-$name-$r.log"; then
		cat "$out/upfbench-$name-$r.log"
		exit 1
	fi
	grep "memory floor" "$out/upfbench-$name-$r.log" | sed 's/^upfbench: /   /'
}

lookups=()
for r in $(seq 1 "$REPEAT"); do
	order=$steps,$one_line
	# every other repeat backwards, so that no design always runs first or last
	[ $((r % 2)) -eq 0 ] && order=$(reversed "$order")
	sweep w1 1 "$CACHED,$SESSIONS" "$order"
	order=before,best,$one_line
	[ $((r % 2)) -eq 0 ] && order=$(reversed "$order")
	sweep w2 2 "$CACHED,$SESSIONS" "$order"
	f=$out/upfbench-lookup-$r.csv
	if ! "$B" lookup --sessions "$SESSIONS" --tables "$lookup_tables" --batch 1,32 -f csv -o "$f" 2> "$out/upfbench-lookup-$r.log"; then
		cat "$out/upfbench-lookup-$r.log"
		exit 1
	fi
	lookups+=("$f")
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

# every sweep row as: repeat label workers sessions cycles mpps floor_multiple identity cpu_cycles
# rx parse lookup rules counters decap cpu_share floor
rows=$out/upfbench-rows.txt
for f in "$out"/upfbench-w[12]-*.csv; do
	r=${f##*-}
	r=${r%.csv}
	awk -F, -v r="$r" '
		FNR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next }
		{ print r, $k["label"], $k["workers"], $k["sessions"], $k["cycles_per_pkt"], $k["mpps"],
			$k["floor_multiple"], $k["identity_ratio"], $k["cpu_cycles_per_pkt"], $k["rx_cycles"],
			$k["parse_cycles"], $k["lookup_cycles"], $k["rules_cycles"], $k["counters_cycles"],
			$k["decap_cycles"], $k["cpu_share"], $k["floor_cycles"] }' "$f"
done > "$rows"

# "median [lo-hi]" of the values on stdin, with printf format $1
med_range() {
	sort -g | awk -v fmt="$1" '{ v[n++] = $1 }
		END {
			if (!n) { print "-"; exit }
			m = (n % 2) ? v[int(n / 2)] : (v[n / 2 - 1] + v[n / 2]) / 2
			printf fmt " [" fmt "-" fmt "]", m, v[0], v[n - 1]
		}'
}
# the values of column $1 (of $rows) for label $2, workers $3, sessions $4
col() { awk -v c="$1" -v l="$2" -v w="$3" -v s="$4" '$2 == l && $3 == w && $4 == s { print $c }' "$rows"; }
# per repeat, column $1 of label $2 over (or minus) that of label $3: ratio|diff
paired() {
	awk -v c="$1" -v a="$2" -v b="$3" -v w="$4" -v s="$5" -v op="$6" '
		$3 == w && $4 == s && $2 == a { x[$1] = $c }
		$3 == w && $4 == s && $2 == b { y[$1] = $c }
		END { for (r in x) if (r in y) print (op == "ratio" ? x[r] / y[r] : x[r] - y[r]) }' "$rows"
}

# a count as upfbench reads it: 2.2M, 10k, 1000
sessions_n() { awk -v x="$1" 'BEGIN { m = x ~ /[kK]$/ ? 1e3 : x ~ /M$/ ? 1e6 : 1; printf "%.0f", (x + 0) * m }'; }
big=$(sessions_n "$SESSIONS")
small=$(sessions_n "$CACHED")

summary=$out/upfbench.csv
echo "label,workers,sessions,cycles_per_pkt,mpps,floor_multiple,identity_ratio,cpu_cycles_per_pkt,rx_cycles,parse_cycles,lookup_cycles,rules_cycles,counters_cycles,decap_cycles,cpu_share" > "$summary"
for w in 1 2; do
	for s in "$big" "$small"; do
		echo
		echo "== $s sessions, $w worker(s): median [range] of $REPEAT (TSC cycles; rx is the generator, as a NIC's receive)"
		printf '%-15s %-22s %-19s %-19s %5s %5s %6s %6s %5s\n' design cyc/pkt "x floor" Mpps rx parse lookup rules cntrs
		for p in $(awk -v w="$w" -v s="$s" '$3 == w && $4 == s { print $2 }' "$rows" | awk '!seen[$0]++'); do
			med() { col "$1" "$p" "$w" "$s" | med_range "$2" | cut -d' ' -f1; }
			printf '%-15s %-22s %-19s %-19s %5s %5s %6s %6s %5s\n' "$p" \
				"$(col 5 "$p" "$w" "$s" | med_range %.1f)" "$(col 7 "$p" "$w" "$s" | med_range %.2f)" \
				"$(col 6 "$p" "$w" "$s" | med_range %.2f)" "$(med 10 %.1f)" "$(med 11 %.1f)" \
				"$(med 12 %.1f)" "$(med 13 %.1f)" "$(med 14 %.1f)"
			echo "$p,$w,$s,$(med 5 %.1f),$(med 6 %.3f),$(med 7 %.2f),$(med 8 %.3f),$(med 9 %.1f),$(med 10 %.1f),$(med 11 %.1f),$(med 12 %.1f),$(med 13 %.1f),$(med 14 %.1f),$(med 15 %.1f),$(med 16 %.3f)" >> "$summary"
		done
		echo "identity Mpps x cycles/packet / (threads x Hz), median [range] over the designs: $(awk -v w="$w" -v s="$s" '$3 == w && $4 == s { print $8 }' "$rows" | med_range %.3f)"
	done
done

echo
echo "== the issue's aims at $big sessions, each a median [range] of per-sweep figures"
aim() { printf '  %-36s %s\n' "$1" "$2"; }
for w in 1 2; do
	echo "$w worker(s):"
	aim "before / best:" "$(paired 5 before best "$w" "$big" ratio | med_range %.1f)x fewer cycles (aim >= 5x)"
	for p in inline slot; do
		aim "best / $p:" "$(paired 5 best "$p" "$w" "$big" ratio | med_range %.2f)x fewer cycles (aim >= 1.5x)"
		aim "$p / memory floor:" "$(col 7 "$p" "$w" "$big" | med_range %.2f)x (aim <= 3x; each run over its sweep's floor)"
	done
	aim "best / memory floor:" "$(col 7 best "$w" "$big" | med_range %.2f)x"
	aim "TEID check (slot - slot-unchecked):" "$(paired 5 slot slot-unchecked "$w" "$big" diff | med_range %.1f) cycles/packet"
	aim "  the same in cache ($small sessions):" "$(paired 5 slot slot-unchecked "$w" "$small" diff | med_range %.1f) cycles/packet"
	aim "in cache: best / inline, best / slot:" "$(paired 5 best inline "$w" "$small" ratio | med_range %.2f)x, $(paired 5 best slot "$w" "$small" ratio | med_range %.2f)x"
done
echo "memory floor: $(col 17 best 1 "$big" | med_range %.1f) cycles per DRAM access at maximum MLP (each sweep's own)"

# median of column $1 over the lookup rows of table $2 at batch $3
median_lookup() {
	awk -F, -v c="$1" -v t="$2" -v b="$3" '
		FNR == 1 { for (i = 1; i <= NF; i++) { if ($i == c) k = i; if ($i == "batch") kb = i }; next }
		$1 == t && $kb == b { print $k }' "${lookups[@]}" | med_range "%.1f" | cut -d' ' -f1
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
if [[ $lookup_tables == *rte_hash* ]]; then
	awk -v o="$(median_lookup cycles_per_lookup own 32)" -v r="$(median_lookup cycles_per_lookup rte_hash 32)" \
		'BEGIN { printf "own table / rte_hash: %.2fx (aim <= 0.5x)\n", o / r }'
fi
"$B" check-identity -f csv 2>&1 >/dev/null | sed 's/^upfbench: /identity, the incident: /'
echo "CSV: $summary (medians), $out/upfbench-w1-N.csv, $out/upfbench-w2-N.csv, $out/upfbench-lookup-N.csv (every run)"
