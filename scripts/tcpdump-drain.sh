#!/usr/bin/env bash
# Wait until a running tcpdump has written every packet the kernel gave it.
#
#   scripts/tcpdump-drain.sh PID STDERR_FILE [SECONDS]
#
# tcpdump lags behind on a slow (e.g. emulated) CPU, and the packets it has
# not handled when it is stopped are lost from the capture. On SIGUSR1 it
# prints "N packets captured, M packets received by filter, K packets dropped
# by kernel" to its stderr (STDERR_FILE): drained when N + K >= M. Asks about
# every 0.2 s, for at most SECONDS of wall time (default 10). Exit status: 0
# drained (or tcpdump already gone), 1 not drained in time (one line on
# stderr), 2 bad arguments.
set -uo pipefail
[ $# -ge 2 ] && [[ $1 =~ ^[0-9]+$ ]] && [[ ${3:-10} =~ ^[0-9]+$ ]] ||
	{ echo "usage: tcpdump-drain.sh PID STDERR_FILE [SECONDS]" >&2; exit 2; }
pid=$1 log=$2 secs=${3:-10}
re='^tcpdump: ([0-9]+) packets? captured, ([0-9]+) packets? received by filter, ([0-9]+) packets? dropped'
line=""
# bounded by time: each round costs far more than 0.2 s on an emulated CPU
while [ "$SECONDS" -le "$secs" ]; do
	kill -USR1 "$pid" 2>/dev/null || exit 0
	sleep 0.2
	while IFS= read -r l; do [[ $l =~ $re ]] && line=$l; done < "$log"
	[[ $line =~ $re ]] && [ $((BASH_REMATCH[1] + BASH_REMATCH[3])) -ge "${BASH_REMATCH[2]}" ] && exit 0
done
echo "tcpdump-drain.sh: tcpdump $pid had not written every packet after $secs s (${line:-no count yet})" >&2
exit 1
