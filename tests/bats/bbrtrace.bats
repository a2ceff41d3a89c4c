#!/usr/bin/env bats
# bbrtrace: arguments, privileges, the choice of backend, and the struct_ops
# backend's life cycle (registration, the default congestion control, what a
# killed bbrtrace leaves behind), on whatever kernel runs the tests: the
# features each test expects are read from this kernel, never assumed.
# Real flows per backend: bbrtrace_flow.bats.
#
# Tests tagged "userspace" exercise only bbrtrace's own code (its checks
# before loading, its messages and output): the kernel matrix's guests skip
# them (tests/kernels/suites), the host runs them.

load helpers

NS=bt-${BATS_ROOT_PID}

setup_file() {

	requires root netns bbr struct_ops jq bpftool
	tk_lock_bbr_traced
	tk_netns_pair "$NS"
	# the default congestion control before any test: what bbrtrace must put back
	export DEFAULT_CC
	DEFAULT_CC=$(ip netns exec "$NS-a" sysctl -n net.ipv4.tcp_congestion_control)
}

teardown_file() {
	tk_cleanup
	tk_unlock_bbr_traced
}

teardown() {
	tk_end_test_processes "$NS"
	sleep 0.2
	return 0
}

# bats test_tags=userspace
@test "without root: a clear error naming the privilege, exit 3" {
	tk_run setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$BIN/bbrtrace" -d 1
	expect_status 3; expect_one_line_stderr
	expect_stderr "loading BPF programs needs root (or CAP_BPF, CAP_PERFMON and CAP_NET_ADMIN)"
}

# bats test_tags=userspace
@test "without kernel BTF: a clear error naming BTF, exit 4" {
	TK_VMLINUX_BTF=/nonexistent/vmlinux tk_run bbrtrace -d 1
	expect_status 4; expect_one_line_stderr
	expect_stderr "this kernel has no BTF (/nonexistent/vmlinux is missing; it needs CONFIG_DEBUG_INFO_BTF=y)"
}

@test "--probe: each backend loads and attaches where this kernel has its hooks; each refusal is one clear reason" {
	tk_run bbrtrace --probe
	expect_status 0
	[ "${#lines[@]}" -eq 3 ] || { tk_dump "three lines"; false; }
	# struct_ops works on any kernel this project supports
	[[ ${lines[2]} == "struct_ops load: ok ("*"programs passed the verifier); attach: ok" ]] ||
		{ tk_dump "struct_ops line"; false; }
	# kprobe programs load wherever BPF_PROG_TYPE_KPROBE exists, and attach
	# where the kernel has kprobes
	[[ ${lines[1]} == "kprobe     load: ok ("*" programs passed the verifier); attach: "* ]] ||
		{ tk_dump "kprobe line"; false; }
	if [ -e /sys/bus/event_source/devices/kprobe/type ]; then
		[[ ${lines[1]} == *"attach: ok" ]] || { tk_dump "kprobe attaches on a kernel with kprobes"; false; }
	else
		[[ ${lines[1]} == *"attach: no: this kernel has no kprobe support (no kprobe PMU, no kprobe_events)" ]] ||
			{ tk_dump "kprobe refusal text"; false; }
	fi
	# fentry: where bpftool's own probe finds tracing programs, it loads
	# and attaches; elsewhere the reason is the kernel's refusal in words
	if tk_have_fentry; then
		[[ ${lines[0]} == "fentry     load: ok ("*"programs passed the verifier); attach: ok" ]] ||
			{ tk_dump "fentry loads and attaches"; false; }
	else
		[[ ${lines[0]} == "fentry     load: no: the kernel refused to load the fentry/fexit programs ("* ]] ||
			{ tk_dump "fentry refusal text"; false; }
	fi
}

@test "auto chooses fentry, else kprobe, else struct_ops, and says in one line why the others were refused" {
	tk_run bbrtrace -d 1 -f json -o /dev/null
	expect_status 0
	local first=${stderr%%$'\n'*}
	if tk_have_fentry; then
		[ "$first" = "bbrtrace: backend fentry (the first choice)" ] || { tk_dump "auto picks fentry"; false; }
	elif [ -e /sys/bus/event_source/devices/kprobe/type ]; then
		[[ $first == "bbrtrace: backend kprobe (fentry: "*")" ]] || { tk_dump "auto picks kprobe"; false; }
	else
		[[ $first == "bbrtrace: backend struct_ops (fentry: "*"; kprobe: this kernel has no kprobe support (no kprobe PMU, no kprobe_events))" ]] ||
			{ tk_dump "auto picks struct_ops"; false; }
	fi
}

@test "bbr_main's signature and the BTF it is in are read from this kernel (bpftool agrees)" {
	local sig nargs where
	sig=$(tk_bbr_main_sig)
	read -r nargs where <<< "$sig"
	echo "# bpftool: bbr_main has $nargs parameters, in $where BTF"
	tk_run bbrtrace --probe -v
	expect_status 0
	if [ "$nargs" = 4 ]; then
		expect_stderr "bbr_main(sk, ack, flag, rs) found in $where BTF"
	else
		expect_stderr "bbr_main(sk, rs) found in $where BTF"
	fi
	# tcp_bbr as a module: its types and kfuncs come from module BTF
	if grep -qw '^tcp_bbr' /proc/modules; then
		[ "$where" = tcp_bbr ] || { echo "# tcp_bbr is a module but bbr_main is in $where"; false; }
	fi
}

# bats test_tags=userspace
@test "a second struct_ops bbrtrace is refused while one runs, naming its pid" {
	bbrtrace -b struct_ops -f json -o /dev/null -d 6 -q &
	local pid=$!
	tk_wait_for "grep -qw bbr_traced /proc/sys/net/ipv4/tcp_available_congestion_control" 10
	tk_run bbrtrace -b struct_ops -d 1
	expect_status 1
	expect_stderr "bbrtrace: backend struct_ops: bbr_traced is already registered by pid $pid (bbrtrace); one struct_ops tracer runs at a time"
	kill -INT "$pid"
	wait "$pid"
}

@test "SIGINT: clean exit 0, summary written, the default congestion control restored, bbr_traced gone" {
	local out=$BATS_TEST_TMPDIR/trace.jsonl
	bbrtrace -b struct_ops -f json -o "$out" --set-default-in "$NS-a" -q &
	local pid=$!
	tk_wait_for "[ \$(ip netns exec $NS-a sysctl -n net.ipv4.tcp_congestion_control) = bbr_traced ]" 10
	kill -INT "$pid"
	wait "$pid"
	jq -e 'select(.type=="summary") | .samples == 0 and .lost == 0' "$out"
	expect_equal "$(ip netns exec "$NS-a" sysctl -n net.ipv4.tcp_congestion_control)" "$DEFAULT_CC" "congestion control in the namespace"
	! grep -qw bbr_traced /proc/sys/net/ipv4/tcp_available_congestion_control || false
}

# the kernel frees bbrtrace's programs once the last reference (link,
# registration, sysctl) is gone, and the guardian has done its work
nothing_left() {
	tk_wait_for "! grep -qw bbr_traced /proc/sys/net/ipv4/tcp_available_congestion_control" 10
	tk_wait_for "[ \$(ip netns exec $NS-a sysctl -n net.ipv4.tcp_congestion_control) = $DEFAULT_CC ]" 10
	tk_wait_for "! bpftool prog show | grep -qE 'name (bt_main|bt_init|bt_assign_cookie)'" 10
	tk_wait_for "! bpftool struct_ops show | grep -qw bbr_traced" 5
	tk_wait_for "! pgrep -x bbrtrace-guard" 5
}

@test "kill -9 while tracing leaves no bbr_traced, no program, and the default congestion control restored" {
	ip netns exec "$NS-b" "$TK_ROOT/tests/tools/tcpflow.py" sink 5304 &
	tk_wait_listen 5304 5 "$NS-b"
	bbrtrace -b struct_ops -f json -o /dev/null --set-default-in "$NS-a" -q &
	local pid=$!
	tk_wait_for "[ \$(ip netns exec $NS-a sysctl -n net.ipv4.tcp_congestion_control) = bbr_traced ]" 30
	ip netns exec "$NS-a" "$TK_ROOT/tests/tools/tcpflow.py" send 10.201.0.2 5304 --bytes 3000000 > /dev/null
	bpftool prog show | grep -q 'name bt_main' # attached while tracing
	kill -9 "$pid"
	wait "$pid" || true
	nothing_left
}

@test "kill -9 without --set-default: bbr_traced unregistered (by the kernel's link from 6.4, else by the guardian)" {
	bbrtrace -b struct_ops -f json -o /dev/null -q &
	local pid=$!
	tk_wait_for "grep -qw bbr_traced /proc/sys/net/ipv4/tcp_available_congestion_control" 30
	if bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null | grep -q "STRUCT 'bpf_struct_ops_link'"; then
		echo "# this kernel has struct_ops links: no guardian is needed"
		[ -z "$(pgrep -x bbrtrace-guard)" ]
	else
		echo "# no struct_ops links (before 6.4): the guardian holds the registration"
		pgrep -x bbrtrace-guard
	fi
	kill -9 "$pid"
	wait "$pid" || true
	nothing_left
}

@test "a stale bbr_traced (registered without a link) is reported at start, and --cleanup removes it" {
	# the object whose bbr_main kfunc has this kernel's signature
	bpftool struct_ops register "$(tk_bbr_traced_obj)" > /dev/null
	grep -qw bbr_traced /proc/sys/net/ipv4/tcp_available_congestion_control
	tk_run bbrtrace -b struct_ops -d 1
	expect_status 1
	expect_stderr "bbrtrace: backend struct_ops: a stale bbr_traced is registered (struct_ops map id "
	expect_stderr "remove it with: bbrtrace --cleanup"
	tk_run bbrtrace --cleanup
	expect_status 0
	expect_stderr "bbrtrace: removed stale bbr_traced (struct_ops map id "
	! grep -qw bbr_traced /proc/sys/net/ipv4/tcp_available_congestion_control || false
	tk_run bbrtrace --cleanup
	expect_status 0
	expect_stderr "nothing to clean"
}

# bats test_tags=userspace
@test "a trace that saw no sample says why, and names the ways in for a flow in another namespace" {
	local out=$BATS_TEST_TMPDIR/trace.jsonl
	ip netns exec "$NS-b" "$TK_ROOT/tests/tools/tcpflow.py" sink 5306 &
	tk_wait_listen 5306 5 "$NS-b"
	# the flow runs in a namespace bbrtrace did not opt in: nothing is traced
	bbrtrace -b struct_ops --detect -f json -o "$out" -d 4 2> "$BATS_TEST_TMPDIR/err" &
	local pid=$!
	tk_wait_for "grep -q 'bbrtrace: backend struct_ops' '$BATS_TEST_TMPDIR/err'" 30
	ip netns exec "$NS-a" "$TK_ROOT/tests/tools/tcpflow.py" send 10.201.0.2 5306 --bytes 1000000 > /dev/null
	wait "$pid"
	cat "$BATS_TEST_TMPDIR/err"
	grep -q "verdict: No BBR rate sample was seen in .* s: no traced flow sent data" "$BATS_TEST_TMPDIR/err"
	grep -q -- "--set-default-in NS makes it that namespace's default" "$BATS_TEST_TMPDIR/err"
	grep -q "TCP_CONGESTION to bbr_traced" "$BATS_TEST_TMPDIR/err"
	jq -e 'select(.type=="verdict") | .samples == 0 and (.text | test("set-default-in"))' "$out"
}

@test "at exit, struct_ops names every route that still names bbr_traced, with the command that undoes it" {
	bbrtrace -b struct_ops -f json -o /dev/null -d 3 2> "$BATS_TEST_TMPDIR/err" &
	local pid=$!
	tk_wait_for "grep -qw bbr_traced /proc/sys/net/ipv4/tcp_available_congestion_control" 30
	ip -n "$NS-a" route add 10.202.0.0/16 via 10.201.0.2 congctl bbr_traced
	wait "$pid"
	cat "$BATS_TEST_TMPDIR/err"
	grep -q "warning: the route 10.202.0.0/16 in network namespace $NS-a still names congctl bbr_traced, which goes away now" "$BATS_TEST_TMPDIR/err"
	grep -q "undo: quickack congctl 10.202.0.0/16 off --netns $NS-a" "$BATS_TEST_TMPDIR/err"
	ip -n "$NS-a" route del 10.202.0.0/16
}

# bats test_tags=userspace
@test "on a terminal: table by default, and a live count on stderr while writing to a file" {
	requires script
	# script(1) gives bbrtrace a terminal for stdout and stderr
	tk_on_tty "$BATS_TEST_TMPDIR/tty1" "$BIN/bbrtrace" -b struct_ops -d 2
	grep -q 'time s.*snd_una.*bw Mb/s.*mode' "$BATS_TEST_TMPDIR/tty1" ||
		{ cat "$BATS_TEST_TMPDIR/tty1"; false; }
	tk_on_tty "$BATS_TEST_TMPDIR/tty2" "$BIN/bbrtrace" -b struct_ops -d 3 -f json -o "$BATS_TEST_TMPDIR/t.jsonl"
	grep -qa $'\rbbrtrace: 0 samples, 0 lost' "$BATS_TEST_TMPDIR/tty2" ||
		{ cat -A "$BATS_TEST_TMPDIR/tty2"; false; }
}
