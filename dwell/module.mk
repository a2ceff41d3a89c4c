# dwell/: udpdwell (UDP socket-queue dwell time and drops, per socket). Its
# demo's load, rtpsend and sfu_echo, is in loadgen/.
TOOLS += udpdwell
SBIN_TOOLS += udpdwell  # BPF: root, or CAP_BPF + CAP_PERFMON

udpdwell_SRCS := dwell/udpdwell.c dwell/udpdwell_cli.c dwell/udpdwell_interval.c \
                 dwell/udpdwell_records.c dwell/udpdwell_metrics.c \
                 dwell/backend.c dwell/snapshot.c dwell/stats.c dwell/reasons.c dwell/owner.c
udpdwell_BPF  := udpdwell_tp udpdwell_fentry udpdwell_kprobe udpdwell_ref
udpdwell_LIBS := $(BPF_LIBS) -lpthread

# the FIFO uses cmpxchg and xchg (BPF ISA v3, kernel 5.12+)
$(GEN)/udpdwell_%.bpf.o $(BPF_ARM64)/udpdwell_%.bpf.o: BPF_CFLAGS += -mcpu=v3

UNIT_TESTS += test_udpdwell test_udpdwell_fifo
test_udpdwell_SRCS := dwell/stats.c dwell/reasons.c dwell/snapshot.c dwell/owner.c
test_udpdwell_LIBS := $(BPF_LIBS)
test_udpdwell_fifo_SRCS :=
# what bpf_stats itself adds per program run, for bench/60-udpdwell.sh
BENCH_PROGS += udpdwell_statcost
udpdwell_statcost_BPF  := udpdwell_ref
udpdwell_statcost_LIBS := $(BPF_LIBS)
# udpdwell's tracepoint programs stopped after one stage, for bench/60-udpdwell.sh's cost breakdown
BENCH_PROGS += udpdwell_stages
udpdwell_stages_BPF  := udpdwell_tp_stages
udpdwell_stages_LIBS := $(BPF_LIBS)
