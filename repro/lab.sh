#!/usr/bin/env bash
# repro/lab.sh: the README's typical session on one machine. It builds the
# pusher and ingest namespaces with a router between them (repro/topology.sh),
# pushes a live stream between them, and removes them. Unlike dip.sh it
# traces nothing: the README's commands do that, as they would on a server.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BBRKIT_BIN:-$ROOT/bin}
PROG=lab.sh
# shellcheck source=repro/topology.sh
. "$ROOT/repro/topology.sh"

usage() {
	cat <<EOF
Usage: repro/lab.sh [--prefix P] up
       repro/lab.sh [--prefix P] push [--duration S] [--port PORT]
       repro/lab.sh [--prefix P] down

A pusher and an ingest server in network namespaces of their own, for the
README's typical session on one machine.

Commands:
  up     creates three namespaces: pusher (10.77.1.2 on eth0), ingest
         (10.77.2.2 on eth0) and rtr, which routes between them. The
         pusher's congestion control is bbr.
  push   pushes a live stream from pusher to ingest 10.77.2.2:PORT, and
         prints both ends' summaries: pushsim, 4 Mbit/s in 20 frames/s, its
         receiver acknowledging every 64 KB, as an RTMP server does. A real
         encoder does as well: rtmp://10.77.2.2:PORT/... from the pusher.
  down   deletes the three namespaces, and only if they are the lab's

Options:
  --prefix P      names the namespaces Ppusher, Prtr and Pingest (default:
                  none); letters, digits and '-', up to 20
  --duration S    push: seconds, 1 to 3600 (default 30)
  --port PORT     push: the ingest's TCP port (default 1935)
  -h, --help      this help
  -V, --version   print the version

Exit status: 0 ok, 1 a step failed, 2 bad arguments, 130 interrupted.
Needs root, iproute2, and the project's bin/ (make).
EOF
}

die_usage() {
	echo "$PROG: $*" >&2
	exit 2
}

fail() {
	echo "$PROG: $*" >&2
	exit 1
}

need_value() { [ $# -ge 2 ] && [ -n "$2" ] || die_usage "$1 needs a value"; }

is_uint() { [[ $1 =~ ^[0-9]+$ ]] && [ ${#1} -le 9 ]; }

prefix="" cmd="" duration=30 port=1935
while [ $# -gt 0 ]; do
	case $1 in
	--prefix) need_value "$@"; prefix=$2; shift ;;
	--duration) need_value "$@"; duration=$2; shift ;;
	--port) need_value "$@"; port=$2; shift ;;
	-h | --help) usage; exit 0 ;;
	-V | --version) echo "$PROG $(cat "$ROOT/VERSION")"; exit 0 ;;
	up | push | down) [ -z "$cmd" ] || die_usage "one command at a time ('$cmd', then '$1')"; cmd=$1 ;;
	*) die_usage "unknown argument '$1' (see --help)" ;;
	esac
	shift
done
[ -n "$cmd" ] || die_usage "name a command: up, push or down (see --help)"
[[ $prefix =~ ^[A-Za-z0-9-]{0,20}$ ]] || die_usage "--prefix: '$prefix' is not up to 20 letters, digits or '-'"
is_uint "$duration" && [ "$duration" -ge 1 ] && [ "$duration" -le 3600 ] ||
	die_usage "--duration: '$duration' is not a whole number of seconds from 1 to 3600"
is_uint "$port" && [ "$port" -ge 1 ] && [ "$port" -le 65535 ] || die_usage "--port: '$port' is not a TCP port (1 to 65535)"
[ "$(id -u)" -eq 0 ] || fail "needs root (network namespaces)"

PUSH=${prefix}pusher RTR=${prefix}rtr RECV=${prefix}ingest

ns_exists() { [ -e "/run/netns/$1" ]; }

# the lab's namespaces, or none of them: a failed step removes what it made
lab_up() {
	local ns made=()
	for ns in "$PUSH" "$RTR" "$RECV"; do
		ns_exists "$ns" && fail "namespace $ns exists already: \`repro/lab.sh${prefix:+ --prefix $prefix} down\` removes the lab's, or --prefix P names others"
	done
	for ns in "$PUSH" "$RTR" "$RECV"; do
		ip netns add "$ns" || { lab_delete "${made[@]}"; fail "cannot create namespace $ns"; }
		made+=("$ns")
	done
	topo_build "$PUSH" "$RTR" "$RECV" || { lab_delete "${made[@]}"; fail "cannot build the topology"; }
	ip netns exec "$PUSH" sysctl -qw net.ipv4.tcp_congestion_control=bbr 2>/dev/null || {
		lab_delete "${made[@]}"
		fail "TCP BBR is not available in this kernel: load it (modprobe tcp_bbr) or build it in (CONFIG_TCP_CONG_BBR)"
	}
	echo "$PROG: up: $PUSH (10.77.1.2 on eth0) -> $RTR -> $RECV (10.77.2.2 on eth0); remove with \`repro/lab.sh${prefix:+ --prefix $prefix} down\`"
}

# deletes namespaces "$@", killing what still runs in them (bounded retries:
# ip netns del fails while another mount namespace holds one)
lab_delete() {
	local ns p ok=0
	for ns in "$@"; do
		for _ in $(seq 25); do
			p=$(ip netns pids "$ns" 2>/dev/null)
			# shellcheck disable=SC2086 # one PID per word
			[ -n "$p" ] && kill -9 $p 2>/dev/null
			ip netns del "$ns" 2>/dev/null
			ns_exists "$ns" || continue 2
			sleep 0.2
		done
		echo "$PROG: cannot delete namespace $ns: it is still in use (ip netns pids $ns)" >&2
		ok=1
	done
	return $ok
}

lab_down() {
	ns_exists "$RTR" || fail "no lab here: namespace $RTR does not exist"
	topo_is_router "$RTR" || fail "namespace $RTR is not the lab's router (no p0 with 10.77.1.1): left alone"
	lab_delete "$PUSH" "$RTR" "$RECV" || exit 1
	echo "$PROG: down: $PUSH, $RTR and $RECV deleted"
}

# the receiver's listening socket, for up to 5 s
wait_listen() {
	for _ in $(seq 50); do
		ip netns exec "$RECV" ss -Hltn "sport = :$port" | grep -q . && return 0
		sleep 0.1
	done
	return 1
}

lab_push() {
	local rpid rc rrc addr=$TOPO_RECV_ADDR:$port
	for ns in "$PUSH" "$RTR" "$RECV"; do
		ns_exists "$ns" || fail "namespace $ns does not exist: \`repro/lab.sh${prefix:+ --prefix $prefix} up\` builds the lab"
	done
	[ -x "$BIN/pushsim" ] || fail "$BIN/pushsim is missing: run make"
	ip netns exec "$RECV" "$BIN/pushsim" recv --listen "$addr" --mode app-ack --ack-bytes 65536 --summary-only &
	rpid=$!
	# a background job ignores SIGINT: Ctrl-C ends the sender, this the receiver
	trap 'kill "$rpid" 2>/dev/null; echo "$PROG: interrupted" >&2; exit 130' INT TERM
	wait_listen || { kill "$rpid" 2>/dev/null; wait "$rpid"; fail "the receiver does not listen on $addr in $RECV"; }
	ip netns exec "$PUSH" "$BIN/pushsim" send --connect "$addr" --duration "$duration" --fps 20 --summary-only
	rc=$?
	# the receiver ends with the connection; bounded, should the push not connect
	for _ in $(seq 100); do kill -0 "$rpid" 2>/dev/null || break; sleep 0.1; done
	kill "$rpid" 2>/dev/null
	wait "$rpid"
	rrc=$?
	[ "$rc" -eq 0 ] && [ "$rrc" -eq 0 ] || fail "the push failed (sender's status $rc, receiver's $rrc)"
}

case $cmd in
up) lab_up ;;
push) lab_push ;;
down) lab_down ;;
esac
