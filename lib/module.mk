# lib/: code shared by two or more tools, built into build/*/libtoolkit.a.
UNIT_TESTS += test_cli test_record test_jsonl test_trace test_opt

# the trace readers (and the JSON-lines reader under them) on arbitrary input
FUZZ_TARGETS += fuzz_trace
fuzz_trace_SRCS := lib/trace.c lib/jsonl.c lib/record.c lib/cli.c lib/log.c
