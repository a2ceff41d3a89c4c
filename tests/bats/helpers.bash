# Shared helpers for the bats CLI tests. Load with: load helpers
#
# requires WORD...   the one gate for privileged or optional tests. The words
#                    are a fixed vocabulary; an unknown word fails the test.
#                    A missing requirement skips the test, saying exactly what
#                    is missing, except under CI=true, where it fails it.
# tk_run CMD...      runs CMD like bats' run (status, output, stderr kept
#                    apart) and remembers it for tk_dump.
# expect_*           assertions that print command, status, stdout and stderr
#                    when they fail; expect_equal prints both sides.
# tk_netns_pair NAME creates namespaces ${NAME}-a and ${NAME}-b joined by a
#                    veth pair (veth0 in a, veth1 in b): 10.201.0.1/24 and
#                    fd00:201::1/64 in a, .2 and ::2 in b. Cleaned up by
#                    tk_cleanup, which every file's teardown must call.
# tk_bbr_main_sig    bbr_main's parameter count and its BTF, from bpftool
# tk_bbr_traced_obj  the bbr_traced object that fits this kernel's bbr_main

bats_require_minimum_version 1.5.0

# the repository: two folders above this file, wherever the suite lives.
# Builtins only (bats loads this file for every test, and in an emulated
# guest each exec costs 60 to 250 ms)
TK_ROOT=${BASH_SOURCE[0]%/*}
[ "$TK_ROOT" != "${BASH_SOURCE[0]}" ] || TK_ROOT=.
TK_ROOT=$(cd "$TK_ROOT/../.." && pwd)
BIN=$TK_ROOT/bin
export PATH="$BIN:$PATH"
TK_STATE_DIR=${BATS_FILE_TMPDIR:-/tmp}

_tk_missing() {
	if [ "${CI:-}" = true ]; then
		echo "requires: $1 is missing, and CI=true does not allow a skip" >&2
		return 1
	fi
	skip "missing: $1"
}

_tk_have_cmd() { command -v "$1" >/dev/null 2>&1; }

requires() {
	local w
	for w in "$@"; do
		case $w in
		root)
			[ "$EUID" -eq 0 ] || { _tk_missing "root (run the tests as root)"; return; } ;;
		cgroup2)
			grep -qw cgroup2 /proc/self/mountinfo ||
				{ _tk_missing "a cgroup v2 hierarchy (mount -t cgroup2 none /sys/fs/cgroup)"; return; } ;;
		btf)
			[ -r /sys/kernel/btf/vmlinux ] || { _tk_missing "kernel BTF (/sys/kernel/btf/vmlinux; CONFIG_DEBUG_INFO_BTF=y)"; return; } ;;
		netns)
			[ "$EUID" -eq 0 ] && _tk_have_cmd ip || { _tk_missing "network namespaces (root and iproute2's ip)"; return; } ;;
		bbr)
			grep -qw bbr /proc/sys/net/ipv4/tcp_available_congestion_control 2>/dev/null ||
				modprobe tcp_bbr 2>/dev/null ||
				{ _tk_missing "TCP BBR (CONFIG_TCP_CONG_BBR or the tcp_bbr module)"; return; } ;;
		struct_ops)
			[ -r /sys/kernel/btf/vmlinux ] && bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null |
				grep -q "STRUCT 'bpf_struct_ops_tcp_congestion_ops'" ||
				{ _tk_missing "BPF struct_ops for tcp_congestion_ops (kernel 5.6+ with BTF)"; return; } ;;
		kprobe)
			[ -e /sys/bus/event_source/devices/kprobe/type ] || [ -e /sys/kernel/tracing/kprobe_events ] ||
				[ -e /sys/kernel/debug/tracing/kprobe_events ] ||
				{ _tk_missing "kprobes (CONFIG_KPROBES: no kprobe PMU, no kprobe_events)"; return; } ;;
		fentry)
			tk_have_fentry ||
				{ _tk_missing "BPF trampolines (fentry/fexit: bpftool feature probe finds no tracing programs)"; return; } ;;
		netem)
			ip netns add tk-probe-netem-$$ 2>/dev/null
			if ! ip netns exec tk-probe-netem-$$ tc qdisc add dev lo root netem delay 1ms 2>/dev/null; then
				ip netns del tk-probe-netem-$$ 2>/dev/null
				_tk_missing "sch_netem (the kernel has no netem qdisc)"
				return
			fi
			ip netns del tk-probe-netem-$$ 2>/dev/null ;;
		iperf3 | tcpdump | tshark | tcptrace | mergecap | capinfos | editcap | gnuplot | jq | bpftool | ss | nstat | prometheus | promtool | tc | valgrind | curl | script | strace | file | ethtool)
			_tk_have_cmd "$w" || { _tk_missing "the $w command (run ./scripts/install-deps.sh)"; return; } ;;
		git)
			_tk_have_cmd git && git -C "$TK_ROOT" rev-parse --git-dir > /dev/null 2>&1 ||
				{ _tk_missing "git, and a git checkout at $TK_ROOT"; return; } ;;
		qemu)
			_tk_have_cmd qemu-system-x86_64 ||
				{ _tk_missing "qemu-system-x86_64 (Debian package qemu-system-x86; run ./scripts/install-deps.sh)"; return; } ;;
		ffmpeg)
			_tk_have_cmd ffmpeg && ffmpeg -hide_banner -encoders 2>/dev/null | grep -qw libx264 ||
				{ _tk_missing "ffmpeg with libx264 (run ./scripts/install-deps.sh)"; return; } ;;
		nginx-rtmp)
			# Debian's libnginx-mod-rtmp; repro/dip.sh loads it from there
			_tk_have_cmd nginx && [ -r "${DIP_NGINX_RTMP_MODULE:-/usr/lib/nginx/modules/ngx_rtmp_module.so}" ] ||
				{ _tk_missing "nginx with its RTMP module (nginx-light and libnginx-mod-rtmp: run ./scripts/install-deps.sh)"; return; } ;;
		scapy)
			/usr/bin/python3 -c 'import scapy.all' 2>/dev/null ||
				{ _tk_missing "python3-scapy (run ./scripts/install-deps.sh)"; return; } ;;
		yaml)
			/usr/bin/python3 -c 'import yaml' 2>/dev/null ||
				{ _tk_missing "python3-yaml (run ./scripts/install-deps.sh)"; return; } ;;
		*)
			echo "requires: unknown word '$w'" >&2
			return 1 ;;
		esac
	done
}

# BPF tracing programs (fentry/fexit) load here, as bpftool's own probe says
tk_have_fentry() {
	bpftool feature probe kernel 2>/dev/null | grep -q 'program_type tracing is available'
}

# bbr_main's parameter count and the BTF it is in ("vmlinux" or a module),
# read with bpftool, independently of bbrtrace: "4 vmlinux", "2 tcp_bbr"
tk_bbr_main_sig() {
	local m
	for m in vmlinux tcp_bbr; do
		[ -r "/sys/kernel/btf/$m" ] || continue
		# a module's types may point at prototypes in vmlinux's BTF, its base
		{
			[ "$m" = vmlinux ] || bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null | grep -F FUNC_PROTO
			bpftool btf dump file "/sys/kernel/btf/$m" 2>/dev/null
		} | awk -v m="$m" '
			$2 == "FUNC_PROTO" { for (i = 3; i <= NF; i++) if ($i ~ /^vlen=/) vlen[$1] = substr($i, 6) }
			$2 == "FUNC" && $3 == "\x27bbr_main\x27" { split($4, t, "="); want = "[" t[2] "]" }
			END { if (want != "") print vlen[want], m }
		' | grep . && return 0
	done
	return 1
}

# the struct_ops object bbrtrace registers on this kernel, by bbr_main's form
tk_bbr_traced_obj() {
	if [ "$(tk_bbr_main_sig | cut -d' ' -f1)" = 2 ]; then
		echo "$TK_ROOT/build/gen/bbr_traced_pre610.bpf.o"
	else
		echo "$TK_ROOT/build/gen/bbr_traced.bpf.o"
	fi
}

tk_run() {
	TK_CMD="$*"
	run --separate-stderr "$@"
}

# tk_on_tty FILE CMD [ARG...]: CMD run on a terminal (script(1)), what it
# wrote there kept in FILE. script runs a command line, not an argv, so each
# word is quoted for the shell it starts: a checkout's path may hold a space
tk_on_tty() {
	local file=$1
	shift
	script -qfec "${*@Q}" "$file" > /dev/null
}

tk_dump() {
	echo "# $1"
	echo "# command: ${TK_CMD:-?}"
	echo "# status:  ${status:-?}"
	echo "# stdout:"
	printf '%s\n' "${output:-}" | head -60 | sed 's/^/#   /'
	echo "# stderr:"
	printf '%s\n' "${stderr:-}" | head -60 | sed 's/^/#   /'
}

expect_status() {
	[ "$status" -eq "$1" ] || { tk_dump "expected exit status $1"; return 1; }
}

expect_stderr() {
	[[ "$stderr" == *"$1"* ]] || { tk_dump "expected stderr to contain: $1"; return 1; }
}

expect_output() {
	[[ "$output" == *"$1"* ]] || { tk_dump "expected stdout to contain: $1"; return 1; }
}

# expect_equal ACTUAL EXPECTED [WHAT]: both sides are printed when they differ
expect_equal() {
	[ "$1" = "$2" ] || { echo "# ${3:-value}: expected '$2', got '$1'"; return 1; }
}

# expect_cmp ACTUAL OP EXPECTED [WHAT]: a whole-number comparison, OP one of
# test(1)'s -eq -ne -lt -le -gt -ge; both sides are printed when it fails
# (a bare [ ] names only the expression)
expect_cmp() {
	local -A sym=([-eq]="=" [-ne]="!=" [-lt]="<" [-le]="<=" [-gt]=">" [-ge]=">=")
	[[ $1 =~ ^-?[0-9]+$ ]] || { echo "# ${4:-value}: expected a whole number ${sym[$2]:-$2} $3, got '$1'"; return 1; }
	[ "$1" "$2" "$3" ] || { echo "# ${4:-value}: expected ${sym[$2]:-$2} $3, got $1"; return 1; }
}

# expect_version TOOL: $output is TOOL's --version line, "TOOL N (git HASH)": N
# the number in the file VERSION, HASH the commit it was built from (with
# -dirty when the tree had changes), a commit of this repository when the
# tree is a git checkout; elsewhere (a tarball, a guest without git) the
# commit cannot be checked and "TOOL N" alone is right too
expect_version() {
	local tool=$1 want re
	want=$(cat "$TK_ROOT/VERSION")
	re="^$tool ${want//./\\.}( \\(git ([0-9a-f]{7,40})(-dirty)?\\))?\$"
	[[ $output =~ $re ]] || { tk_dump "expected: $tool $want (git HASH)"; return 1; }
	[ -e "$TK_ROOT/.git" ] && _tk_have_cmd git || return 0
	[ -n "${BASH_REMATCH[2]}" ] || { tk_dump "built from git, yet no commit"; return 1; }
	git -C "$TK_ROOT" cat-file -e "${BASH_REMATCH[2]}^{commit}" 2> /dev/null ||
		{ tk_dump "${BASH_REMATCH[2]} is no commit of $TK_ROOT"; return 1; }
}

expect_one_line_stderr() {
	local n
	n=$(printf '%s' "$stderr" | grep -c '')
	[ "$n" -eq 1 ] || { tk_dump "expected exactly one line on stderr, got $n"; return 1; }
}

# --- network namespaces ---------------------------------------------------------

TK_NETNS=()

tk_netns_pair() {
	local name=$1 a=$1-a b=$1-b
	ip netns del "$a" 2>/dev/null || true
	ip netns del "$b" 2>/dev/null || true
	ip netns add "$a" && TK_NETNS+=("$a")
	ip netns add "$b" && TK_NETNS+=("$b")
	ip -n "$a" link set lo up
	ip -n "$b" link set lo up
	ip -n "$a" link add veth0 type veth peer name veth1 netns "$b"
	ip -n "$a" addr add 10.201.0.1/24 dev veth0
	ip -n "$b" addr add 10.201.0.2/24 dev veth1
	ip -n "$a" addr add fd00:201::1/64 dev veth0 nodad
	ip -n "$b" addr add fd00:201::2/64 dev veth1 nodad
	ip -n "$a" link set veth0 up
	ip -n "$b" link set veth1 up
	printf '%s\n' "$a" "$b" >> "$TK_STATE_DIR/netns.list"
}

# A -- R -- B: namespaces NAME-a, NAME-r, NAME-b; A is 10.202.1.1 (veth0),
# B is 10.202.2.2 (veth0), R routes between them (veth1 on each side). Cleaned
# up by tk_cleanup.
tk_routed_trio() {
	local a=$1-a r=$1-r b=$1-b ns
	for ns in "$a" "$r" "$b"; do
		ip netns del "$ns" 2>/dev/null || true
		ip netns add "$ns" || return 1
		echo "$ns" >> "$TK_STATE_DIR/netns.list"
		ip -n "$ns" link set lo up
	done
	ip -n "$a" link add veth0 type veth peer name ra netns "$r"
	ip -n "$b" link add veth0 type veth peer name rb netns "$r"
	ip -n "$a" addr add 10.202.1.1/24 dev veth0
	ip -n "$r" addr add 10.202.1.254/24 dev ra
	ip -n "$r" addr add 10.202.2.254/24 dev rb
	ip -n "$b" addr add 10.202.2.2/24 dev veth0
	for ns in "$a" "$b"; do ip -n "$ns" link set veth0 up; done
	ip -n "$r" link set ra up
	ip -n "$r" link set rb up
	ip -n "$a" route add default via 10.202.1.254
	ip -n "$b" route add default via 10.202.2.254
	ip netns exec "$r" sysctl -qw net.ipv4.ip_forward=1
}

# what repro/dip.sh runs in (namespaces rp-push-ID, rp-rtr-ID, rp-recv-ID, and
# those of IDs starting with ID) removed, with every process inside: a run that
# failed half-way leaves them
tk_del_dip_netns() {
	local ns
	for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^rp-(push|rtr|recv)-$1"); do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	return 0
}

# a test's teardown for a tk_netns_pair NAME: nothing the test started may
# outlive it: its jobs (SIGINT, then SIGKILL 0.3 s later) and whatever runs in
# NAME-a and NAME-b (iperf3 -D is not a job)
tk_end_test_processes() {
	jobs -p | xargs -r kill -INT 2>/dev/null || true
	sleep 0.3
	jobs -p | xargs -r kill -9 2>/dev/null || true
	ip netns pids "$1-a" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
	ip netns pids "$1-b" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
}

# kill the processes started in our namespaces, then delete the namespaces
tk_cleanup() {
	local ns pids
	[ -f "$TK_STATE_DIR/netns.list" ] || return 0
	while read -r ns; do
		pids=$(ip netns pids "$ns" 2>/dev/null)
		[ -n "$pids" ] && kill -9 $pids 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done < "$TK_STATE_DIR/netns.list"
	rm -f "$TK_STATE_DIR/netns.list"
	return 0
}

# wait up to $2 seconds (default 5) for a TCP listener on port $1 in netns $3
tk_wait_listen() {
	local port=$1 secs=${2:-5} ns=${3:-} i
	for ((i = 0; i < secs * 20; i++)); do
		if [ -n "$ns" ]; then
			ip netns exec "$ns" ss -Hltn "sport = :$port" | grep -q . && return 0
		else
			ss -Hltn "sport = :$port" | grep -q . && return 0
		fi
		sleep 0.05
	done
	echo "# nothing listens on port $port after ${secs}s" >&2
	return 1
}

# Only one bbr_traced can be registered per machine. Files whose tests run
# bbrtrace's struct_ops backend take this lock in setup_file and drop it in
# teardown_file, so concurrent runs wait instead of failing. A holder process
# keeps it, not a descriptor of the file's shell: every process a test starts
# would inherit that descriptor, and one that outlived its test (a daemon a
# failed or stopped run left) would hold the lock for every later run. The
# holder ends with the bats process that took it (tail --pid), so a killed
# run leaves no lock either. Its PID is read before the fork: $BASHPID in
# the background command would be flock's own.
TK_BBR_TRACED_LOCK=${TK_BBR_TRACED_LOCK:-/run/lock/bbrkit-bbr_traced.lock}
TK_LOCK_WAIT_S=900
tk_lock_bbr_traced() {
	local ready=$BATS_FILE_TMPDIR/bbr_traced.holder owner=$BASHPID flocker i
	rm -f "$ready"
	flock -w "$TK_LOCK_WAIT_S" "$TK_BBR_TRACED_LOCK" \
		sh -c 'echo $$ > "$1.tmp" && mv "$1.tmp" "$1" && exec tail --pid="$2" -f /dev/null' \
		sh "$ready" "$owner" < /dev/null > /dev/null 2>&1 3>&- &
	flocker=$!
	# flock's own wait, in 0.1 s steps, and 10 s for it to start and give up
	for ((i = 0; i < (TK_LOCK_WAIT_S + 10) * 10; i++)); do
		[ -s "$ready" ] && return 0
		kill -0 "$flocker" 2> /dev/null || break
		sleep 0.1
	done
	[ -s "$ready" ] && return 0
	kill "$flocker" 2> /dev/null
	echo "# could not take the bbr_traced lock ($TK_BBR_TRACED_LOCK) in $TK_LOCK_WAIT_S s" >&2
	return 1
}

tk_unlock_bbr_traced() {
	local ready=$BATS_FILE_TMPDIR/bbr_traced.holder holder i
	[ -s "$ready" ] || return 0
	holder=$(cat "$ready")
	kill "$holder" 2> /dev/null
	# until the holder is gone: flock then exits and the lock is free
	for ((i = 0; i < 50; i++)); do
		kill -0 "$holder" 2> /dev/null || break
		sleep 0.1
	done
	rm -f "$ready"
	return 0
}

# a TCP port of FROM..TO-1 that nothing in this namespace listens on (TO:
# FROM's thousand's end), printed; fails when every one is taken
tk_free_tcp_port() {
	local p from=$1 to=${2:-$(( ($1 / 1000 + 1) * 1000 ))}
	for ((p = from; p < to; p++)); do
		ss -Hltn "sport = :$p" | grep -q . || { echo "$p"; return 0; }
	done
	return 1
}

# tk_prometheus_start DIR PORT: Prometheus with DIR/prometheus.yml and its
# TSDB in DIR/data, on 127.0.0.1 at the first free port from PORT
# (TK_PROM_WEB), its pid PROM_PID, its log DIR/log, for 120 s at most;
# returns once it is ready. A port free when checked can be taken before
# Prometheus binds it (by an outgoing connection: the ephemeral ports,
# 32768 to 60999, hold the tests' ports); Prometheus then exits "address
# already in use", and the next port is tried, 3 in all. One that exits
# otherwise, or is not ready in 30 s, fails with its log (a run beside a
# busy core waited its 30 s and printed no log: its cause went unseen).
tk_prometheus_start() {
	local dir=$1 port=$2 try i
	for ((try = 0; try < 3; try++)); do
		TK_PROM_WEB=$(tk_free_tcp_port "$port") || return 1
		timeout 120 prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
			--web.listen-address="127.0.0.1:$TK_PROM_WEB" --log.level=warn > "$dir/log" 2>&1 &
		PROM_PID=$!
		for ((i = 0; i < 300; i++)); do
			curl -sf "http://127.0.0.1:$TK_PROM_WEB/-/ready" > /dev/null && return 0
			kill -0 "$PROM_PID" 2> /dev/null || break
			sleep 0.1
		done
		if ! kill -0 "$PROM_PID" 2> /dev/null && grep -q 'address already in use' "$dir/log"; then
			wait "$PROM_PID" 2> /dev/null || true
			port=$((TK_PROM_WEB + 1))
			continue
		fi
		break
	done
	echo "# Prometheus on 127.0.0.1:$TK_PROM_WEB not ready ($(kill -0 "$PROM_PID" 2> /dev/null && echo running || echo exited)):"
	cat "$dir/log"
	return 1
}

# tk_netstat NS NAME: the kernel's counter NAME, as nstat names it
# (TcpInSegs, TcpExtDelayedACKs, UdpInDatagrams), in namespace NS since it
# was made, printed; fails, naming the counter, where this kernel has none
tk_netstat() {
	local v
	v=$(ip netns exec "$1" nstat -az "$2" | awk -v n="$2" '$1 == n { print $2 }')
	[[ $v =~ ^[0-9]+$ ]] || { echo "no counter $2 in namespace $1 (nstat -az)" >&2; return 1; }
	echo "$v"
}

# wait up to $2 seconds (default 10) until command $1 succeeds
tk_wait_for() {
	local cmd=$1 secs=${2:-10} i
	for ((i = 0; i < secs * 10; i++)); do
		eval "$cmd" && return 0
		sleep 0.1
	done
	echo "# still false after ${secs}s: $cmd" >&2
	return 1
}

# tk_wait_local6 NS PREFIX N [DEV]: wait (5 s at most) until namespace NS has
# N local IPv6 routes starting with PREFIX (fe80:: for the link-local ones,
# one per device that is up with a carrier), on DEV only when given. The
# kernel adds each when its address is ready, asynchronously: a test that
# compares route tables must start after them, or it sees them arrive as a
# change.
tk_wait_local6() {
	local i
	for ((i = 0; i < 100; i++)); do
		[ "$(ip -n "$1" -6 route show table local ${4:+dev "$4"} | grep -c "^local $2")" -ge "$3" ] && return 0
		sleep 0.05
	done
	echo "# $1: $3 local routes of $2 addresses${4:+ on $4} did not come up in 5 s" >&2
	return 1
}

# quickack's socket scopes pin in bpffs, which quickack mounts where it is
# missing. A file that attaches scopes notes in setup_file what was there
# (tk_bpffs_note); in teardown_file, tk_bpffs_restore unpins what its tests
# left (one that failed half-way) and unmounts what quickack mounted. (Live
# files run one at a time, so no other file's pins come and go meanwhile.)
tk_bpffs_note() {
	[ "$(stat -f -c %T /sys/fs/bpf 2> /dev/null)" = bpf_fs ] || touch "$TK_STATE_DIR/bpffs-mounted-here"
	ls /sys/fs/bpf/bbrkit/quickack > "$TK_STATE_DIR/pins-before" 2> /dev/null || true
	return 0
}

tk_bpffs_restore() {
	local d
	for d in $(ls /sys/fs/bpf/bbrkit/quickack 2> /dev/null); do
		grep -qx "$d" "$TK_STATE_DIR/pins-before" 2> /dev/null || rm -rf "/sys/fs/bpf/bbrkit/quickack/$d"
	done
	if [ -e "$TK_STATE_DIR/bpffs-mounted-here" ] && [ -z "$(ls -A /sys/fs/bpf/bbrkit/quickack 2> /dev/null)" ]; then
		rm -rf /sys/fs/bpf/bbrkit
		umount /sys/fs/bpf 2> /dev/null
	fi
	return 0
}

# tk_tcpdump_start NS FILE ARGS...: tcpdump in namespace NS writing FILE packet
# by packet (-U --immediate-mode), with ARGS (interface, snaplen, filter);
# returns once it listens, with its first count marked for
# scripts/tcpdump-drain.sh. Its pid is TK_TCPDUMP_PID, its stderr FILE.err.
# (A tcpdump that starts slowly is waited for, 30 s at most: one took over 5 s
# once; a SIGUSR1 before it listens would kill it. So FILE.err is emptied
# first, here: a capture before to the same FILE left its "listening on" in
# it, and the redirection below empties it only when the child runs, which
# under load came after the wait had read the old line, and the mark's
# SIGUSR1 killed a tcpdump not yet listening.)
tk_tcpdump_start() {
	local ns=$1 file=$2
	shift 2
	: > "$file.err"
	ip netns exec "$ns" tcpdump -U --immediate-mode -w "$file" "$@" 2> "$file.err" &
	TK_TCPDUMP_PID=$!
	tk_wait_for "grep -q 'listening on' '$file.err' 2> /dev/null" 30 || { cat "$file.err"; return 1; }
	"$TK_ROOT/scripts/tcpdump-drain.sh" mark "$TK_TCPDUMP_PID" "$file.err" 10
}

# tk_tcpdump_stop PID FILE: once tcpdump has written every packet the kernel
# gave it (a buffered one stopped at once loses the last ones: a capture's last
# stall, a push's last 11 frames), stop it; fails when the kernel dropped any
tk_tcpdump_stop() {
	local pid=$1 file=$2
	"$TK_ROOT/scripts/tcpdump-drain.sh" wait "$pid" "$file.err" 20 || return 1
	kill -INT "$pid" 2> /dev/null
	wait "$pid" 2> /dev/null
	grep -q '^0 packets dropped by kernel' "$file.err" || { cat "$file.err"; return 1; }
}

# tk_acks_without_sample DIR PORT: in repro/dip.sh's outputs DIR, the ACKs
# from the receiver's PORT that moved the pusher's snd_una but have no
# sample in the trace, between its first and last sample, and the pusher's
# merged ACKs: "MISSING COALESCED". BBR runs once per ACK the stack
# processes, but the pusher's kernel merges ACKs that arrive while the
# application holds the socket (its backlog), and counts each merge in
# TcpExtTCPBacklogCoalesce (a merged data segment counts too): so MISSING
# never exceeds COALESCED, unless bbrtrace lost a sample
tk_acks_without_sample() {
	local d=$1 port=$2
	{
		jq -r --argjson p "$port" 'select(.type == "sample" and .dport == $p) | "S \(.snd_una)"' "$d/trace.jsonl"
		# the receiver's ACKs, absolute and relative (tshark's: the ISN is 0)
		tshark -r "$d/capture.pcap" -Y "tcp.srcport == $port" -T fields -E separator=' ' \
			-e tcp.ack_raw -e tcp.ack 2> /dev/null | sed 's/^/A /'
	} | awk -v coal="$(jq .sender_backlog_coalesced "$d/verdict.json")" '
		function rel(a) { r = (a - isn) % 4294967296; return r < 0 ? r + 4294967296 : r }
		$1 == "S" { una[++ns] = $2; next }
		$1 == "A" && !have_isn { isn = ($2 - $3) % 4294967296; have_isn = 1 }
		$1 == "A" && $3 > top { acked[++na] = $3; top = $3 }
		END {
			for (i = 1; i <= ns; i++) { u = rel(una[i]); seen[u] = 1; if (i == 1 || u < lo) lo = u; if (u > hi) hi = u }
			for (i = 1; i <= na; i++) if (acked[i] >= lo && acked[i] <= hi && !(acked[i] in seen)) miss++
			print miss + 0, coal
		}'
}

# tk_expect_acks_sampled DIR PORT [NAME]: a sample for every ACK the pusher's
# stack processed: the wire's ACKs without one (tk_acks_without_sample) are
# the ones its kernel merged in the socket's backlog, but for at most
# TK_ACKS_UNSAMPLED_MAX more. Those are not explained yet: an ACK that TCP
# processed (the segment it acknowledged was no longer in flight at the next
# ACK) yet reached no bbr_main, with nothing lost nor merged; 0 or 1 in each
# of 8 pushes of 12-30 s (ffmpeg and pushsim, 600-1800 ACKs), so twice that
TK_ACKS_UNSAMPLED_MAX=2
tk_expect_acks_sampled() {
	local d=$1 port=$2 name=${3:-$(basename "$1")} miss coal
	read -r miss coal < <(tk_acks_without_sample "$d" "$port")
	echo "# $name: $miss ACKs without a sample, $coal merged in the pusher's backlog" >&3
	[ "$miss" -le $((coal + TK_ACKS_UNSAMPLED_MAX)) ] ||
		{ echo "# more ACKs without a sample ($miss) than the kernel merged ($coal), by over $TK_ACKS_UNSAMPLED_MAX"; return 1; }
}

# tk_trace_clock TRACE PCAP SENDER RECEIVER: the trace's clock against the
# capture's, told when the two disagree: each of SENDER's ACK samples (its
# snd_una) against the first frame from RECEIVER that ACKs that far; prints
# the median, 10th and 90th percentile of the trace's wall time less the
# capture's. A sample follows its ACK's tap by tens of us (a passing rtmp
# push: median 22 us, 90% under 44 us), so an offset of the whole run shows
# as a median far from that
tk_trace_clock() {
	local trace=$1 pcap=$2 snd=$3 rcv=$4
	{
		tshark -r "$pcap" -o tcp.relative_sequence_numbers:FALSE -Y "ip.src == $rcv" -T fields \
			-e frame.time_epoch -e tcp.ack 2> /dev/null | awk '{ printf "P %.0f %s\n", $1 * 1e6, $2 }'
		jq -r --arg s "$snd" 'select(.type == "sample" and .saddr == $s) | "T \(.wall_ns / 1000 | floor) \(.snd_una)"' "$trace"
	} | awk '$1 == "P" { if (!($3 in tap)) tap[$3] = $2; next }
		 ($3 in tap) && !($3 in seen) { seen[$3] = 1; printf "%.0f\n", $2 - tap[$3] }' | sort -n |
		awk '{ o[++n] = $1 }
		     END { if (!n) { print "# the trace'"'"'s clock: no ACK sample matched a frame"; exit }
			   printf "# the trace'"'"'s clock less the capture'"'"'s over %d ACKs: median %d us (10%%: %d us, 90%%: %d us)\n",
				  n, o[int(n / 2) + 1], o[int(n / 10) + 1], o[int(n * 9 / 10) + 1] }'
}

# tk_stalls_vs_wire TRACE PCAP CAUSE SENDER RECEIVER: the stall records of
# cause CAUSE in TRACE (bbrtrace --detect JSON lines) against tcpdump's PCAP
# of the same flows at the sender, an independent view: for each, the wire
# shows SENDER's data up to the stall's snd_nxt by its start, and no new data
# until it ends (1 ms of slack each side); a stall ended "unseen" (by what no
# tap sees: a timer, close()) closes at the next event, so its end is only a
# bound: new data must have left by then. For cwnd_limited, RECEIVER's last
# window before it also reached past snd_nxt + 1 MSS (the window did not hold
# it). Prints one line per stall that disagrees; "STALLS n" first. (The
# stalls' file is told by its name, not by NR == FNR, which holds for every
# frame when there is no stall of the cause.)
tk_stalls_vs_wire() {
	local trace=$1 pcap=$2 cause=$3 snd=$4 rcv=$5 st=$BATS_TEST_TMPDIR/stalls-$3.txt
	jq -r --arg c "$cause" 'select(.type=="stall" and .cause==$c)
		| "\(.wall_ns) \(.duration_us) \(.snd_nxt) \(.mss) \(.sport) \(.ended_by)"' "$trace" | sort -n > "$st"
	echo "STALLS $(wc -l < "$st")"
	# time, source, seq (absolute), payload, ack, window (scaled), ports
	tshark -r "$pcap" -o tcp.relative_sequence_numbers:FALSE -T fields -E separator=' ' \
		-e frame.time_epoch -e ip.src -e tcp.seq -e tcp.len -e tcp.ack -e tcp.window_size \
		-e tcp.srcport -e tcp.dstport 2> /dev/null |
		awk -v slack=0.001 -v snd="$snd" -v rcv="$rcv" -v cw=$([ "$cause" = cwnd_limited ] && echo 1 || echo 0) '
		function after(a, b) { d = (a - b) % 4294967296; if (d < 0) d += 4294967296; return d > 0 && d < 2147483648 }
		FILENAME == ARGV[1] { t0[NR] = $1 / 1e9; t1[NR] = t0[NR] + $2 / 1e6; nxt[NR] = $3; mss[NR] = $4; port[NR] = $5
			    by[NR] = $6; unseen[NR] = $6 == "unseen"; n = NR; next }
		{
			# the stalls begun by now: what the wire had sent, and the window, then
			while (j < n && t0[j + 1] + slack < $1) {
				j++
				top[j] = (port[j] in hi) ? hi[port[j]] : -1
				wnd[j] = (port[j] in win) ? win[port[j]] : -1
			}
			# the stalls over by now, with the slack past their end
			while (k < j && t1[k + 1] + slack < $1) k++
			if ($2 == snd && $4 > 0) {
				end = ($3 + $4) % 4294967296
				if (!($7 in hi) || after(end, hi[$7])) hi[$7] = end
				for (i = k + 1; i <= j; i++) {
					if (port[i] != $7 || !after(end, nxt[i]))
						continue
					if (unseen[i])
						gone[i] = 1 # by its end, slack included
					else if ($1 < t1[i] - slack) {
						if (!late[i]) lead[i] = t1[i] - $1
						late[i]++
					}
				}
			} else if ($2 == rcv) {
				win[$8] = ($5 + $6) % 4294967296
			}
		}
		END {
			while (j < n) {
				j++
				top[j] = (port[j] in hi) ? hi[port[j]] : -1
				wnd[j] = (port[j] in win) ? win[port[j]] : -1
			}
			for (i = 1; i <= n; i++) {
				if (top[i] != nxt[i]) { printf "stall %d: the wire sent up to %.0f by its start, not snd_nxt %.0f\n", i, top[i], nxt[i]; continue }
				if (unseen[i]) { if (!(i in gone)) printf "stall %d (ended unseen): no new data left by its end\n", i; continue }
				if (late[i]) { printf "stall %d (ended by %s, %.1f ms): %d segments of new data left during it, the first %.1f ms before its end\n", i, by[i], (t1[i] - t0[i]) * 1e3, late[i], lead[i] * 1e3; continue }
				if (cw && (wnd[i] < 0 || !after(wnd[i], (nxt[i] + mss[i]) % 4294967296)))
					printf "stall %d: the receiver window %.0f did not reach past snd_nxt %.0f + 1 MSS\n", i, wnd[i], nxt[i]
			}
		}' "$st" -
}

# tk_acks_end_stalls JOINED: bbrpcap join's output of a trace against a
# capture at the sender; every Nagle stall that an ACK ended has that ACK's
# frame in the capture, captured during the stall: after its start (wall_ns),
# and by its end (plus duration_us) within 5 ms. The capture stamps the ACK
# as it enters the sender's stack and the tap as tcp_ack takes it, on one
# clock, so the frame comes first: tens of microseconds idle, but the softirq
# that carries the ACK to tcp_ack waits for a busy or starved CPU, and a
# guest's vCPU starved by a loaded host waited 5.7 ms (ci39); only the
# stall's start bounds that side. Late, 5 ms is the two stamps' disagreement
# the check allows. (Not the ACK's delay against the stall's length: the ACK
# covers data sent before the hold began, and a starved vCPU sends a write's
# segments over milliseconds.) The first three are printed as "# joined:"
# lines on fd 3; the ones that disagree on stdout. No such stall passes: the
# caller asserts how many there must be.
tk_acks_end_stalls() {
	local joined=$1 sel='[.[] | select(.type=="stall" and .cause=="nagle" and .ended_by=="ack") |
		{duration_us, frame, ack_delay_us, ack_after_end_us: (if .frame == null then null
			else (.frame_time_ns - .wall_ns) / 1000 - .duration_us end)}]'
	local during='.ack_after_end_us != null and .ack_after_end_us > -.duration_us and .ack_after_end_us < 5000'
	jq -c -s "$sel | .[0:3]" "$joined" | sed 's/^/# joined: /' >&3
	jq -e -s "$sel | all($during)" "$joined" > /dev/null && return 0
	jq -c -s "$sel | map(select($during | not))" "$joined"
	return 1
}

# tk_ack_fields PCAP: the capture's TCP packets as ack_holds.awk reads them
# (CSV: time, source port, destination port, length, next sequence, ACK,
# frame number)
tk_ack_fields() {
	tshark -r "$1" -T fields -E separator=, -e frame.time_relative -e tcp.srcport -e tcp.dstport \
		-e tcp.len -e tcp.nxtseq -e tcp.ack -e frame.number 2> /dev/null
}

# tk_ack_holds PCAP PORT: the receiver's ACK holds on PORT in the capture,
# ms, one a line (tests/fixtures/quickack/ack_holds.awk: from the oldest
# segment an ACK is the first to cover to that ACK)
tk_ack_holds() {
	tk_ack_fields "$1" | awk -v port="$2" -f "$TK_ROOT/tests/fixtures/quickack/ack_holds.awk"
}

# tk_ack_holds_by_frame PCAP PORT: the same holds, each after the frame
# number of the receiver's packet that ended it ("FRAME MS" a line)
tk_ack_holds_by_frame() {
	tk_ack_fields "$1" | awk -v port="$2" -v frames=1 -f "$TK_ROOT/tests/fixtures/quickack/ack_holds.awk"
}

# tk_expect_timer_acks RECORDS MINE KERNEL LOCKED: the ACKs ackhold says the
# delayed-ACK timer sent are TcpExtDelayedACKs' count (KERNEL: the ACKs the
# timer's handler sent), exactly for the handler that runs as the timer
# fires (ackhold sees it queue the ACK), but for two kinds: the ACKs its
# verdict in RECORDS says it did not see (on 6.18 none of its programs ran
# for them: bpf/ackhold.bpf.c's unseen_ack), and the timer's firings
# deferred while the application held the socket (TcpExtDelayedACKLocked,
# LOCKED), whose handler runs at the socket's release, where ackhold goes by
# the firing's time: each may credit the timer with an ACK the application's
# read sent first, or miss one the handler sent for data that came after
tk_expect_timer_acks() {
	local unseen
	unseen=$(jq 'select(.type == "verdict") | .unseen_acks' "$1")
	echo "# ACKs the delayed-ACK timer sent: ackhold $2, TcpExtDelayedACKs $3 ($unseen ACKs unseen," \
		"TcpExtDelayedACKLocked $4)" >&3
	expect_cmp "$2" -le "$(($3 + $4))" "ACKs the timer sent, ackhold against the kernel's and its deferred ones"
	expect_cmp "$2" -ge "$(($3 - unseen - $4))" \
		"ACKs the timer sent, ackhold and its unseen and deferred ones against the kernel"
}

# tk_expect_dip_timer_acks DIR: tk_expect_timer_acks on repro/dip.sh's
# outputs DIR of a --receiver-view run: ackhold's peers' against the
# receiver's counters in DIR/verdict.json
tk_expect_dip_timer_acks() {
	tk_expect_timer_acks "$1/ackhold.jsonl" \
		"$(jq -s '[.[] | select(.type == "peer") | .timer_acks] | add // 0' "$1/ackhold.jsonl")" \
		"$(jq .receiver_delayed_acks "$1/verdict.json")" "$(jq .receiver_delayed_acks_locked "$1/verdict.json")"
}
