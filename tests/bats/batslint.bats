#!/usr/bin/env bats
# tier: check
# The test files' own rule: no assertion that cannot fail
# (tests/tools/batslint.py: a `! cmd` or an `a && b` list before a test's
# end, without an `||` handler, is ignored by bash's errexit).

load helpers

LINT=$TK_ROOT/tests/tools/batslint.py

@test "no bats file or helper holds an assertion that cannot fail" {
	tk_run "$LINT" "$TK_ROOT"/tests/bats/*.bats "$TK_ROOT"/tests/bats/*.bash
	expect_status 0
}

@test "the lint names a negation and an && list mid-test, which bats lets pass; not handled ones or guards" {
	local f=$TK_ROOT/tests/fixtures/batslint/silent.bats
	# bats itself: the first test passes although all its checks are false
	tk_run bats --tap "$f"
	expect_output "ok 1 silent"
	expect_output "ok 2 handled, guarded, or last"
	tk_run "$LINT" "$f"
	expect_status 1
	expect_output "silent.bats:6: ! true"
	expect_output "silent.bats:7: [ 1 -eq 2 ] && [ 1 -eq 1 ]"
	expect_output "silent.bats:8: [ 1 -eq 2 ] && [ 1 -eq 1 ]"
	expect_output "silent.bats:10: [ 1 -eq 2 ] && [ 1 -eq 2 ] && [ 1 -eq 1 ]"
	# each statement once: its continuation lines are not read again
	expect_equal "$(grep -c . <<< "$output")" 4 "statements named"
}
