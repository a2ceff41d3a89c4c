#!/usr/bin/env bats
# tier: check
# monitoring/'s Prometheus alerting rules pass promtool, and fire on the
# series fixtures that should fire them and on no others (promtool test
# rules); the live /metrics pages they read: monitoring.bats.

load helpers

MON=$TK_ROOT/monitoring

@test "promtool: the rules are valid and fire on the series that should fire them, not on the others" {
	requires promtool
	tk_run promtool check rules "$MON/bbrkit.rules.yml"
	expect_status 0
	[[ "$output" == *"SUCCESS: 7 rules found"* ]]
	tk_run promtool test rules "$MON/rules_test.yml"
	expect_status 0
	# the fixtures are not a formality: a threshold moved makes them fail
	sed 's/\* 60 > 2/* 60 > 4/' "$MON/bbrkit.rules.yml" > "$BATS_TEST_TMPDIR/bbrkit.rules.yml"
	cp "$MON/rules_test.yml" "$BATS_TEST_TMPDIR/"
	tk_run promtool test rules "$BATS_TEST_TMPDIR/rules_test.yml"
	expect_cmp "$status" -ne 0 "promtool's exit status with the collapse threshold moved"
	[[ "$output$stderr" == *"BbrDelayedAckCollapses"* ]]
	sed 's/nagle_stalled_seconds \/ (bbrtrace_peer_active_seconds > 0)) > 0.05/nagle_stalled_seconds \/ (bbrtrace_peer_active_seconds > 0)) > 0.25/' \
		"$MON/bbrkit.rules.yml" > "$BATS_TEST_TMPDIR/bbrkit.rules.yml"
	! cmp -s "$MON/bbrkit.rules.yml" "$BATS_TEST_TMPDIR/bbrkit.rules.yml" || { echo "# the sed changed no rule"; return 1; }
	tk_run promtool test rules "$BATS_TEST_TMPDIR/rules_test.yml"
	expect_cmp "$status" -ne 0 "promtool's exit status with the Nagle threshold moved"
	[[ "$output$stderr" == *"BbrNagleStalls"* ]]
}
