#!/usr/bin/env bats
# bbrpcap against tshark and tcptrace on captures made here by tcpdump from
# real flows between two namespaces: packets and bytes exactly, throughput per
# bin within 1%, ACK delays and the data frame each ACK covers.

load helpers
load bbrpcap_helpers

setup_file() {
	requires root netns iperf3 tcpdump jq
	NS=pc-$BATS_ROOT_PID-ag
	tk_routed_trio "$NS"
	A=$NS-a B=$NS-b
	D=$BATS_FILE_TMPDIR
	pc_iperf_server "$B" 42001
	pc_iperf_server "$B" 42002
	# Ethernet at the sender; Linux cooked (SLL2, with packet types) at the receiver
	pc_tcpdump_start "$A" "$D/snd.pcap" -i veth0 -s 128 tcp
	local snd=$PC_TCPDUMP_PID
	pc_tcpdump_start "$B" "$D/rcv.pcap" -i any -y LINUX_SLL2 -s 128 tcp
	local rcv=$PC_TCPDUMP_PID
	# A sends to B for 2 s; at the same time B sends to A (iperf3 -R). The
	# rates keep tcpdump from dropping on a busy 2-core machine.
	ip netns exec "$A" timeout 30 iperf3 -c 10.202.2.2 -p 42001 -t 2 -b 400M -J > "$D/fwd.json" &
	local c1=$!
	ip netns exec "$A" timeout 30 iperf3 -c 10.202.2.2 -p 42002 -t 2 -b 100M -R -J > "$D/rev.json"
	wait $c1
	pc_tcpdump_stop "$snd"
	pc_tcpdump_stop "$rcv"
	export A B D
}

teardown_file() {
	tk_cleanup
}

# one tc in namespace $A, changes on its stdin (TC[1]), its output on TC[0]
tc_start() {
	coproc TC { exec 3>&-; ip netns exec "$A" stdbuf -oL tc -batch - 2>&1; }
}

# class 1:10's rate to $1 (as tc shows it: 2Mbit), back once tc shows it
tc_rate() {
	local line
	echo "class change dev veth0 parent 1: classid 1:10 htb rate $1" >&"${TC[1]}"
	echo "class show dev veth0 classid 1:10" >&"${TC[1]}"
	while read -r -t 10 line <&"${TC[0]}"; do
		[[ $line == *" rate $1 "* ]] && return 0
	done
	echo "# tc did not show rate $1 within 10 s (last: ${line:-nothing})"
	return 1
}

tc_stop() {
	local pid=$TC_PID
	exec {TC[1]}>&-
	wait "$pid"
}

# the data flow of the iperf3 test on PORT, from bbrpcap flows: "id a b"
data_flow() {
	bbrpcap flows -f json "$1" | jq -r --arg p ":$2" 'select(.type == "flow" and (.b | endswith($p)) and
		.data_bytes_ab + .data_bytes_ba > 1000000) | "\(.flow) \(.a) \(.b)"'
}

# each flow of bbrpcap flows FILE as one line: the fields named, in order
flow_lines() {
	local f=$1
	shift
	bbrpcap flows -f json "$f" | jq -r --argjson k "$(printf '%s\n' "$@" | jq -R . | jq -s .)" \
		'select(.type == "flow") | [.[$k[]]] | map(tostring) | join(" ")'
}

@test "flows: packets and bytes per direction equal tshark's io,stat, every flow, at both ends" {
	requires tshark
	local f flows
	for f in snd rcv; do
		mapfile -t flows < <(flow_lines "$D/$f.pcap" flow a b pkts_ab wire_bytes_ab pkts_ba wire_bytes_ba)
		expect_cmp "${#flows[@]}" -eq 4 "flows bbrpcap lists" # two iperf3 tests: control and data each
		pc_flows_agree "$D/$f.pcap" "${flows[@]}"
	done
}

@test "flows: frames and bytes equal tshark's conv,tcp" {
	requires tshark
	local conv=$D/conv.txt
	tshark -r "$D/snd.pcap" -q -z conv,tcp 2>/dev/null > "$conv"
	flow_lines "$D/snd.pcap" flow a b pkts_ab wire_bytes_ab pkts_ba wire_bytes_ba | while read -r id a b pab bab pba bba; do
		# tshark: A <-> B | frames bytes (B to A) | frames bytes (A to B) | total ...
		local line want
		line=$(grep -F "$a " "$conv" | grep -F "$b ")
		want="$a <-> $b $pba $(pc_tshark_size "$bba") $pab $(pc_tshark_size "$bab") $((pab + pba)) $(pc_tshark_size $((bab + bba)))"
		[ "$(echo "$line" | awk '{ print $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 }')" = "$want" ] ||
			{ echo "# tshark: $line"; echo "# wanted: $want"; false; }
	done
}

@test "flows: packets, data bytes, unique bytes and throughput agree with tcptrace -l" {
	requires tcptrace
	local tt=$D/tcptrace.txt n=0
	tcptrace -l "$D/snd.pcap" 2>/dev/null | awk '
		/^TCP connection [0-9]+:/ { c++; h = 0 }
		/^\thost [a-z]+:/ { h++; k = split($3, x, ":"); port[c, h] = x[k] }
		/total packets:/ && NF == 6 { tp1[c] = $3; tp2[c] = $6 }
		/unique bytes sent:/ { u1[c] = $4; u2[c] = $8 }
		/actual data bytes:/ { d1[c] = $4; d2[c] = $8 }
		/throughput:/ { t1[c] = $2; t2[c] = $5 }
		END { for (i = 1; i <= c; i++) print port[i, 1], port[i, 2], tp1[i], tp2[i], u1[i], u2[i], d1[i], d2[i], t1[i], t2[i] }' > "$tt"
	expect_cmp "$(wc -l < "$tt")" -eq 4 "connections tcptrace lists"
	while read -r id a b pab dab uab tab pba dba uba tba; do
		read -r _ _ tp1 tp2 u1 u2 d1 d2 t1 t2 < <(grep "^${a##*:} ${b##*:} " "$tt")
		[ "$pab $pba $uab $uba $dab $dba" = "$tp1 $tp2 $u1 $u2 $d1 $d2" ] ||
			{ echo "# flow $id: tcptrace $tp1 $tp2 $u1 $u2 $d1 $d2, bbrpcap $pab $pba $uab $uba $dab $dba"; false; }
		# tcptrace prints whole bytes per second; ours is bit/s
		awk -v o="$tab" -v t="$t1" 'BEGIN { e = o / 8 - t; if (e < 0) e = -e; exit !(e <= t / 100 + 1) }'
		awk -v o="$tba" -v t="$t2" 'BEGIN { e = o / 8 - t; if (e < 0) e = -e; exit !(e <= t / 100 + 1) }'
		n=$((n + 1))
	done < <(flow_lines "$D/snd.pcap" flow a b pkts_ab data_bytes_ab unique_bytes_ab throughput_ab_bps \
		pkts_ba data_bytes_ba unique_bytes_ba throughput_ba_bps)
	expect_cmp "$n" -eq 4 "flows compared with tcptrace"
}

# compare bbrpcap throughput bins of one direction with tshark io,stat rows
check_bins() {
	local file=$1 bin_ms=$2 sport=$3 dport=$4
	local ours=$D/bins-$bin_ms.csv ts=$D/iostat-$bin_ms.txt secs
	secs=$(awk -v m="$bin_ms" 'BEGIN { printf "%g", m / 1000 }')
	bbrpcap throughput --format csv --bin-ms "$bin_ms" --flow ":$sport-:$dport" "$file" |
		awk -F, -v s=":$sport" 'NR == 1 || $2 ~ s"$"' > "$ours"
	tshark -r "$file" -q -z io,stat,"$secs","tcp.srcport==$sport&&tcp.dstport==$dport" 2>/dev/null |
		awk -F'|' '/<>/ { gsub(/ /, "", $3); gsub(/ /, "", $4); print i++, $3, $4 }' > "$ts"
	expect_cmp "$(wc -l < "$ours")" -gt 10 "lines of bbrpcap's bins"
	awk -v bin="$secs" '
		NR == FNR { fr[$1] = $2; by[$1] = $3; next }
		FNR == 1 { for (k = 1; k <= NF; k++) col[$k] = k; next }
		{
			i = sprintf("%.0f", $col["t_s"] / bin); seen[i] = 1; n++
			if ($col["frames"] != fr[i] || $col["wire_bytes"] != by[i]) {
				printf "# bin %d: bbrpcap %s frames %s bytes, tshark %s %s\n", i, $col["frames"], $col["wire_bytes"], fr[i], by[i]; bad++
			}
			want = by[i] * 8 / bin; got = $col["wire_bps"]; e = got - want; if (e < 0) e = -e
			if (e > want / 100 + 1) { printf "# bin %d: %s bit/s, tshark %s\n", i, got, want; bad++ }
		}
		END {
			for (i in fr) if (fr[i] > 0 && !(i in seen)) { printf "# tshark bin %d (%s frames) missing\n", i, fr[i]; bad++ }
			exit bad > 0 || n < 10
		}' FS=' ' "$ts" FS=',' "$ours"
}

@test "throughput, 100 ms bins: frames and bytes per bin equal tshark io,stat, rate within 1%" {
	requires tshark
	read -r _ a b < <(data_flow "$D/snd.pcap" 42001)
	check_bins "$D/snd.pcap" 100 "${a##*:}" "${b##*:}"
}

@test "throughput, 10 ms bins: frames and bytes per bin equal tshark io,stat, rate within 1%" {
	requires tshark
	read -r _ a b < <(data_flow "$D/snd.pcap" 42001)
	check_bins "$D/snd.pcap" 10 "${a##*:}" "${b##*:}"
}

@test "throughput of the reverse flow (B to A) agrees with tshark io,stat" {
	requires tshark
	read -r _ a b < <(data_flow "$D/snd.pcap" 42002)
	check_bins "$D/snd.pcap" 100 "${b##*:}" "${a##*:}"
}

@test "throughput: ACKed bytes add up to the unique bytes sent" {
	local csv=$D/tp.csv
	read -r id a b < <(data_flow "$D/snd.pcap" 42001)
	bbrpcap throughput --format csv --flow "$id" "$D/snd.pcap" | awk -F, -v s="$a" 'NR == 1 || $2 == s' > "$csv"
	local acked unique
	acked=$(awk -F, -v c="$(pc_csv_col "$csv" acked_bytes)" 'NR > 1 { n += $c } END { print n }' "$csv")
	unique=$(bbrpcap flows -f json --flow "$id" "$D/snd.pcap" | jq 'select(.type == "flow") | .unique_bytes_ab')
	# iperf3's 37-byte cookie, then what it says it sent, and less than one
	# more of its 128 KiB writes: a write the test's end caught part way
	# goes on the wire uncounted (once: 99,876,864 counted, 762 writes, and
	# 130,320 bytes of the 763rd in the capture); every byte is ACKed in the
	# capture. On a mismatch, the witnesses: iperf3's two counts, and the
	# packets the kernel dropped before tcpdump read them
	local sent extra write=131072 # iperf3's TCP write: 128 KiB (-l's default)
	sent=$(jq .end.sum_sent.bytes "$D/fwd.json")
	extra=$((unique - 37 - sent))
	[ "$extra" -ge 0 ] && [ "$extra" -lt "$write" ] ||
		{ echo "# unique $unique; iperf3 sent $sent, received $(jq .end.sum_received.bytes "$D/fwd.json");" \
			"tcpdump dropped $(pc_tcpdump_dropped "$D/snd.pcap")"; false; }
	[ "$acked" -eq "$unique" ] || { echo "# acked $acked, unique $unique"; false; }
}

@test "acks: an Ethernet capture at the sender says sender (from the TTLs of a routed path)" {
	read -r id a _ < <(data_flow "$D/snd.pcap" 42001)
	tk_run bbrpcap acks -f json --flow "$id" "$D/snd.pcap"
	expect_status 0
	jq -e --argjson id "$id" --arg a "$a" 'select(.type == "ack_summary") | .flow == $id and .sender == $a and
		.receiver == "10.202.2.2:42001" and .side == "sender" and .side_basis == "ttl"' <<<"$output" ||
		{ tk_dump "not sender/ttl"; false; }
}

@test "acks: a cooked capture at the receiver says receiver (from the packet types)" {
	read -r id a _ < <(data_flow "$D/rcv.pcap" 42001)
	tk_run bbrpcap acks -f json --flow "$id" "$D/rcv.pcap"
	expect_status 0
	jq -e --argjson id "$id" --arg a "$a" 'select(.type == "ack_summary") | .flow == $id and .sender == $a and
		.receiver == "10.202.2.2:42001" and .side == "receiver" and .side_basis == "packet_type"' <<<"$output" ||
		{ tk_dump "not receiver/packet_type"; false; }
}

@test "acks --side overrides the detection and says so" {
	read -r id a _ < <(data_flow "$D/rcv.pcap" 42001)
	tk_run bbrpcap acks -f json --side sender --flow "$id" "$D/rcv.pcap"
	jq -e --argjson id "$id" 'select(.type == "ack_summary") | .flow == $id and .side == "sender" and
		.side_basis == "option"' <<<"$output"
}

@test "acks: the ACK delay is shorter at the receiver than at the sender (no round trip)" {
	local s r
	read -r id _ _ < <(data_flow "$D/snd.pcap" 42001)
	s=$(bbrpcap acks --format json --flow "$id" "$D/snd.pcap" | jq -r 'select(.type == "ack_summary" and .acks > 100) | .delay_p50_us')
	read -r id _ _ < <(data_flow "$D/rcv.pcap" 42001)
	r=$(bbrpcap acks --format json --flow "$id" "$D/rcv.pcap" | jq -r 'select(.type == "ack_summary" and .acks > 100) | .delay_p50_us')
	echo "# p50 delay: sender side $s us, receiver side $r us"
	awk -v s="$s" -v r="$r" 'BEGIN { exit !(r + 0 < s + 0) }'
}

@test "acks --each: the covered data frame and the delay agree with tshark's acks_frame and ack_rtt" {
	requires tshark jq
	local ts=$D/ackrtt.txt ours=$D/acks.txt
	tshark -r "$D/snd.pcap" -Y "tcp.analysis.ack_rtt && tcp.srcport==42001" -T fields \
		-e frame.number -e tcp.analysis.acks_frame -e tcp.analysis.ack_rtt 2>/dev/null > "$ts"
	bbrpcap acks --each --format json --flow :42001 "$D/snd.pcap" |
		jq -r 'select(.type == "ack" and .delay_us != null and .advancing) | "\(.frame) \(.data_frame) \(.delay_us)"' > "$ours"
	# the same data frame and the same delay (to the microsecond) for at least
	# 99% of the ACKs both name; they differ only where a retransmission made
	# newer data (bbrpcap) than the segment ending at the ACK number (tshark)
	awk 'FILENAME == ARGV[1] { f[$1] = $2; r[$1] = $3 * 1e6; next }
		($1 in f) { n++; d = r[$1] - $3; if (d < 0) d = -d; if (f[$1] == $2 && d < 1) same++ }
		END { printf "# %d of %d ACKs agree\n", same, n; exit !(n > 100 && same >= n * 0.99) }' "$ts" "$ours"
}

# one round: an iperf3 flow through an htb class of 200 Mbit/s, cut to 2
# Mbit/s for 0.5 s; its capture in PCAP, its sender's bins in CSV; sets
# t0..t3, the clock before and after the cut and the restore
dip_round() {
	local f=$1 csv=$2 c id a
	ip netns exec "$A" tc qdisc add dev veth0 root handle 1: htb default 10
	ip netns exec "$A" tc class add dev veth0 parent 1: classid 1:10 htb rate 200mbit
	pc_iperf_server "$B" 42010 || return 1
	pc_tcpdump_start "$B" "$f" -i veth0 -s 128 tcp port 42010 || return 1
	ip netns exec "$A" timeout 20 iperf3 -c 10.202.2.2 -p 42010 -t 4 >/dev/null &
	c=$!
	# The moving median's 21 bins (2.1 s) around each cut bin must hold more
	# bins at the full rate than low ones. Cut to 2 Mbit/s, the wire brings a
	# 64 kB GSO frame every 260 ms (bins of 0 and 5.2 Mbit/s), and after the
	# restore BBR's pacing clock, set at that rate, holds the next frame for
	# up to 0.3 s more: a 0.5 s cut keeps the wire low for about 0.8 s, 8 bins
	# of 21 (a 0.8 s cut kept it low for 1.1 s, and a median of such bins
	# leaves a bin with a frame no dip). 1.2 s at the full rate before the
	# cut, counted from the data's start, not iperf3's launch, and 2 s after.
	# Each change bites between the clock read before it and the one after,
	# and both must bite fast: a cut longer than 1 s leaves more low bins than
	# high ones in the median and marks none. One tc, started in the namespace
	# beforehand (and shown ready by a change to the rate it has), takes the
	# changes on stdin and shows the class after each: beside a busy core,
	# `ip netns exec tc` took 485 and 743 ms a change, and the wire stayed low
	# 1.6 s; with 15 runnable tasks on the 2 cores even the one tc took 666
	# and 568 ms (low for 1.9 s), and the caller does the round again.
	tc_start
	tc_rate 200Mbit || return 1
	tk_wait_for "ip netns exec '$A' ss -tinH dst 10.202.2.2 dport = :42010 | grep -q 'bytes_acked:[0-9]\{6,\}'" 10 || return 1
	sleep 1.2
	t0=$(date +%s.%N)
	tc_rate 2Mbit || return 1
	t1=$(date +%s.%N)
	sleep 0.5
	t2=$(date +%s.%N)
	tc_rate 200Mbit || return 1
	t3=$(date +%s.%N)
	tc_stop
	awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" \
		'BEGIN { printf "# tc took %.1f ms to cut the rate, %.1f ms to restore it\n", (b - a) * 1e3, (d - c) * 1e3 }'
	wait $c
	pc_tcpdump_stop
	ip netns exec "$A" tc qdisc del dev veth0 root
	read -r id a _ < <(data_flow "$f" 42010)
	[ -n "$id" ] || { echo "# no data flow in $f"; return 1; }
	bbrpcap throughput --format csv --flow "$id" "$f" | awk -F, -v s="$a" 'NR == 1 || $2 == s' > "$csv"
}

# the most bins under 50 Mbit/s (a quarter of the class's rate) in CSV among
# the 21 centred bins of a bin the cut held whole (from T1 + 0.1 to T2): the
# median a throttled bin is judged against is low once more than 10 are
low_in_window() {
	awk -F, -v t1="$2" -v t2="$3" '
		NR == 1 { for (k = 1; k <= NF; k++) col[$k] = k; next }
		{ t[++n] = $col["epoch_s"]; low[n] = $col["data_bps"] < 50e6 }
		END {
			for (i = 1; i <= n; i++) {
				if (t[i] < t1 + 0.1 || t[i] + 0.1 > t2) continue
				c = 0
				for (j = (i > 10 ? i - 10 : 1); j <= i + 10 && j <= n; j++) c += low[j]
				if (c > best) best = c
			}
			print best + 0
		}' "$1"
}

@test "throughput marks a dip where the sender was throttled, and elsewhere only where the wire dipped" {
	requires tc
	local t0 t1 t2 t3 csv=$D/dip.csv round low
	# the dip is relative to a 21-bin median: when more than 10 of a
	# throttled bin's 21 are low, the median itself is low and the bin is no
	# dip by the definition. The test's premise, not the tool's fault: a
	# round where that happens is done again, up to 3 rounds. The low bins
	# come from the cut (tc slow to bite on a loaded machine keeps the wire
	# low longer) and from the flow's own stalls beside it (a run beside
	# another test file: bins of 0 and 60 Mbit/s 0.3 and 0.6 s before the
	# cut, with 10 low bins around it, left 2 of 6 throttled bins unmarked)
	for round in 1 2 3; do
		dip_round "$D/dip$round.pcap" "$csv" || return 1
		low=$(low_in_window "$csv" "$t1" "$t2")
		echo "# round $round: up to $low of a throttled bin's 21 bins were under 50 Mbit/s"
		[ "$low" -le 10 ] && break
	done
	[ "$low" -le 10 ] || { echo "# 3 rounds kept the wire low around the cut for over 1 s: the machine is too slow for this test"; false; }
	# Outside the cut the flow runs free, and on a loaded machine the wire
	# itself can dip there (beside the kernel matrix: 15 to 72 Mbit/s bins in
	# the flow's first 0.7 s): a bin there must be marked
	# exactly when its data bytes are under half the centred 21-bin median
	# of the bins (the dip's definition, recomputed here from the per-bin
	# bytes that the tshark tests above check).
	awk -F, -v t0="$t0" -v t1="$t1" -v t2="$t2" -v t3="$t3" '
		NR == 1 { for (k = 1; k <= NF; k++) col[$k] = k; next }
		{ t[++n] = $col["epoch_s"]; dip[n] = $col["dip"]; rate[n] = $col["data_bps"]; med[n] = $col["median_bps"]
		  by[n] = $col["data_bytes"]
		  line[n] = sprintf("# bin at %+.3f s from the cut: %s bit/s, median %s, dip %s", t[n] - t0, rate[n], med[n], dip[n]) }
		function median(i,   lo, hi, k, j, m, a, x) {
			lo = i - 10 < 1 ? 1 : i - 10; hi = i + 10 > n ? n : i + 10; m = 0
			for (j = lo; j <= hi; j++) { x = by[j]; for (k = m; k > 0 && a[k] > x; k--) a[k + 1] = a[k]; a[k + 1] = x; m++ }
			return m % 2 ? a[(m + 1) / 2] : int((a[m / 2] + a[m / 2 + 1]) / 2)
		}
		END {
			for (i = 1; i <= n; i++) {
				# inside: the rate was cut for the whole bin
				if (t[i] >= t1 + 0.1 && t[i] + 0.1 <= t2) { inside++; if (dip[i] == 1) hit++; else printf "# no dip at %f: %s bit/s against a median of %s\n", t[i], rate[i], med[i] }
				# outside, well clear of the edges and of the first and last bins
				else if ((t[i] + 0.1 < t0 - 0.1 || t[i] > t3 + 0.5) && i > 3 && i < n) {
					outside++; m = median(i); real = m > 0 && by[i] < 0.5 * m
					if (real) dips++
					if (dip[i] != real) { printf "# bin at %f: dip %s, but %s bytes against a median of %s\n", t[i], dip[i], by[i], m; wrong++ }
				}
			}
			printf "# the flow from %.2f s before the cut; throttled bins: %d of %d marked; elsewhere: %d of %d marked, as the wire dipped\n", t0 - t[1], hit, inside, dips, outside
			# a 0.5 s cut holds 3 or 4 whole bins after the later clock read
			ok = inside >= 3 && hit == inside && outside >= 5 && wrong == 0
			for (i = 1; !ok && i <= n; i++) print line[i]
			exit !ok
		}' "$csv"
}
