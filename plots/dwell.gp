# bbrplot dwell: where each UDP socket's datagrams waited, from udpdwell's
# per-socket histograms (MISSION Story 2: is the media server slow, or is the
# network bad?).
#
# bbrplot prepares the data and runs: gnuplot -e "VARIABLES" plots/dwell.gp
#   data, out, term, width, height, ptitle   as in dip.gp
#   nsock       sockets (columns 2 .. nsock+1 of dwell.dat)
#
# dwell.dat: a quoted header ("bucket", then one title per socket: address,
# port, reader, state, avg/p99/max and drops), then one row per bucket of
# udpdwell (upper-inclusive, as Prometheus' le): the share of the socket's
# datagrams in it, in percent.

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
set style histogram clustered gap 1
set style fill solid 1.0 border rgb "#333333"
set boxwidth 0.9
set yrange [0:100]
set ylabel "datagrams (% of the socket's)"
set xlabel "time in the socket's receive queue (udpdwell bucket)"
set grid ytics lc rgb "#e0e0e0"
set key top center vertical box opaque
set xtics nomirror
set tmargin 6

set linetype 1 lc rgb "#d62728"
set linetype 2 lc rgb "#1f77b4"
set linetype 3 lc rgb "#2ca02c"
set linetype 4 lc rgb "#ff7f0e"
set linetype 5 lc rgb "#9467bd"
set linetype 6 lc rgb "#8c564b"
set linetype 7 lc rgb "#e377c2"
set linetype 8 lc rgb "#17becf"

plot for [i=2:nsock+1] data."/dwell.dat" using i:xtic(1) title columnhead(i) lt (i - 1)
