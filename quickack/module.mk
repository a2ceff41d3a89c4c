# quickack: RTAX_QUICKACK and related delayed-ACK metrics on routes, with a
# journal that restores them exactly. libnl-3 / libnl-route-3.
QUICKACK_CORE := quickack/route_parse.c quickack/route_change.c quickack/route_request.c quickack/route_host.c \
                 quickack/route_text.c quickack/route_table.c quickack/route_select.c \
                 quickack/journal_format.c quickack/journal_parse.c quickack/journal_file.c
TOOLS += quickack
SBIN_TOOLS += quickack  # route changes: CAP_NET_ADMIN
quickack_SRCS := quickack/main.c quickack/args.c quickack/run.c quickack/onoff.c quickack/restore.c quickack/stale.c quickack/nl.c quickack/output.c $(QUICKACK_CORE) quickack/sockscope.c quickack/scope.c quickack/output_scope.c
quickack_BPF  := quickack_sock
quickack_LIBS := -lnl-route-3 -lnl-3 -lz $(BPF_LIBS)

UNIT_TESTS += test_quickack_args test_quickack_route test_quickack_journal test_quickack_netns
test_quickack_args_SRCS := quickack/args.c $(QUICKACK_CORE)
test_quickack_args_LIBS := -lz
test_quickack_route_SRCS := $(QUICKACK_CORE)
test_quickack_route_LIBS := -lz
test_quickack_journal_SRCS := $(QUICKACK_CORE)
test_quickack_journal_LIBS := -lz
# lib/netns.c comes from libtoolkit.a
test_quickack_netns_SRCS :=

# the fuzz build links no libtoolkit.a: the lib/ sources it needs are listed
FUZZ_TARGETS += fuzz_quickack_journal fuzz_quickack_route
fuzz_quickack_journal_SRCS := $(QUICKACK_CORE) lib/log.c
fuzz_quickack_journal_LIBS := -lz
fuzz_quickack_route_SRCS := $(QUICKACK_CORE) lib/log.c
fuzz_quickack_route_LIBS := -lz
