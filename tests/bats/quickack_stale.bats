#!/usr/bin/env bats
# quickack's journal in a changed world: a namespace deleted and
# made again under the same name, a veth made again with a new ifindex, a
# journal of another boot, a journal of another namespace, a format 1
# journal. Each test ends with the routes exactly as iproute2's
# `ip route show table all` showed them before (an independent reading),
# or with a refusal in one line, its exit code, and nothing changed.

load helpers

NS=qa-${BATS_ROOT_PID}-st
QAJ=$TK_ROOT/tests/tools/qajournal.py

setup_file() {
	requires root netns jq
	[ -x /usr/bin/python3 ] || { echo "/usr/bin/python3 is missing (Debian's python3)" >&2; return 1; }
}

setup() {
	J=$BATS_TEST_TMPDIR/quickack.journal
}

# whatever a test made, even when it failed halfway
teardown() {
	tk_cleanup
	rm -f /var/lib/bbrkit/quickack-"$NS".journal /var/lib/bbrkit/quickack-"$NS".journal.stale-*
}

teardown_file() {
	tk_cleanup
}

# veth DEV (peer pDEV) in namespace NS, up, with address ADDR/24; at ifindex
# IDX when given
add_veth() {
	local ns=$1 dev=$2 addr=$3 idx=${4:-}
	ip -n "$ns" link add "$dev" ${idx:+index "$idx"} type veth peer name "p$dev"
	ip -n "$ns" link set "$dev" up
	ip -n "$ns" link set "p$dev" up
	ip -n "$ns" addr add "$addr/24" dev "$dev"
	tk_wait_local6 "$ns" fe80:: 1 "$dev" && tk_wait_local6 "$ns" fe80:: 1 "p$dev"
}

# namespace NS (deleted first when it exists): d0 and d1, a route through a
# gateway on d0 with metrics, a multipath route over both; d0 at ifindex
# IDX when given
make_ns() {
	local ns=$1 idx=${2:-}
	ip netns del "$ns" 2>/dev/null || true
	ip netns add "$ns"
	echo "$ns" >> "$TK_STATE_DIR/netns.list"
	# link-local addresses at once (no DAD), all four in place before the
	# test reads the routes
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
	ip -n "$ns" link set lo up
	add_veth "$ns" d0 10.9.0.1 "$idx"
	add_veth "$ns" d1 10.8.0.1
	ip -n "$ns" route add 10.0.1.0/24 via 10.9.0.254 dev d0 mtu 9000 initcwnd 20
	ip -n "$ns" route add 10.0.3.0/24 nexthop via 10.9.0.2 dev d0 weight 2 nexthop via 10.8.0.2 dev d1
}

ifindex() { ip -n "${2:-$NS}" -j link show "$1" | jq '.[0].ifindex'; }
netns_ino() { ip netns exec "$1" stat -L -c %i /proc/self/ns/net; }
# the routes as iproute2 shows them, one line each (a multipath route's
# nexthops stay on its line, in their order), sorted: what "exactly" means
# here. Sorted, because the order of routes to the same prefix through
# different devices is the order the kernel added them in: a veth made again
# gets its fe80::/64 and ff00::/8 routes when addrconf's work runs for each
# end, in either order (both seen: pd1's before d1's, and after). The
# kernel's own local routes of link-local addresses are left out: their
# addresses come from each device's MAC address, so a veth made again has
# new ones.
routes() { ip -o -n "${1:-$NS}" route show table all | grep -v '^local fe80::' | LC_ALL=C sort; }
same_routes() {
	[ "$2" = "$(routes "${3:-$NS}")" ] ||
		{ echo "# $1:"; diff <(echo "$2") <(routes "${3:-$NS}") | sed 's/^/#   /'; return 1; }
}

@test "a namespace made again under the same name, with a new ifindex: stale; restore refuses (19), changes nothing; --discard-stale keeps the records in a named file" {
	local old before sum side ino
	make_ns "$NS"
	old=$(ifindex d0)
	ino=$(netns_ino "$NS")
	tk_run quickack on 10.0.1.0/24 --netns "$NS" --journal "$J"
	expect_status 0
	cp "$J" "$BATS_TEST_TMPDIR/journal.before"
	ip netns del "$NS"
	make_ns "$NS" 42
	expect_equal "$(ifindex d0)" 42 "d0's ifindex"
	[ "$old" != 42 ] || { echo "# the old d0 had ifindex 42 already"; return 1; }
	before=$(routes)
	sum=$(sha256sum < "$J")
	tk_run quickack status --netns "$NS" --journal "$J" -f json
	expect_status 0
	[ "$(jq -r '[.dst, .dev, .identity] | join(" ")' <<<"$output")" = "10.0.1.0/24 d0 stale" ] || { tk_dump "status"; false; }
	[[ $(jq -r .why <<<"$output") == "another network namespace, or this one deleted and made again (saved in the namespace of inode $ino cookie "*", this is inode $(netns_ino "$NS") cookie "* ]] ||
		{ tk_dump "why"; false; }
	expect_stderr "1 stale (of another boot, network namespace or device): restore refuses them"
	tk_run quickack restore --netns "$NS" --journal "$J"
	expect_status 19; expect_one_line_stderr
	expect_stderr "quickack: restore: 1 saved record(s) describe another boot, network namespace or device; the first, 10.0.1.0/24 table main metric 0: another network namespace, or this one deleted and made again"
	expect_stderr "nothing was applied ('quickack status --netns $NS --journal $J' lists them, 'quickack restore --discard-stale --netns $NS --journal $J' sets them aside in a kept file)"
	same_routes "after a refused restore" "$before"
	expect_equal "$(sha256sum < "$J")" "$sum" "journal checksum"
	# --dry-run: said, nothing moved
	tk_run quickack restore --discard-stale --dry-run --netns "$NS" --journal "$J"
	expect_status 0
	expect_stderr "dry run: --discard-stale would set aside 1 saved record(s)"
	expect_equal "$(sha256sum < "$J")" "$sum" "journal checksum"
	[ -z "$(ls "$J".stale-* 2>/dev/null)" ]
	tk_run quickack restore --discard-stale --netns "$NS" --journal "$J"
	expect_status 0
	side=$(ls "$J".stale-*)
	expect_equal "$(wc -l <<<"$side")" 1 "kept stale files"
	expect_stderr "restore --discard-stale: 1 journal record(s) that do not fit this boot, network namespace and devices set aside in $side; the first, 10.0.1.0/24 table main metric 0: another network namespace"
	same_routes "after --discard-stale" "$before"
	[ ! -e "$J" ]
	# the kept file is the journal as it was, line for line, and still says why
	cmp "$side" "$BATS_TEST_TMPDIR/journal.before"
	tk_run quickack status --netns "$NS" --journal "$side" -f json
	expect_status 0
	expect_equal "$(jq -r .identity <<<"$output")" stale "kept record's identity"
}

# The kernel gives a deleted namespace's inode number to the next one it
# makes (seen with a namespace made again a second later, not on a loaded
# machine where others make namespaces too): the cookie tells them apart.
# The journal's cookie edited (its crc made right) stands for that here.
@test "a namespace at the old one's inode number: only the cookie tells, and it does; a cookie the kernel could not give (0) leaves the inode to judge" {
	local orig after_on ino cookie
	make_ns "$NS"
	ino=$(netns_ino "$NS")
	orig=$(routes)
	tk_run quickack on 10.0.1.0/24 --netns "$NS" --journal "$J"
	expect_status 0
	after_on=$(routes)
	cookie=$(grep -o ' netns_cookie=[0-9]*' "$J" | cut -d= -f2)
	expect_cmp "$cookie" -gt 0 "journal's netns cookie"
	grep -q " netns_ino=$ino " "$J"
	/usr/bin/python3 "$QAJ" "$J" 1 netns_cookie $((cookie + 1))
	tk_run quickack status --netns "$NS" --journal "$J" -f json
	expect_status 0
	[ "$(jq -r .identity <<<"$output")" = stale ] || { tk_dump "status"; false; }
	[ "$(jq -r .why <<<"$output")" = "another network namespace, or this one deleted and made again (saved in the namespace of inode $ino cookie $((cookie + 1)), this is inode $ino cookie $cookie)" ] ||
		{ tk_dump "why"; false; }
	tk_run quickack restore --netns "$NS" --journal "$J"
	expect_status 19; expect_one_line_stderr
	same_routes "after a refused restore" "$after_on"
	# no cookie recorded (a kernel before 5.14): the same inode is the same namespace
	/usr/bin/python3 "$QAJ" "$J" 1 netns_cookie 0
	tk_run quickack status --netns "$NS" --journal "$J" -f json
	expect_status 0
	[ "$(jq -r .identity <<<"$output")" = current ] || { tk_dump "status"; false; }
	tk_run quickack restore --netns "$NS" --journal "$J"
	expect_status 0
	same_routes "after restore" "$orig"
}

@test "a veth made again under the same name, with a new ifindex: status says so; restore puts the routes back through it by name, exactly" {
	local old orig
	make_ns "$NS"
	old=$(ifindex d1)
	orig=$(routes)
	tk_run quickack on 10.0.1.0/24 --netns "$NS" --journal "$J"
	expect_status 0
	tk_run quickack on 10.0.3.0/24 --netns "$NS" --journal "$J"
	expect_status 0
	# d1 made again: the multipath route goes with it, and its configuration
	# puts it back, with quickack on, behind quickack's back
	ip -n "$NS" link del d1
	add_veth "$NS" d1 10.8.0.1 77
	expect_equal "$(ifindex d1)" 77 "d1's ifindex"
	[ "$old" != 77 ] || { echo "# the old d1 had ifindex 77 already"; return 1; }
	ip -n "$NS" route add 10.0.3.0/24 quickack 1 nexthop via 10.9.0.2 dev d0 weight 2 nexthop via 10.8.0.2 dev d1
	tk_run quickack status --netns "$NS" --journal "$J" -f json
	expect_status 0
	[ "$(jq -sr 'map([.dst, .dev, .identity, .live] | join(" ")) | join(",")' <<<"$output")" = \
		"10.0.1.0/24 d0 current differs,10.0.3.0/24 d0,d1 stale differs" ] || { tk_dump "status"; false; }
	[ "$(jq -r 'select(.dst == "10.0.3.0/24") | .why' <<<"$output")" = \
		"device d1 was ifindex $old, is now ifindex 77 (made again): restore puts the route back through it by name" ] ||
		{ tk_dump "why"; false; }
	expect_stderr "1 through a device made again, put back through it by name"
	tk_run quickack restore --netns "$NS" --journal "$J"
	expect_status 0
	expect_stderr "restore: 1 saved route(s) go back through their device made again under the same name; the first, 10.0.3.0/24 table main metric 0: device d1 was ifindex $old, is now ifindex 77"
	expect_stderr "restore: 2 route(s) restored and verified"
	same_routes "after restore" "$orig"
	[ ! -e "$J" ]
}

@test "on after a veth is made again: the old records set aside in a named file, in one line; restore undoes only the new change" {
	local before side
	make_ns "$NS"
	tk_run quickack on 10.0.1.0/24 --netns "$NS" --journal "$J"
	expect_status 0
	ip -n "$NS" link del d0
	add_veth "$NS" d0 10.9.0.1 88
	ip -n "$NS" route add 10.0.1.0/24 via 10.9.0.254 dev d0 mtu 9000 initcwnd 20
	before=$(routes)
	tk_run quickack on 10.0.1.0/24 --netns "$NS" --journal "$J"
	expect_status 0
	side=$(ls "$J".stale-*)
	[ "$(grep -c . <<<"$stderr")" = 2 ] || { tk_dump "two lines: the set-aside and the summary"; false; }
	expect_stderr "quickack: warning: on: 1 journal record(s) that do not fit this boot, network namespace and devices set aside in $side; the first, 10.0.1.0/24 table main metric 0: device d0 was ifindex"
	expect_stderr "is now ifindex 88"
	ip -n "$NS" route show 10.0.1.0/24 | grep -q 'quickack 1'
	# one record in each file, each of its own world
	expect_equal "$(grep -c '^route ' "$J")" 1 "route records in the journal"
	expect_equal "$(grep -c '^route ' "$side")" 1 "route records in the set-aside journal"
	grep -q '^route seq=.* devs=88:d0 ' "$J"
	tk_run quickack restore --netns "$NS" --journal "$J"
	expect_status 0
	same_routes "after restore" "$before"
	# the kept file still restores: its route, through d0 by name, is already as it saved it
	tk_run quickack restore --netns "$NS" --journal "$side"
	expect_status 0
	expect_stderr "0 route(s) restored and verified, 1 already as saved"
	same_routes "after restoring the kept file" "$before"
}

@test "a journal of another boot (its boot id edited, its crc made right): stale; restore refuses (19), changes nothing; --discard-stale sets it aside, routes left as they are" {
	local after_on sum side here
	make_ns "$NS"
	here=$(cat /proc/sys/kernel/random/boot_id)
	tk_run quickack on 10.0.1.0/24 --netns "$NS" --journal "$J"
	expect_status 0
	after_on=$(routes)
	/usr/bin/python3 "$QAJ" "$J" 1 boot 00000000-0000-4000-8000-000000000000
	grep -q '^bbrkit-quickack-journal 4 .* boot=00000000-0000-4000-8000-000000000000 ' "$J"
	sum=$(sha256sum < "$J")
	tk_run quickack status --netns "$NS" --journal "$J" -f json
	expect_status 0
	[ "$(jq -r .identity <<<"$output")" = stale ] || { tk_dump "status"; false; }
	[ "$(jq -r .why <<<"$output")" = "another boot (saved in boot 00000000-0000-4000-8000-000000000000, this is boot $here): a reboot makes the routes anew, so there is nothing to restore" ] ||
		{ tk_dump "why"; false; }
	tk_run quickack restore --netns "$NS" --journal "$J"
	expect_status 19; expect_one_line_stderr
	expect_stderr "the first, 10.0.1.0/24 table main metric 0: another boot (saved in boot 00000000-0000-4000-8000-000000000000, this is boot $here)"
	same_routes "after a refused restore" "$after_on"
	expect_equal "$(sha256sum < "$J")" "$sum" "journal checksum"
	tk_run quickack restore --discard-stale --netns "$NS" --journal "$J"
	expect_status 0
	side=$(ls "$J".stale-*)
	expect_stderr "set aside in $side; the first, 10.0.1.0/24 table main metric 0: another boot"
	same_routes "after --discard-stale" "$after_on"
	[ ! -e "$J" ]
	grep -q ' boot=00000000-0000-4000-8000-000000000000 ' "$side"
}

@test "a journal of another namespace given with --journal: refused, nothing changed in either namespace" {
	local a0 a b
	make_ns "$NS-a"
	make_ns "$NS-b"
	a0=$(routes "$NS-a")
	# written inside namespace a by a quickack that knows no name for it
	tk_run ip netns exec "$NS-a" "$BIN/quickack" on 10.0.1.0/24 --journal "$J"
	expect_status 0
	a=$(routes "$NS-a")
	b=$(routes "$NS-b")
	tk_run ip netns exec "$NS-b" "$BIN/quickack" restore --journal "$J"
	expect_status 19; expect_one_line_stderr
	expect_stderr "the first, 10.0.1.0/24 table main metric 0: another network namespace, or this one deleted and made again"
	tk_run ip netns exec "$NS-b" "$BIN/quickack" status --journal "$J" -f json
	expect_status 0
	[ "$(jq -r .identity <<<"$output")" = stale ] || { tk_dump "status"; false; }
	same_routes "namespace a" "$a" "$NS-a"
	same_routes "namespace b" "$b" "$NS-b"
	# a journal naming another namespace than --netns: the wrong file, not a stale one
	tk_run quickack restore --netns "$NS-b" --journal "$J"
	expect_status 5; expect_one_line_stderr
	expect_stderr "quickack: journal $J holds routes of the namespace quickack ran in, not of network namespace '$NS-b'; nothing was applied"
	same_routes "namespace b" "$b" "$NS-b"
	# where it was written, it restores
	tk_run ip netns exec "$NS-a" "$BIN/quickack" restore --journal "$J"
	expect_status 0
	same_routes "namespace a after its own restore" "$a0" "$NS-a"
}

@test "a format 1 journal (an older quickack's) is still read: unknown, said so; restore puts it back; on sets it aside first" {
	local orig side
	make_ns "$NS"
	orig=$(routes)
	tk_run quickack on 10.0.1.0/24 --netns "$NS" --journal "$J"
	expect_status 0
	/usr/bin/python3 "$QAJ" --format1 "$J"
	head -1 "$J" | grep -q "^bbrkit-quickack-journal 1 netns=$NS created=[0-9]* crc="
	! grep -q 'devs=' "$J" || { grep 'devs=' "$J" | sed 's/^/# /'; return 1; }
	tk_run quickack status --netns "$NS" --journal "$J" -f json
	expect_status 0
	[ "$(jq -r '[.dev, .identity] | join(" ")' <<<"$output")" = "d0 unknown" ] || { tk_dump "status"; false; }
	expect_stderr "; format 1: unchecked"
	# on does not add to what it cannot check
	tk_run quickack on 10.0.3.0/24 --netns "$NS" --journal "$J"
	expect_status 0
	side=$(ls "$J".stale-*)
	expect_stderr "set aside in $side; the first, 10.0.1.0/24 table main metric 0: a format 1 journal (an older quickack's) records no boot, network namespace or device names to check it by"
	head -1 "$J" | grep -q '^bbrkit-quickack-journal 4 '
	head -1 "$side" | grep -q '^bbrkit-quickack-journal 1 '
	tk_run quickack restore --netns "$NS" --journal "$J"
	expect_status 0
	tk_run quickack restore --netns "$NS" --journal "$side"
	expect_status 0
	expect_stderr "quickack: warning: journal $side: a format 1 journal (an older quickack's) records no boot, network namespace or device names to check it by; its routes are put back as saved, unchecked"
	same_routes "after both restores" "$orig"
}

@test "a namespace made again: status, then on and restore, in five steps" {
	local def=/var/lib/bbrkit/quickack-$NS.journal old before side
	rm -f "$def" "$def".stale-*
	# 1. A namespace holds a route with quickack turned on.
	make_ns "$NS"
	old=$(ifindex d0)
	tk_run quickack on 10.0.1.0/24 --netns "$NS"
	expect_status 0
	# 2. The namespace is deleted and created again with the same name, the
	#    same route and a different ifindex.
	ip netns del "$NS"
	make_ns "$NS" 7$old
	[ "$(ifindex d0)" != "$old" ]
	before=$(routes)
	# 3. quickack status: the entry is stale, and says why (it showed
	#    "if$old ... live differs")
	tk_run quickack status --netns "$NS" -f table
	expect_status 0
	expect_output " d0 "
	expect_output " stale "
	expect_output "another network namespace, or this one deleted and made again"
	[[ $output != *" if$old "* ]] || { tk_dump "the device by its old ifindex"; false; }
	# 4. quickack on: the stale record set aside, said in one line, then the change
	tk_run quickack on 10.0.1.0/24 --netns "$NS"
	expect_status 0
	side=$(ls "$def".stale-*)
	expect_stderr "on: 1 journal record(s) that do not fit this boot, network namespace and devices set aside in $side"
	ip -n "$NS" route show 10.0.1.0/24 | grep -q 'quickack 1'
	# 5. quickack restore: the route exactly as it was before step 4
	tk_run quickack restore --netns "$NS"
	expect_status 0
	expect_stderr "restore: 1 route(s) restored and verified"
	same_routes "after restore" "$before"
	[ ! -e "$def" ]
	[ -s "$side" ]
}
