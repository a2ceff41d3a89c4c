# repro/: the live-stream push reproduction (pushsim, topology and scripts).
TOOLS += pushsim
pushsim_SRCS := repro/pushsim.c

# the collapse classifier on recorded traces (tests/fixtures/detect/)
UNIT_TESTS += test_detect
test_detect_SRCS := bbrtrace/detect.c bbrtrace/verdict.c bbrtrace/sample.c
