#!/usr/bin/env bats
# tier: check
# The man pages against the tools: each default --help prints (from the
# option table, where it is written once) is the one the man page gives
# (tests/tools/manpage.py says how it reads both). A man page is written
# by hand, so this is where a changed default shows up undocumented.

load helpers

MANPAGE=$TK_ROOT/tests/tools/manpage.py

@test "every man page gives the defaults its tool's --help prints" {
	local page tool n=0 bad=0
	for page in "$TK_ROOT"/man/*.[18]; do
		tool=$(basename "$page" | sed 's/\.[18]$//')
		[ -x "$TK_ROOT/bin/$tool" ] || { echo "# $page: no bin/$tool (make)"; return 1; }
		tk_run "$MANPAGE" defaults "$TK_ROOT/bin/$tool" "$page"
		[ "$status" -eq 0 ] || { grep -v '^ok ' <<< "$output" | sed "s/^/# $tool /"; bad=$((bad + 1)); }
		n=$((n + $(grep -c '^ok ' <<< "$output" || true)))
	done
	echo "# $n defaults agree" >&3
	expect_cmp "$bad" -eq 0 "man pages whose defaults differ"
	expect_cmp "$n" -gt 0 "defaults read"
}

@test "a man page whose default differs from --help's is named, with both values" {
	sed 's/(default 24301)/(default 5)/' "$TK_ROOT/man/rtpsend.1" > "$BATS_TEST_TMPDIR/rtpsend.1"
	tk_run "$MANPAGE" defaults "$TK_ROOT/bin/rtpsend" "$BATS_TEST_TMPDIR/rtpsend.1"
	expect_status 1
	expect_output "--ssrc: --help says default 24301; the man page says: default 5"
	# a value list's marked default: "auto (the default)" read as auto
	sed 's/^(the default)\.$/(not the default)./' "$TK_ROOT/man/bbrpcap.1" > "$BATS_TEST_TMPDIR/bbrpcap.1"
	tk_run "$MANPAGE" defaults "$TK_ROOT/bin/bbrpcap" "$BATS_TEST_TMPDIR/bbrpcap.1"
	expect_status 1
	expect_output "--side: --help says default auto"
}
