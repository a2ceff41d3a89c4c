#!/usr/bin/env bash
# `make soak`: bbrtrace and udpdwell under churning load for SOAK_SECONDS
# (default 600), measured at the start (after a warm-up) and at the end, with
# a start-vs-end table and its invariants (scripts/soak_report.py). Exit 0
# when every invariant holds, 1 when one fails or the run could not be made,
# 2 on bad settings.
#
#   bbrtrace --detect --stats --prometheus over SOAK_FLOWS (default 1000) TCP
#     flows between two namespaces, each living 1..8 s and replaced at once
#     (the detector forgets each as its socket closes: it keeps what the
#     flows open at once need, well under --max-flows)
#     (the flows use bbr_traced when bbrtrace's backend is struct_ops, kernel
#     bbr otherwise, as its "backend" line says);
#   udpdwell --prometheus over SOAK_UDP_SOCKETS (default 10000) UDP sockets
#     that come and go, more than its --max-sockets table holds.
# Load: tests/tools/soakload.py. Readings: scripts/soak_sample.py.
#
# Settings (environment):
#   SOAK_SECONDS        how long the load runs (default 600)
#   SOAK_FLOWS          TCP flows open at once (default 1000)
#   SOAK_UDP_SOCKETS    UDP sockets opened in all (default 10000), on ports
#                       SOAK_UDP_PORT (default 20000) and up
#   SOAK_WARMUP         seconds of load before the start reading (default a
#                       tenth of SOAK_SECONDS, at least 10, and at least 5 s
#                       past the time the load needs to fill udpdwell's table)
#   SOAK_END_MARGIN     the end reading is this many seconds before the load
#                       stops (default 5)
#   SOAK_RSS_SLACK_KIB  how much either tool's RSS may grow once warm (default
#                       RSS_SLACK_KIB below, which says why)
#   SOAK_DIR            where the files go (default a temporary directory,
#                       removed at the end unless SOAK_KEEP=1 or the run failed)
#   SOAK_ID             names the namespaces soak-ID-a and soak-ID-b (default
#                       the script's PID)
# Only one bbr_traced can be registered per machine: the script holds the
# lock the tests use (/run/lock/bbrkit-bbr_traced.lock) while bbrtrace runs,
# unless SOAK_LOCK_HELD=1 says its caller holds it already (a test file that
# runs the soak several times waits for the lock once).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
BIN=$ROOT/bin
LOCK=/run/lock/bbrkit-bbr_traced.lock
LOCK_WAIT_S=900
START_WAIT_S=30          # a tool says which backend it runs within this
STOP_WAIT_S=20           # a tool exits this long after SIGINT, or is killed
NS_DEL_TRIES=10          # ip netns del is tried this many times, 0.5 s apart
SETTLE_WAIT_S=15         # once the load stopped, bbrtrace's count must stand still within this
UD_LAG_S=2               # two of udpdwell's 1 s intervals: its /metrics is one behind at most
PORT_SEARCH=1000         # loopback ports tried for the /metrics servers
SINK_ADDR=10.201.0.2     # namespace b's end of the veth pair
SINK_PORT=5500
WARM_MARGIN_S=5          # the start reading comes this long after udpdwell's table is full

SECS=${SOAK_SECONDS:-600}
FLOWS=${SOAK_FLOWS:-1000}
UDP_SOCKETS=${SOAK_UDP_SOCKETS:-10000}
UDP_PORT=${SOAK_UDP_PORT:-20000}
WARMUP=${SOAK_WARMUP:-}
END_MARGIN=${SOAK_END_MARGIN:-5}
# The memory bound, the one the soak and tests/bats/soak_short.bats judge by:
# how much either tool's RSS may grow between the start reading and the end.
# At the start bbrtrace tracks the flows open at once (it forgets each at its
# close) and udpdwell's table is full (--max-sockets: the warm-up waits for
# that), so everything the tools keep per flow or socket is already
# allocated and recycled from then on; what may still move is the
# allocator's fragmentation and buffers sized by the largest message so far
# (stdio, the /metrics page). 2 MiB is about 4% of bbrtrace's RSS, and it
# catches a leak of 32 bytes per flow in a 300 s run (about 220 flows end
# each second at 1000 flows living 1..8 s: 66,000 flows) and of 16 bytes in
# the default 600 s. BPF map memory has no slack: the maps must not change.
RSS_SLACK_KIB=${SOAK_RSS_SLACK_KIB:-2048}
ID=${SOAK_ID:-$$}
NS=soak-$ID
DIR=${SOAK_DIR:-}
BT_PID='' UD_PID='' TCP_PID='' UDP_PID='' LOCK_FD='' MADE_NS=''

say() { echo "soak: $*" >&2; }
die() { say "$*"; exit 1; }

# the warm-up: until both tools' tables are full (the start reading is steady state)
default_warmup() {
	local fill=$(((MAX_SOCKETS * SECS + UDP_SOCKETS - 1) / UDP_SOCKETS + WARM_MARGIN_S)) tenth=$((SECS / 10))
	((tenth < 10)) && tenth=10
	echo $((fill > tenth ? fill : tenth))
}

check_settings() {
	local v
	for v in SECS FLOWS UDP_SOCKETS UDP_PORT END_MARGIN; do
		[[ ${!v} =~ ^[0-9]+$ ]] || { say "$v=${!v}: not a whole number"; exit 2; }
	done
	[[ $RSS_SLACK_KIB =~ ^-?[0-9]+$ ]] || { say "SOAK_RSS_SLACK_KIB=$RSS_SLACK_KIB: not a number"; exit 2; }
	((UDP_PORT + UDP_SOCKETS - 1 <= 65535)) || { say "SOAK_UDP_PORT + SOAK_UDP_SOCKETS is past port 65535"; exit 2; }
	[ "$(id -u)" -eq 0 ] || { say "needs root (namespaces, BPF)"; exit 1; }
	for v in ip ss flock bpftool promtool /usr/bin/python3 "$BIN/bbrtrace" "$BIN/udpdwell"; do
		command -v "$v" > /dev/null || die "$v is missing (make; ./scripts/install-deps.sh)"
	done
	MAX_FLOWS=$(help_default bbrtrace max-flows) MAX_SOCKETS=$(help_default udpdwell max-sockets)
	[ -n "$MAX_FLOWS" ] && [ -n "$MAX_SOCKETS" ] || die "cannot read --max-flows or --max-sockets's default from --help"
	((UDP_SOCKETS > 0)) || { say "SOAK_UDP_SOCKETS must be above 0"; exit 2; }
	((UDP_SOCKETS > MAX_SOCKETS)) ||
		say "warning: $UDP_SOCKETS sockets do not overfill --max-sockets $MAX_SOCKETS: memory may still grow after the start reading"
	WARMUP=${WARMUP:-$(default_warmup)}
	[[ $WARMUP =~ ^[0-9]+$ ]] || { say "SOAK_WARMUP=$WARMUP: not a whole number"; exit 2; }
	((WARMUP + END_MARGIN < SECS)) || { say "SOAK_WARMUP ($WARMUP) + SOAK_END_MARGIN must be below SOAK_SECONDS"; exit 2; }
}

# stop PID with SIGINT, then SIGKILL after STOP_WAIT_S; its exit status goes to FILE
stop_pid() {
	local pid=$1 file=${2:-/dev/null} rc i
	[ -n "$pid" ] && kill -0 "$pid" 2> /dev/null || return 0
	kill -INT "$pid" 2> /dev/null
	for ((i = 0; i < STOP_WAIT_S * 10; i++)); do
		kill -0 "$pid" 2> /dev/null || break
		sleep 0.1
	done
	kill -0 "$pid" 2> /dev/null && { say "pid $pid still runs ${STOP_WAIT_S}s after SIGINT: killed"; kill -9 "$pid"; }
	wait "$pid" 2> /dev/null
	rc=$?
	echo "$rc" > "$file"
}

cleanup() {
	local rc=$? ns i left=''
	trap '' INT TERM
	stop_pid "$TCP_PID"
	stop_pid "$UDP_PID"
	stop_pid "$BT_PID" "$DIR/bt.rc"
	stop_pid "$UD_PID" "$DIR/ud.rc"
	for ns in $MADE_NS; do # only those this run made
		for ((i = 0; i < NS_DEL_TRIES; i++)); do
			ip netns pids "$ns" 2> /dev/null | xargs -r kill -9 2> /dev/null
			ip netns del "$ns" 2> /dev/null || [ ! -e "/run/netns/$ns" ] && break
			sleep 0.5
		done
		[ -e "/run/netns/$ns" ] && left="$left $ns" &&
			say "namespace $ns could not be removed (pids: $(ip netns pids "$ns" 2>&1 | tr '\n' ' '))"
	done
	unlock
	if [ -n "$DIR" ] && [ -z "${SOAK_DIR:-}" ] && [ "${SOAK_KEEP:-0}" != 1 ] && [ "$rc" -eq 0 ]; then
		rm -rf "$DIR"
	elif [ -n "$DIR" ]; then
		say "the run's files are in $DIR"
	fi
	[ -z "$left" ] || exit 1 # something of the run is left: the run fails
}

lock() {
	local t0=$SECONDS
	[ "${SOAK_LOCK_HELD:-0}" = 1 ] && { say "the caller holds the bbr_traced lock"; return 0; }
	exec {LOCK_FD}> "$LOCK"
	flock -w "$LOCK_WAIT_S" "$LOCK_FD" || die "bbr_traced is in use by another run for ${LOCK_WAIT_S}s: giving up"
	say "waited $((SECONDS - t0))s for the bbr_traced lock"
}

unlock() {
	[ -n "$LOCK_FD" ] || return 0
	flock -u "$LOCK_FD"
	exec {LOCK_FD}>&-
	LOCK_FD=''
}

make_netns() {
	ip netns add "$NS-a" || die "cannot create namespace $NS-a"
	MADE_NS="$NS-a"
	ip netns add "$NS-b" || die "cannot create namespace $NS-b"
	MADE_NS="$NS-a $NS-b"
	ip -n "$NS-a" link set lo up && ip -n "$NS-b" link set lo up &&
		ip -n "$NS-a" link add veth0 type veth peer name veth1 netns "$NS-b" &&
		ip -n "$NS-a" addr add 10.201.0.1/24 dev veth0 &&
		ip -n "$NS-b" addr add "$SINK_ADDR/24" dev veth1 &&
		ip -n "$NS-a" link set veth0 up && ip -n "$NS-b" link set veth1 up || die "cannot set up the veth pair"
}

# a loopback TCP port nothing listens on, from $1 up
free_port() {
	local p
	for ((p = $1; p < $1 + PORT_SEARCH; p++)); do
		ss -Hltn "sport = :$p" | grep -q . || { echo "$p"; return 0; }
	done
	return 1
}

# sleep that a signal interrupts (a trap runs at once, not after the sleep)
pause() {
	sleep "$1" &
	wait $!
}

# wait for the line "TOOL: backend ..." in ERR while PID runs
wait_backend() {
	local pid=$1 err=$2 i
	for ((i = 0; i < START_WAIT_S * 10; i++)); do
		grep -q ': backend ' "$err" && return 0
		kill -0 "$pid" 2> /dev/null || { cat "$err" >&2; die "$(basename "$err" .err) exited before it traced"; }
		sleep 0.1
	done
	cat "$err" >&2
	die "no backend line in ${START_WAIT_S}s"
}

# the default of a tool's option --$2, read from its --help: the "(default N)"
# that ends the option's text (lib/opt prints it from the option's table)
help_default() {
	"$BIN/$1" --help | tr '\n' ' ' | awk -v o="--$2 " '{
		i = index($0, o)
		if (i && match(s = substr($0, i + length(o)), /\(default [0-9]+\)/))
			print substr(s, RSTART + 9, RLENGTH - 10)
	}'
}

start_tools() {
	local bt_port ud_port
	bt_port=$(free_port 46100) && ud_port=$(free_port $((bt_port + 1))) || die "no free loopback port"
	BT_URL=http://127.0.0.1:$bt_port/metrics UD_URL=http://127.0.0.1:$ud_port/metrics
	: > "$DIR/bt.err" && : > "$DIR/ud.err"
	# every sample written too (--records samples; --prometheus alone writes
	# the detector's records only): the report counts them against /metrics
	"$BIN/bbrtrace" --detect --stats --prometheus "127.0.0.1:$bt_port" --records samples -f json \
		-o "$DIR/trace.jsonl" 2> "$DIR/bt.err" &
	BT_PID=$!
	wait_backend "$BT_PID" "$DIR/bt.err"
	BACKEND=$(sed -n 's/^bbrtrace: backend \([a-z_]*\).*/\1/p' "$DIR/bt.err" | head -1)
	[ "$BACKEND" = struct_ops ] && CC=bbr_traced || CC=bbr
	"$BIN/udpdwell" -p "$UDP_PORT-$((UDP_PORT + UDP_SOCKETS - 1))" --interval 1 \
		--prometheus "127.0.0.1:$ud_port" -f json -o "$DIR/dwell.jsonl" 2> "$DIR/ud.err" &
	UD_PID=$!
	wait_backend "$UD_PID" "$DIR/ud.err"
	say "bbrtrace (pid $BT_PID, backend $BACKEND, flows on $CC) and udpdwell (pid $UD_PID) are running"
}

start_load() {
	local load=$ROOT/tests/tools/soakload.py bound=$((SECS + 120))
	ip netns exec "$NS-b" timeout "$bound" "$load" tcp --peer-netns "$NS-a" --addr "$SINK_ADDR" \
		--port "$SINK_PORT" --flows "$FLOWS" --seconds "$SECS" --cc "$CC" > "$DIR/tcp.json" 2> "$DIR/tcp.err" &
	TCP_PID=$!
	ip netns exec "$NS-b" timeout "$bound" "$load" udp --peer-netns "$NS-a" --addr "$SINK_ADDR" \
		--ports "$UDP_PORT-$((UDP_PORT + UDP_SOCKETS - 1))" --sockets "$UDP_SOCKETS" \
		--table "$MAX_SOCKETS" --seconds "$SECS" > "$DIR/udp.json" 2> "$DIR/udp.err" &
	UDP_PID=$!
	LOAD_T0=$SECONDS
	say "load running for ${SECS}s: $FLOWS TCP flows, $UDP_SOCKETS UDP sockets"
}

# die, saying so, when bbrtrace or udpdwell is no longer running
alive() {
	local pid name rc err
	for name in bbrtrace udpdwell; do
		[ "$name" = bbrtrace ] && pid=$BT_PID err=bt.err || pid=$UD_PID err=ud.err
		kill -0 "$pid" 2> /dev/null && continue
		wait "$pid" 2> /dev/null
		rc=$?
		[ "$name" = bbrtrace ] && BT_PID='' || UD_PID=''
		tail -n 5 "$DIR/$err" >&2
		die "$name (pid $pid) died under load at $((SECONDS - LOAD_T0))s: exit status $rc"
	done
}

# both tools' readings, as PHASE
sample() {
	alive
	"$ROOT/scripts/soak_sample.py" sample --pid "$BT_PID" --metrics "$BT_URL" --out "$DIR/bt.$1.json" &&
		"$ROOT/scripts/soak_sample.py" sample --pid "$UD_PID" --metrics "$UD_URL" \
			--out "$DIR/ud.$1.json" --counters ud_counters || die "cannot take the $1 reading"
	say "$1 reading taken at $((SECONDS - LOAD_T0))s"
}

# seconds to wait until $1 s after the load started
until_t() { local w=$(($1 - (SECONDS - LOAD_T0))); echo $((w > 0 ? w : 0)); }

# wait for the load to end (bounded by its timeout), then for bbrtrace's count to stop moving
wait_load() {
	local rc=0 a b i
	wait "$TCP_PID" || rc=$?
	wait "$UDP_PID" || rc=$?
	TCP_PID='' UDP_PID=''
	[ "$rc" -eq 0 ] || { cat "$DIR/tcp.err" "$DIR/udp.err" >&2; die "the load generator failed (exit $rc)"; }
	a=$(scrape_samples)
	for ((i = 0; i < SETTLE_WAIT_S; i++)); do
		pause 1
		b=$(scrape_samples)
		[ "$a" = "$b" ] && break
		a=$b
	done
	pause "$UD_LAG_S"
}

scrape_samples() {
	/usr/bin/python3 -c 'import sys, urllib.request as u
print([l for l in u.urlopen(sys.argv[1], timeout=10).read().decode().splitlines()
       if l.startswith("bbrtrace_samples_total ")])' "$BT_URL"
}

# stop both tools; what the report reads from their outputs
stop_tools() {
	local f
	stop_pid "$BT_PID" "$DIR/bt.rc"
	BT_PID=''
	unlock
	stop_pid "$UD_PID" "$DIR/ud.rc"
	UD_PID=''
	tail -n 40 "$DIR/trace.jsonl" | grep '^{"type":"summary"' | tail -1 > "$DIR/bt.summary.json"
	grep -c '^{"type":"sample"' "$DIR/trace.jsonl" > "$DIR/bt.sample_lines"
	grep '^{"type":"interval"' "$DIR/dwell.jsonl" | tail -1 > "$DIR/ud.last.json"
	for f in "$DIR"/*.prom; do
		if out=$(promtool check metrics < "$f" 2>&1) && [ -z "$out" ]; then
			echo "$(basename "$f") ok"
		else
			echo "$(basename "$f") failed: $(echo "$out" | head -3 | tr '\n' ' ')"
		fi
	done > "$DIR/promtool.txt"
}

write_params() {
	printf '{"seconds": %d, "warmup": %d, "end_margin": %d, "flows": %d, "udp_sockets": %d, "udp_ports": "%s", "max_flows": %d, "max_sockets": %d, "backend": "%s", "cc": "%s", "rss_slack_kib": %d}\n' \
		"$SECS" "$WARMUP" "$END_MARGIN" "$FLOWS" "$UDP_SOCKETS" "$UDP_PORT-$((UDP_PORT + UDP_SOCKETS - 1))" \
		"$MAX_FLOWS" "$MAX_SOCKETS" "$BACKEND" "$CC" "$RSS_SLACK_KIB" > "$DIR/params.json"
}

main() {
	check_settings
	if [ -z "$DIR" ]; then DIR=$(mktemp -d /tmp/bbrkit-soak.XXXXXX); else mkdir -p "$DIR" || exit 1; fi
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	make_netns
	lock
	start_tools
	write_params
	start_load
	pause "$(until_t $((WARMUP / 2)))"
	sample warmup # the servers' first pages come before the start reading
	pause "$(until_t "$WARMUP")"
	sample start
	# late to end: a window as long as warm-up/2 to start, for CPU per event
	pause "$(until_t $((SECS - END_MARGIN - (WARMUP - WARMUP / 2))))"
	sample late
	pause "$(until_t $((SECS - END_MARGIN)))"
	sample end
	wait_load
	sample final
	stop_tools
	"$ROOT/scripts/soak_report.py" "$DIR"
}

main "$@"
