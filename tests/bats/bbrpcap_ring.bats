#!/usr/bin/env bats
# bbrpcap's analyses over several capture files read as one: a lossy flow
# through a router between namespaces, captured at the sender by `bbrpcap
# capture --ring` and, independently, by `tcpdump -C/-W`. Every analysis of a
# set of files must equal the same analysis of the files merged by `mergecap
# -a` in time order, whatever order the files are given in; frame numbers are
# the merged file's; overlapping and damaged files are named; link types may
# differ between files. The losses give duplicate ACKs, counted against
# tcptrace.

load helpers
load bbrpcap_helpers

setup_file() {
	requires root netns iperf3 tcpdump jq mergecap capinfos tcptrace
	NS=pc-$BATS_ROOT_PID-rg
	tk_routed_trio "$NS"
	A=$NS-a B=$NS-b
	local r=$NS-r
	D=$BATS_FILE_TMPDIR
	# every segment on the wire as sent (tcptrace counts a duplicate ACK only
	# at the end of a segment it saw, and a GSO super-segment hides them), and
	# a router queue too short for the flow: losses, so duplicate ACKs
	ip -n "$A" link set veth0 gso_max_segs 1
	ip netns exec "$r" tc qdisc add dev rb root tbf rate 100mbit burst 20kb limit 20000
	pc_iperf_server "$B" 42040
	# tcpdump first: it may take seconds to listen, and the ring's -d runs
	# from its own start (beside booting guests, the ring's 2.5 s were
	# over before the transfer began, and it held 1 file)
	pc_tcpdump_start "$A" "$D/td.pcap" -i veth0 -s 128 -C 1 -W 100 tcp
	local td=$PC_TCPDUMP_PID
	# the ring stops in the middle of the transfer (-d 4 s of the 6 s), so
	# it holds no connection teardown: tcptrace counts a FIN that repeats
	# the ACK number as a duplicate ACK, which RFC 5681 (and bbrpcap) does
	# not; the transfer starts once the ring's first file is there
	ip netns exec "$A" bbrpcap capture -i veth0 -w "$D/ring.pcap" --ring 100 --ring-mb 1 -d 4 -f json \
		> "$D/summary.json" 2> "$D/capture.err" &
	local cap=$!
	tk_wait_for "[ -e '$D/ring-000001.pcap' ] || ! kill -0 $cap" 10
	kill -0 "$cap" && [ -e "$D/ring-000001.pcap" ] || { cat "$D/capture.err" >&2; return 1; }
	ip netns exec "$A" timeout 30 iperf3 -c 10.202.2.2 -p 42040 -t 6 -b 200M > /dev/null
	pc_tcpdump_stop "$td"
	wait "$cap"
	export A B D
}

teardown_file() {
	tk_cleanup
}

# the files, oldest first, by their first frame as capinfos reads it
time_order() {
	capinfos -T -r -S -a "$@" | sort -t "$(printf '\t')" -k2,2n -k1,1 | cut -f1
}

# the records of `bbrpcap CMD` over FILES (JSON lines), without the capture
# record's file names, which differ between a set and its merged file
records() {
	local cmd=$1
	shift
	bbrpcap $cmd -f json "$@" | jq -c 'del(.file)'
}

# every analysis of FILES equals that of MERGED, record for record
same_as_merged() {
	local merged=$1 cmd n
	shift
	for cmd in flows throughput acks "acks --each"; do
		records "$cmd" "$merged" > "$BATS_TEST_TMPDIR/merged.jsonl"
		records "$cmd" "$@" > "$BATS_TEST_TMPDIR/set.jsonl"
		n=$(wc -l < "$BATS_TEST_TMPDIR/set.jsonl")
		[ "$n" -gt 2 ] || { echo "# $cmd: only $n records"; return 1; }
		diff "$BATS_TEST_TMPDIR/merged.jsonl" "$BATS_TEST_TMPDIR/set.jsonl" > "$BATS_TEST_TMPDIR/diff" ||
			{ echo "# $cmd differs:"; head -6 "$BATS_TEST_TMPDIR/diff"; return 1; }
		echo "# $cmd: $n records alike"
	done
}

@test "the ring of bbrpcap capture: several files, and the capture summary names the last" {
	local files
	files=$(ls "$D"/ring-*.pcap | wc -l)
	echo "# $files ring files"
	expect_cmp "$files" -ge 3 "ring files"
	jq -e --argjson n "$files" '.files == $n and (.last_file | endswith("/ring-" + ("00000" + "\($n)")[-6:] + ".pcap"))' \
		"$D/summary.json"
}

@test "every analysis of the ring's files equals that of the files merged by mergecap -a" {
	mergecap -a -w "$D/ring-merged.pcapng" "$D"/ring-*.pcap
	same_as_merged "$D/ring-merged.pcapng" "$D"/ring-*.pcap
}

@test "the ring's files given newest first, or shuffled, give the same records" {
	local -a files
	mapfile -t files < <(ls "$D"/ring-*.pcap | sort -r)
	expect_equal "$(records "acks --each" "${files[@]}" | md5sum)" "$(records "acks --each" "$D"/ring-*.pcap | md5sum)" "checksum of the records, files newest first"
	mapfile -t files < <(ls "$D"/ring-*.pcap | shuf --random-source=<(yes))
	echo "# shuffled: ${files[*]##*/}"
	same_as_merged "$D/ring-merged.pcapng" "${files[@]}"
	# and the capture record lists them in the order read: oldest first
	expect_equal "$(bbrpcap flows -f json "${files[@]}" | jq -r 'select(.type == "capture") | .file')" \
		"$(ls "$D"/ring-*.pcap | paste -sd,)" "files the capture record lists"
}

@test "tcpdump -C/-W files (an independent writer), given newest first: the records of the merged file" {
	local -a files
	mapfile -t files < <(time_order "$D"/td.pcap[0-9]*)
	expect_cmp "${#files[@]}" -ge 3 "tcpdump files"
	mergecap -a -w "$D/td-merged.pcapng" "${files[@]}"
	mapfile -t files < <(printf '%s\n' "${files[@]}" | tac)
	same_as_merged "$D/td-merged.pcapng" "${files[@]}"
}

@test "frame numbers run on across the files: each ACK's frame is that frame of the merged file (tcpdump reads it)" {
	local -a files
	mapfile -t files < <(ls "$D"/ring-*.pcap | sort -r)
	pc_frame_acks "$D/ring-merged.pcapng" > "$BATS_TEST_TMPDIR/frames.txt"
	bbrpcap acks --each -f json "${files[@]}" | jq -r 'select(.type == "ack") | "\(.frame) \(.ack)"' |
		awk 'FILENAME == ARGV[1] { ack[$1] = $2; next }
			{ n++; if (ack[$1] != $2) { printf "# frame %s: ACK %s in the merged file, %s here\n", $1, ack[$1], $2; bad++ } }
			END { printf "# %d ACKs, the last at frame %d\n", n, $1; exit bad > 0 || n < 1000 }' "$BATS_TEST_TMPDIR/frames.txt" -
	# the newest file's frames are numbered past all the others' (given first, read last)
	local others
	others=$(capinfos -T -r -c "${files[@]:1}" | awk -F'\t' '{ n += $2 } END { print n }')
	expect_cmp "$(bbrpcap acks --each -f json "${files[@]}" | jq -s 'map(select(.type == "ack") | .frame) | max')" -gt "$others" "highest ACK frame number, against frames of the older files"
}

@test "two files that overlap in time: one warning line naming both, and both are read" {
	local r=$D/ring-000001.pcap t=$D/td.pcap00
	tk_run bbrpcap flows -f json "$r" "$t"
	expect_status 0
	expect_one_line_stderr
	[[ $stderr == "bbrpcap: warning: "*" starts before the last frame of "*": the files overlap in time"* ]] ||
		{ tk_dump "no overlap warning"; false; }
	[[ $stderr == *"$r"* && $stderr == *"$t"* ]] || { tk_dump "not both names"; false; }
	expect_cmp "$(jq 'select(.type == "capture") | .frames' <<<"$output")" -eq \
		$(($(capinfos -T -r -c "$r" | cut -f2) + $(capinfos -T -r -c "$t" | cut -f2))) "frames the capture record counts"
	# files one after the other: no warning
	tk_run bbrpcap flows -f json "$D"/ring-00000[12].pcap
	[ -z "$stderr" ] || { tk_dump "a warning for files that do not overlap"; false; }
}

@test "a damaged file in the set: the file, its frame and offset, the frame of the whole; what came before is written" {
	local d=$BATS_TEST_TMPDIR/cut off before n
	mkdir "$d"
	cp "$D"/ring-00000[123].pcap "$d/"
	off=$(pc_pcap_offset "$d/ring-000002.pcap" 10)
	head -c $((off + 7)) "$D/ring-000002.pcap" > "$d/ring-000002.pcap"
	before=$(capinfos -T -r -c "$d/ring-000001.pcap" | cut -f2)
	n=$((before + 10))
	tk_run bbrpcap flows -f json "$d/ring-000003.pcap" "$d/ring-000002.pcap" "$d/ring-000001.pcap"
	expect_status 5
	expect_one_line_stderr
	expect_stderr "bbrpcap: $d/ring-000002.pcap: frame 10 at byte offset $off: truncated record header (7 of 16 bytes); it is frame $n of the 3 files in time order: the $((n - 1)) before it were analysed"
	jq -e --argjson n $((n - 1)) 'select(.type == "capture") | .frames == $n' <<<"$output"
}

@test "files of different link types: each decodes its own frames, as in the merged file" {
	local -a files
	mapfile -t files < <(time_order "$D/ring-000001.pcap" "$PC_FIX/sll2.pcap" "$PC_FIX/raw.pcap")
	mergecap -a -w "$BATS_TEST_TMPDIR/mixed.pcapng" "${files[@]}"
	same_as_merged "$BATS_TEST_TMPDIR/mixed.pcapng" "$PC_FIX/raw.pcap" "$D/ring-000001.pcap" "$PC_FIX/sll2.pcap"
	bbrpcap flows -f json "$PC_FIX/raw.pcap" "$D/ring-000001.pcap" "$PC_FIX/sll2.pcap" |
		jq -e 'select(.type == "capture") | (.linktypes | split(",") | sort) == ["EN10MB", "LINUX_SLL2", "RAW"] and
			.tcp_frames == .frames and .malformed_frames == 0'
}

# "SENDER RECEIVER DUPACKS" for each direction tcptrace -l -r reports
tcptrace_dupacks() {
	tcptrace -l -r -n "$1" 2>/dev/null | awk '
		/^TCP connection [0-9]+:/ { h = 0 }
		/^\thost [a-z]+:/ { ep[++h] = $3 }
		/duplicate acks:/ { print ep[1], ep[2], $3; print ep[2], ep[1], $6 }'
}

@test "acks: dup per ACK sums to the summary's dupacks and to tcptrace's duplicate ACKs, direction by direction" {
	local out=$BATS_TEST_TMPDIR/acks.jsonl ours=$BATS_TEST_TMPDIR/ours.txt tt=$BATS_TEST_TMPDIR/tt.txt
	bbrpcap acks --each -f json "$D"/ring-*.pcap > "$out"
	# per data sender: the summary's dupacks, then the ACK records marked dup
	jq -s -r '(map(select(.type == "ack" and .dup)) | group_by(.flow, .dst) | map({ key: "\(.[0].flow) \(.[0].dst)", value: length }) | from_entries) as $dups
		| .[] | select(.type == "ack_summary") | "\(.sender) \(.receiver) \(.dupacks) \($dups["\(.flow) \(.sender)"] // 0)"' \
		"$out" > "$ours"
	cat "$ours" | sed 's/^/# bbrpcap: /'
	awk '$3 != $4 { print "# " $1 ": dupacks " $3 ", dup ACK records " $4; bad++ } END { exit bad > 0 || NR < 2 }' "$ours"
	# what the ring lost, the first thing to read when the counts differ: a
	# capture that misses data is why bbrpcap takes a duplicate's SACK as
	# proof of data outstanding
	jq -r '"# the ring: \(.received) frames received, \(.written) written, \(.kernel_drops) dropped by the kernel"' "$D/summary.json"
	tcptrace_dupacks "$D/ring-merged.pcapng" > "$tt"
	sed 's/^/# tcptrace: /' "$tt"
	# tcptrace counts a duplicate only at the end of a segment it saw (rtt.c,
	# ack_in); one in 12,638 was elsewhere in one run of 26: per data sender,
	# the duplicates whose ACK number ends no segment the capture showed
	# before them (tshark), which tcptrace cannot count
	local ends=$BATS_TEST_TMPDIR/ends.txt off=$BATS_TEST_TMPDIR/off.txt
	tshark -r "$D/ring-merged.pcapng" -Y 'tcp.len > 0' -T fields -E separator=' ' \
		-e frame.number -e ip.src -e tcp.srcport -e tcp.seq_raw -e tcp.len > "$ends" 2> /dev/null
	jq -r 'select(.type == "ack" and .dup) | "\(.frame) \(.dst) \(.ack)"' "$out" |
		awk 'FILENAME == ARGV[1] { seg[NR] = $0; n = NR; next }
			{ while (i < n) { split(seg[i + 1], s, " "); if (s[1] + 0 > $1 + 0) break
				end[s[2] ":" s[3] " " sprintf("%.0f", (s[4] + s[5]) % 4294967296)] = 1; i++ }
			  if (!(($2 " " $3) in end)) { off[$2]++; printf "# frame %s: a duplicate ACK of %s at no segment end\n", $1, $3 > "/dev/stderr" } }
			END { for (k in off) print k, off[k] }' "$ends" - > "$off"
	awk 'FILENAME == ARGV[1] { off[$1] = $2; next } FILENAME == ARGV[2] { tt[$1 " " $2] = $3; all += $3; next }
		{ n += $3; want = $3 - off[$1]; if (tt[$1 " " $2] != want) { printf "# %s -> %s: bbrpcap %s (%d at no segment end), tcptrace %s\n", $1, $2, $3, off[$1], tt[$1 " " $2]; bad++ } ; all += off[$1] }
		END { printf "# %d duplicate ACKs\n", n; exit bad > 0 || n != all || n < 10 }' "$off" "$tt" "$ours"
}
