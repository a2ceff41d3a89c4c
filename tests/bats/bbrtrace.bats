#!/usr/bin/env bats
# bbrtrace: arguments, privileges, backends, and real BBR flows between two
# network namespaces traced with the struct_ops backend.

load helpers

NS=bt-${BATS_ROOT_PID}

setup_file() {

	requires root netns bbr struct_ops iperf3 jq ss nstat bpftool tcpdump
	tk_lock_bbr_traced
	tk_netns_pair "$NS"
}

teardown_file() {
	tk_cleanup
	tk_unlock_bbr_traced
}

teardown() {
	# nothing a test started may outlive it
	jobs -p | xargs -r kill -INT 2>/dev/null || true
	sleep 0.3
	jobs -p | xargs -r kill -9 2>/dev/null || true
	ip netns pids "$NS-a" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
	ip netns pids "$NS-b" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
	sleep 0.2
	return 0
}

# samples of flows to port $1 in JSON file $2
samples_to() { jq -c "select(.type==\"sample\" and .dport==$1)" "$2"; }

@test "--help explains the backends and --version prints one line" {
	tk_run bbrtrace --help
	expect_status 0
	expect_output "struct_ops  registers congestion control 'bbr_traced'"
	expect_output "--set-default"
	tk_run bbrtrace --version
	expect_status 0
	[[ $output =~ ^bbrtrace\ [^\ ]+$ ]] || { tk_dump "version line"; false; }
}

@test "bad arguments: one line each, exit 2" {
	tk_run bbrtrace --dport 70000
	expect_status 2; expect_one_line_stderr
	expect_stderr "bbrtrace: --dport: 70000 is out of range 0..65535"
	tk_run bbrtrace --saddr 1.2.3
	expect_status 2; expect_one_line_stderr
	expect_stderr "bbrtrace: --saddr: '1.2.3' is not an IPv4 or IPv6 address"
	tk_run bbrtrace --backend ebpf
	expect_status 2; expect_one_line_stderr
	expect_stderr "bbrtrace: --backend: 'ebpf' is not one of auto|fentry|kprobe|struct_ops"
	tk_run bbrtrace --duration 2.5
	expect_status 2; expect_one_line_stderr
	expect_stderr "bbrtrace: --duration: '2.5' is not an integer"
	tk_run bbrtrace --ringbuf-mb 3
	expect_status 2
	expect_stderr "bbrtrace: --ringbuf-mb: 3 is not a power of two"
	tk_run bbrtrace --bogus
	expect_status 2
	expect_stderr "bbrtrace: unknown option '--bogus'"
}

@test "without root: a clear error naming the privilege, exit 3" {
	tk_run setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$BIN/bbrtrace" -d 1
	expect_status 3; expect_one_line_stderr
	expect_stderr "loading BPF programs needs root (or CAP_BPF, CAP_PERFMON and CAP_NET_ADMIN)"
}

@test "without kernel BTF: a clear error naming BTF, exit 4" {
	TK_VMLINUX_BTF=/nonexistent/vmlinux tk_run bbrtrace -d 1
	expect_status 4; expect_one_line_stderr
	expect_stderr "this kernel has no BTF (/nonexistent/vmlinux is missing; it needs CONFIG_DEBUG_INFO_BTF=y)"
}

@test "--probe: kprobe programs pass the verifier; each refusal is one clear reason" {
	tk_run bbrtrace --probe
	expect_status 0
	[ "${#lines[@]}" -eq 3 ] || { tk_dump "three lines"; false; }
	# struct_ops works on any kernel this project supports
	expect_output "struct_ops load: ok ("
	[[ ${lines[2]} == *"attach: ok" ]] || { tk_dump "struct_ops attaches"; false; }
	# kprobe programs load wherever BPF_PROG_TYPE_KPROBE exists
	[[ ${lines[1]} == "kprobe     load: ok ("*" programs passed the verifier); attach: "* ]] ||
		{ tk_dump "kprobe line"; false; }
	if [ ! -e /sys/bus/event_source/devices/kprobe/type ]; then
		[[ ${lines[1]} == *"attach: no: this kernel has no kprobe support (no kprobe PMU, no kprobe_events)" ]] ||
			{ tk_dump "kprobe refusal text"; false; }
	fi
	# fentry: either it loads, or the reason is the kernel's refusal in words
	[[ ${lines[0]} == "fentry     load: ok ("* || ${lines[0]} == "fentry     load: no: the kernel refused to load the fentry/fexit programs ("* ]] ||
		{ tk_dump "fentry line"; false; }
}

@test "auto says in one line which backend it uses and why the others were refused" {
	tk_run bbrtrace -d 1 -f json -o /dev/null
	expect_status 0
	local first=${stderr%%$'\n'*}
	if [ ! -e /sys/bus/event_source/devices/kprobe/type ]; then
		[[ $first == "bbrtrace: backend "*"kprobe: this kernel has no kprobe support (no kprobe PMU, no kprobe_events)"* ]] ||
			{ tk_dump "auto line"; false; }
	fi
	[[ $first == "bbrtrace: backend fentry"* || $first == "bbrtrace: backend kprobe"* ||
		$first == "bbrtrace: backend struct_ops (fentry: "*"; kprobe: "*")" ]] ||
		{ tk_dump "auto line names the backend"; false; }
}

@test "a real iperf3 BBR flow: one sample per ACK, every field present and plausible" {
	local out=$BATS_TEST_TMPDIR/trace.jsonl
	ip netns exec "$NS-b" iperf3 -s -1 -p 5201 -D
	tk_wait_listen 5201 5 "$NS-b"
	bbrtrace -b struct_ops -f json -o "$out" -d 5 --set-default-in "$NS-a" -q &
	local tracer=$!
	tk_wait_for "grep -qw bbr_traced /proc/sys/net/ipv4/tcp_available_congestion_control" 10
	tk_wait_for "[ \$(ip netns exec $NS-a sysctl -n net.ipv4.tcp_congestion_control) = bbr_traced ]" 5
	local cap=$BATS_TEST_TMPDIR/acks.pcap coalesced
	ip netns exec "$NS-a" tcpdump -i veth0 -s 96 -w "$cap" --immediate-mode -U \
		'tcp and src host 10.201.0.2' 2> "$BATS_TEST_TMPDIR/tcpdump.err" &
	local dump=$!
	tk_wait_for "[ -s $cap ]" 5
	ip netns exec "$NS-a" iperf3 -c 10.201.0.2 -p 5201 -t 2 -b 300M > /dev/null
	# ACKs queued while the socket was busy are merged in its backlog, and
	# then reach bbr_main once (tcp_add_backlog); the namespace is new, so
	# its counter counts this run only
	coalesced=$(ip netns exec "$NS-a" nstat -az TcpExtTCPBacklogCoalesce | awk '/Coalesce/ {print $2}')
	wait "$tracer"
	# let tcpdump catch up before stopping it: it must not miss the last ACKs
	sleep 1
	kill -INT "$dump"
	wait "$dump" || true
	grep -q '^0 packets dropped by kernel' "$BATS_TEST_TMPDIR/tcpdump.err" ||
		{ cat "$BATS_TEST_TMPDIR/tcpdump.err"; false; }
	# the data connection: the one with the most samples
	lport=$(jq -r 'select(.type=="sample") | .sport' "$out" | sort | uniq -c | sort -rn | awk 'NR==1 {print $2}')
	n=$(jq -c "select(.type==\"sample\" and .sport==$lport)" "$out" | wc -l)
	# from the wire: every ACK the receiver sent on that connection, and the
	# ACKs that acknowledged new data
	read -r all advancing < <(tcpdump -r "$cap" -nn -S "tcp dst port $lport" 2> /dev/null |
		awk '{for (i = 1; i <= NF; i++) if ($i == "ack") { a = $(i + 1) + 0; n++; if (a > last) adv++; last = a }}
		     END {print n, adv}')
	echo "# samples $n; ACKs on the wire $all, of which $advancing acknowledged new data; $coalesced merged in the backlog"
	# bbr_main runs once for every ACK that finds data in flight: every
	# advancing ACK (less those merged), never more than all ACKs (plus the SYN-ACK)
	[ "$n" -gt 200 ]
	[ "$n" -ge "$((advancing - coalesced))" ]
	[ "$n" -le "$((all + 1))" ]
	# the summary counts the same samples, and nothing was lost
	total=$(jq -c 'select(.type=="sample")' "$out" | wc -l)
	jq -e "select(.type==\"summary\") | .samples == $total and .lost == 0 and .backend == \"struct_ops\" and .elapsed_s >= 4" "$out"
	# every field of the sample record, in order
	keys=$(jq -c 'select(.type=="sample") | keys_unsorted' "$out" | sort -u)
	[ "$keys" = '["type","t_ns","wall_ns","cookie","saddr","daddr","sport","dport","snd_una","snd_nxt","mss","cwnd","pacing_rate_bps","delivered","interval_us","snd_interval_us","rcv_interval_us","rtt_us","losses","acked_sacked","prior_in_flight","is_app_limited","is_retrans","is_ack_delayed","sample_bw_bps","bw_prev_bps","bw_bps","mode","pacing_gain","cwnd_gain","min_rtt_us","lt_use_bw"]' ]
	# plausibility: interval_us is the larger of the two intervals (or -1 for
	# a sample the kernel marked invalid, whose bandwidth is then null)
	bad=$(jq -c 'select(.type=="sample") | select(
		((.interval_us != -1) and (.interval_us != ([.snd_interval_us, .rcv_interval_us] | max)))
		or ((.interval_us == -1) and (.sample_bw_bps != null))
		or (.bw_bps < 0) or (.bw_prev_bps < 0)
		or ((.mode | IN("STARTUP","DRAIN","PROBE_BW","PROBE_RTT")) | not)
		or (.mss != 1448) or (.saddr != "10.201.0.1") or (.daddr != "10.201.0.2")
		or (.pacing_gain <= 0) or (.cwnd < 1)
		or ((.snd_una - .snd_nxt) > 0 and (.snd_una - .snd_nxt) < 2147483648))' "$out" | head -3)
	[ -z "$bad" ] || { echo "# implausible: $bad"; false; }
	# BBR built a bandwidth estimate, and the samples carry a cookie
	jq -e -s '[.[] | select(.type=="sample" and .dport==5201 and .bw_bps > 100000000)] | length > 10' "$out"
	jq -e -s '[.[] | select(.type=="sample")] | (map(select(.cookie > 0)) | length) >= 0.9 * length' "$out"
	# wall clock within 10 s of now, and monotonic time increasing
	now=$(date +%s)
	jq -e -s "[.[] | select(.type==\"sample\")] | (.[0].wall_ns / 1e9 - $now | fabs) < 10" "$out"
	jq -e -s '[.[] | select(.type=="sample") | .t_ns] | . == sort' "$out"
}

@test "an idle traced flow agrees with ss -tin: mss, cwnd, pacing rate, min RTT and bw" {
	local out=$BATS_TEST_TMPDIR/trace.jsonl
	ip netns exec "$NS-b" "$TK_ROOT/tests/tools/tcpflow.py" sink 5300 &
	tk_wait_listen 5300 5 "$NS-b"
	bbrtrace -b struct_ops -f json -o "$out" -d 8 -q &
	local tracer=$!
	tk_wait_for "grep -qw bbr_traced /proc/sys/net/ipv4/tcp_available_congestion_control" 10
	ip netns exec "$NS-a" "$TK_ROOT/tests/tools/tcpflow.py" send 10.201.0.2 5300 \
		--bytes 30000000 --cc bbr_traced --hold 5 > "$BATS_TEST_TMPDIR/send.out" &
	tk_wait_for "grep -q '^sent' $BATS_TEST_TMPDIR/send.out" 20
	sleep 1 # idle: the last ACK has been processed
	ss_line=$(ip netns exec "$NS-a" ss -tin 'dport = :5300' | tail -n 1)
	ss_ns=$(date +%s%N)
	lport=$(awk '/lport/ {print $2}' "$BATS_TEST_TMPDIR/send.out")
	wait "$tracer"
	echo "# ss: $ss_line"
	# the sample of the last ACK before ss looked (the FIN's ACK comes later)
	last=$(samples_to 5300 "$out" | jq -c "select(.sport==$lport and .wall_ns < $ss_ns)" | tail -n 1)
	echo "# last sample: $last"
	[ -n "$last" ]
	ss_mss=$(grep -oP '(?<= mss:)\d+' <<< "$ss_line")
	ss_cwnd=$(grep -oP '(?<= cwnd:)\d+' <<< "$ss_line")
	ss_pacing=$(grep -oP '(?<= pacing_rate )\d+(?=bps)' <<< "$ss_line")
	ss_minrtt=$(grep -oP '(?<= minrtt:)[0-9.]+' <<< "$ss_line")
	[ "$(jq .mss <<< "$last")" = "$ss_mss" ]
	[ "$(jq .cwnd <<< "$last")" = "$ss_cwnd" ]
	[ "$(jq .pacing_rate_bps <<< "$last")" = "$ss_pacing" ]
	# ss prints the min RTT in ms with three decimals
	jq -e "(.min_rtt_us / 1000 - $ss_minrtt | fabs) <= 0.001" <<< "$last"
	if grep -q 'bbr:(bw:' <<< "$ss_line"; then
		# kernel bbr (fentry/kprobe backends): ss prints BBR's bw itself
		ss_bw=$(grep -oP '(?<=bbr:\(bw:)[0-9.]+[KMG]?(?=bps)' <<< "$ss_line")
		jq -e --arg bw "$ss_bw" '($bw | capture("(?<v>[0-9.]+)(?<u>[KMG]?)")) as $m |
			($m.v | tonumber) * ({"": 1, "K": 1e3, "M": 1e6, "G": 1e9}[$m.u]) as $b |
			((.bw_bps - $b) | fabs) / $b < 0.01' <<< "$last"
	else
		# BPF congestion controls cannot provide get_info, so ss has no
		# bbr:(...) for bbr_traced; BBR sets the pacing rate from bw as
		# bw * pacing_gain * 99% (bbr_rate_bytes_per_sec), so check bw by it
		jq -e '.mode == "PROBE_BW"' <<< "$last"
		jq -e "((.bw_bps / 8 * .pacing_gain * 0.99 - $ss_pacing / 8) | fabs) / ($ss_pacing / 8) < 0.001" <<< "$last"
	fi
}

@test "filters run in the kernel: --dport and IPv6 --daddr select one flow" {
	local out=$BATS_TEST_TMPDIR/trace.jsonl out6=$BATS_TEST_TMPDIR/trace6.jsonl
	ip netns exec "$NS-b" "$TK_ROOT/tests/tools/tcpflow.py" sink 5301 &
	ip netns exec "$NS-b" "$TK_ROOT/tests/tools/tcpflow.py" sink 5302 --addr :: &
	tk_wait_listen 5301 5 "$NS-b"
	tk_wait_listen 5302 5 "$NS-b"
	bbrtrace -b struct_ops -f json -o "$out" -d 4 --dport 5302 --set-default-in "$NS-a" -q &
	local pid=$!
	tk_wait_for "[ \$(ip netns exec $NS-a sysctl -n net.ipv4.tcp_congestion_control) = bbr_traced ]" 10
	ip netns exec "$NS-a" "$TK_ROOT/tests/tools/tcpflow.py" send 10.201.0.2 5301 --bytes 5000000 > /dev/null
	ip netns exec "$NS-a" "$TK_ROOT/tests/tools/tcpflow.py" send fd00:201::2 5302 --bytes 5000000 > /dev/null
	wait "$pid"
	[ "$(jq -r 'select(.type=="sample") | .dport' "$out" | sort -u)" = 5302 ]
	[ "$(jq -r 'select(.type=="sample") | .daddr' "$out" | sort -u)" = fd00:201::2 ]
	[ "$(jq -r 'select(.type=="sample") | .saddr' "$out" | sort -u)" = fd00:201::1 ]
	bbrtrace -b struct_ops -f json -o "$out6" -d 4 --daddr 10.201.0.2 --set-default-in "$NS-a" -q &
	pid=$!
	tk_wait_for "[ \$(ip netns exec $NS-a sysctl -n net.ipv4.tcp_congestion_control) = bbr_traced ]" 10
	ip netns exec "$NS-a" "$TK_ROOT/tests/tools/tcpflow.py" send fd00:201::2 5302 --bytes 5000000 > /dev/null
	ip netns exec "$NS-a" "$TK_ROOT/tests/tools/tcpflow.py" send 10.201.0.2 5301 --bytes 5000000 > /dev/null
	wait "$pid"
	[ "$(jq -r 'select(.type=="sample") | .dport' "$out6" | sort -u)" = 5301 ]
	jq -e 'select(.type=="summary") | .samples > 10' "$out6"
}

@test "csv has a header row; the table fits 120 columns and carries units" {
	local fmt pid
	ip netns exec "$NS-b" "$TK_ROOT/tests/tools/tcpflow.py" sink 5303 &
	tk_wait_listen 5303 5 "$NS-b"
	for fmt in csv table; do
		bbrtrace -b struct_ops -f $fmt -o "$BATS_TEST_TMPDIR/t.$fmt" -d 3 --set-default-in "$NS-a" -q &
		pid=$!
		tk_wait_for "[ \$(ip netns exec $NS-a sysctl -n net.ipv4.tcp_congestion_control) = bbr_traced ]" 10
		ip netns exec "$NS-a" "$TK_ROOT/tests/tools/tcpflow.py" send 10.201.0.2 5303 --bytes 3000000 > /dev/null
		wait "$pid"
	done
	head -n 1 "$BATS_TEST_TMPDIR/t.csv" | grep -q '^t_ns,wall_ns,cookie,saddr,daddr,sport,dport,snd_una,'
	[ "$(head -n 1 "$BATS_TEST_TMPDIR/t.csv" | tr ',' '\n' | wc -l)" -eq 31 ]
	[ "$(wc -l < "$BATS_TEST_TMPDIR/t.csv")" -gt 10 ]
	[ "$(grep -c '^t_ns,' "$BATS_TEST_TMPDIR/t.csv")" -eq 1 ]
	head -n 1 "$BATS_TEST_TMPDIR/t.table" | grep -q 'time s.*snd_una.*snd us.*rcv us.*rtt us.*bw0 Mb/s.*bw Mb/s.*mode'
	[ "$(wc -L < "$BATS_TEST_TMPDIR/t.table")" -le 120 ]
	[ "$(wc -l < "$BATS_TEST_TMPDIR/t.table")" -gt 10 ]
}

@test "a second struct_ops bbrtrace is refused while one runs, naming its pid" {
	bbrtrace -b struct_ops -f json -o /dev/null -d 6 -q &
	local pid=$!
	tk_wait_for "grep -qw bbr_traced /proc/sys/net/ipv4/tcp_available_congestion_control" 10
	tk_run bbrtrace -b struct_ops -d 1
	expect_status 1
	expect_stderr "bbrtrace: struct_ops: bbr_traced is already registered by pid $pid (bbrtrace); one struct_ops tracer runs at a time"
	kill -INT "$pid"
	wait "$pid"
}

@test "SIGINT: clean exit 0, summary written, sysctl restored, bbr_traced gone" {
	local out=$BATS_TEST_TMPDIR/trace.jsonl
	bbrtrace -b struct_ops -f json -o "$out" --set-default-in "$NS-a" -q &
	local pid=$!
	tk_wait_for "[ \$(ip netns exec $NS-a sysctl -n net.ipv4.tcp_congestion_control) = bbr_traced ]" 10
	kill -INT "$pid"
	wait "$pid"
	jq -e 'select(.type=="summary") | .samples == 0 and .lost == 0' "$out"
	[ "$(ip netns exec "$NS-a" sysctl -n net.ipv4.tcp_congestion_control)" = bbr ]
	! grep -qw bbr_traced /proc/sys/net/ipv4/tcp_available_congestion_control
}

@test "kill -9 while tracing leaves no bbr_traced, no program, and the sysctl restored" {
	ip netns exec "$NS-b" "$TK_ROOT/tests/tools/tcpflow.py" sink 5304 &
	tk_wait_listen 5304 5 "$NS-b"
	bbrtrace -b struct_ops -f json -o /dev/null --set-default-in "$NS-a" -q &
	local pid=$!
	tk_wait_for "[ \$(ip netns exec $NS-a sysctl -n net.ipv4.tcp_congestion_control) = bbr_traced ]" 10
	ip netns exec "$NS-a" "$TK_ROOT/tests/tools/tcpflow.py" send 10.201.0.2 5304 --bytes 3000000 > /dev/null
	bpftool prog show | grep -q 'name bt_main' # attached while tracing
	kill -9 "$pid"
	wait "$pid" || true
	tk_wait_for "! grep -qw bbr_traced /proc/sys/net/ipv4/tcp_available_congestion_control" 10
	tk_wait_for "[ \$(ip netns exec $NS-a sysctl -n net.ipv4.tcp_congestion_control) = bbr ]" 10
	# the kernel frees the programs once the last reference (link, sysctl) is gone
	tk_wait_for "! bpftool prog show | grep -qE 'name (bt_main|bt_init|bt_assign_cookie)'" 10
	tk_wait_for "! pgrep -x bbrtrace-guard" 5
}

@test "a stale bbr_traced (registered without a link) is reported at start, and --cleanup removes it" {
	bpftool struct_ops register "$TK_ROOT/build/gen/bbr_traced.bpf.o" > /dev/null
	grep -qw bbr_traced /proc/sys/net/ipv4/tcp_available_congestion_control
	tk_run bbrtrace -b struct_ops -d 1
	expect_status 1
	expect_stderr "bbrtrace: struct_ops: a stale bbr_traced is registered (struct_ops map id "
	expect_stderr "remove it with: bbrtrace --cleanup"
	tk_run bbrtrace --cleanup
	expect_status 0
	expect_stderr "bbrtrace: removed stale bbr_traced (struct_ops map id "
	! grep -qw bbr_traced /proc/sys/net/ipv4/tcp_available_congestion_control
	tk_run bbrtrace --cleanup
	expect_status 0
	expect_stderr "nothing to clean"
}

@test "a reader that falls behind: lost events are counted and reported, never hidden" {
	local out=$BATS_TEST_TMPDIR/trace.jsonl
	ip netns exec "$NS-b" "$TK_ROOT/tests/tools/tcpflow.py" sink 5305 &
	tk_wait_listen 5305 5 "$NS-b"
	# a 1 MiB ring buffer and a reader stopped for 3 s under a busy flow
	bbrtrace -b struct_ops --ringbuf-mb 1 -f json -o "$out" -d 8 --set-default-in "$NS-a" \
		2> "$BATS_TEST_TMPDIR/err" &
	local pid=$!
	tk_wait_for "[ \$(ip netns exec $NS-a sysctl -n net.ipv4.tcp_congestion_control) = bbr_traced ]" 10
	kill -STOP "$pid"
	timeout 20 ip netns exec "$NS-a" iperf3 -c 10.201.0.2 -p 5201 -t 1 > /dev/null 2>&1 || true
	ip netns exec "$NS-b" iperf3 -s -1 -p 5201 -D
	tk_wait_listen 5201 5 "$NS-b"
	ip netns exec "$NS-a" iperf3 -c 10.201.0.2 -p 5201 -t 3 -M 500 -N -l 500 > /dev/null
	kill -CONT "$pid"
	wait "$pid"
	cat "$BATS_TEST_TMPDIR/err"
	jq -e 'select(.type=="summary") | .lost > 0 and .samples > 1000' "$out"
	lost=$(jq 'select(.type=="summary") | .lost' "$out")
	grep -q "samples in .* s, $lost lost (ring buffer full: raise --ringbuf-mb or filter flows)" "$BATS_TEST_TMPDIR/err"
}

@test "on a terminal: table by default, and a live count on stderr while writing to a file" {
	requires script
	# script(1) gives bbrtrace a terminal for stdout and stderr
	script -qfec "$BIN/bbrtrace -b struct_ops -d 2" "$BATS_TEST_TMPDIR/tty1" > /dev/null
	grep -q 'time s.*snd_una.*bw Mb/s.*mode' "$BATS_TEST_TMPDIR/tty1" ||
		{ cat "$BATS_TEST_TMPDIR/tty1"; false; }
	script -qfec "$BIN/bbrtrace -b struct_ops -d 3 -f json -o $BATS_TEST_TMPDIR/t.jsonl" \
		"$BATS_TEST_TMPDIR/tty2" > /dev/null
	grep -qa $'\rbbrtrace: 0 samples, 0 lost' "$BATS_TEST_TMPDIR/tty2" ||
		{ cat -A "$BATS_TEST_TMPDIR/tty2"; false; }
}
