# lib/: code shared by two or more tools, built into build/*/libtoolkit.a.
UNIT_TESTS += test_cli test_record test_jsonl test_trace test_dwellrec test_opt test_chooser test_prom
# lib/*.c come from libtoolkit.a
test_chooser_LIBS := $(BPF_LIBS)
test_prom_LIBS := -lpthread

# the trace readers (and the JSON-lines reader under them) on arbitrary input
FUZZ_TARGETS += fuzz_trace
fuzz_trace_SRCS := lib/trace.c lib/jsonl.c lib/record.c lib/rectable.c lib/cli.c lib/log.c

# the Prometheus endpoint's parsers, on what the network and the command line send
FUZZ_TARGETS += fuzz_prom_request
fuzz_prom_request_SRCS := lib/prom.c lib/cli.c lib/log.c
