#!/usr/bin/env bats
# tier: check
# bbrpcap: the command line, every input format (real captures made by
# tcpdump, dumpcap and bbrpcap between namespaces, in tests/fixtures/pcap),
# and damaged captures.

load helpers
load bbrpcap_helpers

teardown() {
	tk_cleanup
}

@test "bbrpcap --help lists the commands, the units and the toolkit's exit codes" {
	tk_run bbrpcap --help
	expect_status 0
	expect_output "Commands:"
	expect_output "  throughput FILE... "
	expect_output "bit/s (_bps"
	expect_output "  5   bad input: missing, unreadable, damaged, or not what was expected"
	expect_output "  21  --strict: a record found no frame in the capture"
	expect_output "  -V, --version"
}

@test "each command's --help lists its own options, and only those" {
	tk_run bbrpcap throughput --help
	expect_status 0
	expect_output "--bin-ms MS"
	expect_output "-f, --format FMT"
	expect_output "-o, --output FILE"
	[[ $output != *"--each"* && $output != *"--snaplen"* ]] || { tk_dump "another command's options"; false; }
	tk_run bbrpcap flows --help
	[[ $output == *"--flow SPEC"* && $output != *"--bin-ms"* && $output != *"--each"* ]] || { tk_dump "flows"; false; }
	tk_run bbrpcap acks --help
	[[ $output == *"--each"* && $output == *"--side S"* && $output != *"--bin-ms"* ]] || { tk_dump "acks"; false; }
	expect_output "dup (per ACK) and dupacks (the summary's count) are the same duplicate ACKs"
	tk_run bbrpcap gaps --help
	[[ $output == *"--min-ms MS"* && $output == *"in_flight"* && $output != *"--each"* ]] || { tk_dump "gaps"; false; }
	tk_run bbrpcap capture --help
	[[ $output == *"-c, --count N"* && $output == *"-d, --duration SECONDS"* && $output != *"--reader"* ]] ||
		{ tk_dump "capture"; false; }
	tk_run bbrpcap join --help
	[[ $output == *"--max-skew-ms MS"* && $output != *"--bin-ms"* && $output == *"  21  --strict"* ]] ||
		{ tk_dump "join"; false; }
}

@test "bbrpcap --version prints the version" {
	tk_run bbrpcap --version
	expect_status 0
	expect_version bbrpcap
}

@test "bbrpcap -V and every command's -V print the version" {
	local cmd version
	version=$(bbrpcap --version)
	for cmd in "" capture flows throughput acks gaps join; do
		tk_run bbrpcap $cmd -V
		expect_status 0
		[ "$output" = "$version" ] || { tk_dump "bbrpcap $cmd -V"; false; }
	done
}

@test "every command refuses a bad command line the same way: one line, exit 2" {
	local cmd
	for cmd in capture flows throughput acks gaps join; do
		tk_run bbrpcap $cmd --bogus x
		expect_status 2
		expect_one_line_stderr
		expect_stderr "bbrpcap: unknown option '--bogus' (see --help)"
		tk_run bbrpcap $cmd x -o
		expect_status 2
		expect_one_line_stderr
		expect_stderr "bbrpcap: -o needs a value (see --help)"
		tk_run bbrpcap $cmd --quiet=1 x
		expect_status 2
		expect_one_line_stderr
		expect_stderr "bbrpcap: --quiet takes no value (see --help)"
	done
	# a value out of its range, in each command that has a range
	tk_run bbrpcap capture -i lo -w x.pcap -s 20
	expect_stderr "bbrpcap: -s: 20 is out of range 64..262144"
	tk_run bbrpcap throughput --dip-window 70000 x
	expect_stderr "bbrpcap: --dip-window: 70000 is out of range 3..10001"
	tk_run bbrpcap acks --mss 70000 x
	expect_stderr "bbrpcap: --mss: 70000 is out of range 1..65535"
	tk_run bbrpcap join --max-skew-ms 0 a b
	expect_stderr "bbrpcap: --max-skew-ms: 0 is out of range 0.001.."
	# flows has no number: a value not among its choices
	tk_run bbrpcap flows -f xml x
	expect_status 2
	expect_one_line_stderr
	expect_stderr "bbrpcap: -f: 'xml' is not one of table|csv|json"
}

@test "bbrpcap's own bad option is refused the same way" {
	tk_run bbrpcap --bogus flows x
	expect_status 2
	expect_one_line_stderr
	expect_stderr "bbrpcap: unknown option '--bogus' (see --help)"
}

@test "bbrpcap without a command is a usage error" {
	tk_run bbrpcap
	expect_status 2
	expect_one_line_stderr
	expect_stderr "bbrpcap: missing a command (capture, flows, throughput, acks, gaps, join); see --help"
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

@test "bbrpcap flows refuses an option of another command as unknown" {
	tk_run bbrpcap flows --bin-ms 10 "$PC_FIX/eth-us.pcap"
	expect_status 2
	expect_one_line_stderr
	expect_stderr "bbrpcap: unknown option '--bin-ms' (see --help)"
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

@test "a missing capture is bad input (5) in every analysis, and nothing is written" {
	local cmd
	for cmd in flows throughput acks; do
		tk_run bbrpcap $cmd "$BATS_TEST_TMPDIR/none.pcap"
		expect_status 5
		expect_one_line_stderr
		expect_stderr "bbrpcap: $BATS_TEST_TMPDIR/none.pcap: cannot open: No such file or directory"
		[ -z "$output" ] || { tk_dump "output for a missing file"; false; }
	done
}

@test "an unreadable capture is bad input (5), with either reader" {
	requires root
	local f=$BATS_TEST_TMPDIR/secret.pcap
	cp "$PC_FIX/eth-us.pcap" "$f"
	chmod 600 "$f"
	tk_run setpriv --reuid=65534 --regid=65534 --clear-groups bbrpcap flows "$f"
	expect_status 5
	expect_stderr "secret.pcap: cannot open: Permission denied"
	tk_run setpriv --reuid=65534 --regid=65534 --clear-groups bbrpcap flows --reader libpcap "$f"
	expect_status 5
	expect_stderr "secret.pcap:"
}

@test "stdin is read alone: \"-\" among several files is a usage error, in every analysis" {
	local cmd
	for cmd in flows throughput acks; do
		tk_run bbrpcap $cmd "$PC_FIX/eth-us.pcap" - < "$PC_FIX/eth-ns.pcap"
		expect_status 2
		expect_one_line_stderr
		expect_stderr "bbrpcap: $cmd: \"-\" (standard input) can only be read alone, not as one of 2 files"
		[ -z "$output" ]
	done
	tk_run bbrpcap join "$PC_FIX/dip-paced.jsonl" "$PC_FIX/dip-paced.pcap" -
	expect_status 2
	expect_stderr "bbrpcap: join: \"-\" (standard input) can only be read alone"
}

@test "a ring's base name is not a file: the error gives the pattern of its files" {
	local d=$BATS_TEST_TMPDIR
	cp "$PC_FIX/eth-us.pcap" "$d/push-000001.pcap"
	cp "$PC_FIX/eth-ns.pcap" "$d/push-000002.pcap"
	tk_run bbrpcap flows "$d/push.pcap"
	expect_status 5
	expect_one_line_stderr
	expect_stderr "bbrpcap: $d/push.pcap: cannot open: No such file or directory (a --ring capture? give all its files: $d/push-*.pcap)"
	tk_run bbrpcap flows -f json "$d"/push-*.pcap
	expect_status 0
	jq -e --arg f "$d/push-000001.pcap,$d/push-000002.pcap" 'select(.type == "capture") | .file == $f and .flows == 4' <<<"$output"
}

# --- every input format agrees with tshark, flow by flow, direction by direction ---

# for each flow bbrpcap lists: packets and wire bytes both ways equal tshark's
check_against_tshark() {
	local f=$PC_FIX/$1 out=$BATS_TEST_TMPDIR/flows.jsonl flows
	bbrpcap flows -f json "$f" > "$out"
	mapfile -t flows < <(jq -r 'select(.type == "flow") | "\(.flow) \(.a) \(.b) \(.pkts_ab) \(.wire_bytes_ab) \(.pkts_ba) \(.wire_bytes_ba)"' "$out")
	[ ${#flows[@]} -ge 2 ] || { echo "# only ${#flows[@]} flows in $1"; return 1; }
	pc_flows_agree "$f" "${flows[@]}"
	# and every frame was TCP, none cut or malformed
	jq -e 'select(.type == "capture") | .frames == .tcp_frames and .other_frames == 0 and
		.truncated_frames == 0 and .malformed_frames == 0' "$out" > /dev/null ||
		{ echo "# not all frames decoded:"; tail -1 "$out"; return 1; }
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
	expect_cmp "$(tshark -r "$PC_FIX/eth-full.pcap" -Y 'frame.len > 1514' 2>/dev/null | wc -l)" -gt 0 "frames over 1514 bytes tshark reads"
	check_against_tshark eth-full.pcap
}

@test "bbrpcap reads a capture from stdin" {
	bbrpcap flows --format csv "$PC_FIX/sll2.pcap" > "$BATS_TEST_TMPDIR/file.csv"
	tk_run bash -c "bbrpcap flows --format csv - < '$PC_FIX/sll2.pcap'"
	expect_status 0
	expect_equal "$(printf '%s\n' "$output" | sed 's|^-,|F,|' | head -3)" "$(sed "s|^$PC_FIX/sll2.pcap,|F,|" "$BATS_TEST_TMPDIR/file.csv" | head -3)" "the flows read from stdin, against those read from the file"
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
	tk_run bbrpcap flows -f json "$f"
	expect_status 5
	expect_one_line_stderr
	expect_stderr "cut.pcap: frame 40 at byte offset $off: truncated record ("
	expect_stderr "the 39 frames before it were analysed"
	# the 39 frames tshark reads before the cut are all counted
	expect_cmp "$(tshark -r "$f" 2>/dev/null | wc -l)" -eq 39 "frames tshark reads before the cut"
	jq -e 'select(.type == "capture") | .frames == 39 and .tcp_frames == 39 and .other_frames == 0' <<<"$output"
	expect_cmp "$(jq -s '[.[] | select(.type == "flow") | .pkts_ab + .pkts_ba] | add' <<<"$output")" -eq 39 "packets counted in the flows"
}

@test "a pcap cut inside a record header names the frame and offset" {
	local f=$BATS_TEST_TMPDIR/cut.pcap off
	off=$(pc_pcap_offset "$PC_FIX/eth-ns.pcap" 12)
	head -c $((off + 7)) "$PC_FIX/eth-ns.pcap" > "$f"
	tk_run bbrpcap throughput -f json "$f"
	expect_status 5
	expect_stderr "cut.pcap: frame 12 at byte offset $off: truncated record header (7 of 16 bytes); the 11 frames before it were analysed"
	expect_cmp "$(jq -s '[.[] | select(.type == "bin") | .frames] | add' <<<"$output")" -gt 0 "frames in the throughput bins"
}

@test "a truncated pcapng: error names the frame and offset" {
	local f=$BATS_TEST_TMPDIR/cut.pcapng size
	size=$(stat -c %s "$PC_FIX/eth.pcapng")
	head -c $((size - 40)) "$PC_FIX/eth.pcapng" > "$f"
	tk_run bbrpcap flows -f json "$f"
	expect_status 5
	expect_one_line_stderr
	[[ $stderr =~ cut.pcapng:\ frame\ [0-9]+\ at\ byte\ offset\ [0-9]+:\ truncated\ block ]] || { tk_dump "no frame/offset"; false; }
	jq -e --arg f "$f" 'select(.type == "capture") | .file == $f' <<<"$output"
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
	tk_run bbrpcap flows -f json "$f"
	expect_status 5
	expect_stderr "len.pcap: frame 20 at byte offset $off: captured length 4000000000 exceeds the maximum 262144"
	jq -e 'select(.type == "capture") | .frames == 19 and .tcp_frames == 19' <<<"$output"
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

@test "a file that is not a capture is bad input (5) in every analysis" {
	local cmd
	for cmd in flows throughput acks; do
		tk_run bbrpcap $cmd "$PC_FIX/dip-paced.jsonl"
		expect_status 5
		expect_one_line_stderr
		expect_stderr "dip-paced.jsonl: byte offset 0: unknown magic number 0x7b227479 (neither pcap nor pcapng)"
	done
}

@test "an empty file is a damaged capture" {
	: > "$BATS_TEST_TMPDIR/empty.pcap"
	tk_run bbrpcap flows "$BATS_TEST_TMPDIR/empty.pcap"
	expect_status 5
	expect_stderr "empty.pcap: byte offset 0: file of 0 bytes is too short for a pcap or pcapng header"
}

# --- the dialect: -f, -o, and what the records mean ---

@test "-f chooses the format of every analysis; without it and without a terminal, JSON lines" {
	local cmd
	for cmd in flows throughput acks; do
		tk_run bbrpcap $cmd -f csv "$PC_FIX/dip-paced.pcap"
		expect_status 0
		# one header for the file: every record type's fields (after a type
		# column when the file holds several); a strict CSV reader loads
		# every row under it
		[[ ${output%%$'\n'*} == type,flow,* || ${output%%$'\n'*} == flow,* ]] ||
			{ tk_dump "$cmd -f csv: no CSV header"; false; }
		printf '%s\n' "$output" > "$BATS_TEST_TMPDIR/out.csv"
		/usr/bin/python3 "$TK_ROOT/tests/tools/csvcheck.py" "$BATS_TEST_TMPDIR/out.csv" || { tk_dump "$cmd -f csv: not a loadable CSV"; false; }
		tk_run bbrpcap $cmd "$PC_FIX/dip-paced.pcap"
		expect_status 0
		printf '%s\n' "$output" | jq -e -s 'length > 0 and all(.[]; has("type"))' > /dev/null ||
			{ tk_dump "$cmd: not JSON lines"; false; }
		# on a terminal, a table (script gives bbrpcap one)
		requires script
		tk_on_tty "$BATS_TEST_TMPDIR/tty.txt" bbrpcap $cmd "$PC_FIX/dip-paced.pcap"
		grep -q '^flow ' "$BATS_TEST_TMPDIR/tty.txt" || { cat "$BATS_TEST_TMPDIR/tty.txt"; false; }
	done
}

@test "-o writes every analysis's records to a file, the same as on stdout" {
	local cmd f=$BATS_TEST_TMPDIR/out
	for cmd in flows throughput acks; do
		tk_run bbrpcap $cmd -f json -o "$f" "$PC_FIX/dip-paced.pcap"
		expect_status 0
		[ -z "$output" ] || { tk_dump "$cmd -o: records on stdout too"; false; }
		[ -s "$f" ]
		diff "$f" <(bbrpcap $cmd -f json "$PC_FIX/dip-paced.pcap")
	done
	tk_run bbrpcap flows -o "$BATS_TEST_TMPDIR/no/such/dir.json" "$PC_FIX/dip-paced.pcap"
	expect_status 1
	expect_stderr "dir.json: cannot create: No such file or directory"
}

@test "a --flow that matches nothing is bad input (5): one line, nothing written, in every analysis" {
	local cmd f=$BATS_TEST_TMPDIR/out.csv
	for cmd in flows throughput acks; do
		tk_run bbrpcap $cmd --flow :9 -f json "$PC_FIX/eth-us.pcap"
		expect_status 5
		expect_one_line_stderr
		expect_stderr "bbrpcap: no flow of $PC_FIX/eth-us.pcap matches --flow :9 (it holds 2 flows; \`bbrpcap flows $PC_FIX/eth-us.pcap\` lists them)"
		[ -z "$output" ] || { tk_dump "$cmd: half output"; false; }
		# not even the CSV header, nor the file
		tk_run bbrpcap $cmd --flow 7 --flow 10.9.9.9:* -f csv -o "$f" "$PC_FIX/eth-us.pcap"
		expect_status 5
		expect_stderr "matches --flow 7 or --flow 10.9.9.9:* (it holds 2 flows;"
		[ ! -e "$f" ] || { tk_dump "$cmd: $f was created"; false; }
		# acks --each writes while it reads: still nothing
		tk_run bbrpcap $cmd --each --flow :9 "$PC_FIX/eth-us.pcap"
		[ "$cmd" != acks ] || { expect_status 5; [ -z "$output" ]; }
		tk_run bbrpcap $cmd --flow 1 -f json "$PC_FIX/eth-us.pcap"
		expect_status 0
		[ -z "$stderr" ] || { tk_dump "$cmd: a warning for a flow that matches"; false; }
	done
	# several files: named as such
	tk_run bbrpcap flows --flow :9 "$PC_FIX/eth-us.pcap" "$PC_FIX/eth-ns.pcap"
	expect_status 5
	expect_stderr "bbrpcap: no flow of the 2 files matches --flow :9 (they hold 4 flows;"
}

@test "a --flow that matches nothing beside one that matches: a warning, the records of the one" {
	tk_run bbrpcap flows --flow :9 --flow 2 -f json "$PC_FIX/eth-us.pcap"
	expect_status 0
	expect_one_line_stderr
	expect_stderr "bbrpcap: warning: no flow of $PC_FIX/eth-us.pcap matches --flow :9 (the other --flow chose 1)"
	expect_equal "$(jq -s '[.[] | select(.type == "flow") | .flow]' <<<"$output" | jq -c .)" "[2]" "the flows reported"
}

@test "acks: dup per ACK is the summary's dupacks, direction by direction; advancing is the other sense" {
	local f n=0
	for f in dip-paced.pcap eth-full.pcap eth.pcapng sll2.pcap; do
		bbrpcap acks --each -f json "$PC_FIX/$f" > "$BATS_TEST_TMPDIR/acks.json"
		# each summary's dupacks is the number of its receiver's ACKs marked dup
		jq -s -r '(map(select(.type == "ack" and .dup)) | group_by(.flow, .src) | map({ key: "\(.[0].flow) \(.[0].src)", value: length }) | from_entries) as $dups
			| .[] | select(.type == "ack_summary") | "\(.dupacks) \($dups["\(.flow) \(.receiver)"] // 0)"' \
			"$BATS_TEST_TMPDIR/acks.json" > "$BATS_TEST_TMPDIR/pairs"
		[ -s "$BATS_TEST_TMPDIR/pairs" ]
		awk '$1 != $2 { print "# dupacks " $1 ", dup ACKs " $2; bad++ } END { exit bad > 0 }' "$BATS_TEST_TMPDIR/pairs"
		# a dup never advances, and some ACKs neither advance nor are dups (data, SYN, FIN)
		jq -e -s 'all(.[] | select(.type == "ack"); (.dup and .advancing) | not)' "$BATS_TEST_TMPDIR/acks.json" > /dev/null
		n=$((n + $(jq -s '[.[] | select(.type == "ack" and (.advancing | not) and (.dup | not))] | length' "$BATS_TEST_TMPDIR/acks.json")))
	done
	echo "# $n ACKs neither advancing nor dup"
	expect_cmp "$n" -gt 0 "ACKs neither advancing nor dup"
}

# the silences of capture $1 of $2 ms or more, from tshark's fields: "src t_s
# gap_us end_frame inflight_bytes" per silence and direction that had carried
# data; in flight: the highest data byte sent, less the highest ACK back
tshark_gaps() {
	tshark -r "$1" -Y tcp -T fields -o tcp.relative_sequence_numbers:TRUE -E separator=' ' \
		-e frame.number -e frame.time_relative -e ip.src -e ipv6.src -e tcp.srcport -e ip.dst -e ipv6.dst \
		-e tcp.dstport -e tcp.seq -e tcp.len -e tcp.ack -e tcp.flags.ack |
		awk -v min_us="$(($2 * 1000))" '
		{ src = $3 ":" $4; dst = $5 ":" $6; seq = $7; len = $8; ack = $9; isack = $10
		  if (have && ($2 - last) * 1e6 >= min_us - 0.5)
			for (d in sent) { split(d, e, " ")
				inflight = hi[d] - acked[d]; if (inflight < 0) inflight = 0
				printf "%s %.6f %.1f %d %d\n", e[1], last, ($2 - last) * 1e6, $1, inflight }
		  if (len > 0) { k = src " " dst; sent[k] = 1; if (seq + len > hi[k]) hi[k] = seq + len }
		  if (isack == 1) { k = dst " " src; if (ack > acked[k]) acked[k] = ack }
		  last = $2; have = 1 }' | sort
}

@test "gaps: each silence, its length and what was in flight agree with tshark's frames" {
	local f=$PC_FIX/dip-paced.pcap
	# 30 ms: this capture's silences are frame intervals (20 fps) and held ACKs
	bbrpcap gaps --min-ms 30 -f json "$f" |
		jq -r '"\(.src) \(.t_s | . * 1e6 | round / 1e6 | tostring) \(.gap_us) \(.end_frame) \(.inflight_bytes)"' |
		awk '{ printf "%s %.6f %.1f %d %d\n", $1, $2, $3, $4, $5 }' | sort > "$BATS_TEST_TMPDIR/bbrpcap"
	tshark_gaps "$f" 30 > "$BATS_TEST_TMPDIR/tshark"
	# both states are there to compare
	awk '$5 == 0 { i++ } $5 > 0 { h++ } END { print "# " i + 0 " idle, " h + 0 " with data in flight"; exit !(i && h) }' \
		"$BATS_TEST_TMPDIR/tshark" >&3
	diff "$BATS_TEST_TMPDIR/tshark" "$BATS_TEST_TMPDIR/bbrpcap"
	# the state is the bytes in flight's, in words
	jq -e -s 'length > 0 and all(.[]; (.state == "idle") == (.inflight_bytes == 0))' \
		< <(bbrpcap gaps --min-ms 30 -f json "$f") > /dev/null
}

@test "gaps: --min-ms bounds the silences reported; a longer threshold reports a subset" {
	local f=$PC_FIX/dip-paced.pcap n30 n60
	n30=$(bbrpcap gaps --min-ms 30 -f csv "$f" | tail -n +2 | wc -l)
	n60=$(bbrpcap gaps --min-ms 60 -f json "$f" | jq -s 'map(select(.gap_us >= 60000)) | length')
	expect_cmp "$n60" -eq "$(bbrpcap gaps --min-ms 60 -f csv "$f" | tail -n +2 | wc -l)" "gaps of 60 ms or more in JSON, against the CSV's rows"
	expect_cmp "$n60" -lt "$n30" "gaps of 60 ms or more, against those of 30 ms or more"
	tk_run bbrpcap gaps --min-ms 0 "$f"
	expect_status 2
	expect_one_line_stderr
}

@test "acks: a window update is not a duplicate ACK (RFC 5681), as tcptrace and tshark count" {
	requires tcptrace tshark
	local f=$PC_FIX/dip-paced.pcap
	# the receiver repeats an ACK number with a new window (frames 50 and 51, 61 and 62)
	expect_cmp "$(bbrpcap acks --each -f json "$f" | jq -s '[.[] | select(.type == "ack" and (.advancing | not) and
		(.dup | not) and .data_frame != null)] | length')" -ge 2 "window updates: ACKs of data neither advancing nor dup"
	expect_cmp "$(bbrpcap acks -f json "$f" | jq -s '[.[] | select(.type == "ack_summary") | .dupacks] | add')" -eq 0 "duplicate ACKs bbrpcap counts"
	expect_cmp "$(tcptrace -l -r -n "$f" | awk '/duplicate acks:/ { n += $3 + $6 } END { print n + 0 }')" -eq 0 "duplicate ACKs tcptrace counts"
	expect_cmp "$(tshark -r "$f" -Y tcp.analysis.duplicate_ack 2>/dev/null | wc -l)" -eq 0 "duplicate ACKs tshark counts"
}

# --- join's bad input, from the fixtures (the live joins are in bbrpcap_join.bats) ---

@test "join on a capture that holds none of the trace's flows is bad input (5): one line, nothing written" {
	tk_run bbrpcap join "$PC_FIX/dip-paced.jsonl" "$PC_FIX/eth-us.pcap" -o "$BATS_TEST_TMPDIR/j.jsonl"
	expect_status 5
	expect_one_line_stderr
	expect_stderr "bbrpcap: join: $PC_FIX/eth-us.pcap holds none of the trace's flows (10.77.1.2:45258-10.77.2.2:43100), but 2 others (\`bbrpcap flows\` lists them): nothing to join"
	[ -z "$output" ]
	[ ! -e "$BATS_TEST_TMPDIR/j.jsonl" ]
	tk_run bbrpcap join "$PC_FIX/dip-paced.jsonl" "$PC_FIX/eth-us.pcap" "$PC_FIX/sll2.pcap"
	expect_status 5
	expect_stderr "bbrpcap: join: the 2 files hold none of the trace's flows"
	[ -z "$output" ]
	# a capture of no frame at all (its header only)
	head -c 24 "$PC_FIX/eth-us.pcap" > "$BATS_TEST_TMPDIR/empty.pcap"
	tk_run bbrpcap join "$PC_FIX/dip-paced.jsonl" "$BATS_TEST_TMPDIR/empty.pcap"
	expect_status 5
	expect_stderr "empty.pcap holds none of the trace's flows (10.77.1.2:45258-10.77.2.2:43100), and no other TCP flow: nothing to join"
	# the same trace and its own capture among others: joined
	tk_run bbrpcap join "$PC_FIX/dip-paced.jsonl" "$PC_FIX/eth-us.pcap" "$PC_FIX/dip-paced.pcap" -o "$BATS_TEST_TMPDIR/j.jsonl"
	expect_status 0
	[ -s "$BATS_TEST_TMPDIR/j.jsonl" ]
}

@test "join on a trace without bbrtrace records (udpdwell's output) is bad input, named" {
	tk_run bbrpcap join "$TK_ROOT/tests/fixtures/plots/dwell.jsonl" "$PC_FIX/dip-paced.pcap"
	expect_status 5
	expect_one_line_stderr
	expect_stderr "dwell.jsonl: no bbrtrace \"sample\" or \"collapse\" records (bbrtrace -f json writes them): nothing to join"
	[ -z "$output" ]
	: > "$BATS_TEST_TMPDIR/empty.jsonl"
	tk_run bbrpcap join "$BATS_TEST_TMPDIR/empty.jsonl" "$PC_FIX/dip-paced.pcap"
	expect_status 5
	expect_stderr "empty.jsonl: no bbrtrace"
}

@test "join on a missing trace or a missing or foreign capture is bad input (5), nothing written" {
	tk_run bbrpcap join "$BATS_TEST_TMPDIR/none.jsonl" "$PC_FIX/dip-paced.pcap" -o "$BATS_TEST_TMPDIR/j.jsonl"
	expect_status 5
	expect_one_line_stderr
	expect_stderr "none.jsonl: cannot open: No such file or directory"
	tk_run bbrpcap join "$PC_FIX/dip-paced.jsonl" "$BATS_TEST_TMPDIR/none.pcap" -o "$BATS_TEST_TMPDIR/j.jsonl"
	expect_status 5
	expect_one_line_stderr
	expect_stderr "none.pcap: cannot open: No such file or directory"
	tk_run bbrpcap join "$PC_FIX/dip-paced.jsonl" "$PC_FIX/dip-paced.jsonl" -o "$BATS_TEST_TMPDIR/j.jsonl"
	expect_status 5
	expect_stderr "unknown magic number"
	[ ! -e "$BATS_TEST_TMPDIR/j.jsonl" ]
}

@test "join on a trace still being written joins its complete lines, with one warning" {
	local d=$BATS_TEST_TMPDIR n=150
	pc_cut_lines "$PC_FIX/dip-paced.jsonl" $n "$d/cut.jsonl"
	tk_run bbrpcap join "$d/cut.jsonl" "$PC_FIX/dip-paced.pcap" -o "$d/cut-joined.jsonl"
	expect_status 0
	expect_stderr "bbrpcap: warning: $d/cut.jsonl: its last line is incomplete (still being written?): read the $n complete records before it"
	expect_cmp "$(printf '%s\n' "$stderr" | grep -c 'warning:')" -eq 1 "warnings on stderr"
	# the same records, joined the same, as those complete lines alone give
	head -n $n "$PC_FIX/dip-paced.jsonl" > "$d/whole.jsonl"
	bbrpcap join "$d/whole.jsonl" "$PC_FIX/dip-paced.pcap" -o "$d/whole-joined.jsonl" 2> /dev/null
	expect_cmp "$(wc -l < "$d/cut-joined.jsonl")" -eq "$n" "records joined from the cut trace"
	cmp "$d/cut-joined.jsonl" "$d/whole-joined.jsonl"
}

@test "join: a cut line before the last is still a malformed line (5), the records before it joined" {
	local d=$BATS_TEST_TMPDIR n=150
	pc_cut_lines "$PC_FIX/dip-paced.jsonl" $n "$d/mid.jsonl"
	{ echo; tail -n +$((n + 2)) "$PC_FIX/dip-paced.jsonl"; } >> "$d/mid.jsonl"
	tk_run bbrpcap join "$d/mid.jsonl" "$PC_FIX/dip-paced.pcap" -o "$d/mid-joined.jsonl"
	expect_status 5
	expect_stderr "bbrpcap: $d/mid.jsonl:$((n + 1)): not a JSON record: "
	expect_stderr "; the $n lines before it were read"
	[[ $stderr != *"incomplete"* ]] || { tk_dump "no warning of a cut last line"; false; }
	expect_cmp "$(wc -l < "$d/mid-joined.jsonl")" -eq "$n" "records joined before the damaged line"
}

@test "join on a capture given as the trace says so, and which goes first: exit 5, one line, nothing written" {
	local f kind
	for f in "$PC_FIX/dip-paced.pcap" "$PC_FIX/eth.pcapng"; do
		kind=pcap
		[[ $f == *.pcapng ]] && kind=pcapng
		tk_run bbrpcap join "$f" "$PC_FIX/dip-paced.jsonl" -o "$BATS_TEST_TMPDIR/j.jsonl"
		expect_status 5
		expect_one_line_stderr
		expect_equal "$stderr" "bbrpcap: $f looks like a packet capture ($kind), not a bbrtrace trace: join takes the trace first, then the capture (bbrpcap join TRACE.jsonl CAPTURE)"
		[ -z "$output" ]
		[ ! -e "$BATS_TEST_TMPDIR/j.jsonl" ]
	done
}

@test "join shows the first 10 collapse lines and counts the rest; -v shows every one, -q none" {
	local d=$BATS_TEST_TMPDIR
	# the fixture's one collapse, 12 times: 12 collapse records (one ACK
	# frame matches one record: the first gets it, the other 11 "no frame")
	jq -c 'if .type == "collapse" then (., ., ., ., ., ., ., ., ., ., ., .) else . end' \
		"$PC_FIX/dip-paced.jsonl" > "$d/twelve.jsonl"
	tk_run bbrpcap join "$d/twelve.jsonl" "$PC_FIX/dip-paced.pcap" -o "$d/j.jsonl"
	expect_status 0
	[ "$(grep -cE '^(no )?frame ' <<< "$output")" -eq 10 ] || { tk_dump "10 lines"; false; }
	[ "$(tail -n 1 <<< "$output")" = "... and 2 more collapses, 0 of them throttling (-v lists every one)" ] ||
		{ tk_dump "the count"; false; }
	# every collapse is in the joined records, whatever is shown
	expect_cmp "$(jq -s '[.[] | select(.type == "collapse" and has("frame"))] | length' "$d/j.jsonl")" -eq 12 "collapses in the joined records"
	tk_run bbrpcap join -v "$d/twelve.jsonl" "$PC_FIX/dip-paced.pcap" -o "$d/j.jsonl"
	[ "$(grep -cE '^(no )?frame ' <<< "$output")" -eq 12 ] && ! grep -q 'more collapses' <<< "$output" ||
		{ tk_dump "-v: 12 lines"; false; }
	tk_run bbrpcap join -q "$d/twelve.jsonl" "$PC_FIX/dip-paced.pcap" -o "$d/j.jsonl"
	expect_status 0
	[ -z "$output" ] || { tk_dump "-q: nothing"; false; }
}

@test "join shows the collapses that throttled first: one after 11 harmless ones is among the 10 lines" {
	local d=$BATS_TEST_TMPDIR
	# 11 harmless lone-segment collapses, then the fixture's delayed-ACK
	# collapse marked throttling: the one a reader acts on comes after the
	# first 10 in time, and join still shows it
	jq -c 'if .type == "collapse" then
		((range(11) as $i | . + {impact: "harmless", cause: "lone_segment"}), . + {impact: "throttling"})
		else . end' "$PC_FIX/dip-paced.jsonl" > "$d/late.jsonl"
	tk_run bbrpcap join "$d/late.jsonl" "$PC_FIX/dip-paced.pcap" -o "$d/j.jsonl"
	expect_status 0
	[ "$(grep -cE '^(no )?frame ' <<< "$output")" -eq 10 ] || { tk_dump "10 lines"; false; }
	[ "$(grep -E '^(no )?frame ' <<< "$output" | grep -c '; delayed_ack;')" -eq 1 ] || { tk_dump "the throttling one"; false; }
	# in time order: it is the last line shown, 9 harmless ones before it
	expect_cmp "$(grep -E '^(no )?frame ' <<< "$output" | tail -n 1 | grep -c '; delayed_ack;')" -eq 1 "throttling collapses on the last line shown"
	[ "$(tail -n 1 <<< "$output")" = "... and 2 more collapses, 0 of them throttling (-v lists every one)" ] ||
		{ tk_dump "the count"; false; }
}

@test "join --strict exits 21 when a collapse found no frame (the fixture pair, the capture cut short)" {
	requires tcpdump
	tcpdump -r "$PC_FIX/dip-paced.pcap" -c 100 -w "$BATS_TEST_TMPDIR/early.pcap" 2>/dev/null
	tk_run bbrpcap join --strict "$PC_FIX/dip-paced.jsonl" "$BATS_TEST_TMPDIR/early.pcap" -o "$BATS_TEST_TMPDIR/j.jsonl"
	expect_status 21
	expect_output "no frame (trace line"
	tk_run bbrpcap join --strict "$PC_FIX/dip-paced.jsonl" "$PC_FIX/dip-paced.pcap" -o "$BATS_TEST_TMPDIR/j.jsonl"
	expect_status 0
}
