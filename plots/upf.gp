# bbrplot upf: cycles per packet against the number of sessions, one line per
# design (upfbench's sweep; MISSION Story 3). The dashed line is twice the
# memory floor: a packet of the split design needs two dependent random cache
# lines, so no design can beat it once the table is far beyond the L3.
#
# bbrplot prepares the data and runs: gnuplot -e "VARIABLES" plots/upf.gp
#   data, out, term, width, height, ptitle   as in dip.gp
#   labels        the designs, blank-separated, in upf.dat's block order
#   floor_cycles  upfbench's cycles per DRAM access at full parallelism (0: none)
#
# upf.dat: one block per label: sessions cycles_per_pkt, by sessions.

if (term eq "svg") {
	set terminal svg size width,height font "Sans,11" background rgb "white"
} else {
	set terminal pngcairo size width,height font "Sans,10" background rgb "white"
}
set output out
set termoption noenhanced
set encoding utf8

set title ptitle font ",13"
set logscale x 10
set logscale y 10
set format x "%.0s%c"
set xlabel "sessions (log)"
set ylabel "cycles per packet (log)"
set grid xtics ytics mxtics mytics lc rgb "#e0e0e0", lc rgb "#f2f2f2"
set key top left box opaque

set linetype 1 lc rgb "#d62728" lw 2 pt 7
set linetype 2 lc rgb "#ff7f0e" lw 2 pt 5
set linetype 3 lc rgb "#2ca02c" lw 2 pt 9
set linetype 4 lc rgb "#1f77b4" lw 2 pt 11
set linetype 5 lc rgb "#9467bd" lw 2 pt 13
set linetype 6 lc rgb "#8c564b" lw 2 pt 15
set linetype 7 lc rgb "#e377c2" lw 2 pt 4
set linetype 8 lc rgb "#17becf" lw 2 pt 6

plot for [i=1:words(labels)] data."/upf.dat" index (i - 1) using 1:2 with linespoints lt i ps 1.3 \
		title word(labels, i), \
	(floor_cycles > 0 ? 2 * floor_cycles : NaN) with lines dt 2 lw 1.5 lc rgb "#555555" \
		title (floor_cycles > 0 ? sprintf("2 x memory floor (%.1f cycles/access)", floor_cycles) : "")
