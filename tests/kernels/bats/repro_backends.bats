#!/usr/bin/env bats
# repro/dip.sh with each bbrtrace backend the kernel offers (fentry and kprobe
# on bbr_main; struct_ops registering bbr_traced, with a BPF link from 6.4,
# without one before, where bbrtrace's guardian unregisters it if bbrtrace is
# killed), a netem delay on the router, and nothing left behind, also after
# Ctrl-C. The kernel matrix runs this file in its guests (tests/kernels/suites):
# it needs kprobes, fentry and netem, which the build machine lacks.

load ../../bats/helpers
load repro_helpers

setup_file() {
	requires root netns btf bbr netem tcpdump jq tc
	tk_lock_bbr_traced
	export RP_OUT=$BATS_FILE_TMPDIR/runs
	mkdir -p "$RP_OUT"
	# the kernel's own answer: does it have the sock_send_length tracepoint?
	HAS_SEND_TP=$(bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null | grep -m1 -o "btf_trace_sock_send_length" || true)
	export HAS_SEND_TP
}

teardown_file() {
	tk_unlock_bbr_traced
}

teardown() {
	rp_stop_runs
}

@test "dip.sh with each backend: the push runs bbr (bbr_traced under struct_ops), the trace has samples, nothing is left behind" {
	requires fentry kprobe struct_ops
	local before b d n=0
	before=$(leftovers)
	for b in fentry kprobe struct_ops; do
		d=$RP_OUT/backend-$b
		n=$((n + 1))
		tk_run "$TK_ROOT/repro/dip.sh" --backend "$b" --rtt 1ms --quickack on --duration 3 --no-plot \
			--out "$d" --id "bk$n" --port 43110
		expect_status 0
		jq -e --arg b "$b" --arg cc "$(push_cc_for "$b")" \
			'.scenario.backend == $b and .push.send.cc == $cc and .samples > 0' "$d/verdict.json" > /dev/null ||
			{ jq -c '{scenario, samples, cc: .push.send.cc}' "$d/verdict.json"; return 1; }
		grep -q "^scenario: .*, $(push_cc_for "$b") traced by $b\$" "$d/verdict.txt"
		[ "$(min_rtt_us "$d/trace.jsonl")" -ge 1000 ]
		# the write tap, for stalls, on the hook this kernel and backend offer:
		# the sock_send_length tracepoint (6.3+), else fexit on tcp_sendmsg
		# (fentry only), else none, said in one line; with it, pushsim's writes
		if [ -n "$HAS_SEND_TP" ] || [ "$b" = fentry ]; then
			grep -q "stalls: the write tap runs on $([ -n "$HAS_SEND_TP" ] && echo tp_btf/sock_send_length || echo fexit/tcp_sendmsg)" \
				"$d/bbrtrace.log" || { cat "$d/bbrtrace.log"; return 1; }
			jq -e -s '[.[] | select(.type=="summary")][0] | .writes > 10 and .stalls_by_cause != null' \
				"$d/trace.jsonl" > /dev/null
			jq -e '.stalls_by_cause != null and .stalled_s != null' "$d/verdict.json" > /dev/null
		else
			grep -q 'stalls of the sender are not traced: this kernel has no sock_send_length tracepoint (6.3+)' \
				"$d/bbrtrace.log" || { cat "$d/bbrtrace.log"; return 1; }
			jq -e -s '[.[] | select(.type=="summary")][0] | .writes == null' "$d/trace.jsonl" > /dev/null
			# the verdict too: no stall counts (null, not 0), and why
			jq -e '.stalls_by_cause == null and .stalled_s == null and .nagle_stalls_ended_by == null
				and (.text | test("The sender.s stalls were not traced: this kernel has no sock_send_length"))' \
				"$d/verdict.json" > /dev/null || { jq -c '{stalls_by_cause, stalled_s, text}' "$d/verdict.json"; return 1; }
		fi
		# only struct_ops switches the pusher's default, and back at exit
		if [ "$b" = struct_ops ]; then
			grep -q "default congestion control in rp-push-bk$n: bbr -> bbr_traced" "$d/bbrtrace.log"
		elif grep -q 'default congestion control\|--set-default' "$d/bbrtrace.log"; then
			cat "$d/bbrtrace.log"
			return 1
		fi
		[ "$(leftovers)" = "$before" ] || { diff <(echo "$before") <(leftovers); return 1; }
	done
}

@test "Ctrl-C during a struct_ops run: exit 130, bbr_traced unregistered (also without a struct_ops link), nothing left" {
	requires struct_ops
	local before log=$RP_OUT/int.log rc=0
	before=$(leftovers)
	set -m
	"$TK_ROOT/repro/dip.sh" --backend struct_ops --rtt 1ms --quickack on --duration 120 --no-plot \
		--out "$RP_OUT/int" --id bkint --port 43111 > "$log" 2>&1 &
	BG_PIDS=$!
	set +m
	tk_wait_for "grep -q 'pushing for' '$log' 2>/dev/null || ! kill -0 $BG_PIDS 2>/dev/null" 120
	grep -q 'pushing for' "$log" || { cat "$log"; return 1; }
	grep -qw bbr_traced /proc/sys/net/ipv4/tcp_available_congestion_control
	sleep 2
	kill -INT -- "-$BG_PIDS"
	for _ in $(seq 600); do kill -0 "$BG_PIDS" 2>/dev/null || break; sleep 0.1; done
	wait "$BG_PIDS" || rc=$?
	BG_PIDS=
	[ "$rc" -eq 130 ] || { cat "$log"; return 1; }
	grep -q 'interrupted, cleaning up' "$log"
	if grep -q 'quickack restore failed' "$log"; then cat "$log"; return 1; fi
	# the guardian unregisters bbr_traced if bbrtrace had to be killed: give it a moment
	tk_wait_for "[ \"\$(leftovers)\" = \"\$before\" ]" 10 || { diff <(echo "$before") <(leftovers); return 1; }
}
