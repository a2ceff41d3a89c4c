#!/usr/bin/env bats
# tier: check
# bbrplot: the dip plot from a real repro/dip.sh trace and capture, and the
# dwell, upf and sweep plots from the real outputs of udpdwell, upfbench and
# repro/sweep.sh (tests/fixtures). Each picture is checked for existence, its
# PNG or SVG header, its size, and the colours it must contain (decoded here).

load helpers
load bbrpcap_helpers

TRACE=$TK_ROOT/tests/fixtures/pcap/dip-paced.jsonl
PCAP=$TK_ROOT/tests/fixtures/pcap/dip-paced.pcap

setup() {
	requires gnuplot
}

# the palette of plots/dip.gp (rrggbb)
C_SENT=9cc3ec C_ACKED=2ca02c C_BW=000000 C_DA=d62728 C_SND=1f77b4

@test "bbrplot --help says what is drawn, with units, and the exit codes" {
	tk_run bbrplot --help
	expect_status 0
	expect_output "upper panel (Mbit/s, log)"
	expect_output "rcv_interval_us and snd_interval_us"
	expect_output "bbrplot dwell"
	expect_output "  5   bad input: missing, unreadable, damaged, or not what was expected"
	# bbrplot's help is the dip plot's
	expect_equal "$output" "$(bbrplot dip --help)" "bbrplot --help, against bbrplot dip --help"
}

@test "dip plot: one time axis for both panels; a collapse at time T sits at x = T in both, even when the capture starts first" {
	requires tshark jq
	local svg=$BATS_TEST_TMPDIR/dip.svg d=$BATS_TEST_TMPDIR/data read first_sample first_frame origin t want
	bbrplot --trace "$TRACE" --pcap "$PCAP" -o "$svg" --keep-data "$d"
	# time 0, read independently: the earlier of the flow's first sample
	# (the trace) and the capture's first frame (tshark)
	first_sample=$(jq -s '[.[] | select(.type == "sample" and .dport == 43100) | .wall_ns] | min / 1e9' "$TRACE")
	first_frame=$(tshark -r "$PCAP" -c 1 -T fields -e frame.time_epoch 2>/dev/null)
	# this fixture's capture starts first: the case where the panels parted
	awk -v f="$first_frame" -v s="$first_sample" 'BEGIN { exit !(f < s) }'
	origin=$first_frame
	t=$(jq -r "select(.type == \"collapse\" and .cause == \"delayed_ack\") | .wall_ns / 1e9 - $origin" "$TRACE")
	/usr/bin/python3 "$TK_ROOT/tests/tools/dipsvg.py" "$svg" "rgb(214, 39, 40)" > "$BATS_TEST_TMPDIR/read"
	cat "$BATS_TEST_TMPDIR/read" | grep -v marker
	# the two panels' grid lines stand at the same pixels: one axis
	expect_equal "$(awk '$1 == "upper_grid" { $1 = ""; print }' "$BATS_TEST_TMPDIR/read")" \
	  "$(awk '$1 == "lower_grid" { $1 = ""; print }' "$BATS_TEST_TMPDIR/read")" "upper panel's grid lines, against the lower's"
	grep -q '^lower_ticks 0:' "$BATS_TEST_TMPDIR/read"
	# the collapse marker in the upper panel, and the culprit's sample in the
	# lower one, at T (half a pixel is 0.003 s here)
	echo "# delayed-ACK collapse at T = $t s"
	awk -v t="$t" '$1 == "marker" && $2 == "upper" { n++; if ($3 - t > 0.006 || t - $3 > 0.006) bad++ }
		END { exit !(n == 1 && !bad) }' "$BATS_TEST_TMPDIR/read" ||
		{ grep "marker upper" "$BATS_TEST_TMPDIR/read"; false; }
	awk -v t="$t" '$1 == "marker" && $2 == "lower" && $3 - t < 0.006 && t - $3 < 0.006 { n++ } END { exit !n }' "$BATS_TEST_TMPDIR/read"
	# every data file starts at 0 or later
	for f in samples tput collapses; do
		awk '!/^#/ && $1 != "NaN" && $1 + 0 < 0 { bad++ } END { exit bad > 0 }' "$d/$f.dat" ||
			{ echo "# $f.dat has times before 0"; false; }
	done
	# and the kept plot.sh redraws from any directory
	rm -f "$svg"
	(cd / && "$d/plot.sh")
	[ -s "$svg" ]
}

# the plot's data file rows, sorted, against the trace's, each "t value ..."
# rounded to 1 us and 1 kbit/s (the files keep 9 and 6 decimals)
harm_rows() {
	awk '!/^#/ && $1 != "NaN" && NF { printf "%.6f", $1; for (i = 2; i <= NF; i++) printf " %.3f", $i; print "" }' "$@" | sort
}

@test "dip plot: throttling collapses drawn apart from harmless ones, the demand and need over the run, stalls at their times" {
	requires jq
	local tr=$TK_ROOT/tests/fixtures/plots/dip-harm.jsonl d=$BATS_TEST_TMPDIR/d svg=$BATS_TEST_TMPDIR/h.svg t0 c n
	bbrplot --trace "$tr" -o "$svg" --keep-data "$d"
	# the witness: the trace's own records, read by jq; time 0 is its first sample
	t0=$(jq -s '[.[] | select(.type == "sample") | .wall_ns] | min' "$tr")
	# the fixture holds both impacts and stalls, or this test proves nothing
	expect_cmp "$(jq -s '[.[] | select(.type == "collapse" and .impact == "throttling")] | length' "$tr")" -ge 1 "throttling collapses in the fixture"
	expect_cmp "$(jq -s '[.[] | select(.type == "collapse" and .impact == "harmless")] | length' "$tr")" -ge 1 "harmless collapses in the fixture"
	expect_cmp "$(jq -s '[.[] | select(.type == "stall")] | length' "$tr")" -ge 2 "stalls in the fixture"
	# every collapse in its cause's block, at its time and estimate, marked
	# throttling exactly when bbrtrace said so
	for c in $(jq -r 'select(.type == "collapse") | .cause' "$tr" | sort -u); do
		diff <(jq -r --argjson t0 "$t0" --arg c "$c" 'select(.type == "collapse" and .cause == $c)
			| "\((.wall_ns - $t0) / 1e9) \([.bw_bps / 1e6, 0.01] | max) \(.bw_prev_bps / 1e6) \(if .impact == "throttling" then 1 else 0 end)"' "$tr" |
			harm_rows) \
		     <(awk -v c="$c" '/^# / { b = $2; next } b == c' "$d/collapses.dat" | harm_rows)
	done
	# the need and the demand at each collapse, as bbrtrace gave them
	diff <(jq -r --argjson t0 "$t0" 'select(.type == "collapse")
		| "\((.wall_ns - $t0) / 1e9) \(.need_bps / 1e6) \(.demand_bps / 1e6)"' "$tr" | harm_rows) \
	     <(grep -v '^#' "$d/need.dat" | harm_rows)
	# the demand over the run: a row at the first sample, then at each
	# sample 10 ms (BT_DEMAND_STEP_NS) or more after the last row's, to the
	# run's end; each row what the trace's own samples say: the bytes snd_una
	# advanced (mod 2^32) over the row's window (at most 1 s, from a sample),
	# over at least 20 ms, and 1.25 x that where half its samples or more
	# were app-limited (lib/demand.h); equal to %.9g's rounding
	jq -r --argjson t0 "$t0" 'select(.type == "sample")
		| "S \((.wall_ns - $t0) / 1e9) \(.t_ns) \(.snd_una) \(if .is_app_limited then 1 else 0 end)"' "$tr" |
		cat - <(grep -v '^#' "$d/demand.dat" | sed 's/^/D /') | awk '
		function off(x, y) { return (x - y) ^ 2 > (1e-6 * y) ^ 2 }
		$1 == "S" { n++; ts[n] = $2; tns[n] = $3; at[$3] = n; dd = 0
			    if (n > 1) { dd = $4 - una; if (dd < 0) dd += 4294967296; if (dd >= 2147483648) dd = 0 }
			    acked[n] = acked[n - 1] + dd; una = $4; app[n] = app[n - 1] + $5; next }
		{ rows++; while (i < n && ts[i + 1] <= $2 + 1e-6) i++
		  if (i < 1 || ts[i] < $2 - 1e-6) { print "no sample at " $2; bad++; next }
		  if (rows == 1 ? i != 1 : tns[i] - tns[p] < 1e7 || tns[i - 1] - tns[p] >= 1e7) {
			print "row at " $2 " is not the first sample 10 ms after the last row"; bad++ }
		  # keys as integers: mawk turns a number over 2^31 into a string by %.6g
		  p = i; f = at[sprintf("%.0f", tns[i] - $5 * 1e9)]
		  if (!f || $5 > 1) { print "window " $5 " s at " $2 ": no sample starts it, or over 1 s"; bad++; next }
		  span = $5 < 0.02 ? 0.02 : $5; want = (acked[i] - acked[f]) * 8 / span / 1e6
		  need = i > f && app[i] - app[f] >= 0.5 * (i - f) ? 1.25 * want : "NaN"
		  if (want == 0 ? $3 != "NaN" : off($3, want)) { print "demand at " $2 ": " $3 ", want " want; bad++ }
		  if (want == 0 || need == "NaN" ? $4 != "NaN" : off($4, need)) { print "need at " $2 ": " $4 ", want " need; bad++ } }
		END { if (rows < 2 || tns[n] - tns[p] >= 1e7) { print rows " rows, the last at sample " p " of " n; bad++ }
		      exit bad > 0 }'
	grep -q "<text>need: 1.25 x demand (under: throttled)</text>" "$svg"
	# every stall in its cause's block: when it began and how long it held
	for c in $(jq -r 'select(.type == "stall") | .cause' "$tr" | sort -u); do
		diff <(jq -r --argjson t0 "$t0" --arg c "$c" 'select(.type == "stall" and .cause == $c)
			| "\((.wall_ns - $t0) / 1e9) \(.duration_us / 1e6)"' "$tr" | harm_rows) \
		     <(awk -v c="$c" '/^# / { b = $2; next } b == c' "$d/stalls.dat" | harm_rows)
	done
	# and the legend says it: a cause's count with its throttling ones, each stall cause seen
	grep -q "<text>delayed ACK: $(jq -s '[.[] | select(.type == "collapse" and .cause == "delayed_ack")] | length' "$tr") ($(jq -s '[.[] | select(.type == "collapse" and .cause == "delayed_ack" and .impact == "throttling")] | length' "$tr") throttled)</text>" "$svg"
	for c in $(jq -r 'select(.type == "stall") | .cause' "$tr" | sort -u); do
		grep -q "<text>stall: $c (" "$svg" || { echo "# no legend entry for stalls of $c"; false; }
	done
}

@test "dip plot --rate-range and --from/--to: two plots drawn apart share their axes" {
	local a=$BATS_TEST_TMPDIR/a b=$BATS_TEST_TMPDIR/b
	bbrplot --trace "$TRACE" -o "$BATS_TEST_TMPDIR/a.png" --keep-data "$a" --rate-range 0.01:100000 --from 0 --to 16
	bbrplot --trace "$TK_ROOT/tests/fixtures/plots/dip-harm.jsonl" -o "$BATS_TEST_TMPDIR/b.png" --keep-data "$b" \
		--rate-range 0.01:100000 --from 0 --to 16
	for v in floor_mbps ceiling_mbps xmin xmax; do
		[ "$(grep -oE "(^| )$v=[^;]*" "$a/plot.sh")" = "$(grep -oE "(^| )$v=[^;]*" "$b/plot.sh")" ] ||
			{ echo "# $v differs"; false; }
	done
	grep -qE '(^| )floor_mbps=0.01;' "$a/plot.sh"
	grep -qE '(^| )ceiling_mbps=100000;' "$a/plot.sh"
	# without it, the axis is fitted to the data: its top free, and the time up
	# to the last record
	bbrplot --trace "$TRACE" -o "$BATS_TEST_TMPDIR/a.png" --keep-data "$a"
	grep -qE '(^| )ceiling_mbps=0;' "$a/plot.sh"
	if grep -qE '(^| )xmax=16;' "$a/plot.sh"; then echo "# xmax stayed 16"; false; fi
	# a bad range is refused as any bad option
	for bad in 5 10:1 0:10 x:10 1:; do
		tk_run bbrplot --trace "$TRACE" -o "$BATS_TEST_TMPDIR/c.png" --rate-range "$bad"
		expect_status 2
		expect_one_line_stderr
		expect_stderr "--rate-range"
	done
}

@test "dip plot: --from/--to outside the plot says what it covers; a missing output directory is named" {
	tk_run bbrplot --trace "$TRACE" -o "$BATS_TEST_TMPDIR/x.png" --from 100 --to 200
	expect_status 2; expect_one_line_stderr
	expect_stderr "--from 100 --to 200 is outside what the plot covers: 0 to 4."
	tk_run bbrplot --trace "$TRACE" -o "$BATS_TEST_TMPDIR/nodir/x.png"
	expect_status 1; expect_one_line_stderr
	expect_stderr "-o $BATS_TEST_TMPDIR/nodir/x.png: the directory $BATS_TEST_TMPDIR/nodir does not exist"
}

@test "each plot's --help lists its own options, and only those" {
	local kind
	for kind in dwell upf sweep; do
		tk_run bbrplot $kind --help
		expect_status 0
		expect_output "Usage: bbrplot $kind "
		expect_output "-o, --output FILE"
		expect_output "--size WxH"
		[[ $output != *"--trace"* && $output != *"--bin-ms"* ]] || { tk_dump "$kind: the dip plot's options"; false; }
	done
	tk_run bbrplot dip --help
	expect_output "--trace FILE"
	expect_output "--clock-offset-ms MS"
}

@test "bbrplot -V and each plot's -V print the version" {
	local kind version
	version=$(bbrplot --version)
	for kind in "" dip dwell upf sweep; do
		tk_run bbrplot $kind -V
		expect_status 0
		[ "$output" = "$version" ] || { tk_dump "bbrplot $kind -V"; false; }
	done
}

@test "every plot refuses a bad command line the same way: one line, exit 2" {
	local kind
	for kind in "" dip dwell upf sweep; do
		tk_run bbrplot $kind --bogus
		expect_status 2
		expect_one_line_stderr
		expect_stderr "bbrplot: unknown option '--bogus' (see --help)"
		tk_run bbrplot $kind x -o
		expect_status 2
		expect_one_line_stderr
		expect_stderr "bbrplot: -o needs a value (see --help)"
		tk_run bbrplot $kind --quiet=1
		expect_status 2
		expect_one_line_stderr
		expect_stderr "bbrplot: --quiet takes no value (see --help)"
		tk_run bbrplot $kind x -o x.png --size 100x100
		expect_status 2
		expect_one_line_stderr
		expect_stderr "bbrplot: --size: '100x100' is not WIDTHxHEIGHT in pixels (320x200 .. 8000x8000)"
	done
	tk_run bbrplot dip --trace "$TRACE" -o x.png --bin-ms 0
	expect_status 2
	expect_one_line_stderr
	expect_stderr "bbrplot: --bin-ms: 0 is out of range 0.01..60000"
}

@test "the plot kind is taken where it is written: after options, or as dip" {
	local png=$BATS_TEST_TMPDIR/s.png
	tk_run bbrplot -v sweep "$TK_ROOT/tests/fixtures/plots/sweep.csv" -o "$png"
	expect_status 0
	expect_stderr "template "
	[ -s "$png" ]
	# an option's value that names a kind is still the value
	tk_run bbrplot --title sweep -o "$BATS_TEST_TMPDIR/d.svg" dwell "$TK_ROOT/tests/fixtures/plots/dwell.jsonl"
	expect_status 0
	grep -q "<text>sweep</text>" "$BATS_TEST_TMPDIR/d.svg"
	grep -q "sfu_echo: ALERT" "$BATS_TEST_TMPDIR/d.svg"
	# the dip plot by its name, and without it
	tk_run bbrplot dip --trace "$TRACE" -o "$BATS_TEST_TMPDIR/a.svg"
	expect_status 0
	bbrplot --trace "$TRACE" -o "$BATS_TEST_TMPDIR/b.svg"
	cmp "$BATS_TEST_TMPDIR/a.svg" "$BATS_TEST_TMPDIR/b.svg"
}

@test "bbrplot --version prints the version" {
	tk_run bbrplot --version
	expect_status 0
	expect_version bbrplot
}

@test "dip plot, PNG: the right size and the colours of each curve and of the collapse" {
	local png=$BATS_TEST_TMPDIR/dip.png
	tk_run bbrplot --trace "$TRACE" --pcap "$PCAP" -o "$png"
	expect_status 0
	expect_equal "$(head -c 8 "$png" | od -An -t x1 | tr -d ' \n')" 89504e470d0a1a0a "the PNG signature"
	read -r w h n missing < <(pc_png_info "$png" $C_SENT $C_ACKED $C_BW $C_DA $C_SND)
	echo "# ${w}x$h, $n colours"
	expect_equal "${w}x$h" 1200x800 "the PNG's size"
	expect_cmp "$n" -ge 50 "colours"
	expect_cmp "$missing" -eq 0 "series colours missing"
}

@test "dip plot, SVG: header, size, legend and colours" {
	local svg=$BATS_TEST_TMPDIR/dip.svg
	tk_run bbrplot --trace "$TRACE" --pcap "$PCAP" -o "$svg" --title "push to a paced receiver"
	expect_status 0
	head -1 "$svg" | grep -q '^<?xml'
	read -r w h n < <(pc_svg_info "$svg")
	echo "# ${w}x$h, $n colours"
	expect_equal "${w}x$h" 1200x800 "the SVG's size"
	expect_cmp "$n" -ge 8 "colours"
	grep -q "<text>push to a paced receiver</text>" "$svg"
	grep -q "<text>wire: data sent (100 ms bins)</text>" "$svg"
	grep -q "<text>delayed ACK: 1 (0 throttled)</text>" "$svg" # a trace from before impacts
	grep -q "<text>ringed: a collapse that throttled</text>" "$svg"
	grep -q "<text>rcv_interval_us</text>" "$svg"
	grep -q "<text>rate (Mbit/s, log)</text>" "$svg"
	grep -q "<text>interval (us, log; 0 drawn at 1)</text>" "$svg"
	grep -qi "rgb(214,  39,  40)\|#d62728" "$svg"
}

@test "dip plot: the legend shows every cause of lib/trace.h, each in a colour of its own" {
	local svg=$BATS_TEST_TMPDIR/dip.svg labels label n colours c
	# the labels as the contract defines them (lib/trace.h's BT_CAUSES)
	labels=$(printf '#include "trace.h"\n#define L(id, name, label) label\nBT_CAUSES(L)\n' |
		cpp -P -I "$TK_ROOT/lib" - | tail -1 | grep -oE '"[^"]+"' | tr -d '"')
	n=$(wc -l <<<"$labels")
	echo "# $n causes"
	expect_cmp "$n" -ge 8 "causes in lib/trace.h"
	bbrplot --trace "$TRACE" --pcap "$PCAP" -o "$svg"
	while IFS= read -r label; do
		grep -q "<text>$label: [0-9]* ([0-9]* throttled)</text>" "$svg" || { echo "no legend entry for '$label'"; return 1; }
	done <<<"$labels"
	expect_cmp "$(grep -cE '<text>[^<]*: [0-9]+ \([0-9]+ throttled\)</text>' "$svg")" -eq "$n" "legend entries, against the causes"
	# each cause's colour, as plot.sh hands it to gnuplot, differs from the others
	# and from the rate panel's lines (dip.gp's c_sent, c_acked, c_bw, c_pacing)
	bbrplot --trace "$TRACE" --pcap "$PCAP" -o "$svg" --keep-data "$BATS_TEST_TMPDIR/kd"
	colours=$(grep -oE "cause_colour\[[0-9]+\]='#[0-9a-f]{6}'" "$BATS_TEST_TMPDIR/kd/plot.sh" | cut -d"'" -f2)
	echo "# colours: $(tr '\n' ' ' <<<"$colours")"
	expect_cmp "$(wc -l <<<"$colours")" -eq "$n" "cause colours, against the causes"
	expect_cmp "$(sort -u <<<"$colours" | wc -l)" -eq "$n" "distinct cause colours, against the causes"
	for c in $(grep -oE '^c_(sent|acked|bw|pacing) += "#[0-9a-f]{6}"' "$TK_ROOT/plots/dip.gp" | grep -oE '#[0-9a-f]{6}'); do
		! grep -qx "$c" <<<"$colours" || { echo "cause colour $c is also a line's"; return 1; }
	done
}

@test "dip plot --size sets the picture's size" {
	local png=$BATS_TEST_TMPDIR/small.png
	bbrplot --trace "$TRACE" --pcap "$PCAP" -o "$png" --size 800x600
	read -r w h n _ < <(pc_png_info "$png")
	expect_cmp "$w" -eq 800 "the PNG's width"
	expect_cmp "$h" -eq 600 "the PNG's height"
	expect_cmp "$n" -ge 20 "colours in the PNG"
}

@test "dip plot --from/--to: the time axis shows only that range" {
	local svg=$BATS_TEST_TMPDIR/zoom.svg ticks
	bbrplot --trace "$TRACE" --pcap "$PCAP" -o "$svg" --from 1.5 --to 3
	# the x tick labels (centred text) of both panels
	ticks=$(tr '\n' ' ' < "$svg" | grep -oE 'text-anchor="middle">[[:space:]]*<text>[0-9.-]+</text>' | grep -oE '[0-9.-]+</text>' | cut -d'<' -f1 | tr '\n' ' ')
	echo "# x ticks: $ticks"
	[ -n "$ticks" ]
	for t in $ticks; do
		awk -v t="$t" 'BEGIN { exit !(t >= 1.5 && t <= 3) }'
	done
	# and they span the range: the first near 1.5, the last near 3
	awk -v t="${ticks%% *}" 'BEGIN { exit !(t <= 1.7) }'
	awk -v t="$(echo $ticks | awk '{ print $NF }')" 'BEGIN { exit !(t >= 2.8) }'
}

@test "dip plot from the trace alone: no wire curves" {
	local svg=$BATS_TEST_TMPDIR/trace.svg
	bbrplot --trace "$TRACE" -o "$svg"
	! grep -q "wire: data sent" "$svg" || false
	grep -q "<text>BBR bw (max-bw filter)</text>" "$svg"
}

@test "dip plot from a joined trace takes the clock offset from its frame times" {
	local j=$BATS_TEST_TMPDIR/joined.jsonl
	bbrpcap join "$TRACE" "$PCAP" -o "$j" > /dev/null 2>&1
	tk_run bbrplot -v --trace "$j" --pcap "$PCAP" -o "$BATS_TEST_TMPDIR/j.png"
	expect_status 0
	[[ $stderr =~ clock\ offset\ -?0\.0[0-9]+\ ms ]] || { tk_dump "no offset from the join"; false; }
}

@test "dip plot: a trace without wall_ns needs a join or --clock-offset-ms for a capture" {
	jq -c 'del(.wall_ns)' "$TRACE" > "$BATS_TEST_TMPDIR/mono.jsonl"
	tk_run bbrplot --trace "$BATS_TEST_TMPDIR/mono.jsonl" --pcap "$PCAP" -o "$BATS_TEST_TMPDIR/m.png"
	expect_status 5
	expect_one_line_stderr
	expect_stderr "mono.jsonl has no wall_ns: its clock cannot be matched to the capture's; join it first"
}

@test "dip plot: the wire's silences are drawn at their times, by state, as bbrpcap gaps finds them" {
	requires jq
	local d=$BATS_TEST_TMPDIR/data st n total=0
	# 30 ms: this fixture's silences are frame intervals (20 fps) and held
	# ACKs; bbrpcap.bats checks bbrpcap gaps against tshark's frames
	bbrplot --trace "$TRACE" --pcap "$PCAP" -o "$BATS_TEST_TMPDIR/g.png" --keep-data "$d" --gap-ms 30
	for st in idle in_flight; do
		# time 0 of this plot is the capture's first frame (the time-axis
		# test above), bbrpcap's t_s too
		bbrpcap gaps --min-ms 30 -f json "$PCAP" |
			jq -r "select(.src == \"10.77.1.2:45258\" and .state == \"$st\") | \"\\(.t_s) \\(.gap_us / 1e6)\"" \
			> "$BATS_TEST_TMPDIR/want"
		awk -v b="$st" '/^# / { blk = $2; next } blk == b && NF == 2 && $1 != "NaN"' "$d/gaps.dat" > "$BATS_TEST_TMPDIR/got"
		n=$(wc -l < "$BATS_TEST_TMPDIR/want")
		[ "$n" -gt 0 ] && [ "$(wc -l < "$BATS_TEST_TMPDIR/got")" -eq "$n" ] ||
			{ echo "# $st: bbrpcap $n, gaps.dat $(wc -l < "$BATS_TEST_TMPDIR/got")"; false; }
		# the same silences, to 2 us: an epoch in seconds in a double keeps
		# about 0.2 us, and bbrpcap prints whole microseconds
		paste -d ' ' "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got" |
			awk 'function abs(x) { return x < 0 ? -x : x }
			     abs($1 - $3) > 2e-6 || abs($2 - $4) > 2e-6 { print "# " $0; bad++ } END { exit bad > 0 }'
		# the legend counts them
		grep -q "gap_n\[$([ "$st" = idle ] && echo 1 || echo 2)\]=$n;" "$d/plot.sh" ||
			{ echo "# the legend's $st count is not $n"; false; }
		total=$((total + n))
	done
	echo "# $total silences of 30 ms or more"
}

@test "dip plot --keep-data keeps the data and the gnuplot command" {
	local d=$BATS_TEST_TMPDIR/data
	bbrplot --trace "$TRACE" --pcap "$PCAP" -o "$BATS_TEST_TMPDIR/k.png" --keep-data "$d"
	[ -s "$d/samples.dat" ] && [ -s "$d/collapses.dat" ] && [ -s "$d/tput.dat" ] && [ -x "$d/plot.sh" ] ||
		{ ls -l "$d" | sed 's/^/# /'; return 1; }
	# the command redraws the same picture
	rm "$BATS_TEST_TMPDIR/k.png"
	"$d/plot.sh"
	[ -s "$BATS_TEST_TMPDIR/k.png" ]
}

@test "dwell plot from udpdwell's records: PNG size and one colour per socket" {
	local png=$BATS_TEST_TMPDIR/dwell.png
	tk_run bbrplot dwell "$TK_ROOT/tests/fixtures/plots/dwell.jsonl" -o "$png"
	expect_status 0
	read -r w h n missing < <(pc_png_info "$png" d62728 1f77b4)
	expect_cmp "$w" -eq 1200 "the PNG's width"
	expect_cmp "$h" -eq 800 "the PNG's height"
	expect_cmp "$n" -ge 20 "colours in the PNG"
	expect_cmp "$missing" -eq 0 "socket colours missing"
}

@test "dwell plot, SVG: the buckets and each socket's state" {
	local svg=$BATS_TEST_TMPDIR/dwell.svg
	bbrplot dwell "$TK_ROOT/tests/fixtures/plots/dwell.jsonl" -o "$svg" --size 1000x600
	read -r w h n < <(pc_svg_info "$svg")
	expect_equal "${w}x$h" 1000x600 "the SVG's size"
	expect_cmp "$n" -ge 4 "colours"
	grep -q "<text>&lt;=50ms</text>" "$svg"
	grep -q "sfu_echo: ALERT, avg 18193 us" "$svg"
	grep -q "sfu_echo: OK, avg 12 us" "$svg"
}

@test "upf plot from upfbench's sweep CSV: a line per design" {
	local png=$BATS_TEST_TMPDIR/upf.png svg=$BATS_TEST_TMPDIR/upf.svg
	bbrplot upf "$TK_ROOT/tests/fixtures/upf/sweep-sample.csv" -o "$png"
	read -r w h n missing < <(pc_png_info "$png" d62728 ff7f0e 2ca02c)
	expect_equal "${w}x$h" 1200x800 "the PNG's size"
	expect_cmp "$n" -ge 20 "colours"
	expect_cmp "$missing" -eq 0 "series colours missing"
	bbrplot upf "$TK_ROOT/tests/fixtures/upf/sweep-sample.csv" -o "$svg"
	grep -q "<text>before</text>" "$svg" && grep -q "<text>batched</text>" "$svg" && grep -q "<text>best</text>" "$svg"
	grep -q "<text>cycles per packet (log)</text>" "$svg"
}

@test "sweep plot from repro/sweep.sh's CSV: collapses by cause per run" {
	local png=$BATS_TEST_TMPDIR/sweep.png svg=$BATS_TEST_TMPDIR/sweep.svg
	bbrplot sweep "$TK_ROOT/tests/fixtures/plots/sweep.csv" -o "$png"
	read -r w h n missing < <(pc_png_info "$png" d62728 1f77b4)
	expect_equal "${w}x$h" 1200x800 "the PNG's size"
	expect_cmp "$n" -ge 20 "colours"
	expect_cmp "$missing" -eq 0 "series colours missing"
	bbrplot sweep "$TK_ROOT/tests/fixtures/plots/sweep.csv" -o "$svg"
	grep -q "<text>native, quickack off</text>" "$svg"
	grep -q "<text>native, quickack on</text>" "$svg"
}

@test "bbrplot needs --trace or a plot kind" {
	tk_run bbrplot -o x.png
	expect_status 2
	expect_one_line_stderr
	expect_stderr "bbrplot: --trace FILE is required (or a plot kind: dwell, upf, sweep); see --help"
}

@test "bbrplot refuses an output that is neither .png nor .svg" {
	tk_run bbrplot --trace "$TRACE" -o x.jpg
	expect_status 2
	expect_stderr "bbrplot: -o: 'x.jpg' must end in .png or .svg"
}

@test "bbrplot refuses --from after --to, and a bad --size" {
	tk_run bbrplot --trace "$TRACE" -o x.png --from 3 --to 1
	expect_status 2
	expect_stderr "bbrplot: --from 3 is not before --to 1"
	tk_run bbrplot --trace "$TRACE" -o x.png --size 100x100
	expect_status 2
	expect_stderr "bbrplot: --size: '100x100' is not WIDTHxHEIGHT in pixels (320x200 .. 8000x8000)"
}

@test "bbrplot refuses a dip-plot option on another plot as unknown" {
	tk_run bbrplot dwell "$TK_ROOT/tests/fixtures/plots/dwell.jsonl" -o x.png --from 1
	expect_status 2
	expect_one_line_stderr
	expect_stderr "bbrplot: unknown option '--from' (see --help)"
}

@test "bbrplot on a trace without samples: exit 5, nothing drawn" {
	echo '{"type":"summary","samples":0}' > "$BATS_TEST_TMPDIR/empty.jsonl"
	tk_run bbrplot --trace "$BATS_TEST_TMPDIR/empty.jsonl" -o "$BATS_TEST_TMPDIR/e.png"
	expect_status 5
	expect_stderr "empty.jsonl: no \"sample\" records: nothing to draw"
	[ ! -e "$BATS_TEST_TMPDIR/e.png" ]
}

@test "a missing input is bad input (5) in every plot, named in one line" {
	local kind
	tk_run bbrplot --trace "$BATS_TEST_TMPDIR/none.jsonl" -o "$BATS_TEST_TMPDIR/n.png"
	expect_status 5
	expect_one_line_stderr
	expect_stderr "bbrplot: $BATS_TEST_TMPDIR/none.jsonl: cannot open: No such file or directory"
	tk_run bbrplot --trace "$TRACE" --pcap "$BATS_TEST_TMPDIR/none.pcap" -o "$BATS_TEST_TMPDIR/n.png"
	expect_status 5
	expect_one_line_stderr
	expect_stderr "bbrplot: $BATS_TEST_TMPDIR/none.pcap: cannot open: No such file or directory"
	for kind in dwell upf sweep; do
		tk_run bbrplot $kind "$BATS_TEST_TMPDIR/none.csv" -o "$BATS_TEST_TMPDIR/n.png"
		expect_status 5
		expect_one_line_stderr
		expect_stderr "bbrplot: $BATS_TEST_TMPDIR/none.csv: cannot open: No such file or directory"
	done
	[ ! -e "$BATS_TEST_TMPDIR/n.png" ]
}

@test "a --pcap that is not a capture is bad input (5): bbrpcap says why" {
	tk_run bbrplot --trace "$TRACE" --pcap "$TRACE" -o "$BATS_TEST_TMPDIR/n.png"
	expect_status 5
	expect_one_line_stderr
	expect_stderr "bbrpcap: $TRACE: byte offset 0: unknown magic number"
	[ ! -e "$BATS_TEST_TMPDIR/n.png" ]
}

@test "a trace still being written is drawn up to its last complete line, with one warning" {
	local d=$BATS_TEST_TMPDIR n=150
	pc_cut_lines "$TRACE" $n "$d/cut.jsonl"
	tk_run bbrplot --trace "$d/cut.jsonl" --pcap "$PCAP" -o "$d/cut.png" --keep-data "$d/cut"
	expect_status 0
	expect_one_line_stderr
	expect_equal "$stderr" "bbrplot: warning: $d/cut.jsonl: its last line is incomplete (still being written?): read the $n complete records before it"
	[ -s "$d/cut.png" ]
	# what is drawn is what those complete lines alone draw
	head -n $n "$TRACE" > "$d/whole.jsonl"
	bbrplot --trace "$d/whole.jsonl" --pcap "$PCAP" -o "$d/whole.png" --keep-data "$d/whole"
	for f in samples collapses tput; do
		cmp "$d/cut/$f.dat" "$d/whole/$f.dat"
	done
}

@test "only the last line may be cut short: a cut line before it, or one ended by a newline, is bad input (5)" {
	local d=$BATS_TEST_TMPDIR n=150
	pc_cut_lines "$TRACE" $n "$d/mid.jsonl"
	{ echo; tail -n +$((n + 2)) "$TRACE"; } >> "$d/mid.jsonl"
	tk_run bbrplot --trace "$d/mid.jsonl" -o "$d/mid.png"
	expect_status 5
	expect_one_line_stderr
	expect_stderr "bbrplot: $d/mid.jsonl:$((n + 1)): not a JSON record: "
	pc_cut_lines "$TRACE" $n "$d/ended.jsonl"
	echo >> "$d/ended.jsonl"
	tk_run bbrplot --trace "$d/ended.jsonl" -o "$d/ended.png"
	expect_status 5
	expect_stderr "bbrplot: $d/ended.jsonl:$((n + 1)): not a JSON record: "
	[ ! -e "$d/mid.png" ] && [ ! -e "$d/ended.png" ]
}

@test "a last line without its newline that parses is a record: the trace draws whole, without a warning" {
	local d=$BATS_TEST_TMPDIR
	head -c -1 "$TRACE" > "$d/nonl.jsonl"
	expect_equal "$(tail -c 1 "$d/nonl.jsonl")" "}" "the trace's last byte"
	tk_run bbrplot --trace "$d/nonl.jsonl" -o "$d/nonl.png" --keep-data "$d/nonl"
	expect_status 0
	expect_equal "$stderr" ""
	bbrplot --trace "$TRACE" -o "$d/all.png" --keep-data "$d/all"
	cmp "$d/nonl/samples.dat" "$d/all/samples.dat"
}

@test "udpdwell's records still being written: the dwell plot draws the complete ones, with one warning" {
	local d=$BATS_TEST_TMPDIR f=$TK_ROOT/tests/fixtures/plots/dwell.jsonl
	pc_cut_lines "$f" 2 "$d/dwell.jsonl"
	tk_run bbrplot dwell "$d/dwell.jsonl" -o "$d/dwell.png"
	expect_status 0
	expect_one_line_stderr
	expect_equal "$stderr" "bbrplot: warning: $d/dwell.jsonl: its last line is incomplete (still being written?): read the 2 complete records before it"
	[ -s "$d/dwell.png" ]
}

@test "a capture given as the trace is named as one, with the option that takes it: exit 5, one line" {
	local d=$BATS_TEST_TMPDIR f kind
	# the pcap magic as a big-endian writer stores it, then anything
	printf '\xa1\xb2\xc3\xd4\x00\x02\x00\x04' > "$d/be.pcap"
	for f in "$PCAP" "$PC_FIX/eth-ns.pcap" "$PC_FIX/eth.pcapng" "$d/be.pcap"; do
		kind=pcap
		[[ $f == *.pcapng ]] && kind=pcapng
		tk_run bbrplot --trace "$f" -o "$d/c.png"
		expect_status 5
		expect_one_line_stderr
		expect_equal "$stderr" "bbrplot: $f looks like a packet capture ($kind), not a bbrtrace trace: give it with --pcap, and the trace (bbrtrace's JSON lines) with --trace"
	done
	tk_run bbrplot dwell "$PCAP" -o "$d/c.png"
	expect_status 5
	expect_one_line_stderr
	expect_equal "$stderr" "bbrplot: $PCAP looks like a packet capture (pcap), not udpdwell's records (udpdwell --format json): bbrplot draws a capture in the dip plot, with --pcap"
	[ ! -e "$d/c.png" ]
}

@test "a capture without the traced flow is bad input: exit 5, the flow named, no picture" {
	local svg=$BATS_TEST_TMPDIR/other.svg
	tk_run bbrplot --trace "$TRACE" --pcap "$PC_FIX/eth-us.pcap" -o "$svg"
	expect_status 5
	expect_stderr "bbrpcap: no flow of $PC_FIX/eth-us.pcap matches --flow 10.77.1.2:45258-10.77.2.2:43100 (it holds 2 flows; \`bbrpcap flows $PC_FIX/eth-us.pcap\` lists them)"
	[ ! -e "$svg" ]
}

@test "data files that cannot be written are a runtime failure (1)" {
	tk_run bbrplot --trace "$TRACE" -o "$BATS_TEST_TMPDIR/k.png" --keep-data "$BATS_TEST_TMPDIR/no/such/dir"
	expect_status 1
	expect_one_line_stderr
	expect_stderr "dir: cannot create: No such file or directory"
}

@test "bbrplot reports gnuplot's own error and exits 1" {
	mkdir -p "$BATS_TEST_TMPDIR/tmpl"
	echo 'plot nosuchfunction(x)' > "$BATS_TEST_TMPDIR/tmpl/sweep.gp"
	BBRPLOT_TEMPLATES=$BATS_TEST_TMPDIR/tmpl tk_run bbrplot sweep "$TK_ROOT/tests/fixtures/plots/sweep.csv" -o "$BATS_TEST_TMPDIR/s.png"
	expect_status 1
	expect_one_line_stderr
	expect_stderr "bbrplot: gnuplot failed on $BATS_TEST_TMPDIR/tmpl/sweep.gp:"
	expect_stderr "undefined function: nosuchfunction"
}

@test "bbrplot without its templates says where it looked" {
	BBRPLOT_TEMPLATES=$BATS_TEST_TMPDIR/nowhere tk_run bbrplot upf "$TK_ROOT/tests/fixtures/upf/sweep-sample.csv" -o "$BATS_TEST_TMPDIR/u.png"
	expect_status 1
	expect_stderr "bbrplot: cannot read the gnuplot template $BATS_TEST_TMPDIR/nowhere/upf.gp (No such file or directory); set BBRPLOT_TEMPLATES"
}
