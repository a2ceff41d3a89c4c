#!/usr/bin/env bash
# Wait until a running tcpdump has written every packet the kernel gave it.
#
#   scripts/tcpdump-drain.sh mark PID STDERR_FILE          after "listening on"
#   scripts/tcpdump-drain.sh wait PID STDERR_FILE [SECONDS]  before stopping it
#
# tcpdump lags behind on a slow (e.g. emulated) CPU, and the packets it has
# not handled when it is stopped are lost from the capture. On SIGUSR1 it
# prints "N packets captured, M packets received by filter, K packets dropped
# by kernel" to its stderr (STDERR_FILE). Packets that reached the socket
# before its filter was set count in M but are never captured (libpcap
# filters them out), so `mark`, before any traffic of interest, records that
# gap G; `wait` asks about every 0.2 s until N + K + G >= M, for at most
# SECONDS of wall time (default 10). Exit status: 0 done (or tcpdump already
# gone), 1 not drained in time or no count (one line on stderr), 2 bad usage.
set -uo pipefail
usage() { echo "usage: tcpdump-drain.sh mark|wait PID STDERR_FILE [SECONDS]" >&2; exit 2; }
[ $# -ge 3 ] && [[ $2 =~ ^[0-9]+$ ]] && [[ ${4:-10} =~ ^[0-9]+$ ]] || usage
cmd=$1 pid=$2 log=$3 secs=${4:-10}
re='^tcpdump: ([0-9]+) packets? captured, ([0-9]+) packets? received by filter, ([0-9]+) packets? dropped'

# the first or the last ($1) count line in the log: sets cap, recv and drop
count() {
	local l line=""
	while IFS= read -r l; do
		[[ $l =~ $re ]] || continue
		line=$l
		[ "$1" = first ] && break
	done < "$log"
	[[ $line =~ $re ]] || return 1
	cap=${BASH_REMATCH[1]} recv=${BASH_REMATCH[2]} drop=${BASH_REMATCH[3]}
}

case $cmd in
mark)
	kill -USR1 "$pid" 2>/dev/null || { echo "tcpdump-drain.sh: no tcpdump $pid" >&2; exit 1; }
	# bounded by time: each round costs far more than 0.1 s on an emulated CPU
	while [ "$SECONDS" -le "$secs" ]; do
		count first && exit 0
		sleep 0.1
	done
	echo "tcpdump-drain.sh: tcpdump $pid printed no count in $secs s" >&2
	exit 1
	;;
wait)
	gap=0
	count first && gap=$((recv - cap - drop))
	while [ "$SECONDS" -le "$secs" ]; do
		kill -USR1 "$pid" 2>/dev/null || exit 0
		sleep 0.2
		count last && [ $((cap + drop + gap)) -ge "$recv" ] && exit 0
	done
	echo "tcpdump-drain.sh: tcpdump $pid had not written every packet after $secs s" \
		"(${cap:-?} captured, ${recv:-?} received, ${drop:-?} dropped, $gap before its filter)" >&2
	exit 1
	;;
*) usage ;;
esac
