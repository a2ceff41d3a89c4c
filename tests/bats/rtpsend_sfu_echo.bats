#!/usr/bin/env bats
# The media-server demo's two helpers, rtpsend and sfu_echo: the dialect
# (-h, -V, -v, -q, -f, -o, -d, -c), their one-line refusals, and their
# summary records in each format, from real datagrams on the loopback of a
# network namespace of their own (unshare -n: nothing is left behind).

load helpers

teardown() {
	rm -f "$BATS_TEST_TMPDIR"/*.out
	return 0
}

# SCRIPT in a network namespace of its own with lo up; rtpsend and sfu_echo
# on PATH; wait_port PORT waits until sfu_echo listens there
in_netns() {
	tk_run unshare -n bash -c '
		wait_port() {
			for i in $(seq 100); do ss -Hlun "sport = :$1" | grep -q . && return 0; sleep 0.05; done
			echo "nothing listens on $1" >&2; return 1
		}
		ip link set lo up && cd "$0" && eval "$1"' "$BATS_TEST_TMPDIR" "$1"
}

# the record keys TOOL --help lists after "Output:", space-separated
help_keys() {
	"$1" --help | awk '/^Output:/ { on = 1; next } on && !/^  / { exit }
		on { sub(/^  [a-z]+ +/, ""); sub(/^ +/, ""); gsub(/,/, ""); printf "%s%s", (n++ ? " " : ""), $0 }'
}

@test "what each tool's options say on their own and together" {
	tk_run rtpsend --rate 5
	expect_status 2; expect_one_line_stderr
	expect_stderr "rtpsend: --to: missing; where should the datagrams go? (see --help)"
	tk_run rtpsend --to 127.0.0.1:9 --rate 0
	expect_status 2; expect_one_line_stderr
	expect_stderr "rtpsend: --rate: 0 is out of range 1..2000000"
	tk_run rtpsend --to 127.0.0.1:9 --loss 101
	expect_status 2; expect_one_line_stderr
	expect_stderr "rtpsend: --loss: 101 is out of range 0..100"
	tk_run sfu_echo --rcvbuf 4096
	expect_status 2; expect_one_line_stderr
	expect_stderr "sfu_echo: --listen: missing; where should the server listen? (see --help)"
	tk_run sfu_echo --listen 127.0.0.1:9 --stall-ms 50-20
	expect_status 2; expect_one_line_stderr
	expect_stderr "sfu_echo: --stall-ms: '50-20' has MIN above MAX"
	tk_run sfu_echo --listen 127.0.0.1:9 --peek --batch 8
	expect_status 2; expect_one_line_stderr
	expect_stderr "sfu_echo: --peek: works with one datagram per read, not with --batch"
	tk_run sfu_echo --listen localhost:9
	expect_status 2; expect_one_line_stderr
	expect_stderr "sfu_echo: --listen: 'localhost' is not an IPv4 address"
}

@test "rtpsend waits for echoes a slow server sends late, and stops when they go quiet" {
	requires root
	# the server sleeps 250 ms before its 50th read, so the last echoes come
	# back 250 ms after the last send: more than a fixed 100 ms wait covered
	in_netns '
		timeout 20 sfu_echo --listen 127.0.0.1:40101 -c 50 --stall-every 50 --stall-ms 250-250 \
			--idle-exit 2 -q > rx.out &
		wait_port 40101 || exit 1
		timeout 20 rtpsend --to 127.0.0.1:40101 -c 50 -r 1000 -q > tx.out; s=$?
		wait $! || exit 1
		timeout 20 sfu_echo --listen 127.0.0.1:40102 --no-echo --idle-exit 1 -q > quiet.out &
		wait_port 40102 || exit 1
		timeout 20 rtpsend --to 127.0.0.1:40102 -c 50 -r 1000 -q > none.out || exit 1
		wait $! && exit $s'
	expect_status 0
	tx=$(cat "$BATS_TEST_TMPDIR/tx.out") rx=$(cat "$BATS_TEST_TMPDIR/rx.out")
	[ "$(jq .stalls <<< "$rx")" -eq 1 ] && [ "$(jq .echoes <<< "$tx")" -eq 50 ] || { echo "# $tx / $rx"; false; }
	# no echo at all: the sender gives up after its quiet window (0.5 s, in
	# rtpsend.c) and says 0; the bound is that window plus the 50 ms of sending,
	# with a second's slack for a loaded machine
	none=$(cat "$BATS_TEST_TMPDIR/none.out")
	jq -e '.echoes == 0 and .duration_s >= 0.5 and .duration_s < 1.6' <<< "$none" >/dev/null ||
		{ echo "# $none"; false; }
}

@test "-c counts packets: 100 sent, 100 read, echoed, in JSON lines off a terminal; -v says what runs" {
	requires root
	in_netns '
		timeout 20 sfu_echo --listen 127.0.0.1:40100 -c 100 --idle-exit 2 -v > rx.out 2> rx.err &
		wait_port 40100 || exit 1
		timeout 20 rtpsend --to 127.0.0.1:40100 -c 100 -r 1000 -v > tx.out 2> tx.err; s=$?
		wait $! && exit $s'
	expect_status 0
	rx=$(cat "$BATS_TEST_TMPDIR/rx.out") tx=$(cat "$BATS_TEST_TMPDIR/tx.out")
	[ "$(jq -r .type <<< "$tx")" = sender ] && [ "$(jq .sent <<< "$tx")" -eq 100 ] || { echo "# $tx"; false; }
	[ "$(jq -r .type <<< "$rx")" = receiver ] && [ "$(jq .packets <<< "$rx")" -eq 100 ] || { echo "# $rx"; false; }
	[ "$(jq .echoes <<< "$tx")" -eq 100 ] || { echo "# $tx"; false; }
	# the field names scripts read, in their order, units in the names
	[ "$(jq -c keys_unsorted <<< "$tx")" = \
		'["type","sent","emulated_loss","echoes","duration_s","rate_pps","send_avg_us","send_max_us","send_max_seq","cpu_user_s","cpu_sys_s"]' ] ||
		{ echo "# $tx"; false; }
	[ "$(jq -c keys_unsorted <<< "$rx")" = \
		'["type","packets","lost","reordered","jitter_ms","jitter_max_ms","wait_avg_us","wait_max_us","kwait_avg_us","kwait_max_us","kwait_max_seq","kwait_pre_avg_us","kwait_pre_max_us","kwait_pre_max_seq","stalls","reads","bad","cpu_user_s","cpu_sys_s"]' ] ||
		{ echo "# $rx"; false; }
	# without --kernel-ts there is no kernel wait: null, not 0
	expect_equal "$(jq .kwait_avg_us <<< "$rx")" null "kwait_avg_us without --kernel-ts"
	# --help lists the keys each record carries, in order
	for t in rtpsend:"$tx" sfu_echo:"$rx"; do
		[ "$(help_keys "${t%%:*}")" = "$(jq -r 'keys_unsorted[1:] | join(" ")' <<< "${t#*:}")" ] ||
			{ echo "# ${t%%:*} --help lists: $(help_keys "${t%%:*}")"; false; }
	done
	grep -qx "rtpsend: sending 100 datagrams of 200 bytes, 1000 a second" "$BATS_TEST_TMPDIR/tx.err" ||
		{ cat "$BATS_TEST_TMPDIR/tx.err"; false; }
	grep -qx "sfu_echo: listening with 1 reader thread, echoing" "$BATS_TEST_TMPDIR/rx.err" ||
		{ cat "$BATS_TEST_TMPDIR/rx.err"; false; }
}

@test "-f csv and -o FILE: the summaries under one header each, in the files, nothing on stdout" {
	requires root
	in_netns '
		timeout 20 sfu_echo --listen 127.0.0.1:40101 --idle-exit 0.5 --kernel-ts -f csv -o rx.csv &
		wait_port 40101 || exit 1
		timeout 20 rtpsend --to 127.0.0.1:40101 -c 50 -r 1000 -q -f csv -o tx.csv; s=$?
		wait $! && exit $s'
	expect_status 0
	[ -z "$output" ] || { tk_dump "stdout must be empty"; false; }
	expect_equal "$(head -1 "$BATS_TEST_TMPDIR/tx.csv")" \
		sent,emulated_loss,echoes,duration_s,rate_pps,send_avg_us,send_max_us,send_max_seq,cpu_user_s,cpu_sys_s "header of tx.csv"
	expect_cmp "$(wc -l < "$BATS_TEST_TMPDIR/tx.csv")" -eq 2 "lines in tx.csv"
	expect_equal "$(sed -n 2p "$BATS_TEST_TMPDIR/tx.csv" | cut -d, -f1)" 50 "datagrams sent, in tx.csv"
	expect_equal "$(head -1 "$BATS_TEST_TMPDIR/rx.csv" | cut -d, -f1-4)" packets,lost,reordered,jitter_ms "first columns of the rx.csv header"
	expect_equal "$(sed -n 2p "$BATS_TEST_TMPDIR/rx.csv" | cut -d, -f1)" 50 "datagrams the receiver read, in rx.csv"
	# --kernel-ts: a kernel wait in the seventh column
	[ -n "$(sed -n 2p "$BATS_TEST_TMPDIR/rx.csv" | cut -d, -f7)" ]
	rm -f "$BATS_TEST_TMPDIR"/*.csv
}

@test "-f table: the summary with its units in the headers; -f json as asked" {
	requires root
	in_netns '
		timeout 20 sfu_echo --listen 127.0.0.1:40102 -c 20 --idle-exit 2 -f table > rx.out &
		wait_port 40102 || exit 1
		timeout 20 rtpsend --to 127.0.0.1:40102 -c 20 -r 1000 -f json; s=$?
		wait $! && exit $s'
	expect_status 0
	expect_equal "$(jq -r .type <<< "$output")" sender "type of the record on stdout"
	head -1 "$BATS_TEST_TMPDIR/rx.out" | grep -q "packets    lost   reord jitter ms jit max ms wait avg us wait max us" ||
		{ cat "$BATS_TEST_TMPDIR/rx.out"; false; }
	expect_equal "$(sed -n 2p "$BATS_TEST_TMPDIR/rx.out" | awk '{ print $1 }')" 20 "packets in sfu_echo's table"
}

@test "-d takes decimals: rtpsend sends rate x duration, sfu_echo stops on time with nothing read" {
	requires root
	in_netns '
		start=$(date +%s%N)
		timeout 20 sfu_echo --listen 127.0.0.1:40103 -d 0.3 > rx.out || exit 1
		echo "sfu_echo ran $((($(date +%s%N) - start) / 1000000)) ms" >&2
		timeout 20 rtpsend --to 127.0.0.1:40103 -d 0.25 -r 200'
	expect_status 0
	[ "$(jq .sent <<< "$output")" -eq 50 ] || { tk_dump "50 datagrams in 0.25 s at 200/s"; false; }
	expect_cmp "$(jq .packets "$BATS_TEST_TMPDIR/rx.out")" -eq 0 "datagrams sfu_echo read"
	ms=$(sed -n 's/^sfu_echo ran \([0-9]*\) ms$/\1/p' <<< "$stderr")
	[ "$ms" -ge 300 ] && [ "$ms" -lt 3000 ] || { tk_dump "sfu_echo -d 0.3 ran $ms ms"; false; }
}

@test "-o where nothing can be written: exit 1 before anything is sent" {
	tk_run rtpsend --to 127.0.0.1:9 -c 1 -o /nonexistent/dir/tx.json
	expect_status 1; expect_one_line_stderr
	expect_stderr "rtpsend: cannot write /nonexistent/dir/tx.json: No such file or directory"
	tk_run sfu_echo --listen 127.0.0.1:9 -d 0.1 -o /nonexistent/dir/rx.json
	expect_status 1; expect_one_line_stderr
	expect_stderr "sfu_echo: cannot write /nonexistent/dir/rx.json: No such file or directory"
}

@test "rtpsend: no route to the server is a network failure, exit 20" {
	requires root
	in_netns 'timeout 20 rtpsend --to 192.0.2.1:9 -c 1'
	expect_status 20; expect_one_line_stderr
	expect_stderr "rtpsend: cannot open a socket to the server: Network is unreachable"
}
