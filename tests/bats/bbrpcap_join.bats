#!/usr/bin/env bats
# bbrpcap join: every bbrtrace sample and collapse gets the frame of the ACK
# behind it, checked against tcpdump's own reading of that frame. Traces and
# captures are recorded here (bbrtrace's struct_ops backend, tcpdump, a
# pushsim live push to a paced receiver between namespaces), plus a pair from
# a real repro/dip.sh run in tests/fixtures/pcap/dip-paced.*.

load helpers
load bbrpcap_helpers

setup_file() {
	requires root netns struct_ops bbr tcpdump jq
	tk_lock_bbr_traced
	NS=pc-$BATS_ROOT_PID-jn
	A=$NS-a B=$NS-b
	D=$BATS_FILE_TMPDIR
	ip netns add "$A" && echo "$A" >> "$TK_STATE_DIR/netns.list"
	ip netns add "$B" && echo "$B" >> "$TK_STATE_DIR/netns.list"
	ip -n "$A" link set lo up
	ip -n "$B" link set lo up
	ip -n "$A" link add veth0 type veth peer name veth1 netns "$B"
	# addresses no other test uses: bbrtrace's filter is machine-wide
	ip -n "$A" addr add 10.209.21.1/24 dev veth0
	ip -n "$B" addr add 10.209.21.2/24 dev veth1
	ip -n "$A" link set veth0 up
	ip -n "$B" link set veth1 up
	pc_bbrtrace_start "$D/trace.jsonl" --detect --daddr 10.209.21.2
	pc_tcpdump_start "$A" "$D/snd.pcap" -i veth0 -s 128 tcp
	local snd=$PC_TCPDUMP_PID
	pc_tcpdump_start "$B" "$D/rcv.pcap" -i veth1 -s 128 tcp
	local rcv=$PC_TCPDUMP_PID
	# two pushes at once, each to a receiver that reads at frame pace: its
	# delayed ACKs collapse BBR's estimate (MISSION Story 1). The tests need
	# a collapse: a round of 4 s gave none once beside a busy core (826
	# samples), so another round follows until the trace (flushed every
	# 100 ms) holds one, three rounds at most.
	local round
	for round in 1 2 3; do
		join_push_round "$round"
		tk_wait_for "grep -q '\"type\":\"collapse\"' '$D/trace.jsonl'" 2 && break
		echo "# round $round of pushes: no collapse yet" >&3
	done
	sleep 0.5
	pc_tcpdump_stop "$snd"
	pc_tcpdump_stop "$rcv"
	pc_bbrtrace_stop
	export A B D
}

# round $1 of two pushes at once on ports 42200 and 42201, each to a
# receiver that reads at frame pace; its records in $D/{send,recv}-PORT-$1.json
join_push_round() {
	local p s1 rcv=()
	for p in 42200 42201; do
		ip netns exec "$B" pushsim recv --listen "$p" --mode paced --accept-timeout 10 --summary-only --json \
			> "$D/recv-$p-$1.json" &
		rcv+=($!)
	done
	tk_wait_listen 42200 5 "$B"
	tk_wait_listen 42201 5 "$B"
	ip netns exec "$A" pushsim send --connect 10.209.21.2:42200 --cc bbr_traced --fps 20 --duration 4 \
		--seed $((2 * $1 - 1)) --summary-only --json > "$D/send-42200-$1.json" &
	s1=$!
	ip netns exec "$A" pushsim send --connect 10.209.21.2:42201 --cc bbr_traced --fps 20 --duration 4 \
		--seed $((2 * $1)) --summary-only --json > "$D/send-42201-$1.json"
	wait $s1
	wait "${rcv[@]}"
}

teardown_file() {
	[ -n "${PC_BT_PID:-}" ] && kill -INT "$PC_BT_PID" 2>/dev/null
	tk_cleanup
	tk_unlock_bbr_traced
}

# every record of TYPE in JOINED has a frame whose ACK (read by tcpdump from
# CAPTURE) is its snd_una; prints how many
all_matched() {
	local joined=$1 capture=$2 type=$3
	pc_frame_acks "$capture" > "$D/frames.txt"
	jq -r --arg t "$type" 'select(.type == $t) | "\(.frame) \(.snd_una)"' "$joined" |
		awk 'FILENAME == ARGV[1] { ack[$1] = $2; next }
			{ n++; if ($1 == "null") { printf "# no frame for ACK %s\n", $2; bad++ } else if (ack[$1] != $2) { printf "# frame %s has ACK %s, not %s\n", $1, ack[$1], $2; bad++ } }
			END { printf "# %d records\n", n; exit bad > 0 || n == 0 }' "$D/frames.txt" -
}

@test "join (sender-side capture): every collapse gets the frame of its ACK" {
	local c
	c=$(grep -c '"type":"collapse"' "$D/trace.jsonl")
	echo "# $c collapses traced"
	expect_cmp "$c" -ge 1 "collapses traced"
	tk_run bbrpcap join "$D/trace.jsonl" "$D/snd.pcap" -o "$D/joined-snd.jsonl"
	expect_status 0
	all_matched "$D/joined-snd.jsonl" "$D/snd.pcap" collapse
}

@test "join (sender-side capture): every sample gets the frame of its ACK" {
	bbrpcap join "$D/trace.jsonl" "$D/snd.pcap" -o "$D/joined-snd.jsonl" > /dev/null
	all_matched "$D/joined-snd.jsonl" "$D/snd.pcap" sample
}

@test "join (receiver-side capture): every collapse and sample gets the frame of its ACK" {
	bbrpcap join "$D/trace.jsonl" "$D/rcv.pcap" -o "$D/joined-rcv.jsonl" > /dev/null
	all_matched "$D/joined-rcv.jsonl" "$D/rcv.pcap" collapse
	all_matched "$D/joined-rcv.jsonl" "$D/rcv.pcap" sample
}

@test "join: with two flows, each record's frame belongs to its own flow" {
	local n
	bbrpcap join "$D/trace.jsonl" "$D/snd.pcap" -o "$D/joined-snd.jsonl" > /dev/null
	expect_equal "$(jq -r 'select(.type == "sample") | .dport' "$D/joined-snd.jsonl" | sort -u | tr '\n' ' ')" "42200 42201 " "destination ports of the samples"
	# tcpdump's view of each frame: "IP 10.209.21.2.42200 > 10.209.21.1.PORT"
	tcpdump -r "$D/snd.pcap" -nn 2>/dev/null | awk '{ print NR, $3, $5 }' > "$D/ends.txt"
	n=$(jq -r 'select(.type == "sample" or .type == "collapse") | "\(.frame) \(.daddr).\(.dport) \(.saddr).\(.sport):"' "$D/joined-snd.jsonl" |
		awk 'FILENAME == ARGV[1] { e[$1] = $2 " " $3; next } { n++; if (e[$1] != $2 " " $3) { print "# frame " $1 ": " e[$1] " is not " $2 " " $3; bad++ } } END { exit bad > 0 || n == 0 }' "$D/ends.txt" - && echo ok)
	expect_equal "$n" ok "frame endpoints check"
}

@test "join: the collapse line names the frame, its time, the ACK, the cause and the estimate" {
	# -v: a line for every collapse, not only the first ten
	tk_run bbrpcap join -v "$D/trace.jsonl" "$D/snd.pcap" -o "$D/joined-snd.jsonl"
	expect_status 0
	local line frame t cause
	line=$(printf '%s\n' "$output" | head -1)
	echo "# $line"
	[[ $line =~ ^frame\ ([0-9]+)\ \(t=([0-9]+\.[0-9]{6})\ s\):\ ACK\ [0-9]+(\ came\ [0-9.]+\ (ms|µs)\ after\ the\ data\ it\ covers)?\;\ ([a-z_]+)\;\ BBR\ bw\ [0-9.]+\ Mbit/s\ →\ [0-9.]+\ Mbit/s$ ]]
	frame=${BASH_REMATCH[1]} t=${BASH_REMATCH[2]} cause=${BASH_REMATCH[5]}
	# the cause is the collapse record's own, and only a delayed ACK is described as late
	expect_equal "$cause" "$(jq -r 'select(.type == "collapse") | .cause' "$D/trace.jsonl" | head -1)" "cause on the first collapse line"
	[[ $cause == delayed_ack ]] || [[ $line != *"after the data"* ]]
	# the time is Wireshark's: seconds since the first frame
	requires tshark
	expect_equal "${t:0:8}" "$(tshark -r "$D/snd.pcap" -Y "frame.number == $frame" -T fields -e frame.time_relative 2>/dev/null | cut -c1-8)" "frame time on the collapse line"
	# the count of lines is the count of collapses
	expect_cmp "$(printf '%s\n' "$output" | grep -c '^frame ')" -eq "$(grep -c '"type":"collapse"' "$D/trace.jsonl")" "collapse lines, against collapses traced"
}

@test "join on the repro/dip.sh pair: the delayed-ACK collapse's ACK came tens of ms after its data" {
	local j=$D/dip-joined.jsonl n
	tk_run bbrpcap join "$PC_FIX/dip-paced.jsonl" "$PC_FIX/dip-paced.pcap" -o "$j"
	n=$(jq -r 'select(.type == "collapse" and .cause == "delayed_ack") | .ack_delay_us' "$j" |
		awk '{ n++; if ($1 < 10000 || $1 > 250000) bad++ } END { print n + 0; exit bad > 0 }')
	expect_cmp "$n" -ge 1 "delayed-ACK collapses"
	# and the line says so, in ms
	printf '%s\n' "$output" | grep -Eq '^frame [0-9]+ \(t=[0-9.]+ s\): ACK [0-9]+ came [1-9][0-9]\.[0-9] ms after the data it covers; delayed_ack; BBR bw [0-9.]+ Mbit/s → 0\.[0-9]+ Mbit/s$'
	# no other cause is described as a late ACK
	expect_cmp "$(printf '%s\n' "$output" | grep 'after the data it covers' | grep -vc '; delayed_ack; ')" -eq 0 "late-ACK lines of other causes"
}

@test "join: frame_time_ns is the capture's time of that frame, frame_time_s the same in seconds" {
	bbrpcap join "$D/trace.jsonl" "$D/snd.pcap" -o "$D/joined-snd.jsonl" > /dev/null
	pc_frame_acks "$D/snd.pcap" > "$D/frames.txt"
	jq -r 'select(.type == "collapse") | "\(.frame) \(.frame_time_ns)"' "$D/joined-snd.jsonl" |
		awk 'FILENAME == ARGV[1] { t[$1] = $3; next } { n++; s = sprintf("%.6f", $2 / 1e9); if (s != t[$1]) { print "# " $1 ": " s " vs " t[$1]; bad++ } } END { exit bad > 0 || n == 0 }' "$D/frames.txt" -
	jq -e -s 'map(select(.frame != null)) | length > 0 and all((.frame_time_s - .frame_time_ns / 1e9 | fabs) < 1e-6)' "$D/joined-snd.jsonl" > /dev/null
}

@test "join: records keep every field they had, in order, and gain frame fields" {
	bbrpcap join "$D/trace.jsonl" "$D/snd.pcap" -o "$D/joined-snd.jsonl" > /dev/null
	expect_cmp "$(wc -l < "$D/joined-snd.jsonl")" -eq "$(wc -l < "$D/trace.jsonl")" "records joined, against records traced"
	diff <(jq -c 'del(.frame, .frame_time_s, .frame_time_ns, .frame_time_rel_s, .ack_delay_us)' "$D/joined-snd.jsonl") \
		<(jq -c . "$D/trace.jsonl")
}

@test "join: a trace with only the monotonic clock (no wall_ns) still matches every collapse" {
	jq -c 'del(.wall_ns)' "$D/trace.jsonl" > "$D/mono.jsonl"
	tk_run bbrpcap join -v "$D/mono.jsonl" "$D/snd.pcap" -o "$D/joined-mono.jsonl"
	expect_status 0
	expect_stderr "clock offset (capture - trace)"
	all_matched "$D/joined-mono.jsonl" "$D/snd.pcap" collapse
}

@test "join without -o writes the records to stdout and the lines to stderr" {
	tk_run bbrpcap join "$D/trace.jsonl" "$D/snd.pcap"
	expect_status 0
	expect_cmp "$(printf '%s\n' "$output" | wc -l)" -eq "$(wc -l < "$D/trace.jsonl")" "records on stdout, against records traced"
	expect_stderr "frame "
	expect_stderr "; BBR bw "
}

@test "join --strict exits 21 (unmatched) when a collapse has no frame in the capture" {
	local n
	n=$(pc_frame_acks "$D/snd.pcap" | wc -l)
	# the first tenth of the capture only: later collapses have no frame
	tcpdump -r "$D/snd.pcap" -c $((n / 10)) -w "$D/early.pcap" 2>/dev/null
	tk_run bbrpcap join --strict "$D/trace.jsonl" "$D/early.pcap" -o "$D/joined-early.jsonl"
	expect_status 21
	expect_output "no frame (trace line"
	tk_run bbrpcap join "$D/trace.jsonl" "$D/early.pcap" -o "$D/joined-early.jsonl"
	expect_status 0
}

@test "join over the capture cut into files, given newest first: the records and lines of the whole, frames numbered on" {
	requires editcap
	local d=$D/parts frames per
	mkdir -p "$d"
	# an independent writer cuts the capture into three files (four when the
	# count does not divide), whatever the push made on a loaded machine
	frames=$(tcpdump -r "$D/snd.pcap" -nq 2>/dev/null | wc -l)
	per=$((frames / 3))
	expect_cmp "$per" -ge 100 "frames per file"
	editcap -c "$per" "$D/snd.pcap" "$d/part.pcap"
	local -a parts
	mapfile -t parts < <(ls "$d"/part_*.pcap | sort -r)
	echo "# $frames frames in ${#parts[@]} files of $per"
	expect_cmp "${#parts[@]}" -ge 3 "files the capture is cut into"
	bbrpcap join "$D/trace.jsonl" "$D/snd.pcap" -o "$D/joined-whole.jsonl" > "$D/lines-whole.txt"
	tk_run bbrpcap join "$D/trace.jsonl" "${parts[@]}" -o "$D/joined-parts.jsonl"
	expect_status 0
	diff "$D/joined-whole.jsonl" "$D/joined-parts.jsonl"
	diff "$D/lines-whole.txt" <(printf '%s\n' "$output")
	all_matched "$D/joined-parts.jsonl" "$D/snd.pcap" collapse
	# frames from the last files too: numbered past the first two files'
	expect_cmp "$(jq -s 'map(.frame // 0) | max' "$D/joined-parts.jsonl")" -gt $((2 * per)) "highest frame number joined"
}

@test "join: a malformed trace line is named; the records before it are still joined" {
	head -20 "$D/trace.jsonl" > "$D/bad.jsonl"
	echo '{"type":"sample","t_ns":' >> "$D/bad.jsonl"
	tk_run bbrpcap join "$D/bad.jsonl" "$D/snd.pcap" -o "$D/joined-bad.jsonl"
	expect_status 5
	expect_stderr "bad.jsonl:21: not a JSON record: expected a value at column 25; the 20 lines before it were read"
	expect_cmp "$(wc -l < "$D/joined-bad.jsonl")" -eq 20 "records joined before the bad line"
}

@test "join needs a trace and a capture" {
	tk_run bbrpcap join "$D/trace.jsonl"
	expect_status 2
	expect_one_line_stderr
	expect_stderr "bbrpcap: join: needs TRACE.jsonl and CAPTURE"
}

@test "join on the pair from a repro/dip.sh run: every collapse gets the frame of its ACK" {
	local j=$D/dip-joined.jsonl
	tk_run bbrpcap join "$PC_FIX/dip-paced.jsonl" "$PC_FIX/dip-paced.pcap" -o "$j"
	expect_status 0
	expect_cmp "$(grep -c '"type":"collapse"' "$PC_FIX/dip-paced.jsonl")" -ge 1 "collapses in the dip trace"
	all_matched "$j" "$PC_FIX/dip-paced.pcap" collapse
	expect_output "after the data it covers"
}

@test "join on the repro/dip.sh pair: samples inside the capture all get their frame" {
	local j=$D/dip-joined.jsonl last
	bbrpcap join "$PC_FIX/dip-paced.jsonl" "$PC_FIX/dip-paced.pcap" -o "$j" > /dev/null
	# the capture ends a little before the trace (dip.sh stops tcpdump first):
	# samples after its last frame have none
	last=$(pc_frame_acks "$PC_FIX/dip-paced.pcap" | tail -1 | awk '{ printf "%.0f", $3 * 1e9 }')
	jq -c --argjson last "$last" 'select(.type != "sample" or .wall_ns <= $last)' "$j" > "$D/dip-inside.jsonl"
	all_matched "$D/dip-inside.jsonl" "$PC_FIX/dip-paced.pcap" sample
}

@test "join across sequence wraparound: a 4.4 GB flow, every sample gets the frame of its ACK" {
	local t=$D/wrap.jsonl round dropped falls after
	# the flow runs the CPU flat out: a capture whose kernel buffer overflowed
	# (tcpdump's own count) lacks frames, and cannot judge the join; the flow
	# runs again, 3 times at most
	for round in 1 2 3; do
		pc_bbrtrace_start "$t" --daddr 10.209.21.2 --dport 42250
		pc_tcpdump_start "$A" "$D/wrap.pcap" -i veth0 -s 96 -B 32768 tcp port 42250
		pc_iperf_server "$B" 42250
		ip netns exec "$A" timeout 60 iperf3 -c 10.209.21.2 -p 42250 -C bbr_traced -n 4400M > /dev/null
		pc_tcpdump_stop
		pc_bbrtrace_stop
		dropped=$(pc_tcpdump_dropped "$D/wrap.pcap")
		[ "${dropped:-x}" = 0 ] && break
		echo "# round $round: tcpdump dropped ${dropped:-an unknown number of} packets" >&3
	done
	[ "${dropped:-x}" = 0 ] || { echo "# every round's capture lost packets"; return 1; }
	# the sequence numbers wrapped: the data flow's snd_una fell by more than
	# half the space (2^31), and samples follow the fall. The trace holds
	# iperf3's control connection too (same port, its own ISN), so this reads
	# the flow with the most samples alone. iperf3's 4400M is 4,613,734,400
	# bytes: more than 2^32 and less than 2^33, so snd_una falls once, or
	# twice when the ISN (random) lies in the space's top 304 MiB, 7.4% of
	# flows. Where the first fall comes is the ISN's choice too, so no count
	# of samples below it is sure; but 304 MiB at least are sent after it,
	# thousands of samples
	read -r falls after < <(jq -r 'select(.type == "sample") | "\(.sport) \(.snd_una)"' "$t" |
		awk '{ n[$1]++; s[NR] = $1; u[NR] = $2 }
			END { for (p in n) if (n[p] > n[d]) d = p
				for (i = 1; i <= NR; i++) if (s[i] == d) {
					if (seen && prev - u[i] > 2147483648) f++
					if (f) a++
					prev = u[i]; seen = 1 }
				print f + 0, a + 0 }')
	echo "# snd_una of the data flow wrapped $falls time(s); $after samples from the wrap on"
	expect_cmp "$falls" -ge 1 "times the data flow's snd_una wrapped"
	expect_cmp "$falls" -le 2 "times the data flow's snd_una wrapped"
	expect_cmp "$after" -gt 100 "samples from the wrap on"
	tk_run bbrpcap join "$t" "$D/wrap.pcap" -o "$D/wrap-joined.jsonl"
	expect_status 0
	all_matched "$D/wrap-joined.jsonl" "$D/wrap.pcap" sample
}
