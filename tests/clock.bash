# shellcheck shell=bash
# The test runners' clock, for their time tables (tests/run.sh,
# tests/kernels/run.sh, and tests/kernels/suites.sh in each guest): bash's
# own EPOCHREALTIME, as a date or an awk costs 60 to 250 ms in an emulated
# guest.

# seconds since START (an EPOCHREALTIME reading, with a `.` or a `,` as
# the locale writes it), one decimal
since() {
	local now=$EPOCHREALTIME us
	us=$((${now//[.,]/} - ${1//[.,]/} + 50000))
	printf '%d.%d' $((us / 1000000)) $((us / 100000 % 10))
}
