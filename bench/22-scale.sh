#!/usr/bin/env bash
# bbrtrace at scale: what --detect --records events costs per ACK with 1, 100,
# 1,000 and 10,000 concurrent BBR flows (SCALE_FLOWS), each figure against
# bbr_main's own cost measured in the same run (bbrtrace --no-tap: bbr_traced
# runs kernel BBR without the tap; bpf_stats gives its ns per ACK).
#
# For each flow count, iperf3 bulk flows on bbr_traced between two namespaces
# for SCALE_SECS (default 10), 100 flows per iperf3 client; two runs:
#   no-tap   bbrtrace --no-tap --stats: bbr_main's ns/ACK (the reference)
#   tap      bbrtrace --detect --records events --stats: its user and system
#            CPU per ACK (/proc), the tap's BPF ns per ACK (bt_main's less the
#            reference, and the write and close taps' share), its RSS and its
#            BPF maps' memory, untracked samples and lost events
# The table gives each cost in ns and as a ratio to bbr_main's. Where 2 cores
# cannot carry the flows (iperf3 fails to connect them all), the row says so.
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
BIN=$PWD/bin
CSV=build/bench/scale.csv
NS=bt-scale-$$
SECS=${SCALE_SECS:-10}
FLOWS_LIST=${SCALE_FLOWS:-1 100 1000 10000}
PER_CLIENT=100 # streams per iperf3 client (iperf3 allows 128)

tmp=$(mktemp -d)
cleanup() {
	bench_pair_down $NS
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

bench_lock_bbr_traced

bench_pair_up $NS 10.203.0
# 10,000 sockets at once: the namespaces' own limits
ip netns exec $NS-a sysctl -qw net.ipv4.ip_local_port_range="10000 65000"
ulimit -n "$(ulimit -Hn)"

# CPU ticks (user, system) of a process, from /proc/PID/stat
ticks() { awk '{print $14, $15}' "/proc/$1/stat" 2>/dev/null; }
# a process's BPF maps' memory, bytes: the memlock of each map it holds a
# descriptor of (/proc/PID/fdinfo), each map once
map_bytes() {
	grep -h -e '^map_id:' -e '^memlock:' /proc/"$1"/fdinfo/* 2>/dev/null |
		awk '$1 == "memlock:" {m = $2} $1 == "map_id:" {bytes[$2] = m} END {for (i in bytes) s += bytes[i]; print s + 0}'
}
# bt_main's ns per run from a --stats trace
prog_ns() { jq -r --arg p "$2" 'select(.type=="prog_stats" and .program==$p) | .ns_per_run' "$1" | tail -n 1; }
prog_runs() { jq -r --arg p "$2" 'select(.type=="prog_stats" and .program==$p) | .run_cnt' "$1" | tail -n 1; }

# the load: $1 flows for SECS, 100 per iperf3 client; prints the streams that connected
load() {
	local flows=$1 left=$1 i=0 n pids=() ok=0
	while [ "$left" -gt 0 ]; do
		i=$((i + 1))
		n=$((left > PER_CLIENT ? PER_CLIENT : left))
		left=$((left - n))
		ip netns exec $NS-b iperf3 -s -1 -p $((5600 + i)) -D -I "$tmp/srv.$i.pid" > /dev/null 2>&1
	done
	sleep 1
	left=$flows i=0
	while [ "$left" -gt 0 ]; do
		i=$((i + 1))
		n=$((left > PER_CLIENT ? PER_CLIENT : left))
		left=$((left - n))
		ip netns exec $NS-a timeout $((SECS + 60)) iperf3 -c 10.203.0.2 -p $((5600 + i)) -P "$n" -t "$SECS" \
			-C bbr_traced -J > "$tmp/cli.$i.json" 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}"
	for f in "$tmp"/cli.*.json; do
		ok=$((ok + $(jq '[.start.connected // [] | length] | add' "$f" 2>/dev/null || echo 0)))
	done
	rm -f "$tmp"/cli.*.json "$tmp"/srv.*.pid
	echo "$ok"
}

# one traced run: $1 flows, $2 "tap" or "notap"; leaves its figures in $tmp/run.*
run() {
	local flows=$1 kind=$2 out=$tmp/$2.jsonl args pid t0 t1 rss maps connected
	if [ "$kind" = tap ]; then
		args=(--detect --records events)
	else
		args=(--no-tap)
	fi
	# at the priority its systemd unit gives it (Nice=-10): on a host whose
	# cores the flows saturate, a monitor at the flows' own priority gets
	# too little CPU to drain its ring buffer, whatever its cost per ACK
	nice -n "${SCALE_NICE:--10}" "$BIN/bbrtrace" -b struct_ops --stats "${args[@]}" -f json -o "$out" \
		--set-default-in $NS-a -q 2> "$tmp/$kind.err" &
	pid=$!
	for _ in $(seq 100); do
		[ "$(ip netns exec $NS-a sysctl -n net.ipv4.tcp_congestion_control)" = bbr_traced ] && break
		sleep 0.1
	done
	t0=$(ticks $pid)
	connected=$(load "$flows")
	t1=$(ticks $pid)
	rss=$(awk '/^VmRSS:/ {print $2}' /proc/$pid/status)
	maps=$(map_bytes $pid)
	kill -INT $pid
	wait $pid
	echo "$t0 $t1 $rss $maps $connected" > "$tmp/run.$kind"
}

hz=$(getconf CLK_TCK)
echo "cores: $(nproc); load average: $(cut -d' ' -f1-3 /proc/loadavg); $SECS s of iperf3 bulk flows per run"
mkdir -p "$(dirname "$CSV")"
echo "flows,connected,acks_per_s,bbr_main_ns,user_ns_per_ack,sys_ns_per_ack,bpf_tap_ns_per_ack,user_ratio,bpf_ratio,rss_kib,map_kib,untracked,lost" > "$CSV"
printf '%-7s %-9s %-9s %-9s %-16s %-16s %-16s %-9s %-9s %-10s %-9s\n' flows connected "ACKs/s" "bbr_main" \
	"user/ACK" "sys/ACK" "BPF tap/ACK" "RSS" "maps" untracked lost
for flows in $FLOWS_LIST; do
	run "$flows" notap
	ref=$(prog_ns "$tmp/notap.jsonl" bt_main)
	run "$flows" tap
	read -r u0 s0 u1 s1 rss maps connected < "$tmp/run.tap"
	acks=$(jq 'select(.type=="summary") | .samples' "$tmp/tap.jsonl")
	lost=$(jq 'select(.type=="summary") | .lost' "$tmp/tap.jsonl")
	untracked=$(jq 'select(.type=="summary") | .samples_untracked' "$tmp/tap.jsonl")
	main=$(prog_ns "$tmp/tap.jsonl" bt_main)
	# the write and close taps' time, spread over the ACKs
	other=$(jq -s --argjson acks "$acks" '[.[] | select(.type=="prog_stats" and (.program=="bt_write_tp" or .program=="bt_write_fexit" or .program=="bt_sock_state")) | .run_time_ns] | add // 0 | . / $acks' "$tmp/tap.jsonl")
	awk -v f="$flows" -v c="$connected" -v acks="$acks" -v secs="$SECS" -v ref="$ref" -v main="$main" -v other="$other" \
		-v u=$((u1 - u0)) -v s=$((s1 - s0)) -v hz="$hz" -v rss="$rss" -v maps="$maps" -v un="$untracked" -v lost="$lost" -v csv="$CSV" 'BEGIN {
		un_ns = u * 1e9 / hz / acks; sy_ns = s * 1e9 / hz / acks; tap = main - ref + other
		printf "%-7d %-9d %-9.0f %-9s %-16s %-16s %-16s %-9s %-9s %-10d %-9d\n", f, c, acks / secs, sprintf("%.0f ns", ref),
			sprintf("%.0f ns (%.2fx)", un_ns, un_ns / ref), sprintf("%.0f ns (%.2fx)", sy_ns, sy_ns / ref),
			sprintf("%.0f ns (%.2fx)", tap, tap / ref), sprintf("%.1f MiB", rss / 1024), sprintf("%.0f KiB", maps / 1024), un, lost
		printf "%d,%d,%.0f,%.0f,%.0f,%.0f,%.0f,%.3f,%.3f,%d,%.0f,%d,%d\n", f, c, acks / secs, ref, un_ns, sy_ns, tap,
			un_ns / ref, tap / ref, rss, maps / 1024, un, lost >> csv
	}'
	[ "$connected" -ge "$flows" ] || echo "        (2 cores connected $connected of $flows flows: the machine's limit, not bbrtrace's)"
done
echo "ratios are to bbr_main's own ns per ACK in the same run (--no-tap); user/ACK and sys/ACK are bbrtrace's CPU"
