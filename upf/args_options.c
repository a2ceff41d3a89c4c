// SPDX-License-Identifier: GPL-2.0-only
/*
 * Each upfbench command's option table (lib/opt), and what each option's
 * value sets in the command's settings.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "common.h"
#include "log.h"
#include "opt.h"

#include "args.h"
#include "floor.h"
#include "args_cli.h"

#define MIN_MBR_BPS 8000                /* a 1 kB/s token bucket */
#define MAX_MBR_BPS 400000000000ull     /* 400 Gbit/s, a whole UPF's ports */
#define MAX_PACKETS 100000000000ull     /* hours of a run at the best rates measured */
#define MAX_FLOOR_MIB 65536
#define PKT_SIZE_MIN 60                 /* the IMIX sizes' range */
#define PKT_SIZE_MAX 1400

static const char *const outer_names[] = { "ipv4", "ipv6", NULL };
static const char *const onoff_names[] = { "off", "on", NULL };

/* ---- the options' callbacks ------------------------------------------------------------ */

static const struct {
	up_item_fn fn;
	const void *ctx;
} knob_values[UP_NKNOBS] = {
	[UP_K_DESIGN] = { up_item_choice, up_design_names },
	[UP_K_TABLE] = { up_item_choice, up_table_names },
	[UP_K_LAYOUT] = { up_item_choice, up_layout_names },
	[UP_K_BATCH] = { up_item_batch, NULL },
	[UP_K_PREFETCH] = { up_item_choice, onoff_names },
	[UP_K_HUGE] = { up_item_choice, onoff_names },
	[UP_K_TEID_CHECK] = { up_item_choice, onoff_names },
};

/* sweep takes a list of every knob; lookup a list of tables and of batch sizes */
static bool takes_list(const struct up_args *a, enum up_knob k)
{
	return a->cmd == UP_CMD_SWEEP ||
	       (a->cmd == UP_CMD_LOOKUP && (k == UP_K_TABLE || k == UP_K_BATCH));
}

/* a knob's value (or list); the first value also sets the run's configuration */
static int set_knob(struct up_args *a, enum up_knob k, const char *opt, const char *val)
{
	struct up_list *l = &a->knob[k];

	if (!val) { /* "--prefetch" alone: on */
		l->n = 1;
		l->v[0] = 1;
	} else if (up_parse_values(opt, val, takes_list(a, k), knob_values[k].fn, knob_values[k].ctx, l)) {
		return -1;
	}
	up_knob_set(&a->run, k, l->v[0]);
	return 0;
}

static int set_design(void *a, const char *opt, const char *val)
{
	return set_knob(a, UP_K_DESIGN, opt, val);
}

static int set_table(void *a, const char *opt, const char *val)
{
	return set_knob(a, UP_K_TABLE, opt, val);
}

static int set_layout(void *a, const char *opt, const char *val)
{
	return set_knob(a, UP_K_LAYOUT, opt, val);
}

static int set_batch(void *a, const char *opt, const char *val)
{
	return set_knob(a, UP_K_BATCH, opt, val);
}

static int set_prefetch(void *a, const char *opt, const char *val)
{
	return set_knob(a, UP_K_PREFETCH, opt, val);
}

static int set_huge(void *a, const char *opt, const char *val)
{
	return set_knob(a, UP_K_HUGE, opt, val);
}

static int set_teid_check(void *a, const char *opt, const char *val)
{
	return set_knob(a, UP_K_TEID_CHECK, opt, val);
}

static int set_no_prefetch(void *a, const char *opt, const char *val)
{
	(void)val;
	return set_knob(a, UP_K_PREFETCH, opt, onoff_names[false]);
}

static int set_no_huge(void *a, const char *opt, const char *val)
{
	(void)val;
	return set_knob(a, UP_K_HUGE, opt, onoff_names[false]);
}

static int set_preset(void *cfg, const char *opt, const char *val)
{
	struct up_args *a = cfg;
	uint64_t i;

	if (up_item_preset(opt, val, NULL, &i))
		return -1;
	a->preset = up_presets[i].name;
	up_preset_apply(&a->run, &up_presets[i]);
	return 0;
}

static int set_presets(void *cfg, const char *opt, const char *val)
{
	struct up_args *a = cfg;

	return up_parse_values(opt, val, true, up_item_preset, NULL, &a->presets);
}

static int set_sessions(void *cfg, const char *opt, const char *val)
{
	struct up_args *a = cfg;

	if (up_parse_values(opt, val, a->cmd == UP_CMD_SWEEP, up_item_sessions, NULL, &a->sessions))
		return -1;
	a->gen.sessions = (uint32_t)a->sessions.v[0];
	a->sessions_set = true;
	return 0;
}

static int set_packets(void *cfg, const char *opt, const char *val)
{
	struct up_args *a = cfg;

	a->packets_set = true;
	return up_parse_count(opt, val, 1, MAX_PACKETS, &a->run.packets);
}

static int set_lookups(void *cfg, const char *opt, const char *val)
{
	return up_parse_count(opt, val, 1, MAX_PACKETS, &((struct up_args *)cfg)->lookups);
}

static int set_mbr(void *cfg, const char *opt, const char *val)
{
	return up_parse_count(opt, val, MIN_MBR_BPS, MAX_MBR_BPS, &((struct up_args *)cfg)->gen.mbr_bps);
}

static int set_pkt_size(void *cfg, const char *opt, const char *val)
{
	struct up_args *a = cfg;

	if (!strcmp(val, "imix")) {
		a->gen.pkt_size = 0;
		return 0;
	}
	if (!strchr("0123456789", val[0]) || !val[0]) {
		elog("%s: '%s' is neither imix nor a size in bytes", opt, val);
		return -1;
	}
	return cli_parse_u32(opt, val, PKT_SIZE_MIN, PKT_SIZE_MAX, &a->gen.pkt_size);
}

static int set_outer(void *cfg, const char *opt, const char *val)
{
	struct up_args *a = cfg;
	int v;

	if (cli_parse_choice(opt, val, outer_names, &v))
		return -1;
	a->gen.outer_family = v ? 6 : 4;
	return 0;
}

/* ---- the tables ------------------------------------------------------------------------ */

#define TK_OPT_CFG struct up_args

#define H_DESIGN "global: one shared table, atomic counters, any worker\n" \
		 "sees any session | sharded: a dispatcher hashes the\n"   \
		 "TEID to a worker's ring | steered: traffic pre-split\n"  \
		 "by TEID, as NIC flow steering does (default steered)"
#define H_TABLE "own (this project's table) | rte_hash (DPDK; whether\n" \
		"it is built in is said below) | slot: no table, the\n"  \
		"TEID names the session's slot (default own)"
#define H_LAYOUT "fat: 256-byte sessions, a packet touches 4 cache lines\n" \
		 "| split: one hot 64-byte line, shared rules, cold data\n"   \
		 "apart | inline: the hot part in 32 bytes, in the\n"         \
		 "table's bucket (own table only) (default split)"
#define H_TEID_CHECK "the slot table compares the packet's TEID with the\n" \
		     "one its slot gave out (a stale or forged TEID is no\n" \
		     "session's); off measures what that costs"
#define H_PREFETCH "prefetch each burst's table buckets, then its\nsessions"
#define H_HUGE "transparent huge pages (madvise) for sessions and\n" \
	       "table; what was obtained is reported"
#define H_WORKERS "worker threads, 1.." TK_STR(UP_MAX_WORKERS) ", pinned to the allowed CPUs in\n" \
		  "turn; sharded adds a dispatcher thread"
#define H_FLOOR "buffer for the memory floor, MiB; 0 skips it (default:\n" \
		TK_STR(UP_FLOOR_L3_TIMES) " x the L3, within " TK_STR(UP_FLOOR_MIN_MIB) ".." \
		TK_STR(UP_FLOOR_MAX_MIB) " MiB)"
#define H_VERIFY "after the run, check each session's packet and byte\n" \
		 "counters against what was sent to it"

/* the key stream's options, the same in run, sweep and lookup */
#define OPT_E_DIST(what) \
	OPT_E_CHOICE_D("dist", 0, "D", gen.dist, up_dist_names, "uniform", "uniform | zipf over the " what)
#define OPT_E_ZIPF_S OPT_E_DOUBLE_D("zipf-s", 0, "S", gen.zipf_s, 0.1, 3.0, "0.99", "Zipf exponent, 0.1..3")
#define OPT_E_SEED(what) OPT_E_U64_D("seed", 0, "N", gen.seed, 0, UINT32_MAX, "1", "random seed for the " what)

/* the traffic generator's options, the same in run and sweep */
#define OPT_E_GENERATOR                                                                     \
	OPT_E_CALL("packets", 0, "N", set_packets,                                          \
		   "packets per run; k, M, G suffixes (default 4 x\n"                        \
		   "sessions, at least 1M)"),                                                \
	OPT_E_DIST("sessions"),                                                             \
	OPT_E_ZIPF_S,                                                                       \
	OPT_E_CALL_D("pkt-size", 0, "S", set_pkt_size, "imix",                              \
		     "inner IP packet bytes: imix (7:4:1 of 60/576/1400) or\n"               \
		     TK_STR(PKT_SIZE_MIN) ".." TK_STR(PKT_SIZE_MAX)),                          \
	OPT_E_CALL_D("outer", 0, "V", set_outer, "ipv4", "ipv4 | ipv6 outer header"),       \
	OPT_E_CALL_D("mbr-bps", 0, "N", set_mbr, "100M",                                    \
		     "each session's QER maximum bit rate, bit/s; k, M, G\n"                 \
		     "suffixes"),                                                            \
	OPT_E_SEED("TEIDs and the stream"),                                                 \
	OPT_E_U32_D("bad-every", 0, "N", gen.bad_every, 0, UINT32_MAX, "0",                 \
		    "every Nth packet is bad, in turn: a stale TEID (its\n"                 \
		    "slot's generation before), a TEID beyond the slots, a\n"               \
		    "frame cut short, GTP-U version 2; dropped as no\n"                     \
		    "session's or malformed; 0: none")

const struct opt up_run_options[] = {
	OPT_E_CALL("preset", 0, "NAME", set_preset,
		   "a named design (Presets, below), set where it is\n"
		   "given: later options override it"),
	OPT_E_CALL("design", 0, "D", set_design, H_DESIGN),
	OPT_E_CALL("table", 0, "T", set_table, H_TABLE),
	OPT_E_CALL("layout", 0, "L", set_layout, H_LAYOUT),
	OPT_E_CALL("batch", 0, "N", set_batch,
		   "packets per burst, 1.." TK_STR(UP_MAX_BATCH) " (default " TK_STR(DEFAULT_BATCH) ")"),
	OPT_E_CALL_OPTIONAL("prefetch", 0, "on|off", set_prefetch, H_PREFETCH " (default on)"),
	OPT_E_CALL("no-prefetch", 0, NULL, set_no_prefetch, "the same as --prefetch off"),
	OPT_E_CALL_OPTIONAL("hugepages", 0, "on|off", set_huge, H_HUGE " (default off)"),
	OPT_E_CALL("no-hugepages", 0, NULL, set_no_huge, "the same as --hugepages off"),
	OPT_E_CALL("teid-check", 0, "on|off", set_teid_check, H_TEID_CHECK " (default on)"),
	OPT_E_U32_D("workers", 0, "N", run.workers, 1, UP_MAX_WORKERS, "1", H_WORKERS),
	OPT_E_CALL("sessions", 0, "N", set_sessions,
		   "sessions, 1..4M; k and M suffixes (10k, 2.2M). The\n"
		   "studied range is 10k to 4M (default 100k)"),
	OPT_E_GENERATOR,
	OPT_E_STR("pcap-in", 0, "FILE", pcap_in,
		  "replay a capture (Ethernet, Linux cooked or raw IP)\n"
		  "instead: one session per TEID seen, rules that\n"
		  "forward everything; one pass unless --packets"),
	OPT_E_STR("pcap-out", 0, "FILE", pcap_out, "write the run's traffic, in generation order, as pcap"),
	OPT_E_FLAG("verify", 0, run.verify, H_VERIFY),
	OPT_E_STR("counters-out", 0, "FILE", counters_out,
		  "write every session's counters (packets, bytes,\n"
		  "dropped packets) as CSV"),
	OPT_E_U64("floor-mib", 0, "N", floor_mib, 0, MAX_FLOOR_MIB, H_FLOOR),
	OPT_E_FORMAT(fmt, fmt_set),
	OPT_E_OUTPUT(output, "write the record to FILE instead of stdout"),
	OPT_E_STANDARD,
	OPT_E_END,
};

const struct opt up_sweep_options[] = {
	OPT_E_CALL("presets", 0, "LIST", set_presets,
		   "the presets to run (default: those marked below,\n"
		   "without rte_hash's when it is not built in)"),
	OPT_E_CALL("preset", 0, "NAME", set_preset, "the design the lists below start from"),
	OPT_E_CALL("design", 0, "LIST", set_design, "designs: global, sharded, steered"),
	OPT_E_CALL("table", 0, "LIST", set_table, "tables: own, rte_hash, slot"),
	OPT_E_CALL("layout", 0, "LIST", set_layout, "session layouts: fat, split, inline"),
	OPT_E_CALL("batch", 0, "LIST", set_batch, "burst sizes, 1.." TK_STR(UP_MAX_BATCH)),
	OPT_E_CALL_OPTIONAL("prefetch", 0, "LIST", set_prefetch, H_PREFETCH ": on, off (alone: on)"),
	OPT_E_CALL("no-prefetch", 0, NULL, set_no_prefetch, "the same as --prefetch off"),
	OPT_E_CALL_OPTIONAL("hugepages", 0, "LIST", set_huge, H_HUGE ": on, off\n(alone: on)"),
	OPT_E_CALL("no-hugepages", 0, NULL, set_no_huge, "the same as --hugepages off"),
	OPT_E_CALL("teid-check", 0, "LIST", set_teid_check, H_TEID_CHECK ": on, off"),
	OPT_E_U32_D("workers", 0, "N", run.workers, 1, UP_MAX_WORKERS, "1", H_WORKERS),
	OPT_E_CALL("sessions", 0, "LIST", set_sessions,
		   "session counts, 1..4M each; k and M suffixes\n"
		   "(default 10k,100k,1M)"),
	OPT_E_GENERATOR,
	OPT_E_FLAG("verify", 0, run.verify, H_VERIFY),
	OPT_E_U64("floor-mib", 0, "N", floor_mib, 0, MAX_FLOOR_MIB, H_FLOOR),
	OPT_E_FORMAT(fmt, fmt_set),
	OPT_E_OUTPUT(output, "write the records to FILE instead of stdout"),
	OPT_E_STANDARD,
	OPT_E_END,
};

const struct opt up_lookup_options[] = {
	OPT_E_CALL("tables", 0, "LIST", set_table,
		   "the tables to compare: own, rte_hash (default both,\n"
		   "or own alone when rte_hash is not built in)"),
	OPT_E_CALL("batch", 0, "LIST", set_batch,
		   "burst sizes, 1.." TK_STR(UP_MAX_BATCH) " (default " TK_STR(DEFAULT_BATCH) "); 1 looks keys up one\n"
		   "at a time"),
	OPT_E_CALL("sessions", 0, "N", set_sessions,
		   "keys in the table, 1..4M; k and M suffixes\n(default 100k)"),
	OPT_E_CALL("lookups", 0, "N", set_lookups,
		   "lookups per table and batch size; k, M, G suffixes\n"
		   "(default 4 x sessions, at least 4M)"),
	OPT_E_CALL_OPTIONAL("hugepages", 0, "on|off", set_huge,
			    "transparent huge pages (madvise) for the table\n(default off)"),
	OPT_E_CALL("no-hugepages", 0, NULL, set_no_huge, "the same as --hugepages off"),
	OPT_E_DIST("keys"),
	OPT_E_ZIPF_S,
	OPT_E_SEED("keys and their order"),
	OPT_E_FORMAT(fmt, fmt_set),
	OPT_E_OUTPUT(output, "write the records to FILE instead of stdout"),
	OPT_E_STANDARD,
	OPT_E_END,
};

const struct opt up_floor_options[] = {
	OPT_E_U64("floor-mib", 0, "N", floor_mib, 1, MAX_FLOOR_MIB,
		  "the buffer, MiB (default: " TK_STR(UP_FLOOR_L3_TIMES) " x the L3, within\n"
		  TK_STR(UP_FLOOR_MIN_MIB) ".." TK_STR(UP_FLOOR_MAX_MIB) " MiB)"),
	OPT_E_FORMAT(fmt, fmt_set),
	OPT_E_OUTPUT(output, "write the record to FILE instead of stdout"),
	OPT_E_STANDARD,
	OPT_E_END,
};

const struct opt up_decode_options[] = {
	OPT_E_STR("pcap-in", 0, "FILE", pcap_in, "the capture (Ethernet, Linux cooked or raw IP)"),
	OPT_E_FORMAT(fmt, fmt_set),
	OPT_E_OUTPUT(output, "write the records to FILE instead of stdout"),
	OPT_E_STANDARD,
	OPT_E_END,
};

const struct opt up_identity_options[] = {
	OPT_E_DOUBLE("mpps", 0, "X", id_mpps, 1e-6, 1e6, "the packet rate reported, Mpps"),
	OPT_E_DOUBLE("cycles", 0, "C", id_cycles, 1e-3, 1e9, "the cycles per packet reported"),
	OPT_E_U64("workers", 0, "N", id_workers, 1, UP_MAX_WORKERS, "the threads that moved them (default 1)"),
	OPT_E_DOUBLE("ghz", 0, "F", id_ghz, 1e-3, 100, "their clock, GHz"),
	OPT_E_FORMAT(fmt, fmt_set),
	OPT_E_OUTPUT(output, "write the records to FILE instead of stdout"),
	OPT_E_STANDARD,
	OPT_E_END,
};
#undef TK_OPT_CFG
