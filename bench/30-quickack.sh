#!/usr/bin/env bash
# quickack benchmark: quick ACKs on 10,000 routes in a namespace, against
# `ip -batch` making the same change, in the same run.
#
# Each route carries mtu 1400 and initcwnd 20, so the ip -batch file must
# repeat them on every line (`ip route change` replaces the whole metrics
# set); quickack reads them from the kernel. quickack does more than ip:
# it dumps the routes, writes and fsyncs the journal (on disk, /var/tmp),
# sends the changes batched (many RTM_NEWROUTE per sendmsg), and dumps the
# routes again to verify each one. Repetitions alternate which tool goes
# first; the figures are medians, with the minimum beside them, and the
# ratio is ip -batch time / quickack time (above 1: quickack is faster).
#
#   QUICKACK_BENCH_ROUTES (10000)  QUICKACK_BENCH_REPS (5)
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=$PWD/bin
CSV=build/bench/quickack.csv
NS=qa-bench-$$
ROUTES=${QUICKACK_BENCH_ROUTES:-10000}
REPS=${QUICKACK_BENCH_REPS:-5}

cleanup() {
	ip netns del "$NS" 2>/dev/null
	rm -rf "$tmp"
}
tmp=$(mktemp -d /var/tmp/qa-bench.XXXXXX)
trap cleanup EXIT
trap 'exit 130' INT TERM
J=$tmp/quickack.journal

[ "$(id -u)" -eq 0 ] || { echo "30-quickack: needs root (network namespaces)"; exit 1; }
ip netns add "$NS" || exit 1
ip -n "$NS" link set lo up
ip -n "$NS" link add d0 type veth peer name p0
ip -n "$NS" link set d0 up
ip -n "$NS" link set p0 up
ip -n "$NS" addr add 10.250.0.1/24 dev d0

route() { echo "10.$(($1 / 256)).$(($1 % 256)).0/24"; }
for ((i = 0; i < ROUTES; i++)); do
	echo "route add $(route $i) dev d0 proto static mtu 1400 initcwnd 20"
done > "$tmp/add.batch"
for ((i = 0; i < ROUTES; i++)); do
	echo "route change $(route $i) dev d0 proto static mtu 1400 initcwnd 20 quickack 1"
done > "$tmp/on.batch"
for ((i = 0; i < ROUTES; i++)); do
	echo "route change $(route $i) dev d0 proto static mtu 1400 initcwnd 20"
done > "$tmp/off.batch"
ip -n "$NS" -batch "$tmp/add.batch" || exit 1
ip -n "$NS" -d route show > "$tmp/original.txt"

calc() { awk "BEGIN { printf \"%.9f\", $1 }"; }

# timed CMD...: runs CMD; sets WALL and CPU (user + system) in seconds, from bash's own clock
timed() {
	local TIMEFORMAT='%3R %3U %3S' out rc
	out=$( { time "$@" 2>>"$tmp/cmd.err" >/dev/null; } 2>&1 )
	rc=$?
	read -r WALL u s <<<"$out"
	CPU=$(calc "$u + $s")
	return $rc
}
# routes with quickack 1 must be $1 (all or none), or the figure is void
check() {
	local n
	n=$(ip -n "$NS" route show | grep -c ' quickack 1')
	[ "$n" -eq "$1" ] || { echo "30-quickack: expected $1 routes with quickack, found $n" >&2; exit 1; }
}

echo "cores: $(nproc); load average: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine inflates every figure)"
echo "routes: $((ROUTES + 1)) in table main through d0 (each with mtu 1400, initcwnd 20); repetitions: $REPS"
mkdir -p "$(dirname "$CSV")"
echo "rep,tool,step,routes,wall_s,cpu_s" > "$CSV"

run_quickack() { # $1: rep
	local err=$tmp/qa.err
	timed "$BIN/quickack" on --all-dev d0 --netns "$NS" --journal "$J" -v || { cat "$tmp/cmd.err"; exit 1; }
	echo "$1,quickack,on,$((ROUTES + 1)),$WALL,$CPU" >> "$CSV"
	check $((ROUTES + 1))
	grep -o 'timings: .*' "$tmp/cmd.err" | tail -1 | sed "s/^/rep $1 quickack on: /" >> "$tmp/timings"
	timed "$BIN/quickack" restore --netns "$NS" --journal "$J" -v || { cat "$tmp/cmd.err"; exit 1; }
	echo "$1,quickack,restore,$((ROUTES + 1)),$WALL,$CPU" >> "$CSV"
	check 0
	grep -o 'timings: .*' "$tmp/cmd.err" | tail -1 | sed "s/^/rep $1 quickack restore: /" >> "$tmp/timings"
}

run_ip() { # $1: rep
	timed ip -n "$NS" -batch "$tmp/on.batch" || exit 1
	echo "$1,ip-batch,on,$ROUTES,$WALL,$CPU" >> "$CSV"
	check "$ROUTES"
	timed ip -n "$NS" -batch "$tmp/off.batch" || exit 1
	echo "$1,ip-batch,restore,$ROUTES,$WALL,$CPU" >> "$CSV"
	check 0
}

for ((r = 1; r <= REPS; r++)); do
	if ((r % 2)); then run_quickack $r; run_ip $r; else run_ip $r; run_quickack $r; fi
done

# the state at the end is the state at the start, byte for byte
ip -n "$NS" -d route show > "$tmp/final.txt"
cmp -s "$tmp/original.txt" "$tmp/final.txt" || { echo "30-quickack: the routes differ from the start" >&2; exit 1; }

# one process per route, as a script calling `ip route change` would: 200 routes, scaled up
t0=$(date +%s%N)
for ((i = 0; i < 200; i++)); do
	ip -n "$NS" route change "$(route $i)" dev d0 proto static mtu 1400 initcwnd 20 quickack 1
done
t1=$(date +%s%N)
per_proc=$(calc "($t1 - $t0) / 1000000000 / 200 * $ROUTES")
echo "0,ip-per-route-process (200 routes scaled to $ROUTES),on,$ROUTES,$per_proc," >> "$CSV"

stat() { # $1 tool, $2 step, $3 median|min, $4 column (5 wall, 6 cpu)
	awk -F, -v t="$1" -v s="$2" -v c="$4" '$2==t && $3==s {print $c}' "$CSV" | sort -g |
		awk -v w="$3" '{v[NR]=$1} END {if (w=="min") print v[1]; else print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'
}
printf '\n%-34s %10s %10s %12s %12s\n' "10,000 routes, one change each" "wall ms" "(min)" "CPU ms" "routes/s"
for tool in quickack ip-batch; do
	for step in on restore; do
		med=$(stat $tool $step median 5); min=$(stat $tool $step min 5); cpu=$(stat $tool $step median 6)
		printf '%-34s %10.1f %10.1f %12.1f %12.0f\n' "$tool $step" "$(calc "$med * 1000")" \
			"$(calc "$min * 1000")" "$(calc "$cpu * 1000")" "$(calc "$ROUTES / $med")"
	done
done
printf '%-34s %10.1f %10s %12s %12.0f\n' "ip route change, one process each" "$(calc "$per_proc * 1000")" "-" "-" \
	"$(calc "$ROUTES / $per_proc")"
ratio() { calc "$(stat ip-batch "$1" median "$2") / $(stat quickack "$1" median "$2")"; }
printf '\n%-34s %10s %10s %12s\n' "ip -batch / quickack (medians)" "wall" "" "CPU"
for step in on restore; do
	w=$(ratio $step 5); c=$(ratio $step 6)
	printf '%-34s %10.2f %10s %12.2f\n' "ratio, $step" "$w" "" "$c"
	echo "ratio,$step,,,$w,$c" >> "$CSV"
done
echo "(> 1: quickack is faster; CPU is user + system time, less sensitive to the machine's load)"
echo
echo "quickack's own phases (-v):"
sed 's/^/  /' "$tmp/timings"
echo "CSV: $CSV"
