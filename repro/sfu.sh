#!/usr/bin/env bash
# repro/sfu.sh: is the media server slow, or is the network bad?
#
# A media-server demo on one machine, over three network namespaces:
#
#   sender (rtpsend) --veth-- router --veth-- server (sfu_echo)
#   10.77.1.1          10.77.1.254 | 10.77.2.254     10.77.2.1
#
# rtpsend sends RTP-like datagrams at a fixed rate (default 9,000 packets/s:
# 100 participants x 3 simulcast layers x 30 fps); sfu_echo, a UDP echo "SFU",
# reads and echoes them and keeps the application's own figures (RFC 3550
# jitter, loss, reordering), the kind a WebRTC server's getStats() shows.
# udpdwell watches the server's socket from the root namespace. Scenarios:
#
#   healthy  the server reads at once
#   load     a server under load: every 5th read is delayed 20-50 ms
#            (recvmmsg, up to 128 datagrams per read, 4 MiB receive buffer:
#            the server keeps up on average, but holds packets)
#   network  a bad network: delay 10 ms with 20 ms jitter, 10% loss, 25%
#            reordering. With netem on the router's link to the server where
#            the kernel has sch_netem; where it has not (this build machine),
#            the sender impairs its own stream the same way, which the server
#            sees exactly as it would see a bad network. The script says which.
#
# For each scenario it prints udpdwell's verdict next to the application's
# jitter and loss, and, as an independent check of udpdwell's figures, the
# server's own wait per datagram from the kernel's receive timestamp
# (SO_TIMESTAMPNS) to its read. The server runs SCHED_FIFO (as real-time
# media servers do), so other work on the machine does not make a healthy
# server look slow.
# Needs root and the built tools (make).
#
#   repro/sfu.sh [--scenario all|healthy|load|network] [--seconds S]
#                [--rate PPS] [--port PORT] [--id ID] [--json]
#
# --json prints one JSON line per scenario instead of the table. The
# namespaces are ud-sfu-ID-snd, -rtr and -srv (ID: default this script's
# PID, letters, digits and dashes). Exit status:
# 0 done, 1 a step failed, 2 bad arguments, 3 not root.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$ROOT/bin
SCENARIO=all
SECONDS_PER=10
RATE=9000
PORT=41500
JSON=0
ID=$$

die_usage() { echo "sfu.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--scenario) [ $# -ge 2 ] || die_usage "--scenario: needs a value"; SCENARIO=$2; shift 2 ;;
	--seconds) [ $# -ge 2 ] || die_usage "--seconds: needs a value"; SECONDS_PER=$2; shift 2 ;;
	--rate) [ $# -ge 2 ] || die_usage "--rate: needs a value"; RATE=$2; shift 2 ;;
	--port) [ $# -ge 2 ] || die_usage "--port: needs a value"; PORT=$2; shift 2 ;;
	--json) JSON=1; shift ;;
	--id) [ $# -ge 2 ] || die_usage "--id: needs a value"; ID=$2; shift 2 ;;
	-h | --help) sed -n '2,/^set -uo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
	*) die_usage "$1: unknown option (see --help)" ;;
	esac
done
case $SCENARIO in all | healthy | load | network) ;; *) die_usage "--scenario: '$SCENARIO' is not one of all|healthy|load|network" ;; esac
[[ $SECONDS_PER =~ ^[0-9]+$ ]] && [ "$SECONDS_PER" -ge 1 ] && [ "$SECONDS_PER" -le 3600 ] ||
	die_usage "--seconds: '$SECONDS_PER' is not an integer 1..3600"
[[ $RATE =~ ^[0-9]+$ ]] && [ "$RATE" -ge 10 ] && [ "$RATE" -le 200000 ] ||
	die_usage "--rate: '$RATE' is not an integer 10..200000"
[[ $PORT =~ ^[0-9]+$ ]] && [ "$PORT" -ge 1 ] && [ "$PORT" -le 65535 ] ||
	die_usage "--port: '$PORT' is not a port 1..65535"
[ "$(id -u)" -eq 0 ] || { echo "sfu.sh: needs root (network namespaces, BPF)" >&2; exit 3; }
for t in udpdwell rtpsend sfu_echo; do
	[ -x "$BIN/$t" ] || { echo "sfu.sh: $BIN/$t is missing; run make first" >&2; exit 1; }
done
command -v jq >/dev/null || { echo "sfu.sh: needs jq" >&2; exit 1; }

[[ $ID =~ ^[A-Za-z0-9-]{1,20}$ ]] || die_usage "--id: '$ID' is not 1..20 letters, digits or dashes"
NS=ud-sfu-$ID
SND=$NS-snd RTR=$NS-rtr SRV=$NS-srv
WORK=$(mktemp -d /tmp/ud-sfu.XXXXXX)
PIDS=()

cleanup() {
	local p ns
	for p in "${PIDS[@]}"; do kill -INT "$p" 2>/dev/null; done
	sleep 0.2
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	for ns in "$SND" "$RTR" "$SRV"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

log() { [ "$JSON" -eq 1 ] || echo "$*"; }

setup_net() {
	ip netns add "$SND" && ip netns add "$RTR" && ip netns add "$SRV" || return 1
	for ns in "$SND" "$RTR" "$SRV"; do ip -n "$ns" link set lo up; done
	ip -n "$SND" link add veth0 type veth peer name veth1 netns "$RTR" &&
	ip -n "$RTR" link add veth2 type veth peer name veth3 netns "$SRV" || return 1
	ip -n "$SND" addr add 10.77.1.1/24 dev veth0
	ip -n "$RTR" addr add 10.77.1.254/24 dev veth1
	ip -n "$RTR" addr add 10.77.2.254/24 dev veth2
	ip -n "$SRV" addr add 10.77.2.1/24 dev veth3
	ip -n "$SND" link set veth0 up
	ip -n "$RTR" link set veth1 up
	ip -n "$RTR" link set veth2 up
	ip -n "$SRV" link set veth3 up
	ip -n "$SND" route add default via 10.77.1.254
	ip -n "$SRV" route add default via 10.77.2.254
	ip netns exec "$RTR" sysctl -qw net.ipv4.ip_forward=1
}

wait_udp() { # port netns
	local i
	for ((i = 0; i < 100; i++)); do
		ip netns exec "$2" ss -Hlun "sport = :$1" | grep -q . && return 0
		sleep 0.05
	done
	echo "sfu.sh: nothing listens on UDP port $1 after 5 s" >&2
	return 1
}

# run_scenario NAME SERVER_ARGS -- SENDER_ARGS; prints its line
run_scenario() {
	local name=$1; shift
	local srv_args=() snd_args=() ud_pid rx_pid i sock rx tx
	while [ $# -gt 0 ] && [ "$1" != -- ]; do srv_args+=("$1"); shift; done
	shift
	snd_args=("$@")

	timeout -s INT $((SECONDS_PER + 120)) "$BIN/udpdwell" -p "$PORT" --interval 3600 -f json \
		> "$WORK/$name.ud" 2> "$WORK/$name.ud.err" &
	ud_pid=$!
	PIDS+=("$ud_pid")
	for ((i = 0; i < 300; i++)); do
		grep -qs "backend " "$WORK/$name.ud.err" && break
		kill -0 "$ud_pid" 2>/dev/null || { cat "$WORK/$name.ud.err" >&2; return 1; }
		sleep 0.1
	done
	ip netns exec "$SRV" timeout $((SECONDS_PER + 60)) "$BIN/sfu_echo" --listen "10.77.2.1:$PORT" \
		--idle-exit 1.5 --rt-prio 10 --kernel-ts "${srv_args[@]}" > "$WORK/$name.rx" &
	rx_pid=$!
	PIDS+=("$rx_pid")
	wait_udp "$PORT" "$SRV" || return 1
	ip netns exec "$SND" timeout $((SECONDS_PER + 60)) "$BIN/rtpsend" --to "10.77.2.1:$PORT" \
		--rate "$RATE" --duration "$SECONDS_PER" "${snd_args[@]}" > "$WORK/$name.tx" || return 1
	wait "$rx_pid"
	kill -INT "$ud_pid"
	wait "$ud_pid" || { cat "$WORK/$name.ud.err" >&2; return 1; }
	sock=$(jq -c "select(.type==\"socket\" and .port==$PORT)" "$WORK/$name.ud" | tail -1)
	[ -n "$sock" ] || sock='{"state":"OK","packets":0,"avg_us":null,"p99_us":null,"max_us":null,"drops":{}}'
	rx=$(cat "$WORK/$name.rx")
	tx=$(cat "$WORK/$name.tx")
	jq -cn --arg s "$name" --argjson u "$sock" --argjson r "$rx" --argjson t "$tx" '
		($t.sent + $t.emulated_loss) as $made
		| ((($u.drops // {}) | to_entries | map(.value) | add) // 0) as $drops
		| {scenario: $s, rate_pps: $t.rate_pps, sent: $made,
		   udpdwell: {state: $u.state, packets: $u.packets, avg_us: $u.avg_us,
			      p99_us: $u.p99_us, max_us: $u.max_us, drops: $drops},
		   app: {received: $r.packets, lost: $r.lost,
			 loss_pct: (if $made > 0 then 100 * $r.lost / $made else 0 end),
			 reordered: $r.reordered, jitter_ms: $r.jitter_ms, jitter_max_ms: $r.jitter_max_ms,
			 wait_avg_us: $r.wait_avg_us, wait_max_us: $r.wait_max_us},
		   check: {kernel_ts_wait_avg_us: $r.kwait_avg_us, kernel_ts_wait_max_us: $r.kwait_max_us},
		   verdict: (if $u.state != "OK" then "the server holds packets"
			     elif ($r.lost > 0 or $r.jitter_max_ms > 5) then "the network: the server is cleared"
			     else "healthy" end)}' > "$WORK/$name.json"
	if [ "$JSON" -eq 1 ]; then
		cat "$WORK/$name.json"
	else
		jq -r '[.scenario, .udpdwell.state,
			(.udpdwell.avg_us // 0 | floor), (.udpdwell.p99_us // 0 | floor),
			(.udpdwell.max_us // 0 | floor), .udpdwell.drops,
			(.app.jitter_ms * 100 | round / 100), (.app.loss_pct * 10 | round / 10),
			.app.reordered, (.check.kernel_ts_wait_avg_us // 0 | floor),
			(.check.kernel_ts_wait_max_us // 0 | floor), .verdict] | @tsv' "$WORK/$name.json" |
			awk -F'\t' '{ printf "%-8s | %-5s %9s %9s %9s %6s | %9s %6s %9s | %9s %9s | %s\n",
				$1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 }'
	fi
}

setup_net || { echo "sfu.sh: cannot build the namespaces" >&2; exit 1; }
log "sender 10.77.1.1 -> router -> server 10.77.2.1:$PORT, $RATE packets/s, $SECONDS_PER s per scenario"
NETEM=0
if ip netns exec "$RTR" tc qdisc add dev veth2 root netem delay 1ms 2>/dev/null; then
	ip netns exec "$RTR" tc qdisc del dev veth2 root
	NETEM=1
fi
if [ "$NETEM" -eq 1 ]; then
	log "bad network: netem on the router (delay 10ms 20ms, loss 10%, reorder 25%)"
else
	log "bad network: this kernel has no netem (sch_netem); the sender impairs its own"
	log "  stream instead: delay 10 ms + normal jitter of 20 ms, 10% loss, 25% sent ahead"
fi
log ""
log "scenario | udpdwell (server side)                   | application (getStats-like)   | check (SO_TIMESTAMPNS)|"
log "         | state  avg us    p99 us    max us  drops | jitter ms  loss%  reordered |    avg us    max us | verdict"

status=0
if [ "$SCENARIO" = all ] || [ "$SCENARIO" = healthy ]; then
	run_scenario healthy --batch 128 --rcvbuf 4194304 -- || status=1
fi
if [ "$SCENARIO" = all ] || [ "$SCENARIO" = load ]; then
	run_scenario load --batch 128 --rcvbuf 4194304 --stall-every 5 --stall-ms 20-50 -- || status=1
fi
if [ "$SCENARIO" = all ] || [ "$SCENARIO" = network ]; then
	if [ "$NETEM" -eq 1 ]; then
		ip netns exec "$RTR" tc qdisc add dev veth2 root netem delay 10ms 20ms loss 10% reorder 25%
		run_scenario network --batch 128 --rcvbuf 4194304 -- || status=1
		ip netns exec "$RTR" tc qdisc del dev veth2 root 2>/dev/null
	else
		run_scenario network --batch 128 --rcvbuf 4194304 -- --delay-ms 10 --jitter-ms 20 \
			--loss 10 --reorder 25 || status=1
	fi
fi
exit $status
