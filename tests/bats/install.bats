#!/usr/bin/env bats
# make install and make uninstall, and the installed toolkit at work with the
# source tree out of reach: each such command runs in a private mount
# namespace (unshare -m) where an empty tmpfs covers the tree and the staged
# install (DESTDIR) is bind-mounted on PREFIX, as if installed there. The man
# pages and the bash completions are held to each tool's --help.

load helpers

# make in the tree, for the variant bin/ holds now (never relinks it as another)
tk_make() {
	local san=0
	[ "$(cat "$TK_ROOT/build/variant" 2>/dev/null)" = san ] && san=1
	make -C "$TK_ROOT" --no-print-directory -s SANITIZE=$san "$@"
}

setup_file() {
	local rc=0
	export STAGE=$BATS_FILE_TMPDIR/stage WORK=$BATS_FILE_TMPDIR/work
	tk_make install DESTDIR="$STAGE" > "$BATS_FILE_TMPDIR/install.log" 2>&1 || rc=$?
	echo "$rc" > "$BATS_FILE_TMPDIR/install.rc"
	tk_make install-list > "$BATS_FILE_TMPDIR/install.list"
	# the binaries were built for this PREFIX (bbrplot's TK_DATADIR)
	PREFIX=$(awk '$2 == "bin/bbrplot" { sub("/bin/bbrplot$", "", $3); print $3 }' "$BATS_FILE_TMPDIR/install.list")
	export PREFIX
	mkdir -p "$WORK"
	cp "$TK_ROOT"/tests/fixtures/pcap/dip-paced.{jsonl,pcap} "$TK_ROOT"/tests/fixtures/plots/sweep.csv "$WORK"
}

setup() {
	[ "$(cat "$BATS_FILE_TMPDIR/install.rc")" -eq 0 ] || {
		sed 's/^/# /' "$BATS_FILE_TMPDIR/install.log"
		return 1
	}
	[ -n "$PREFIX" ] && [ -d "$PREFIX" ]
}

# the installed tools, "DIR NAME" (DIR: bin or sbin)
installed_tools() {
	awk '$2 ~ /^bin\// { n = split($3, p, "/"); print p[n - 1], p[n] }' "$BATS_FILE_TMPDIR/install.list"
}

# CMD... run as an installed toolkit sees the machine: the source tree hidden,
# the staged install on PREFIX, PREFIX's sbin and bin first on PATH, from $WORK
tk_installed() {
	TK_ROOT=$TK_ROOT STAGE=$STAGE PREFIX=$PREFIX WORK=$WORK unshare -m --propagation private -- sh -c '
		mount -t tmpfs -o ro,size=64k tk-hidden "$TK_ROOT" &&
		mount --bind "$STAGE$PREFIX" "$PREFIX" &&
		cd "$WORK" &&
		PATH=$PREFIX/sbin:$PREFIX/bin:/usr/sbin:/usr/bin:/sbin:/bin exec "$@"' tk_installed "$@"
}

# FUNCTION TOOL [ARG...]: one of the installed completion's readers of --help
# (_bbrkit_options, _bbrkit_commands) on the staged TOOL; --help needs nothing
# from the tree
completion_reader() {
	local func=$1 tool=$2
	shift 2
	bash --norc --noprofile -c 'source "$0"; "$@"' "$STAGE$PREFIX/share/bash-completion/completions/$tool" \
		"$func" "$(stage_path "$tool")" "$@"
}

# every option of TOOL: those of its --help and of each of its commands' --help
help_options() {
	local cmd
	{
		completion_reader _bbrkit_options "$1"
		for cmd in $(completion_reader _bbrkit_commands "$1"); do
			completion_reader _bbrkit_options "$1" "$cmd"
		done
	} | sort -u
}

stage_path() {
	local d
	for d in sbin bin; do
		[ -x "$STAGE$PREFIX/$d/$1" ] && { echo "$STAGE$PREFIX/$d/$1"; return 0; }
	done
	return 1
}

# the options a man page documents: in its SYNOPSIS and in its .TP tags
# (tests/tools/manpage.py reads them), in this shell's order, as help_options
man_options() {
	python3 "$TK_ROOT/tests/tools/manpage.py" options "$1" | sort -u
}

# the words the installed completion offers for WORDS... (the last one is being
# completed), through bash-completion's own loader and the function it
# registers, in a clean shell with the staged install on its data path
complete_words() {
	XDG_DATA_DIRS=$STAGE$PREFIX/share PATH=$STAGE$PREFIX/sbin:$STAGE$PREFIX/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		bash --norc --noprofile -c '
		source /usr/share/bash-completion/bash_completion
		__load_completion "$1" || { echo "no completion loads for $1" >&2; exit 1; }
		func=$(complete -p "$1" | sed -E "s/.* -F ([^ ]+) .*/\1/")
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		"$func" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		printf "%s\n" "${COMPREPLY[@]}"
	' complete_words "$@"
}

@test "make install puts exactly the install list's files under DESTDIR, with their modes" {
	local mode src dest n=0
	while read -r mode src dest; do
		[ -f "$STAGE$dest" ] || { echo "# not installed: $dest"; return 1; }
		[ "$(stat -c %a "$STAGE$dest")" = "$mode" ] || { echo "# $dest: mode $(stat -c %a "$STAGE$dest"), not $mode"; return 1; }
		cmp -s "$TK_ROOT/$src" "$STAGE$dest" || { echo "# $dest differs from $src"; return 1; }
		n=$((n + 1))
	done < "$BATS_FILE_TMPDIR/install.list"
	[ "$(find "$STAGE" -type f | wc -l)" -eq "$n" ] || { find "$STAGE" -type f | sed 's/^/# /'; return 1; }
	echo "# $n files"
}

@test "root tools go to sbin with a man page in section 8, the others to bin with section 1" {
	local dir tool sec
	while read -r dir tool; do
		sec=1
		[ "$dir" = sbin ] && sec=8
		[ -f "$STAGE$PREFIX/share/man/man$sec/$tool.$sec" ] || { echo "# $tool: no man page in section $sec"; return 1; }
		[ -f "$STAGE$PREFIX/share/bash-completion/completions/$tool" ] || { echo "# $tool: no completion"; return 1; }
		echo "# $dir/$tool"
	done < <(installed_tools)
	expect_equal "$(installed_tools | awk '$1 == "sbin" { print $2 }' | sort | tr '\n' ' ')" "ackhold bbrtrace quickack udpdwell " "tools installed in sbin"
	expect_cmp "$(installed_tools | wc -l)" -eq 10 "tools installed"
	expect_equal "$(ls "$STAGE$PREFIX/share/bbrkit/plots")" "$(cd "$TK_ROOT/plots" && ls ./*.gp | sed 's|^\./||')" "plot templates installed"
}

@test "with the source tree out of reach, every installed tool answers --help and --version" {
	requires root
	tk_run tk_installed bash -c '
		[ ! -e "$TK_ROOT/Makefile" ] || { echo "the source tree is still there"; exit 1; }
		while read -r dir tool; do
			[ "$(command -v "$tool")" = "$PREFIX/$dir/$tool" ] || { echo "$tool is not $PREFIX/$dir/$tool"; exit 1; }
			"$tool" --help > /dev/null || { echo "$tool --help: status $?"; exit 1; }
			"$tool" --version || { echo "$tool --version: status $?"; exit 1; }
		done' < <(installed_tools)
	expect_status 0
	# each says the number in VERSION, and its commit when built from git
	version=$(cat "$TK_ROOT/VERSION")
	[ "$(printf '%s\n' "$output" | awk -v v="$version" '$2 == v' | wc -l)" -eq 10 ] ||
		{ tk_dump "10 tools of version $version"; return 1; }
	[ "$(printf '%s\n' "$output" | grep -c " $version (git [0-9a-f]*\(-dirty\)\?)$")" -eq 10 ] ||
		[ ! -e "$TK_ROOT/.git" ] || { tk_dump "10 tools with the commit they were built from"; return 1; }
}

@test "installed bbrplot draws the dip plot from the installed templates, with the installed bbrpcap" {
	requires root
	tk_run tk_installed bbrplot -v --trace dip-paced.jsonl --pcap dip-paced.pcap -o dip.png
	expect_status 0
	expect_stderr "bbrplot: template $PREFIX/share/bbrkit/plots/dip.gp"
	expect_equal "$(head -c 8 "$WORK/dip.png" | od -An -t x1 | tr -d ' \n')" 89504e470d0a1a0a "first 8 bytes of dip.png (the PNG signature)"
	rm -f "$WORK/dip.png"
}

@test "a staged bbrplot, run where it lies, draws with the staged templates" {
	requires root
	tk_run tk_installed "$STAGE$PREFIX/bin/bbrplot" sweep sweep.csv -o sweep.png -v
	expect_status 0
	expect_stderr "bbrplot: template $STAGE$PREFIX/share/bbrkit/plots/sweep.gp"
	rm -f "$WORK/sweep.png"
}

@test "a bbrplot copied away from its install finds the templates in the compiled-in PREFIX" {
	requires root
	tk_run tk_installed bash -c 'mkdir -p elsewhere && cp "$PREFIX/bin/bbrplot" elsewhere/ &&
		elsewhere/bbrplot sweep sweep.csv -o sweep.svg -v'
	expect_status 0
	expect_stderr "bbrplot: template $PREFIX/share/bbrkit/plots/sweep.gp"
	head -1 "$WORK/sweep.svg" | grep -q '^<?xml'
	rm -rf "$WORK/elsewhere" "$WORK/sweep.svg"
}

@test "installed bbrpcap lists the flows of a capture" {
	requires root
	tk_run tk_installed bbrpcap flows --format json dip-paced.pcap
	expect_status 0
	expect_output '"type":"flow","flow":1,"a":"10.77.1.2:45258","b":"10.77.2.2:43100"'
	expect_output '"frames":854'
}

@test "installed upfbench: a small run whose counters are exact" {
	requires root
	tk_run tk_installed upfbench run --sessions 1k --packets 100k --floor-mib 0 --verify --format json
	expect_status 0
	expect_output '"type":"upf_run"'
	expect_stderr "counters: exact for 1000 sessions: 100000 packets"
}

@test "installed quickack turns quick ACKs on for a route and restores it, in a namespace of its own" {
	requires root
	tk_run tk_installed unshare -n bash -c '
		ip link set lo up && ip route add 10.201.9.0/24 dev lo &&
		quickack on 10.201.9.0/24 --journal qa.journal &&
		ip route show 10.201.9.0/24 && quickack restore --journal qa.journal && ip route show 10.201.9.0/24'
	expect_status 0
	[ "$(printf '%s\n' "$output" | head -1)" = "10.201.9.0/24 dev lo scope link quickack 1 " ] || { tk_dump "quickack 1"; return 1; }
	[ "$(printf '%s\n' "$output" | tail -1)" = "10.201.9.0/24 dev lo scope link " ] || { tk_dump "restored"; return 1; }
	[ ! -e "$WORK/qa.journal" ]
}

@test "installed udpdwell measures one interval" {
	requires root btf
	tk_run tk_installed udpdwell --once --interval 0.5 -f json -p 45000
	expect_status 0
	expect_output '"type":"interval"'
}

@test "installed bbrtrace probes its backends" {
	requires root btf
	tk_lock_bbr_traced
	tk_run tk_installed bbrtrace --probe
	tk_unlock_bbr_traced
	expect_status 0
	expect_output "struct_ops load:"
	expect_output "kprobe     load:"
}

@test "installed pushsim pushes for a second over the loopback, in a namespace of its own" {
	requires root
	tk_run tk_installed unshare -n bash -c '
		ip link set lo up
		timeout 20 pushsim recv --listen 127.0.0.1:19350 --json --summary-only &
		for i in $(seq 100); do ss -Hltn "sport = :19350" | grep -q . && break; sleep 0.1; done
		timeout 20 pushsim send --connect 127.0.0.1:19350 --duration 1 --json --summary-only; s=$?
		wait $! && exit $s'
	expect_status 0
	expect_output '"role":"send","mode":"push"'
	expect_output '"role":"recv","mode":"prompt"'
}

@test "installed rtpsend and sfu_echo exchange datagrams, in a namespace of their own" {
	requires root
	tk_run tk_installed unshare -n bash -c '
		ip link set lo up
		timeout 20 sfu_echo --listen 127.0.0.1:40000 --idle-exit 1 -q &
		for i in $(seq 100); do ss -Hlun "sport = :40000" | grep -q . && break; sleep 0.1; done
		timeout 20 rtpsend --to 127.0.0.1:40000 -d 0.5 -r 1000 -q; s=$?
		wait $! && exit $s'
	expect_status 0
	expect_output '"type":"sender","sent":500,"emulated_loss":0,'
	# a loaded machine may drop some on the loopback: every datagram read is echoed
	echoes=$(printf '%s\n' "$output" | sed -n 's/.*"echoes":\([0-9]*\).*/\1/p')
	packets=$(printf '%s\n' "$output" | sed -n 's/.*"type":"receiver","packets":\([0-9]*\).*/\1/p')
	[ "${packets:-0}" -gt 0 ] && [ "$echoes" = "$packets" ] || { tk_dump "echoes = packets > 0"; return 1; }
}

@test "the installed man pages render without a warning, and man finds each in its section" {
	local dir tool sec page warn
	while read -r dir tool; do
		sec=1
		[ "$dir" = sbin ] && sec=8
		page=$(man -M "$STAGE$PREFIX/share/man" -w "$tool")
		[ "$page" = "$STAGE$PREFIX/share/man/man$sec/$tool.$sec" ] || { echo "# man -w $tool: $page"; return 1; }
		warn=$(groff -ww -z -man "$page" 2>&1)
		[ -z "$warn" ] || { echo "# $tool.$sec: $warn"; return 1; }
		MANWIDTH=80 man -l "$page" 2>&1 | grep -q "^$(echo "$tool" | tr a-z A-Z)($sec)" ||
			{ echo "# $tool.$sec: man -l shows no header"; return 1; }
	done < <(installed_tools)
}

@test "each man page documents exactly the options of its tool's --help and of its commands' --help" {
	local dir tool sec bad=0
	while read -r dir tool; do
		sec=1
		[ "$dir" = sbin ] && sec=8
		help_options "$tool" > "$BATS_TEST_TMPDIR/help"
		man_options "$STAGE$PREFIX/share/man/man$sec/$tool.$sec" > "$BATS_TEST_TMPDIR/man"
		[ -s "$BATS_TEST_TMPDIR/help" ] || { echo "# $tool: no option read from --help"; bad=1; }
		if ! diff -u "$BATS_TEST_TMPDIR/help" "$BATS_TEST_TMPDIR/man" > "$BATS_TEST_TMPDIR/diff"; then
			echo "# $tool: --help (-) and $tool.$sec (+) differ:"
			tail -n +3 "$BATS_TEST_TMPDIR/diff" | grep '^[-+]' | sed 's/^/#   /'
			bad=1
		fi
	done < <(installed_tools)
	expect_cmp "$bad" -eq 0 "man pages at odds with --help"
}

@test "the completion offers every option --help lists, for each tool and each command" {
	local dir tool cmd bad=0
	while read -r dir tool; do
		help_options "$tool" > "$BATS_TEST_TMPDIR/help"
		for cmd in "" $(completion_reader _bbrkit_commands "$tool"); do
			complete_words "$tool" $cmd - | sort -u > "$BATS_TEST_TMPDIR/offered"
			completion_reader _bbrkit_options "$tool" $cmd > "$BATS_TEST_TMPDIR/want"
			if [ -n "$(comm -23 "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/offered")" ]; then
				echo "# $tool $cmd -<TAB> misses: $(comm -23 "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/offered" | tr '\n' ' ')"
				bad=1
			fi
			cat "$BATS_TEST_TMPDIR/offered" >> "$BATS_TEST_TMPDIR/all"
		done
		if [ -n "$(sort -u "$BATS_TEST_TMPDIR/all" | comm -23 "$BATS_TEST_TMPDIR/help" -)" ]; then
			echo "# $tool: options never offered: $(sort -u "$BATS_TEST_TMPDIR/all" | comm -23 "$BATS_TEST_TMPDIR/help" - | tr '\n' ' ')"
			bad=1
		fi
		rm -f "$BATS_TEST_TMPDIR/all"
	done < <(installed_tools)
	expect_cmp "$bad" -eq 0 "completions missing an option"
}

@test "the completion offers the commands, and completes a prefix to the right option" {
	expect_equal "$(complete_words quickack "" | tr '\n' ' ')" "congctl nodelay off on restore rto-min show status " "commands offered for quickack"
	expect_equal "$(complete_words bbrpcap "" | tr '\n' ' ')" "acks capture flows gaps join throughput " "commands offered for bbrpcap"
	expect_equal "$(complete_words upfbench "" | tr '\n' ' ')" "check-identity decode floor lookup run sweep " "commands offered for upfbench"
	expect_equal "$(complete_words pushsim "" | tr '\n' ' ')" "recv send " "commands offered for pushsim"
	expect_equal "$(complete_words bbrplot "" | tr '\n' ' ')" "dip dwell sweep upf " "commands offered for bbrplot"
	expect_equal "$(complete_words bbrpcap capture --sn)" --snaplen "completion of bbrpcap capture --sn"
	expect_equal "$(complete_words bbrpcap join --max)" --max-skew-ms "completion of bbrpcap join --max"
	expect_equal "$(complete_words upfbench run --pre | tr '\n' ' ')" "--prefetch --preset " "completions of upfbench run --pre"
	expect_equal "$(complete_words bbrtrace --set-def | tr '\n' ' ')" "--set-default --set-default-in " "completions of bbrtrace --set-def"
	expect_equal "$(complete_words udpdwell --bpf | tr '\n' ' ')" "--bpf-reference --bpf-stats " "completions of udpdwell --bpf"
}

@test "make uninstall removes exactly what make install put there" {
	local stage2=$BATS_TEST_TMPDIR/stage
	tk_make install DESTDIR="$stage2" > /dev/null
	mkdir -p "$stage2$PREFIX/share/man/man1"
	echo "not ours" > "$stage2$PREFIX/bin/not-ours"
	echo "not ours" > "$stage2$PREFIX/share/man/man1/not-ours.1"
	tk_run tk_make uninstall DESTDIR="$stage2"
	expect_status 0
	[ "$(cd "$stage2" && find . -type f | sort | tr '\n' ' ')" = ".$PREFIX/bin/not-ours .$PREFIX/share/man/man1/not-ours.1 " ] ||
		{ find "$stage2" -type f | sed 's/^/# left: /'; return 1; }
	[ ! -e "$stage2$PREFIX/share/bbrkit" ]
	tk_run tk_make uninstall DESTDIR="$stage2"
	expect_status 0
	rm -rf "$stage2"
}

# CMD... in the installed toolkit's view (tk_installed), with the staged
# option files on SYSCONFDIR/default too: where the units read them; it
# replaces the shell it runs in
tk_installed_etc() {
	local etc
	etc=$(awk '$3 ~ /\/default\/bbrtrace$/ { sub("/default/bbrtrace$", "", $3); print $3 }' "$BATS_FILE_TMPDIR/install.list")
	# exec: a job of this function is the daemon itself, for its signals
	TK_ROOT=$TK_ROOT STAGE=$STAGE PREFIX=$PREFIX WORK=$WORK ETC=$etc exec unshare -m --propagation private -- sh -c '
		mount -t tmpfs -o ro,size=64k tk-hidden "$TK_ROOT" &&
		mount --bind "$STAGE$PREFIX" "$PREFIX" &&
		mount --bind "$STAGE$ETC/default" "$ETC/default" &&
		cd "$WORK" &&
		PATH=$PREFIX/sbin:$PREFIX/bin:/usr/sbin:/usr/bin:/sbin:/bin exec "$@"' tk_installed "$@"
}

@test "the daemons' systemd units pass systemd-analyze verify where make install put them" {
	requires root
	command -v systemd-analyze > /dev/null || { echo "# systemd-analyze is missing (Debian's systemd)"; return 1; }
	local units
	units=$(awk '$3 ~ /\.service$/ { print $3 }' "$BATS_FILE_TMPDIR/install.list")
	expect_equal "$(wc -w <<< "$units")" 2 "units installed"
	# shellcheck disable=SC2086 # the unit paths are words
	tk_run tk_installed_etc env MANPATH="$PREFIX/share/man" systemd-analyze verify $units
	expect_status 0
	[ -z "$output$stderr" ] || { tk_dump "systemd-analyze verify said something"; false; }
}

# the unit's ExecStart with its environment file's values in, as systemd reads
# it: ${VAR} as one word, $VAR split on white space; one word per line
unit_command() {
	local unit=$1 env=$2 w v
	(
		set -a
		# shellcheck disable=SC1090
		. "$env"
		set +a
		for w in $(sed -n 's/^ExecStart=//p' "$unit"); do
			case $w in
			'${'*'}') v=${w#??}; v=${v%?}; printf '%s\n' "${!v}" ;;
			'$'*) v=${w#?}; for x in ${!v}; do printf '%s\n' "$x"; done ;;
			*) printf '%s\n' "$w" ;;
			esac
		done
	)
}

# the unit's capability bounding set, as setpriv takes it: -all,+bpf,...
unit_caps() {
	sed -n 's/^CapabilityBoundingSet=//p' "$1" | tr ' ' '\n' | sed 's/^CAP_//' | tr 'A-Z' 'a-z' |
		awk 'BEGIN { printf "-all" } NF { printf ",+%s", $1 } END { print "" }'
}

@test "each daemon runs as its unit says, with its capabilities only: bbrtrace serves /metrics and /verdict, udpdwell /metrics" {
	requires root curl jq
	local d unit env port cmd pid
	for d in bbrtrace udpdwell; do
		unit=$STAGE$(awk -v d="$d.service" '$3 ~ "/" d "$" { print $3 }' "$BATS_FILE_TMPDIR/install.list")
		env=$STAGE$(awk -v d="/default/$d" 'index($3, d) == length($3) - length(d) + 1 { print $3 }' "$BATS_FILE_TMPDIR/install.list")
		port=$(tk_free_tcp_port 9400 9500)
		sed "s/^\\([A-Z]*_LISTEN\\)=.*/\\1=127.0.0.1:$port/" "$env" > "$BATS_TEST_TMPDIR/$d.env"
		mapfile -t cmd < <(unit_command "$unit" "$BATS_TEST_TMPDIR/$d.env")
		echo "# $d: ${cmd[*]} (capabilities $(unit_caps "$unit"))"
		tk_installed_etc nice -n "$(sed -n 's/^Nice=//p' "$unit")" \
			setpriv --bounding-set "$(unit_caps "$unit")" "${cmd[@]}" 2> "$BATS_TEST_TMPDIR/$d.err" &
		pid=$!
		tk_wait_for "curl -sf http://127.0.0.1:$port/metrics > '$BATS_TEST_TMPDIR/$d.metrics'" 30 ||
			{ cat "$BATS_TEST_TMPDIR/$d.err"; kill $pid; return 1; }
		if [ "$d" = bbrtrace ]; then
			grep -q '^# TYPE bbrtrace_peer_held_seconds gauge' "$BATS_TEST_TMPDIR/$d.metrics"
			curl -sf "http://127.0.0.1:$port/verdict" | jq -e '.type == "window_verdict"'
		else
			grep -q '^# TYPE udp_socket_state gauge' "$BATS_TEST_TMPDIR/$d.metrics"
		fi
		kill -TERM $pid
		wait $pid || { echo "# $d exited $?"; cat "$BATS_TEST_TMPDIR/$d.err"; return 1; }
	done
}
