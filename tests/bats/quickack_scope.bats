#!/usr/bin/env bats
# quickack's socket scopes, on real connections between two namespaces:
#   on --port       caps the receiver's delayed-ACK timer on the connections
#                   accepted on that port: each ACK's hold measured in a
#                   capture, against a control port on the same route in the
#                   same run;
#   nodelay --dport takes Nagle off the sender's connections to that port:
#                   its data segments against its writes, and a control port.
# Both stay in force after quickack exits, are journaled, listed by status
# (against the connections the test made) and undone by restore, and no
# route changes. The receiver reads nothing until its whole transfer is
# queued (tcp_trickle.py), so only the kernel's ACK policy decides when it
# ACKs.

load helpers

NS=qs-${BATS_ROOT_PID}
TRICKLE=$BATS_TEST_DIRNAME/../fixtures/quickack/tcp_trickle.py
HOLDS=$BATS_TEST_DIRNAME/../fixtures/quickack/ack_holds.awk
CHUNKS=300
CHUNK_BYTES=100
TOTAL=$((CHUNKS * CHUNK_BYTES))
ADDR=10.201.0.2

setup_file() {
	requires root netns tcpdump tshark bpftool jq strace
	[ -x /usr/bin/python3 ] || { echo "/usr/bin/python3 is missing (Debian's python3)" >&2; return 1; }
	grep -qw cgroup2 /proc/self/mountinfo || { _tk_missing "a cgroup v2 hierarchy (mount -t cgroup2 none /sys/fs/cgroup)"; return; }
	tk_bpffs_note
	tk_netns_pair "$NS"
	# every small write its own segment at the sender; room for every small
	# segment while the receiver does not read
	ip netns exec "$NS-a" sysctl -qw net.ipv4.tcp_autocorking=0
	ip netns exec "$NS-b" sysctl -qw net.ipv4.tcp_rmem="4096 4194304 8388608"
	# the link-local routes the kernel adds on its own, before any table is read
	tk_wait_local6 "$NS-a" fe80:: 1 veth0 && tk_wait_local6 "$NS-b" fe80:: 1 veth1
}

teardown_file() {
	tk_cleanup
	tk_bpffs_restore
}

setup() {
	JB=$BATS_TEST_TMPDIR/b.journal
	JA=$BATS_TEST_TMPDIR/a.journal
}

# every scope a test made is unpinned, even when it failed: restore, then the
# pins its journals name removed outright, and its cgroup
teardown() {
	local j pin
	tk_end_test_processes "$NS"
	for j in "$JB:$NS-b" "$JA:$NS-a"; do
		[ -e "${j%%:*}" ] || continue
		cp "${j%%:*}" "$BATS_TEST_TMPDIR/kept.journal"
		quickack restore --netns "${j##*:}" --journal "${j%%:*}" 2> /dev/null || true
		for pin in $(grep -o ' pin=[^ ]*' "$BATS_TEST_TMPDIR/kept.journal" | cut -d= -f2 | sed 's/%2F/\//g'); do
			rm -rf "$pin"
		done
	done
	[ -z "${CG:-}" ] || rmdir "$CG" 2> /dev/null || true
	return 0
}

# the links of quickack's sock_ops programs, as bpftool lists them
scope_links() {
	local ids
	ids=$(bpftool -j prog show | jq -c '[.[] | select(.name == "qs_sockops") | .id]')
	bpftool -j link show | jq --argjson ids "$ids" '[.[] | select(.prog_id as $p | $ids | index($p))] | length'
}

# the routes of both namespaces, every table, both families
routes() {
	local ns
	for ns in "$NS-a" "$NS-b"; do
		ip -n "$ns" -d route show table all
		ip -n "$ns" -6 -d route show table all
	done
}

# trickle [nagle] PORT...: one transfer per port from -a to -b, all at once,
# captured at the receiver into $BATS_TEST_TMPDIR/t.csv (tshark's fields for
# ack_holds.awk); nagle: the senders leave Nagle on
trickle() {
	local mode= p td pids=() pcap=$BATS_TEST_TMPDIR/t.pcap filter=
	[ "$1" = nagle ] && { mode=nagle; shift; }
	for p in "$@"; do filter="${filter:+$filter or }tcp port $p"; done
	# headers only, and a 16 MB buffer: a slow (emulated) CPU must not drop any
	tk_tcpdump_start "$NS-b" "$pcap" -s 128 -B 16384 -i veth1 "$filter" || return 1
	td=$TK_TCPDUMP_PID
	for p in "$@"; do
		ip netns exec "$NS-b" timeout 60 /usr/bin/python3 "$TRICKLE" recv "$ADDR" "$p" "$TOTAL" 50 \
			> "$BATS_TEST_TMPDIR/rx-$p.out" &
		pids+=($!)
	done
	for p in "$@"; do tk_wait_listen "$p" 10 "$NS-b" || return 1; done
	for p in "$@"; do
		ip netns exec "$NS-a" timeout 60 /usr/bin/python3 "$TRICKLE" send "$ADDR" "$p" "$CHUNKS" "$CHUNK_BYTES" 2 50 $mode &
		pids+=($!)
	done
	wait "${pids[@]}"
	for p in "$@"; do
		[ "$(cat "$BATS_TEST_TMPDIR/rx-$p.out")" = "$TOTAL" ] ||
			{ echo "# port $p: the receiver got $(cat "$BATS_TEST_TMPDIR/rx-$p.out") bytes"; return 1; }
	done
	tk_tcpdump_stop "$td" "$pcap" || return 1
	tk_ack_fields "$pcap" > "$BATS_TEST_TMPDIR/t.csv"
}

# holds PORT: "ACKS P50 P90 MAX" of the receiver's ACK holds on PORT, in us
holds() {
	awk -v port="$1" -f "$HOLDS" "$BATS_TEST_TMPDIR/t.csv" | sort -n |
		awk '{ v[NR] = $1 } END { if (!NR) { print 0, 0, 0, 0; exit }
			printf "%d %d %d %d\n", NR, v[int(NR / 2) + 1] * 1000, v[int(NR * 0.9) + 1] * 1000, v[NR] * 1000 }'
}

# segments PORT: the sender's data segments to PORT in the capture
segments() {
	awk -F, -v p="$1" '$3 == p && $4 > 0 { n++ } END { print n + 0 }' "$BATS_TEST_TMPDIR/t.csv"
}

# the scope's record in status, as JSON: field $2 of scope seq $1 in journal $3 of netns $4
scope_field() {
	quickack status --netns "$4" --journal "$3" -f json 2> /dev/null |
		jq -r --argjson s "$1" "select(.type == \"scope\" and .seq == \$s) | .$2"
}

@test "on --port: the port's ACKs are held 2 jiffies at most, a control port's on the same route longer; no route changes; restore undoes it" {
	local before n p50 p90 max cn cp50 cp90 cmax delack jiffy
	before=$(routes)
	tk_run quickack on --port 5101 --netns "$NS-b" --journal "$JB"
	expect_status 0
	expect_stderr "now hold an ACK 2 jiffies at most"
	[ "$(scope_links)" = 1 ]
	trickle 5101 5102
	delack=$(scope_field 1 delack_max_us "$JB" "$NS-b")
	# the first value the kernel took is 2 jiffies (bpf/contract/quickack_sock.h)
	jiffy=$((delack / 2))
	read -r n p50 p90 max < <(holds 5101)
	read -r cn cp50 cp90 cmax < <(holds 5102)
	echo "# scoped: $n ACKs, holds p50 $p50 us, p90 $p90 us, max $max us; control: $cn ACKs, p50 $cp50 us, p90 $cp90 us, max $cmax us; delayed-ACK max $delack us" >&3
	# the cap: 4 jiffies. The timer is armed for 2 and fires once jiffies has
	# moved on by 2 (the timer wheel counts whole jiffies); the softirq that
	# sends the ACK runs late on a busy or emulated CPU: measured p90 8.1 to
	# 8.7 ms on the host, 9.7 to 12.0 ms in the TCG guests (HZ 250, 2
	# jiffies 8 ms). p90, not the maximum, which one late softirq sets. On
	# the host only: a guest's timing is not asserted (its suite line sets
	# QS_EMULATED), and with three guests on two cores their vCPUs starved,
	# p90 19.0 and 23.5 ms; there the comparisons with the control below say
	# what the scope changed
	if [ -z "${QS_EMULATED:-}" ]; then
		[ "$p90" -le $((4 * jiffy)) ] || { echo "# scoped p90 $p90 us > 4 jiffies ($((4 * jiffy)) us)"; false; }
	fi
	# the control's timer is the kernel's own: 40 ms (TCP_ATO_MIN), an ACK
	# sent early when a segment comes within a quarter of it, and others at
	# once when the receive window grows; how many of each depends on the
	# kernel and the CPU's pace (control p90 27 to 34 ms on the host and in
	# the 6.12 guest, 14 to 16 ms in the 6.1 guest). What the scope changed,
	# on the host: the control holds longer than the scoped port in the same
	# run, and its timer holds some ACK past the cap. Neither holds in a
	# guest, which asserts no timing: in a starved one (ci78's 6.12 beside
	# the 6.1 guest and a busy core) the control's p90 was 120 us, its ACKs
	# sent at once, the scoped port's 12.5 ms (a receiver sends quick ACKs
	# after a gap longer than its RTO, 200 ms at least, tcp_event_data_recv,
	# which a starved sender leaves); and in the 6.1 guest the control's
	# longest hold is 15 to 41 ms, under the cap's 16 once in ten runs (beside
	# the host's live tests: 15.4 ms, p50 13.2 ms)
	if [ -z "${QS_EMULATED:-}" ]; then
		[ "$cp90" -gt "$p90" ] || { echo "# control p90 $cp90 us <= scoped p90 $p90 us"; false; }
		[ "$cmax" -gt $((4 * jiffy)) ] || { echo "# control max $cmax us <= 4 jiffies"; false; }
	fi
	[ "$(routes)" = "$before" ] || { diff <(echo "$before") <(routes); false; }
	tk_run quickack restore --netns "$NS-b" --journal "$JB"
	expect_status 0
	expect_stderr "restore: 1 socket scope(s) detached and unpinned"
	[ "$(scope_links)" = 0 ]
	[ ! -e "$JB" ]
	[ -z "$(ls -A /sys/fs/bpf/bbrkit/quickack 2> /dev/null)" ]
	# restored, the port's timer is the kernel's again: some hold past the cap
	trickle 5101 5102
	read -r n p50 p90 max < <(holds 5101)
	read -r cn cp50 cp90 cmax < <(holds 5102)
	echo "# after restore: $n ACKs, p50 $p50 us, p90 $p90 us, max $max us; control: $cn ACKs, p90 $cp90 us, max $cmax us" >&3
	[ "$max" -gt $((4 * jiffy)) ] || { echo "# after restore, max $max us <= 4 jiffies"; false; }
}

@test "on --port: a connection accepted before is listed and set, IPv4 and IPv6; status counts what ss shows" {
	local est
	ip netns exec "$NS-b" timeout 30 /usr/bin/python3 -c '
import socket, sys, time
ls = [socket.create_server((a, 5111), family=f) for a, f in (("10.201.0.2", socket.AF_INET), ("fd00:201::2", socket.AF_INET6))]
cs = [l.accept()[0] for l in ls]
time.sleep(25)' &
	tk_wait_listen 5111 10 "$NS-b"
	ip netns exec "$NS-a" timeout 30 /usr/bin/python3 -c '
import socket, time
cs = [socket.create_connection((a, 5111)) for a in ("10.201.0.2", "fd00:201::2")]
time.sleep(25)' &
	tk_wait_for "[ \$(ip netns exec $NS-b ss -Htn state established '( sport = :5111 )' | wc -l) -eq 2 ]" 10
	tk_run quickack on --port 5111 --netns "$NS-b" --journal "$JB" -f json
	expect_status 0
	expect_stderr "2 existing connection(s) set, 0 refused"
	[ "$(echo "$output" | jq -r 'select(.type == "scope_conn") | .local' | sort | tr '\n' ' ')" = "10.201.0.2:5111 [fd00:201::2]:5111 " ]
	[ "$(echo "$output" | jq -r 'select(.type == "scope_conn") | .result' | sort -u)" = set ]
	est=$(ip netns exec "$NS-b" ss -Htn state established '( sport = :5111 )' | wc -l)
	[ "$(scope_field 1 set_existing "$JB" "$NS-b")" = "$est" ]
	[ "$(scope_field 1 set_new "$JB" "$NS-b")" = 0 ]
	[ "$(scope_field 1 in_force "$JB" "$NS-b")" = true ]
}

@test "on --port: a second identical scope changes nothing, the journal byte for byte; a new connection is counted once" {
	local j1
	tk_run quickack on --port 5121,5122 --netns "$NS-b" --journal "$JB"
	expect_status 0
	j1=$(cat "$JB")
	tk_run quickack on --port 5122,5121 --netns "$NS-b" --journal "$JB"
	expect_status 0
	expect_stderr "already in force (journal seq 1"
	[ "$(cat "$JB")" = "$j1" ]
	# a journal of scopes alone: the scopes' line, no routes' line
	tk_run quickack status --netns "$NS-b" --journal "$JB"
	expect_status 0
	expect_stderr "1 socket scope(s), 1 in force"
	if [[ $stderr == *"route(s) saved"* ]]; then tk_dump "a routes' line for a journal of scopes alone"; false; fi
	[ "$(scope_links)" = 1 ]
	trickle 5121
	[ "$(scope_field 1 set_new "$JB" "$NS-b")" = 1 ]
	[ "$(scope_field 1 set_existing "$JB" "$NS-b")" = 0 ]
}

@test "one journal, routes and scopes: status lists both, restore undoes both, the routes exactly" {
	local before
	before=$(routes)
	tk_run quickack on 10.201.0.0/24 --netns "$NS-b" --journal "$JB"
	expect_status 0
	tk_run quickack on --port 5181 --netns "$NS-b" --journal "$JB"
	expect_status 0
	tk_run quickack status --netns "$NS-b" --journal "$JB" -f json
	expect_status 0
	[ "$(echo "$output" | jq -r '.type' | sort | tr '\n' ' ')" = "saved_route scope " ]
	tk_run quickack restore --netns "$NS-b" --journal "$JB"
	expect_status 0
	expect_stderr "restore: 1 socket scope(s) detached and unpinned"
	expect_stderr "restore: 1 route(s) restored and verified"
	[ "$(routes)" = "$before" ] || { diff <(echo "$before") <(routes); false; }
	[ "$(scope_links)" = 0 ]
	[ ! -e "$JB" ]
}

@test "on --port --cgroup: only the connections of the cgroup's processes" {
	local root pid
	root=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
	CG=$root/bbrkit-test-$BATS_ROOT_PID
	mkdir "$CG"
	tk_run quickack on --port 5131,5132 --cgroup "$CG" --netns "$NS-b" --journal "$JB"
	expect_status 0
	expect_stderr "cgroup $CG"
	# the receiver of 5131 in the cgroup from its start (its listening socket
	# gives the accepted one its cgroup), 5132's outside it
	sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$CG" \
		ip netns exec "$NS-b" timeout 60 /usr/bin/python3 "$TRICKLE" recv "$ADDR" 5131 "$TOTAL" 50 > /dev/null &
	pid=$!
	tk_wait_listen 5131 10 "$NS-b"
	trickle 5132
	ip netns exec "$NS-a" timeout 60 /usr/bin/python3 "$TRICKLE" send "$ADDR" 5131 "$CHUNKS" "$CHUNK_BYTES" 2 50
	wait "$pid"
	[ "$(scope_field 1 set_new "$JB" "$NS-b")" = 1 ]
	[ "$(scope_field 1 cgroup "$JB" "$NS-b")" = "$CG" ]
	# the same cgroup spelt another way is the same scope
	tk_run quickack on --port 5132,5131 --cgroup "$CG/" --netns "$NS-b" --journal "$JB"
	expect_status 0
	expect_stderr "already in force (journal seq 1"
}

@test "nodelay --dport: the sender's writes to the port each leave at once, a control port's wait for ACKs (Nagle); restore undoes it" {
	local s c
	tk_run quickack nodelay --dport 5141 --netns "$NS-a" --journal "$JA"
	expect_status 0
	expect_stderr "now send with TCP_NODELAY"
	trickle nagle 5141 5142
	s=$(segments 5141)
	c=$(segments 5142)
	echo "# $CHUNKS writes: $s segments with the scope, $c without" >&3
	# with TCP_NODELAY each write leaves as its own segment, unless the one
	# before has not left yet when it comes (a slow CPU: 298 of 300 in a
	# TCG guest; a retransmission adds one: 301 on the host), so 90% at
	# least; with Nagle a write waits while data is unACKed, and the
	# receiver holds its ACKs 20 ms or more: writes 2 ms apart share
	# segments (measured: 54 to 83 segments for 300 writes)
	[ $((s * 10)) -ge $((CHUNKS * 9)) ] || { echo "# $s segments for $CHUNKS writes with TCP_NODELAY"; false; }
	[ $((c * 2)) -le "$CHUNKS" ] || { echo "# $c segments for $CHUNKS writes with Nagle"; false; }
	[ "$(scope_field 1 set_new "$JA" "$NS-a")" = 1 ]
	tk_run quickack restore --netns "$NS-a" --journal "$JA"
	expect_status 0
	trickle nagle 5141
	s=$(segments 5141)
	[ $((s * 2)) -le "$CHUNKS" ] || { echo "# after restore: $s segments for $CHUNKS writes"; false; }
}

@test "SIGKILL after the journal, before the attach: nothing attached; status says so, restore drops the record" {
	# quickack's first bpf() call (the programs' load) returns 3 s late
	strace -f -qq -o /dev/null -e trace=bpf -e inject=bpf:delay_exit=3000000:when=1 \
		"$BIN/quickack" on --port 5151 --netns "$NS-b" --journal "$JB" 2> /dev/null &
	tk_wait_for "grep -q '^scope seq=1 ' '$JB' 2> /dev/null" 10
	pkill -9 -f "^$BIN/quickack on --port 5151"
	wait || true
	[ "$(scope_links)" = 0 ]
	[ "$(scope_field 1 in_force "$JB" "$NS-b")" = false ]
	tk_run quickack restore --netns "$NS-b" --journal "$JB"
	expect_status 0
	[ ! -e "$JB" ]
	[ -z "$(ls -A /sys/fs/bpf/bbrkit/quickack 2> /dev/null)" ]
}

@test "restore that cannot unpin a scope: says which and why, exit 1, the scope kept in the journal; the next restore ends it" {
	local pin
	tk_run quickack on --port 5191 --netns "$NS-b" --journal "$JB"
	expect_status 0
	pin=$(scope_field 1 pin "$JB" "$NS-b")
	# a directory of its own in the pin's: bpffs refuses to remove a directory not empty
	mkdir "$pin/in-the-way"
	tk_run quickack restore --netns "$NS-b" --journal "$JB"
	expect_status 1
	expect_stderr "cannot unpin $pin: Directory not empty; the scope stays in the journal"
	expect_stderr "restore: 0 socket scope(s) detached and unpinned, 1 not: they stay in the journal"
	expect_stderr "journal $JB keeps the socket scopes not unpinned"
	grep -q '^scope seq=1 ' "$JB"
	rmdir "$pin/in-the-way"
	tk_run quickack restore --netns "$NS-b" --journal "$JB"
	expect_status 0
	[ ! -e "$JB" ]
	[ ! -e "$pin" ]
	[ "$(scope_links)" = 0 ]
}

# the number of the first bpf() call quickack makes after pinning its link,
# counted in one run under strace (libbpf's calls vary by version)
bpf_call_after_pin() {
	local j=$BATS_TEST_TMPDIR/count.journal log=$BATS_TEST_TMPDIR/bpf.strace
	strace -f -qq -o "$log" -e trace=bpf "$BIN/quickack" on --port 5169 --netns "$NS-b" --journal "$j" 2> /dev/null
	quickack restore --netns "$NS-b" --journal "$j" 2> /dev/null
	grep -n 'BPF_OBJ_PIN.*/link"' "$log" | cut -d: -f1 | awk '{ print $1 + 1 }'
}

@test "SIGKILL once the link is pinned: the scope is whole and in force; restore unpins it" {
	local n
	n=$(bpf_call_after_pin)
	[ -n "$n" ]
	# the bpf() call after the link's pin (the iterator's) returns 3 s late
	strace -f -qq -o /dev/null -e trace=bpf -e inject=bpf:delay_exit=3000000:when="$n" \
		"$BIN/quickack" on --port 5161 --netns "$NS-b" --journal "$JB" 2> /dev/null &
	tk_wait_for "[ -n \"\$(ls /sys/fs/bpf/bbrkit/quickack/*/link 2> /dev/null)\" ]" 10
	pkill -9 -f "^$BIN/quickack on --port 5161"
	wait || true
	[ "$(scope_links)" = 1 ]
	[ "$(scope_field 1 in_force "$JB" "$NS-b")" = true ]
	trickle 5161
	[ "$(scope_field 1 set_new "$JB" "$NS-b")" = 1 ]
	tk_run quickack restore --netns "$NS-b" --journal "$JB"
	expect_status 0
	[ "$(scope_links)" = 0 ]
}

@test "bad input: a port out of range, a missing cgroup, a cgroup v1 directory, a /sys of its own: one line, its exit code, nothing attached or journaled" {
	tk_run quickack on --port 70000 --netns "$NS-b" --journal "$JB"
	expect_status 2
	expect_one_line_stderr
	expect_stderr "port '70000' is out of range (1 to 65535)"
	tk_run quickack nodelay --dport 0 --netns "$NS-a" --journal "$JA"
	expect_status 2
	tk_run quickack on --port 5171 --cgroup /sys/fs/cgroup/no-such-group-$$ --netns "$NS-b" --journal "$JB"
	expect_status 5
	expect_one_line_stderr
	expect_stderr "no such cgroup directory; nothing was attached"
	tk_run quickack on --port 5171 --cgroup /proc --netns "$NS-b" --journal "$JB"
	expect_status 5
	expect_one_line_stderr
	expect_stderr "not a cgroup v2 directory"
	# ip netns exec gives quickack a /sys of its own: no cgroup, no bpffs of the host's
	tk_run ip netns exec "$NS-b" "$BIN/quickack" on --port 5171 --journal "$JB"
	expect_status 4
	expect_one_line_stderr
	expect_stderr "(ip netns exec gives one, with a /sys of its own), where a pin would go with it: run it from the host's, with --netns NS; nothing was attached"
	tk_run quickack on --port 5171 10.0.0.0/8 --netns "$NS-b" --journal "$JB"
	expect_status 2
	tk_run quickack on --port 5171 --dev veth1 --netns "$NS-b" --journal "$JB"
	expect_status 2
	[ ! -e "$JB" ]
	[ ! -e "$JA" ]
	[ "$(scope_links)" = 0 ]
}
