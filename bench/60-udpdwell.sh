#!/usr/bin/env bash
# udpdwell's cost at 100,000 datagrams/s on loopback (in a namespace of its
# own), measured in the same run:
#   - per datagram, the BPF run time summed over all of the backend's
#     programs, from bpf_stats (run_time_ns / datagrams read): the gross
#     figure the aim is about;
#   - the receiver's CPU time (user + sys, from its getrusage) with udpdwell
#     running against without it, and the sender's, which on loopback also
#     pays for the enqueue side (softirq in its own context).
# Each repeat runs without udpdwell, with it, with it plus empty reference
# programs on the same tracepoints (udpdwell --bpf-reference), and, when
# BASELINE names another udpdwell binary (an older build), with that one; the
# load of the shared machine hits them alike, and ratios are taken within a
# repeat. The reference programs' cost per run is the floor any program pays
# there as bpf_stats counts it (mostly the statistics' own clock read); the
# summary shows the cost per datagram gross and above that floor. One more
# reference program reads the clock once, which udpdwell does twice per
# datagram (enqueue and read stamps). Last, bench/udpdwell_statcost measures
# from the outside what the statistics add to each program run.
#
# The breakdown (STAGES=1, the default when bench/udpdwell_stages is built):
# each repeat also runs udpdwell's own programs stopped after each stage
# (bpf/udpdwell_tp_stages.bpf.c, enum ud_stage in bpf/contract/udpdwell.h:
# empty, filter, clock, slot, stats, fifo, account; the "with" run, udpdwell
# itself, is the whole program; one more run of the stage object's whole
# program shows what its own checks cost), and the table
# gives, per hook (enqueue, read), what each stage adds per datagram: the
# difference between two stages' BPF run time in the same repeat (median over
# the repeats), the empty program's being the floor. The steps' sum is shown
# against the gross figure.
#
# The sender (whose softirq does the enqueue on loopback) and the receiver
# run on two different CPUs (TX_CPU, RX_CPU; PIN=0 leaves them to the
# scheduler, whose choice of one CPU or two changes every figure): the usual
# case of a server, where a NIC's softirq and the reader run apart.
#
#   RATE=100000 SECONDS_PER_RUN=3 REPEATS=5 bench/60-udpdwell.sh
#   BASELINE=/tmp/ud-before/bin/udpdwell bench/60-udpdwell.sh   # before/after
#
# Writes build/bench/60-udpdwell.csv (one row per run),
# build/bench/60-udpdwell-progs.csv (one row per program and run) and
# build/bench/60-udpdwell-statcost.csv.
set -uo pipefail
cd "$(dirname "$0")/.."

RATE=${RATE:-100000}
SECS=${SECONDS_PER_RUN:-3}
REPEATS=${REPEATS:-5}
BASELINE=${BASELINE:-}
STAGES=${STAGES:-1}
BENCH_BIN=${BENCH_BIN:-build/rel/bench}
PIN=${PIN:-1}
TX_CPU=${TX_CPU:-0}
RX_CPU=${RX_CPU:-1}
PORT=41900
OUT=build/bench/60-udpdwell.csv
PROGS=build/bench/60-udpdwell-progs.csv
STATCOST=build/bench/60-udpdwell-statcost.csv
NS=ud-bench-$$
WORK=$(mktemp -d /tmp/ud-bench.XXXXXX)
STAGED=$BENCH_BIN/udpdwell_stages
BREAKDOWN=build/bench/60-udpdwell-stages.csv
mkdir -p build/bench

[ "$(id -u)" -eq 0 ] || { echo "60-udpdwell: needs root" >&2; exit 1; }
for t in udpdwell rtpsend sfu_echo; do
	[ -x "bin/$t" ] || { echo "60-udpdwell: bin/$t is missing; run make" >&2; exit 1; }
done
[ -z "$BASELINE" ] || [ -x "$BASELINE" ] || { echo "60-udpdwell: BASELINE=$BASELINE is not an executable" >&2; exit 1; }
command -v jq > /dev/null || { echo "60-udpdwell: needs jq" >&2; exit 1; }
TX_PIN=() RX_PIN=()
if [ "$PIN" = 1 ] && [ "$(nproc)" -ge 2 ]; then
	TX_PIN=(taskset -c "$TX_CPU")
	RX_PIN=(taskset -c "$RX_CPU")
fi

UD_PID=
cleanup() {
	[ -n "$UD_PID" ] && kill -INT "$UD_PID" 2>/dev/null
	ip netns pids "$NS" 2>/dev/null | xargs -r kill -9 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
ip netns add "$NS" && ip -n "$NS" link set lo up || exit 1

# one run: $1 = without|with|baseline|reference|stage:N; prints
# "datagrams rx_cpu_s tx_cpu_s bpf_ns bpf_runs backend" (bpf_*: udpdwell's own programs)
run() {
	local mode=$1 i rx extra=() ud=bin/udpdwell
	local ud_out=$WORK/ud.json ud_err=$WORK/ud.err
	UD_PID=
	[ "$mode" = reference ] && extra=(--bpf-reference)
	[ "$mode" = baseline ] && ud=$BASELINE
	local cmd=("$ud" -p "$PORT" --interval 3600 -f json --bpf-stats "${extra[@]}")
	[ "${mode#stage:}" != "$mode" ] && cmd=("$STAGED" "${mode#stage:}" "$PORT-$PORT")
	if [ "$mode" != without ]; then
		# emptied here, not by the child's redirection: the wait below must
		# not find the previous run's "backend" line
		: > "$ud_out"
		: > "$ud_err"
		timeout -s INT 300 "${cmd[@]}" > "$ud_out" 2> "$ud_err" &
		UD_PID=$!
		for ((i = 0; i < 300; i++)); do
			grep -qs "backend " "$ud_err" && break
			kill -0 "$UD_PID" 2>/dev/null || { cat "$ud_err" >&2; return 1; }
			sleep 0.1
		done
	fi
	ip netns exec "$NS" "${RX_PIN[@]}" timeout 120 bin/sfu_echo --listen "127.0.0.1:$PORT" --no-echo --batch 32 \
		--rcvbuf 4194304 --idle-exit 1 > "$WORK/rx.json" &
	rx=$!
	for ((i = 0; i < 100; i++)); do
		ip netns exec "$NS" ss -Hlun "sport = :$PORT" | grep -q . && break
		sleep 0.05
	done
	ip netns exec "$NS" "${TX_PIN[@]}" timeout 120 bin/rtpsend --to "127.0.0.1:$PORT" --rate "$RATE" \
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
		[ "$mode" = with ] && jq -r 'select(.type=="interval") | "\(.packets) \(.unmatched) \(.resync_added) \(.resync_dropped)"' \
			"$ud_out" >> "$WORK/fifo.txt"
	fi
	echo "$n $rxcpu $txcpu $bns $bruns $backend"
}

# The breakdown's table from $PROGS: per stage and hook, ns per datagram
# added to the stage before (median over repeats of the same-repeat
# differences); $1 = the gross figure. Also writes $BREAKDOWN.
breakdown() {
	tail -n +2 "$PROGS" | tr -d '"' | awk -F, -v gross="$1" -v out="$BREAKDOWN" -v list="$WORK/stages.txt" '
		# 3: the drop programs, which only udpdwell runs (rare: in the step only)
		function hook(p) { return p ~ /data_ready|enqueue/ ? 1 : (p ~ /recv/ ? 2 : 3) }
		function med(a, n,    i, j, t) {
			for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		}
		BEGIN {
			# "NUMBER NAME WHAT": stage 0, the whole program, comes last (the "with" run)
			K = 0
			while ((getline l < list) > 0) {
				split(l, f, " "); k = f[1] + 0; name[k] = f[2]
				what[k] = substr(l, length(f[1]) + length(f[2]) + 3); K++
			}
			name[K] = name[0]; what[K] = what[0]
		}
		{
			r = substr($1, 1, index($1, "-") - 1)
			if ($2 == "with") k = K
			else if ($2 ~ /^stage:/) k = substr($2, 7) + 0
			else next
			if ($6 > 0) c[r, k, hook($3)] += $5 / $6
			seen[r, k] = 1; reps[r] = 1
		}
		END {
			printf "\nbreakdown, BPF ns per datagram that each stage adds to the one before\n"
			printf "(the same repeat'\''s runs; median over the repeats):\n"
			printf "  %-8s %-64s %7s %7s %7s\n", "stage", "adds", "enqueue", "read", "step"
			print "stage,adds,enqueue_ns,read_ns,step_ns,cumulative_ns" > out
			cum = 0
			for (k = 1; k <= K; k++) {
				for (h = 1; h <= 4; h++) n[h] = 0
				for (r in reps) {
					if (!((r, k) in seen) || (k > 1 && !((r, k - 1) in seen))) continue
					t = 0
					for (h = 1; h <= 3; h++) {
						d = c[r, k, h] - (k > 1 ? c[r, k - 1, h] : 0)
						v[h, ++n[h]] = d; t += d
					}
					v[4, ++n[4]] = t
				}
				if (!n[4]) continue
				for (h = 1; h <= 4; h++) { for (i = 1; i <= n[h]; i++) a[i] = v[h, i]; s[h] = med(a, n[h]) }
				cum += s[4]
				printf "  %-8s %-64s %7.1f %7.1f %7.1f\n", name[k], what[k], s[1], s[2], s[4]
				printf "%s,\"%s\",%.1f,%.1f,%.1f,%.1f\n", name[k], what[k], s[1], s[2], s[4], cum >> out
			}
			printf "  sum of the steps: %.1f ns per datagram; gross (median of the whole runs): %s ns\n", cum, gross
			n[4] = 0
			for (r in reps) if (((r, 0) in seen) && ((r, K) in seen))
				a[++n[4]] = c[r, 0, 1] + c[r, 0, 2] + c[r, 0, 3] - c[r, K, 1] - c[r, K, 2] - c[r, K, 3]
			if (n[4]) printf "  the stage objects'\'' own checks (their whole program less udpdwell'\''s): %.1f ns per datagram\n", med(a, n[4])
		}'
}

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

echo "udpdwell cost: $RATE datagrams/s on loopback for $SECS s per run, receiver recvmmsg (32),"
STAGE_MODES=
if [ "$STAGES" = 1 ]; then
	if [ -x "$STAGED" ]; then
		# stage 0, the whole program with the knob's checks, against udpdwell's
		STAGE_MODES=$("$STAGED" --list | awk '{ printf " stage:%d", $1 }')
		"$STAGED" --list > "$WORK/stages.txt"
	else
		echo "60-udpdwell: $STAGED is missing (make bench-progs): no breakdown" >&2
	fi
fi
echo "$REPEATS repeats of: without, with udpdwell, with reference programs${BASELINE:+, with BASELINE}${STAGE_MODES:+, stopped after each stage}"
if [ ${#TX_PIN[@]} -gt 0 ]; then
	echo "sender on CPU $TX_CPU, receiver on CPU $RX_CPU"
else
	echo "sender and receiver placed by the scheduler"
fi
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) (machine shared: compare within a repeat)"
echo
echo "run,mode,datagrams,rate_per_s,rx_cpu_s,tx_cpu_s,bpf_run_time_ns,bpf_runs,backend" > "$OUT"
echo "run,mode,prog,run_cnt,run_time_ns,datagrams" > "$PROGS"
printf '%-4s %-9s %10s %9s %10s %11s %10s %11s %12s %12s\n' run udpdwell datagrams "rate /s" \
	"rx CPU ms" "rx ns/dgram" "tx CPU ms" "tx ns/dgram" "bpf ns/dgram" "bpf runs/dgram"
status=0
ratios_rx=() ratios_tx=() bpfs=() bases=() base_ratios=() floors=() nets=()
for ((r = 1; r <= REPEATS; r++)); do
	modes="without with reference$STAGE_MODES"
	[ -n "$BASELINE" ] && modes="$modes baseline"
	gross=
	for mode in $modes; do
		RUN="$r-$mode"
		line=$(run "$mode") || { echo "!! run $RUN failed"; status=1; continue; }
		read -r n rxcpu txcpu bns bruns backend <<< "$line"
		echo "$r,$mode,$n,$(awk -v n="$n" -v s="$SECS" 'BEGIN{printf "%.0f", n/s}'),$rxcpu,$txcpu,$bns,$bruns,$backend" >> "$OUT"
		awk -v r="$r" -v m="$mode" -v n="$n" -v s="$SECS" -v rc="$rxcpu" -v tc="$txcpu" -v b="$bns" -v br="$bruns" 'BEGIN {
			printf "%-4s %-9s %10d %9.0f %10.1f %11.0f %10.1f %11.0f %12s %12s\n", r, m, n, n / s,
				rc * 1000, rc * 1e9 / n, tc * 1000, tc * 1e9 / n,
				(m != "without" ? sprintf("%.1f", b / n) : "-"),
				(m != "without" ? sprintf("%.2f", br / n) : "-") }'
		case $mode in
		without) base_rx=$rxcpu base_tx=$txcpu base_n=$n ;;
		with)
			ratios_rx+=("$(awk -v a="$rxcpu" -v an="$n" -v b="$base_rx" -v bn="$base_n" 'BEGIN{printf "%.3f", (a/an)/(b/bn)}')")
			ratios_tx+=("$(awk -v a="$txcpu" -v an="$n" -v b="$base_tx" -v bn="$base_n" 'BEGIN{printf "%.3f", (a/an)/(b/bn)}')")
			gross=$(awk -v b="$bns" -v n="$n" 'BEGIN{printf "%.1f", b/n}')
			bpfs+=("$gross")
			BACKEND=$backend
			;;
		baseline)
			bases+=("$(awk -v b="$bns" -v n="$n" 'BEGIN{printf "%.1f", b/n}')")
			[ -n "$gross" ] && base_ratios+=("$(awk -v a="$gross" -v b="$bns" -v n="$n" 'BEGIN{printf "%.3f", a/(b/n)}')")
			;;
		reference)
			# this repeat's floor: each hook's runs per datagram in the "with" run
			# times an empty program's ns/run in this run
			f=$(tail -n +2 "$PROGS" | tr -d '"' | awk -F, -v w="$r-with" -v ref="$r-reference" '
				$1 == w && $3 == "ud_tp_data_ready" { dr += $4; n = $6 }
				$1 == w && $3 == "ud_tp_recv_length" { rl += $4 }
				$1 == ref && $3 == "ud_ref_data_ready" { rdc += $4; rdt += $5 }
				$1 == ref && $3 == "ud_ref_recv_length" { rrc += $4; rrt += $5 }
				END { if (n && rdc && rrc) printf "%.1f", dr / n * rdt / rdc + rl / n * rrt / rrc }')
			if [ -n "$f" ] && [ -n "$gross" ]; then
				floors+=("$f")
				nets+=("$(awk -v g="$gross" -v f="$f" 'BEGIN{printf "%.1f", g - f}')")
			fi
			;;
		esac
	done
done

# what bpf_stats adds per run, measured from the outside (recv loop in the namespace)
sc=
if [ -x "$BENCH_BIN/udpdwell_statcost" ]; then
	sc=$(ip netns exec "$NS" "$BENCH_BIN/udpdwell_statcost" 100000 15 41990) || sc=
	[ -n "$sc" ] && { echo "$sc" | tr ' ' '\n' | awk -F= 'NR == 1 { h = $1; v = $2; next } { h = h "," $1; v = v "," $2 } END { print h; print v }' > "$STATCOST"; }
fi
scval() { tr ' ' '\n' <<< "$sc" | awk -F= -v k="$1" '$1 == k { print $2 }'; }

echo
if [ ${#bpfs[@]} -gt 0 ]; then
	echo "backend: ${BACKEND:-?}"
	echo "per-program cost, all repeats pooled:"
	tail -n +2 "$PROGS" | tr -d '"' | awk -F, '
		{ key = $2 " " $3; c[key] += $4; t[key] += $5 }
		END { for (k in c) printf "  %-10s %-24s %12d runs %8.1f ns/run\n", substr(k, 1, index(k, " ") - 1),
			substr(k, index(k, " ") + 1), c[k], c[k] ? t[k] / c[k] : 0 }' | sort
	G=$(median "${bpfs[@]}")
	echo "BPF cost per datagram, all of the backend's programs, gross (median of ${#bpfs[@]}): $G ns   (aim: <= 150 ns)   [${bpfs[*]}]"
	if [ ${#bases[@]} -gt 0 ]; then
		echo "  BASELINE ($BASELINE), same repeats: $(median "${bases[@]}") ns gross   [${bases[*]}]"
		echo "  this build / BASELINE (median of per-repeat ratios): $(median "${base_ratios[@]}")   [${base_ratios[*]}]"
	fi
	tail -n +2 "$PROGS" | tr -d '"' | awk -F, '
		$2 == "with" && $3 == "ud_tp_data_ready" { dr += $4; n += $6 }
		$2 == "with" && $3 == "ud_tp_recv_length" { rl += $4 }
		$2 == "reference" && $3 == "ud_ref_data_ready" { rdc += $4; rdt += $5 }
		$2 == "reference" && $3 == "ud_ref_clock_data_ready" { rcc += $4; rct += $5 }
		END {
			if (!n) exit
			printf "  runs per datagram: %.2f on sk_data_ready, %.2f on sock_recv_length\n", dr / n, rl / n
			if (rcc && rdc)
				printf "  one clock read (bpf_ktime_get_ns) costs about %.1f ns here; udpdwell reads it twice per datagram\n",
					rct / rcc - rdt / rdc
		}'
	if [ ${#floors[@]} -gt 0 ]; then
		echo "  floor (empty programs on the same hooks, same repeat; median): $(median "${floors[@]}") ns per datagram   [${floors[*]}]"
		echo "  above the floor (udpdwell's own work; median): $(median "${nets[@]}") ns per datagram   [${nets[*]}]"
	fi
	if [ -n "$sc" ]; then
		runs=$(tail -n +2 "$PROGS" | tr -d '"' | awk -F, '$2 == "with" { r += $4; if ($3 == "ud_tp_data_ready") n += $6 } END { if (n) printf "%.2f", r / n }')
		echo "bpf_stats itself (recv loop, EAGAIN each call, medians of 15 rounds): no program $(scval none_ns) ns/call," \
			"empty program $(scval empty_ns), with statistics on $(scval stats_ns)"
		echo "  an empty program costs $(scval prog_ns) ns per run without statistics; the statistics add" \
			"$(scval stats_overhead_ns) ns per run and report $(scval reported_ns) ns for it"
		[ "$(scval stats_were_on)" = 1 ] && echo "  (bpf_stats was already on when it started: another process had turned it on)"
		awk -v o="$(scval stats_overhead_ns)" -v r="$runs" 'BEGIN {
			if (r > 0) printf "  at %.2f runs per datagram they cost about %.0f ns of CPU per datagram; what they count of\n  themselves is the floor above, so the gross less the floor is the figure without them\n", r, o * r }'
	fi
	if [ -n "$STAGE_MODES" ]; then
		breakdown "$G"
		[ "${BACKEND:-}" = tracepoint ] ||
			echo "  (the stage objects are the tracepoint backend's; udpdwell ran ${BACKEND:-?}: the last step compares unlike programs)"
	fi
	[ -s "$WORK/fifo.txt" ] && awk '{ p += $1; u += $2; a += $3; d += $4 }
		END { printf "matching, all \"with\" runs: %d reads matched, %d unmatched, %d stamps added and %d dropped by resynchronisation\n", p, u, a, d }' "$WORK/fifo.txt"
	echo "receiver CPU per datagram, with / without udpdwell (median of pair ratios): $(median "${ratios_rx[@]}")   [${ratios_rx[*]}]"
	echo "sender CPU per datagram (enqueue side), with / without (median): $(median "${ratios_tx[@]}")   [${ratios_tx[*]}]"
fi
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "CSV: $OUT, $PROGS${sc:+, $STATCOST}${STAGE_MODES:+, $BREAKDOWN}"
exit $status
