# upfbench: a GTP-U user-plane path, benchmarked by design, in cycles per packet
#
# DPDK's rte_hash is an optional back end: found by pkg-config (libdpdk-dev),
# or forced with UPF_DPDK=yes|no. Without it upfbench builds and says so.
UPF_DPDK ?= auto
ifeq ($(UPF_DPDK),auto)
UPF_DPDK := $(shell pkg-config --exists libdpdk 2>/dev/null && echo yes || echo no)
endif
ifeq ($(UPF_DPDK),yes)
# DPDK's headers are not -Wextra clean: include them as system headers
UPF_DPDK_CFLAGS := -DUP_HAVE_DPDK $(patsubst -I%,-isystem %,$(shell pkg-config --cflags libdpdk))
UPF_DPDK_LIBS   := $(shell pkg-config --libs libdpdk)
else
UPF_DPDK_CFLAGS :=
UPF_DPDK_LIBS   :=
$(info upf: pkg-config finds no libdpdk: building upfbench without the rte_hash back end)
endif
$(OBJ)/upf/table_rte.o: CFLAGS += $(UPF_DPDK_CFLAGS)

UPF_CORE := upf/gtpu.c upf/hw.c upf/table.c upf/table_rte.c upf/session.c upf/inline.c \
            upf/teid.c upf/traffic.c upf/floor.c upf/table_bench.c \
            upf/path_rx.c upf/path_worker.c upf/path_setup.c upf/path_verify.c upf/path_run.c \
            upf/lookup.c upf/lookup_own.c upf/lookup_rte.c upf/lookup_inline.c upf/lookup_slot.c
UPF_LIBS := -lpcap -lpthread $(UPF_DPDK_LIBS)
UPF_ARGS := upf/args.c upf/args_design.c upf/args_value.c upf/args_options.c upf/args_help.c
UPF_CMDS := upf/cmd_output.c upf/cmd_record.c upf/cmd_prepare.c upf/cmd_run.c upf/cmd_sweep.c \
            upf/cmd_lookup.c upf/cmd_floor.c upf/cmd_decode.c upf/cmd_identity.c

TOOLS += upfbench
upfbench_SRCS := upf/upfbench.c $(UPF_CMDS) $(UPF_ARGS) $(UPF_CORE)
upfbench_LIBS := $(UPF_LIBS)

UNIT_TESTS += test_gtpu test_upf_table test_upf_path test_upf_args
test_gtpu_SRCS := upf/gtpu.c
test_upf_table_SRCS := upf/table.c upf/hw.c upf/inline.c upf/session.c upf/teid.c
test_upf_path_SRCS := $(UPF_CORE)
test_upf_path_LIBS := $(UPF_LIBS)
test_upf_args_SRCS := $(UPF_ARGS) $(UPF_CORE)
test_upf_args_LIBS := $(UPF_LIBS)

FUZZ_TARGETS += fuzz_gtpu
fuzz_gtpu_SRCS := upf/gtpu.c
