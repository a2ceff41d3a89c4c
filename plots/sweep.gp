# bbrplot sweep: repro/sweep.sh's matrix, one bar per run: collapses of BBR's
# estimate per minute, stacked by cause, with the run's mean goodput (right
# axis). With quick ACKs on, the delayed-ACK part should vanish.
#
# bbrplot prepares the data and runs: gnuplot -e "VARIABLES" plots/sweep.gp
#   data, out, term, width, height, ptitle   as in dip.gp
#
# sweep.dat: "RTT, quickack on|off" delayed_ack rate_drop loss_policer other
#            (collapses per minute) goodput_mbps

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

plot data."/sweep.dat" using 2:xtic(1) lc rgb "#d62728" title "delayed ACK", \
	'' using 3 lc rgb "#ff7f0e" title "rate drop", \
	'' using 4 lc rgb "#9467bd" title "loss/policer", \
	'' using 5 lc rgb "#7f7f7f" title "other", \
	'' using 0:6 axes x1y2 with linespoints pt 7 ps 1.8 lw 2 lc rgb "#1f77b4" title "goodput (right axis)"
