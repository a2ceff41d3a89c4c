#!/usr/bin/env bats
# tier: check
# The shake harness's table (tests/shake.sh --report): each test's passes
# over its file's runs, read from the TAP of runs kept in an --out directory,
# a test that failed, was skipped or went missing in any run marked flaky;
# and its refusals of bad usage. The runs themselves are live suites' time:
# `make shake` is run by hand, its table quoted in the closing notes.

load helpers

SHAKE=$BATS_TEST_DIRNAME/../shake.sh

# a run's TAP: FILE RUN LINE...
tap() {
	local file=$1 run=$2
	shift 2
	mkdir -p "$BATS_TEST_TMPDIR/out/host"
	printf '%s\n' "1..$#" "$@" > "$BATS_TEST_TMPDIR/out/host/$file.r$run.tap"
}

@test "shake --report: 2 of 2 is steady, a failure, a skip or a missing test in one run is flaky, status 1" {
	tap alpha 1 'ok 1 steady' 'ok 2 fails once' 'ok 3 skipped once' 'ok 4 missing once'
	tap alpha 2 'ok 1 steady' 'not ok 2 fails once' 'ok 3 skipped once # skip no tcpdump'
	tap beta 1 'ok 1 - other file'
	tk_run "$SHAKE" --report --out "$BATS_TEST_TMPDIR/out"
	expect_status 1
	[[ $output == *"2      2      alpha: steady"$'\n'* ]]
	[[ $output == *"1      2      alpha: fails once   <-- flaky"* ]]
	[[ $output == *"1      2      alpha: skipped once   <-- flaky"* ]]
	[[ $output == *"1      2      alpha: missing once   <-- flaky"* ]]
	[[ $output == *"1      1      beta: other file"$'\n'* ]]
	expect_cmp "$(grep -c 'flaky' <<< "$output")" -eq 3 "tests marked flaky"
}

@test "shake --report: every test steady is status 0; batches numbered on with --from add runs" {
	tap alpha 1 'ok 1 steady'
	tap alpha 2 'ok 1 steady'
	tap alpha 7 'ok 1 steady'
	tk_run "$SHAKE" --report --out "$BATS_TEST_TMPDIR/out" alpha
	expect_status 0
	[[ $output == *"3      3      alpha: steady"$'\n'* ]]
}

@test "shake --report: a guest stopped by a signal is no result; one that timed out is a failure" {
	local g=$BATS_TEST_TMPDIR/out/guests/6.1
	mkdir -p "$g"
	printf '%s\n' '1..1' 'ok 1 [6.1] steady' > "$g/01-gamma.r1.tap"
	printf '%s\n' 'not ok 1 [6.1] the guest finished its suites' \
		'# stopped by a signal before the guest finished; the console'"'"'s last lines:' > "$g/99-guest.tap"
	tk_run "$SHAKE" --report --out "$BATS_TEST_TMPDIR/out"
	expect_status 0
	[[ $output == *"1      1      6.1/gamma: [6.1] steady"$'\n'* ]]
	[[ $output != *"guest finished"* ]]
	sed -i 's/^# stopped by a signal before the guest finished/# the guest did not finish in 3000 s or did not boot/' "$g/99-guest.tap"
	tk_run "$SHAKE" --report --out "$BATS_TEST_TMPDIR/out"
	expect_status 1
	[[ $output == *"6.1/guest: [6.1] the guest finished its suites   <-- flaky"* ]]
}

@test "shake: bad usage exits 2 and says what is wrong" {
	tk_run "$SHAKE" --report
	expect_status 2
	[[ $stderr == *"--report wants --out DIR"* ]]
	tk_run "$SHAKE" --report --out "$BATS_TEST_TMPDIR/none"
	expect_status 2
	tk_run "$SHAKE" --runs 0 rtmp
	expect_status 2
	[[ $stderr == *"--runs wants 1 to 9999, not '0'"* ]]
	tk_run "$SHAKE" --load many rtmp
	expect_status 2
	[[ $stderr == *"--load wants a count of busy cores"* ]]
	tk_run "$SHAKE" '^no-such-file$'
	expect_status 2
	[[ $stderr == *"no host file"*"matches '^no-such-file\$'"* ]]
	tk_run "$SHAKE"
	expect_status 2
	[[ $stderr == *"tests/shake.sh --report --out DIR"* ]]
}
