#!/usr/bin/env bats
# Drops the server causes, counted per socket and named from the kernel's
# BTF, checked against the kernel's own SNMP counters. Each test has a fresh
# namespace, so its Udp counters in /proc/net/snmp count only its traffic.

load helpers
load ../fixtures/udpdwell/helpers

NS=ud-${BATS_ROOT_PID}-drop

setup_file() {
	requires root btf netns jq ss bpftool
	KFREE_NARGS=$(ud_tp_nargs kfree_skb)
	export KFREE_NARGS
}

setup() {
	ud_netns "$NS"
}

teardown() {
	ud_kill_all
	tk_cleanup
	return 0
}

# Udp counter $1 in the namespace (/proc/net/snmp is per namespace)
udp_counter() {
	ip netns exec "$NS" awk -v k="$1" '
		/^Udp:/ { if (!h) { for (i = 2; i <= NF; i++) col[$i] = i; h = 1 } else { print $col[k]; exit } }
	' /proc/net/snmp
}

wait_udp() {
	local i
	for ((i = 0; i < 100; i++)); do
		ip netns exec "$NS" ss -Hlun "sport = :$1" | grep -q . && return 0
		sleep 0.05
	done
	return 1
}

# burst PORT UDPDWELL_ARGS...: 600 datagrams at 50,000/s into a socket with a
# tiny receive buffer whose reader waits 300 ms before each read
burst() {
	local port=$1 rx
	shift
	ud_start -p "$port" --interval 600 "$@"
	BEFORE=$(udp_counter RcvbufErrors)
	ip netns exec "$NS" timeout 60 "$BIN/sfu_echo" --listen "127.0.0.1:$port" --rcvbuf 2048 \
		--stall-every 1 --stall-ms 300 --idle-exit 1 --no-echo > "$BATS_TEST_TMPDIR/rx.json" &
	rx=$!
	wait_udp "$port"
	ip netns exec "$NS" timeout 60 "$BIN/rtpsend" --to "127.0.0.1:$port" --rate 50000 --count 600 \
		> "$BATS_TEST_TMPDIR/tx.json"
	wait "$rx"
	AFTER=$(udp_counter RcvbufErrors)
	ud_stop
}

check_rcvbuff() {
	local port=$1 sock ud kernel read sent
	sock=$(ud_socket "$port")
	ud=$(jq '.drops.SOCKET_RCVBUFF // 0' <<< "$sock")
	kernel=$((AFTER - BEFORE))
	read=$(jq .packets "$BATS_TEST_TMPDIR/rx.json")
	sent=$(jq .sent "$BATS_TEST_TMPDIR/tx.json")
	echo "# sent $sent, read $read; RcvbufErrors grew by $kernel; udpdwell SOCKET_RCVBUFF $ud" >&3
	[ "$kernel" -gt 100 ] || { echo "# the burst did not overflow the buffer"; return 1; }
	[ "$ud" -eq "$kernel" ] || { echo "# udpdwell $ud vs kernel $kernel: $sock"; return 1; }
	[ $((read + ud)) -eq "$sent" ] || { echo "# read $read + dropped $ud != sent $sent"; return 1; }
	expect_equal "$(jq -r .state <<< "$sock")" ALERT "state of the overflowed socket"
}

@test "a tiny SO_RCVBUF and a burst: SOCKET_RCVBUFF drops equal the growth of RcvbufErrors" {
	burst 41300 -v
	# kfree_skb names the socket (rx_sk), or udpdwell falls back by itself
	if [ "$KFREE_NARGS" = 4 ]; then
		grep -q "drops counted through skb:kfree_skb (rx_sk)" "$UD_ERR"
	else
		grep -q "drops counted through udp:udp_fail_queue_rcv_skb" "$UD_ERR"
	fi
	check_rcvbuff 41300
}

@test "the same through udp:udp_fail_queue_rcv_skb (--legacy-drops, as on kernels without rx_sk)" {
	burst 41301 --legacy-drops -v
	grep -q "drops counted through udp:udp_fail_queue_rcv_skb" "$UD_ERR"
	check_rcvbuff 41301
}

@test "a socket filter that refuses everything: SOCKET_FILTER drops named from BTF, or said to be out of reach (kfree_skb without rx_sk)" {
	ud_start -p 41302 --interval 600
	ip netns exec "$NS" timeout 60 /usr/bin/python3 -c '
import ctypes, socket, struct, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 41302))
ret0 = ctypes.create_string_buffer(struct.pack("HBBI", 0x06, 0, 0, 0))  # BPF_RET|BPF_K 0
prog = struct.pack("HL", 1, ctypes.addressof(ret0))                      # struct sock_fprog
s.setsockopt(socket.SOL_SOCKET, 26, prog)                                # SO_ATTACH_FILTER
out = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(25):
    out.sendto(b"x" * 100, ("127.0.0.1", 41302))
time.sleep(0.3)'
	ud_stop
	sock=$(ud_socket 41302)
	if [ "$KFREE_NARGS" != 4 ]; then
		# only a failed enqueue names its socket here: udpdwell says so
		grep -q "drops: full buffer and protocol memory only" "$UD_ERR" || { cat "$UD_ERR"; false; }
		[ -z "$sock" ] || [ "$(jq -c .drops <<< "$sock")" = '{}' ] || { echo "# $sock"; false; }
		return 0
	fi
	[ "$(jq -c .drops <<< "$sock")" = '{"SOCKET_FILTER":25}' ] || { echo "# $sock"; false; }
	# a filter drop is not a full buffer: the state stays OK
	expect_equal "$(jq -r .state <<< "$sock")" OK "state of the filtered socket"
}
