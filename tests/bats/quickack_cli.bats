#!/usr/bin/env bats
# tier: check
# quickack: arguments, and each error class with its one line and its exit
# code, checked against a real namespace; nothing is applied on any error.

load helpers

NS=qa-${BATS_ROOT_PID}-cli

setup_file() {
	requires root netns jq
	ip netns del "$NS" 2>/dev/null || true
	ip netns add "$NS"
	echo "$NS" >> "$TK_STATE_DIR/netns.list"
	local n="ip -n $NS"
	# link-local addresses at once (no DAD), so none appears in the middle of a test
	ip netns exec "$NS" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
	$n link set lo up
	$n link add d0 type veth peer name p0
	$n link set d0 up
	$n link set p0 up
	tk_wait_local6 "$NS" fe80:: 2
	$n addr add 10.9.0.1/24 dev d0
	$n addr add fd00:9::1/64 dev d0 nodad
	$n route add 10.0.1.0/24 dev d0 proto static mtu 9000 initcwnd 20
	$n route add 10.0.2.0/24 via 10.9.0.254 dev d0 table 100
	$n -6 route add fd00:1::/64 dev d0 mtu 1400
}

teardown_file() {
	tk_cleanup
	# the default journal test 17 writes, should it fail before its restore
	rm -f "/var/lib/bbrkit/quickack-$NS.journal"
}

setup() {
	J=$BATS_TEST_TMPDIR/quickack.journal
}

# an IPv6 host route longer than the table's dst column
LONG=fd00:1234:5678:9abc:def0:1234:5678:9abc

teardown() {
	ip -n "$NS" -6 route del "$LONG/128" dev d0 2>/dev/null || true
}

dump() { ip -n "$NS" -d -j route show table all; ip -n "$NS" -d route show table all; }

@test "--help explains the commands, the journal and every exit code; --version prints one line" {
	tk_run quickack --help
	expect_status 0
	expect_output "on PREFIX | --all-dev DEV"
	expect_output "restore"
	expect_output "NLM_F_REPLACE (never NLM_F_CREATE"
	expect_output "fsyncs it"
	expect_output "quickack COMMAND --help lists them"
	# the codes in lib/common.h's words
	for code in "0   success" "1   a runtime failure" "2   bad arguments" "3   a missing privilege" \
		"5   bad input" "10  no such network device" "11  no such routing table" \
		"12  no such network namespace" "13  no route matches" "14  the kernel refused the change" \
		"15  some changes were applied, some refused" "16  read back, a route is not what was asked" \
		"17  the journal cannot be written" "18  a matching route cannot be changed safely" \
		"19  the journal describes another boot, namespace or device"; do
		expect_output $'\n'"  $code"
	done
	tk_run quickack --version
	expect_status 0
	expect_version quickack
}

# the options COMMAND --help lists, one per line
help_options() {
	quickack "$@" --help | grep -oE '^ +(-[a-zA-Z0-9], )?--[a-z0-9-]+' | sed 's/.*--/--/' | sort | tr '\n' ' '
}

@test "each command's --help lists its own options and exit codes; -V on every command" {
	local std="--format --help --json --output --quiet --verbose --version" select="--dev --interface --ipv4 --ipv6 --table --via"
	local want cmd
	want=$(echo $select --netns $std | tr ' ' '\n' | sort | tr '\n' ' ')
	[ "$(help_options show)" = "$want" ] || { echo "# show: $(help_options show)"; false; }
	for cmd in off rto-min; do
		want=$(echo $select --all-dev --to --host --netns --journal --dry-run $std | tr ' ' '\n' | sort | tr '\n' ' ')
		[ "$(help_options $cmd)" = "$want" ] || { echo "# $cmd: $(help_options $cmd)"; false; }
	done
	# on: the routes', and a socket scope's
	want=$(echo $select --all-dev --to --host --port --cgroup --netns --journal --dry-run $std | tr ' ' '\n' | sort | tr '\n' ' ')
	[ "$(help_options on)" = "$want" ] || { echo "# on: $(help_options on)"; false; }
	want=$(echo --dport --cgroup --netns --journal --dry-run $std | tr ' ' '\n' | sort | tr '\n' ' ')
	[ "$(help_options nodelay)" = "$want" ] || { echo "# nodelay: $(help_options nodelay)"; false; }
	want=$(echo $select --all-dev --to --host --lock --netns --journal --dry-run $std | tr ' ' '\n' | sort | tr '\n' ' ')
	[ "$(help_options congctl)" = "$want" ] || { echo "# congctl: $(help_options congctl)"; false; }
	want=$(echo --netns --journal --discard-stale --dry-run $std | tr ' ' '\n' | sort | tr '\n' ' ')
	[ "$(help_options restore)" = "$want" ] || { echo "# restore: $(help_options restore)"; false; }
	want=$(echo --netns --journal $std | tr ' ' '\n' | sort | tr '\n' ' ')
	[ "$(help_options status)" = "$want" ] || { echo "# status: $(help_options status)"; false; }
	tk_run quickack rto-min --help
	expect_output "Usage: quickack rto-min PREFIX VALUE [OPTIONS]"
	expect_output "from 1 ms to 120 s"
	expect_output $'\n'"  16  read back"
	tk_run quickack show --help
	[[ $output != *"  13  "* && $output != *"  17  "* ]] || { tk_dump "show changes nothing"; false; }
	# only restore refuses a stale journal; the changing commands set it aside
	tk_run quickack restore --help
	expect_output $'\n'"  19  the journal describes another boot, namespace or device; nothing applied"
	expect_output "--discard-stale sets them aside in a kept file"
	tk_run quickack on --help
	[[ $output != *"  19  "* ]] || { tk_dump "on does not refuse a stale journal"; false; }
	expect_output "are first set aside in a kept"
	for cmd in show on off rto-min congctl restore status; do
		tk_run quickack "$cmd" -V
		expect_status 0
		expect_version quickack || { tk_dump "$cmd -V"; false; }
	done
}

@test "every command refuses a bad option the same way: one line, exit 2" {
	local cmd args
	for cmd in show on off rto-min congctl restore status; do
		args=()
		case $cmd in on | off) args=(10.0.1.0/24) ;; rto-min) args=(10.0.1.0/24 5ms) ;; congctl) args=(10.0.1.0/24 bbr) ;; esac
		tk_run quickack "$cmd" "${args[@]}" --bogus
		expect_status 2; expect_one_line_stderr
		[ "$stderr" = "quickack: unknown option '--bogus' (see --help)" ] || { tk_dump "$cmd --bogus"; false; }
		tk_run quickack "$cmd" "${args[@]}" --netns
		expect_status 2; expect_one_line_stderr
		[ "$stderr" = "quickack: --netns needs a value (see --help)" ] || { tk_dump "$cmd --netns"; false; }
		tk_run quickack "$cmd" "${args[@]}" -o
		expect_status 2; expect_one_line_stderr
		[ "$stderr" = "quickack: -o needs a value (see --help)" ] || { tk_dump "$cmd -o"; false; }
		tk_run quickack "$cmd" "${args[@]}" --quiet=yes
		expect_status 2; expect_one_line_stderr
		[ "$stderr" = "quickack: --quiet takes no value (see --help)" ] || { tk_dump "$cmd --quiet=yes"; false; }
		tk_run quickack "$cmd" "${args[@]}" -f yaml
		expect_status 2; expect_one_line_stderr
		[ "$stderr" = "quickack: -f: 'yaml' is not one of table|csv|json" ] || { tk_dump "$cmd -f yaml"; false; }
		# the only number an option takes is --table's
		[ "$cmd" = restore ] || [ "$cmd" = status ] && continue
		tk_run quickack "$cmd" "${args[@]}" --table 4294967296 --netns "$NS"
		expect_status 2; expect_one_line_stderr
		[ "$stderr" = "quickack: --table: 4294967296 is out of range 1..4294967295" ] || { tk_dump "$cmd --table"; false; }
	done
	# an option of another command is not one of this command's
	tk_run quickack show --journal "$J" --netns "$NS"
	expect_status 2; expect_one_line_stderr
	expect_stderr "quickack: unknown option '--journal' (see --help)"
}

@test "malformed prefix: one line naming it, exit 2" {
	tk_run quickack on 10.0.1.300/24 --netns "$NS" --journal "$J"
	expect_status 2; expect_one_line_stderr
	[ "$stderr" = "quickack: prefix: '10.0.1.300' is not an IPv4 or IPv6 address" ] || { tk_dump "text"; false; }
	tk_run quickack on 10.0.1.1/24 --netns "$NS" --journal "$J"
	expect_status 2; expect_one_line_stderr
	expect_stderr "quickack: prefix: '10.0.1.1/24' has host bits set beyond /24"
	tk_run quickack on 10.0.1.0/33 --netns "$NS" --journal "$J"
	expect_status 2; expect_one_line_stderr
	expect_stderr "quickack: prefix: 33 is out of range 0..32"
	[ ! -e "$J" ]
}

@test "other bad arguments: one line each, exit 2" {
	tk_run quickack
	expect_status 2; expect_one_line_stderr
	expect_stderr "quickack: missing command: show, on, off, rto-min, congctl, nodelay, restore or status (see --help)"
	tk_run quickack frob
	expect_status 2; expect_one_line_stderr
	expect_stderr "quickack: command: 'frob' is not one of show|on|off|rto-min|congctl|nodelay|restore|status"
	tk_run quickack on 10.0.1.0/24 --bogus
	expect_status 2; expect_one_line_stderr
	expect_stderr "quickack: unknown option '--bogus' (see --help)"
	tk_run quickack on 10.0.1.0/24 --dev
	expect_status 2; expect_one_line_stderr
	expect_stderr "quickack: --dev needs a value (see --help)"
	tk_run quickack on
	expect_status 2; expect_one_line_stderr
	expect_stderr "quickack: on: missing PREFIX (or --to ADDR, or --all-dev DEV)"
	tk_run quickack on 10.0.1.0/24 --all-dev d0
	expect_status 2; expect_one_line_stderr
	expect_stderr "quickack: on: a PREFIX ('10.0.1.0/24') and --all-dev exclude each other"
	tk_run quickack rto-min 10.0.1.0/24 5x
	expect_status 2; expect_one_line_stderr
	expect_stderr "quickack: rto-min: '5x' is not a time (N, Nms or Ns; or off)"
	tk_run quickack rto-min 10.0.1.0/24 121s
	expect_status 2; expect_one_line_stderr
	expect_stderr "quickack: rto-min: 121 is out of range 1..120"
	tk_run quickack congctl 10.0.1.0/24 'bbr;x'
	expect_status 2; expect_one_line_stderr
	expect_stderr "quickack: congctl: 'bbr;x' is not a congestion control name (letters, digits, '_' and '-')"
	tk_run quickack on fd00:1::/64 -4
	expect_status 2; expect_one_line_stderr
	expect_stderr "quickack: prefix: 'fd00:1::/64' is not IPv4 (-4)"
	tk_run quickack on 10.0.1.0/24 --via fd00::1
	expect_status 2; expect_one_line_stderr
	expect_stderr "quickack: --via: fd00::1 is not of the prefix's family (IPv4)"
	tk_run quickack on 10.0.1.0/24 --netns a/b
	expect_status 2; expect_one_line_stderr
	expect_stderr "quickack: --netns: network namespace name 'a/b' is not a plain name (no '/', not '.' or '..')"
	tk_run quickack on 10.0.1.0/24 --table 4294967296 --netns "$NS"
	expect_status 2; expect_one_line_stderr
	expect_stderr "quickack: --table: 4294967296 is out of range 1..4294967295"
	tk_run quickack restore --dev d0
	expect_status 2; expect_one_line_stderr
	expect_stderr "quickack: unknown option '--dev' (see --help)"
	tk_run quickack on --all-dev d0 -i d0
	expect_status 2; expect_one_line_stderr
	expect_stderr "quickack: --all-dev and -i exclude each other"
}

@test "unknown device: one line, exit 10, nothing applied" {
	local before; before=$(dump)
	tk_run quickack on 10.0.1.0/24 --dev eth9 --netns "$NS" --journal "$J"
	expect_status 10; expect_one_line_stderr
	[ "$stderr" = "quickack: --dev: no device 'eth9' in network namespace '$NS'" ] || { tk_dump "text"; false; }
	tk_run quickack on --all-dev eth9 --netns "$NS" --journal "$J"
	expect_status 10; expect_one_line_stderr
	expect_stderr "quickack: --all-dev: no device 'eth9' in network namespace '$NS'"
	tk_run quickack show -i eth9 --netns "$NS"
	expect_status 10; expect_one_line_stderr
	expect_stderr "quickack: -i: no device 'eth9' in network namespace '$NS'"
	expect_equal "$(dump)" "$before" "the routes after the refused commands"
	[ ! -e "$J" ]
}

@test "unknown table: one line, exit 11, for a name and for an empty numeric table" {
	tk_run quickack on 10.0.1.0/24 --table nosuch --netns "$NS" --journal "$J"
	expect_status 11; expect_one_line_stderr
	expect_stderr "quickack: --table: no routing table is named 'nosuch'"
	tk_run quickack on 10.0.1.0/24 --table 77 --netns "$NS" --journal "$J"
	expect_status 11; expect_one_line_stderr
	[ "$stderr" = "quickack: --table: table 77 holds no IPv4 routes in network namespace '$NS'" ] || { tk_dump "text"; false; }
	tk_run quickack show --table 77 --netns "$NS"
	expect_status 11
}

@test "missing network namespace: one line, exit 12" {
	tk_run quickack on 10.0.1.0/24 --netns "$NS-nope" --journal "$J"
	expect_status 12; expect_one_line_stderr
	[ "$stderr" = "quickack: --netns: network namespace '$NS-nope' does not exist (no /var/run/netns/$NS-nope)" ] ||
		{ tk_dump "text"; false; }
	tk_run quickack show --netns "$NS-nope"
	expect_status 12
}

@test "no CAP_NET_ADMIN: one line, exit 3, nothing applied" {
	local before; before=$(dump)
	tk_run setpriv --inh-caps=-net_admin --bounding-set=-net_admin "$BIN/quickack" on 10.0.1.0/24 --netns "$NS" --journal "$J"
	expect_status 3; expect_one_line_stderr
	[ "$stderr" = "quickack: changing routes needs CAP_NET_ADMIN (run as root)" ] || { tk_dump "text"; false; }
	expect_equal "$(dump)" "$before" "the routes after the refused change"
	[ ! -e "$J" ]
	# reading needs no privilege
	tk_run setpriv --inh-caps=-net_admin --bounding-set=-net_admin "$BIN/quickack" show 10.0.1.0/24 --netns "$NS" --json
	expect_status 0
	expect_equal "$(jq -r .dst <<<"$output")" 10.0.1.0/24 "the route shown without CAP_NET_ADMIN"
}

@test "entering a namespace without CAP_SYS_ADMIN: one line, exit 3" {
	tk_run setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$BIN/quickack" show --netns "$NS"
	expect_status 3; expect_one_line_stderr
	[ "$stderr" = "quickack: --netns: entering network namespace '$NS' needs CAP_SYS_ADMIN" ] || { tk_dump "text"; false; }
}

@test "no matching route: one line naming the closest routes, exit 13" {
	tk_run quickack on 10.0.7.0/24 --netns "$NS" --journal "$J"
	expect_status 13; expect_one_line_stderr
	expect_stderr "quickack: no route matches 10.0.7.0/24 in table main; closest: "
	expect_stderr "10.0.1.0/24 dev d0 table main"
	tk_run quickack on 10.0.1.0/24 --dev p0 --netns "$NS" --journal "$J"
	expect_status 13; expect_one_line_stderr
	expect_stderr "quickack: no route matches 10.0.1.0/24 in table main dev p0; closest: 10.0.1.0/24 dev d0 table main"
	[ ! -e "$J" ]
}

@test "the kernel refuses: its own message (extended ack), exit 14, route unchanged, change voided" {
	local before; before=$(dump)
	tk_run quickack congctl 10.0.1.0/24 nosuchcc --netns "$NS" --journal "$J"
	expect_status 14; expect_one_line_stderr
	[ "$stderr" = "quickack: 10.0.1.0/24 table main metric 0: the kernel refused the change: Unknown tcp congestion algorithm (Invalid argument)" ] ||
		{ tk_dump "text"; false; }
	expect_equal "$(dump)" "$before" "the routes after the change the kernel refused"
	grep -q '^void seq=1 ' "$J"
	tk_run quickack status --netns "$NS" --journal "$J" --json
	expect_status 0
	[ -z "$output" ] || { tk_dump "status should list nothing"; false; }
}

@test "a route that cannot be changed safely: one line, exit 18, nothing applied" {
	tk_run quickack on 10.9.0.1/32 --table local --netns "$NS" --journal "$J"
	expect_status 18; expect_one_line_stderr
	expect_stderr "quickack: 10.9.0.1/32 table local metric 0: cannot be changed safely: it is not a unicast route (quickack changes unicast routes only); nothing was applied"
	[ ! -e "$J" ]
}

@test "a corrupt journal: one line naming line and byte offset, exit 5, nothing applied" {
	local before after
	tk_run quickack on 10.0.1.0/24 --netns "$NS" --journal "$J"
	expect_status 0
	before=$(dump)
	# one altered byte in the saved state of line 2: its crc no longer matches
	sed -i '2s/state=\(..\)/state=ff/' "$J"
	tk_run quickack on 10.0.2.0/24 --table 100 --netns "$NS" --journal "$J"
	expect_status 5; expect_one_line_stderr
	expect_stderr "quickack: journal $J is corrupt at line 2 (byte "
	expect_stderr "): checksum mismatch (stored "
	expect_stderr "the line was altered or damaged; nothing was applied"
	tk_run quickack restore --netns "$NS" --journal "$J"
	expect_status 5; expect_one_line_stderr
	after=$(dump)
	[ "$before" = "$after" ] || { echo "# the routes changed"; false; }
	# a well-formed line of an unknown record type names its offset too
	printf 'bogus seq=1 crc=00000000\n' >> "$J"
	tk_run quickack status --netns "$NS" --journal "$J"
	expect_status 5
	# put the namespace back for the other tests
	ip -n "$NS" route change 10.0.1.0/24 dev d0 proto static mtu 9000 initcwnd 20
}

@test "a journal of another namespace is refused: exit 5, nothing applied" {
	tk_run quickack on 10.0.1.0/24 --netns "$NS" --journal "$J"
	expect_status 0
	tk_run quickack restore --journal "$J"
	expect_status 5; expect_one_line_stderr
	expect_stderr "quickack: journal $J holds routes of network namespace '$NS', not of this network namespace; nothing was applied"
	tk_run quickack restore --netns "$NS" --journal "$J"
	expect_status 0
}

@test "a journal that cannot be written: one line, exit 17, nothing applied" {
	local before; before=$(dump)
	tk_run quickack on 10.0.1.0/24 --netns "$NS" --journal /proc/quickack-$$/journal
	expect_status 17; expect_one_line_stderr
	expect_stderr "quickack: cannot create the journal directory /proc/quickack-$$"
	expect_stderr "nothing was applied"
	expect_equal "$(dump)" "$before" "the routes when the journal cannot be written"
}

@test "the default journal is per namespace, under /var/lib/bbrkit" {
	local def=/var/lib/bbrkit/quickack-$NS.journal
	rm -f "$def"
	tk_run quickack on 10.0.1.0/24 --netns "$NS"
	expect_status 0
	expect_stderr "journal $def"
	[ -s "$def" ]
	# since format 2: the boot, the namespace's inode (as stat shows it) and cookie
	head -1 "$def" | grep -q "^bbrkit-quickack-journal 4 netns=$NS created=[0-9]* boot=$(cat /proc/sys/kernel/random/boot_id) netns_ino=$(ip netns exec "$NS" stat -L -c %i /proc/self/ns/net) netns_cookie=[1-9][0-9]* crc=" ||
		{ head -1 "$def"; false; }
	sed -n 2p "$def" | grep -q "^route seq=1 .* metric=0 devs=$(ip -n "$NS" -j link show d0 | jq '.[0].ifindex'):d0 state="
	tk_run quickack restore --netns "$NS"
	expect_status 0
	[ ! -e "$def" ]
}

@test "-f: JSON in a pipe, a table on a terminal, CSV when asked; --json is -f json" {
	requires script
	tk_run quickack show 10.0.1.0/24 --netns "$NS"
	expect_status 0
	[ "$(jq -r '[.type, .dst, .mtu] | join(" ")' <<<"$output")" = "route 10.0.1.0/24 9000" ] || { tk_dump "json"; false; }
	# script(1) gives quickack a terminal for stdout
	tk_on_tty "$BATS_TEST_TMPDIR/tty" "$BIN/quickack" show 10.0.1.0/24 --netns "$NS"
	grep -q '^table  dst  *metric type' "$BATS_TEST_TMPDIR/tty" || { cat -A "$BATS_TEST_TMPDIR/tty"; false; }
	grep -q '^main   10.0.1.0/24  ' "$BATS_TEST_TMPDIR/tty" || { cat -A "$BATS_TEST_TMPDIR/tty"; false; }
	tk_run quickack show 10.0.1.0/24 -f csv --netns "$NS"
	expect_status 0
	[ "$(head -1 <<<"$output" | cut -d, -f1-3)" = "family,table,dst" ] || { tk_dump "csv header"; false; }
	[ "$(sed -n 2p <<<"$output" | cut -d, -f1-3)" = "inet,main,10.0.1.0/24" ] || { tk_dump "csv row"; false; }
	tk_run quickack -f table status --netns "$NS" --journal "$J" --json
	expect_status 0
	[ -z "$output" ]
	tk_run quickack show 10.0.1.0/24 -f table --json --netns "$NS"
	expect_status 0
	[ "$(jq -r .dst <<<"$output")" = 10.0.1.0/24 ] || { tk_dump "--json after -f table"; false; }
}

@test "-o FILE: the records go to FILE; a changing command writes its change records there" {
	local out=$BATS_TEST_TMPDIR/out before
	before=$(dump)
	tk_run quickack show 10.0.1.0/24 --netns "$NS" -o "$out.json"
	expect_status 0
	[ -z "$output" ]
	[ "$(jq -r .dst "$out.json")" = 10.0.1.0/24 ] || { cat "$out.json"; false; }
	tk_run quickack on 10.0.1.0/24 --netns "$NS" --journal "$J" -o "$out.on"
	expect_status 0
	[ -z "$output" ]
	expect_stderr "on: 1 route(s) changed and verified"
	[ "$(jq -r '[.type, .change, .result] | join(" ")' "$out.on")" = "change quickack 0 -> 1 applied" ] || { cat "$out.on"; false; }
	tk_run quickack status --netns "$NS" --journal "$J" -o "$out.status" -f csv
	expect_status 0
	grep -q '^seq,time,op,records,' "$out.status" || { cat "$out.status"; false; }
	tk_run quickack restore --netns "$NS" --journal "$J" -o "$out.restore"
	expect_status 0
	[ "$(jq -r .result "$out.restore")" = restored ] || { cat "$out.restore"; false; }
	expect_equal "$(dump)" "$before" "the routes after restore"
	# a file that cannot be written: one line, exit 1, before anything is applied
	tk_run quickack on 10.0.1.0/24 --netns "$NS" --journal "$J" -o /proc/quickack-$$/out
	expect_status 1; expect_one_line_stderr
	expect_stderr "quickack: cannot write /proc/quickack-$$/out: "
	expect_equal "$(dump)" "$before" "the routes when -o cannot be written"
	[ ! -e "$J" ]
}

@test "show -f table: a value wider than its column (an IPv6 /128) is shown whole" {
	local header row col
	ip -n "$NS" -6 route add "$LONG/128" dev d0 metric 1024
	tk_run quickack show "$LONG/128" -f table --netns "$NS"
	expect_status 0
	header=$(sed -n 1p <<<"$output")
	row=$(sed -n 2p <<<"$output")
	[[ $row == "main   $LONG/128 1024 unicast "* ]] || { tk_dump "the prefix is cut"; false; }
	# the columns after it are back in line: quickack's "n" under its header
	col=$(awk -v h="$header" 'BEGIN { print index(h, "quickack") }')
	[ "${row:col-1:2}" = "n " ] || { tk_dump "quickack column at $col"; false; }
}
