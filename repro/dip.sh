#!/usr/bin/env bash
# repro/dip.sh: one run of the live-stream push reproduction.
#
# Topology (repro/topology.sh builds it), three network namespaces joined by veth:
#
#   rp-push-ID  10.77.1.2 eth0 --- p0 10.77.1.1  rp-rtr-ID  10.77.2.1 v0 --- eth0 10.77.2.2  rp-recv-ID
#   (pushsim send, bbr_traced)                    (htb, netem)                 (pushsim recv, quickack)
#   (or ffmpeg, --push ffmpeg)                                                  (or nginx-rtmp)
#   (or iperf3 -c, --push iperf3)                                               (or iperf3 -s)
#
# The router forwards; its egress towards the receiver (v0) carries the
# optional htb bottleneck and, where the kernel has sch_netem, the added
# delay (never on the sending host: TSQ makes sender-side netem unrealistic).
# The receiver reaches the pusher through the route 10.77.1.0/24, which is
# the route quickack turns on.
#
# Run `repro/dip.sh --help` for the options. Everything it creates is removed
# on exit, on Ctrl-C and on SIGTERM: processes, namespaces (with their qdiscs),
# the quickack changes (restored from their journals first), and a bpffs
# mount a socket scope needed.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BBRKIT_BIN:-$ROOT/bin}
PROG=dip.sh
# shellcheck source=repro/topology.sh
. "$ROOT/repro/topology.sh"

usage() {
	cat <<EOF
Usage: repro/dip.sh [OPTIONS] --out DIR

Runs one live-stream push between network namespaces and explains what BBR
did: bbrtrace (with --detect) traces the pusher's flow, tcpdump captures it,
pushsim (or ffmpeg into nginx-rtmp) pushes and receives, and quickack sets
the receiver's route, or its port's sockets.

Options:
  --push TOOL          pushsim (default), ffmpeg or iperf3. ffmpeg: a real
                       RTMP push, a lavfi test source encoded with libx264
                       (ultrafast, zerolatency, GOP = fps, CBR at
                       --bitrate-kbps) into nginx-rtmp (live, no recording)
                       in the receiver's namespace. iperf3: --flows bulk TCP
                       flows (each at --bitrate-kbps when given: app-limited)
                       into iperf3 -s. --receiver, --ack-bytes and
                       --playout-ms are pushsim's and do not apply to either
  --rtt RTT            native, or a delay added on the router with netem:
                       60us, 200us, 1ms, ... (default native). Where the kernel
                       has no sch_netem, one line says so and the run is native.
  --quickack on|off|port
                       on: quick ACKs on the receiver's route to the pusher;
                       off (default): the kernel's delayed ACKs, set on that
                       route; port: a socket scope instead, no route touched
                       (quickack on --port, Linux 5.15+, cgroup v2): the
                       receiver runs in a cgroup of its own (bbrkit-dip-ID)
                       and the connections it accepts on --port ACK within 2
                       jiffies
  --nodelay            TCP_NODELAY on the pusher's connections to --port,
                       through a socket scope (quickack nodelay --dport), the
                       pusher unchanged (default: Nagle on, ffmpeg's default)
  --receiver-view      the receiver's side too: ackhold traces the push's port
                       (every hold, --min-hold 0) into ackhold.jsonl, tcpdump
                       captures the receiver's interface into
                       capture-recv.pcap, and verdict.txt ends with ackhold's
                       verdict (the receiver's view)
  --receiver MODE      prompt | paced | app-ack (default app-ack), see pushsim;
                       with --push ffmpeg the receiver is nginx-rtmp
  --duration S         seconds of pushing, 1..3600 (default 20)
  --out DIR            where the outputs go (created; required)
  --fps N              frames per second of the push (default 20: a frame
                       every 50 ms, longer than the 40 ms delayed-ACK timer)
  --bitrate-kbps N     mean video bitrate in kbit/s (default 4000); with
                       --push iperf3, each flow's rate (default: no limit)
  --flows N            --push iperf3: parallel flows, 1..128 (default 1)
  --ack-bytes N        app-ack receiver: bytes between application ACKs
                       (default 65536)
  --playout-ms N       paced receiver: playout buffer (default 100)
  --rate MBIT          htb bottleneck on the router, Mbit/s (default none)
  --rate-change T:MBIT change the htb rate to MBIT after T seconds (needs
                       --rate)
  --burst BYTES        the htb bottleneck's burst: bytes it lets through at
                       line rate after an idle moment (needs --rate; default
                       htb's own, about rate/HZ)
  --queue-packets N    the bottleneck's queue, 1..100000 packets (needs --rate;
                       default: htb's own, as long as the router's txqueuelen,
                       1000 on a veth); with --rtt, netem's limit
  --loss PCT           random loss at the bottleneck: each packet towards the
                       receiver is dropped with probability PCT percent, 0.01
                       to 50 (needs --rate). A classic BPF filter (cls_bpf,
                       its random load) sends it to a class that drops all it
                       gets, so no sch_netem is needed; tc -s class show dev
                       v0 in the router counts the drops (class 1:20). The
                       pusher's eth0 then sends packets of its MTU (TSO and
                       GSO off: a veth carries a 64 kB burst as one packet,
                       which would be lost whole). Needs ethtool
  --gro on|off         GRO on the receiver's veth (default off, a veth's
                       own): it merges the segments of a burst as a server's
                       NIC does, and the receiver ACKs each merged packet:
                       compressed ACKs, each for many segments. Needs ethtool
  --policer MBIT       a policer on the router instead: tbf with a 16 KB bucket
                       and no queue beyond it, so excess packets are dropped
  --collapse-ratio R   passed to bbrtrace (default 0.30)
  --backend NAME       bbrtrace backend: auto (default: the first of fentry,
                       kprobe, struct_ops that works here), fentry, kprobe or
                       struct_ops. The push runs kernel bbr; struct_ops runs it
                       as bbr_traced in the pusher's namespace while tracing.
  --prometheus ADDR:PORT
                       bbrtrace also serves /metrics there while it runs
                       (collapses by cause, the current bw per flow)
  --port N             TCP port of the push, 43000..43999 (default 43100)
  --no-plot            no dip.png (bbrplot takes seconds on a slow CPU)
  --plot-axes LO:HI:S  dip.png's rate axis from LO to HI Mbit/s and its time
                       axis from 0 to S seconds (default: fitted to the run),
                       so that two runs' plots compare
  --id ID              suffix of the namespace names (default: this PID)
  -h, --help           this help

Outputs in DIR:
  trace.jsonl     bbrtrace records: samples, collapses, summary, verdict
  capture.pcap    the push as the pusher's interface saw it (128-byte snaplen)
  send.jsonl      pushsim send's records (per second, then its summary)
  recv.jsonl      pushsim recv's records (per second, then its summary)
  pushsim.json    the two above, sender then receiver (JSON lines)
  verdict.txt     the verdict sentence and the scenario
  gaps.jsonl      the wire's silences of 100 ms or more (bbrpcap gaps)
  verdict.json    the verdict record plus the scenario, both push summaries,
                  receiver_delayed_acks (TcpExtDelayedACKs),
                  receiver_delayed_acks_locked (TcpExtDelayedACKLocked: the
                  timer's firings deferred while the application held the
                  socket),
                  receiver_duplicate_segments (segments it got twice:
                  TcpExtTCPDSACKOldSent + TCPDSACKOfoSent),
                  sender_backlog_coalesced (the pusher's
                  TcpExtTCPBacklogCoalesce: ACKs merged, each a sample less)
                  and wire_silences (the pusher's, by state: count, total_s,
                  longest_s) (one JSON object)
  dip.png         capture throughput, BBR's estimate and each collapse
  plot            dip.png's data files and plot.sh, which redraws it
  routes.before   the receiver's routes (ip -d route show table all, both
                  families) before quickack changed anything
  routes.after    the same once the push ended, before quickack's restore
  *.log           each tool's stderr (the quickack journals, quickack.journal
                  and with --nodelay nodelay.journal, are emptied when their
                  changes are restored at the end)

With --receiver-view, also:
  capture-recv.pcap  the push as the receiver's interface saw it
  ackhold.jsonl      ackhold's holds (every one), peers and verdict

With --push ffmpeg, instead of send.jsonl, recv.jsonl and pushsim.json:
  ffmpeg.progress ffmpeg's -progress records (frame, total_size, speed, ...)
  ffmpeg.json     its last one as a summary: frames, bytes, out_s, goodput_bps,
                  speed and the congestion control ss saw on the flow
  nginx/          nginx's config, pid file and logs (nginx.conf, nginx.pid,
                  error.log, access.log)
  verdict.json's push.send is then ffmpeg.json

With --push iperf3, instead:
  iperf3.raw.json iperf3 -c's report (-J)
  iperf3.json     its summary in pushsim's summary's form: flows, bytes,
                  out_s, goodput_bps (as the receiver counted), retransmits
                  and the congestion control

Exit status: 0 ok, 1 a step failed, 2 bad arguments, 130 interrupted.
Needs root, iproute2, tcpdump, jq, and the project's bin/ (make); --push ffmpeg
also ffmpeg, nginx and libnginx-mod-rtmp (scripts/install-deps.sh).
EOF
}

die_usage() {
	echo "$PROG: $*" >&2
	exit 2
}

need_value() { [ $# -ge 2 ] && [ -n "$2" ] || die_usage "$1 needs a value"; }

rtt=native quickack=off receiver=app-ack duration=20 out="" fps=20 bitrate_kbps=4000
ack_bytes=65536 playout_ms=100 rate="" rate_change="" policer="" collapse_ratio=0.30 queue=""
backend=auto port=43100 id=$$ prometheus="" plot_wanted=true plot_axes="" push=pushsim receiver_set=false
flows=1 flows_set=false burst="" bitrate_set=false loss="" gro=off nodelay=false recv_view=false
while [ $# -gt 0 ]; do
	case $1 in
	--rtt) need_value "$@"; rtt=$2; shift ;;
	--quickack) need_value "$@"; quickack=$2; shift ;;
	--push) need_value "$@"; push=$2; shift ;;
	--receiver) need_value "$@"; receiver=$2; receiver_set=true; shift ;;
	--duration) need_value "$@"; duration=$2; shift ;;
	--out) need_value "$@"; out=$2; shift ;;
	--fps) need_value "$@"; fps=$2; shift ;;
	--bitrate-kbps) need_value "$@"; bitrate_kbps=$2; bitrate_set=true; shift ;;
	--flows) need_value "$@"; flows=$2; flows_set=true; shift ;;
	--burst) need_value "$@"; burst=$2; shift ;;
	--loss) need_value "$@"; loss=$2; shift ;;
	--gro) need_value "$@"; gro=$2; shift ;;
	--ack-bytes) need_value "$@"; ack_bytes=$2; shift ;;
	--playout-ms) need_value "$@"; playout_ms=$2; shift ;;
	--rate) need_value "$@"; rate=$2; shift ;;
	--rate-change) need_value "$@"; rate_change=$2; shift ;;
	--queue-packets) need_value "$@"; queue=$2; shift ;;
	--policer) need_value "$@"; policer=$2; shift ;;
	--collapse-ratio) need_value "$@"; collapse_ratio=$2; shift ;;
	--backend) need_value "$@"; backend=$2; shift ;;
	--prometheus) need_value "$@"; prometheus=$2; shift ;;
	--port) need_value "$@"; port=$2; shift ;;
	--id) need_value "$@"; id=$2; shift ;;
	--no-plot) plot_wanted=false ;;
	--nodelay) nodelay=true ;;
	--receiver-view) recv_view=true ;;
	--plot-axes) need_value "$@"; plot_axes=$2; shift ;;
	-h | --help) usage; exit 0 ;;
	*) die_usage "unknown option '$1' (see --help)" ;;
	esac
	shift
done

is_uint() { [[ $1 =~ ^[0-9]+$ ]] && [ ${#1} -le 9 ]; }

# RTT: native, or N followed by us or ms; netem takes it as is
if [ "$rtt" != native ] && ! [[ $rtt =~ ^[1-9][0-9]{0,5}(us|ms)$ ]]; then
	die_usage "--rtt: '$rtt' is not native or a delay such as 60us, 200us, 1ms"
fi
case $quickack in on | off | port) ;; *) die_usage "--quickack: '$quickack' is not on, off or port" ;; esac
case $receiver in prompt | paced | app-ack) ;; *) die_usage "--receiver: '$receiver' is not one of prompt|paced|app-ack" ;; esac
case $push in pushsim | ffmpeg | iperf3) ;; *) die_usage "--push: '$push' is not one of pushsim|ffmpeg|iperf3" ;; esac
case $push in
ffmpeg)
	$receiver_set && die_usage "--receiver: not with --push ffmpeg (its receiver is nginx-rtmp)"
	receiver=nginx-rtmp ;;
iperf3)
	$receiver_set && die_usage "--receiver: not with --push iperf3 (its receiver is iperf3 -s)"
	receiver=iperf3 ;;
esac
if [ "$push" = iperf3 ]; then
	is_uint "$flows" && [ "$flows" -ge 1 ] && [ "$flows" -le 128 ] || die_usage "--flows: '$flows' is not an integer in 1..128"
	$bitrate_set || bitrate_kbps=0
else
	$flows_set && die_usage "--flows: only with --push iperf3"
fi
is_uint "$duration" && [ "$duration" -ge 1 ] && [ "$duration" -le 3600 ] ||
	die_usage "--duration: '$duration' is not an integer in 1..3600"
[ -n "$out" ] || die_usage "--out: missing (where the outputs go)"
is_uint "$fps" && [ "$fps" -ge 1 ] && [ "$fps" -le 240 ] || die_usage "--fps: '$fps' is not an integer in 1..240"
# iperf3's flows go without a rate unless --bitrate-kbps gives one
if $bitrate_set || [ "$push" != iperf3 ]; then
	is_uint "$bitrate_kbps" && [ "$bitrate_kbps" -ge 1 ] || die_usage "--bitrate-kbps: '$bitrate_kbps' is not a positive integer"
fi
is_uint "$ack_bytes" && [ "$ack_bytes" -ge 1 ] || die_usage "--ack-bytes: '$ack_bytes' is not a positive integer"
is_uint "$playout_ms" && [ "$playout_ms" -le 10000 ] || die_usage "--playout-ms: '$playout_ms' is not an integer in 0..10000"
if [ -n "$rate" ]; then
	is_uint "$rate" && [ "$rate" -ge 1 ] || die_usage "--rate: '$rate' is not a positive integer (Mbit/s)"
fi
plot_opts=()
if [ -n "$plot_axes" ]; then
	num='[0-9]+([.][0-9]+)?'
	[[ $plot_axes =~ ^($num):($num):($num)$ ]] ||
		die_usage "--plot-axes: '$plot_axes' is not LO:HI:SECONDS (e.g. 0.01:100000:16)"
	awk -v lo="${BASH_REMATCH[1]}" -v hi="${BASH_REMATCH[3]}" -v s="${BASH_REMATCH[5]}" \
		'BEGIN { exit !(lo > 0 && lo < hi && s > 0) }' ||
		die_usage "--plot-axes: '$plot_axes' needs 0 < LO < HI (Mbit/s) and SECONDS above 0"
	plot_opts=(--rate-range "${BASH_REMATCH[1]}:${BASH_REMATCH[3]}" --from 0 --to "${BASH_REMATCH[5]}")
fi
if [ -n "$rate_change" ]; then
	[ -n "$rate" ] || die_usage "--rate-change: needs --rate"
	[[ $rate_change =~ ^([0-9]+):([1-9][0-9]*)$ ]] || die_usage "--rate-change: '$rate_change' is not T:MBIT"
	change_at=${BASH_REMATCH[1]} change_to=${BASH_REMATCH[2]}
	[ "$change_at" -lt "$duration" ] || die_usage "--rate-change: $change_at s is not within --duration $duration"
fi
if [ -n "$burst" ]; then
	[ -n "$rate" ] || die_usage "--burst: needs --rate (the burst is the htb bottleneck's)"
	is_uint "$burst" && [ "$burst" -ge 1500 ] || die_usage "--burst: '$burst' is not an integer of bytes, 1500 or more"
fi
# --loss PCT as a threshold on a random u32: PCT in hundredths of a percent
if [ -n "$loss" ]; then
	[ -n "$rate" ] || die_usage "--loss: needs --rate (the loss is at the htb bottleneck)"
	[[ $loss =~ ^([0-9]{1,2})(\.([0-9]{1,2}))?$ ]] || die_usage "--loss: '$loss' is not a percentage such as 1 or 0.5"
	frac=${BASH_REMATCH[3]}00
	loss_bp=$((10#${BASH_REMATCH[1]} * 100 + 10#${frac:0:2}))
	[ "$loss_bp" -ge 1 ] && [ "$loss_bp" -le 5000 ] || die_usage "--loss: '$loss' is not within 0.01..50 (percent)"
	loss_thr=$((loss_bp * 4294967296 / 10000))
fi
case $gro in on | off) ;; *) die_usage "--gro: '$gro' is not on or off" ;; esac
if [ -n "$queue" ]; then
	[ -n "$rate" ] || die_usage "--queue-packets: needs --rate (the queue is the htb bottleneck's)"
	is_uint "$queue" && [ "$queue" -ge 1 ] && [ "$queue" -le 100000 ] ||
		die_usage "--queue-packets: '$queue' is not an integer in 1..100000"
fi
if [ -n "$policer" ]; then
	is_uint "$policer" && [ "$policer" -ge 1 ] || die_usage "--policer: '$policer' is not a positive integer (Mbit/s)"
	[ -z "$rate" ] || die_usage "--policer: use either --rate or --policer"
fi
case $backend in auto | fentry | kprobe | struct_ops) ;; *) die_usage "--backend: '$backend' is not one of auto|fentry|kprobe|struct_ops" ;; esac
[[ $collapse_ratio =~ ^0?\.[0-9]+$ ]] || die_usage "--collapse-ratio: '$collapse_ratio' is not a fraction such as 0.30"
is_uint "$port" && [ "$port" -ge 43000 ] && [ "$port" -le 43999 ] || die_usage "--port: '$port' is not in 43000..43999"
[[ $id =~ ^[A-Za-z0-9]{1,12}$ ]] || die_usage "--id: '$id' is not 1 to 12 letters or digits"
if [ -n "$prometheus" ] && ! [[ $prometheus =~ ^(\[[0-9A-Fa-f:.]+\]|[0-9.]+):[0-9]{1,5}$ ]]; then
	die_usage "--prometheus: '$prometheus' is not ADDR:PORT such as 127.0.0.1:9436"
fi

[ "$(id -u)" -eq 0 ] || { echo "$PROG: needs root (network namespaces, BPF)" >&2; exit 1; }
for t in pushsim bbrtrace quickack; do
	[ -x "$BIN/$t" ] || { echo "$PROG: $BIN/$t is missing: run make" >&2; exit 1; }
done
for c in ip tc tcpdump jq; do
	command -v "$c" >/dev/null || { echo "$PROG: the $c command is missing (scripts/install-deps.sh)" >&2; exit 1; }
done
# Debian's libnginx-mod-rtmp puts the module here
NGINX_RTMP_MODULE=${DIP_NGINX_RTMP_MODULE:-/usr/lib/nginx/modules/ngx_rtmp_module.so}
if [ "$push" = ffmpeg ]; then
	for c in ffmpeg nginx; do
		command -v "$c" >/dev/null || { echo "$PROG: the $c command is missing (scripts/install-deps.sh)" >&2; exit 1; }
	done
	[ -r "$NGINX_RTMP_MODULE" ] ||
		{ echo "$PROG: nginx's RTMP module $NGINX_RTMP_MODULE is missing (scripts/install-deps.sh: libnginx-mod-rtmp)" >&2; exit 1; }
fi
if [ "$push" = iperf3 ]; then
	command -v iperf3 >/dev/null || { echo "$PROG: the iperf3 command is missing (scripts/install-deps.sh)" >&2; exit 1; }
fi
if [ "$gro" = on ] || [ -n "$loss" ]; then
	command -v ethtool >/dev/null || { echo "$PROG: --gro and --loss: the ethtool command is missing (scripts/install-deps.sh)" >&2; exit 1; }
fi

PUSH=rp-push-$id RTR=rp-rtr-$id RECV=rp-recv-$id
PUSHER_NET=$TOPO_PUSHER_NET
pids=()
made_ns=()
quickack_applied=false nodelay_applied=false
recv_cgroup=""
cleanup_failed=false

cleanup() {
	local p ns
	trap - EXIT INT TERM
	# TERM, not INT: a non-interactive shell starts its background jobs with
	# SIGINT ignored (the tools catch both; a subshell only TERM)
	for p in "${pids[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${pids[@]}"; do
		# bounded: SIGKILL after 5 s
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	if $quickack_applied; then
		"$BIN/quickack" restore --netns "$RECV" --journal "$out/quickack.journal" -q ||
			echo "$PROG: quickack restore failed (journal $out/quickack.journal)" >&2
	fi
	if $nodelay_applied; then
		"$BIN/quickack" restore --netns "$PUSH" --journal "$out/nodelay.journal" -q ||
			echo "$PROG: quickack restore failed (journal $out/nodelay.journal)" >&2
	fi
	for ns in "${made_ns[@]}"; do
		delete_ns "$ns"
	done
	[ -z "$recv_cgroup" ] || delete_cgroup "$recv_cgroup"
	unmount_bpffs
}
# quickack mounts bpffs for a scope's pins where none is mounted: unmounted
# again when this run's scopes mounted it and no other pin is left in it
bpffs_before=$(stat -f -c %T /sys/fs/bpf 2>/dev/null)
unmount_bpffs() {
	[ "$bpffs_before" != bpf_fs ] && [ "$(stat -f -c %T /sys/fs/bpf 2>/dev/null)" = bpf_fs ] || return 0
	[ -z "$(ls -A /sys/fs/bpf/bbrkit/quickack 2>/dev/null)" ] || return 0
	rm -rf /sys/fs/bpf/bbrkit && umount /sys/fs/bpf ||
		echo "$PROG: cannot unmount the bpffs quickack mounted at /sys/fs/bpf" >&2
}
# a cgroup goes once its last process has: bounded retries (a killed
# process leaves its cgroup a moment after it is reaped)
delete_cgroup() {
	for _ in $(seq 25); do
		rmdir "$1" 2>/dev/null && return 0
		[ -d "$1" ] || return 0
		sleep 0.2
	done
	echo "$PROG: cannot remove the cgroup $1: $(tr '\n' ' ' <"$1/cgroup.procs") still in it" >&2
	cleanup_failed=true
}
# ip netns del fails (EBUSY) while another mount namespace still holds the
# namespace's file mounted: bounded retries, then the holders are named
delete_ns() {
	local ns=$1 p err holders
	for _ in $(seq 25); do
		p=$(ip netns pids "$ns" 2>/dev/null)
		[ -n "$p" ] && kill -9 $p 2>/dev/null
		err=$(ip netns del "$ns" 2>&1) && return 0
		[ -e "/run/netns/$ns" ] || return 0
		sleep 0.2
	done
	holders=$(grep -l " /run/netns/$ns " /proc/[0-9]*/mountinfo 2>/dev/null | cut -d/ -f3 | tr '\n' ' ')
	echo "$PROG: cannot delete namespace $ns: $err${holders:+ (mounted in the mount namespaces of PIDs $holders)}" >&2
	cleanup_failed=true
}
trap cleanup EXIT
# a process waited for leaves the list: its PID may be reused
reaped() {
	local p keep=()
	for p in "${pids[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
	pids=("${keep[@]}")
}
trap 'echo "$PROG: interrupted, cleaning up" >&2; cleanup; exit 130' INT TERM

fail() {
	echo "$PROG: $*" >&2
	exit 1
}

# stops tracer NAME (bbrtrace, ackhold) at PID with SIGINT, on which it writes
# its summary and verdict; a tracer that did not exit 0 fails the run with the
# last line of its log (out/NAME.log)
stop_tracer() {
	local name=$1 pid=$2 rc
	kill -INT "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	reaped "$pid"
	[ $rc -eq 0 ] || fail "$name failed ($rc): $(tail -1 "$out/$name.log")"
}

mkdir -p "$out" || fail "cannot create $out"
out=$(cd "$out" && pwd)
rm -f "$out"/{trace.jsonl,capture.pcap,capture-recv.pcap,ackhold.jsonl,gaps.jsonl,send.jsonl,recv.jsonl,pushsim.json,verdict.txt,verdict.json,quickack.journal,nodelay.journal,routes.before,routes.after,dip.png,ffmpeg.progress,ffmpeg.json}
rm -rf "$out/plot"
rm -rf "$out/nginx"

# --- topology -----------------------------------------------------------------
for ns in "$PUSH" "$RTR" "$RECV"; do
	ip netns add "$ns" || fail "cannot create namespace $ns"
	made_ns+=("$ns")
done
topo_build "$PUSH" "$RTR" "$RECV" || fail "cannot build the topology"
# a veth starts with GRO off; on, it polls its packets through NAPI and merges them
if [ "$gro" = on ]; then
	ip netns exec "$RECV" ethtool -K eth0 gro on >/dev/null ||
		fail "cannot turn GRO on for the receiver's eth0 (ethtool -K eth0 gro on)"
fi
# a random loss takes one packet of the wire, not a TSO burst of 44
if [ -n "$loss" ]; then
	ip netns exec "$PUSH" ethtool -K eth0 tso off gso off >/dev/null ||
		fail "cannot turn TSO and GSO off for the pusher's eth0 (ethtool -K eth0 tso off gso off)"
fi

# --- the push runs kernel BBR, whichever backend traces it ---------------------
# A new namespace starts with the host's default congestion control (cubic on
# many kernels). fentry and kprobe trace flows on bbr; struct_ops switches
# this namespace to bbr_traced while it runs and back to bbr at exit.
ip netns exec "$PUSH" sysctl -qw net.ipv4.tcp_congestion_control=bbr 2>/dev/null ||
	fail "TCP BBR is not available in this kernel: load it (modprobe tcp_bbr) or build it in (CONFIG_TCP_CONG_BBR)"

# --- the router's egress towards the receiver: bottleneck, policer, delay ------
# --loss: a classic BPF program (ld rand; a random u32 under loss_thr matches,
# returning -1: the filter's class) sends a packet to class 1:20, whose pfifo
# holds none (limit 0): it drops each packet it gets, and counts it
add_loss() {
	local prog="4,32 0 0 4294963256,53 0 1 $loss_thr,6 0 0 0,6 0 0 4294967295"

	tc -n "$RTR" class add dev v0 parent 1: classid 1:20 htb rate "${rate}mbit" &&
		tc -n "$RTR" qdisc add dev v0 parent 1:20 handle 20: pfifo limit 0 &&
		tc -n "$RTR" filter add dev v0 parent 1: protocol ip prio 1 bpf bytecode "$prog" classid 1:20
}
netem_parent="root"
if [ -n "$rate" ]; then
	tc -n "$RTR" qdisc add dev v0 root handle 1: htb default 10 &&
		tc -n "$RTR" class add dev v0 parent 1: classid 1:10 htb rate "${rate}mbit" ceil "${rate}mbit" \
			${burst:+burst "$burst" cburst "$burst"} ||
		fail "cannot add the htb bottleneck"
	netem_parent="parent 1:10"
	[ -z "$loss" ] || add_loss || fail "cannot add the random loss (cls_bpf and an htb class)"
elif [ -n "$policer" ]; then
	tc -n "$RTR" qdisc add dev v0 root tbf rate "${policer}mbit" burst 16kb limit 16kb ||
		fail "cannot add the policer"
fi
rtt_effective=native
if [ "$rtt" != native ]; then
	if [ -n "$policer" ]; then
		echo "$PROG: --rtt with --policer is not supported: running at the native RTT" >&2
	elif tc -n "$RTR" qdisc add dev v0 $netem_parent handle 10: netem delay "$rtt" ${queue:+limit "$queue"} \
		2>/dev/null; then
		rtt_effective=$rtt
	else
		echo "$PROG: sch_netem is missing in this kernel: running at the native RTT instead of $rtt"
	fi
fi
# the bottleneck's queue, where netem does not hold it
if [ -n "$queue" ] && [ "$rtt_effective" = native ]; then
	tc -n "$RTR" qdisc add dev v0 parent 1:10 handle 10: pfifo limit "$queue" ||
		fail "cannot set the bottleneck's queue to $queue packets"
fi

# --- quickack on the receiver's route to the pusher, or on its port's sockets ---
# the receiver's routes, every table, both families: what quickack may
# change; not the link-local ones, which the kernel adds on its own when an
# address's duplicate detection ends, at its own pace
recv_routes() {
	{ ip -n "$RECV" -d route show table all && ip -n "$RECV" -6 -d route show table all; } | awk '!/fe80::/'
}
# --quickack port: the receiver's own cgroup v2 directory, as a service's (a
# systemd unit's) would be, which the socket scope names: the connections a
# process outside it accepts keep their delayed ACKs
make_recv_cgroup() {
	local root
	root=$(findmnt -n -t cgroup2 -o TARGET | head -1)
	[ -n "$root" ] || fail "--quickack port: no cgroup v2 hierarchy is mounted (mount -t cgroup2 none /sys/fs/cgroup)"
	mkdir "$root/bbrkit-dip-$id" || fail "cannot create the receiver's cgroup $root/bbrkit-dip-$id"
	recv_cgroup=$root/bbrkit-dip-$id
}
recv_routes >"$out/routes.before" || fail "cannot list the routes of $RECV"
if [ "$quickack" = port ]; then
	make_recv_cgroup
	quickack_applied=true # a scope half made is in the journal: restore undoes it
	"$BIN/quickack" on --port "$port" --cgroup "$recv_cgroup" --netns "$RECV" --journal "$out/quickack.journal" -q ||
		fail "quickack on --port $port failed in $RECV (see above)"
else
	"$BIN/quickack" "$quickack" "$PUSHER_NET" --netns "$RECV" --journal "$out/quickack.journal" -q ||
		fail "quickack $quickack $PUSHER_NET failed in $RECV"
	quickack_applied=true
fi
if $nodelay; then
	nodelay_applied=true
	"$BIN/quickack" nodelay --dport "$port" --netns "$PUSH" --journal "$out/nodelay.journal" -q ||
		fail "quickack nodelay --dport $port failed in $PUSH (see above)"
fi

# --- bbrtrace: fentry or kprobe on bbr_main, or bbr_traced in the pusher's namespace
# struct_ops (also when auto comes to it) makes bbr_traced the pusher's
# default while it runs. Only one bbr_traced can be registered on a machine:
# when another bbrtrace holds it, wait and retry (up to DIP_BBRTRACE_WAIT
# seconds, default 300).
bt_args=(-b "$backend" -f json -o "$out/trace.jsonl" --dport "$port" --detect
	--collapse-ratio "$collapse_ratio" -d $((duration + 30)))
case $backend in auto | struct_ops) bt_args+=(--set-default-in "$PUSH") ;; esac
# the trace keeps every sample (the plot, bbrpcap join): --prometheus alone
# writes only the detector's records
[ -z "$prometheus" ] || bt_args+=(--prometheus "$prometheus" --records samples)
bt_wait=${DIP_BBRTRACE_WAIT:-300}
bt_deadline=$((SECONDS + bt_wait))
while :; do
	"$BIN/bbrtrace" "${bt_args[@]}" 2>"$out/bbrtrace.log" &
	bt_pid=$!
	pids+=("$bt_pid")
	ready=false
	# ready: it traces bbr_main, or has switched the pusher to bbr_traced (its
	# log says which). Loading takes seconds on an emulated CPU: up to a minute.
	for _ in $(seq 600); do
		kill -0 "$bt_pid" 2>/dev/null || break
		bt_log=$(<"$out/bbrtrace.log")
		if [[ $bt_log =~ (^|$'\n')"bbrtrace: backend "(fentry|kprobe) ||
			$bt_log == *"default congestion control in $PUSH: "*" -> bbr_traced"* ]]; then
			ready=true
			break
		fi
		sleep 0.1
	done
	$ready && break
	wait "$bt_pid" 2>/dev/null
	unset 'pids[-1]'
	if grep -qiE 'already registered|another|stale|busy|exists' "$out/bbrtrace.log" &&
		[ $SECONDS -lt $bt_deadline ]; then
		sleep 3
		continue
	fi
	fail "bbrtrace did not start: $(tail -1 "$out/bbrtrace.log")"
done

# --- capture on the pusher's interface --------------------------------------------
# --immediate-mode: packets reach tcpdump as they come, so stopping it at the
# end loses none still sitting in the kernel's capture buffer
ip netns exec "$PUSH" tcpdump -i eth0 -s 128 -U --immediate-mode -w "$out/capture.pcap" "tcp port $port" \
	2>"$out/tcpdump.log" &
td_pid=$!
pids+=("$td_pid")
for _ in $(seq 100); do grep -q 'listening on' "$out/tcpdump.log" && break; sleep 0.05; done
grep -q 'listening on' "$out/tcpdump.log" || fail "tcpdump did not start: $(tail -1 "$out/tcpdump.log")"
# what reached the capture before its filter: never written, so not waited for
"$ROOT/scripts/tcpdump-drain.sh" mark "$td_pid" "$out/tcpdump.log" 5 ||
	echo "$PROG: warning: tcpdump gave no count: the capture may lack its tail" >&2

# --- the receiver's view (--receiver-view) ----------------------------------------
# ackhold is host-wide, so the push's port is what picks the receiver's
# sockets out; its own capture of the receiver's interface is the witness
ah_pid="" tr_pid=""
if $recv_view; then
	"$BIN/ackhold" --port "$port" --min-hold 0 -f json -o "$out/ackhold.jsonl" 2>"$out/ackhold.log" &
	ah_pid=$!
	pids+=("$ah_pid")
	ip netns exec "$RECV" tcpdump -i eth0 -s 128 -U --immediate-mode -w "$out/capture-recv.pcap" "tcp port $port" \
		2>"$out/tcpdump-recv.log" &
	tr_pid=$!
	pids+=("$tr_pid")
	for _ in $(seq 200); do
		grep -q 'tracing the ACKs' "$out/ackhold.log" && grep -q 'listening on' "$out/tcpdump-recv.log" && break
		kill -0 "$ah_pid" 2>/dev/null || break
		sleep 0.05
	done
	grep -q 'tracing the ACKs' "$out/ackhold.log" || fail "ackhold did not start: $(tail -1 "$out/ackhold.log")"
	grep -q 'listening on' "$out/tcpdump-recv.log" ||
		fail "tcpdump did not start in $RECV: $(tail -1 "$out/tcpdump-recv.log")"
	"$ROOT/scripts/tcpdump-drain.sh" mark "$tr_pid" "$out/tcpdump-recv.log" 5 ||
		echo "$PROG: warning: the receiver's tcpdump gave no count: its capture may lack its tail" >&2
fi

# --- the push ----------------------------------------------------------------------
# wait up to 5 s for a listener on the push's port in the receiver's namespace
wait_listen() {
	for _ in $(seq 100); do
		ip netns exec "$RECV" ss -Hltn "sport = :$port" | grep -q . && return 0
		sleep 0.05
	done
	return 1
}

# runs its arguments in the receiver's namespace, and in its cgroup when it
# has one: joined before ip netns exec, whose fresh /sys has no cgroup
# mount (sh and ip netns exec exec it: the PID is the receiver's own)
recv_exec() {
	if [ -n "$recv_cgroup" ]; then
		sh -c 'ns=$1; shift; echo $$ >"$0/cgroup.procs" && exec ip netns exec "$ns" "$@"' "$recv_cgroup" "$RECV" "$@"
	else
		ip netns exec "$RECV" "$@"
	fi
}

start_pushsim_recv() {
	recv_exec "$BIN/pushsim" recv --listen "10.77.2.2:$port" --mode "$receiver" \
		--fps "$fps" --playout-ms "$playout_ms" --ack-bytes "$ack_bytes" --json \
		>"$out/recv.jsonl" 2>"$out/recv.log" &
	recv_pid=$!
	pids+=("$recv_pid")
	wait_listen
}

# nginx-rtmp in the receiver's namespace: a config of its own in $out/nginx
# (the port is free there: the namespace is new), in the foreground so that
# it is one of our processes, stopped (TERM) at cleanup like the others
start_nginx() {
	local d=$out/nginx
	mkdir -p "$d" || fail "cannot create $d"
	cat >"$d/nginx.conf" <<-EOF
		load_module $NGINX_RTMP_MODULE;
		daemon off;
		master_process on;
		worker_processes 1;
		pid $d/nginx.pid;
		error_log $d/error.log info;
		events { worker_connections 64; }
		rtmp {
			access_log $d/access.log;
			server {
				listen 10.77.2.2:$port;
				application live { live on; record off; }
			}
		}
	EOF
	recv_exec nginx -p "$d" -c "$d/nginx.conf" -e "$d/error.log" 2>"$out/nginx.log" &
	recv_pid=$!
	pids+=("$recv_pid")
	wait_listen || fail "nginx-rtmp does not listen on 10.77.2.2:$port: $(tail -1 "$d/error.log" "$out/nginx.log" 2>/dev/null | grep . | tail -1)"
}

start_rate_change() {
	rate_pid=""
	[ -n "$rate_change" ] || return 0
	(
		trap 'kill "$sleep_pid" 2>/dev/null; exit 143' TERM
		sleep "$change_at" &
		sleep_pid=$!
		wait "$sleep_pid" && tc -n "$RTR" class change dev v0 parent 1: classid 1:10 htb \
			rate "${change_to}mbit" ceil "${change_to}mbit"
	) &
	rate_pid=$!
	pids+=("$rate_pid")
}

# iperf3 -s for one test, on the push's port
start_iperf3_recv() {
	recv_exec iperf3 -s -1 -B 10.77.2.2 -p "$port" >"$out/iperf3-server.log" 2>&1 &
	recv_pid=$!
	pids+=("$recv_pid")
	wait_listen || fail "iperf3 -s does not listen on 10.77.2.2:$port: $(tail -1 "$out/iperf3-server.log")"
}

# iperf3 -c: --flows flows for --duration seconds, each at --bitrate-kbps when
# given; its report (-J) reduced to pushsim's summary's form
run_iperf3_send() {
	local send_rc rate_arg=()
	[ "$bitrate_kbps" -gt 0 ] && rate_arg=(-b "${bitrate_kbps}k")
	ip netns exec "$PUSH" iperf3 -c 10.77.2.2 -p "$port" -t "$duration" -P "$flows" "${rate_arg[@]}" \
		-J >"$out/iperf3.raw.json" 2>"$out/iperf3.log" &
	send_pid=$!
	pids+=("$send_pid")
	wait "$send_pid"
	send_rc=$?
	reaped "$send_pid"
	for _ in $(seq 50); do kill -0 "$recv_pid" 2>/dev/null || break; sleep 0.1; done
	[ $send_rc -eq 0 ] || fail "iperf3 -c failed ($send_rc): $(jq -r '.error // empty' "$out/iperf3.raw.json" 2>/dev/null) $(tail -1 "$out/iperf3.log")"
	jq -c --argjson flows "$flows" '{type: "summary", role: "send", tool: "iperf3", flows: $flows,
		bytes: .end.sum_sent.bytes, out_s: .end.sum_sent.seconds,
		goodput_bps: .end.sum_received.bits_per_second, retransmits: .end.sum_sent.retransmits,
		cc: (.end.sender_tcp_congestion // "unknown")}' "$out/iperf3.raw.json" >"$out/iperf3.json" ||
		fail "cannot read iperf3's report in $out/iperf3.raw.json"
	push_file=$out/iperf3.json
}

# in the background: a signal's trap runs during `wait`, not only after the push
run_pushsim_send() {
	local send_rc recv_rc
	ip netns exec "$PUSH" "$BIN/pushsim" send --connect "10.77.2.2:$port" --duration "$duration" \
		--fps "$fps" --bitrate-kbps "$bitrate_kbps" --json >"$out/send.jsonl" 2>"$out/send.log" &
	send_pid=$!
	pids+=("$send_pid")
	wait "$send_pid"
	send_rc=$?
	reaped "$send_pid"
	for _ in $(seq 100); do kill -0 "$recv_pid" 2>/dev/null || break; sleep 0.1; done
	kill -INT "$recv_pid" 2>/dev/null
	wait "$recv_pid"
	recv_rc=$?
	reaped "$recv_pid"
	[ $send_rc -eq 0 ] || fail "pushsim send failed ($send_rc): $(tail -1 "$out/send.log")"
	[ $recv_rc -eq 0 ] || fail "pushsim recv failed ($recv_rc): $(tail -1 "$out/recv.log")"
	cat "$out/send.jsonl" "$out/recv.jsonl" >"$out/pushsim.json"
	push_file=$out/pushsim.json
}

# the congestion control of the push's flow, as ss sees it, once it is up
# (bounded by the push: up to 10 s)
push_flow_cc() {
	local cc=""
	for _ in $(seq 100); do
		kill -0 "$send_pid" 2>/dev/null || break
		cc=$(ip netns exec "$PUSH" ss -Htin state established "dport = :$port" 2>/dev/null |
			grep -oE '(^|[[:space:]])(bbr_traced|bbr|cubic|reno)([[:space:]]|$)' | head -1 | tr -d '[:space:]')
		[ -n "$cc" ] && break
		sleep 0.1
	done
	echo "${cc:-unknown}"
}

# ffmpeg: a lavfi test source, libx264 at constant bitrate (nal-hrd=cbr
# pads each frame with filler to it), a keyframe every second, in real time
# (-re) for --duration seconds, into nginx-rtmp as FLV
run_ffmpeg_send() {
	local send_rc cc
	ip netns exec "$PUSH" ffmpeg -hide_banner -nostdin -nostats -loglevel warning \
		-progress "$out/ffmpeg.progress" -re -f lavfi -i "testsrc2=size=640x360:rate=$fps" \
		-t "$duration" -c:v libx264 -preset ultrafast -tune zerolatency -pix_fmt yuv420p \
		-g "$fps" -b:v "${bitrate_kbps}k" -maxrate "${bitrate_kbps}k" -bufsize "${bitrate_kbps}k" \
		-x264-params nal-hrd=cbr -f flv "rtmp://10.77.2.2:$port/live/test" 2>"$out/ffmpeg.log" &
	send_pid=$!
	pids+=("$send_pid")
	cc=$(push_flow_cc)
	wait "$send_pid"
	send_rc=$?
	reaped "$send_pid"
	[ $send_rc -eq 0 ] || fail "ffmpeg failed ($send_rc): $(tail -1 "$out/ffmpeg.log")"
	# the last progress record (progress=end): what ffmpeg pushed, in pushsim's summary's form
	jq -c -R -n --arg cc "$cc" '[inputs | select(test("^[a-z_]+=")) | capture("^(?<k>[a-z_]+)=(?<v>.*)$")]
		| reduce .[] as $kv ({}; .[$kv.k] = $kv.v)
		| {type: "summary", role: "send", tool: "ffmpeg", frames: (.frame | tonumber),
		  bytes: (.total_size | tonumber), out_s: ((.out_time_us | tonumber) / 1e6),
		  speed: .speed, cc: $cc}
		| .goodput_bps = (if .out_s > 0 then .bytes * 8 / .out_s else 0 end)' \
		"$out/ffmpeg.progress" >"$out/ffmpeg.json" || fail "cannot read ffmpeg's progress in $out/ffmpeg.progress"
	push_file=$out/ffmpeg.json
}

case $push in
ffmpeg) start_nginx ;;
iperf3) start_iperf3_recv ;;
*) start_pushsim_recv ;;
esac
start_rate_change
case $quickack in
port) qa_words="quickack on port $port only (a socket scope)" ;;
*) qa_words="quickack $quickack" ;;
esac
$nodelay && qa_words+=", TCP_NODELAY on the pusher (a socket scope)"
echo "$PROG: pushing for $duration s: $push, receiver $receiver, $qa_words, RTT $rtt_effective${rate:+, htb ${rate} Mbit/s}${burst:+ (burst $burst bytes)}${rate_change:+ then ${change_to} Mbit/s at ${change_at} s}${queue:+, a ${queue}-packet queue}${loss:+, ${loss}% loss}${policer:+, policer ${policer} Mbit/s}, GRO $gro"
case $push in
ffmpeg) run_ffmpeg_send ;;
iperf3) run_iperf3_send ;;
*) run_pushsim_send ;;
esac
[ -n "$rate_pid" ] && { wait "$rate_pid" 2>/dev/null; reaped "$rate_pid"; }
# variable $1 := the TcpExt counter $3 of namespace $2 (new with this run,
# so since its start)
tcpext() {
	local v
	v=$(ip netns exec "$2" awk -v name="$3" '$1 == "TcpExt:" { if (!col) { for (i = 2; i <= NF; i++)
		if ($i == name) col = i } else print $col }' /proc/net/netstat)
	[[ $v =~ ^[0-9]+$ ]] || fail "cannot read TcpExt$3 in $2 from /proc/net/netstat"
	printf -v "$1" %s "$v"
}
# the receiver's kernel counts the ACKs its delayed-ACK timer sent
# (TcpExtDelayedACKs): the ground truth beside the detector's delayed_ack
tcpext recv_delacks "$RECV" DelayedACKs
# the timer's firings the socket's owner deferred to its release (each ACK
# then sent by the deferred handler, or by the owner's read before it)
tcpext recv_delacks_locked "$RECV" DelayedACKLocked
# the segments the receiver got twice, each answered with a D-SACK
# (TcpExtTCPDSACKOldSent below its next expected byte, TCPDSACKOfoSent
# above it): retransmissions of what was not lost. A veth reorders when the
# sender moves between CPUs (each CPU's backlog delivers on its own), and
# the reordering reads as loss; so a path's drops are the retransmissions
# less these. A new namespace has net.ipv4.tcp_dsack on, which counting needs
tcpext recv_dsack_old "$RECV" TCPDSACKOldSent
tcpext recv_dsack_ofo "$RECV" TCPDSACKOfoSent
recv_dups=$((recv_dsack_old + recv_dsack_ofo))
# the pusher's kernel merges ACKs that arrive while the application holds
# the socket (TcpExtTCPBacklogCoalesce): BBR, and so bbrtrace, sees one ACK
# for them, so the wire shows more ACKs than the trace has samples
tcpext send_coalesced "$PUSH" TCPBacklogCoalesce
# --loss: the packets the router's dropping class took, as tc counts them
loss_drops=null
if [ -n "$loss" ]; then
	loss_drops=$(tc -n "$RTR" -s class show dev v0 classid 1:20 | grep -o 'dropped [0-9]*' | cut -d' ' -f2)
	[[ $loss_drops =~ ^[0-9]+$ ]] || fail "cannot read the loss class's drops (tc -s class show dev v0 in $RTR)"
fi

# stop the capture and bbrtrace; bbrtrace writes its summary and verdict at exit
# tcpdump lags behind on a slow CPU: what it has not written when stopped is lost
"$ROOT/scripts/tcpdump-drain.sh" wait "$td_pid" "$out/tcpdump.log" 10 ||
	echo "$PROG: warning: the capture may lack its tail" >&2
stop_tracer bbrtrace "$bt_pid"
if $recv_view; then
	"$ROOT/scripts/tcpdump-drain.sh" wait "$tr_pid" "$out/tcpdump-recv.log" 10 ||
		echo "$PROG: warning: the receiver's capture may lack its tail" >&2
	stop_tracer ackhold "$ah_pid"
fi
recv_routes >"$out/routes.after" || fail "cannot list the routes of $RECV"
cleanup
trap - INT TERM
$cleanup_failed && exit 1

# --- verdict --------------------------------------------------------------------------
netem_note=""
load="$fps fps, $bitrate_kbps kbit/s"
if [ "$push" = iperf3 ]; then
	load="$flows iperf3 flow(s), $([ "$bitrate_kbps" -gt 0 ] && echo "$bitrate_kbps kbit/s each" || echo bulk)"
fi
[ "$rtt" != native ] && [ "$rtt_effective" = native ] && netem_note=" (netem missing: $rtt not applied)"
# the wire's silences of the push (bbrpcap gaps): what fell to the floor, and
# why; 100 ms, what a live player keeps buffered (pushsim's --playout-ms)
gaps_file=$out/gaps.jsonl gap_ms=100
"$BIN/bbrpcap" gaps -f json --min-ms "$gap_ms" --flow ":$port" "$out/capture.pcap" >"$gaps_file" 2>>"$out/bbrpcap-gaps.log" ||
	fail "bbrpcap gaps failed on $out/capture.pcap: $(tail -1 "$out/bbrpcap-gaps.log")"
# one jq per output (each costs about 0.4 s on an emulated CPU)
jq -c -n --arg rtt "$rtt" --arg rtt_eff "$rtt_effective" --arg qa "$quickack" --argjson nodelay "$nodelay" \
	--arg recv "$receiver" --argjson dur "$duration" --argjson fps "$fps" \
	--arg push "$push" --argjson kbps "$bitrate_kbps" \
	--arg rate "$rate" --arg rc "$rate_change" --arg pol "$policer" --arg queue "$queue" \
	--argjson flows "$flows" --arg burst "$burst" --arg loss "$loss" --argjson drops "$loss_drops" --arg gro "$gro" --argjson delacks "$recv_delacks" --argjson delacks_locked "$recv_delacks_locked" --argjson dups "$recv_dups" --argjson coalesced "$send_coalesced" --slurpfile ps "$push_file" \
	--slurpfile gaps "$gaps_file" --argjson gap_ms "$gap_ms" --arg pusher "$TOPO_PUSHER_ADDR:" \
	'[inputs | select(.type == "verdict" or .type == "summary")] as $r
	| ($r | map(select(.type == "verdict")) | first) + {scenario: {rtt: $rtt,
	  rtt_effective: $rtt_eff, quickack: $qa, nodelay: $nodelay, push: $push, receiver: $recv, duration_s: $dur, fps: $fps,
	  bitrate_kbps: $kbps, flows: $flows,
	  htb_mbit: $rate, htb_burst_bytes: $burst, rate_change: $rc, queue_packets: $queue, policer_mbit: $pol,
	  loss_pct: $loss, loss_dropped_packets: $drops, gro: $gro,
	  backend: ($r | map(select(.type == "summary")) | first | .backend)},
	  push: ($ps | map(select(.type == "summary")) | map({(.role): .}) | add),
	  receiver_delayed_acks: $delacks, receiver_delayed_acks_locked: $delacks_locked,
	  receiver_duplicate_segments: $dups,
	  sender_backlog_coalesced: $coalesced,
	  wire_silences: ($gaps | map(select(.src | startswith($pusher))) as $g
	    | reduce ("idle", "in_flight") as $st ({min_ms: $gap_ms}; . + {($st): ($g | map(select(.state == $st))
	      | {count: length, total_s: ((map(.gap_us) | add // 0) / 1e6), longest_s: ((map(.gap_us) | max // 0) / 1e6)})}))}
	| select(.type == "verdict")' \
	"$out/trace.jsonl" >"$out/verdict.json" || fail "no verdict in $out/trace.jsonl"
[ -s "$out/verdict.json" ] || fail "bbrtrace wrote no verdict record (see $out/bbrtrace.log)"
read -r samples bt_used push_cc < <(jq -r '"\(.samples) \(.scenario.backend) \(.push.send.cc)"' "$out/verdict.json")
jq -r --arg sc "scenario: receiver $receiver, $qa_words, RTT $rtt_effective$netem_note, $load, $duration s${rate:+, htb $rate Mbit/s}${burst:+ (burst $burst bytes)}${rate_change:+ then $change_to Mbit/s at $change_at s}${queue:+, a $queue-packet queue}${loss:+, $loss% loss}${policer:+, policer $policer Mbit/s}, GRO $gro, $push_cc traced by $bt_used" \
	'.text, $sc,
	(.push.send | if .tool == "ffmpeg" then
	  "push: ffmpeg, \(.frames) frames in \(.out_s * 10 | round / 10) s (speed \(.speed)), mean goodput \(.goodput_bps/1e6*100|round/100) Mbit/s"
	  elif .tool == "iperf3" then
	  "push: iperf3, \(.flows) flow(s) for \(.out_s * 10 | round / 10) s, \(.retransmits) retransmitted, mean goodput \(.goodput_bps/1e6*100|round/100) Mbit/s (the receiver\u0027s count)"
	  else "push: \(.frames) frames, \(.stalls) still unsent at the next frame (longest \(.longest_stall_us / 1000 | round) ms), \(.late_frames) late, mean goodput \(.goodput_bps/1e6*100|round/100) Mbit/s" end),
	(.push.recv // {} | select(.frame_latency_mean_us != null) |
	  "receiver: frame latency mean \(.frame_latency_mean_us / 100 | round / 10), p99 \(.frame_latency_p99_us / 100 | round / 10), max \(.frame_latency_max_us / 100 | round / 10) ms (its \(.frames) frames)"),
	"receiver: its delayed-ACK timer sent \(.receiver_delayed_acks) ACKs (TcpExtDelayedACKs)",
	"receiver: \(.receiver_duplicate_segments) segments arrived twice, sent again though not lost (TcpExtTCPDSACKOldSent + TCPDSACKOfoSent)",
	(.wire_silences | def longest(s): if s.count > 0 then " (longest \(s.longest_s * 1000 | round) ms)" else "" end;
	  if .idle.count + .in_flight.count == 0 then "wire: never silent for \(.min_ms) ms or more"
	  else "wire: silent for \(.min_ms) ms or more \(.idle.count + .in_flight.count) times: \(.idle.count) idle, the sender sending nothing\(longest(.idle)), \(.in_flight.count) with data unACKed\(longest(.in_flight))" end),
	(.scenario.loss_dropped_packets // empty | "loss: the router dropped \(.) packets at random (tc class 1:20)")' \
	"$out/verdict.json" >"$out/verdict.txt"
if $recv_view; then
	jq -r 'select(.type == "verdict") | "receiver\u0027s view (ackhold): \(.text)"' "$out/ackhold.jsonl" >>"$out/verdict.txt"
fi
[ "$samples" -gt 0 ] ||
	fail "bbrtrace ($bt_used) saw no BBR rate sample of the push, which ran $push_cc: see $out/bbrtrace.log"

# the dip plot: capture throughput, BBR's estimate and each collapse
plot=""
if $plot_wanted; then
	if [ -x "$BIN/bbrplot" ] && "$BIN/bbrplot" --trace "$out/trace.jsonl" --pcap "$out/capture.pcap" \
		-o "$out/dip.png" --title "quickack $quickack, $receiver receiver, RTT $rtt_effective" "${plot_opts[@]}" \
		--keep-data "$out/plot" \
		2>"$out/bbrplot.log"; then
		plot=",dip.png,plot/plot.sh"
	else
		echo "$PROG: no plot: $(tail -1 "$out/bbrplot.log" 2>/dev/null)" >&2
	fi
fi

cat "$out/verdict.txt"
pushed=send.jsonl,recv.jsonl,pushsim.json
[ "$push" = ffmpeg ] && pushed=ffmpeg.progress,ffmpeg.json,nginx
[ "$push" = iperf3 ] && pushed=iperf3.raw.json,iperf3.json
$recv_view && pushed+=,capture-recv.pcap,ackhold.jsonl
echo "outputs: $out/{trace.jsonl,capture.pcap,gaps.jsonl,$pushed,verdict.txt,verdict.json$plot}"
exit 0
