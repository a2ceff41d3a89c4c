#!/usr/bin/env bats
# tier: check
# Every tool's command line, as a user meets it before anything runs: --help
# and --version, and the one-line refusal (exit 2) of each bad argument. No
# privilege, network or kernel feature is needed: `make check` runs this.

load helpers

@test "bbrtrace --help explains the backends and --version prints one line" {
	tk_run bbrtrace --help
	expect_status 0
	expect_output "struct_ops  registers congestion control 'bbr_traced'"
	expect_output "--set-default"
	tk_run bbrtrace --version
	expect_status 0
	expect_version bbrtrace
}

# a threshold of bbrtrace/rules.h or lib/demand.h, its number as written there ("5.0", "250000")
bt_rule() {
	sed -n "s/^#define $1 \([0-9.]*\)u\{0,1\}\$/\1/p" "$TK_ROOT/bbrtrace/rules.h" "$TK_ROOT/lib/demand.h"
}

@test "bbrtrace --help keeps to the options and names --help-detect" {
	tk_run bbrtrace --help
	expect_status 0
	expect_output "      --help-detect "
	expect_output ": --help-detect;"
	local n
	n=$(printf '%s\n' "$output" | grep -c '')
	[ "$n" -le 70 ] || { tk_dump "--help has $n lines, over 70"; return 1; }
	[[ $output != *"rcv_interval_us"* ]] || { tk_dump "--help holds the detector's method"; return 1; }
}

@test "bbrtrace --help-detect prints the fields and the method with the thresholds of rules.h" {
	tk_run bbrtrace --help-detect
	expect_status 0
	[ -z "$stderr" ] || { tk_dump "expected nothing on stderr"; return 1; }
	# the text is wrapped: its phrases are matched across line ends
	output=$(printf '%s' "$output" | tr '\n' ' ')
	expect_output "Each sample: t_ns (CLOCK_MONOTONIC)"
	expect_output "a collapse is an ACK after which BBR's estimate"
	expect_output "rcv_interval_us >= $(printf '%g' "$(bt_rule BT_DELACK_RATIO)") x snd_interval_us"
	expect_output "<= $(($(bt_rule BT_DELACK_CEIL_US) / 1000)) ms"
	expect_output "under $(printf '%.2f' "$(bt_rule BT_THROTTLE_HEADROOM)") x the flow's demand"
	expect_output "the last $(bt_rule BT_DEMAND_WINDOW_MS) ms"
	expect_output "under $(bt_rule BT_FIX_MIN_THROTTLED_MS) ms and $(bt_rule BT_FIX_MIN_LATE_BYTES) bytes"
	expect_output "for $(($(bt_rule BT_STALL_MIN_US) / 1000)) ms or more is a stall"
}

@test "bbrtrace bad arguments: one line each, exit 2" {
	tk_run bbrtrace --dport 70000
	expect_status 2; expect_one_line_stderr
	expect_stderr "bbrtrace: --dport: 70000 is out of range 0..65535"
	tk_run bbrtrace --saddr 1.2.3
	expect_status 2; expect_one_line_stderr
	expect_stderr "bbrtrace: --saddr: '1.2.3' is not an IPv4 or IPv6 address"
	tk_run bbrtrace --backend ebpf
	expect_status 2; expect_one_line_stderr
	expect_stderr "bbrtrace: --backend: 'ebpf' is not one of auto|fentry|kprobe|struct_ops"
	tk_run bbrtrace --duration 2.5x
	expect_status 2; expect_one_line_stderr
	expect_stderr "bbrtrace: --duration: '2.5x' is not a number"
	tk_run bbrtrace --ringbuf-mb 3
	expect_status 2
	expect_stderr "bbrtrace: --ringbuf-mb: 3 is not a power of two"
	tk_run bbrtrace --bogus
	expect_status 2; expect_one_line_stderr
	expect_stderr "bbrtrace: unknown option '--bogus' (see --help)"
	tk_run bbrtrace --probe=1
	expect_status 2; expect_one_line_stderr
	expect_stderr "bbrtrace: --probe takes no value (see --help)"
	tk_run bbrtrace --dport
	expect_status 2; expect_one_line_stderr
	expect_stderr "bbrtrace: --dport needs a value (see --help)"
	tk_run bbrtrace --records acks
	expect_status 2; expect_one_line_stderr
	expect_stderr "bbrtrace: --records: 'acks' is not one of samples|events|none"
	tk_run bbrtrace --records events
	expect_status 2; expect_one_line_stderr
	expect_stderr "bbrtrace: --records events: only --detect (or --prometheus) makes events"
	tk_run bbrtrace --max-flows 8
	expect_status 2; expect_one_line_stderr
	expect_stderr "bbrtrace: --max-flows: 8 is out of range 16..4194304"
	tk_run bbrtrace --set-default-in a/b
	expect_status 2; expect_one_line_stderr
	expect_stderr "bbrtrace: --set-default-in: network namespace name 'a/b' is not a plain name"
}

# CMD... without privilege: as nobody when run as root, so that a tool that
# reaches its privilege check stops there, having loaded nothing
unprivileged() {
	if [ "$(id -u)" -eq 0 ]; then
		setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"
	else
		"$@"
	fi
}

@test "bbrtrace --set-default-in a namespace that does not exist: exit 12, before the privilege check and any loading" {
	local ns=tk-nosuch-$$
	[ ! -e "/var/run/netns/$ns" ]
	tk_run unprivileged "$BIN/bbrtrace" --set-default-in "$ns"
	expect_status 12
	expect_one_line_stderr
	expect_equal "$stderr" "bbrtrace: --set-default-in: network namespace '$ns' does not exist (no /var/run/netns/$ns): create it (ip netns add $ns) or name one that \`ip netns list\` shows"
	tk_run bbrtrace --help
	expect_output "  12  no such network namespace"
}

@test "every tool's --version: the number in VERSION, and the commit it was built from" {
	local t n=0
	for t in "$BIN"/*; do
		tk_run "$t" --version
		expect_status 0
		expect_version "$(basename "$t")"
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] || { echo "# no tool in $BIN"; false; }
}

@test "every tool's --help, and each command's, fits 80 columns" {
	local t c cmds wide n=0
	for t in "$BIN"/*; do
		# the commands a tool lists under "Commands:" (indented names), each
		# with a --help of its own
		cmds=$("$t" --help | awk '/^Commands:/ { on = 1; next } on && /^$/ { exit }
			on && /^  [a-z]/ { print $1 }')
		for c in "" $cmds; do
			wide=$("$t" $c --help | awk -v w=80 'length($0) > w { printf "%d columns: %s\n", length($0), $0 }')
			[ -z "$wide" ] || { echo "# $(basename "$t") $c --help:"; echo "$wide" | sed 's/^/#   /'; false; }
			n=$((n + 1))
		done
	done
	echo "# $n help texts" >&3
	[ "$n" -gt 9 ] || { echo "# only $n help texts in $BIN"; false; }
}

@test "udpdwell --help explains backends, units, bucket edges, the dialect and exit codes; -V prints one line" {
	tk_run udpdwell --help
	expect_status 0
	expect_output "tracepoint  sock:sk_data_ready and sock:sock_recv_length"
	expect_output "buckets follow Prometheus le semantics (upper-inclusive):"
	expect_output "<=10us, <=50us, <=100us, <=500us, <=1ms, <=5ms, <=10ms, <=50ms, >50ms;"
	expect_output "exactly 10 us is in the first"
	expect_output "--warn-us US        WARN when the measure reaches US microseconds"
	expect_output "      --interval SECONDS  seconds per interval, 0.1..3600, decimals allowed"
	expect_output "      --intervals N       stop after N intervals"
	expect_output "  -d, --duration SECONDS  stop after SECONDS, printing the interval in"
	expect_output "  -o, --output FILE       write the records to FILE instead of stdout"
	expect_output "  3   a missing privilege"
	# -i is an interface and -c a packet count everywhere in the toolkit: neither here
	[[ $output != *"  -i, "* && $output != *"  -c, "* ]] || { tk_dump "no -i, no -c"; false; }
	tk_run udpdwell -V
	expect_status 0
	expect_version udpdwell
}

@test "udpdwell bad arguments: one line naming the option and the cause, exit 2" {
	tk_run udpdwell --ports 70000
	expect_status 2; expect_one_line_stderr
	expect_stderr "udpdwell: --ports: 70000 is out of range 0..65535"
	tk_run udpdwell --ports 5000-4000
	expect_status 2; expect_one_line_stderr
	expect_stderr "udpdwell: --ports: '5000-4000' has its low port above its high port"
	tk_run udpdwell --ports 5x
	expect_status 2; expect_one_line_stderr
	expect_stderr "udpdwell: --ports: '5x' is not an integer"
	tk_run udpdwell --interval 0
	expect_status 2; expect_one_line_stderr
	expect_stderr "udpdwell: --interval: 0 is out of range 0.1..3600"
	tk_run udpdwell --backend ebpf
	expect_status 2; expect_one_line_stderr
	expect_stderr "udpdwell: --backend: 'ebpf' is not one of auto|fentry|kprobe|tracepoint"
	tk_run udpdwell --format xml
	expect_status 2; expect_one_line_stderr
	expect_stderr "udpdwell: --format: 'xml' is not one of table|csv|json"
	tk_run udpdwell --prometheus 1.2.3.4
	expect_status 2; expect_one_line_stderr
	expect_stderr "udpdwell: --prometheus: '1.2.3.4' is not ADDR:PORT (write IPv6 as [ADDR]:PORT)"
	tk_run udpdwell --prometheus 1.2.3:80
	expect_status 2; expect_one_line_stderr
	expect_stderr "udpdwell: --prometheus: '1.2.3' is not an IPv4 address"
	tk_run udpdwell --warn-us 30000 --alert-us 20000
	expect_status 2; expect_one_line_stderr
	expect_stderr "udpdwell: --warn-us: 30000 is above --alert-us 20000"
	tk_run udpdwell --max-sockets 8
	expect_status 2; expect_one_line_stderr
	expect_stderr "udpdwell: --max-sockets: 8 is out of range 16..65536"
	tk_run udpdwell --state-on p50
	expect_status 2; expect_one_line_stderr
	expect_stderr "udpdwell: --state-on: 'p50' is not one of p99|max"
	tk_run udpdwell --intervals
	expect_status 2; expect_one_line_stderr
	[ "$stderr" = "udpdwell: --intervals needs a value (see --help)" ] || { tk_dump "needs a value"; false; }
	tk_run udpdwell --frobnicate
	expect_status 2; expect_one_line_stderr
	[ "$stderr" = "udpdwell: unknown option '--frobnicate' (see --help)" ] || { tk_dump "unknown option"; false; }
	tk_run udpdwell --once=1
	expect_status 2; expect_one_line_stderr
	[ "$stderr" = "udpdwell: --once takes no value (see --help)" ] || { tk_dump "takes no value"; false; }
	tk_run udpdwell -d 1x
	expect_status 2; expect_one_line_stderr
	[ "$stderr" = "udpdwell: -d: '1x' is not a number" ] || { tk_dump "not a number"; false; }
	tk_run udpdwell extra
	expect_status 2; expect_one_line_stderr
	[ "$stderr" = "udpdwell: unexpected argument 'extra' (see --help)" ] || { tk_dump "operand"; false; }
}

@test "udpdwell refuses the old -i, -c and --count: -i is an interface, -c a packet count, in this toolkit" {
	tk_run udpdwell -i 1
	expect_status 2; expect_one_line_stderr
	[ "$stderr" = "udpdwell: unknown option '-i' (see --help)" ] || { tk_dump "-i"; false; }
	tk_run udpdwell -c 3
	expect_status 2; expect_one_line_stderr
	[ "$stderr" = "udpdwell: unknown option '-c' (see --help)" ] || { tk_dump "-c"; false; }
	tk_run udpdwell --count 3
	expect_status 2; expect_one_line_stderr
	[ "$stderr" = "udpdwell: unknown option '--count' (see --help)" ] || { tk_dump "--count"; false; }
}

@test "pushsim --help lists the commands and every command's exit codes; each command's --help its own" {
	tk_run "$BIN/pushsim" --help
	expect_status 0
	expect_output "Commands:"
	expect_output "  send --connect ADDR:PORT"
	expect_output "  recv --listen [ADDR:]PORT"
	expect_output "  -V, --version"
	expect_output "  20  a connection or network I/O failed"
	expect_output "  5   bad input"
	tk_run "$BIN/pushsim" send --help
	expect_status 0
	expect_output "Usage: pushsim send --connect ADDR:PORT"
	expect_output "-d, --duration SECONDS"
	expect_output "-f, --format FMT"
	expect_output "-o, --output FILE"
	expect_output "--keyframe-factor X"
	expect_output "  3   a missing privilege"
	expect_output "  4   the kernel lacks a needed feature"
	expect_output "  20  a connection or network I/O failed"
	[[ $output != *"--mode"* && $output != *"--playout-ms"* && $output != *"  5   "* ]] || { tk_dump "recv's options or codes"; false; }
	tk_run "$BIN/pushsim" recv -h
	expect_status 0
	expect_output "Usage: pushsim recv --listen [ADDR:]PORT"
	expect_output "--mode MODE"
	expect_output "--accept-timeout SECONDS"
	expect_output "  5   bad input"
	[[ $output != *"--gop"* && $output != *"--nodelay"* && $output != *"  4   "* ]] || { tk_dump "send's options or codes"; false; }
}

@test "pushsim -V, and each command's -V, print the version" {
	local cmd version
	tk_run "$BIN/pushsim" --version
	expect_status 0
	expect_version pushsim
	version=$output
	for cmd in "" send recv; do
		tk_run "$BIN/pushsim" $cmd -V
		expect_status 0
		[ "$output" = "$version" ] || { tk_dump "pushsim $cmd -V"; false; }
	done
}

@test "pushsim: every command refuses a bad command line the same way: one line, exit 2" {
	local cmd
	for cmd in send recv; do
		tk_run "$BIN/pushsim" $cmd --bogus x
		expect_status 2
		expect_one_line_stderr
		expect_stderr "pushsim: unknown option '--bogus' (see --help)"
		tk_run "$BIN/pushsim" $cmd -o
		expect_status 2
		expect_one_line_stderr
		expect_stderr "pushsim: -o needs a value (see --help)"
		tk_run "$BIN/pushsim" $cmd --summary-only=1
		expect_status 2
		expect_one_line_stderr
		expect_stderr "pushsim: --summary-only takes no value (see --help)"
		tk_run "$BIN/pushsim" $cmd --fps 241
		expect_status 2
		expect_one_line_stderr
		expect_stderr "pushsim: --fps: 241 is out of range 1..240"
		tk_run "$BIN/pushsim" $cmd -d 0
		expect_status 2
		expect_stderr "pushsim: -d: 0 is out of range 0.001..31536000"
		tk_run "$BIN/pushsim" $cmd -f xml
		expect_status 2
		expect_stderr "pushsim: -f: 'xml' is not one of table|csv|json"
	done
	# pushsim's own options, before the command
	tk_run "$BIN/pushsim" --bogus send
	expect_status 2
	expect_one_line_stderr
	expect_stderr "pushsim: unknown option '--bogus' (see --help)"
	tk_run "$BIN/pushsim" --quiet=1 send
	expect_status 2
	expect_stderr "pushsim: --quiet takes no value (see --help)"
}

@test "pushsim bad arguments: one line, exit 2" {
	tk_run "$BIN/pushsim"
	expect_status 2
	expect_one_line_stderr
	expect_stderr "pushsim: missing command: send or recv (see --help)"
	tk_run "$BIN/pushsim" push
	expect_status 2
	expect_stderr "pushsim: 'push' is not a command: use send or recv"
	tk_run "$BIN/pushsim" send --connect 10.0.0.1:80 --fps 5x
	expect_status 2
	expect_one_line_stderr
	expect_stderr "pushsim: --fps: '5x' is not an integer"
	tk_run "$BIN/pushsim" send --connect 10.0.0.1:80 -d 1.5s
	expect_status 2
	expect_stderr "pushsim: -d: '1.5s' is not a number"
	tk_run "$BIN/pushsim" send --connect 10.0.0.1
	expect_status 2
	expect_stderr "pushsim: --connect: '10.0.0.1' is not ADDR:PORT"
	tk_run "$BIN/pushsim" send --connect 1.2.3:80
	expect_status 2
	expect_stderr "pushsim: --connect: '1.2.3' is not an IPv4 or IPv6 address"
	tk_run "$BIN/pushsim" recv --listen 43000 --mode lazy
	expect_status 2
	expect_stderr "pushsim: --mode: 'lazy' is not one of prompt|paced|app-ack"
	tk_run "$BIN/pushsim" recv --listen 43000 --fps 0
	expect_status 2
	expect_stderr "pushsim: --fps: 0 is out of range 1..240"
	# an option of the other command is unknown to this one
	tk_run "$BIN/pushsim" recv --listen 43000 --gop 5
	expect_status 2
	expect_one_line_stderr
	expect_stderr "pushsim: unknown option '--gop' (see --help)"
	tk_run "$BIN/pushsim" send --connect 10.0.0.1:80 --playout-ms 5
	expect_status 2
	expect_stderr "pushsim: unknown option '--playout-ms' (see --help)"
	tk_run "$BIN/pushsim" send
	expect_status 2
	expect_stderr "pushsim: --connect: missing (where to push)"
	tk_run "$BIN/pushsim" recv
	expect_status 2
	expect_stderr "pushsim: --listen: missing (where to accept the push)"
	tk_run "$BIN/pushsim" send --connect 10.0.0.1:80 --jitter 1.5
	expect_status 2
	expect_stderr "pushsim: --jitter: 1.5 is out of range 0..0.9"
	tk_run "$BIN/pushsim" send --connect 10.0.0.1:80 stray
	expect_status 2
	expect_stderr "pushsim: unexpected argument 'stray' (see --help)"
}

@test "lab.sh explains itself, and refuses bad arguments in one line, exit 2" {
	tk_run "$TK_ROOT/repro/lab.sh" --help
	expect_status 0
	expect_output "Usage: repro/lab.sh [--prefix P] up"
	expect_output "Exit status: 0 ok, 1 a step failed, 2 bad arguments, 130 interrupted."
	tk_run "$TK_ROOT/repro/lab.sh" --version
	expect_status 0
	expect_equal "$output" "lab.sh $(cat "$TK_ROOT/VERSION")" "lab.sh --version"
	tk_run "$TK_ROOT/repro/lab.sh"
	expect_status 2; expect_one_line_stderr
	expect_stderr "lab.sh: name a command: up, push or down (see --help)"
	tk_run "$TK_ROOT/repro/lab.sh" up down
	expect_status 2; expect_one_line_stderr
	expect_stderr "lab.sh: one command at a time ('up', then 'down')"
	tk_run "$TK_ROOT/repro/lab.sh" --prefix 'a/b' up
	expect_status 2; expect_one_line_stderr
	expect_stderr "lab.sh: --prefix: 'a/b' is not up to 20 letters, digits or '-'"
	tk_run "$TK_ROOT/repro/lab.sh" push --duration 0
	expect_status 2; expect_one_line_stderr
	expect_stderr "lab.sh: --duration: '0' is not a whole number of seconds from 1 to 3600"
	tk_run "$TK_ROOT/repro/lab.sh" push --port 70000
	expect_status 2; expect_one_line_stderr
	expect_stderr "lab.sh: --port: '70000' is not a TCP port (1 to 65535)"
	tk_run "$TK_ROOT/repro/lab.sh" push --port
	expect_status 2; expect_one_line_stderr
	expect_stderr "lab.sh: --port needs a value"
}

@test "lab.sh down and push without a lab say so and touch nothing, exit 1" {
	requires root
	local p="t-cli-$$-"
	tk_run "$TK_ROOT/repro/lab.sh" --prefix "$p" down
	expect_status 1; expect_one_line_stderr
	expect_stderr "lab.sh: no lab here: namespace ${p}rtr does not exist"
	tk_run "$TK_ROOT/repro/lab.sh" --prefix "$p" push
	expect_status 1; expect_one_line_stderr
	expect_stderr "lab.sh: namespace ${p}pusher does not exist: \`repro/lab.sh --prefix $p up\` builds the lab"
	# a namespace of the same name that is not the lab's router is left alone
	ip netns add "${p}rtr"
	tk_run "$TK_ROOT/repro/lab.sh" --prefix "$p" down
	ip netns del "${p}rtr"
	expect_status 1
	expect_stderr "lab.sh: namespace ${p}rtr is not the lab's router (no p0 with 10.77.1.1): left alone"
}

@test "dip.sh bad arguments: one line, exit 2" {
	tk_run "$TK_ROOT/repro/dip.sh" --rtt 5x --out /tmp/x
	expect_status 2
	expect_one_line_stderr
	expect_stderr "dip.sh: --rtt: '5x' is not native or a delay such as 60us, 200us, 1ms"
	tk_run "$TK_ROOT/repro/dip.sh" --receiver lazy --out /tmp/x
	expect_status 2
	expect_stderr "dip.sh: --receiver: 'lazy' is not one of prompt|paced|app-ack"
	tk_run "$TK_ROOT/repro/dip.sh" --quickack maybe --out /tmp/x
	expect_status 2
	expect_stderr "dip.sh: --quickack: 'maybe' is not on, off or port"
	tk_run "$TK_ROOT/repro/dip.sh" --duration 1.5 --out /tmp/x
	expect_status 2
	expect_stderr "dip.sh: --duration: '1.5' is not an integer in 1..3600"
	tk_run "$TK_ROOT/repro/dip.sh"
	expect_status 2
	expect_stderr "dip.sh: --out: missing (where the outputs go)"
	tk_run "$TK_ROOT/repro/dip.sh" --rate-change 3:10 --out /tmp/x
	expect_status 2
	expect_stderr "dip.sh: --rate-change: needs --rate"
	tk_run "$TK_ROOT/repro/dip.sh" --port 80 --out /tmp/x
	expect_status 2
	expect_stderr "dip.sh: --port: '80' is not in 43000..43999"
	tk_run "$TK_ROOT/repro/dip.sh" --queue-packets 20 --out /tmp/x
	expect_status 2
	expect_stderr "dip.sh: --queue-packets: needs --rate (the queue is the htb bottleneck's)"
	tk_run "$TK_ROOT/repro/dip.sh" --rate 10 --queue-packets 0 --out /tmp/x
	expect_status 2
	expect_stderr "dip.sh: --queue-packets: '0' is not an integer in 1..100000"
	tk_run "$TK_ROOT/repro/dip.sh" --flows 4 --out /tmp/x
	expect_status 2
	expect_stderr "dip.sh: --flows: only with --push iperf3"
	tk_run "$TK_ROOT/repro/dip.sh" --push iperf3 --flows 129 --out /tmp/x
	expect_status 2
	expect_stderr "dip.sh: --flows: '129' is not an integer in 1..128"
	tk_run "$TK_ROOT/repro/dip.sh" --push iperf3 --receiver prompt --out /tmp/x
	expect_status 2
	expect_stderr "dip.sh: --receiver: not with --push iperf3 (its receiver is iperf3 -s)"
	tk_run "$TK_ROOT/repro/dip.sh" --burst 65536 --out /tmp/x
	expect_status 2
	expect_stderr "dip.sh: --burst: needs --rate (the burst is the htb bottleneck's)"
	tk_run "$TK_ROOT/repro/dip.sh" --rate 200 --burst 1k --out /tmp/x
	expect_status 2
	expect_stderr "dip.sh: --burst: '1k' is not an integer of bytes, 1500 or more"
	tk_run "$TK_ROOT/repro/dip.sh" --push iperf3 --bitrate-kbps 0 --out /tmp/x
	expect_status 2
	expect_stderr "dip.sh: --bitrate-kbps: '0' is not a positive integer"
	tk_run "$TK_ROOT/repro/dip.sh" --loss 1 --out /tmp/x
	expect_status 2
	expect_stderr "dip.sh: --loss: needs --rate (the loss is at the htb bottleneck)"
	tk_run "$TK_ROOT/repro/dip.sh" --rate 200 --loss 1% --out /tmp/x
	expect_status 2
	expect_stderr "dip.sh: --loss: '1%' is not a percentage such as 1 or 0.5"
	tk_run "$TK_ROOT/repro/dip.sh" --rate 200 --loss 0.001 --out /tmp/x
	expect_status 2
	expect_stderr "dip.sh: --loss: '0.001' is not a percentage such as 1 or 0.5"
	tk_run "$TK_ROOT/repro/dip.sh" --rate 200 --loss 51 --out /tmp/x
	expect_status 2
	expect_stderr "dip.sh: --loss: '51' is not within 0.01..50 (percent)"
	tk_run "$TK_ROOT/repro/dip.sh" --rate 200 --loss 0.00 --out /tmp/x
	expect_status 2
	expect_stderr "dip.sh: --loss: '0.00' is not within 0.01..50 (percent)"
	tk_run "$TK_ROOT/repro/dip.sh" --gro yes --out /tmp/x
	expect_status 2
	expect_stderr "dip.sh: --gro: 'yes' is not on or off"
	tk_run "$TK_ROOT/repro/dip.sh" --plot-axes 0.01:100000 --out /tmp/x
	expect_status 2
	expect_stderr "dip.sh: --plot-axes: '0.01:100000' is not LO:HI:SECONDS (e.g. 0.01:100000:16)"
	tk_run "$TK_ROOT/repro/dip.sh" --plot-axes 100:10:16 --out /tmp/x
	expect_status 2
	expect_stderr "dip.sh: --plot-axes: '100:10:16' needs 0 < LO < HI (Mbit/s) and SECONDS above 0"
}

@test "sweep.sh bad arguments: one line, exit 2" {
	tk_run "$TK_ROOT/repro/sweep.sh" --rtts "native 5x"
	expect_status 2
	expect_one_line_stderr
	expect_stderr "sweep.sh: --rtts: '5x' is not native or a delay such as 60us, 1ms"
	tk_run "$TK_ROOT/repro/sweep.sh" --receiver lazy
	expect_status 2
	expect_stderr "sweep.sh: --receiver: 'lazy' is not one of prompt|paced|app-ack"
	tk_run "$TK_ROOT/repro/sweep.sh" --duration 0
	expect_status 2
	expect_stderr "sweep.sh: --duration: '0' is not an integer in 1..3600"
	tk_run "$TK_ROOT/repro/sweep.sh" --bogus
	expect_status 2
	expect_stderr "sweep.sh: unknown option '--bogus' (see --help)"
}

@test "dip.sh --push: bad values and --receiver with ffmpeg: one line, exit 2" {
	tk_run "$TK_ROOT/repro/dip.sh" --push gstreamer --out /tmp/x
	expect_status 2
	expect_one_line_stderr
	expect_stderr "dip.sh: --push: 'gstreamer' is not one of pushsim|ffmpeg"
	tk_run "$TK_ROOT/repro/dip.sh" --push ffmpeg --receiver prompt --out /tmp/x
	expect_status 2
	expect_one_line_stderr
	expect_stderr "dip.sh: --receiver: not with --push ffmpeg (its receiver is nginx-rtmp)"
}

@test "rtpsend and sfu_echo --help list the dialect's options and the exit codes; --version prints one line" {
	for t in rtpsend sfu_echo; do
		tk_run "$t" --help
		expect_status 0
		for o in "-c, --count N" "-d, --duration SECONDS" "-f, --format FMT" "-o, --output FILE" \
			"-q, --quiet" "-v, --verbose" "-h, --help" "-V, --version" "Exit status:" "  2   bad arguments"; do
			expect_output "$o"
		done
		tk_run "$t" -V
		expect_status 0
		expect_version "$t"
	done
	tk_run rtpsend --help
	expect_output "  20  a connection or network I/O failed"
}

@test "rtpsend and sfu_echo: the four bad command lines, one line each and exit 2, the same way in both tools" {
	local t addr
	for t in rtpsend sfu_echo; do
		addr=--to
		[ "$t" = sfu_echo ] && addr=--listen
		tk_run "$t" "$addr" 127.0.0.1:9 --bogus
		expect_status 2; expect_one_line_stderr
		[ "$stderr" = "$t: unknown option '--bogus' (see --help)" ] || { tk_dump "unknown option"; false; }
		tk_run "$t" "$addr" 127.0.0.1:9 --duration
		expect_status 2; expect_one_line_stderr
		[ "$stderr" = "$t: --duration needs a value (see --help)" ] || { tk_dump "needs a value"; false; }
		tk_run "$t" "$addr" 127.0.0.1:9 --quiet=1
		expect_status 2; expect_one_line_stderr
		[ "$stderr" = "$t: --quiet takes no value (see --help)" ] || { tk_dump "takes no value"; false; }
		tk_run "$t" "$addr" 127.0.0.1:9 --count 0
		expect_status 2; expect_one_line_stderr
		[[ $stderr == "$t: --count: 0 is out of range 1.."* ]] || { tk_dump "out of range"; false; }
		# -n was --count's letter; -c is now, as everywhere in the toolkit
		tk_run "$t" "$addr" 127.0.0.1:9 -n 5
		expect_status 2; expect_one_line_stderr
		[ "$stderr" = "$t: unknown option '-n' (see --help)" ] || { tk_dump "-n"; false; }
		tk_run "$t" "$addr" 127.0.0.1:9 -f xml
		expect_status 2; expect_one_line_stderr
		[ "$stderr" = "$t: -f: 'xml' is not one of table|csv|json" ] || { tk_dump "-f xml"; false; }
		tk_run "$t" "$addr" 127.0.0.1:9 extra
		expect_status 2; expect_one_line_stderr
		[ "$stderr" = "$t: unexpected argument 'extra' (see --help)" ] || { tk_dump "operand"; false; }
	done
}

@test "bbrpcap capture --help explains the ring, the filter and the exit codes" {
	tk_run bbrpcap capture --help
	expect_status 0
	expect_output "--ring N"
	expect_output "--snaplen BYTES"
	expect_output "  3   a missing privilege"
	expect_output "  10  no such network device"
}
