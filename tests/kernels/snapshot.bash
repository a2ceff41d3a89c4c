# What a clean system looks like, as text that a suite must leave unchanged
# (tests/kernels/suites.sh compares it before and after every suite).
#
#   tk_snapshot      prints one line per thing a suite could leave behind
#
# Bash builtins and /proc wherever they do the job, and three commands
# (bpftool twice, tc): in an emulated guest each fork or exec costs 60 to
# 250 ms, and this runs twice per suite.

# sorts the array named NAME in place (bash's own comparison): the lists are
# short, and a sort(1) would cost an exec
_tk_sort() {
	local -n arr=$1
	local -a out=()
	local w i
	for w in "${arr[@]}"; do
		for ((i = ${#out[@]}; i > 0; i--)); do
			[[ ${out[i - 1]} > $w ]] || break
			out[i]=${out[i - 1]}
		done
		out[i]=$w
	done
	arr=("${out[@]}")
}

# LABEL NAME: "LABEL: w1 w2 ", the words of the array NAME each followed by a
# space (as tr made them)
_tk_line() {
	local -n words=$2
	local w s=""
	for w in "${words[@]}"; do s+="$w "; done
	printf '%s: %s\n' "$1" "$s"
}

tk_snapshot() {
	local f a b c d cc
	local -a netns=() avail=() progs=() ops=() qdiscs=() procs=()
	for f in /run/netns/*; do [ -e "$f" ] && netns+=("${f##*/}"); done
	read -r cc < /proc/sys/net/ipv4/tcp_congestion_control
	read -ra avail < /proc/sys/net/ipv4/tcp_available_congestion_control
	# "ID: TYPE  name NAME  tag ..."; the lines under each start with a key
	while read -r a b c d _; do
		[[ $b =~ ^(tracing|kprobe|struct_ops|tracepoint|raw_tracepoint|sched_cls|perf_event)$ ]] &&
			[ "$c" = name ] && progs+=("$d")
	done <<< "$(bpftool prog show 2> /dev/null)"
	while read -r a b _; do [ -n "$b" ] && ops+=("$b"); done <<< "$(bpftool struct_ops show 2> /dev/null)"
	while read -r a b _; do [ -n "$b" ] && qdiscs+=("$b"); done <<< "$(tc qdisc show dev lo)"
	# a process that exits while this reads is not there: its read fails
	for f in /proc/[0-9]*/comm; do
		{ read -r c < "$f"; } 2> /dev/null || continue
		[[ $c =~ ^(bbrtrace|bbrtrace-guard|udpdwell|iperf3|tcpdump|pushsim|sfu_echo|rtpsend|upfbench|bbrpcap|qa-.*|nginx|ffmpeg)$ ]] &&
			procs+=("$c")
	done
	for a in netns avail progs ops procs; do _tk_sort "$a"; done
	_tk_line netns netns
	echo "default cc: $cc"
	_tk_line "available cc" avail
	_tk_line "bpf programs" progs
	_tk_line struct_ops ops
	_tk_line "qdiscs on lo" qdiscs
	_tk_line processes procs
}
