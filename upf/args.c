// SPDX-License-Identifier: GPL-2.0-only
/*
 * upfbench's command lines: the named designs (--preset), counts with a
 * k/M/G suffix and lists of them, one option table per command with its
 * --help text, and what each command's options say together.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common.h"
#include "log.h"
#include "opt.h"

#include "args.h"
#include "floor.h"
#include "table_rte.h"


#define DEFAULT_BATCH 32
#define DEFAULT_SESSIONS 100000
#define DEFAULT_MBR_BPS 100000000
#define MIN_MBR_BPS 8000                /* a 1 kB/s token bucket */
#define MAX_MBR_BPS 400000000000ull     /* 400 Gbit/s, a whole UPF's ports */
#define MAX_PACKETS 100000000000ull     /* hours of a run at the best rates measured */
#define MAX_FLOOR_MIB 65536
#define DEFAULT_PACKETS_MIN 1000000     /* a run of fewer packets is over before it settles */
#define DEFAULT_LOOKUPS_MIN 4000000
#define PKT_SIZE_MIN 60                 /* the IMIX sizes' range */
#define PKT_SIZE_MAX 1400

const char *const up_cmd_names[] = { "run", "sweep", "lookup", "floor", "decode", "check-identity",
				     NULL };

static const char *const outer_names[] = { "ipv4", "ipv6", NULL };
static const char *const onoff_names[] = { "off", "on", NULL };

const struct up_preset up_presets[] = {
	{ "before", UP_GLOBAL, UP_LAYOUT_FAT, 1, false, false, UP_TABLE_OWN, true, true, "the incident's design" },
	{ "affinity", UP_STEERED, UP_LAYOUT_FAT, 1, false, false, UP_TABLE_OWN, true, true,
	  "+ flow affinity" },
	{ "batched", UP_STEERED, UP_LAYOUT_FAT, 8, true, false, UP_TABLE_OWN, true, true, "+ batch 8, prefetch" },
	{ "split", UP_STEERED, UP_LAYOUT_SPLIT, 8, true, false, UP_TABLE_OWN, true, true, "+ hot/cold split" },
	{ "best", UP_STEERED, UP_LAYOUT_SPLIT, 8, true, true, UP_TABLE_OWN, true, true, "+ huge pages" },
	{ "sharded", UP_SHARDED, UP_LAYOUT_SPLIT, 8, true, true, UP_TABLE_OWN, true, true, "best, a dispatcher" },
	{ "rte", UP_STEERED, UP_LAYOUT_SPLIT, 8, true, true, UP_TABLE_RTE, true, true, "best with rte_hash" },
	{ "before-rte", UP_GLOBAL, UP_LAYOUT_FAT, 1, false, false, UP_TABLE_RTE, true, false,
	  "before with rte_hash" },
	{ "inline", UP_STEERED, UP_LAYOUT_INLINE, 8, true, true, UP_TABLE_OWN, true, true,
	  "best, inline hot part" },
	{ "slot", UP_STEERED, UP_LAYOUT_SPLIT, 8, true, true, UP_TABLE_SLOT, true, true,
	  "best, TEID names slot" },
	{ "slot-unchecked", UP_STEERED, UP_LAYOUT_SPLIT, 8, true, true, UP_TABLE_SLOT, false, false,
	  "slot, TEID not checked" },
};
const unsigned int up_npresets = ARRAY_SIZE(up_presets);

/* the incident (16 workers at 3.0 GHz): what was reported before and after the fix */
const struct up_figures up_incident[UP_NINCIDENT] = {
	{ "before", 0.8, 6000, 3.0, 16 },
	{ "after", 4.2, 1100, 3.0, 16 },
};

void up_preset_apply(struct up_run_cfg *c, const struct up_preset *p)
{
	c->design = p->design;
	c->layout = p->layout;
	c->batch = p->batch;
	c->prefetch = p->prefetch;
	c->huge = p->huge;
	c->table = p->table;
	c->teid_check = p->teid_check;
}

void up_knob_set(struct up_run_cfg *c, enum up_knob k, uint64_t v)
{
	switch (k) {
	case UP_K_DESIGN: c->design = (enum up_design)v; break;
	case UP_K_TABLE: c->table = (enum up_table_kind)v; break;
	case UP_K_LAYOUT: c->layout = (enum up_layout)v; break;
	case UP_K_BATCH: c->batch = (unsigned int)v; break;
	case UP_K_PREFETCH: c->prefetch = v; break;
	case UP_K_HUGE: c->huge = v; break;
	case UP_K_TEID_CHECK: c->teid_check = v; break;
	default: break;
	}
}

void up_label(const struct up_run_cfg *c, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s/b%u%s/%s%s/%s", up_design_names[c->design], up_layout_names[c->layout],
		 c->batch, c->prefetch ? "p" : "", up_table_names[c->table],
		 c->table == UP_TABLE_SLOT && !c->teid_check ? "-unchecked" : "", c->huge ? "thp" : "4k");
}

uint64_t up_default_packets(uint32_t sessions)
{
	uint64_t p = 4ull * sessions;

	return p < DEFAULT_PACKETS_MIN ? DEFAULT_PACKETS_MIN : p;
}

uint64_t up_default_lookups(uint32_t sessions)
{
	uint64_t n = 4ull * sessions;

	return n < DEFAULT_LOOKUPS_MIN ? DEFAULT_LOOKUPS_MIN : n;
}

/* ---- values ---------------------------------------------------------------------- */

#define COUNT_SYNTAX "is not a count (an integer, optionally with k, M or G: 2.2M)"

/* an integer count, optionally with a k/M/G suffix: "10k", "2.2M" */
static int parse_count(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	double mult = 1, v;
	size_t n = s ? strlen(s) : 0;
	char num[64], *end;

	if (!n || n >= sizeof(num) || s[0] == '-' || s[0] == '+' || s[0] == ' ') {
		elog("%s: '%s' " COUNT_SYNTAX, opt, s ? s : "");
		return -1;
	}
	memcpy(num, s, n + 1);
	switch (num[n - 1]) {
	case 'k': case 'K': mult = 1e3; num[--n] = '\0'; break;
	case 'M': mult = 1e6; num[--n] = '\0'; break;
	case 'G': mult = 1e9; num[--n] = '\0'; break;
	}
	if (mult == 1) {
		if (strspn(s, "0123456789") != n) {
			elog("%s: '%s' " COUNT_SYNTAX, opt, s);
			return -1;
		}
		return cli_parse_u64(opt, s, min, max, out);
	}
	errno = 0;
	v = strtod(num, &end);
	if (!n || *end || errno || !isfinite(v) || !strchr("0123456789.", num[0])) {
		elog("%s: '%s' " COUNT_SYNTAX, opt, s);
		return -1;
	}
	v *= mult;
	if (fabs(v - nearbyint(v)) > 1e-6 * (v > 1 ? v : 1)) {
		elog("%s: '%s' is not a whole number", opt, s);
		return -1;
	}
	if (v < (double)min || v > (double)max) {
		elog("%s: %s is out of range %llu..%llu", opt, s, (unsigned long long)min,
		     (unsigned long long)max);
		return -1;
	}
	*out = (uint64_t)nearbyint(v);
	return 0;
}

/* split a comma-separated list in place; returns the count or -1 */
static int split_list(const char *opt, char *s, char **items, unsigned int max)
{
	unsigned int n = 0;
	char *save = NULL, *tok;

	if (!*s || s[strlen(s) - 1] == ',' || s[0] == ',' || strstr(s, ",,")) {
		elog("%s: '%s' is not a comma-separated list", opt, s);
		return -1;
	}
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == max) {
			elog("%s: more than %u values", opt, max);
			return -1;
		}
		items[n++] = tok;
	}
	return (int)n;
}

/* one value of an option that may take a list: into *out, or -1 after one line */
typedef int (*item_fn)(const char *opt, const char *item, const void *ctx, uint64_t *out);

static int item_choice(const char *opt, const char *item, const void *choices, uint64_t *out)
{
	int k;

	if (cli_parse_choice(opt, item, choices, &k))
		return -1;
	*out = (uint64_t)k;
	return 0;
}

static int item_batch(const char *opt, const char *item, const void *ctx, uint64_t *out)
{
	(void)ctx;
	return cli_parse_u64(opt, item, 1, UP_MAX_BATCH, out);
}

static int item_sessions(const char *opt, const char *item, const void *ctx, uint64_t *out)
{
	(void)ctx;
	return parse_count(opt, item, 1, UP_MAX_SESSIONS, out);
}

/* a preset's index in up_presets */
static int item_preset(const char *opt, const char *item, const void *ctx, uint64_t *out)
{
	char names[256] = "";

	(void)ctx;
	for (unsigned int i = 0; i < up_npresets; i++) {
		if (!strcmp(up_presets[i].name, item)) {
			*out = i;
			return 0;
		}
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? "|" : "",
			 up_presets[i].name);
	}
	elog("%s: '%s' is not one of %s", opt, item, names);
	return -1;
}

/* the option's value: a comma-separated list where the command takes one, else one value */
static int parse_values(const char *opt, const char *val, bool list, item_fn fn, const void *ctx,
			struct up_list *l)
{
	char *items[UP_MAX_LIST], *copy;
	int n, rc = 0;

	if (!list) {
		l->n = 1;
		return fn(opt, val, ctx, &l->v[0]);
	}
	copy = strdup(val);
	if (!copy) {
		elog("%s: out of memory", opt);
		return -1;
	}
	n = split_list(opt, copy, items, UP_MAX_LIST);
	for (int i = 0; i < n && !rc; i++)
		rc = fn(opt, items[i], ctx, &l->v[i]);
	free(copy);
	if (n < 0 || rc)
		return -1;
	l->n = (unsigned int)n;
	return 0;
}

/* ---- the options' callbacks ------------------------------------------------------------ */

static const struct {
	item_fn fn;
	const void *ctx;
} knob_values[UP_NKNOBS] = {
	[UP_K_DESIGN] = { item_choice, up_design_names },
	[UP_K_TABLE] = { item_choice, up_table_names },
	[UP_K_LAYOUT] = { item_choice, up_layout_names },
	[UP_K_BATCH] = { item_batch, NULL },
	[UP_K_PREFETCH] = { item_choice, onoff_names },
	[UP_K_HUGE] = { item_choice, onoff_names },
	[UP_K_TEID_CHECK] = { item_choice, onoff_names },
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
	} else if (parse_values(opt, val, takes_list(a, k), knob_values[k].fn, knob_values[k].ctx, l)) {
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

	if (item_preset(opt, val, NULL, &i))
		return -1;
	a->preset = up_presets[i].name;
	up_preset_apply(&a->run, &up_presets[i]);
	return 0;
}

static int set_presets(void *cfg, const char *opt, const char *val)
{
	struct up_args *a = cfg;

	return parse_values(opt, val, true, item_preset, NULL, &a->presets);
}

static int set_sessions(void *cfg, const char *opt, const char *val)
{
	struct up_args *a = cfg;

	if (parse_values(opt, val, a->cmd == UP_CMD_SWEEP, item_sessions, NULL, &a->sessions))
		return -1;
	a->gen.sessions = (uint32_t)a->sessions.v[0];
	a->sessions_set = true;
	return 0;
}

static int set_packets(void *cfg, const char *opt, const char *val)
{
	struct up_args *a = cfg;

	a->packets_set = true;
	return parse_count(opt, val, 1, MAX_PACKETS, &a->run.packets);
}

static int set_lookups(void *cfg, const char *opt, const char *val)
{
	return parse_count(opt, val, 1, MAX_PACKETS, &((struct up_args *)cfg)->lookups);
}

static int set_mbr(void *cfg, const char *opt, const char *val)
{
	return parse_count(opt, val, MIN_MBR_BPS, MAX_MBR_BPS, &((struct up_args *)cfg)->gen.mbr_bps);
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
		 "TEID to a worker's ring | steered: traffic pre-split by\n" \
		 "TEID, as NIC flow steering does (default steered)"
#define H_TABLE "own (this project's table) | rte_hash (DPDK; whether\n" \
		"it is built in is said below) | slot: no table, the\n"  \
		"TEID names the session's slot (default own)"
#define H_LAYOUT "fat: 256-byte sessions, a packet touches 4 cache lines\n" \
		 "| split: one hot 64-byte line, shared rules, cold data\n"   \
		 "apart | inline: the hot part in 32 bytes, in the table's\n" \
		 "bucket (own table only) (default split)"
#define H_TEID_CHECK "the slot table compares the packet's TEID with the\n" \
		     "one its slot gave out (a stale or forged TEID is no\n" \
		     "session's); off measures what that costs"
#define H_PREFETCH "prefetch each burst's table buckets, then its sessions"
#define H_HUGE "transparent huge pages (madvise) for sessions and\n" \
	       "table; what was obtained is reported"
#define H_WORKERS "worker threads, 1.." TK_STR(UP_MAX_WORKERS) ", pinned to the allowed CPUs in\n" \
		  "turn; sharded adds a dispatcher thread (default 1)"
#define H_FLOOR "buffer for the memory floor, MiB; 0 skips it (default:\n" \
		TK_STR(UP_FLOOR_L3_TIMES) " x the L3, within " TK_STR(UP_FLOOR_MIN_MIB) ".." \
		TK_STR(UP_FLOOR_MAX_MIB) " MiB)"
#define H_VERIFY "after the run, check each session's packet and byte\n" \
		 "counters against what was sent to it"

/* the traffic generator's options, the same in run and sweep */
#define OPT_E_GENERATOR                                                                     \
	OPT_E_CALL("packets", 0, "N", set_packets,                                          \
		   "packets per run; k, M, G suffixes (default 4 x\n"                        \
		   "sessions, at least 1M)"),                                                \
	OPT_E_CHOICE("dist", 0, "D", gen.dist, up_dist_names,                               \
		     "uniform | zipf over the sessions (default uniform)"),                  \
	OPT_E_DOUBLE("zipf-s", 0, "S", gen.zipf_s, 0.1, 3.0, "Zipf exponent, 0.1..3 (default 0.99)"), \
	OPT_E_CALL("pkt-size", 0, "S", set_pkt_size,                                        \
		   "inner IP packet bytes: imix (7:4:1 of 60/576/1400) or\n"                 \
		   TK_STR(PKT_SIZE_MIN) ".." TK_STR(PKT_SIZE_MAX) " (default imix)"),              \
	OPT_E_CALL("outer", 0, "V", set_outer, "ipv4 | ipv6 outer header (default ipv4)"),  \
	OPT_E_CALL("mbr-bps", 0, "N", set_mbr,                                              \
		   "each session's QER maximum bit rate, bit/s; k, M, G\n"                   \
		   "suffixes (default 100M)"),                                               \
	OPT_E_U64("seed", 0, "N", gen.seed, 0, UINT32_MAX, "random seed for TEIDs and the stream (default 1)"), \
	OPT_E_U32("bad-every", 0, "N", gen.bad_every, 0, UINT32_MAX,                        \
		  "every Nth packet is bad, in turn: a stale TEID (its\n"                   \
		  "slot's generation before), a TEID beyond the slots, a\n"                 \
		  "frame cut short, GTP-U version 2; dropped as no\n"                       \
		  "session's or malformed (default 0: none)")

static const struct opt run_options[] = {
	OPT_E_CALL("preset", 0, "NAME", set_preset,
		   "a named design (Presets, below), set where it is\n"
		   "given: later options override it"),
	OPT_E_CALL("design", 0, "D", set_design, H_DESIGN),
	OPT_E_CALL("table", 0, "T", set_table, H_TABLE),
	OPT_E_CALL("layout", 0, "L", set_layout, H_LAYOUT),
	OPT_E_CALL("batch", 0, "N", set_batch,
		   "packets per burst, 1.." TK_STR(UP_MAX_BATCH) " (default " TK_STR(DEFAULT_BATCH) ")"),
	OPT_E_CALL_OPTIONAL("prefetch", 0, "on|off", set_prefetch, H_PREFETCH "\n(default on)"),
	OPT_E_CALL("no-prefetch", 0, NULL, set_no_prefetch, "the same as --prefetch off"),
	OPT_E_CALL_OPTIONAL("hugepages", 0, "on|off", set_huge, H_HUGE " (default off)"),
	OPT_E_CALL("no-hugepages", 0, NULL, set_no_huge, "the same as --hugepages off"),
	OPT_E_CALL("teid-check", 0, "on|off", set_teid_check, H_TEID_CHECK " (default on)"),
	OPT_E_U32("workers", 0, "N", run.workers, 1, UP_MAX_WORKERS, H_WORKERS),
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

static const struct opt sweep_options[] = {
	OPT_E_CALL("presets", 0, "LIST", set_presets,
		   "the presets to run (default: those marked below,\n"
		   "without rte_hash's when it is not built in)"),
	OPT_E_CALL("preset", 0, "NAME", set_preset, "the design the lists below start from"),
	OPT_E_CALL("design", 0, "LIST", set_design, "designs: global, sharded, steered"),
	OPT_E_CALL("table", 0, "LIST", set_table, "tables: own, rte_hash, slot"),
	OPT_E_CALL("layout", 0, "LIST", set_layout, "session layouts: fat, split, inline"),
	OPT_E_CALL("batch", 0, "LIST", set_batch, "burst sizes, 1.." TK_STR(UP_MAX_BATCH)),
	OPT_E_CALL_OPTIONAL("prefetch", 0, "LIST", set_prefetch, H_PREFETCH ":\non, off (alone: on)"),
	OPT_E_CALL("no-prefetch", 0, NULL, set_no_prefetch, "the same as --prefetch off"),
	OPT_E_CALL_OPTIONAL("hugepages", 0, "LIST", set_huge, H_HUGE ":\non, off (alone: on)"),
	OPT_E_CALL("no-hugepages", 0, NULL, set_no_huge, "the same as --hugepages off"),
	OPT_E_CALL("teid-check", 0, "LIST", set_teid_check, H_TEID_CHECK ":\non, off"),
	OPT_E_U32("workers", 0, "N", run.workers, 1, UP_MAX_WORKERS, H_WORKERS),
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

static const struct opt lookup_options[] = {
	OPT_E_CALL("tables", 0, "LIST", set_table,
		   "the tables to compare: own, rte_hash (default both,\n"
		   "or own alone when rte_hash is not built in)"),
	OPT_E_CALL("batch", 0, "LIST", set_batch,
		   "burst sizes, 1.." TK_STR(UP_MAX_BATCH) " (default " TK_STR(DEFAULT_BATCH) "); 1 looks keys up one\n"
		   "at a time"),
	OPT_E_CALL("sessions", 0, "N", set_sessions,
		   "keys in the table, 1..4M; k and M suffixes (default\n100k)"),
	OPT_E_CALL("lookups", 0, "N", set_lookups,
		   "lookups per table and batch size; k, M, G suffixes\n"
		   "(default 4 x sessions, at least 4M)"),
	OPT_E_CALL_OPTIONAL("hugepages", 0, "on|off", set_huge,
			    "transparent huge pages (madvise) for the table\n(default off)"),
	OPT_E_CALL("no-hugepages", 0, NULL, set_no_huge, "the same as --hugepages off"),
	OPT_E_CHOICE("dist", 0, "D", gen.dist, up_dist_names, "uniform | zipf over the keys (default uniform)"),
	OPT_E_DOUBLE("zipf-s", 0, "S", gen.zipf_s, 0.1, 3.0, "Zipf exponent, 0.1..3 (default 0.99)"),
	OPT_E_U64("seed", 0, "N", gen.seed, 0, UINT32_MAX, "random seed for the keys and their order (default 1)"),
	OPT_E_FORMAT(fmt, fmt_set),
	OPT_E_OUTPUT(output, "write the records to FILE instead of stdout"),
	OPT_E_STANDARD,
	OPT_E_END,
};

static const struct opt floor_options[] = {
	OPT_E_U64("floor-mib", 0, "N", floor_mib, 1, MAX_FLOOR_MIB,
		  "the buffer, MiB (default: " TK_STR(UP_FLOOR_L3_TIMES) " x the L3, within\n"
		  TK_STR(UP_FLOOR_MIN_MIB) ".." TK_STR(UP_FLOOR_MAX_MIB) " MiB)"),
	OPT_E_FORMAT(fmt, fmt_set),
	OPT_E_OUTPUT(output, "write the record to FILE instead of stdout"),
	OPT_E_STANDARD,
	OPT_E_END,
};

static const struct opt decode_options[] = {
	OPT_E_STR("pcap-in", 0, "FILE", pcap_in, "the capture (Ethernet, Linux cooked or raw IP)"),
	OPT_E_FORMAT(fmt, fmt_set),
	OPT_E_OUTPUT(output, "write the records to FILE instead of stdout"),
	OPT_E_STANDARD,
	OPT_E_END,
};

static const struct opt identity_options[] = {
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

/* ---- --help's text -------------------------------------------------------------------- */

#define USAGE_LINES                                                        \
	"Usage: upfbench [run] [OPTIONS]\n"                                \
	"       upfbench sweep [OPTIONS]\n"                                \
	"       upfbench lookup [OPTIONS]\n"                               \
	"       upfbench floor [OPTIONS]\n"                                \
	"       upfbench decode --pcap-in FILE [OPTIONS]\n"                \
	"       upfbench check-identity [OPTIONS]\n"

#define ABOUT                                                                                 \
	"How many cycles per packet does a GTP-U user-plane path cost, and which design\n"    \
	"removes the cache misses? Each packet is parsed (Ethernet, IPv4/IPv6, UDP 2152,\n"   \
	"GTP-U with its extension headers and the PDU Session Container's QFI, the inner\n"   \
	"5-tuple), its session is looked up by TEID, its PDRs matched by QFI and inner\n"     \
	"5-tuple, the FAR (forward/drop), QER (token bucket at the maximum bit rate) and\n"   \
	"usage counters (packets, bytes) applied, and it is decapsulated.\n"                  \
	"Cycles are TSC cycles (rdtsc); the TSC rate is measured against CLOCK_MONOTONIC.\n"

static const char top_synopsis[] =
USAGE_LINES
"\n"
ABOUT
"\n"
"Commands:\n"
"  run             one run of one design (the default command)\n"
"  sweep           session counts x designs, one record per run (the input of\n"
"                  `bbrplot upf`, with -f csv; columns: upf/README.md)\n"
"  lookup          the session table alone: cycles per lookup, own vs rte_hash\n"
"  floor           the memory floor alone: cycles per random DRAM access\n"
"  decode          dissect every frame of a capture with the GTP-U codec\n"
"  check-identity  check Mpps x cycles/packet = workers x Hz; by default on the\n"
"                  incident's figures, which fail it\n"
"\n"
"upfbench COMMAND --help gives that command's options; those of run, the\n"
"default command, follow.\n"
"\n";

static const char run_synopsis[] =
"Usage: upfbench [run] [OPTIONS]\n"
"One run of one design over generated traffic, or over a capture's (--pcap-in):\n"
"Mpps, cycles per packet and their breakdown by stage, in one record.\n"
"\n"
ABOUT;

static const char sweep_synopsis[] =
"Usage: upfbench sweep [OPTIONS]\n"
"Session counts x designs, one run and one record each: the input of\n"
"`bbrplot upf` (with -f csv; columns: upf/README.md). The designs are the\n"
"presets (--presets), or the product of the lists given to --design, --table,\n"
"--layout, --batch, --prefetch and --hugepages, each knob not listed set as the\n"
"other options say. Each session count generates its traffic once, for every\n"
"design.\n";

static const char lookup_synopsis[] =
"Usage: upfbench lookup [OPTIONS]\n"
"The session table alone: the stream's TEIDs looked up in bursts, in cycles per\n"
"lookup, this project's table against DPDK's rte_hash on the same keys.\n";

static const char floor_synopsis[] =
"Usage: upfbench floor [OPTIONS]\n"
"The memory floor alone: cycles per random DRAM access with one access\n"
"outstanding (a pointer chase over a buffer far larger than the L3), and at\n"
"maximum memory-level parallelism (many chases interleaved).\n";

static const char decode_synopsis[] =
"Usage: upfbench decode --pcap-in FILE [OPTIONS]\n"
"Dissect every frame of a capture with the GTP-U codec: one record per frame,\n"
"with its status (ok, or why it is not a G-PDU or is malformed), the GTP-U\n"
"header, the extension header types, the QFI and the inner 5-tuple.\n";

static const char identity_synopsis[] =
"Usage: upfbench check-identity [OPTIONS]\n"
"Check that Mpps x cycles/packet = workers x Hz: figures that fail it cannot\n"
"both be true of threads that were busy the whole time.\n";

static const char run_output[] =
"\n"
"Each run reports Mpps, cycles per packet and its breakdown by stage (rx, parse,\n"
"lookup, rules, counters, decap; sampled on one burst in 64), the identity\n"
"Mpps x cycles/packet / (threads x TSC Hz) (1.0 when every thread was busy for\n"
"the whole run), LLC and dTLB misses per packet where perf_event_open has\n"
"hardware counters (n/a otherwise), and cycles per packet as a multiple of the\n"
"memory floor: cycles per random DRAM access at maximum memory-level\n"
"parallelism, measured in the same process (pointer chases over a buffer far\n"
"larger than the L3, one outstanding and many interleaved). Notes on these\n"
"follow a table, or go to stderr under CSV and JSON.\n";

/* the presets, as sweep labels its designs; swept: mark sweep's default ones */
static void presets_help(FILE *f, bool swept)
{
	fprintf(f, "\nPresets (design/layout/bBATCH, p: prefetch/table/pages), each one change from\n"
		   "the one before%s:\n", swept ? " (*: swept by default)" : "");
	for (unsigned int i = 0; i < up_npresets; i++) {
		struct up_run_cfg c = { 0 };
		char label[48];

		up_preset_apply(&c, &up_presets[i]);
		up_label(&c, label, sizeof(label));
		fprintf(f, "  %c %-14s %-37s %s\n", swept && up_presets[i].swept ? '*' : ' ',
			up_presets[i].name, label, up_presets[i].what);
	}
	fprintf(f, "Batch 8 measured best on the build machine: bigger bursts put more prefetches\n"
		   "in flight than the fill buffers hold; the incident used 32.\n");
}

/* whether this build has rte_hash */
static void tables_help(FILE *f)
{
	fprintf(f, "\nTables: own, and rte_hash (DPDK; %s).\n"
		   "A table that is not built in is refused as a missing feature.\n",
		upt_rte_missing() ? "not built in here" : "built in");
}

/* the memory floor's default buffer on this machine */
static void floor_here_help(FILE *f)
{
	fprintf(f, "The memory floor's default buffer here: %zu MiB.\n", up_floor_default_bytes() >> 20);
}

static void run_footer(FILE *f)
{
	presets_help(f, false);
	tables_help(f);
	floor_here_help(f);
	fputs(run_output, f);
}

static void floor_footer(FILE *f)
{
	fputc('\n', f);
	floor_here_help(f);
}

/* the incident's figures, checked in words */
static void identity_footer(FILE *f)
{
	fprintf(f, "\nGive --mpps, --cycles and --ghz together (and --workers). Without them it\n"
		   "checks the incident's figures, which fail it:\n");
	for (unsigned int i = 0; i < UP_NINCIDENT; i++) {
		const struct up_figures *x = &up_incident[i];

		fprintf(f, "  %s: %llu x %.1fe9 / %.0f = %.1f Mpps, not %.1f\n", x->label,
			(unsigned long long)x->workers, x->ghz, x->cycles,
			(double)x->workers * x->ghz * 1e3 / x->cycles, x->mpps);
	}
	fprintf(f, "The identity holds within %.0f%%.\n", UP_IDENTITY_TOLERANCE * 100);
}

static const int run_exits[] = { TK_EXIT_OK, TK_EXIT_FAIL, TK_EXIT_USAGE, TK_EXIT_NOTSUP,
				 TK_EXIT_DATA, TK_EXIT_COUNTERS, -1 };
static const int sweep_exits[] = { TK_EXIT_OK, TK_EXIT_FAIL, TK_EXIT_USAGE, TK_EXIT_NOTSUP,
				   TK_EXIT_COUNTERS, -1 };
static const int lookup_exits[] = { TK_EXIT_OK, TK_EXIT_FAIL, TK_EXIT_USAGE, TK_EXIT_NOTSUP, -1 };
static const int floor_exits[] = { TK_EXIT_OK, TK_EXIT_FAIL, TK_EXIT_USAGE, -1 };
static const int decode_exits[] = { TK_EXIT_OK, TK_EXIT_FAIL, TK_EXIT_USAGE, TK_EXIT_DATA, -1 };
static const int identity_exits[] = { TK_EXIT_OK, TK_EXIT_FAIL, TK_EXIT_USAGE, TK_EXIT_IDENTITY, -1 };
static const int all_exits[] = { TK_EXIT_OK, TK_EXIT_FAIL, TK_EXIT_USAGE, TK_EXIT_NOTSUP,
				 TK_EXIT_DATA, TK_EXIT_IDENTITY, TK_EXIT_COUNTERS, -1 };

/* upfbench without a command: run's options, under the whole tool's help */
static const struct opt_cli top_cli = { top_synopsis, run_options, NULL, run_footer, all_exits };

static void sweep_footer(FILE *f)
{
	presets_help(f, true);
	tables_help(f);
	floor_here_help(f);
}

static const struct opt_cli clis[UP_NCMDS] = {
	[UP_CMD_RUN] = { run_synopsis, run_options, NULL, run_footer, run_exits },
	[UP_CMD_SWEEP] = { sweep_synopsis, sweep_options, NULL, sweep_footer, sweep_exits },
	[UP_CMD_LOOKUP] = { lookup_synopsis, lookup_options, NULL, tables_help, lookup_exits },
	[UP_CMD_FLOOR] = { floor_synopsis, floor_options, NULL, floor_footer, floor_exits },
	[UP_CMD_DECODE] = { decode_synopsis, decode_options, NULL, NULL, decode_exits },
	[UP_CMD_IDENTITY] = { identity_synopsis, identity_options, NULL, identity_footer, identity_exits },
};

/* ---- what the options say together ---------------------------------------------------- */

void up_check_workers(const struct up_run_cfg *c)
{
	if (c->design == UP_SHARDED && c->workers + 1 > UP_MAX_WORKERS)
		cli_usage_die("--workers: sharded needs one more thread for its dispatcher (at most %u)",
			      UP_MAX_WORKERS - 1);
}

static void check_run(struct up_args *a)
{
	if (a->pcap_in && a->sessions_set)
		cli_usage_die("--sessions: not with --pcap-in (the capture's TEIDs are the sessions)");
	if (a->pcap_in && (a->gen.dist || a->gen.pkt_size || a->gen.outer_family == 6 || a->gen.bad_every))
		cli_usage_die("--pcap-in: the capture is the traffic; --dist, --pkt-size, --outer and --bad-every do not apply");
	if (a->pcap_in && a->run.table == UP_TABLE_SLOT)
		cli_usage_die("--table slot: a capture's TEIDs were not given out by this UPF (generated traffic only)");
	if (up_cfg_refused(&a->run))
		cli_usage_die("%s", up_cfg_refused(&a->run));
	up_check_workers(&a->run);
}

/* sweep's default presets: those marked swept that this build can run */
static void default_presets(struct up_args *a)
{
	for (unsigned int i = 0; i < up_npresets; i++) {
		if (!up_presets[i].swept)
			continue;
		if (up_presets[i].table == UP_TABLE_RTE && upt_rte_missing()) {
			wlog("sweep: leaving out '%s': %s", up_presets[i].name, upt_rte_missing());
			continue;
		}
		a->presets.v[a->presets.n++] = i;
	}
}

/* and the lists' defaults */
static void check_sweep(struct up_args *a)
{
	static const struct up_list default_sessions = { 3, { 10000, 100000, 1000000 } };
	bool knobs = false;

	for (int k = 0; k < UP_NKNOBS; k++)
		knobs |= a->knob[k].n > 0;
	if (knobs && a->presets.n)
		cli_usage_die("--presets: not with lists of --design/--table/--layout/--batch/--prefetch/--hugepages/--teid-check");
	if (!a->sessions.n)
		a->sessions = default_sessions;
	if (!knobs && !a->presets.n)
		default_presets(a);
	for (unsigned int i = 0; i < a->presets.n; i++) {
		struct up_run_cfg c = a->run;

		up_preset_apply(&c, &up_presets[a->presets.v[i]]);
		up_check_workers(&c);
	}
	up_check_workers(&a->run);
}

/* lookup's defaults: both tables (own alone without rte_hash), bursts of DEFAULT_BATCH */
static void check_lookup(struct up_args *a)
{
	struct up_list *tables = &a->knob[UP_K_TABLE], *batches = &a->knob[UP_K_BATCH];

	for (unsigned int i = 0; i < tables->n; i++)
		if (tables->v[i] == UP_TABLE_SLOT)
			cli_usage_die("--tables: slot is no table to look up (the TEID is the index)");

	if (!tables->n) {
		tables->v[tables->n++] = UP_TABLE_OWN;
		if (upt_rte_missing())
			wlog("lookup: leaving out rte_hash: %s", upt_rte_missing());
		else
			tables->v[tables->n++] = UP_TABLE_RTE;
	}
	if (!batches->n)
		batches->v[batches->n++] = DEFAULT_BATCH;
}

static void check_decode(struct up_args *a)
{
	if (!a->pcap_in)
		cli_usage_die("decode: --pcap-in FILE is required");
}

static void check_identity(struct up_args *a)
{
	bool any = a->id_mpps || a->id_cycles || a->id_ghz || a->id_workers;

	if (any && (!a->id_mpps || !a->id_cycles || !a->id_ghz))
		cli_usage_die("check-identity: give --mpps, --cycles and --ghz together (and --workers)");
}

static void check_nothing(struct up_args *a)
{
	(void)a;
}

static void (*const checks[UP_NCMDS])(struct up_args *a) = {
	[UP_CMD_RUN] = check_run,
	[UP_CMD_SWEEP] = check_sweep,
	[UP_CMD_LOOKUP] = check_lookup,
	[UP_CMD_FLOOR] = check_nothing,
	[UP_CMD_DECODE] = check_decode,
	[UP_CMD_IDENTITY] = check_identity,
};

static void args_defaults(struct up_args *a)
{
	memset(a, 0, sizeof(*a));
	a->cmd = UP_CMD_RUN;
	a->run = (struct up_run_cfg){ .design = UP_STEERED, .table = UP_TABLE_OWN,
				      .layout = UP_LAYOUT_SPLIT, .batch = DEFAULT_BATCH,
				      .prefetch = true, .huge = false, .workers = 1,
				      .teid_check = true };
	a->gen = (struct up_gen_opts){ .sessions = DEFAULT_SESSIONS, .dist = UP_DIST_UNIFORM,
				       .zipf_s = 0.99, .pkt_size = 0, .outer_family = 4,
				       .mbr_bps = DEFAULT_MBR_BPS, .seed = 1 };
	a->floor_mib = UP_FLOOR_DEFAULT;
}

void up_args_parse(struct up_args *a, int argc, char **argv)
{
	const struct opt_cli *cli = &top_cli;
	int first;

	args_defaults(a);
	if (argc > 1 && argv[1][0] != '-') {
		int k;

		if (cli_parse_choice("command", argv[1], up_cmd_names, &k))
			exit(TK_EXIT_USAGE);
		a->cmd = (enum up_cmd)k;
		cli = &clis[k];
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	first = opt_parse(cli, argc, argv, a);
	if (first < argc)
		cli_usage_die("unexpected argument '%s' (see --help)", argv[first]);
	checks[a->cmd](a);
}
