#!/usr/bin/env bats
# tier: check
# upfbench: arguments, the identity check, exact counters in every design,
# pcap out/in checked with tshark, the memory floor, huge pages, hardware
# counters, sweep CSV, rte_hash and the build without DPDK. Sizes are small:
# these tests check behaviour, `make bench` measures.

load helpers

setup() {
	T=$BATS_TEST_TMPDIR
	# the run options every test shares: small, no floor unless asked
	SMALL=(--sessions 300 --packets 20000 --floor-mib 0)
}

teardown() {
	jobs -p | xargs -r kill -9 2>/dev/null || true
	return 0
}

# the JSON record of the last run
field() { printf '%s\n' "$output" | jq -r ".$1"; }

@test "--help explains commands, designs, units and exit codes; --version prints one line" {
	tk_run upfbench --help
	expect_status 0
	expect_output "check-identity  check Mpps x cycles/packet = workers x Hz"
	expect_output "      --layout L          fat: 256-byte sessions"
	expect_output "Cycles are TSC cycles (rdtsc); the TSC rate is measured against CLOCK_MONOTONIC"
	expect_output "upfbench COMMAND --help gives that command's options"
	# the exit codes every command uses, in lib/common.h's words
	expect_output "  22  the figures fail the identity Mpps = workers x Hz / cycles"
	expect_output "  23  --verify: counters differ from what was sent"
	[[ $output != *"--presets"* ]] || { tk_dump "--presets is sweep's"; false; }
	tk_run upfbench --version
	expect_status 0
	expect_version upfbench
}

@test "each command's --help gives its own options and exit codes" {
	tk_run upfbench run --help
	expect_status 0
	expect_output "Usage: upfbench [run] [OPTIONS]"
	expect_output "      --prefetch [on|off]"
	expect_output "    before         global/fat/b1/own/4k                  the incident's design"
	expect_output "  23  --verify: counters differ from what was sent"
	[[ $output != *"--presets"* && $output != *"  22  "* ]] || { tk_dump "run's own"; false; }
	tk_run upfbench sweep --help
	expect_status 0
	expect_output "      --presets LIST      the presets to run"
	expect_output "      --hugepages [LIST]"
	expect_output "  * best           steered/split/b8p/own/thp             + huge pages"
	expect_output "    before-rte     global/fat/b1/rte_hash/4k"
	expect_output "  * inline         steered/inline/b8p/own/thp            best, inline hot part"
	expect_output "  * slot           steered/split/b8p/slot/thp"
	expect_output "    slot-unchecked steered/split/b8p/slot-unchecked/thp  slot, TEID not checked"
	[[ $output != *"--pcap-in"* && $output != *"  5   "* ]] || { tk_dump "sweep generates its traffic"; false; }
	tk_run upfbench lookup --help
	expect_output "      --tables LIST"
	expect_output "      --lookups N"
	[[ $output != *"--design"* ]] || { tk_dump "lookup has no design"; false; }
	tk_run upfbench floor --help
	expect_output "      --floor-mib N       the buffer, MiB"
	expect_output "The memory floor's default buffer here: "
	[[ $output != *"--sessions"* ]] || { tk_dump "floor has no sessions"; false; }
	tk_run upfbench decode --help
	expect_output "Usage: upfbench decode --pcap-in FILE [OPTIONS]"
	expect_output "  5   bad input: missing, unreadable"
	tk_run upfbench check-identity --help
	expect_output "  before: 16 x 3.0e9 / 6000 = 8.0 Mpps, not 0.8"
	expect_output "  after: 16 x 3.0e9 / 1100 = 43.6 Mpps, not 4.2"
	expect_output "  22  the figures fail the identity Mpps = workers x Hz / cycles"
	[[ $output != *"  23  "* ]] || { tk_dump "check-identity runs nothing"; false; }
}

@test "-V on every command prints the version" {
	local c
	for c in run sweep lookup floor decode check-identity; do
		tk_run upfbench $c -V
		expect_status 0
		expect_version upfbench
	done
}

# COMMAND OPTION-WITH-A-VALUE OUT-OF-RANGE-ARGS... OUT-OF-RANGE-MESSAGE
bad_lines() {
	local c=$1 valued=$2 message=${*: -1}
	local range=("${@:3:$#-3}")
	tk_run upfbench $c --bogus
	expect_status 2
	expect_one_line_stderr
	expect_stderr "upfbench: unknown option '--bogus' (see --help)"
	tk_run upfbench $c $valued
	expect_status 2
	expect_one_line_stderr
	expect_stderr "upfbench: $valued needs a value (see --help)"
	tk_run upfbench $c --quiet=1
	expect_status 2
	expect_one_line_stderr
	expect_stderr "upfbench: --quiet takes no value (see --help)"
	tk_run upfbench $c "${range[@]}"
	expect_status 2
	expect_one_line_stderr
	expect_stderr "upfbench: $message"
}

@test "every command refuses a bad command line the same way: one line, exit 2" {
	bad_lines run --workers --workers 65 "--workers: 65 is out of range 1..64"
	bad_lines sweep --sessions --batch 1,65 "--batch: 65 is out of range 1..64"
	bad_lines lookup --lookups --batch 0 "--batch: 0 is out of range 1..64"
	bad_lines floor --floor-mib --floor-mib 0 "--floor-mib: 0 is out of range 1..65536"
	bad_lines decode --pcap-in -f xml "-f: 'xml' is not one of table|csv|json"
	bad_lines check-identity --mpps --workers 65 "--workers: 65 is out of range 1..64"
	# an option of another command is unknown here
	tk_run upfbench run --mpps 1
	expect_status 2
	expect_stderr "upfbench: unknown option '--mpps' (see --help)"
}

@test "--batch out of range: one line naming the option, exit 2" {
	tk_run upfbench --batch 0
	expect_status 2
	expect_one_line_stderr
	expect_stderr "upfbench: --batch: 0 is out of range 1..64"
}

@test "--sessions takes k and M suffixes and rejects garbage and out-of-range counts" {
	tk_run upfbench --sessions 5x
	expect_status 2
	expect_one_line_stderr
	expect_stderr "upfbench: --sessions: '5x' is not a count (an integer, optionally with k, M or G: 2.2M)"
	tk_run upfbench --sessions 4.5M
	expect_status 2
	expect_stderr "upfbench: --sessions: 4.5M is out of range 1..4000000"
	tk_run upfbench --sessions 2.5k --packets 1k --floor-mib 0 --format json
	expect_status 0
	[ "$(field sessions)" = 2500 ] && [ "$(field packets)" = 1000 ] || { tk_dump "2.5k sessions, 1k packets"; false; }
}

@test "unknown design, option and command, and a missing value, are one line each" {
	tk_run upfbench --design ring
	expect_status 2
	expect_one_line_stderr
	expect_stderr "upfbench: --design: 'ring' is not one of global|sharded|steered"
	tk_run upfbench --frob
	expect_status 2
	expect_stderr "upfbench: unknown option '--frob' (see --help)"
	tk_run upfbench frobnicate
	expect_status 2
	expect_stderr "upfbench: command: 'frobnicate' is not one of run|sweep|lookup|floor|decode|check-identity"
	tk_run upfbench --workers
	expect_status 2
	expect_one_line_stderr
	expect_stderr "upfbench: --workers needs a value (see --help)"
}

@test "check-identity: the incident's own figures fail it (exit 22)" {
	tk_run upfbench check-identity --format table
	expect_status 22
	expect_output "before: 16 workers x 3.00 GHz / 6000 cycles/packet = 8.0 Mpps, but 0.80 Mpps was reported: the identity FAILS"
	expect_output "after: 16 workers x 3.00 GHz / 1100 cycles/packet = 43.6 Mpps, but 4.20 Mpps was reported: the identity FAILS"
}

@test "check-identity: consistent figures hold (exit 0)" {
	tk_run upfbench check-identity --mpps 8 --cycles 6000 --workers 16 --ghz 3 --format json
	expect_status 0
	printf '%s\n' "$output" | jq -e '.holds and .implied_mpps == 8 and .ratio == 1' >/dev/null ||
		{ tk_dump "holds, 8 Mpps"; false; }
	expect_stderr "given: 16 workers x 3.00 GHz / 6000 cycles/packet = 8.0 Mpps, but 8.00 Mpps was reported: the identity holds"
}

@test "a run writes one JSON record with every key the issue asks for, and prints the identity" {
	tk_run upfbench run "${SMALL[@]}" --format json
	expect_status 0
	[ "$(printf '%s\n' "$output" | grep -c .)" -eq 1 ] || { tk_dump "one record"; false; }
	for k in design table layout batch prefetch hugepages workers sessions packets mpps \
		cycles_per_pkt tsc_hz floor_cycles floor_multiple malformed dropped \
		parse_cycles lookup_cycles rules_cycles counters_cycles identity_ratio; do
		printf '%s\n' "$output" | jq -e "has(\"$k\")" >/dev/null || { tk_dump "key $k"; false; }
	done
	[ "$(field design)" = steered ] && [ "$(field packets)" = 20000 ] || { tk_dump "defaults"; false; }
	expect_stderr "identity: "
	expect_stderr "cycles/packet = "
}

@test "counters are exact in every design, including global with 2 workers" {
	for d in global sharded steered; do
		for w in 1 2; do
			for l in "--layout fat" "--layout split" "--layout inline" "--table slot"; do
				tk_run upfbench run "${SMALL[@]}" --dist zipf --design $d --workers $w \
					$l --verify --format json
				expect_status 0
				expect_stderr "counters: exact for 300 sessions: 20000 packets"
			done
		done
	done
	tk_run upfbench run "${SMALL[@]}" --design global --workers 2 --batch 1 --no-prefetch --verify --format json
	expect_status 0
	expect_stderr "counters: exact for 300 sessions: 20000 packets"
}

@test "forged TEIDs and malformed frames are dropped and counted exactly, in every design" {
	# 6000 packets, each stream position once: every 5th bad, four kinds in turn, 300 each
	for d in "--table slot" "--layout inline" "--layout split"; do
		for w in 1 2; do
			for p in steered sharded global; do
				tk_run upfbench run --sessions 200 --packets 6000 --floor-mib 0 $d --design $p \
					--workers $w --bad-every 5 --verify -f json
				expect_status 0
				[ "$(field no_session)" = 600 ] && [ "$(field malformed)" = 600 ] &&
					[ "$(field dropped)" = "$(($(field no_pdr) + $(field far_drop) + $(field qer_drop) + 600))" ] ||
					{ tk_dump "$d, $p, $w workers: 600 no session's, 600 malformed"; false; }
				expect_stderr "counters: exact for 200 sessions: 4800 packets"
				expect_stderr "; dropped as sent: 600 forged TEIDs (no session), 600 malformed"
			done
		done
	done
}

@test "the bad packets as tshark sees them: cut frames, GTP version 2, TEIDs no session has" {
	requires tshark
	tk_run upfbench run --sessions 100 --packets 2000 --floor-mib 0 --table slot --bad-every 4 \
		--pcap-out "$T/bad.pcap" --counters-out "$T/counters.csv" --verify -f json
	expect_status 0
	[ "$(field no_session)" = 250 ] && [ "$(field malformed)" = 250 ] || { tk_dump "250 and 250"; false; }
	expect_cmp "$(tshark -r "$T/bad.pcap" -Y 'frame.len == 40' 2>/dev/null | grep -c .)" -eq 125 "cut frames tshark reads"
	expect_cmp "$(tshark -r "$T/bad.pcap" -Y gtpv2 2>/dev/null | grep -c .)" -eq 125 "GTPv2 frames tshark reads"
	# the G-PDUs whose TEID no session has: the stale and out-of-range ones
	tail -n +2 "$T/counters.csv" | cut -d, -f1 > "$T/teids"
	tshark -r "$T/bad.pcap" -Y 'gtp.message == 255' -T fields -e gtp.teid 2>/dev/null |
		while read -r teid; do echo "$((teid))"; done > "$T/sent"
	expect_cmp "$(grep -c . "$T/sent")" -eq 1750 "G-PDUs tshark reads"
	expect_cmp "$(grep -cvxFf "$T/teids" "$T/sent")" -eq 250 "G-PDUs whose TEID no session has"
}

@test "--teid-check off: a stale TEID is charged to its slot's session, and --verify says so (exit 23)" {
	tk_run upfbench run --sessions 200 --packets 6000 --floor-mib 0 --preset slot-unchecked \
		--bad-every 5 --verify -f json
	expect_status 23
	# the slots beyond the pool are still no session's: a bound, not the check
	[ "$(field no_session)" = 300 ] && [ "$(field teid_check)" = false ] || { tk_dump "300 out of range"; false; }
	expect_stderr "upfbench: counters are not exact: session TEID 0x"
	tk_run upfbench run --sessions 200 --packets 6000 --floor-mib 0 --preset slot --verify -f json
	expect_status 0
	[ "$(field label)" = slot ] && [ "$(field table)" = slot ] && [ "$(field teid_check)" = true ] &&
		[ "$(field table_bytes)" = 0 ] || { tk_dump "slot: no table"; false; }
}

@test "the slot table and the inline layout: what cannot run is refused, one line, exit 2" {
	tk_run upfbench run "${SMALL[@]}" --table slot --layout inline
	expect_status 2
	expect_one_line_stderr
	expect_stderr "upfbench: --table slot: the TEID names a hot line of the split layout (not --layout fat or inline)"
	tk_run upfbench run "${SMALL[@]}" --table rte_hash --layout inline
	expect_status 2
	expect_stderr "upfbench: --layout inline: the hot lines are the buckets of the project's own table (--table own)"
	tk_run upfbench run --pcap-in /dev/null --table slot --floor-mib 0
	expect_status 2
	expect_stderr "upfbench: --table slot: a capture's TEIDs were not given out by this UPF (generated traffic only)"
	tk_run upfbench run --pcap-in /dev/null --bad-every 3 --floor-mib 0
	expect_status 2
	expect_stderr "upfbench: --pcap-in: the capture is the traffic; --dist, --pkt-size, --outer and --bad-every do not apply"
	tk_run upfbench lookup --tables own,slot
	expect_status 2
	expect_stderr "upfbench: --tables: slot is no table to look up (the TEID is the index)"
	tk_run upfbench run "${SMALL[@]}" --teid-check maybe
	expect_status 2
	expect_stderr "upfbench: --teid-check: 'maybe' is not one of off|on"
}

@test "hardware counters are detected: n/a with the reason where perf_event_open has none" {
	tk_run upfbench run "${SMALL[@]}" --format json
	expect_status 0
	if [ "$(field llc_miss_per_pkt)" = null ]; then
		expect_stderr "LLC and dTLB misses per packet: n/a (perf_event_open refused the"
		tk_run upfbench run "${SMALL[@]}" --format table
		expect_output " n/a      n/a"
	else
		expect_stderr "LLC misses per packet "
	fi
}

@test "--hugepages reports the THP mode and the AnonHugePages obtained" {
	mode=$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/enabled)
	tk_run upfbench run --sessions 50k --packets 10k --floor-mib 0 --hugepages --format json
	expect_status 0
	kib=$(field hugepages_kib)
	expect_stderr "huge pages: asked (THP mode $mode); obtained $kib KiB AnonHugePages for sessions and table"
	[ "$(field hugepages)" = true ] || { tk_dump "hugepages true"; false; }
	if [ "$mode" = never ]; then [ "$kib" -eq 0 ]; fi
	tk_run upfbench run --sessions 50k --packets 10k --floor-mib 0 --format json
	[ "$(field hugepages_kib)" -eq 0 ] || { tk_dump "no THP when not asked (MADV_NOHUGEPAGE)"; false; }
}

@test "the memory floor is measured in the same run and each run is a multiple of it" {
	tk_run upfbench run --sessions 300 --packets 20000 --floor-mib 32 --format json
	expect_status 0
	printf '%s\n' "$output" | jq -e '.floor_cycles > 0 and .floor_serial_cycles >= .floor_cycles and
		((.floor_multiple / (.cycles_per_pkt / .floor_cycles) - 1) | fabs) < 0.01' >/dev/null ||
		{ tk_dump "floor fields consistent"; false; }
	expect_stderr "x the memory floor ("
	tk_run upfbench floor --floor-mib 32 --format json
	expect_status 0
	printf '%s\n' "$output" | jq -e '.buffer_mib == 32 and .floor_serial_cycles > 0 and .floor_chains >= 1' >/dev/null ||
		{ tk_dump "floor record"; false; }
}

# the per-TEID packets and bytes tshark finds in $T/n3.pcap equal $T/counters.csv
tshark_counts_equal() {
	n=$(tshark -r "$T/n3.pcap" -Y gtp 2>/dev/null | grep -c .)
	[ "$n" -eq 3000 ] || { echo "# tshark sees $n GTP packets"; false; }
	bad=$(tshark -r "$T/n3.pcap" -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE \
		-o tcp.check_checksum:TRUE -Y 'ip.checksum.status == 0 || udp.checksum.status == 0 ||
		tcp.checksum.status == 0 || _ws.malformed || _ws.expert.severity >= "warning"' 2>/dev/null | grep -c . || true)
	[ "$bad" -eq 0 ] || { echo "# $bad frames with warnings or bad checksums"; false; }
	# T-PDU bytes per TEID as tshark dissects them: the inner IPv4 length, or IPv6 payload + 40
	tshark -r "$T/n3.pcap" -Y gtp -T fields -E separator='|' -e gtp.teid -e ip.len -e ipv6.plen \
		2>/dev/null | while IFS='|' read -r teid iplen plen; do
		if [[ $iplen == *,* ]]; then len=${iplen#*,}; else len=$((plen + 40)); fi
		echo "$((teid)) $len"
	done | awk '{p[$1]++; b[$1]+=$2} END {for (t in p) print t "," p[t] "," b[t]}' | sort > "$T/tshark.csv"
	tail -n +2 "$T/counters.csv" | cut -d, -f1-3 | sort > "$T/upfbench.csv"
	diff "$T/tshark.csv" "$T/upfbench.csv"
	expect_cmp "$(grep -c . "$T/upfbench.csv")" -eq 40 "sessions in the counters"
}

@test "--pcap-out opens cleanly in tshark, and tshark's per-TEID counts equal upfbench's counters" {
	requires tshark
	# hashed TEIDs, then the slot-encoded ones this UPF gives out
	for table in own slot; do
		tk_run upfbench run --sessions 40 --packets 3000 --floor-mib 0 --format json --table $table \
			--pcap-out "$T/n3.pcap" --counters-out "$T/counters.csv" --verify
		expect_status 0
		tshark_counts_equal
	done
}

@test "--pcap-in replays a capture: the same per-session counters as the run that wrote it" {
	tk_run upfbench run --sessions 60 --packets 4000 --floor-mib 0 --format json \
		--pcap-out "$T/n3.pcap" --counters-out "$T/gen.csv"
	expect_status 0
	tk_run upfbench run --pcap-in "$T/n3.pcap" --design global --workers 2 --floor-mib 0 \
		--format json --counters-out "$T/replay.csv" --verify
	expect_status 0
	expect_stderr "counters: exact for 60 sessions: 4000 packets"
	[ "$(field dist)" = pcap ] && [ "$(field packets)" = 4000 ] || { tk_dump "replayed 4000"; false; }
	# the replay forwards everything (rules that match any packet); counts are what matter
	diff <(tail -n +2 "$T/gen.csv" | cut -d, -f1-3 | sort) <(tail -n +2 "$T/replay.csv" | cut -d, -f1-3 | sort)
}

@test "a --pcap-in that is not a capture is bad data: one line, exit 5" {
	echo "not a capture" > "$T/junk.pcap"
	tk_run upfbench run --pcap-in "$T/junk.pcap" --floor-mib 0
	expect_status 5
	expect_one_line_stderr
	expect_stderr "upfbench: --pcap-in: cannot read $T/junk.pcap: "
	tk_run upfbench run --pcap-in "$T/junk.pcap" --sessions 10
	expect_status 2
	expect_stderr "upfbench: --sessions: not with --pcap-in (the capture's TEIDs are the sessions)"
}

@test "sweep writes CSV with the documented columns, one row per session count and design" {
	tk_run upfbench sweep --sessions 1000,2k --presets before,best --packets 20000 --floor-mib 16 -f csv
	expect_status 0
	header=$(printf '%s\n' "$output" | head -1)
	documented=$(sed -n 's/^    \(label,design,.*\)$/\1/p' "$TK_ROOT/upf/README.md")
	[ -n "$documented" ] && [ "$header" = "$documented" ] || { tk_dump "header = README's columns"; false; }
	[ "$(printf '%s\n' "$output" | tail -n +2 | cut -d, -f1,10 | tr '\n' ' ')" = \
		"before,1000 best,1000 before,2000 best,2000 " ] || { tk_dump "4 rows"; false; }
	expect_stderr "memory floor: "
	expect_stderr "sweep 4/4: best at 2000 sessions"
}

@test "sweep takes lists of knobs instead of presets" {
	tk_run upfbench sweep --sessions 500 --design global,steered --batch 1,16 --packets 5000 --floor-mib 0 -f csv
	expect_status 0
	[ "$(printf '%s\n' "$output" | tail -n +2 | cut -d, -f1 | tr '\n' ' ')" = \
		"global/split/b1p/own/4k global/split/b16p/own/4k steered/split/b1p/own/4k steered/split/b16p/own/4k " ] ||
		{ tk_dump "the product of the lists"; false; }
	# on/off lists, given as the next argument or after '='; alone, on
	tk_run upfbench sweep --sessions 500 --hugepages on,off --prefetch=off,on --packets 5000 --floor-mib 0 -f csv
	expect_status 0
	[ "$(printf '%s\n' "$output" | tail -n +2 | cut -d, -f1 | tr '\n' ' ')" = \
		"steered/split/b32/own/thp steered/split/b32/own/4k steered/split/b32p/own/thp steered/split/b32p/own/4k " ] ||
		{ tk_dump "prefetch x hugepages, the last knob fastest"; false; }
	tk_run upfbench sweep --sessions 500 --hugepages --no-prefetch --packets 5000 --floor-mib 0 -f csv
	expect_status 0
	[ "$(printf '%s\n' "$output" | tail -n +2 | cut -d, -f1)" = steered/split/b32/own/thp ] ||
		{ tk_dump "--hugepages alone: on"; false; }
	tk_run upfbench sweep --presets best --design global
	expect_status 2
	expect_stderr "upfbench: --presets: not with lists of --design/--table/--layout/--batch/--prefetch/--hugepages/--teid-check"
	# what cannot run is left out, said once each
	tk_run upfbench sweep --sessions 500 --table own,slot --layout split,inline --teid-check on,off \
		--packets 5000 --floor-mib 0 -f csv
	expect_status 0
	[ "$(printf '%s\n' "$output" | tail -n +2 | cut -d, -f1 | tr '\n' ' ')" = \
		"steered/split/b32p/own/4k steered/inline/b32p/own/4k steered/split/b32p/slot/4k steered/split/b32p/slot-unchecked/4k " ] ||
		{ tk_dump "own: split and inline, once each (the check is the slot's); slot: split, with and without"; false; }
	expect_stderr "upfbench: warning: sweep: leaving out steered/inline/b32p/slot/4k: --table slot: the TEID names a hot line of the split layout (not --layout fat or inline)"
}

@test "run takes one value of each knob, --prefetch and --hugepages with or without one" {
	tk_run upfbench run "${SMALL[@]}" --hugepages --prefetch off -f json
	expect_status 0
	[ "$(field hugepages)" = true ] && [ "$(field prefetch)" = false ] || { tk_dump "thp, no prefetch"; false; }
	tk_run upfbench run "${SMALL[@]}" --preset best --hugepages=off -f json
	expect_status 0
	[ "$(field label)" = best ] && [ "$(field hugepages)" = false ] && [ "$(field batch)" = 8 ] ||
		{ tk_dump "best, then no THP"; false; }
	tk_run upfbench run "${SMALL[@]}" --hugepages on,off
	expect_status 2
	expect_one_line_stderr
	expect_stderr "upfbench: --hugepages: 'on,off' is not one of off|on"
}

@test "-f and -o on every command: the records in the format asked, in the file named" {
	tk_run upfbench run "${SMALL[@]}" -f csv -o "$T/run.csv" --pcap-out "$T/n3.pcap"
	expect_status 0
	[ -z "$output" ] && [ "$(head -1 "$T/run.csv" | cut -d, -f1-2)" = label,design ] &&
		[ "$(grep -c . "$T/run.csv")" -eq 2 ] || { tk_dump "run.csv: $(head -c 200 "$T/run.csv")"; false; }
	tk_run upfbench sweep --sessions 300 --presets best,split --packets 5000 --floor-mib 0 -o "$T/sweep.jsonl"
	expect_status 0
	# -o's file is not a terminal: JSON lines, as every command's default there
	[ -z "$output" ] && [ "$(jq -r .label "$T/sweep.jsonl" | tr '\n' ' ')" = "best split " ] ||
		{ tk_dump "sweep.jsonl: $(cat "$T/sweep.jsonl")"; false; }
	tk_run upfbench lookup --sessions 300 --lookups 1k --tables own --batch 1,8 -f csv -o "$T/lookup.csv"
	expect_status 0
	[ "$(cut -d, -f1,3 "$T/lookup.csv" | tr '\n' ' ')" = "table,batch own,1 own,8 " ] ||
		{ tk_dump "lookup.csv: $(cat "$T/lookup.csv")"; false; }
	tk_run upfbench floor --floor-mib 16 -f json -o "$T/floor.json"
	expect_status 0
	jq -e '.type == "memory_floor" and .buffer_mib == 16' "$T/floor.json" >/dev/null ||
		{ tk_dump "floor.json: $(cat "$T/floor.json")"; false; }
	tk_run upfbench decode --pcap-in "$T/n3.pcap" -f csv -o "$T/decode.csv"
	expect_status 0
	[ "$(head -1 "$T/decode.csv" | cut -d, -f1-2)" = frame,status ] &&
		[ "$(tail -n +2 "$T/decode.csv" | cut -d, -f2 | sort -u)" = ok ] &&
		[ "$(grep -c . "$T/decode.csv")" -eq 20001 ] || { tk_dump "decode.csv: $(head -3 "$T/decode.csv")"; false; }
	# a table and its notes go together
	tk_run upfbench check-identity -f table -o "$T/identity.txt"
	expect_status 22
	[ -z "$output" ] && grep -q "^before .* n$" "$T/identity.txt" &&
		grep -q "the identity FAILS" "$T/identity.txt" || { tk_dump "identity.txt: $(cat "$T/identity.txt")"; false; }
}

@test "an -o that cannot be written: one line, exit 1, before any work" {
	tk_run upfbench floor --floor-mib 16 -o "$T/no/such/dir/floor.json"
	expect_status 1
	expect_one_line_stderr
	expect_stderr "upfbench: --output: cannot write $T/no/such/dir/floor.json: No such file or directory"
	[[ $stderr != *"memory floor"* ]]
}

@test "lookup takes a list of tables; other commands take one" {
	tk_run upfbench lookup --sessions 1000 --lookups 10k --tables own --format json
	expect_status 0
	[ "$(field table)" = own ] && [ "$(field misses)" = 0 ] && [ "$(field lookups)" = 10000 ] ||
		{ tk_dump "one own-table record"; false; }
	tk_run upfbench run --tables own
	expect_status 2
	expect_one_line_stderr
	expect_stderr "upfbench: unknown option '--tables' (see --help)"
	tk_run upfbench lookup --tables own,rte_hash,own,own,own,own,own,own,own,own,own,own,own,own,own,own,own
	expect_status 2
	expect_stderr "upfbench: --tables: more than 16 values"
}

@test "rte_hash: lookups compared with the project's table, and runs that count exactly" {
	requires root
	tk_run upfbench --help
	if [[ $output == *"rte_hash (DPDK; not built in here)"* ]]; then
		tk_run upfbench run "${SMALL[@]}" --table rte_hash
		expect_status 4
		expect_stderr "built without DPDK"
		return
	fi
	tk_run upfbench lookup --sessions 20k --lookups 200k --format json
	expect_status 0
	[ "$(printf '%s\n' "$output" | jq -r .table | tr '\n' ' ')" = "own rte_hash " ] || { tk_dump "two tables"; false; }
	printf '%s\n' "$output" | jq -e 'select(.misses != 0 or .cycles_per_lookup <= 0)' >/dev/null &&
		{ tk_dump "no misses, positive cycles"; false; }
	expect_stderr "batch 32: own table "
	for p in rte before-rte; do
		tk_run upfbench run "${SMALL[@]}" --preset $p --workers 2 --verify --format json
		expect_status 0
		expect_stderr "counters: exact for 300 sessions: 20000 packets"
		[ "$(field table)" = rte_hash ] || { tk_dump "rte_hash table"; false; }
	done
	# the EAL leaves no runtime directory behind
	[ ! -d /var/run/dpdk ] || [ -z "$(ls /var/run/dpdk | grep '^up-')" ]
}

@test "without DPDK the build works and says so" {
	local dir pc variant
	# pkg-config finds every library of this machine but DPDK's (libnl among
	# them, which lib/ builds with)
	mkdir -p "$T/nopc"
	for dir in $(pkg-config --variable pc_path pkg-config | tr ':' ' '); do
		for pc in "$dir"/*.pc; do
			[ -e "$pc" ] || continue
			case ${pc##*/} in libdpdk*.pc) ;; *) ln -sf "$pc" "$T/nopc/" ;; esac
		done
	done
	PKG_CONFIG_LIBDIR=$T/nopc pkg-config --exists libnl-3.0
	if PKG_CONFIG_LIBDIR=$T/nopc pkg-config --exists libdpdk; then echo "# libdpdk still found"; false; fi
	# only upf/table_rte.o takes DPDK's flags, and only the link its
	# libraries (upf/module.mk): every other object is the same either way,
	# so it comes from the tree's own build, and this build compiles that one
	# and links (a whole rebuild of upfbench took 29 s of the check tier)
	variant=$(cat "$TK_ROOT/build/variant")
	mkdir -p "$T/build/$variant"
	cp -a "$TK_ROOT/build/$variant/lib" "$TK_ROOT/build/$variant/upf" "$TK_ROOT/build/$variant/libtoolkit.a" "$T/build/$variant/"
	cp -a "$TK_ROOT/build/variant" "$TK_ROOT/build/version" "$TK_ROOT/build/datadir" "$T/build/"
	rm "$T/build/$variant/upf/table_rte.o"
	run bash -c "cd '$TK_ROOT' && PKG_CONFIG_LIBDIR='$T/nopc' make --no-print-directory BUILD='$T/build' BIN='$T/bin' '$T/bin/upfbench' 2>&1"
	[ "$status" -eq 0 ] || { echo "$output" | tail -20; false; }
	[[ $output == *"CC      upf/table_rte.c"* ]] || { echo "# table_rte.c was not compiled:"; echo "$output" | head; false; }
	[[ $output == *"upf: pkg-config finds no libdpdk: building upfbench without the rte_hash back end"* ]] ||
		{ echo "$output" | head; false; }
	tk_run "$T/bin/upfbench" --help
	expect_output "rte_hash (DPDK; not built in here)"
	tk_run "$T/bin/upfbench" run "${SMALL[@]}" --table rte_hash
	expect_status 4
	expect_one_line_stderr
	expect_stderr "upfbench: --table rte_hash: this upfbench was built without DPDK (pkg-config found no libdpdk; install libdpdk-dev and rebuild)"
	tk_run "$T/bin/upfbench" run "${SMALL[@]}" --verify --format json
	expect_status 0
}
