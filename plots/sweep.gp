# bbrplot sweep: repro/sweep.sh's matrix, one bar per run: collapses of BBR's
# estimate per minute, stacked by cause, with the run's mean goodput (right
# axis). With quick ACKs on, the delayed-ACK part should vanish.
#
# bbrplot prepares the data and runs: gnuplot -e "VARIABLES" plots/sweep.gp
#   data, out, term, width, height, ptitle   as in dip.gp
#   ncauses, cause_label[], cause_colour[]   bbrtrace's causes, in its order,
#                                            with their colours (plots/draw.c)
#
# sweep.dat: "RTT, quickack on|off", then collapses per minute for each cause
#            in that order, then goodput_mbps

if (term eq "svg") {
	set terminal svg size width,height font "Sans,11" background rgb "white"
} else {
	set terminal pngcairo size width,height font "Sans,10" background rgb "white"
}
set output out
set termoption noenhanced
set encoding utf8

set title ptitle font ",13"
set style data histograms
set style histogram rowstacked
set style fill solid 1.0 border rgb "#333333"
set boxwidth 0.6
set yrange [0:*]
set ylabel "collapses of BBR's estimate per minute"
set y2label "mean goodput (Mbit/s)"
set y2range [0:*]
set y2tics
set ytics nomirror
set xtics rotate by -20
set grid ytics lc rgb "#e0e0e0"
set key top right box opaque

plot for [c=1:ncauses] data."/sweep.dat" using (column(c + 1)):xtic(1) lc rgb cause_colour[c] title cause_label[c], \
	'' using 0:(column(ncauses + 2)) axes x1y2 with linespoints pt 7 ps 1.8 lw 2 lc rgb "#1f77b4" title "goodput (right axis)"
