#!/usr/bin/env bats
# The media-server demo (repro/sfu.sh) across three namespaces: udpdwell
# clears a healthy server, accuses a slow one, and clears the server when the
# network is bad, while the application's own figures show the damage.

load helpers

setup_file() {
	requires root btf netns jq ss
}

teardown() {
	# the script cleans up after itself; make sure, even when it failed
	for ns in $(ip netns list | awk '/^ud-sfu-/ { print $1 }'); do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	return 0
}

@test "three scenarios: healthy OK, slow server ALERT without loss, bad network OK with loss and jitter" {
	before=$(ip netns list | grep -c '^ud-sfu-' || true)
	tk_run timeout 300 "$TK_ROOT/repro/sfu.sh" --json --seconds 3 --rate 3000 --port 41400
	expect_status 0
	printf '%s\n' "$output" | sed 's/^/# /' >&3
	healthy=$(jq -c 'select(.scenario=="healthy")' <<< "$output")
	load=$(jq -c 'select(.scenario=="load")' <<< "$output")
	net=$(jq -c 'select(.scenario=="network")' <<< "$output")

	[ "$(jq -r .udpdwell.state <<< "$healthy")" = OK ] || { echo "# $healthy"; false; }
	[ "$(jq -r .verdict <<< "$healthy")" = healthy ]
	[ "$(jq .app.lost <<< "$healthy")" -eq 0 ]

	[ "$(jq -r .udpdwell.state <<< "$load")" = ALERT ] || { echo "# $load"; false; }
	[ "$(jq -r .verdict <<< "$load")" = "the server holds packets" ]
	[ "$(jq .app.lost <<< "$load")" -eq 0 ]
	jq -e '.udpdwell.max_us > 20000' <<< "$load" > /dev/null

	[ "$(jq -r .udpdwell.state <<< "$net")" = OK ] || { echo "# $net"; false; }
	[ "$(jq -r .verdict <<< "$net")" = "the network: the server is cleared" ]
	jq -e '.app.loss_pct > 5 and .app.loss_pct < 15 and .app.reordered > 0 and .app.jitter_ms > 5' \
		<<< "$net" > /dev/null || { echo "# $net"; false; }
	jq -e '.udpdwell.drops == 0' <<< "$net" > /dev/null

	# nothing left behind
	[ "$(ip netns list | grep -c '^ud-sfu-' || true)" -eq "$before" ]
}

@test "bad arguments: one line, exit 2" {
	tk_run "$TK_ROOT/repro/sfu.sh" --scenario fast
	expect_status 2; expect_one_line_stderr
	expect_stderr "sfu.sh: --scenario: 'fast' is not one of all|healthy|load|network"
	tk_run "$TK_ROOT/repro/sfu.sh" --rate 5x
	expect_status 2; expect_one_line_stderr
	expect_stderr "sfu.sh: --rate: '5x' is not an integer 10..200000"
	tk_run "$TK_ROOT/repro/sfu.sh" --seconds
	expect_status 2; expect_one_line_stderr
	expect_stderr "sfu.sh: --seconds: needs a value"
}
