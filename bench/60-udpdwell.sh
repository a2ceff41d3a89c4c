#!/usr/bin/env bash
# udpdwell's cost at 100,000 datagrams/s on loopback (in a namespace of its
# own), measured in the same run:
#   - per datagram, the BPF run time summed over all of the backend's
#     programs, from bpf_stats (run_time_ns / datagrams read);
#   - the receiver's CPU time (user + sys, from its getrusage) with udpdwell
#     running against without it, and the sender's, which on loopback also
#     pays for the enqueue side (softirq in its own context).
# Runs alternate without/with udpdwell, REPEATS times, so that the load of
# the shared machine hits both alike; ratios are taken within each pair.
# A last run adds empty reference programs on the same tracepoints
# (udpdwell --bpf-reference): their cost per run is the floor that any
# program pays there, dispatch plus bpf_stats' own two clock reads, and the
# summary shows the per-datagram cost both gross and above that floor. One
# more reference program reads the clock once, which udpdwell does twice per
# datagram (enqueue and read stamps).
#
#   RATE=100000 SECONDS_PER_RUN=3 REPEATS=5 bench/60-udpdwell.sh
#
# Writes build/bench/60-udpdwell.csv (one row per run) and
# build/bench/60-udpdwell-progs.csv (one row per program and run).
set -uo pipefail
cd "$(dirname "$0")/.."

RATE=${RATE:-100000}
SECS=${SECONDS_PER_RUN:-3}
REPEATS=${REPEATS:-5}
PORT=41900
OUT=build/bench/60-udpdwell.csv
PROGS=build/bench/60-udpdwell-progs.csv
NS=ud-bench-$$
WORK=$(mktemp -d /tmp/ud-bench.XXXXXX)
mkdir -p build/bench

[ "$(id -u)" -eq 0 ] || { echo "60-udpdwell: needs root" >&2; exit 1; }
for t in udpdwell rtpsend sfu_echo; do
	[ -x "bin/$t" ] || { echo "60-udpdwell: bin/$t is missing; run make" >&2; exit 1; }
done
command -v jq > /dev/null || { echo "60-udpdwell: needs jq" >&2; exit 1; }

UD_PID=
cleanup() {
	[ -n "$UD_PID" ] && kill -INT "$UD_PID" 2>/dev/null
	ip netns pids "$NS" 2>/dev/null | xargs -r kill -9 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
ip netns add "$NS" && ip -n "$NS" link set lo up || exit 1

# one run: $1 = without|with|reference; prints
# "datagrams rx_cpu_s tx_cpu_s bpf_ns bpf_runs backend" (bpf_*: udpdwell's own programs)
run() {
	local mode=$1 i rx extra=()
	local ud_out=$WORK/ud.json ud_err=$WORK/ud.err
	UD_PID=
	[ "$mode" = reference ] && extra=(--bpf-reference)
	if [ "$mode" != without ]; then
		timeout -s INT 300 bin/udpdwell -p "$PORT" -i 3600 -f json --bpf-stats "${extra[@]}" \
			> "$ud_out" 2> "$ud_err" &
		UD_PID=$!
		for ((i = 0; i < 300; i++)); do
			grep -qs "backend " "$ud_err" && break
			kill -0 "$UD_PID" 2>/dev/null || { cat "$ud_err" >&2; return 1; }
			sleep 0.1
		done
	fi
	ip netns exec "$NS" timeout 120 bin/sfu_echo --listen "127.0.0.1:$PORT" --no-echo --batch 32 \
		--rcvbuf 4194304 --idle-exit 1 > "$WORK/rx.json" &
	rx=$!
	for ((i = 0; i < 100; i++)); do
		ip netns exec "$NS" ss -Hlun "sport = :$PORT" | grep -q . && break
		sleep 0.05
	done
	ip netns exec "$NS" timeout 120 bin/rtpsend --to "127.0.0.1:$PORT" --rate "$RATE" \
		--duration "$SECS" > "$WORK/tx.json" || return 1
	wait "$rx" || return 1
	local n rxcpu txcpu bns=0 bruns=0 backend=-
	n=$(jq .packets "$WORK/rx.json")
	rxcpu=$(jq '.cpu_user_s + .cpu_sys_s' "$WORK/rx.json")
	txcpu=$(jq '.cpu_user_s + .cpu_sys_s' "$WORK/tx.json")
	if [ "$mode" != without ]; then
		kill -INT "$UD_PID"
		wait "$UD_PID" || { cat "$ud_err" >&2; return 1; }
		UD_PID=
		bns=$(jq -s '[.[] | select(.type=="bpf_prog" and (.prog | startswith("ud_ref_") | not)) | .run_time_ns] | add // 0' "$ud_out")
		bruns=$(jq -s '[.[] | select(.type=="bpf_prog" and (.prog | startswith("ud_ref_") | not)) | .run_cnt] | add // 0' "$ud_out")
		backend=$(jq -r 'select(.type=="interval") | .backend' "$ud_out" | tail -1)
		jq -r --arg r "$RUN" --arg m "$mode" --argjson n "$n" \
			'select(.type=="bpf_prog") | [$r, $m, .prog, .run_cnt, .run_time_ns, $n] | @csv' \
			"$ud_out" >> "$PROGS"
	fi
	echo "$n $rxcpu $txcpu $bns $bruns $backend"
}

echo "udpdwell cost: $RATE datagrams/s on loopback for $SECS s per run, receiver recvmmsg (32),"
echo "runs alternate without/with udpdwell, $REPEATS pairs; machine shared: compare within pairs"
echo
echo "run,mode,datagrams,rate_per_s,rx_cpu_s,tx_cpu_s,bpf_run_time_ns,bpf_runs,backend" > "$OUT"
echo "run,mode,prog,run_cnt,run_time_ns,datagrams" > "$PROGS"
printf '%-4s %-8s %10s %9s %10s %11s %10s %11s %12s %12s\n' run udpdwell datagrams "rate /s" \
	"rx CPU ms" "rx ns/dgram" "tx CPU ms" "tx ns/dgram" "bpf ns/dgram" "bpf runs/dgram"
status=0
declare -a ratios_rx ratios_tx bpfs
for ((r = 1; r <= REPEATS; r++)); do
	modes="without with"
	[ "$r" -eq "$REPEATS" ] && modes="without with reference"
	for mode in $modes; do
		RUN="$r-$mode"
		line=$(run "$mode") || { echo "!! run $RUN failed"; status=1; continue; }
		read -r n rxcpu txcpu bns bruns backend <<< "$line"
		echo "$r,$mode,$n,$(awk -v n="$n" -v s="$SECS" 'BEGIN{printf "%.0f", n/s}'),$rxcpu,$txcpu,$bns,$bruns,$backend" >> "$OUT"
		awk -v r="$r" -v m="$mode" -v n="$n" -v s="$SECS" -v rc="$rxcpu" -v tc="$txcpu" -v b="$bns" -v br="$bruns" 'BEGIN {
			printf "%-4s %-8s %10d %9.0f %10.1f %11.0f %10.1f %11.0f %12s %12s\n", r, m, n, n / s,
				rc * 1000, rc * 1e9 / n, tc * 1000, tc * 1e9 / n,
				(m == "with" ? sprintf("%.1f", b / n) : "-"),
				(m == "with" ? sprintf("%.2f", br / n) : "-") }'
		if [ "$mode" = without ]; then
			base_rx=$rxcpu base_tx=$txcpu base_n=$n
		elif [ "$mode" = with ]; then
			ratios_rx+=("$(awk -v a="$rxcpu" -v an="$n" -v b="$base_rx" -v bn="$base_n" 'BEGIN{printf "%.3f", (a/an)/(b/bn)}')")
			ratios_tx+=("$(awk -v a="$txcpu" -v an="$n" -v b="$base_tx" -v bn="$base_n" 'BEGIN{printf "%.3f", (a/an)/(b/bn)}')")
			bpfs+=("$(awk -v b="$bns" -v n="$n" 'BEGIN{printf "%.1f", b/n}')")
			BACKEND=$backend
		fi
	done
done

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
echo
if [ ${#bpfs[@]} -gt 0 ]; then
	echo "backend: ${BACKEND:-?}"
	echo "per-program cost, runs with udpdwell (\"with\" mode) and the reference run:"
	tail -n +2 "$PROGS" | tr -d '"' | awk -F, '
		{ key = $2 " " $3; c[key] += $4; t[key] += $5 }
		END { for (k in c) printf "  %-10s %-22s %12d runs %8.1f ns/run\n", substr(k, 1, index(k, " ") - 1),
			substr(k, index(k, " ") + 1), c[k], c[k] ? t[k] / c[k] : 0 }' | sort
	echo "BPF cost per datagram, all of the backend's programs, gross (median of ${#bpfs[@]}): $(median "${bpfs[@]}") ns   (aim: <= 150 ns)"
	# the floor: each hook's runs per datagram times an empty program's ns/run there
	tail -n +2 "$PROGS" | tr -d '"' | awk -F, '
		$2 == "with" && $3 == "ud_tp_data_ready" { dr += $4; n += $6 }
		$2 == "with" && $3 == "ud_tp_recv_length" { rl += $4 }
		$2 == "with" && $3 != "ud_tp_data_ready" && $3 != "ud_tp_recv_length" { other += $5 }
		$2 == "with" { gross += $5 }
		$2 == "reference" && $3 == "ud_ref_data_ready" { rdc += $4; rdt += $5 }
		$2 == "reference" && $3 == "ud_ref_recv_length" { rrc += $4; rrt += $5 }
		$2 == "reference" && $3 == "ud_ref_clock_data_ready" { rcc += $4; rct += $5 }
		END {
			if (!n || !rdc || !rrc) exit
			floor = dr / n * rdt / rdc + rl / n * rrt / rrc
			printf "  runs per datagram: %.2f on sk_data_ready, %.2f on sock_recv_length\n", dr / n, rl / n
			printf "  floor (empty programs on the same hooks, same run): %.1f ns per datagram\n", floor
			printf "  above the floor (udpdwell'"'"'s own work): %.1f ns per datagram (all runs pooled)\n", gross / n - floor
			if (rcc)
				printf "  of which the two clock reads (bpf_ktime_get_ns) cost about %.1f ns (%.1f ns each here)\n",
					2 * (rct / rcc - rdt / rdc), rct / rcc - rdt / rdc
		}'
	echo "receiver CPU per datagram, with / without udpdwell (median of pair ratios): $(median "${ratios_rx[@]}")   [${ratios_rx[*]}]"
	echo "sender CPU per datagram (enqueue side), with / without (median): $(median "${ratios_tx[@]}")   [${ratios_tx[*]}]"
fi
echo "CSV: $OUT, $PROGS"
exit $status
