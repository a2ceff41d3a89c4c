# bbrplot's dip plot: what the wire showed and what BBR believed, on one time axis.
#
# bbrplot prepares the data and runs: gnuplot -e "VARIABLES" plots/dip.gp
#   data        directory with samples.dat, collapses.dat, need.dat, stalls.dat,
#               demand.dat, tput.dat and gaps.dat
#   out, term   output file; "pngcairo" or "svg"
#   width, height   pixels
#   ptitle      the plot's title
#   have_pcap   1 when tput.dat holds the capture's throughput
#   bin_ms      the capture's bin width
#   ncauses, cause_label[], cause_n[], cause_thr[], cause_colour[], cause_pt[]
#               the collapse causes in bbrtrace's order (lib/trace.h), with
#               their legend words, their counts, the throttling ones among
#               them, and how each is drawn (plots/draw.c's cause_style)
#   nstalls, stall_label[], stall_n[], stall_s[], stall_colour[]
#               the sender's stall causes (lib/trace.h), with their counts,
#               their time in s, and their bars' colours
#   gap_ms, gap_n[], gap_s[], gap_max_s[]
#               the wire's silences drawn (--gap-ms) and, by state (idle,
#               in_flight), their count, their time in s and the longest
#   have_need   1 when need.dat holds the pacing the flow needed at collapses
#   have_demand 1 when demand.dat holds the demand over the run
#   headroom, window_ms   an app-limited flow needs headroom x its demand,
#               its delivery over the last window_ms (lib/demand.h)
#   floor_mbps  the rate axis' floor: collapses below it are drawn at it (log axis)
#   ceiling_mbps  its top; 0: fitted to the data
#   interval_floor_us   intervals of 0 us are drawn at it (log axis)
#   xmin, xmax  the time axis of both panels, seconds from time 0 (the earlier
#               of the trace's first sample and the capture's first frame)
#
# samples.dat:   t_s bw_mbps pacing_mbps rcv_interval_us snd_interval_us app_limited
# collapses.dat: one block per cause, in that order: t_s bw_mbps bw_prev_mbps throttling
# need.dat:      t_s need_mbps demand_mbps, at each collapse
# demand.dat:    t_s demand_mbps need_mbps window_s app_limited, every 10 ms
#                of samples; need_mbps is NaN while the flow had more to send
# stalls.dat:    one block per stall cause, in that order: t_s duration_s
# gaps.dat:      the wire's silences, one block per state (idle, in_flight): t_s duration_s
# tput.dat:      t_s sent_mbps acked_mbps dip

if (term eq "svg") {
	set terminal svg size width,height font "Sans,11" background rgb "white"
} else {
	set terminal pngcairo size width,height font "Sans,10" background rgb "white"
}
set output out
set termoption noenhanced
set encoding utf8

# colours: the wire in blues/greens, BBR's belief in black, causes as in bbrtrace's verdict
c_sent   = "#9cc3ec"
c_acked  = "#2ca02c"
c_bw     = "#000000"
c_pacing = "#8c564b"
# each cause's colour and point type come from bbrplot (cause_colour[], cause_pt[])
max(a, b) = a > b ? a : b
c_rcv    = "#d62728"
c_snd    = "#1f77b4"
c_need   = "#8b0000"
c_demand = "#555555"
# a collapse that throttled the flow: large, in a black ring; a harmless one small
ps_thr   = 2.4
ps_ring  = 3.6
ps_harm  = 1.0
# the stalls: bars just above the rate axis' floor, each as long as it held
stall_y  = floor_mbps * 1.8
# the wire's silences: bars above the stalls; light when nothing was in
# flight (idle), dark when data waited for its ACK (unACKed)
gap_y    = floor_mbps * 3.2
array gap_colour[2] = ["#bdbdbd", "#252525"]
array gap_label[2] = ["idle", "unACKed"]

set multiplot title ptitle font ",13"
# both panels share the time axis: the same margins, the legends beside them
set lmargin at screen 0.08
set rmargin at screen 0.70
set xrange [xmin:xmax]
set grid xtics ytics lc rgb "#e0e0e0"

# --- upper panel: rates -----------------------------------------------------------------
set origin 0, 0.32
set size 1, 0.63
set bmargin 0.5
set tmargin 1
set logscale y 10
set format y "%g"
if (ceiling_mbps > 0) { set yrange [floor_mbps:ceiling_mbps] } else { set yrange [floor_mbps:*] }
set ylabel "rate (Mbit/s, log)"
set format x ""
unset xlabel
set key at screen 0.995, screen 0.92 right top vertical Left reverse box samplen 2 spacing 1.1 font ",9"
plot \
	data."/tput.dat" using 1:2 with steps lw 4 lc rgb c_sent \
		title (have_pcap ? sprintf("wire: data sent (%g ms bins)", bin_ms) : ""), \
	data."/tput.dat" using 1:3 with steps lw 1.2 dt 3 lc rgb c_acked \
		title (have_pcap ? "wire: data ACKed (dotted, over sent)" : ""), \
	data."/samples.dat" using 1:3 with lines lw 1.2 dt 2 lc rgb c_pacing title "BBR pacing rate", \
	data."/samples.dat" using 1:2 with steps lw 2.2 lc rgb c_bw title "BBR bw (max-bw filter)", \
	data."/demand.dat" using 1:2 with lines lw 1.2 dt 3 lc rgb c_demand \
		title (have_demand ? sprintf("demand: delivered in last %g s", window_ms / 1000.0) : ""), \
	data."/demand.dat" using 1:3 with lines lw 1.6 dt (8, 4) lc rgb c_need \
		title (have_demand ? sprintf("need: %g x demand (under: throttled)", headroom) : ""), \
	data."/need.dat" using 1:2 with points pt 1 ps 1.2 lw 1.2 lc rgb c_need \
		title (have_need ? "need at each collapse (bbrtrace)" : ""), \
	for [c=1:nstalls] data."/stalls.dat" index (c - 1) using 1:(stall_y):2:(0) with vectors nohead \
		lw 7 lc rgb stall_colour[c] \
		title (stall_n[c] > 0 ? sprintf("stall: %s (%d, %.2f s)", stall_label[c], stall_n[c], stall_s[c]) : ""), \
	for [k=1:2] data."/gaps.dat" index (k - 1) using 1:(gap_y):2:(0) with vectors nohead lw 5 \
		lc rgb gap_colour[k] \
		title (gap_n[k] > 0 ? sprintf("silent >=%g ms, %s: %d (max %.2f s)", gap_ms, gap_label[k], \
			gap_n[k], gap_max_s[k]) : ""), \
	NaN with points pt -1 lc rgb "white" title "collapses of the estimate, by cause:", \
	for [c=1:ncauses] data."/collapses.dat" index (c - 1) using 1:($4 > 0 ? max(floor_mbps, $2) : NaN) with points \
		pt 6 ps ps_ring lw 1.5 lc rgb "black" notitle, \
	for [c=1:ncauses] data."/collapses.dat" index (c - 1) using 1:($4 > 0 ? max(floor_mbps, $2) : NaN) with points \
		pt cause_pt[c] ps ps_thr lc rgb cause_colour[c] \
		title sprintf("%s: %d (%d throttled)", cause_label[c], cause_n[c], cause_thr[c]), \
	for [c=1:ncauses] data."/collapses.dat" index (c - 1) using 1:($4 > 0 ? NaN : max(floor_mbps, $2)) with points \
		pt cause_pt[c] ps ps_harm lc rgb cause_colour[c] notitle, \
	NaN with points pt 6 ps 2 lw 1.5 lc rgb "black" title "ringed: a collapse that throttled"

# --- lower panel: the rate sample's two intervals; a delayed ACK is rcv >> snd ----------
set origin 0, 0
set size 1, 0.33
set tmargin 0.5
set bmargin 3.5
set logscale y 10
unset yrange
# a fixed rate axis (--rate-range) is for comparing plots: the intervals' axis
# is fixed then too, from the floor to 10 s (an RTO's order), else fitted
if (ceiling_mbps > 0) { set yrange [interval_floor_us:1e7] } else { set yrange [*:*] }
set ylabel sprintf("interval (us, log; 0 drawn at %d)", interval_floor_us)
set format x "%g"
set xlabel "time (s since the trace's first sample or the capture's first frame, whichever came first)"
set key at screen 0.995, screen 0.30 right top vertical Left reverse box samplen 2 font ",9"
plot \
	data."/samples.dat" using 1:4 with points pt 7 ps 0.45 lc rgb c_rcv \
		title "rcv_interval_us", \
	data."/samples.dat" using 1:5 with points pt 7 ps 0.45 lc rgb c_snd \
		title "snd_interval_us"

unset multiplot
