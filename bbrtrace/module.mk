# bbrtrace: every BBR rate sample, per ACK
TOOLS += bbrtrace
SBIN_TOOLS += bbrtrace  # BPF: root, or CAP_BPF + CAP_PERFMON + CAP_NET_ADMIN
bbrtrace_SRCS := bbrtrace/main.c bbrtrace/args.c bbrtrace/help.c bbrtrace/run.c bbrtrace/metrics.c bbrtrace/report.c \
                 bbrtrace/backend.c bbrtrace/reorder.c bbrtrace/sample.c bbrtrace/defaultcc.c bbrtrace/guard.c \
                 bbrtrace/detect.c bbrtrace/cause.c bbrtrace/flowtab.c bbrtrace/culprit.c bbrtrace/peers.c bbrtrace/peerverdict.c bbrtrace/vtext.c \
                 bbrtrace/stall.c bbrtrace/verdict.c
bbrtrace_BPF  := bbr_traced bbr_traced_pre610 bbrtrace_fentry bbrtrace_kprobe
bbrtrace_LIBS := $(BPF_LIBS) -lnl-3 -lpthread

# the user-space decode + JSON cost, measured by bench/20-bbrtrace.sh
BENCH_PROGS += bbrtrace_decode
bbrtrace_decode_SRCS := bbrtrace/sample.c bbrtrace/reorder.c
# the tap's cost per stage (enum bt_tap_stop), for bench/21-bbrtap.sh
BENCH_PROGS += bbrtap_stages
bbrtap_stages_BPF  := bbr_traced
bbrtap_stages_LIBS := $(BPF_LIBS)

UNIT_TESTS += test_bbrtrace_sample
test_bbrtrace_sample_SRCS := bbrtrace/sample.c bbrtrace/reorder.c
UNIT_TESTS += test_bbrtrace_decode
test_bbrtrace_decode_SRCS := bbrtrace/sample.c bbrtrace/reorder.c

# the collapse classifier on recorded traces (tests/fixtures/detect/)
UNIT_TESTS += test_detect
test_detect_SRCS := bbrtrace/detect.c bbrtrace/cause.c bbrtrace/flowtab.c bbrtrace/culprit.c bbrtrace/peers.c bbrtrace/peerverdict.c bbrtrace/vtext.c \
                    bbrtrace/stall.c bbrtrace/verdict.c bbrtrace/sample.c
# the stall tracker on event sequences built to the kernel's rules
UNIT_TESTS += test_stall
test_stall_SRCS := bbrtrace/stall.c
# the detector's flow table
UNIT_TESTS += test_flowtab
test_flowtab_SRCS := bbrtrace/flowtab.c
# the user-space detector's cost per ACK with many flows (bench/22-scale.sh)
BENCH_PROGS += bbrtrace_detect
bbrtrace_detect_SRCS := bbrtrace/sample.c bbrtrace/reorder.c bbrtrace/detect.c bbrtrace/cause.c bbrtrace/flowtab.c \
                        bbrtrace/culprit.c bbrtrace/peers.c bbrtrace/peerverdict.c bbrtrace/vtext.c bbrtrace/stall.c
