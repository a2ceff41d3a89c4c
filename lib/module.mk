# lib/: code shared by two or more tools, built into build/*/libtoolkit.a.
UNIT_TESTS += test_cli test_record test_jsonl test_trace test_opt
