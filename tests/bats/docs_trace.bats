#!/usr/bin/env bats
# bbrtrace/, pcap/ and quickack/README.md's examples, run for real (see
# docs.bats): in the README's machine (namespace doc-ID-host, eth0 10.0.0.1)
# facing a receiver (doc-ID-peer, 10.0.0.2), with a live push between them
# while bbrtrace or a capture watches. They all need bbr_traced here (the
# struct_ops backend), one at a time on a machine: the file holds the lock.

load helpers
load docs_helpers

# the lock for the whole file: taken per test, each test queued again
# behind the other runs of the machine
setup_file() { doc_lock; }

teardown_file() { tk_unlock_bbr_traced; }

setup() {
	requires root netns bbr struct_ops btf jq
	doc_setup
	doc_ns_add peer
	doc_link host eth0 10.0.0.1 peer eth0 10.0.0.2
}

teardown() {
	doc_teardown
}

# the receiver of the READMEs' examples
PEER=10.0.0.2:1935

# --- bbrtrace ---------------------------------------------------------------------------

# a push from the README's machine while bbrtrace watches: on bbr_traced when
# bbrtrace runs struct_ops (the namespace's default with --set-default, else
# asked by the socket), else on kernel BBR
bbrtrace_during() {
	local cmd n cc=bbr
	read -r _ n < <(doc_group_find bbrtrace)
	cmd=$(doc_group_cmds | head -1)
	if grep -q ': backend struct_ops' "$DOC_LOG/$n.err"; then
		cc=bbr_traced
		[[ $cmd == *--set-default* ]] && cc=
	fi
	doc_push host peer "$PEER" 2 "$cc" && doc_group_wait "$DOC_STOP_WAIT"
}

# a trace with samples of the push
bbrtrace_after() {
	local out
	out=$(doc_opt "$1" -o --output)
	[ -n "$out" ] || return 0
	[ "$(doc_summary "$DOC_CWD/$out" samples)" -gt 0 ] || { echo "# no sample in $out"; return 1; }
}

@test "bbrtrace/README.md: every example runs; each trace holds the push's samples" {
	doc_during() { bbrtrace_during; }
	doc_after() { bbrtrace_after "$@"; }
	doc_readme bbrtrace/README.md
}

# --- bbrpcap ----------------------------------------------------------------------------

# a push to the README's receiver while the capture runs, which bbrtrace
# traces too: join's trace.jsonl, of the flow each capture holds (the ring's
# join reads the ring's push, not the first capture's)
pcap_during() {
	doc_bbrtrace_start --detect -f json -o "$DOC_CWD/trace.jsonl" &&
		doc_push host peer "$PEER" 3 "$(doc_traced_cc "$DOC_BT_ERR")" &&
		doc_bbrtrace_stop
}

# join found the collapses' and samples' frames
pcap_after() {
	local out
	[[ $1 == *" join "* ]] || return 0
	out=$DOC_CWD/$(doc_opt "$1" -o --output)
	jq -e -s '[.[] | select(.type == "sample" and .frame != null)] | length > 0' "$out" >/dev/null ||
		{ echo "# join matched no sample to a frame"; return 1; }
}

@test "pcap/README.md: every example runs on a capture of a live push and its trace" {
	doc_during() { pcap_during; }
	doc_after() { pcap_after "$@"; }
	doc_readme pcap/README.md
}

# --- quickack ---------------------------------------------------------------------------

@test "quickack/README.md: every example runs, and restore puts every route back byte for byte" {
	host=$(doc_ns host) recv=$(doc_ns rp-recv)
	# the README's machine routes 10.0.1.0/24 (the sender's) through eth0,
	# with metrics of its own; the receiver's namespace rp-recv too
	ip -n "$host" route add 10.0.1.0/24 via 10.0.0.2 dev eth0 mtu 1400 initcwnd 20
	doc_ns_add rp-recv
	doc_link rp-recv eth0 10.0.2.2 host eth1 10.0.2.1
	ip -n "$recv" route add 10.0.1.0/24 via 10.0.2.1 dev eth0 initcwnd 20
	before=$(ip -n "$host" route show table all; ip -n "$host" -6 route show table all)
	# `congctl ... bbr_traced` is for while bbrtrace runs: it runs throughout
	doc_bbrtrace_start -b struct_ops -f json -o /dev/null
	doc_readme quickack/README.md
	doc_bbrtrace_stop
	after=$(ip -n "$host" route show table all; ip -n "$host" -6 route show table all)
	[ "$after" = "$before" ] || { diff <(echo "$before") <(echo "$after"); return 1; }
	# the receiver's route: quick ACKs on, its metric kept (read by ip)
	ip -n "$recv" route show 10.0.1.0/24 | grep 'quickack 1' | grep -q 'initcwnd 20' ||
		{ ip -n "$recv" route show; return 1; }
}
