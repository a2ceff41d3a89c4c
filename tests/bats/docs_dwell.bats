#!/usr/bin/env bats
# dwell/README.md's examples, run for real (see docs.bats): udpdwell watching
# an RTP-like stream between namespaces (rtpsend to sfu_echo, the demo's own
# programs), its /metrics page under promtool, and repro/sfu.sh.

load helpers
load docs_helpers

# a port of udpdwell's default range (10000-60000), for the examples without -p
DWELL_PORT=41600

setup() {
	requires root netns btf curl promtool
	doc_setup
	doc_ns_add peer
	doc_link host eth0 10.0.0.1 peer eth0 10.0.0.2
}

teardown() { doc_teardown; }

# the port udpdwell watches (the command CMD, else the group's first): its
# -p, else one of its default range
dwell_port() {
	local p
	p=$(doc_opt "${1:-$(doc_group_cmds | head -1)}" -p --ports)
	p=${p%%-*}
	echo "${p:-$DWELL_PORT}"
}

# the page at the group's --prometheus address, read once it shows a socket,
# and checked by promtool
dwell_scrape() {
	local addr=$1 url page=$DOC_LOG/metrics
	url=http://127.0.0.1:${addr##*:}/metrics
	tk_wait_for "ip netns exec '$DOC_HOST' curl -sSf --max-time 2 '$url' >'$page' 2>/dev/null &&
		grep -q '^udp_socket_dwell_seconds_count{' '$page'" 20 || { cat "$page"; return 1; }
	tk_run promtool check metrics <"$page"
	expect_status 0
}

# the datagrams the README machine has received
udp_in() { tk_netstat "$DOC_HOST" UdpInDatagrams; }

# an RTP-like stream to the README machine's server, flowing before udpdwell
# starts: a --once of 2 s started first watched the stream's start, and on a
# loaded machine saw no datagram (a make test run: "no socket record")
doc_before() {
	local port base
	port=$(dwell_port "$1")
	base=$(udp_in)
	ip netns exec "$DOC_HOST" "$BIN/sfu_echo" --listen "10.0.0.1:$port" -d 60 -q >/dev/null &
	DOC_TRAFFIC=("$!")
	tk_wait_for "ip netns exec '$DOC_HOST' ss -Hlun 'sport = :$port' | grep -q ." 20 || return 1
	ip netns exec "$(doc_ns peer)" "$BIN/rtpsend" --to "10.0.0.1:$port" -r 2000 -d 60 -q >/dev/null &
	DOC_TRAFFIC+=("$!")
	DOC_PIDS+=("${DOC_TRAFFIC[@]}")
	# the stream reaches the server: 100 datagrams (50 ms of it)
	tk_wait_for "[ \$((\$(udp_in) - $base)) -ge 100 ]" 20
}

# while udpdwell watches the stream (doc_before), its /metrics page; then the
# watchers' end, and the stream's
doc_during() {
	local cmd prom iv traffic=("${DOC_TRAFFIC[@]}") p rc=0
	cmd=$(doc_group_cmds | head -1)
	prom=$(doc_opt "$cmd" --prometheus)
	[ -z "$prom" ] || dwell_scrape "$prom" || rc=1
	# one that ends by itself (--once) ends; one that runs until Ctrl-C
	# shows two intervals first
	doc_group_wait "$DOC_STOP_WAIT" || rc=1
	# the reporting period: --interval (or -i, while it means that), 1 s by default
	iv=$(doc_opt "$cmd" -i --interval)
	[[ $iv =~ ^[0-9.]+$ ]] || iv=1
	doc_ends_itself "$cmd" || sleep "$(awk -v i="$iv" 'BEGIN { print 2.5 * i }')" || rc=1
	kill -INT "${traffic[@]}" 2>/dev/null
	wait "${traffic[@]}" 2>/dev/null
	for p in "${traffic[@]}"; do doc_forget "$p"; done
	return $rc
}

# udpdwell saw the stream's socket: a socket record for its port, in what it
# wrote (-o FILE, else stdout), JSON lines or CSV (one header)
doc_after() {
	local out
	[ "$(doc_program "$1")" = udpdwell ] || return 0
	out=$(doc_opt "$1" -o --output)
	out=${out:+$DOC_CWD/$out}
	if [ "$(doc_opt "$1" -f --format)" = csv ]; then
		python3 -c 'import csv, sys
sys.exit(not any(r["type"] == "socket" and r["port"] == sys.argv[2] for r in csv.DictReader(open(sys.argv[1]))))' \
			"${out:-$DOC_OUT}" "$(dwell_port)"
	else
		grep '"type":"socket"' "${out:-$DOC_OUT}" | grep -q "\"port\":$(dwell_port),"
	fi || { echo "# no socket record for port $(dwell_port) in ${out:-stdout}"; return 1; }
}

@test "dwell/README.md: every example runs, udpdwell sees the stream, /metrics passes promtool" {
	doc_readme dwell/README.md
}
