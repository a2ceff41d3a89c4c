#!/usr/bin/env bats
# tier: check
# upfbench's GTP-U codec against an independent implementation: frames built
# with scapy's GTP layers (Debian python3-scapy, through /usr/bin/python3),
# with and without the PDU Session Container, sequence and N-PDU numbers,
# QFIs, outer and inner IPv4/IPv6, plus malformed ones.

load helpers

SCAPY_GTPU=$BATS_TEST_DIRNAME/../fixtures/upf/scapy_gtpu.py

setup_file() {
	requires scapy
	D=$BATS_FILE_TMPDIR
	/usr/bin/python3 "$SCAPY_GTPU" build "$D/n3.pcap" "$D/expect.jsonl" >/dev/null
}

setup() {
	D=$BATS_FILE_TMPDIR
}

@test "every packet: TEID, QFI, sequence, inner addresses and lengths match scapy's dissection" {
	requires scapy
	tk_run upfbench decode --pcap-in "$D/n3.pcap" --format json
	expect_status 0
	printf '%s\n' "$output" > "$BATS_TEST_TMPDIR/decode.jsonl"
	tk_run /usr/bin/python3 "$SCAPY_GTPU" compare "$D/expect.jsonl" "$BATS_TEST_TMPDIR/decode.jsonl"
	expect_status 0
	expect_output "126 packets match scapy in "
}

@test "the comparison fails when one field differs" {
	requires scapy
	upfbench decode --pcap-in "$D/n3.pcap" --format json |
		sed '5s/"teid":[0-9]*/"teid":1/' > "$BATS_TEST_TMPDIR/decode.jsonl"
	tk_run /usr/bin/python3 "$SCAPY_GTPU" compare "$D/expect.jsonl" "$BATS_TEST_TMPDIR/decode.jsonl"
	expect_status 1
	expect_output "frame 5: teid is "
}

@test "malformed packets are counted as malformed and dropped, each with its reason" {
	requires scapy
	tk_run upfbench decode --pcap-in "$D/n3.pcap" --format csv
	expect_status 0
	[ "$(printf '%s\n' "$output" | tail -5 | cut -d, -f2 | tr '\n' ' ')" = \
		"bad_version bad_length ext_zero ext_trunc bad_inner " ] || { tk_dump "five reasons"; false; }
	tk_run upfbench run --pcap-in "$D/n3.pcap" --floor-mib 0 --verify --format json
	expect_status 0
	printf '%s\n' "$output" | jq -e '.malformed == 5 and .not_gtpu == 1 and .packets == 126 and
		.forwarded + .dropped + .malformed == .packets' >/dev/null || { tk_dump "5 malformed, 1 echo"; false; }
}

@test "per-session packet and byte counters equal scapy's per-TEID counts" {
	requires scapy
	tk_run upfbench run --pcap-in "$D/n3.pcap" --packets 1260 --design sharded --floor-mib 0 \
		--counters-out "$BATS_TEST_TMPDIR/counters.csv" --format json
	expect_status 0
	# ten passes over the capture: ten times scapy's counts
	/usr/bin/python3 "$SCAPY_GTPU" counts "$D/expect.jsonl" | tail -n +2 |
		awk -F, '{print $1 "," $2 * 10 "," $3 * 10}' | sort > "$BATS_TEST_TMPDIR/scapy.csv"
	tail -n +2 "$BATS_TEST_TMPDIR/counters.csv" | cut -d, -f1-3 | sort > "$BATS_TEST_TMPDIR/upf.csv"
	diff "$BATS_TEST_TMPDIR/scapy.csv" "$BATS_TEST_TMPDIR/upf.csv"
	expect_cmp "$(grep -c . "$BATS_TEST_TMPDIR/upf.csv")" -eq 120 "sessions in the counters"
}
