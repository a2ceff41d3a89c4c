#!/usr/bin/env bash
# bbrpcap benchmark, all figures from one run on one capture:
#  1. tcpdump captures at least 2 million frames of a real iperf3 flow between
#     two namespaces (small writes with TCP_NODELAY: many frames per second);
#  2. the time of `bbrpcap throughput` + `bbrpcap acks` on that file, against
#     `tcptrace -l` and `tshark -q -z io,stat,0.01` on the same file (medians of
#     BBRPCAP_BENCH_REPS runs, the file in the page cache). The aims: at most
#     half of tcptrace's time, and at least 30x faster than tshark;
#  3. for the record: the libpcap reader (pcap_next_ex) against the mmap one,
#     `flows`, and `acks --each` (one JSON record per ACK).
# The machine is shared: absolute times are noisy, the ratios less so.
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
BIN=$PWD/bin
CSV=build/bench/bbrpcap.csv
NS=pc-bench-$$
FRAMES=${BBRPCAP_BENCH_FRAMES:-2100000}
REPS=${BBRPCAP_BENCH_REPS:-3}
TSHARK_REPS=${BBRPCAP_BENCH_TSHARK_REPS:-2}
PORT=42990

tmp=$(mktemp -d /tmp/pc-bench.XXXXXX)
cleanup() {
	bench_pair_down $NS
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

calc() { awk "BEGIN { printf \"%.6f\", $1 }"; }

# a private copy: another build (SANITIZE=1 relinks bin/) cannot swap it mid-run
cp "$BIN/bbrpcap" "$tmp/bbrpcap" || exit 1
if grep -q __asan_init "$tmp/bbrpcap"; then
	echo "50-bbrpcap: bin/bbrpcap is a sanitizer build (SANITIZE=1): timings would mean nothing; run make"
	exit 1
fi
for c in iperf3 tcpdump tcptrace tshark capinfos; do
	command -v $c > /dev/null || { echo "50-bbrpcap: $c is missing (run ./scripts/install-deps.sh)"; exit 1; }
done

bench_pair_up $NS 10.209.50
ip netns exec $NS-b iperf3 -s -p $PORT -D -I "$tmp/iperf.pid" || exit 1
sleep 0.5

echo "cores: $(nproc); load average: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine inflates every figure)"

# 1. the capture ------------------------------------------------------------------------------
cap=$tmp/flow.pcap
ip netns exec $NS-a tcpdump -Z root -q -B 262144 -s 128 -c "$FRAMES" -i veth0 -w "$cap" "tcp port $PORT" \
	2> "$tmp/tcpdump.err" &
td=$!
for _ in $(seq 100); do grep -q listening "$tmp/tcpdump.err" && break; sleep 0.05; done
t0=$(date +%s.%N)
ip netns exec $NS-a iperf3 -c 10.209.50.2 -p $PORT -t 300 -l 256 -N > /dev/null 2>&1 &
ip=$!
timeout 600 tail --pid=$td -f /dev/null
t1=$(date +%s.%N)
kill $ip 2>/dev/null
wait $ip 2>/dev/null
frames=$(capinfos -c -M "$cap" 2>/dev/null | awk '/Number of packets/ { print $NF }')
drops=$(awk '/dropped by kernel/ { print $1 }' "$tmp/tcpdump.err")
size=$(stat -c %s "$cap")
printf 'capture: %s frames of one iperf3 flow (256-byte writes, TCP_NODELAY), %.1f MB at snaplen 128, in %.1f s; tcpdump dropped %s\n' \
	"$frames" "$(calc "$size / 1e6")" "$(calc "$t1 - $t0")" "${drops:-?}"
# tcpdump -c stops at FRAMES: fewer means the flow or the capture stopped early
if [ "${frames:-0}" -lt "$FRAMES" ]; then
	echo "50-bbrpcap: only ${frames:-0} of $FRAMES frames captured"
	exit 1
fi
cat "$cap" > /dev/null # into the page cache: every tool reads it warm

# 2. timings ------------------------------------------------------------------------------------
# median wall time in seconds of REPS runs of a command (output discarded)
timed() {
	local reps=$1 i t0 t1
	shift
	for ((i = 0; i < reps; i++)); do
		t0=$(date +%s%N)
		"$@" > /dev/null 2>&1
		t1=$(date +%s%N)
		echo $(((t1 - t0) / 1000))
	done | sort -n | awk '{ v[NR] = $1 } END { printf "%.6f", v[int((NR + 1) / 2)] / 1e6 }'
}

thr=$(timed "$REPS" "$tmp/bbrpcap" throughput --bin-ms 10 -f csv "$cap")
acks=$(timed "$REPS" "$tmp/bbrpcap" acks "$cap")
tcpt=$(timed "$REPS" tcptrace -l "$cap")
tsh=$(timed "$TSHARK_REPS" tshark -q -z io,stat,0.01 -r "$cap")
thr_lp=$(timed "$REPS" "$tmp/bbrpcap" throughput --bin-ms 10 -f csv --reader libpcap "$cap")
acks_lp=$(timed "$REPS" "$tmp/bbrpcap" acks --reader libpcap "$cap")
flows=$(timed "$REPS" "$tmp/bbrpcap" flows "$cap")
each=$(timed "$REPS" "$tmp/bbrpcap" acks --each --format json "$cap")
ours=$(calc "$thr + $acks")
ours_lp=$(calc "$thr_lp + $acks_lp")

row() { # name seconds
	printf '%-46s %9.3f %10.1f %9.2f\n' "$1" "$2" "$(calc "$2 * 1e9 / $frames")" "$(calc "$frames / $2 / 1e6")"
}
echo
printf '%-46s %9s %10s %9s\n' "on the same file (median of $REPS; tshark $TSHARK_REPS)" "s" "ns/frame" "Mframe/s"
row "bbrpcap throughput --bin-ms 10 -f csv" "$thr"
row "bbrpcap acks" "$acks"
row "bbrpcap throughput + acks" "$ours"
row "tcptrace -l" "$tcpt"
row "tshark -q -z io,stat,0.01" "$tsh"
row "bbrpcap throughput + acks, --reader libpcap" "$ours_lp"
row "bbrpcap flows" "$flows"
row "bbrpcap acks --each --format json" "$each"
echo
vs_tcptrace=$(calc "$tcpt / $ours")
vs_tshark=$(calc "$tsh / $ours")
mmap_gain=$(calc "$ours_lp / $ours")
printf '%-46s %9.2f  (aim: >= 2, i.e. at most half of its time)\n' "tcptrace -l / (throughput + acks)" "$vs_tcptrace"
printf '%-46s %9.1f  (aim: >= 30)\n' "tshark io,stat / (throughput + acks)" "$vs_tshark"
printf '%-46s %9.2f\n' "libpcap reader / mmap reader" "$mmap_gain"

mkdir -p "$(dirname "$CSV")"
{
	echo "metric,value,unit"
	echo "frames,$frames,frames"
	echo "capture_bytes,$size,bytes"
	echo "tcpdump_drops,${drops:-},frames"
	echo "bbrpcap_throughput_s,$thr,s"
	echo "bbrpcap_acks_s,$acks,s"
	echo "bbrpcap_throughput_plus_acks_s,$ours,s"
	echo "tcptrace_s,$tcpt,s"
	echo "tshark_iostat_s,$tsh,s"
	echo "bbrpcap_libpcap_throughput_plus_acks_s,$ours_lp,s"
	echo "bbrpcap_flows_s,$flows,s"
	echo "bbrpcap_acks_each_json_s,$each,s"
	echo "ratio_tcptrace_over_bbrpcap,$vs_tcptrace,x"
	echo "ratio_tshark_over_bbrpcap,$vs_tshark,x"
	echo "ratio_libpcap_over_mmap,$mmap_gain,x"
	echo "bbrpcap_ns_per_frame,$(calc "$ours * 1e9 / $frames"),ns"
} > "$CSV"
