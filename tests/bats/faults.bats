#!/usr/bin/env bats
# Faults: each case either keeps working or stops with a clear
# line and a complete summary, and leaves nothing behind: signals during
# start-up, a closed pipe, a full disk, sockets and namespaces that go away
# under the tracer. bbrtrace runs with whichever backend auto picks on this
# kernel; its kernel state (bbr_traced, programs, the namespace's default
# congestion control, the guardian) is checked after every case.

load helpers

NS=ft-${BATS_ROOT_PID}

setup_file() {
	requires root netns bbr struct_ops jq bpftool
	tk_lock_bbr_traced
	tk_netns_pair "$NS"
	export DEFAULT_CC
	DEFAULT_CC=$(ip netns exec "$NS-a" sysctl -n net.ipv4.tcp_congestion_control)
}

teardown_file() {
	tk_cleanup
	tk_unlock_bbr_traced
}

teardown() {
	tk_end_test_processes "$NS"
	if mountpoint -q "$BATS_TEST_TMPDIR/full" 2>/dev/null; then umount "$BATS_TEST_TMPDIR/full"; fi
	return 0
}

# bbrtrace's kernel state is gone and the default congestion control of the
# namespace it switched ($1, default $NS-a) is back
nothing_left() {
	local ns=${1:-$NS-a}
	tk_wait_for "! grep -qw bbr_traced /proc/sys/net/ipv4/tcp_available_congestion_control" 10
	if ip netns list | grep -qw "$ns"; then
		tk_wait_for "[ \$(ip netns exec $ns sysctl -n net.ipv4.tcp_congestion_control) = $DEFAULT_CC ]" 10
	fi
	tk_wait_for "! bpftool prog show | grep -qE 'name (bt_main|bt_init|bt_assign_cookie|bt_fentry|bt_kprobe|bt_flush)'" 10
	tk_wait_for "! bpftool struct_ops show | grep -qw bbr_traced" 5
	tk_wait_for "! pgrep -x bbrtrace-guard" 5
}

# start_tracer ERR ARGS...: bbrtrace on $NS-a's flows in the background
# ($TRACER), returning once it traces; $TRACED_CC is what a flow must use to
# be traced (struct_ops: the namespace's default, switched to bbr_traced;
# fentry, kprobe: kernel bbr)
start_tracer() {
	local err=$1
	shift
	bbrtrace --set-default-in "$NS-a" "$@" 2> "$err" &
	TRACER=$!
	tk_wait_for "grep -q 'bbrtrace: backend' '$err'" 30 || { cat "$err"; return 1; }
	if grep -q 'backend struct_ops' "$err"; then
		TRACED_CC=bbr_traced
		tk_wait_for "[ \$(ip netns exec $NS-a sysctl -n net.ipv4.tcp_congestion_control) = bbr_traced ]" 10
	else
		TRACED_CC=bbr
	fi
}

# send BYTES to the sink on PORT in $NS-b, as a traced flow
traced_send() {
	ip netns exec "$NS-a" "$TK_ROOT/tests/tools/tcpflow.py" send 10.201.0.2 "$1" --bytes "$2" --cc "$TRACED_CC" > /dev/null
}

# sig_in_hand SIGCGT SIGBLK: both masks (hex) together hold SIGHUP (bit 0)
# and SIGTERM (bit 14)
sig_in_hand() { [ $# -eq 2 ] && ((((0x$1 | 0x$2) & 0x4001) == 0x4001)); }

# the moment the background process $1 runs the tool $2 (its exec done) and
# has SIGTERM and SIGHUP in hand, caught (/proc's SigCgt) or blocked for a
# signalfd (SigBlk, udpdwell): a signal before that would stop the shell, ip
# or the dynamic loader, not the tool (a bbrpcap sent SIGTERM 1 ms after its
# exec, before main had set its handlers, ended by it: status 143) (bounded: 5 s)
exec_done() {
	local i st
	for i in $(seq 500); do
		if [ "$(cat /proc/"$1"/comm 2>/dev/null)" = "$2" ]; then
			st=$(awk '/^Sig(Cgt|Blk):/ { printf "%s ", $2 }' /proc/"$1"/status 2>/dev/null)
			# shellcheck disable=SC2086
			sig_in_hand $st && return 0
		fi
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.01
	done
	echo "# $2 (pid $1) did not catch SIGTERM and SIGHUP within 5 s"
	return 1
}

# a JSON-lines file whose every line is a whole record
whole_lines() {
	local f=$1
	[ -s "$f" ] || return 0
	[ "$(tail -c 1 "$f" | od -An -c | tr -d ' ')" = '\n' ] || { echo "# $f: last line cut"; return 1; }
	jq -e -c . "$f" > /dev/null || { echo "# $f: a line is not JSON"; return 1; }
}

@test "SIGTERM and SIGHUP at any moment of start-up: exit 0, a summary when the output was open, nothing left" {
	local sig delay out err rc
	for sig in TERM HUP; do
		for delay in 0.001 0.02 0.05 0.1 0.2 0.4 0.8; do
			out=$BATS_TEST_TMPDIR/$sig-$delay.jsonl err=$BATS_TEST_TMPDIR/$sig-$delay.err
			bbrtrace --set-default-in "$NS-a" -f json -o "$out" 2> "$err" &
			local pid=$!
			exec_done "$pid" bbrtrace
			sleep "$delay"
			kill -"$sig" "$pid"
			rc=0
			wait "$pid" || rc=$?
			echo "# SIG$sig after ${delay}s: exit $rc; $(tr '\n' ' ' < "$err" | cut -c1-160)"
			[ "$rc" -eq 0 ] || { cat "$err"; return 1; }
			nothing_left
			# the output is opened before anything else: once it exists, it
			# ends with the summary, and every line is whole
			if [ -s "$out" ]; then
				whole_lines "$out"
				[ "$(tail -n 1 "$out" | jq -r .type)" = summary ] || { cat "$out"; return 1; }
			fi
		done
	done
}

@test "output to a pipe that closes (| head -1): bbrtrace stops at its next write, says why, and leaves nothing" {
	ip netns exec "$NS-b" "$TK_ROOT/tests/tools/tcpflow.py" sink 5401 &
	tk_wait_listen 5401 5 "$NS-b"
	local err=$BATS_TEST_TMPDIR/err first=$BATS_TEST_TMPDIR/first fifo=$BATS_TEST_TMPDIR/fifo rc i
	mkfifo "$fifo"
	head -n 1 < "$fifo" > "$first" &
	local head=$!
	start_tracer "$err" -f json > "$fifo"
	# flows until head has its line and bbrtrace has written into the
	# closed pipe: each flow's samples are a later write
	for i in 1 2 3 4 5 6 7 8 9 10; do
		kill -0 "$TRACER" 2> /dev/null || break
		traced_send 5401 1000000 2> /dev/null || true
		sleep 0.3
	done
	tk_wait_for "! kill -0 $TRACER 2>/dev/null" 10 || { kill -INT "$TRACER"; echo "# still running after 10 flows"; }
	rc=0
	wait "$TRACER" || rc=$?
	wait "$head" || true
	echo "# exit $rc; stderr: $(tr '\n' ' ' < "$err")"
	jq -e '.type == "sample"' "$first"
	# a write error, named, not a silent death by SIGPIPE
	expect_cmp "$rc" -eq 1 "bbrtrace's exit status"
	grep -q 'Broken pipe' "$err"
	nothing_left
}

@test "-o on a full disk (ENOSPC): one clear line, exit 1, the records written so far whole, nothing left" {
	mkdir -p "$BATS_TEST_TMPDIR/full"
	mount -t tmpfs -o size=64k tmpfs "$BATS_TEST_TMPDIR/full"
	ip netns exec "$NS-b" "$TK_ROOT/tests/tools/tcpflow.py" sink 5402 &
	tk_wait_listen 5402 5 "$NS-b"
	local out=$BATS_TEST_TMPDIR/full/trace.jsonl err=$BATS_TEST_TMPDIR/err rc=0 i
	start_tracer "$err" -f json -o "$out"
	# 64 KiB hold a few hundred samples; these flows make thousands (a
	# flow that starts as bbrtrace stops finds bbr_traced gone)
	for i in 1 2 3; do
		kill -0 "$TRACER" 2> /dev/null || break
		traced_send 5402 20000000 2> /dev/null || true
	done
	tk_wait_for "! kill -0 $TRACER 2>/dev/null" 10 || kill -INT "$TRACER"
	wait "$TRACER" || rc=$?
	echo "# exit $rc; stderr: $(tr '\n' ' ' < "$err")"
	expect_cmp "$rc" -eq 1 "bbrtrace's exit status"
	grep -q "No space left on device" "$err"
	grep -qF "$out" "$err"
	whole_lines "$out"
	expect_cmp "$(jq -c 'select(.type=="sample")' "$out" | wc -l)" -gt 10 "samples written before the disk filled"
	nothing_left
}

@test "sockets closing all the time while traced: every sample counted, nothing lost unseen, exit 0" {
	ip netns exec "$NS-b" "$TK_ROOT/tests/tools/tcpflow.py" sink 5403 &
	tk_wait_listen 5403 5 "$NS-b"
	local out=$BATS_TEST_TMPDIR/trace.jsonl err=$BATS_TEST_TMPDIR/err i j
	start_tracer "$err" --detect --max-flows 16 -f json -o "$out"
	# 60 connections, 20 at a time, each closed as soon as its data is out:
	# more flows at once than the detector's table holds
	for i in 1 2 3; do
		local senders=()
		for j in $(seq 1 20); do
			traced_send 5403 200000 &
			senders+=($!)
		done
		wait "${senders[@]}"
	done
	sleep 1
	kill -INT "$TRACER"
	wait "$TRACER"
	whole_lines "$out"
	local n flows
	n=$(jq -c 'select(.type=="sample")' "$out" | wc -l)
	flows=$(jq -r 'select(.type=="sample") | .cookie' "$out" | sort -u | wc -l)
	echo "# $n samples of $flows connections"
	expect_cmp "$flows" -ge 60 "connections sampled"
	# the summary counts what was written and what was lost; the closes free
	# the table's places: the flows tracked in all are more than it holds
	# (a flow that found it full at its start is untracked, counted, until
	# it closes)
	jq -e -s --argjson n "$n" 'map(select(.type=="summary"))[0] | .samples == $n and .lost == 0' "$out"
	jq -c -s 'map(select(.type=="summary"))[0] | {samples, samples_untracked}' "$out" | sed 's/^/# /'
	jq -e -s 'map(select(.type=="verdict"))[0] | .flows > 16' "$out"
	nothing_left
}

@test "the traced namespace deleted under bbrtrace: it keeps tracing the others and stops cleanly, exit 0" {
	local gone=$NS-gone
	ip netns add "$gone"
	printf '%s\n' "$gone" >> "$TK_STATE_DIR/netns.list"
	local out=$BATS_TEST_TMPDIR/trace.jsonl err=$BATS_TEST_TMPDIR/err
	start_tracer "$err" --set-default-in "$gone" -f json -o "$out"
	sleep 0.5
	ip netns del "$gone"
	# still tracing: a flow in the namespace that remains is recorded
	ip netns exec "$NS-b" "$TK_ROOT/tests/tools/tcpflow.py" sink 5404 &
	tk_wait_listen 5404 5 "$NS-b"
	traced_send 5404 2000000
	kill -0 "$TRACER"
	kill -INT "$TRACER"
	wait "$TRACER"
	echo "# stderr: $(tr '\n' ' ' < "$err")"
	jq -e -s '[.[] | select(.type=="sample" and .dport==5404)] | length > 10' "$out"
	expect_equal "$(tail -n 1 "$out" | jq -r .type)" summary "type of the last record"
	nothing_left
}

# udpdwell's programs (ud_*) loaded after program id $1 that no process
# holds: what a udpdwell that exited left behind. Another udpdwell on the
# machine (a user's daemon, a test run beside this one) holds its own
# programs through its fds (fdinfo's prog_id, of a program's fd or of a
# link's), so they do not count; bpftool's pids column, which would say the
# same, is empty where bpftool was built without it (Debian 12's).
ud_orphans() {
	local held
	held=$(grep -hs '^prog_id:' /proc/[0-9]*/fdinfo/* | awk '{print $2}' | sort -un | paste -sd,)
	bpftool -j prog show | jq --argjson after "$1" --argjson held "[$held]" \
		'[.[] | select((.name // "" | startswith("ud_")) and .id > $after and (.id as $i | $held | index($i) | not))] | length'
}

@test "udpdwell: SIGTERM and SIGHUP at any moment of start-up: exit 0, no program left" {
	local sig delay rc out err after
	after=$(bpftool -j prog show | jq '[.[].id] | max // 0')
	for sig in TERM HUP; do
		for delay in 0.001 0.02 0.05 0.1 0.2 0.4 0.8; do
			out=$BATS_TEST_TMPDIR/ud-$sig-$delay.jsonl err=$BATS_TEST_TMPDIR/ud-$sig-$delay.err
			udpdwell -f json -o "$out" 2> "$err" &
			local pid=$!
			exec_done "$pid" udpdwell
			sleep "$delay"
			kill -"$sig" "$pid"
			rc=0
			wait "$pid" || rc=$?
			echo "# SIG$sig after ${delay}s: exit $rc; $(tr '\n' ' ' < "$err" | cut -c1-120)"
			[ "$rc" -eq 0 ] || { cat "$err"; return 1; }
			whole_lines "$out"
			tk_wait_for "[ \$(ud_orphans $after) -eq 0 ]" 10
		done
	done
}

@test "bbrpcap capture: SIGTERM and SIGHUP at any moment, traffic or not: exit 0, a summary, a capture tcpdump reads whole" {
	requires tcpdump
	ip netns exec "$NS-b" "$TK_ROOT/tests/tools/tcpflow.py" sink 5405 &
	tk_wait_listen 5405 5 "$NS-b"
	local sig delay rc pcap sum err pkts
	for sig in TERM HUP; do
		for delay in 0.001 0.05 0.2 0.8 1.5; do
			pcap=$BATS_TEST_TMPDIR/c-$sig-$delay.pcap sum=$BATS_TEST_TMPDIR/c-$sig-$delay.json
			err=$BATS_TEST_TMPDIR/c-$sig-$delay.err
			ip netns exec "$NS-a" bbrpcap capture -i veth0 -w "$pcap" -f json -o "$sum" 2> "$err" &
			local pid=$!
			exec_done "$pid" bbrpcap
			ip netns exec "$NS-a" "$TK_ROOT/tests/tools/tcpflow.py" send 10.201.0.2 5405 --bytes 20000000 > /dev/null 2>&1 &
			local sender=$!
			sleep "$delay"
			kill -"$sig" "$pid"
			rc=0
			wait "$pid" || rc=$?
			wait "$sender" || true
			pkts=$(tcpdump -r "$pcap" -nn 2> "$err.read" | wc -l)
			echo "# SIG$sig after ${delay}s: exit $rc, $pkts packets; $(tr '\n' ' ' < "$err" | cut -c1-100)"
			[ "$rc" -eq 0 ] || { cat "$err"; return 1; }
			# a torn last record makes tcpdump say "truncated dump file"
			! grep -q truncated "$err.read" || { cat "$err.read"; return 1; }
			jq -e --argjson n "$pkts" '.written == $n' "$sum" ||
				{ cat "$sum"; return 1; }
		done
	done
}
