# bbrpcap: flows, throughput, ACKs and the trace join from captures
TOOLS += bbrpcap
BBRPCAP_CORE := pcap/capfile.c pcap/decode.c pcap/analysis.c pcap/side.c pcap/flowsel.c pcap/ackdelay.c
bbrpcap_SRCS := pcap/bbrpcap.c pcap/commands.c pcap/join.c pcap/jointrace.c pcap/joinout.c pcap/capture.c pcap/shared.c pcap/joinmatch.c \
	$(BBRPCAP_CORE)
bbrpcap_LIBS := -lpcap

UNIT_TESTS += test_bbrpcap
test_bbrpcap_SRCS := $(BBRPCAP_CORE)
test_bbrpcap_LIBS := -lpcap

# the fuzz build links no libtoolkit.a: the lib/ sources it needs are listed
FUZZ_TARGETS += fuzz_pcap
fuzz_pcap_SRCS := $(BBRPCAP_CORE)
fuzz_pcap_LIBS := -lpcap

# test scaffolding: tc programs that tag frames with a VLAN (no 8021q here)
unit-tests: $(GEN)/pcap_vlan.bpf.o

# the whole join on an arbitrary trace and capture
FUZZ_TARGETS += fuzz_join
fuzz_join_SRCS := pcap/join.c pcap/jointrace.c pcap/joinout.c pcap/joinmatch.c pcap/shared.c $(BBRPCAP_CORE) lib/trace.c lib/jsonl.c lib/jlines.c \
	lib/record.c lib/rectable.c lib/cli.c lib/log.c lib/opt.c
fuzz_join_LIBS := -lpcap

# the join's matching on its own
UNIT_TESTS += test_joinmatch
test_joinmatch_SRCS := pcap/joinmatch.c
