#!/usr/bin/env bats
# bbrpcap: the command line, every input format (real captures made by
# tcpdump, dumpcap and bbrpcap between namespaces, in tests/fixtures/pcap),
# and damaged captures.

load helpers
load bbrpcap_helpers

teardown() {
	tk_cleanup
}

@test "bbrpcap --help explains the commands, units and exit codes" {
	tk_run bbrpcap --help
	expect_status 0
	expect_output "throughput FILE"
	expect_output "--bin-ms MS"
	expect_output "bit/s (_bps"
	expect_output "5 damaged capture"
}

@test "bbrpcap --version prints the version" {
	tk_run bbrpcap --version
	expect_status 0
	[[ $output =~ ^bbrpcap\ [0-9a-g.-]+ ]] || { tk_dump "no version"; false; }
}

@test "bbrpcap without a command is a usage error" {
	tk_run bbrpcap
	expect_status 2
	expect_one_line_stderr
	expect_stderr "bbrpcap: missing a command (capture, flows, throughput, acks, join); see --help"
}

@test "bbrpcap names an unknown command" {
	tk_run bbrpcap frobnicate x.pcap
	expect_status 2
	expect_one_line_stderr
	expect_stderr "bbrpcap: 'frobnicate' is not a command"
}

@test "bbrpcap throughput rejects --bin-ms 5x" {
	tk_run bbrpcap throughput --bin-ms 5x "$PC_FIX/eth-us.pcap"
	expect_status 2
	expect_one_line_stderr
	expect_stderr "bbrpcap: --bin-ms: '5x' is not a number"
}

@test "bbrpcap throughput rejects a bin that is not whole microseconds" {
	tk_run bbrpcap throughput --bin-ms 0.0015 "$PC_FIX/eth-us.pcap"
	expect_status 2
	expect_stderr "bbrpcap: --bin-ms: 0.0015 is not a whole number of microseconds"
}

@test "bbrpcap flows rejects an option of another command" {
	tk_run bbrpcap flows --bin-ms 10 "$PC_FIX/eth-us.pcap"
	expect_status 2
	expect_one_line_stderr
	expect_stderr "bbrpcap: --bin-ms: not an option of \`bbrpcap flows\` (only of throughput)"
}

@test "bbrpcap rejects a malformed --flow" {
	tk_run bbrpcap flows --flow 10.0.0.1 "$PC_FIX/eth-us.pcap"
	expect_status 2
	expect_one_line_stderr
	expect_stderr "bbrpcap: --flow: '10.0.0.1' is not an endpoint (ADDR:PORT, [ADDR6]:PORT, :PORT or ADDR:*)"
}

@test "bbrpcap throughput rejects an even --dip-window" {
	tk_run bbrpcap throughput --dip-window 20 "$PC_FIX/eth-us.pcap"
	expect_status 2
	expect_stderr "bbrpcap: --dip-window: 20 is even; the window is centred, so it needs an odd count"
}

@test "bbrpcap acks rejects an unknown --side" {
	tk_run bbrpcap acks --side middle "$PC_FIX/eth-us.pcap"
	expect_status 2
	expect_one_line_stderr
	expect_stderr "--side"
}

@test "bbrpcap flows on a missing file fails with the reason" {
	tk_run bbrpcap flows "$BATS_TEST_TMPDIR/none.pcap"
	expect_status 1
	expect_one_line_stderr
	expect_stderr "none.pcap: cannot open: No such file or directory"
}

@test "bbrpcap flows with two files is a usage error" {
	tk_run bbrpcap flows "$PC_FIX/eth-us.pcap" "$PC_FIX/eth-ns.pcap"
	expect_status 2
	expect_stderr "bbrpcap: flows: unexpected argument"
}

# --- every input format agrees with tshark, flow by flow, direction by direction ---

# for each flow bbrpcap lists: packets and wire bytes both ways equal tshark's
check_against_tshark() {
	local f=$PC_FIX/$1 csv=$BATS_TEST_TMPDIR/flows.csv n=0
	bbrpcap flows --format csv "$f" > "$csv"
	while IFS=, read -r id a b _ _ pab bab _ _ _ _ _ _ pba bba _; do
		[ "$id" = flow ] && continue
		[ "$id" = file ] && break
		local pa=${a##*:} pb=${b##*:}
		[ "$(pc_tshark_dir "$f" "$pa" "$pb")" = "$pab $bab" ] || { echo "# flow $id A>B: tshark $(pc_tshark_dir "$f" "$pa" "$pb"), bbrpcap $pab $bab"; return 1; }
		[ "$(pc_tshark_dir "$f" "$pb" "$pa")" = "$pba $bba" ] || { echo "# flow $id B>A: tshark $(pc_tshark_dir "$f" "$pb" "$pa"), bbrpcap $pba $bba"; return 1; }
		n=$((n + 1))
	done < "$csv"
	[ "$n" -ge 2 ] || { echo "# only $n flows in $1"; return 1; }
	# and every frame was TCP, none cut or malformed
	grep -q "^$f,\([0-9]*\),\1,0,0,0," "$csv" || { echo "# not all frames decoded:"; tail -1 "$csv"; return 1; }
}

@test "Ethernet pcap (us): flows agree with tshark" {
	requires tshark
	check_against_tshark eth-us.pcap
}

@test "Ethernet pcap (ns timestamps): flows agree with tshark" {
	requires tshark
	check_against_tshark eth-ns.pcap
}

@test "Ethernet pcap over IPv6: flows agree with tshark" {
	requires tshark
	check_against_tshark eth-ipv6.pcap
}

@test "Linux cooked SLL pcap: flows agree with tshark" {
	requires tshark
	check_against_tshark sll.pcap
}

@test "Linux cooked SLL2 pcap: flows agree with tshark" {
	requires tshark
	check_against_tshark sll2.pcap
}

@test "VLAN-tagged Ethernet pcap: flows agree with tshark" {
	requires tshark
	tshark -r "$PC_FIX/vlan.pcap" -c 1 -T fields -e vlan.id 2>/dev/null | grep -qx 100
	check_against_tshark vlan.pcap
}

@test "raw IP pcap: flows agree with tshark" {
	requires tshark
	check_against_tshark raw.pcap
}

@test "pcapng from dumpcap: flows agree with tshark" {
	requires tshark
	check_against_tshark eth.pcapng
}

@test "pcapng written by bbrpcap capture (SLL2): flows agree with tshark" {
	requires tshark
	check_against_tshark sll2-bbrpcap.pcapng
}

@test "full frames with TSO super-segments: flows agree with tshark" {
	requires tshark
	# frames longer than the MTU: the sender's TSO
	[ "$(tshark -r "$PC_FIX/eth-full.pcap" -Y 'frame.len > 1514' 2>/dev/null | wc -l)" -gt 0 ]
	check_against_tshark eth-full.pcap
}

@test "bbrpcap reads a capture from stdin" {
	bbrpcap flows --format csv "$PC_FIX/sll2.pcap" > "$BATS_TEST_TMPDIR/file.csv"
	tk_run bash -c "bbrpcap flows --format csv - < '$PC_FIX/sll2.pcap'"
	expect_status 0
	[ "$(printf '%s\n' "$output" | sed 's|^-,|F,|' | head -3)" = "$(sed "s|^$PC_FIX/sll2.pcap,|F,|" "$BATS_TEST_TMPDIR/file.csv" | head -3)" ]
}

@test "bbrpcap --reader libpcap gives the same flows as the mmap reader" {
	for f in eth.pcapng vlan.pcap raw.pcap; do
		bbrpcap flows --format csv "$PC_FIX/$f" > "$BATS_TEST_TMPDIR/m.csv"
		bbrpcap flows --format csv --reader libpcap "$PC_FIX/$f" > "$BATS_TEST_TMPDIR/l.csv"
		diff "$BATS_TEST_TMPDIR/m.csv" "$BATS_TEST_TMPDIR/l.csv"
	done
}

# --- damaged captures: a clear error naming the frame or offset; what came before is analysed ---

@test "a truncated pcap: error names the frame and offset, frames before it are analysed" {
	requires tshark
	local f=$BATS_TEST_TMPDIR/cut.pcap off
	off=$(pc_pcap_offset "$PC_FIX/eth-us.pcap" 40)
	head -c $((off + 30)) "$PC_FIX/eth-us.pcap" > "$f"
	tk_run bbrpcap flows --format csv "$f"
	expect_status 5
	expect_one_line_stderr
	expect_stderr "cut.pcap: frame 40 at byte offset $off: truncated record ("
	expect_stderr "the 39 frames before it were analysed"
	# the 39 frames tshark reads before the cut are all counted
	[ "$(tshark -r "$f" 2>/dev/null | wc -l)" -eq 39 ]
	printf '%s\n' "$output" | grep -q "^$f,39,39,0,0,0,"
	[ "$(printf '%s\n' "$output" | awk -F, '$1 ~ /^[0-9]+$/ { n += $6 + $14 } END { print n }')" -eq 39 ]
}

@test "a pcap cut inside a record header names the frame and offset" {
	local f=$BATS_TEST_TMPDIR/cut.pcap off
	off=$(pc_pcap_offset "$PC_FIX/eth-ns.pcap" 12)
	head -c $((off + 7)) "$PC_FIX/eth-ns.pcap" > "$f"
	tk_run bbrpcap throughput --format csv "$f"
	expect_status 5
	expect_stderr "cut.pcap: frame 12 at byte offset $off: truncated record header (7 of 16 bytes); the 11 frames before it were analysed"
	[ "$(printf '%s\n' "$output" | awk -F, 'NR > 1 { n += $6 } END { print n }')" -gt 0 ]
}

@test "a truncated pcapng: error names the frame and offset" {
	local f=$BATS_TEST_TMPDIR/cut.pcapng size
	size=$(stat -c %s "$PC_FIX/eth.pcapng")
	head -c $((size - 40)) "$PC_FIX/eth.pcapng" > "$f"
	tk_run bbrpcap flows --format csv "$f"
	expect_status 5
	expect_one_line_stderr
	[[ $stderr =~ cut.pcapng:\ frame\ [0-9]+\ at\ byte\ offset\ [0-9]+:\ truncated\ block ]] || { tk_dump "no frame/offset"; false; }
	printf '%s\n' "$output" | grep -q "^$f,"
}

@test "a wrong magic number is named, with offset 0" {
	local f=$BATS_TEST_TMPDIR/magic.pcap
	cp "$PC_FIX/eth-us.pcap" "$f"
	printf 'GIF8' | dd of="$f" bs=1 conv=notrunc status=none
	tk_run bbrpcap flows "$f"
	expect_status 5
	expect_one_line_stderr
	expect_stderr "magic.pcap: byte offset 0: unknown magic number 0x47494638 (neither pcap nor pcapng)"
}

@test "a nonsense captured length names the frame and offset; frames before it are analysed" {
	local f=$BATS_TEST_TMPDIR/len.pcap off
	cp "$PC_FIX/eth-us.pcap" "$f"
	off=$(pc_pcap_offset "$f" 20)
	pc_poke32 "$f" $((off + 8)) 4000000000
	tk_run bbrpcap flows --format csv "$f"
	expect_status 5
	expect_stderr "len.pcap: frame 20 at byte offset $off: captured length 4000000000 exceeds the maximum 262144"
	printf '%s\n' "$output" | grep -q "^$f,19,19,"
}

@test "an original length below the captured length is refused" {
	local f=$BATS_TEST_TMPDIR/orig.pcap off
	cp "$PC_FIX/eth-us.pcap" "$f"
	off=$(pc_pcap_offset "$f" 3)
	pc_poke32 "$f" $((off + 12)) 10
	tk_run bbrpcap flows "$f"
	expect_status 5
	expect_stderr "orig.pcap: frame 3 at byte offset $off: original length 10 is less than captured length"
}

@test "a nonsense pcapng block length names the frame and offset" {
	local f=$BATS_TEST_TMPDIR/block.pcapng
	cp "$PC_FIX/eth.pcapng" "$f"
	# the first block after the section header and interface blocks
	local shb idb off
	shb=$(od -An -t u4 -j 4 -N4 "$f" | tr -d ' ')
	idb=$(od -An -t u4 -j $((shb + 4)) -N4 "$f" | tr -d ' ')
	off=$((shb + idb))
	pc_poke32 "$f" $((off + 4)) 3
	tk_run bbrpcap flows "$f"
	expect_status 5
	expect_stderr "block.pcapng: frame 1 at byte offset $((off + 4)): block length 3 is nonsense"
}

@test "an empty file is a damaged capture" {
	: > "$BATS_TEST_TMPDIR/empty.pcap"
	tk_run bbrpcap flows "$BATS_TEST_TMPDIR/empty.pcap"
	expect_status 5
	expect_stderr "empty.pcap: byte offset 0: file of 0 bytes is too short for a pcap or pcapng header"
}
