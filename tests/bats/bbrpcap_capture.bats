#!/usr/bin/env bats
# bbrpcap capture: libpcap live capture between namespaces, the kernel
# filter, the snaplen, pcap and pcapng output, the ring of files, a clean
# stop on SIGINT with the kernel's drop count, and its errors.

load helpers
load bbrpcap_helpers

setup() {
	requires root netns iperf3
	NS=pc-$BATS_ROOT_PID-cap
	tk_netns_pair "$NS"
	A=$NS-a B=$NS-b
}

teardown() {
	[ -n "${CAP_PID:-}" ] && kill "$CAP_PID" 2>/dev/null
	tk_cleanup
}

# bbrpcap capture in A with ARGS, in the background; waits until it captures:
# -v says "capturing on" once the kernel holds its filter, for at most 30 s
# (after a fixed 0.5 s under load, a capture missed 66 kB of a 2 MiB flow, most
# likely its start; a short payload now prints the summary's drop counts too)
cap_start() {
	local err=$BATS_TEST_TMPDIR/capture.err
	ip netns exec "$A" bbrpcap capture -v --format json "$@" > "$BATS_TEST_TMPDIR/summary.json" \
		2> "$err" &
	CAP_PID=$!
	tk_wait_for "grep -q 'capturing on' '$err' 2> /dev/null || ! kill -0 $CAP_PID" 30
	grep -q "capturing on" "$err" && return 0
	echo "bbrpcap capture is not capturing:"
	cat "$err"
	return 1
}

# SIGINT, then the exit status of bbrpcap capture
cap_stop() {
	kill -INT "$CAP_PID"
	local rc=0
	wait "$CAP_PID" || rc=$?
	CAP_PID=
	return $rc
}

@test "capture stops cleanly on SIGINT and prints the kernel's drop count" {
	local f=$BATS_TEST_TMPDIR/c.pcap
	cap_start -i veth0 -w "$f"
	pc_iperf_server "$B" 42301
	ip netns exec "$A" iperf3 -c 10.201.0.2 -p 42301 -n 5M > /dev/null
	cap_stop
	jq -e '.type == "capture_summary" and (.kernel_drops | type == "number") and .written > 100' \
		"$BATS_TEST_TMPDIR/summary.json"
	# every frame written is in the file, whole (tshark reads it to the end)
	requires tshark
	expect_cmp "$(tshark -r "$f" 2>/dev/null | wc -l)" -eq "$(jq .written "$BATS_TEST_TMPDIR/summary.json")" "frames tshark reads, against those written"
}

@test "capture keeps only the chosen flow (the kernel filter) and only the headers (snaplen)" {
	requires tshark tcpdump
	local f=$BATS_TEST_TMPDIR/c.pcap w=$BATS_TEST_TMPDIR/wire.pcap
	# tcpdump beside it on the same device, unfiltered: the witness of what
	# went by (not iperf3's 2 MiB: its server resets the flow once the client
	# says it is done, and the sender's last 48 kB then never leave; one run in
	# five lost them on the wire, not in the capture)
	pc_tcpdump_start "$A" "$w" -i veth0 -s 96
	cap_start -i veth0 -w "$f" --flow 10.201.0.2:42302 -s 96
	pc_iperf_server "$B" 42302
	pc_iperf_server "$B" 42303
	ip netns exec "$A" iperf3 -c 10.201.0.2 -p 42302 -n 2M > /dev/null
	ip netns exec "$A" iperf3 -c 10.201.0.2 -p 42303 -n 2M > /dev/null
	tk_tcpdump_stop "$PC_TCPDUMP_PID" "$w"
	cap_stop
	jq -e '.filter == "tcp and ((tcp and host 10.201.0.2 and port 42302))" and .snaplen == 96' "$BATS_TEST_TMPDIR/summary.json"
	expect_cmp "$(tshark -r "$f" -Y 'tcp.port != 42302' 2>/dev/null | wc -l)" -eq 0 "captured frames of other flows"
	expect_cmp "$(tshark -r "$w" -Y 'tcp.port == 42303' 2>/dev/null | wc -l)" -gt 10 "frames of port 42303 on the wire"
	expect_cmp "$(tshark -r "$f" -Y 'frame.cap_len > 96' 2>/dev/null | wc -l)" -eq 0 "frames kept beyond the snaplen"
	# the chosen flow is all there: frame by frame (direction, sequence,
	# payload, full length) what tcpdump saw of it, which also shows that the
	# frames' full lengths were kept; and most of the 2 MiB sent
	local fl='tcp.port == 42302' fs='-e tcp.srcport -e tcp.seq -e tcp.len -e frame.len -e tcp.flags'
	# shellcheck disable=SC2086
	tshark -r "$f" -Y "$fl" -T fields $fs 2>/dev/null | sort > "$BATS_TEST_TMPDIR/ours.txt"
	# shellcheck disable=SC2086
	tshark -r "$w" -Y "$fl" -T fields $fs 2>/dev/null | sort > "$BATS_TEST_TMPDIR/wire.txt"
	diff "$BATS_TEST_TMPDIR/wire.txt" "$BATS_TEST_TMPDIR/ours.txt" || {
		cat "$BATS_TEST_TMPDIR/summary.json" "$BATS_TEST_TMPDIR/capture.err"
		false
	}
	local sent
	sent=$(tshark -r "$f" -Y 'tcp.dstport == 42302' -T fields -e tcp.len 2>/dev/null |
		awk '{ s += $1 } END { print s + 0 }')
	echo "# payload to 42302: $sent bytes, $(wc -l < "$BATS_TEST_TMPDIR/ours.txt") frames as on the wire"
	expect_cmp "$sent" -ge $((1024 * 1024)) "payload bytes to 42302"
	expect_cmp "$(tshark -r "$f" -Y 'frame.len > 1000' 2>/dev/null | wc -l)" -gt 10 "frames of full length over 1000"
}

@test "capture --flow with both endpoints keeps that one flow in both directions" {
	requires tshark
	local f=$BATS_TEST_TMPDIR/c.pcap
	pc_iperf_server "$B" 42304
	cap_start -i veth0 -w "$f" --flow 10.201.0.1:42305-10.201.0.2:42304
	ip netns exec "$A" iperf3 -c 10.201.0.2 -p 42304 --cport 42305 -n 2M > /dev/null
	cap_stop
	expect_cmp "$(tshark -r "$f" -Y 'tcp.srcport == 42305' 2>/dev/null | wc -l)" -gt 10 "frames from port 42305"
	expect_cmp "$(tshark -r "$f" -Y 'tcp.srcport == 42304' 2>/dev/null | wc -l)" -gt 10 "frames from port 42304"
	expect_cmp "$(tshark -r "$f" -Y 'tcp.port != 42305' 2>/dev/null | wc -l)" -eq 0 "captured frames of other flows"
}

@test "capture --pcapng writes pcapng that tshark reads, with nanosecond timestamps" {
	requires tshark
	local f=$BATS_TEST_TMPDIR/c.pcapng
	cap_start -i veth0 -w "$f" --pcapng
	pc_iperf_server "$B" 42306
	ip netns exec "$A" iperf3 -c 10.201.0.2 -p 42306 -n 2M > /dev/null
	cap_stop
	expect_equal "$(head -c 4 "$f" | od -An -t x4 | tr -d ' ')" 0a0d0d0a "first four bytes of the file"
	capinfos -t -M "$f" | grep -q "pcapng"
	capinfos -M "$f" | grep -q "nanoseconds"
	expect_cmp "$(tshark -r "$f" 2>/dev/null | wc -l)" -eq "$(jq .written "$BATS_TEST_TMPDIR/summary.json")" "frames tshark reads, against those written"
}

@test "capture --ring keeps the newest N files of at most M MB" {
	requires tshark
	local f=$BATS_TEST_TMPDIR/ring.pcap
	# whole frames (TSO super-segments of up to 64 KB): 20 MB fill many 1 MB files
	cap_start -i veth0 -w "$f" --ring 3 --ring-mb 1 -s 262144
	pc_iperf_server "$B" 42307
	ip netns exec "$A" iperf3 -c 10.201.0.2 -p 42307 -n 20M -b 1G > /dev/null
	cap_stop
	local files
	files=$(jq .files "$BATS_TEST_TMPDIR/summary.json")
	echo "# $files files written"
	expect_cmp "$files" -gt 3 "ring files written"
	expect_cmp "$(ls "$BATS_TEST_TMPDIR"/ring-*.pcap | wc -l)" -eq 3 "ring files kept"
	# the newest three, numbered in order, each within 1 MB and readable whole
	local k
	for k in $((files - 2)) $((files - 1)) "$files"; do
		local g
		g=$(printf '%s/ring-%06d.pcap' "$BATS_TEST_TMPDIR" "$k")
		[ -f "$g" ]
		expect_cmp "$(stat -c %s "$g")" -le 1048576 "bytes in a ring file"
		tshark -r "$g" > /dev/null 2>&1
	done
	[ ! -e "$(printf '%s/ring-%06d.pcap' "$BATS_TEST_TMPDIR" $((files - 3)))" ]
}

@test "capture --duration stops by itself" {
	local f=$BATS_TEST_TMPDIR/c.pcap
	tk_run timeout 10 ip netns exec "$A" bbrpcap capture -i veth0 -w "$f" --duration 0.5 --format json
	expect_status 0
	printf '%s\n' "$output" | jq -e '.duration_s >= 0.5 and .duration_s < 3'
}

@test "capture -d takes decimals, and -o writes the summary to a file" {
	local f=$BATS_TEST_TMPDIR/c.pcap s=$BATS_TEST_TMPDIR/summary.json
	tk_run timeout 10 ip netns exec "$A" bbrpcap capture -i veth0 -w "$f" -d 0.3 -f json -o "$s"
	expect_status 0
	[ -z "$output" ] || { tk_dump "the summary on stdout too"; false; }
	jq -e '.type == "capture_summary" and .duration_s >= 0.3 and .duration_s < 2' "$s"
}

@test "capture -c N stops after N packets" {
	requires tshark
	local f=$BATS_TEST_TMPDIR/c.pcap
	pc_iperf_server "$B" 42309
	cap_start -i veth0 -w "$f" -c 25
	ip netns exec "$A" iperf3 -c 10.201.0.2 -p 42309 -n 2M > /dev/null
	local i
	for ((i = 0; i < 50; i++)); do kill -0 "$CAP_PID" 2>/dev/null || break; sleep 0.1; done
	wait "$CAP_PID"
	CAP_PID=
	jq -e '.written == 25' "$BATS_TEST_TMPDIR/summary.json"
	expect_cmp "$(tshark -r "$f" 2>/dev/null | wc -l)" -eq 25 "frames tshark reads"
}

@test "capture on any with --linktype LINUX_SLL2 writes cooked frames" {
	requires tshark
	local f=$BATS_TEST_TMPDIR/c.pcap
	cap_start -i any --linktype LINUX_SLL2 -w "$f"
	pc_iperf_server "$B" 42308
	ip netns exec "$A" iperf3 -c 10.201.0.2 -p 42308 -n 1M > /dev/null
	cap_stop
	jq -e '.linktype == "LINUX_SLL2"' "$BATS_TEST_TMPDIR/summary.json"
	capinfos -E "$f" | grep -q "Linux cooked-mode capture v2"
	bbrpcap flows --format csv "$f" | grep -q ",10.201.0.2:42308,"
}

@test "capture without permission exits 3 and says why" {
	tk_run ip netns exec "$A" setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		bbrpcap capture -i veth0 -w /tmp/pc-never-written.pcap
	expect_status 3
	expect_one_line_stderr
	expect_stderr "bbrpcap: veth0: cannot capture:"
	[ ! -e /tmp/pc-never-written.pcap ]
}

@test "capture on a missing interface: no such network device (10), with the reason" {
	tk_run ip netns exec "$A" bbrpcap capture -i nosuchdev0 -w "$BATS_TEST_TMPDIR/c.pcap"
	expect_status 10
	expect_one_line_stderr
	expect_stderr "bbrpcap: nosuchdev0: cannot capture:"
}

@test "capture rejects a bad filter expression" {
	tk_run ip netns exec "$A" bbrpcap capture -i veth0 -w "$BATS_TEST_TMPDIR/c.pcap" --filter "port banana"
	expect_status 2
	expect_one_line_stderr
	expect_stderr "bbrpcap: --filter: 'tcp and (port banana)':"
}

@test "capture rejects a snaplen below 64 and a flow number" {
	tk_run bbrpcap capture -i veth0 -w x.pcap -s 20
	expect_status 2
	expect_stderr "bbrpcap: -s: 20 is out of range 64..262144"
	tk_run bbrpcap capture -i veth0 -w x.pcap --snaplen 300000
	expect_status 2
	expect_stderr "bbrpcap: --snaplen: 300000 is out of range 64..262144"
	tk_run bbrpcap capture -i veth0 -w x.pcap --flow 3
	expect_status 2
	expect_stderr "bbrpcap: --flow: a flow number means nothing to a live capture; name endpoints"
}

@test "capture needs -i and -w" {
	tk_run bbrpcap capture -w x.pcap
	expect_status 2
	expect_stderr "bbrpcap: capture: -i IFACE is required"
	tk_run bbrpcap capture -i lo
	expect_status 2
	expect_stderr "bbrpcap: capture: -w FILE is required"
}
