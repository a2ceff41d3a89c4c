# The doc tests' machinery: every command of the READMEs' ```sh blocks runs
# for real (tests/tools/doccmds.py reads them). Load after helpers:
#   load helpers; load docs_helpers
#
# doc_setup               this test's prefix doc-ID- for namespaces, its
#                         directory (where the commands run, so their files
#                         are relative to it), a private /var/lib/bbrkit (the
#                         quickack journals), and the namespace doc-ID-host
#                         that stands for the README's machine; a reaper
#                         that removes the test's namespaces if bats is killed
# doc_teardown            stops what doc_* started, deletes every doc-ID-*
#                         namespace; every file's teardown calls it
# doc_readme FILE         every block of FILE (doc_block), then doc_all_run FILE
# doc_block FILE LINE     the ```sh block that opens at FILE:LINE, in order:
#                         a watcher (bbrtrace, bbrpcap capture, udpdwell: what
#                         the README runs until Ctrl-C, or for a duration)
#                         starts in the background (after the test's
#                         doc_before CMD, if any, for a group's first one:
#                         a scenario that must be under way); at the next command (or a
#                         second watcher of the same program, or the block's
#                         end) the test's doc_during runs the scenario they
#                         watch, then each watcher ends by itself or gets
#                         SIGINT, as a terminal's Ctrl-C; any other command runs
#                         in the foreground. Each must end with the status the
#                         README gives (0 unless its comment says `exit N`);
#                         what it writes with -o/-w must be there (PNG and SVG
#                         checked with file(1)); the test's doc_after CMD, if
#                         any, checks more. Then what the block printed must
#                         match its ```text blocks (DOC_TEXT=0 skips that).
#                         A command after the watchers that the test's
#                         doc_is_scenario CMD accepts is not run: it is left
#                         in DOC_SCENARIO for doc_during. Commands matching
#                         the regular expression DOC_SKIP are left out.
# doc_substitute CMD      the README's command CMD as the runner runs it
# doc_run CMD             runs one command line as doc_block does (foreground)
# doc_all_run FILE        fails unless every command of FILE ran in this test
#                         or is in DOC_NOT_RUN
# doc_push SND RCV ADDR:PORT SECONDS [CC] [STOP]
#                         pushsim from namespace SND to RCV (app-ack receiver:
#                         the delayed-ACK case of repro/); STOP is a shell
#                         condition that ends the pushes early
# doc_ns NAME             the namespace that stands for the README's NAME

DOC_TOOL=$TK_ROOT/tests/tools/doccmds.py
DOC_CMD_TIMEOUT=120   # seconds: a foreground command (the longest runs about 20 s)
DOC_STOP_WAIT=30      # seconds a watcher has to end after SIGINT, or by itself
# where quickack keeps its journals by default (quickack/args.c); each
# command sees the test's own directory there
DOC_JOURNAL_DIR=/var/lib/bbrkit

# The build's and CI's own commands, which the doc tests do not run: a regular
# expression on the command (with `sudo ` dropped), a tab, the reason.
DOC_NOT_RUN='
^make( |$)	the build itself: CI runs `make test`, and a test cannot run make (or `make test`) inside `make test`; install.bats stages `make install` and `make uninstall`
^git archive	builds an old commit for the benchmark to compare with: needs the history and a second full build
^BASELINE=	the udpdwell benchmark, which `make bench` runs: it measures for minutes and asserts nothing
^KERNELS=	the test runner itself (tests/run.sh), which runs these tests
'

# Commands run smaller than written: a sed -E expression on the command (with
# `sudo ` dropped), a tab, the reason. Each must change some README command.
DOC_SUBST='
s/^(bin\/bbrtrace -d) 30 /\1 10 /	30 s of tracing, which docs_trace.bats spent waiting for the example to end; 10 s hold its 2 s push, and the start of the push on a loaded machine
s/^(repro\/dip\.sh .*--duration) 30 /\1 5 /	two 30 s pushes; 5 s ones leave the same outputs, and none collapses on a delayed ACK with quickack on (repro.bats runs and counts the long ones)
s/ --out \/tmp\// --out /	/tmp is every worktree'"'"'s: the outputs go to the test'"'"'s directory
s/^(bin\/udpdwell -p 5004 (--once )?--interval) 10 /\1 2 /	10 s intervals; 2 s ones write the same records
s/^(bin\/udpdwell .*-d) 60 /\1 5 /	a minute of intervals; 5 s hold two (of 2 s) and the one in progress (-d prints it)
s/^(repro\/sfu\.sh)$/\1 --seconds 3/	10 s per scenario take 37 s here; 3 s show the same three verdicts
s/^(upfbench run .*--sessions) 2\.2M/\1 200k/	2.2M sessions take 20-25 s and 4 GiB per run here; 200k still miss the cache
s/^(upfbench sweep --sessions 10k,100k),1M (.*)$/\1 \2 --packets 200k/	the 1M column adds 7 runs and 10 s; 200k packets a run, not 1M (the least by default), take 5.3 s instead of 8.6 s for the other 18 runs
s/^(upfbench lookup --sessions) 2\.2M/\1 200k/	2.2M sessions take 4 s and 130 MB for the lookups alone; 200k run the same code, mostly in cache here (this test runs the example and reads its lines; make bench measures the misses)
s/^(upfbench (run|sweep|floor)( .*)?)$/\1 --floor-mib 256/	the memory floor'"'"'s buffer is 8 x the L3 (4 GiB here) and takes 12 s in every run, sweep and floor
'

# the table's lines with something on them
doc_table() { grep -v '^$' <<<"$1"; }

doc_ns() { echo "doc-$DOC_ID-$1"; }

doc_setup() {
	# the commands run as root in namespaces; file(1) reads their pictures
	requires root netns file || return
	DOC_ID=$$
	DOC_HOST=$(doc_ns host)
	DOC_CWD=$BATS_TEST_TMPDIR/run
	DOC_STATE=$BATS_TEST_TMPDIR/journals
	DOC_LOG=$BATS_TEST_TMPDIR/log
	DOC_RAN=$BATS_TEST_TMPDIR/ran
	DOC_PIDS=()
	DOC_N=0
	mkdir -p "$DOC_CWD" "$DOC_STATE" "$DOC_LOG" "$DOC_JOURNAL_DIR"
	: >"$DOC_RAN"
	doc_start_reaper
	doc_ns_add host
}

# the test's namespaces, and what runs in them, once the test's process is
# gone: teardown does it, unless bats was killed (SIGTERM from run.sh's
# timeout, SIGKILL). In them: TERM first (repro/dip.sh's trap removes its
# own namespaces), KILL after 10 s. Without the test's fds (bats waits for
# them) or its lock.
doc_start_reaper() {
	setsid bash -c 'while kill -0 "$0" 2>/dev/null; do sleep 1; done
		doc_ns_pids() { for ns in $(ip netns list 2>/dev/null | awk "{print \$1}" | grep "^doc-$0-"); do ip netns pids "$ns"; done; }
		doc_ns_pids | xargs -r kill -TERM
		for _ in $(seq 100); do [ -z "$(doc_ns_pids)" ] && break; sleep 0.1; done
		doc_ns_pids | xargs -r kill -9
		for ns in $(ip netns list 2>/dev/null | awk "{print \$1}" | grep "^doc-$0-"); do ip netns del "$ns"; done' \
		"$DOC_ID" </dev/null >/dev/null 2>&1 3>&- 8>&- &
}

doc_ns_add() {
	local ns
	ns=$(doc_ns "$1")
	ip netns add "$ns" || return 1
	ip -n "$ns" link set lo up
}

# a veth pair: $1's $2 (address $3) and $4's $5 (address $6), addresses /24;
# done once both ends have their IPv6 link-local address (and its routes)
doc_link() {
	ip -n "$(doc_ns "$1")" link add "$2" type veth peer name "$5" netns "$(doc_ns "$4")" &&
		ip -n "$(doc_ns "$1")" addr add "$3/24" dev "$2" &&
		ip -n "$(doc_ns "$4")" addr add "$6/24" dev "$5" &&
		ip -n "$(doc_ns "$1")" link set "$2" up &&
		ip -n "$(doc_ns "$4")" link set "$5" up || return 1
	tk_wait_for "doc_link_local $(doc_ns "$1") $2 && doc_link_local $(doc_ns "$4") $5" 10
}

doc_link_local() {
	ip -n "$1" -6 -o addr show dev "$2" scope link | grep -v tentative | grep -q fe80
}

doc_teardown() {
	local p ns
	for p in "${DOC_PIDS[@]}"; do
		kill -INT -- "-$p" 2>/dev/null || kill -INT "$p" 2>/dev/null
	done
	for p in "${DOC_PIDS[@]}"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -9 -- "-$p" 2>/dev/null || kill -9 "$p" 2>/dev/null
	done
	[ -n "${DOC_ID:-}" ] || return 0
	for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^doc-$DOC_ID-"); do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	return 0
}

# --- the README's commands, as run here -------------------------------------------

# FILE LINE BLOCK STATUS SECTION COMMAND lines of FILE's commands
doc_list() { "$DOC_TOOL" list "$@"; }

doc_not_run() {
	local re reason
	while IFS=$'\t' read -r re reason; do
		[[ $1 =~ $re ]] && return 0
	done < <(doc_table "$DOC_NOT_RUN")
	return 1
}

doc_drop_sudo() { sed -E 's/(^|&& |\| )sudo /\1/g' <<<"$1"; }

# the README's namespace names become this test's: after --netns,
# --set-default-in, `ip netns exec` and `ip -n`; repro/lab.sh's, which it
# names itself, by its --prefix
doc_rename_netns() {
	sed -E -e "s/(--netns|--set-default-in|netns exec|ip -n) ([A-Za-z0-9_.-]+)/\1 doc-$DOC_ID-\2/g" \
		-e "s#(^| )(repro/lab\.sh)( |\$)#\1\2 --prefix doc-$DOC_ID-\3#" <<<"$1"
}

# the repository's programs named by path (bin/X, repro/X.sh) become
# absolute, as "$TK_ROOT"/bin/X: the command line is eval'd, and the
# checkout's path may hold a space (users clone anywhere); TK_ROOT is
# exported for those shells
export TK_ROOT
doc_resolve() {
	local cmd=$1 f rel
	for f in "$TK_ROOT"/bin/* "$TK_ROOT"/repro/*.sh; do
		rel=${f#"$TK_ROOT"/}
		cmd=$(sed -E "s#(^|[ ;&|(])${rel//./\\.}( |\$)#\\1\"\$TK_ROOT\"/$rel\\2#g" <<<"$cmd")
	done
	echo "$cmd"
}

doc_substitute() {
	local cmd expr reason
	cmd=$(doc_drop_sudo "$1")
	while IFS=$'\t' read -r expr reason; do
		cmd=$(sed -E "$expr" <<<"$cmd")
	done < <(doc_table "$DOC_SUBST")
	doc_resolve "$(doc_rename_netns "$cmd")"
}

# --- running them ---------------------------------------------------------------------

# argv that runs command line $1 in the README's machine: its namespace, the
# test's directory, the test's journal directory; "exec" as $2 makes the
# command the process itself (a watcher, to be signalled)
doc_argv() {
	if doc_builds_machine "$1" || [ -n "${DOC_HOST_MOUNTS:-}" ]; then
		DOC_ARGV=(bash -c 'cd "$0" && eval "$1 $2"' "$DOC_CWD" "${2:-}" "$1")
		return
	fi
	DOC_ARGV=(ip netns exec "$DOC_HOST" bash -c \
		'mount --bind "$0" "$1" && cd "$2" && eval "$3 $4"' \
		"$DOC_STATE" "$DOC_JOURNAL_DIR" "$DOC_CWD" "${2:-}" "$1")
}

# repro/lab.sh builds the README's machine itself: it runs in the host's
# namespaces, as `ip netns exec` gives each command a mount namespace of its
# own, and a network namespace added there is gone from /run/netns with it
doc_builds_machine() { [[ $(doc_program "$1") == lab.sh ]]; }
# (DOC_HOST_MOUNTS set: every command runs there, as a block of quickack's
# socket scopes must: its cgroup v2 hierarchy and bpffs are the host's)

doc_show() {
	echo "# $1"
	echo "#   command: $2"
	echo "#   status:  $3"
	sed 's/^/#   stdout: /' "$4" | head -40
	sed 's/^/#   stderr: /' "$5" | head -40
}

# runs command line $1 in the foreground, expecting status $2 (default 0);
# its output goes to $DOC_OUT and $DOC_ERR, and to the block's transcript
doc_run() {
	local cmd=$1 want=${2:-0} rc=0 ops='[;&|]'
	DOC_N=$((DOC_N + 1))
	DOC_OUT=$DOC_LOG/$DOC_N.out DOC_ERR=$DOC_LOG/$DOC_N.err
	# a simple command is exec'd, so that timeout signals it, not a shell
	if [[ $cmd =~ $ops ]]; then doc_argv "$cmd"; else doc_argv "$cmd" exec; fi
	timeout -k 5 "$DOC_CMD_TIMEOUT" "${DOC_ARGV[@]}" >"$DOC_OUT" 2>"$DOC_ERR" </dev/null || rc=$?
	[ "$rc" -eq "$want" ] || { doc_show "exit status $rc, the README's is $want" "$cmd" "$rc" "$DOC_OUT" "$DOC_ERR"; return 1; }
	doc_transcribe "$DOC_OUT" "$DOC_ERR"
	doc_check_outputs "$cmd" || return 1
	! declare -F doc_after >/dev/null || doc_after "$cmd" || { doc_show "doc_after failed" "$cmd" "$rc" "$DOC_OUT" "$DOC_ERR"; return 1; }
}

doc_transcribe() { [ -z "${DOC_TRANSCRIPT:-}" ] || cat "$@" >>"$DOC_TRANSCRIPT"; }

# the value of option $2 (or $3) in command $1
doc_opt() {
	local re="(^| )($2|${3:-$2})[ =]([^ ]+)"
	[[ $1 =~ $re ]] && echo "${BASH_REMATCH[3]}"
}

# what a command says it writes (-o, -w) is there, of its kind
doc_check_outputs() {
	local cmd=$1 f kind
	for f in "$(doc_opt "$cmd" -o --output)" "$(doc_opt "$cmd" -w --write)"; do
		[ -n "$f" ] || continue
		[[ $cmd == *--ring* && $f == *.* ]] && f=${f%.*}-000001.${f##*.}
		[ -s "$DOC_CWD/$f" ] || { echo "# $cmd: wrote no $f"; return 1; }
		kind=$(file -b "$DOC_CWD/$f")
		case $f in
		*.png) [[ $kind == "PNG image data"* ]] ;;
		*.svg) [[ $kind == *SVG* ]] ;;
		*.pcap) [[ $kind == *capture\ file* ]] ;;
		esac || { echo "# $cmd: $f is '$kind'"; return 1; }
	done
}

# --- watchers ----------------------------------------------------------------------------

# what a command line runs: "bbrtrace", "bbrpcap capture", ...
doc_program() {
	local w i=0
	read -ra w <<<"$1"
	while [ "${w[i]:-}" = ip ] && [ "${w[i + 1]:-}" = netns ]; do i=$((i + 4)); done
	local prog=${w[i]##*/}
	[ "$prog" = bbrpcap ] && prog="$prog ${w[i + 1]:-}"
	echo "$prog"
}

# bbrtrace (but --probe, --cleanup, --help-detect), bbrpcap capture and udpdwell watch
doc_is_watcher() {
	case $(doc_program "$1") in
	bbrtrace) [[ ! $1 =~ (--probe|--cleanup|--help|--help-detect|--version)( |$) ]] ;;
	"bbrpcap capture" | udpdwell) [[ ! $1 =~ (--help|--version)( |$) ]] ;;
	*) return 1 ;;
	esac
}

# ends by itself: a duration, a count, one interval
doc_ends_itself() { [[ $1 =~ \ (-d|--duration|-c|--count|--once)( |=|$) ]]; }

# started and able to see: bbrtrace and udpdwell say which backend, capture
# has its file
doc_ready() {
	local cmd=$1 err=$2 f
	case $(doc_program "$cmd") in
	"bbrpcap capture")
		f=$(doc_opt "$cmd" -w --write)
		[[ $cmd == *--ring* ]] && f=${f%.*}-000001.${f##*.}
		[ -e "$DOC_CWD/$f" ] ;;
	*) grep -q ': backend ' "$err" ;;
	esac
}

doc_start_watcher() {
	local cmd=$1 pid
	# the test's scenario may have to be under way before the first watcher
	# starts: one that ends by itself (--once) would otherwise watch its start
	if [ ${#DOC_GROUP[@]} -eq 0 ] && declare -F doc_before >/dev/null; then
		doc_before "$cmd" || { echo "# the scenario did not start before: $cmd"; return 1; }
	fi
	DOC_N=$((DOC_N + 1))
	doc_argv "$cmd" exec
	set -m
	"${DOC_ARGV[@]}" >"$DOC_LOG/$DOC_N.out" 2>"$DOC_LOG/$DOC_N.err" </dev/null &
	pid=$!
	set +m
	DOC_PIDS+=("$pid")
	DOC_GROUP+=("$pid $DOC_N $cmd")
	for _ in $(seq 300); do
		kill -0 "$pid" 2>/dev/null || break
		doc_ready "$cmd" "$DOC_LOG/$DOC_N.err" && { sleep 0.2; return 0; }
		sleep 0.1
	done
	doc_show "not ready after 30 s" "$cmd" "?" "$DOC_LOG/$DOC_N.out" "$DOC_LOG/$DOC_N.err"
	return 1
}

# waits up to $2 seconds for process $1 to end, then reaps it: DOC_RC
doc_reap() {
	local i rc late=
	for ((i = 0; i < $2 * 10; i++)); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$1" 2>/dev/null; then
		kill -9 -- "-$1" 2>/dev/null || kill -9 "$1" 2>/dev/null
		late=timeout
	fi
	wait "$1"
	rc=$?
	doc_forget "$1"
	DOC_RC=${late:-$rc}
}

# a process reaped leaves the list teardown signals: its PID may be reused
doc_forget() {
	local p keep=()
	for p in "${DOC_PIDS[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
	DOC_PIDS=("${keep[@]}")
}

# process $1 runs: exists and is no zombie (ended, not yet reaped)
doc_running() {
	local st
	st=$(ps -o stat= -p "$1" 2>/dev/null) && [[ $st != Z* ]]
}

# each watcher of the group: running or not, and its stderr's last lines (a
# watcher that ended or lost what it registered explains a scenario's failure)
doc_group_show() {
	local g pid n cmd
	for g in "${DOC_GROUP[@]}"; do
		read -r pid n cmd <<<"$g"
		echo "# $cmd: $(doc_running "$pid" && echo running || echo ended); its stderr:"
		tail -n 5 "$DOC_LOG/$n.err" | sed 's/^/#   /'
	done
}

# every watcher of the group still runs: a push is what they watch, and one
# begun after a watcher ended (its -d over, or failed) would fail for a
# reason it cannot name (bbr_traced gone: connect's "No such file")
doc_group_alive() {
	local g pid n cmd
	for g in "${DOC_GROUP[@]}"; do
		read -r pid n cmd <<<"$g"
		doc_running "$pid" && continue
		echo "# $cmd ended before the push it watches began; its stderr:"
		tail -n 5 "$DOC_LOG/$n.err" | sed 's/^/#   /'
		return 1
	done
}

# the group's scenario (the test's doc_during), then each watcher's end
doc_finish_group() {
	local g pid n cmd
	[ ${#DOC_GROUP[@]} -gt 0 ] || return 0
	declare -F doc_during >/dev/null || { echo "# this test runs watchers but defines no doc_during"; return 1; }
	doc_during || {
		echo "# the scenario failed, while these ran: $(doc_group_cmds | paste -sd ';')"
		doc_group_show
		return 1
	}
	for g in "${DOC_GROUP[@]}"; do
		read -r pid n cmd <<<"$g"
		doc_ends_itself "$cmd" || kill -INT -- "-$pid" 2>/dev/null
		doc_reap "$pid" "$DOC_STOP_WAIT"
		DOC_OUT=$DOC_LOG/$n.out DOC_ERR=$DOC_LOG/$n.err
		[ "$DOC_RC" = 0 ] || { doc_show "exit status $DOC_RC after the scenario" "$cmd" "$DOC_RC" "$DOC_OUT" "$DOC_ERR"; return 1; }
		doc_transcribe "$DOC_OUT" "$DOC_ERR"
		doc_check_outputs "$cmd" || return 1
		! declare -F doc_after >/dev/null || doc_after "$cmd" || { doc_show "doc_after failed" "$cmd" 0 "$DOC_OUT" "$DOC_ERR"; return 1; }
	done
	DOC_GROUP=()
}

# the commands of the group, one per line (for doc_during)
doc_group_cmds() {
	local g pid n cmd
	for g in "${DOC_GROUP[@]}"; do
		read -r pid n cmd <<<"$g"
		echo "$cmd"
	done
}

# the watcher of the group whose command matches $1: "PID N"
doc_group_find() {
	local g pid n cmd
	for g in "${DOC_GROUP[@]}"; do
		read -r pid n cmd <<<"$g"
		[[ $cmd =~ $1 ]] && { echo "$pid $n"; return 0; }
	done
	return 1
}

# waits (up to $1 s) for the group's watchers that end by themselves
doc_group_wait() {
	local g pid n cmd
	for g in "${DOC_GROUP[@]}"; do
		read -r pid n cmd <<<"$g"
		doc_ends_itself "$cmd" || continue
		tk_wait_for "! kill -0 $pid 2>/dev/null" "$1" || return 1
	done
}

# --- blocks and files ---------------------------------------------------------------------

doc_block() {
	local file=$1 block=$2 rows row f n b s sec c cmd prog running
	DOC_GROUP=()
	DOC_TRANSCRIPT=$DOC_LOG/transcript-${file//\//_}-$block-$DOC_N
	: >"$DOC_TRANSCRIPT"
	# read first: the commands and scenarios must not read the list as stdin
	mapfile -t rows < <(doc_list "$file")
	for row in "${rows[@]}"; do
		IFS=$'\t' read -r f n b s sec c <<<"$row"
		[ "$b" = "$block" ] || continue
		doc_not_run "$(doc_drop_sudo "$c")" && continue
		cmd=$(doc_substitute "$c")
		[ -n "${DOC_SKIP:-}" ] && [[ $cmd =~ $DOC_SKIP ]] && continue
		echo "$file:$n" >>"$DOC_RAN"
		# the scenario the watchers watch, when the README gives it: the
		# test's doc_during runs it (DOC_SCENARIO), as often as it needs
		if [ ${#DOC_GROUP[@]} -gt 0 ] && declare -F doc_is_scenario >/dev/null && doc_is_scenario "$cmd"; then
			DOC_SCENARIO=$cmd
			continue
		fi
		if doc_is_watcher "$cmd"; then
			prog=$(doc_program "$cmd")
			running=$(doc_group_cmds | while read -r x; do doc_program "$x"; done)
			grep -qxF "$prog" <<<"$running" && { doc_finish_group || return 1; }
			doc_start_watcher "$cmd" || return 1
		else
			doc_finish_group || return 1
			doc_run "$cmd" "$s" || return 1
		fi
	done
	doc_finish_group || return 1
	[ "${DOC_TEXT:-1}" = 0 ] || doc_match "$file" "$block" "$DOC_TRANSCRIPT"
}

# what was printed ($3) against the text blocks of the block at $1:$2
doc_match() {
	"$DOC_TOOL" match "$1" "$2" "$3" && return 0
	echo "# what $1:$2 printed:"
	sed 's/^/#   /' "$3" | head -60
	return 1
}

doc_blocks() { doc_list "$1" | cut -f3 | uniq; }

doc_readme() {
	local b
	for b in $(doc_blocks "$1"); do
		doc_block "$1" "$b" || return 1
	done
	doc_all_run "$1"
}

doc_all_run() {
	local f n b s sec c missing=0
	while IFS=$'\t' read -r f n b s sec c; do
		doc_not_run "$(doc_drop_sudo "$c")" && continue
		grep -qxF "$f:$n" "$DOC_RAN" && continue
		echo "# $f:$n did not run: $c"
		missing=1
	done < <(doc_list "$1")
	return $missing
}

# --- scenarios ------------------------------------------------------------------------------

# the congestion control a traced flow needs: bbr_traced while bbrtrace runs
# its struct_ops backend (stderr $1), else bbr
doc_traced_cc() {
	if grep -q ': backend struct_ops' "$1"; then echo bbr_traced; else echo bbr; fi
}

# pushsim from namespace $1 to namespace $2's ADDR:PORT $3 for $4 s, with
# congestion control $5 (default: the namespace's); with a shell condition $6,
# pushes of DOC_PUSH_PART s, one after the other, until it holds (or $4 s):
# a push stopped halfway would close its socket with the receiver's
# application ACKs unread, and reset the connection
DOC_PUSH_PART=4
doc_push() {
	local secs=$4 stop=${6:-} done_s=0
	[ -n "$stop" ] || { doc_push_once "$1" "$2" "$3" "$secs" "${5:-}"; return; }
	while [ "$done_s" -lt "$secs" ]; do
		doc_push_once "$1" "$2" "$3" "$DOC_PUSH_PART" "${5:-}" || return 1
		done_s=$((done_s + DOC_PUSH_PART))
		eval "$stop" && return 0
	done
	echo "# still not true after $secs s of pushes: $stop"
	return 1
}

doc_push_once() {
	local snd rcv addr=$3 secs=$4 cc=${5:-} rpid spid rc
	doc_group_alive || return 1
	snd=$(doc_ns "$1") rcv=$(doc_ns "$2")
	ip netns exec "$rcv" "$BIN/pushsim" recv --listen "$addr" --mode app-ack --ack-bytes 65536 \
		--summary-only --json >"$DOC_LOG/recv.json" 2>"$DOC_LOG/recv.err" &
	rpid=$!
	DOC_PIDS+=("$rpid")
	tk_wait_listen "${addr##*:}" 5 "$rcv" || return 1
	ip netns exec "$snd" "$BIN/pushsim" send --connect "$addr" --duration "$secs" --fps 20 \
		${cc:+--cc "$cc"} --summary-only --json >"$DOC_LOG/send.json" 2>"$DOC_LOG/send.err" &
	spid=$!
	DOC_PIDS+=("$spid")
	doc_reap "$spid" $((secs + 10))
	rc=$DOC_RC
	doc_reap "$rpid" 10
	[ "$rc" = 0 ] && [ "$DOC_RC" = 0 ] ||
		{ echo "# the push failed ($rc, $DOC_RC)"; cat "$DOC_LOG"/send.err "$DOC_LOG"/recv.err; return 1; }
}

# bbrtrace with options "$@" in the README's machine, for what the README runs
# while bbrtrace runs (not one of its commands): started, then stopped by
# doc_bbrtrace_stop (SIGINT, status 0) or by doc_teardown
doc_bbrtrace_start() {
	DOC_BT_ERR=$DOC_LOG/bbrtrace-helper.err
	# emptied here, not by the child's redirection: that may come after the
	# first look below, which would find the last helper's ': backend' line
	# and then an empty file (a CI run's pcap/README.md, its second capture)
	: >"$DOC_BT_ERR"
	set -m
	ip netns exec "$DOC_HOST" "$BIN/bbrtrace" "$@" 2>"$DOC_BT_ERR" </dev/null &
	DOC_BT_PID=$!
	set +m
	DOC_PIDS+=("$DOC_BT_PID")
	tk_wait_for "grep -q ': backend ' '$DOC_BT_ERR' || ! kill -0 $DOC_BT_PID" 30
	grep -q ': backend ' "$DOC_BT_ERR" && return 0
	doc_reap "$DOC_BT_PID" 5
	echo "# the helper bbrtrace $* did not start: status $DOC_RC; its stderr:"
	cat "$DOC_BT_ERR"
	return 1
}

doc_bbrtrace_stop() {
	kill -INT -- "-$DOC_BT_PID" 2>/dev/null
	doc_reap "$DOC_BT_PID" "$DOC_STOP_WAIT"
	DOC_BT_PID=
	[ "$DOC_RC" = 0 ] || { echo "# the helper bbrtrace ended with $DOC_RC"; cat "$DOC_BT_ERR"; return 1; }
}

# the single summary record's field $2 of trace $1
doc_summary() { jq -s -r "[.[] | select(.type==\"summary\")] | if length == 1 then .[0].$2 else error(\"\(length) summaries\") end" "$1"; }

# the bbr_traced lock (helpers.bash), saying how long it took: other runs of
# the toolkit's tests hold it for minutes
doc_lock() {
	local t0=$SECONDS
	tk_lock_bbr_traced || return 1
	[ $((SECONDS - t0)) -lt 2 ] || echo "# waited $((SECONDS - t0)) s for the bbr_traced lock" >&3
}
