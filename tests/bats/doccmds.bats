#!/usr/bin/env bats
# tier: check
# The READMEs' extractor, tests/tools/doccmds.py: what it reads as a command
# and as expected output, how strictly, how it matches output, and that
# every README command has a runner (docs*.bats) or a line in the not-run
# table (docs_helpers.bash). The runners themselves: docs.bats, docs_*.bats.

load helpers
load docs_helpers

# a README of these lines, in a scratch repository: its path
scratch_readme() {
	mkdir -p "$BATS_TEST_TMPDIR/repo"
	printf '%s\n' "$@" >"$BATS_TEST_TMPDIR/repo/README.md"
}

doccmds() { tk_run "$DOC_TOOL" --root "$BATS_TEST_TMPDIR/repo" "$@"; }

doc_not_run_one() { [[ $2 =~ $1 ]]; }

@test "doccmds.py: every README parses; commands without comments, continuations joined, exit N from the comment" {
	tk_run "$DOC_TOOL" check
	expect_status 0
	scratch_readme '# Title' '```sh' "a 'x # y' # not this" 'b \' '  --c   # comment' '# alone' '' 'd # fails: exit 22' '```'
	doccmds list
	expect_status 0
	[ "$output" = "$(printf 'README.md\t3\t2\t0\tTitle\ta '"'"'x # y'"'"'\nREADME.md\t4\t2\t0\tTitle\tb --c\nREADME.md\t8\t2\t22\tTitle\td')" ] || { tk_dump "list"; return 1; }
}

@test "doccmds.py is strict: an open fence, a block with nothing to run, output with no command, an unknown language" {
	scratch_readme '```sh' 'make'
	doccmds check
	expect_status 1
	expect_stderr "README.md:1: a \`\`\`sh block that is never closed"
	scratch_readme '```sh' '# only a comment' '' '```'
	doccmds check
	expect_status 1
	expect_stderr 'README.md:1: a ```sh block with nothing to run'
	scratch_readme '```text' 'out' '```' '```sh' 'x' '```'
	doccmds check
	expect_status 1
	expect_stderr 'README.md:1: a ```text block with no ```sh block above it'
	scratch_readme '```bash' 'x' '```'
	doccmds check
	expect_status 1
	expect_stderr "README.md:1: unknown fence language 'bash'"
	scratch_readme '```sh' 'x \' '```'
	doccmds check
	expect_status 1
	expect_stderr 'README.md:2: a continued line that nothing continues'
}

@test "doccmds.py match: a number matches any number, [...] anything, lines in order, whole lines" {
	scratch_readme '```sh' 'x' '```' '```text' 'took 41.2 ms; [...]; bw 212 Mbit/s → 3.1 Mbit/s' '```' '```text' 'done' '```'
	out=$BATS_TEST_TMPDIR/out
	printf '%s\n' 'noise' 'took 7 ms; delayed_ack; bw 8688 Mbit/s → 0.26 Mbit/s' 'done' >"$out"
	doccmds match README.md 1 "$out"
	expect_status 0
	doccmds match README.md 7 "$out"
	expect_status 0
	# out of order
	printf '%s\n' 'done' 'took 7 ms; x; bw 1 Mbit/s → 2 Mbit/s' >"$out"
	doccmds match README.md 1 "$out"
	expect_status 1
	expect_stderr 'line 8: no line of'
	# words are words, and a line is matched whole
	printf '%s\n' 'took 7 us; x; bw 1 Mbit/s → 2 Mbit/s' 'done.' >"$out"
	doccmds match README.md 1 "$out"
	expect_status 1
	expect_stderr 'line 5: no line of'
}

@test "every README command runs in a doc test or is in the not-run table; every table line applies to a command" {
	local files=() f re reason expr n cmds
	mapfile -t files < <(doc_list | cut -f1 | uniq)
	expect_cmp "${#files[@]}" -ge 8 "files with commands to check"
	for f in "${files[@]}"; do
		doc_list "$f" | cut -f6 | while read -r c; do doc_not_run "$(doc_drop_sudo "$c")" || echo run; done | grep -q . || continue
		# its runner: a test named after it, which ends with doc_readme or doc_all_run
		grep -qF "@test \"$f: " "$TK_ROOT"/tests/bats/docs*.bats ||
			{ echo "# $f has commands to run, and no test named '$f: ...' in tests/bats/docs*.bats runs them"; return 1; }
	done
	cmds=$(doc_list | cut -f6 | while read -r c; do doc_drop_sudo "$c"; done)
	while IFS=$'\t' read -r re reason; do
		n=$(while read -r c; do doc_not_run_one "$re" "$c" && echo x; done <<<"$cmds" | wc -l)
		echo "# not run: /$re/ ($n commands): $reason" >&3
		[ "$n" -gt 0 ] || { echo "# /$re/ matches no README command: remove it"; return 1; }
	done < <(doc_table "$DOC_NOT_RUN")
	while IFS=$'\t' read -r expr reason; do
		n=$(sed -E "$expr" <<<"$cmds" | diff <(echo "$cmds") - | grep -c '^>')
		echo "# substituted: $expr ($n commands): $reason" >&3
		[ "$n" -gt 0 ] || { echo "# $expr changes no README command: remove it"; return 1; }
	done < <(doc_table "$DOC_SUBST")
}
