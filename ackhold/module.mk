# ackhold/: ackhold (the receiving host's view: how long it held each ACK,
# and whether the sender waited on it, per peer).
TOOLS += ackhold
SBIN_TOOLS += ackhold  # BPF: root, or CAP_BPF + CAP_PERFMON + CAP_SYSLOG

ackhold_SRCS := ackhold/main.c ackhold/args.c ackhold/probe.c ackhold/peers.c ackhold/report.c \
                ackhold/verdict.c ackhold/metrics.c
ackhold_BPF  := ackhold
ackhold_LIBS := $(BPF_LIBS) -lpthread

# the judgement of each hold, the sums per peer and the verdict, without a kernel
UNIT_TESTS += test_ackhold
test_ackhold_SRCS := ackhold/peers.c ackhold/verdict.c
