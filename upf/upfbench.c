// SPDX-License-Identifier: GPL-2.0-only
/*
 * upfbench: how many cycles per packet does a GTP-U user-plane path cost,
 * and which design removes the cache misses?
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"
#include "common.h"
#include "log.h"
#include "record.h"

#include "floor.h"
#include "gtpu.h"
#include "hw.h"
#include "path.h"
#include "table_rte.h"
#include "traffic.h"

enum {
	EXIT_IDENTITY = 10,     /* check-identity: the figures fail the identity */
	EXIT_COUNTERS = 11,     /* --verify: a session's counters differ from what was sent */
};

#define MAX_SESSIONS 4000000u
#define IDENTITY_TOLERANCE 0.10

static void usage(void)
{
	printf(
"Usage: upfbench [run] [OPTIONS]\n"
"       upfbench sweep [OPTIONS]\n"
"       upfbench lookup [OPTIONS]\n"
"       upfbench floor [--floor-mib N] [--format F]\n"
"       upfbench decode --pcap-in FILE [--format F]\n"
"       upfbench check-identity [--mpps X --cycles C --workers N --ghz F]\n"
"\n"
"How many cycles per packet does a GTP-U user-plane path cost, and which design\n"
"removes the cache misses? Each packet is parsed (Ethernet, IPv4/IPv6, UDP 2152,\n"
"GTP-U with its extension headers and the PDU Session Container's QFI, the inner\n"
"5-tuple), its session is looked up by TEID, its PDRs matched by QFI and inner\n"
"5-tuple, the FAR (forward/drop), QER (token bucket at the maximum bit rate) and\n"
"usage counters (packets, bytes) applied, and it is decapsulated.\n"
"Cycles are TSC cycles (rdtsc); the TSC rate is measured against CLOCK_MONOTONIC.\n"
"\n"
"Commands:\n"
"  run             one run of one design (the default command)\n"
"  sweep           session counts x designs, one record per run; CSV by default,\n"
"                  the input of `bbrplot upf` (columns: upf/README.md)\n"
"  lookup          the session table alone: cycles per lookup, own vs rte_hash\n"
"  floor           the memory floor alone (see --floor-mib)\n"
"  decode          dissect every frame of a capture with the GTP-U codec\n"
"  check-identity  check Mpps x cycles/packet = workers x Hz. Without options it\n"
"                  checks the incident's figures (16 workers at 3.0 GHz: 0.8 Mpps\n"
"                  at 6000 cycles/packet, 4.2 Mpps at 1100), which fail it:\n"
"                  16 x 3.0e9 / 6000 = 8.0 Mpps, not 0.8; 16 x 3.0e9 / 1100 = 43.6\n"
"                  Mpps, not 4.2\n"
"\n"
"Design (run; comma-separated lists for sweep):\n"
"  --preset NAME     a named design, set first (later options override):\n"
"                      before    global, fat, batch 1, no prefetch: the incident\n"
"                      affinity  steered, fat, batch 1, no prefetch\n"
"                      batched   steered, fat, batch 8, prefetch\n"
"                      split     steered, split, batch 8, prefetch\n"
"                      best      steered, split, batch 8, prefetch, huge pages\n"
"                      sharded   best, with a dispatcher thread\n"
"                      rte       best, with DPDK's rte_hash as the table\n"
"                    (batch 8 measured best on the build machine: bigger bursts\n"
"                    put more prefetches in flight than the fill buffers hold;\n"
"                    the incident used 32)\n"
"                      before-rte  before, with rte_hash (the incident's table)\n"
"  --design D        global: one shared table, atomic counters, any worker sees\n"
"                    any session | sharded: a dispatcher hashes the TEID to a\n"
"                    worker's ring | steered: traffic pre-split by TEID, as NIC\n"
"                    flow steering does (default steered)\n"
"  --table T         own (this project's table) | rte_hash (DPDK; %s)\n"
"                    (default own)\n"
"  --layout L        fat: 256-byte sessions, a packet touches 4 cache lines |\n"
"                    split: one hot 64-byte line, shared rules, cold data apart\n"
"                    (default split)\n"
"  --batch N         packets per burst, 1..64 (default 32)\n"
"  --prefetch [on|off], --no-prefetch\n"
"                    prefetch each burst's table buckets, then its sessions\n"
"                    (default on)\n"
"  --hugepages [on|off], --no-hugepages\n"
"                    transparent huge pages (madvise) for sessions and table;\n"
"                    what was obtained is reported (default off)\n"
"  --workers N       worker threads, 1..64, pinned to the allowed CPUs in turn;\n"
"                    sharded adds a dispatcher thread (default 1)\n"
"\n"
"Traffic:\n"
"  --sessions N      sessions, 1..4M; k and M suffixes (10k, 2.2M). The studied\n"
"                    range is 10k to 4M (default 100k)\n"
"  --packets N       packets per run; k, M, G suffixes (default 4 x sessions,\n"
"                    at least 1M)\n"
"  --dist D          uniform | zipf over the sessions (default uniform)\n"
"  --zipf-s S        Zipf exponent, 0.1..3 (default 0.99)\n"
"  --pkt-size S      inner IP packet bytes: imix (7:4:1 of 60/576/1400) or\n"
"                    60..1400 (default imix)\n"
"  --outer V         ipv4 | ipv6 outer header (default ipv4)\n"
"  --mbr-bps N       each session's QER maximum bit rate, bit/s; k, M, G\n"
"                    suffixes (default 100M)\n"
"  --seed N          random seed for TEIDs and the stream (default 1)\n"
"  --pcap-in FILE    replay a capture (Ethernet, Linux cooked or raw IP) instead:\n"
"                    one session per TEID seen, rules that forward everything\n"
"  --pcap-out FILE   write the run's traffic, in generation order, as pcap\n"
"\n"
"Checks and output:\n"
"  --verify          after the run, check each session's packet and byte\n"
"                    counters against what was sent to it (exit 11 if not exact)\n"
"  --counters-out F  write every session's counters as CSV: teid,pkts,bytes,drop_pkts\n"
"  --floor-mib N     buffer for the memory floor, MiB; 0 skips it (default: 8 x\n"
"                    the L3, within 1024..4096 MiB: %zu here)\n"
"  --lookups N       lookup: lookups per table (default 4 x sessions, >= 4M)\n"
"  --tables LIST     lookup: tables to compare (default own,rte_hash); lookup\n"
"                    also takes a list of --batch sizes (default 32)\n"
"  --out FILE        sweep: write the records to FILE instead of stdout\n"
"  --format F        table | csv | json (default: table on a terminal, JSON\n"
"                    lines otherwise; CSV for sweep)\n"
"  -q, --quiet       no notes (identity, floor, counters) on stderr\n"
"  -v, --verbose     progress details\n"
"  -h, --help        this text\n"
"  -V, --version     the version\n"
"\n"
"Each run reports Mpps, cycles per packet and its breakdown by stage (rx, parse,\n"
"lookup, rules, counters, decap; sampled on one burst in 64), the identity\n"
"Mpps x cycles/packet / (threads x TSC Hz) (1.0 when every thread was busy for\n"
"the whole run), LLC and dTLB misses per packet where perf_event_open has\n"
"hardware counters (n/a otherwise), and cycles per packet as a multiple of the\n"
"memory floor: cycles per random DRAM access at maximum memory-level\n"
"parallelism, measured in the same process (pointer chases over a buffer far\n"
"larger than the L3, one outstanding and many interleaved).\n"
"\n"
"Exit status: 0 ok; 1 runtime failure; 2 bad arguments; 4 rte_hash asked but\n"
"not built in; 5 unreadable --pcap-in; 10 check-identity: the figures fail the\n"
"identity; 11 --verify: counters are not exact.\n",
	       upt_rte_missing() ? "not built in here" : "built in", up_floor_default_bytes() >> 20);
}

/* ---- options ------------------------------------------------------------------------ */

#define MAX_LIST 16

struct opts {
	const char *cmd;
	struct up_run_cfg run;
	struct up_gen_opts gen;
	const char *preset;
	const char *pcap_in, *pcap_out, *counters_out, *out_path;
	int floor_mib;          /* -1: default */
	uint64_t lookups;
	bool packets_set, verbose_set;
	enum rec_format fmt;
	bool fmt_set;
	/* sweep lists */
	unsigned int n_sessions;
	uint64_t sessions[MAX_LIST];
	unsigned int n_presets;
	const char *presets[MAX_LIST];
	unsigned int n_design, n_table, n_layout, n_batch, n_prefetch, n_huge;
	int design[MAX_LIST], table[MAX_LIST], layout[MAX_LIST], prefetch[MAX_LIST], huge[MAX_LIST];
	unsigned int batch[MAX_LIST];
	/* check-identity */
	double id_mpps, id_cycles, id_ghz;
	uint64_t id_workers;
	bool id_set;
	char list_buf[4096];
};

struct preset {
	const char *name;
	enum up_design design;
	enum up_layout layout;
	unsigned int batch;
	bool prefetch, huge;
	enum up_table_kind table;
	const char *what;
};

static const struct preset presets[] = {
	{ "before", UP_GLOBAL, UP_LAYOUT_FAT, 1, false, false, UP_TABLE_OWN, "the incident's design" },
	{ "affinity", UP_STEERED, UP_LAYOUT_FAT, 1, false, false, UP_TABLE_OWN, "flow affinity, owned sessions" },
	{ "batched", UP_STEERED, UP_LAYOUT_FAT, 8, true, false, UP_TABLE_OWN, "+ batch 8 and prefetch" },
	{ "split", UP_STEERED, UP_LAYOUT_SPLIT, 8, true, false, UP_TABLE_OWN, "+ hot/cold split" },
	{ "best", UP_STEERED, UP_LAYOUT_SPLIT, 8, true, true, UP_TABLE_OWN, "+ huge pages" },
	{ "sharded", UP_SHARDED, UP_LAYOUT_SPLIT, 8, true, true, UP_TABLE_OWN, "best with a dispatcher" },
	{ "rte", UP_STEERED, UP_LAYOUT_SPLIT, 8, true, true, UP_TABLE_RTE, "best with rte_hash" },
	{ "before-rte", UP_GLOBAL, UP_LAYOUT_FAT, 1, false, false, UP_TABLE_RTE, "before with rte_hash" },
};

static const struct preset *find_preset(const char *name)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(presets); i++)
		if (!strcmp(presets[i].name, name))
			return &presets[i];
	return NULL;
}

static void apply_preset(struct up_run_cfg *c, const struct preset *p)
{
	c->design = p->design;
	c->layout = p->layout;
	c->batch = p->batch;
	c->prefetch = p->prefetch;
	c->huge = p->huge;
	c->table = p->table;
}

/* an integer count, optionally with a k/M/G suffix: "10k", "2.2M" */
static int parse_count(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	double mult = 1, v;
	size_t n = s ? strlen(s) : 0;
	char num[64], *end;

	if (!n || n >= sizeof(num) || s[0] == '-' || s[0] == '+' || s[0] == ' ') {
		elog("%s: '%s' is not a count (an integer, optionally with k, M or G: 2.2M)", opt,
		     s ? s : "");
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
			elog("%s: '%s' is not a count (an integer, optionally with k, M or G: 2.2M)", opt, s);
			return -1;
		}
		return cli_parse_u64(opt, s, min, max, out);
	}
	errno = 0;
	v = strtod(num, &end);
	if (!n || *end || errno || !isfinite(v) || !strchr("0123456789.", num[0])) {
		elog("%s: '%s' is not a count (an integer, optionally with k, M or G: 2.2M)", opt, s);
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

static const char *const dist_names[] = { "uniform", "zipf", NULL };
static const char *const outer_names[] = { "ipv4", "ipv6", NULL };
static const char *const onoff_names[] = { "off", "on", NULL };

enum {
	O_PRESET = 256, O_DESIGN, O_TABLE, O_LAYOUT, O_BATCH, O_PREFETCH, O_NO_PREFETCH, O_HUGE,
	O_NO_HUGE, O_WORKERS, O_SESSIONS, O_PACKETS, O_DIST, O_ZIPF_S, O_PKT_SIZE, O_OUTER, O_MBR,
	O_SEED, O_PCAP_IN, O_PCAP_OUT, O_VERIFY, O_COUNTERS_OUT, O_FLOOR_MIB, O_LOOKUPS, O_TABLES,
	O_OUT, O_FORMAT, O_MPPS, O_CYCLES, O_GHZ, O_PRESETS,
};

static const struct option long_opts[] = {
	{ "preset", required_argument, NULL, O_PRESET },
	{ "presets", required_argument, NULL, O_PRESETS },
	{ "design", required_argument, NULL, O_DESIGN },
	{ "table", required_argument, NULL, O_TABLE },
	{ "tables", required_argument, NULL, O_TABLES },
	{ "layout", required_argument, NULL, O_LAYOUT },
	{ "batch", required_argument, NULL, O_BATCH },
	{ "prefetch", optional_argument, NULL, O_PREFETCH },
	{ "no-prefetch", no_argument, NULL, O_NO_PREFETCH },
	{ "hugepages", optional_argument, NULL, O_HUGE },
	{ "no-hugepages", no_argument, NULL, O_NO_HUGE },
	{ "workers", required_argument, NULL, O_WORKERS },
	{ "sessions", required_argument, NULL, O_SESSIONS },
	{ "packets", required_argument, NULL, O_PACKETS },
	{ "dist", required_argument, NULL, O_DIST },
	{ "zipf-s", required_argument, NULL, O_ZIPF_S },
	{ "pkt-size", required_argument, NULL, O_PKT_SIZE },
	{ "outer", required_argument, NULL, O_OUTER },
	{ "mbr-bps", required_argument, NULL, O_MBR },
	{ "seed", required_argument, NULL, O_SEED },
	{ "pcap-in", required_argument, NULL, O_PCAP_IN },
	{ "pcap-out", required_argument, NULL, O_PCAP_OUT },
	{ "verify", no_argument, NULL, O_VERIFY },
	{ "counters-out", required_argument, NULL, O_COUNTERS_OUT },
	{ "floor-mib", required_argument, NULL, O_FLOOR_MIB },
	{ "lookups", required_argument, NULL, O_LOOKUPS },
	{ "out", required_argument, NULL, O_OUT },
	{ "format", required_argument, NULL, O_FORMAT },
	{ "mpps", required_argument, NULL, O_MPPS },
	{ "cycles", required_argument, NULL, O_CYCLES },
	{ "ghz", required_argument, NULL, O_GHZ },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static bool is_sweep(const struct opts *o) { return !strcmp(o->cmd, "sweep"); }

/* a choice, or a list of choices for sweep */
static int parse_choices(struct opts *o, const char *opt, const char *arg,
			 const char *const *choices, int *vals, unsigned int *n)
{
	char *items[MAX_LIST], *copy;
	int k;

	if (!is_sweep(o)) {
		*n = 1;
		return cli_parse_choice(opt, arg, choices, &vals[0]);
	}
	copy = strdup(arg);
	if (!copy)
		return -1;
	k = split_list(opt, copy, items, MAX_LIST);
	for (int i = 0; i < k; i++)
		if (cli_parse_choice(opt, items[i], choices, &vals[i])) {
			free(copy);
			return -1;
		}
	free(copy);
	if (k < 0)
		return -1;
	*n = (unsigned int)k;
	return 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	int c, v, vals[MAX_LIST];
	unsigned int n;
	uint64_t u;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":qvhV", long_opts, NULL)) != -1) {
		const char *opt = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
		char name[64];

		/* the option's name without "=value", for the messages */
		snprintf(name, sizeof(name), "%s", opt);
		if (strchr(name, '='))
			*strchr(name, '=') = '\0';
		switch (c) {
		case O_PRESET:
			if (!find_preset(optarg))
				cli_usage_die("--preset: unknown design '%s' (before, affinity, batched, split, best, sharded, rte, before-rte)", optarg);
			o->preset = optarg;
			apply_preset(&o->run, find_preset(optarg));
			break;
		case O_PRESETS: {
			char *items[MAX_LIST], *copy = strdup(optarg);
			int k = copy ? split_list("--presets", copy, items, MAX_LIST) : -1;

			if (k < 0)
				exit(TK_EXIT_USAGE);
			for (int i = 0; i < k; i++) {
				if (!find_preset(items[i]))
					cli_usage_die("--presets: unknown design '%s' (before, affinity, batched, split, best, sharded, rte, before-rte)", items[i]);
				o->presets[i] = find_preset(items[i])->name;
			}
			o->n_presets = (unsigned int)k;
			free(copy);
			break;
		}
		case O_DESIGN:
			if (parse_choices(o, "--design", optarg, up_design_names, o->design, &o->n_design))
				exit(TK_EXIT_USAGE);
			o->run.design = (enum up_design)o->design[0];
			break;
		case O_TABLE:
			if (parse_choices(o, "--table", optarg, up_table_names, o->table, &o->n_table))
				exit(TK_EXIT_USAGE);
			o->run.table = (enum up_table_kind)o->table[0];
			break;
		case O_TABLES: { /* lookup's list of tables */
			char *items[MAX_LIST], *copy;
			int k;

			if (strcmp(o->cmd, "lookup"))
				cli_usage_die("--tables: only for lookup (sweep takes a list in --table)");
			copy = strdup(optarg);
			k = copy ? split_list("--tables", copy, items, MAX_LIST) : -1;
			for (int i = 0; i < k; i++)
				if (cli_parse_choice("--tables", items[i], up_table_names, &o->table[i]))
					exit(TK_EXIT_USAGE);
			free(copy);
			if (k < 0)
				exit(TK_EXIT_USAGE);
			o->n_table = (unsigned int)k;
			break;
		}
		case O_LAYOUT:
			if (parse_choices(o, "--layout", optarg, up_layout_names, o->layout, &o->n_layout))
				exit(TK_EXIT_USAGE);
			o->run.layout = (enum up_layout)o->layout[0];
			break;
		case O_BATCH:
			if (is_sweep(o) || !strcmp(o->cmd, "lookup")) {
				char *items[MAX_LIST], *copy = strdup(optarg);
				int k = copy ? split_list("--batch", copy, items, MAX_LIST) : -1;

				for (int i = 0; i < k; i++)
					if (cli_parse_u32("--batch", items[i], 1, UP_MAX_BATCH, &o->batch[i]))
						exit(TK_EXIT_USAGE);
				free(copy);
				if (k < 0)
					exit(TK_EXIT_USAGE);
				o->n_batch = (unsigned int)k;
			} else {
				if (cli_parse_u32("--batch", optarg, 1, UP_MAX_BATCH, &o->batch[0]))
					exit(TK_EXIT_USAGE);
				o->n_batch = 1;
			}
			o->run.batch = o->batch[0];
			break;
		case O_PREFETCH:
		case O_HUGE:
			/* "--hugepages on,off" as well as "--hugepages=on,off" and "--hugepages" */
			if (!optarg && optind < argc && (!strncmp(argv[optind], "on", 2) ||
							 !strncmp(argv[optind], "off", 3)))
				optarg = argv[optind++];
			if (!optarg) {
				vals[0] = 1;
				n = 1;
			} else if (parse_choices(o, c == O_PREFETCH ? "--prefetch" : "--hugepages", optarg,
						 onoff_names, vals, &n)) {
				exit(TK_EXIT_USAGE);
			}
			if (c == O_PREFETCH) {
				memcpy(o->prefetch, vals, n * sizeof(int));
				o->n_prefetch = n;
				o->run.prefetch = vals[0];
			} else {
				memcpy(o->huge, vals, n * sizeof(int));
				o->n_huge = n;
				o->run.huge = vals[0];
			}
			break;
		case O_NO_PREFETCH:
			o->run.prefetch = false;
			o->prefetch[0] = 0;
			o->n_prefetch = 1;
			break;
		case O_NO_HUGE:
			o->run.huge = false;
			o->huge[0] = 0;
			o->n_huge = 1;
			break;
		case O_WORKERS:
			if (cli_parse_u64("--workers", optarg, 1, UP_MAX_WORKERS, &u))
				exit(TK_EXIT_USAGE);
			o->run.workers = (unsigned int)u;
			break;
		case O_SESSIONS:
			if (is_sweep(o)) {
				char *items[MAX_LIST], *copy = strdup(optarg);
				int k = copy ? split_list("--sessions", copy, items, MAX_LIST) : -1;

				for (int i = 0; i < k; i++)
					if (parse_count("--sessions", items[i], 1, MAX_SESSIONS, &o->sessions[i]))
						exit(TK_EXIT_USAGE);
				free(copy);
				if (k < 0)
					exit(TK_EXIT_USAGE);
				o->n_sessions = (unsigned int)k;
			} else {
				if (parse_count("--sessions", optarg, 1, MAX_SESSIONS, &o->sessions[0]))
					exit(TK_EXIT_USAGE);
				o->n_sessions = 1;
			}
			o->gen.sessions = (uint32_t)o->sessions[0];
			break;
		case O_PACKETS:
			if (parse_count("--packets", optarg, 1, 100000000000ull, &o->run.packets))
				exit(TK_EXIT_USAGE);
			o->packets_set = true;
			break;
		case O_DIST:
			if (cli_parse_choice("--dist", optarg, dist_names, &v))
				exit(TK_EXIT_USAGE);
			o->gen.dist = (enum up_dist)v;
			break;
		case O_ZIPF_S:
			if (cli_parse_double("--zipf-s", optarg, 0.1, 3.0, &o->gen.zipf_s))
				exit(TK_EXIT_USAGE);
			break;
		case O_PKT_SIZE:
			if (!strcmp(optarg, "imix")) {
				o->gen.pkt_size = 0;
			} else {
				if (!strchr("0123456789", optarg[0]))
					cli_usage_die("--pkt-size: '%s' is neither imix nor a size in bytes", optarg);
				if (cli_parse_u32("--pkt-size", optarg, 60, 1400, &o->gen.pkt_size))
					exit(TK_EXIT_USAGE);
			}
			break;
		case O_OUTER:
			if (cli_parse_choice("--outer", optarg, outer_names, &v))
				exit(TK_EXIT_USAGE);
			o->gen.outer_family = v ? 6 : 4;
			break;
		case O_MBR:
			if (parse_count("--mbr-bps", optarg, 8000, 400000000000ull, &o->gen.mbr_bps))
				exit(TK_EXIT_USAGE);
			break;
		case O_SEED:
			if (cli_parse_u64("--seed", optarg, 0, UINT32_MAX, &o->gen.seed))
				exit(TK_EXIT_USAGE);
			break;
		case O_PCAP_IN: o->pcap_in = optarg; break;
		case O_PCAP_OUT: o->pcap_out = optarg; break;
		case O_VERIFY: o->run.verify = true; break;
		case O_COUNTERS_OUT: o->counters_out = optarg; break;
		case O_FLOOR_MIB:
			if (cli_parse_u64("--floor-mib", optarg, 0, 65536, &u))
				exit(TK_EXIT_USAGE);
			if (u && u < 1)
				cli_usage_die("--floor-mib: at least 1 MiB");
			o->floor_mib = (int)u;
			break;
		case O_LOOKUPS:
			if (parse_count("--lookups", optarg, 1, 100000000000ull, &o->lookups))
				exit(TK_EXIT_USAGE);
			break;
		case O_OUT: o->out_path = optarg; break;
		case O_FORMAT:
			if (rec_format_parse("--format", optarg, &o->fmt))
				exit(TK_EXIT_USAGE);
			o->fmt_set = true;
			break;
		case O_MPPS:
			if (cli_parse_double("--mpps", optarg, 1e-6, 1e6, &o->id_mpps))
				exit(TK_EXIT_USAGE);
			o->id_set = true;
			break;
		case O_CYCLES:
			if (cli_parse_double("--cycles", optarg, 1e-3, 1e9, &o->id_cycles))
				exit(TK_EXIT_USAGE);
			o->id_set = true;
			break;
		case O_GHZ:
			if (cli_parse_double("--ghz", optarg, 1e-3, 100, &o->id_ghz))
				exit(TK_EXIT_USAGE);
			o->id_set = true;
			break;
		case 'q': log_set_level(LOG_QUIET); break;
		case 'v': log_set_level(log_get_level() + 1); break;
		case 'h': usage(); exit(TK_EXIT_OK);
		case 'V': cli_print_version(); exit(TK_EXIT_OK);
		case ':':
			cli_usage_die("%s needs a value", name);
		case '?':
		default:
			if (optopt && optopt < 256 && (optind <= 1 || argv[optind - 1][1] != '-'))
				cli_usage_die("unknown option '-%c' (see --help)", optopt);
			cli_usage_die("unknown option '%s' (see --help)", name);
		}
	}
	if (optind < argc)
		cli_usage_die("unexpected argument '%s' (see --help)", argv[optind]);
	return 0;
}

/* ---- records -------------------------------------------------------------------------- */

enum {
	F_LABEL, F_DESIGN, F_TABLE, F_LAYOUT, F_BATCH, F_PREFETCH, F_HUGE, F_WORKERS, F_THREADS,
	F_SESSIONS, F_DIST, F_PACKETS, F_WALL, F_MPPS, F_CPP, F_RX, F_PARSE, F_LOOKUP, F_RULES,
	F_COUNTERS, F_DECAP, F_OTHER, F_TSC, F_FLOOR, F_FLOOR_SERIAL, F_FLOOR_MULT, F_IDENTITY,
	F_MALFORMED, F_DROPPED, F_FORWARDED, F_NOT_GTPU, F_NO_SESSION, F_NO_PDR, F_FAR_DROP,
	F_QER_DROP, F_LLC, F_DTLB, F_HUGE_KIB, F_TABLE_BYTES, F_SESSION_BYTES, F_CPU_SHARE,
	F_CPU_CPP, F_T_LLC, F_T_DTLB, F_N
};

static const struct rec_field run_fields[F_N] = {
	[F_LABEL] = { "label", REC_STR, 0, "design", -11 },
	[F_DESIGN] = { "design", REC_STR, 0, NULL, 0 },
	[F_TABLE] = { "table", REC_STR, 0, "table", -8 },
	[F_LAYOUT] = { "layout", REC_STR, 0, NULL, 0 },
	[F_BATCH] = { "batch", REC_U64, 0, NULL, 0 },
	[F_PREFETCH] = { "prefetch", REC_BOOL, 0, NULL, 0 },
	[F_HUGE] = { "hugepages", REC_BOOL, 0, NULL, 0 },
	[F_WORKERS] = { "workers", REC_U64, 0, "wk", 2 },
	[F_THREADS] = { "threads", REC_U64, 0, NULL, 0 },
	[F_SESSIONS] = { "sessions", REC_U64, 0, "sessions", 8 },
	[F_DIST] = { "dist", REC_STR, 0, NULL, 0 },
	[F_PACKETS] = { "packets", REC_U64, 0, NULL, 0 },
	[F_WALL] = { "wall_s", REC_F64, 6, NULL, 0 },
	[F_MPPS] = { "mpps", REC_F64, 3, "Mpps", 6, 0, 2 },
	[F_CPP] = { "cycles_per_pkt", REC_F64, 1, "cyc/pkt", 7, 0, 0 },
	[F_RX] = { "rx_cycles", REC_F64, 1, "rx", 4, 0, 0 },
	[F_PARSE] = { "parse_cycles", REC_F64, 1, "parse", 5, 0, 0 },
	[F_LOOKUP] = { "lookup_cycles", REC_F64, 1, "lookup", 6, 0, 0 },
	[F_RULES] = { "rules_cycles", REC_F64, 1, "rules", 5, 0, 0 },
	[F_COUNTERS] = { "counters_cycles", REC_F64, 1, "cntrs", 5, 0, 0 },
	[F_DECAP] = { "decap_cycles", REC_F64, 1, "decap", 5, 0, 0 },
	[F_OTHER] = { "other_cycles", REC_F64, 1, "other", 5, 0, 0 },
	[F_TSC] = { "tsc_hz", REC_F64, 0, NULL, 0 },
	[F_FLOOR] = { "floor_cycles", REC_F64, 2, "floor", 5, 0, 1 },
	[F_FLOOR_SERIAL] = { "floor_serial_cycles", REC_F64, 1, NULL, 0 },
	[F_FLOOR_MULT] = { "floor_multiple", REC_F64, 2, "x floor", 7, 0, 2 },
	[F_IDENTITY] = { "identity_ratio", REC_F64, 3, "ident", 5, 0, 2 },
	[F_MALFORMED] = { "malformed", REC_U64, 0, "malf", 5 },
	[F_DROPPED] = { "dropped", REC_U64, 0, "dropped", 8 },
	[F_FORWARDED] = { "forwarded", REC_U64, 0, NULL, 0 },
	[F_NOT_GTPU] = { "not_gtpu", REC_U64, 0, NULL, 0 },
	[F_NO_SESSION] = { "no_session", REC_U64, 0, NULL, 0 },
	[F_NO_PDR] = { "no_pdr", REC_U64, 0, NULL, 0 },
	[F_FAR_DROP] = { "far_drop", REC_U64, 0, NULL, 0 },
	[F_QER_DROP] = { "qer_drop", REC_U64, 0, NULL, 0 },
	[F_LLC] = { "llc_miss_per_pkt", REC_F64, 3, NULL, 0 },
	[F_DTLB] = { "dtlb_miss_per_pkt", REC_F64, 3, NULL, 0 },
	[F_HUGE_KIB] = { "hugepages_kib", REC_U64, 0, "THP MiB", 7, 1.0 / 1024, 0 },
	[F_TABLE_BYTES] = { "table_bytes", REC_U64, 0, NULL, 0 },
	[F_SESSION_BYTES] = { "session_bytes", REC_U64, 0, NULL, 0 },
	[F_CPU_SHARE] = { "cpu_share", REC_F64, 3, NULL, 0 },
	[F_CPU_CPP] = { "cpu_cycles_per_pkt", REC_F64, 1, NULL, 0 },
	/* the table says "n/a" for counters perf_event_open does not have */
	[F_T_LLC] = { NULL, REC_STR, 0, "LLC/pkt", 7 },
	[F_T_DTLB] = { NULL, REC_STR, 0, "dTLB/pkt", 8 },
};
static const struct rec_schema run_schema = { "upf_run", run_fields, F_N };

struct run_rec {
	char label[48];
	const char *dist;
	struct up_result r;
	struct up_floor *floor;
};

static void fmt_hw(double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%.3f", v);
}

static int write_run(struct rec_writer *w, const struct run_rec *x)
{
	const struct up_result *r = &x->r;
	struct rec_value v[F_N];
	char llc[32], dtlb[32];
	uint64_t dropped = r->not_gtpu + r->no_session + r->no_pdr + r->far_drop + r->qer_drop;

	fmt_hw(r->llc_per_pkt, llc, sizeof(llc));
	fmt_hw(r->dtlb_per_pkt, dtlb, sizeof(dtlb));
	v[F_LABEL] = rv_str(x->label);
	v[F_DESIGN] = rv_str(up_design_names[r->cfg.design]);
	v[F_TABLE] = rv_str(up_table_names[r->cfg.table]);
	v[F_LAYOUT] = rv_str(up_layout_names[r->cfg.layout]);
	v[F_BATCH] = rv_u64(r->cfg.batch);
	v[F_PREFETCH] = rv_bool(r->cfg.prefetch);
	v[F_HUGE] = rv_bool(r->cfg.huge);
	v[F_WORKERS] = rv_u64(r->cfg.workers);
	v[F_THREADS] = rv_u64(r->threads);
	v[F_SESSIONS] = rv_u64(r->sessions);
	v[F_DIST] = rv_str(x->dist);
	v[F_PACKETS] = rv_u64(r->packets);
	v[F_WALL] = rv_f64(r->wall_s);
	v[F_MPPS] = rv_f64(r->mpps);
	v[F_CPP] = rv_f64(r->cycles_per_pkt);
	for (int s = 0; s < UP_NSTAGES; s++)
		v[F_RX + s] = rv_f64(r->stage_cycles[s]);
	v[F_OTHER] = rv_f64(r->other_cycles);
	v[F_TSC] = rv_f64(r->tsc_hz);
	if (x->floor) {
		v[F_FLOOR] = rv_f64(x->floor->mlp_cycles);
		v[F_FLOOR_SERIAL] = rv_f64(x->floor->serial_cycles);
		v[F_FLOOR_MULT] = rv_f64(r->cycles_per_pkt / x->floor->mlp_cycles);
	} else {
		v[F_FLOOR] = v[F_FLOOR_SERIAL] = v[F_FLOOR_MULT] = rv_null();
	}
	v[F_IDENTITY] = rv_f64(r->identity_ratio);
	v[F_MALFORMED] = rv_u64(r->malformed);
	v[F_DROPPED] = rv_u64(dropped);
	v[F_FORWARDED] = rv_u64(r->forwarded);
	v[F_NOT_GTPU] = rv_u64(r->not_gtpu);
	v[F_NO_SESSION] = rv_u64(r->no_session);
	v[F_NO_PDR] = rv_u64(r->no_pdr);
	v[F_FAR_DROP] = rv_u64(r->far_drop);
	v[F_QER_DROP] = rv_u64(r->qer_drop);
	v[F_LLC] = isnan(r->llc_per_pkt) ? rv_null() : rv_f64(r->llc_per_pkt);
	v[F_DTLB] = isnan(r->dtlb_per_pkt) ? rv_null() : rv_f64(r->dtlb_per_pkt);
	v[F_HUGE_KIB] = rv_u64(r->huge_kib);
	v[F_TABLE_BYTES] = rv_u64(r->table_bytes);
	v[F_SESSION_BYTES] = rv_u64(r->session_bytes);
	v[F_CPU_SHARE] = rv_f64(r->cpu_share);
	v[F_CPU_CPP] = rv_f64(r->cpu_cycles_per_pkt);
	v[F_T_LLC] = rv_str(llc);
	v[F_T_DTLB] = rv_str(dtlb);
	return rec_write(w, &run_schema, v);
}

/* notes: to stdout under a table, to stderr under CSV/JSON */
static FILE *notes;

#define note(...)                                                 \
	do {                                                      \
		if (log_get_level() >= LOG_NORMAL) {              \
			fprintf(notes, "%s: ", log_prog());       \
			fprintf(notes, __VA_ARGS__);              \
			fputc('\n', notes);                       \
		}                                                 \
	} while (0)

static void run_notes(const struct run_rec *x)
{
	const struct up_result *r = &x->r;
	double lhs = r->mpps * 1e6 * r->cycles_per_pkt, rhs = r->threads * r->tsc_hz;
	char thp[32];

	note("%s: identity: %.3f Mpps x %.1f cycles/packet = %.1fM cycles/s; %u thread%s x %.3f GHz = %.1fM cycles/s; ratio %.3f: %s",
	     x->label, r->mpps, r->cycles_per_pkt, lhs / 1e6, r->threads, r->threads == 1 ? "" : "s",
	     r->tsc_hz / 1e9, rhs / 1e6, r->identity_ratio,
	     fabs(r->identity_ratio - 1) <= IDENTITY_TOLERANCE
		     ? "holds"
		     : "FAILS (threads idle or descheduled for part of the run)");
	if (x->floor)
		note("%s: %.1f cycles/packet = %.2f x the memory floor (%.1f cycles per DRAM access at %u chains; %.1f with one outstanding)",
		     x->label, r->cycles_per_pkt, r->cycles_per_pkt / x->floor->mlp_cycles,
		     x->floor->mlp_cycles, x->floor->mlp_chains, x->floor->serial_cycles);
	if (isnan(r->llc_per_pkt))
		note("%s: LLC and dTLB misses per packet: n/a (%s)", x->label,
		     up_perf_missing() ? up_perf_missing() : "not measured");
	else
		note("%s: LLC misses per packet %.3f, dTLB misses per packet %.3f", x->label,
		     r->llc_per_pkt, r->dtlb_per_pkt);
	if (r->cfg.huge)
		note("%s: huge pages: asked (THP mode %s); obtained %llu KiB AnonHugePages for sessions and table (%llu KiB in the process, smaps_rollup)",
		     x->label, up_thp_mode(thp, sizeof(thp)), (unsigned long long)r->huge_kib,
		     (unsigned long long)r->proc_huge_kib);
	if (r->oversubscribed)
		note("%s: %u threads share fewer CPUs: the run is oversubscribed", x->label, r->threads);
	if (r->cpu_share < 0.9)
		note("%s: the threads ran only %.0f%% of their wall time (other load on the machine): %.1f cycles/packet while running",
		     x->label, 100 * r->cpu_share, r->cpu_cycles_per_pkt);
	if (r->cfg.verify)
		note("%s: counters: %s", x->label, r->verify_msg);
}

/* ---- commands ---------------------------------------------------------------------------- */

static enum rec_format out_format(const struct opts *o, FILE *f)
{
	return o->fmt_set ? o->fmt : rec_format_default(f);
}

static int measure_floor(const struct opts *o, struct up_floor *f)
{
	char err[256];
	size_t bytes = o->floor_mib < 0 ? up_floor_default_bytes() : (size_t)o->floor_mib << 20;

	vlog("measuring the memory floor over %zu MiB", bytes >> 20);
	if (up_floor_measure(bytes, f, err, sizeof(err))) {
		elog("%s", err);
		return -1;
	}
	return 0;
}

static int load_traffic(const struct opts *o, uint32_t sessions, uint64_t packets,
			struct up_traffic *t)
{
	char err[256];
	struct up_gen_opts g = o->gen;

	if (o->pcap_in) {
		if (up_traffic_pcap(t, o->pcap_in, o->gen.mbr_bps, err, sizeof(err))) {
			elog("%s", err);
			return TK_EXIT_DATA;
		}
		if (t->truncated)
			wlog("--pcap-in: %u frames were cut short by the capture's snap length; they count as malformed",
			     t->truncated);
		return 0;
	}
	g.sessions = sessions;
	g.packets = packets;
	vlog("generating %u sessions and their packet stream", sessions);
	if (up_traffic_gen(t, &g, err, sizeof(err))) {
		elog("%s", err);
		return TK_EXIT_FAIL;
	}
	return 0;
}

static uint64_t default_packets(uint32_t sessions)
{
	uint64_t p = 4ull * sessions;

	return p < 1000000 ? 1000000 : p;
}

static void make_label(const struct up_run_cfg *c, const char *preset, char *buf, size_t len)
{
	if (preset)
		snprintf(buf, len, "%s", preset);
	else
		snprintf(buf, len, "%s/%s/b%u%s/%s/%s", up_design_names[c->design],
			 up_layout_names[c->layout], c->batch, c->prefetch ? "p" : "",
			 up_table_names[c->table], c->huge ? "thp" : "4k");
}

static int write_pcap_out(const struct opts *o, const struct up_traffic *t,
			  const struct up_run_cfg *c)
{
	char err[256];
	struct up_pcap_out *po = up_pcap_open(o->pcap_out, err, sizeof(err));
	uint64_t kw[UP_MAX_WORKERS] = { 0 };
	uint8_t frame[16384];

	if (!po) {
		elog("%s", err);
		return -1;
	}
	for (uint64_t g = 0; g < c->packets; g++) {
		uint32_t pos = (uint32_t)(g % t->len);
		uint64_t k = g;
		size_t len;

		/* the packet the receive context of g built: template k mod 64 */
		if (c->design == UP_GLOBAL) {
			k = g / c->workers;
		} else if (c->design == UP_STEERED) {
			uint32_t teid = t->from_pcap ? 0 : __builtin_bswap32(t->spec[pos].teid_be);

			k = kw[up_steer(teid, c->workers)]++;
		}
		len = up_traffic_frame(t, k, pos, frame, sizeof(frame));
		up_pcap_write(po, frame, len, 1700000000000000000ull + g * 1000);
	}
	if (up_pcap_close(po)) {
		elog("--pcap-out: writing %s failed", o->pcap_out);
		return -1;
	}
	return 0;
}

static const struct rec_field counter_fields[] = {
	{ "teid", REC_U64, 0, "teid", 10 },
	{ "pkts", REC_U64, 0, "pkts", 10 },
	{ "bytes", REC_U64, 0, "bytes", 12 },
	{ "drop_pkts", REC_U64, 0, "drop_pkts", 10 },
};
static const struct rec_schema counter_schema = { NULL, counter_fields, ARRAY_SIZE(counter_fields) };

static int write_counters(const char *path, const struct up_traffic *t, const struct up_counters *c)
{
	FILE *f = fopen(path, "w");
	struct rec_writer *w;
	int rc = 0;

	if (!f) {
		elog("--counters-out: cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	w = rec_writer_new(REC_CSV, f);
	for (uint32_t s = 0; w && s < t->n_sess && !rc; s++) {
		struct rec_value v[4] = { rv_u64(t->sess[s].teid), rv_u64(c->pkts[s]),
					  rv_u64(c->bytes[s]), rv_u64(c->drops[s]) };

		rc = rec_write(w, &counter_schema, v);
	}
	if (!w || rec_writer_free(w) || rc || fclose(f)) {
		elog("--counters-out: writing %s failed", path);
		return -1;
	}
	return 0;
}

static int check_rte(const struct opts *o, uint32_t max_sessions, bool needed, bool huge)
{
	char err[256];
	int rc;

	(void)o;
	if (!needed)
		return 0;
	rc = up_rte_prepare(max_sessions, huge, err, sizeof(err));
	if (rc) {
		elog("%s", err);
		return rc == -ENOTSUP ? TK_EXIT_NOTSUP : TK_EXIT_FAIL;
	}
	return 0;
}

static int cmd_run(struct opts *o)
{
	struct up_traffic t;
	struct up_floor floor;
	struct run_rec x = { 0 };
	struct up_counters cnt = { 0 };
	struct rec_writer *w;
	char err[256];
	int rc;
	bool have_floor = false;

	if (o->pcap_in && o->n_sessions)
		cli_usage_die("--sessions: not with --pcap-in (the capture's TEIDs are the sessions)");
	if (o->pcap_in && (o->gen.dist || o->gen.pkt_size || o->gen.outer_family == 6))
		cli_usage_die("--pcap-in: the capture is the traffic; --dist, --pkt-size and --outer do not apply");
	if (o->run.design == UP_SHARDED && o->run.workers + 1 > UP_MAX_WORKERS)
		cli_usage_die("--workers: sharded needs one more thread for its dispatcher (at most 63)");
	rc = check_rte(o, o->gen.sessions, o->run.table == UP_TABLE_RTE, o->run.huge);
	if (rc)
		return rc;
	if (o->floor_mib != 0) {
		if (measure_floor(o, &floor))
			return TK_EXIT_FAIL;
		have_floor = true;
	}
	rc = load_traffic(o, o->gen.sessions,
			  o->packets_set ? o->run.packets : default_packets(o->gen.sessions), &t);
	if (rc)
		return rc;
	if (!o->packets_set)
		o->run.packets = o->pcap_in ? t.len : default_packets(o->gen.sessions);
	if (o->pcap_out && write_pcap_out(o, &t, &o->run)) {
		up_traffic_free(&t);
		return TK_EXIT_FAIL;
	}
	if (o->counters_out) {
		cnt.pkts = calloc(t.n_sess + 1, sizeof(uint64_t));
		cnt.bytes = calloc(t.n_sess + 1, sizeof(uint64_t));
		cnt.drops = calloc(t.n_sess + 1, sizeof(uint64_t));
	}
	o->run.perf = true;
	make_label(&o->run, o->preset, x.label, sizeof(x.label));
	x.dist = o->pcap_in ? "pcap" : dist_names[o->gen.dist];
	x.floor = have_floor ? &floor : NULL;
	vlog("running %s: %u sessions, %llu packets", x.label, t.n_sess,
	     (unsigned long long)o->run.packets);
	if (up_run(&t, &o->run, &x.r, o->counters_out ? &cnt : NULL, err, sizeof(err))) {
		elog("%s", err);
		rc = TK_EXIT_FAIL;
		goto out;
	}
	w = rec_writer_new(out_format(o, stdout), stdout);
	notes = rec_writer_format(w) == REC_TABLE ? stdout : stderr;
	if (!w || write_run(w, &x) || rec_writer_free(w)) {
		elog("writing the record failed");
		rc = TK_EXIT_FAIL;
		goto out;
	}
	run_notes(&x);
	fflush(stdout);
	if (o->counters_out && write_counters(o->counters_out, &t, &cnt)) {
		rc = TK_EXIT_FAIL;
		goto out;
	}
	if (o->run.verify && !x.r.verify_ok) {
		elog("counters are not exact: %s", x.r.verify_msg);
		rc = EXIT_COUNTERS;
	}
out:
	free(cnt.pkts);
	free(cnt.bytes);
	free(cnt.drops);
	up_traffic_free(&t);
	return rc;
}

static int cmd_sweep(struct opts *o)
{
	struct up_run_cfg cfgs[512];
	const char *labels[512];
	unsigned int ncfg = 0, nsess = o->n_sessions ? o->n_sessions : 3, total, done = 0;
	uint64_t sess[MAX_LIST] = { 10000, 100000, 1000000 };
	bool knobs = o->n_design || o->n_table || o->n_layout || o->n_batch || o->n_prefetch || o->n_huge;
	bool need_rte = false;
	uint64_t max_sess = 0;
	struct up_floor floor;
	bool have_floor = false;
	struct rec_writer *w;
	FILE *out = stdout;
	int rc = 0;

	if (o->pcap_in)
		cli_usage_die("--pcap-in: not with sweep (the session count is the capture's)");
	if (o->pcap_out || o->counters_out)
		cli_usage_die("%s: not with sweep", o->pcap_out ? "--pcap-out" : "--counters-out");
	if (knobs && o->n_presets)
		cli_usage_die("--presets: not with lists of --design/--table/--layout/--batch/--prefetch/--hugepages");
	if (o->n_sessions)
		memcpy(sess, o->sessions, sizeof(sess));
	if (knobs) {
		unsigned int nd = o->n_design ? o->n_design : 1, nt = o->n_table ? o->n_table : 1;
		unsigned int nl = o->n_layout ? o->n_layout : 1, nb = o->n_batch ? o->n_batch : 1;
		unsigned int np = o->n_prefetch ? o->n_prefetch : 1, nh = o->n_huge ? o->n_huge : 1;

		for (unsigned int a = 0; a < nd; a++)
		for (unsigned int b = 0; b < nt; b++)
		for (unsigned int l = 0; l < nl; l++)
		for (unsigned int k = 0; k < nb; k++)
		for (unsigned int p = 0; p < np; p++)
		for (unsigned int h = 0; h < nh; h++) {
			struct up_run_cfg c = o->run;

			if (ncfg == ARRAY_SIZE(cfgs))
				cli_usage_die("sweep: more than %zu designs", ARRAY_SIZE(cfgs));
			if (o->n_design)
				c.design = (enum up_design)o->design[a];
			if (o->n_table)
				c.table = (enum up_table_kind)o->table[b];
			if (o->n_layout)
				c.layout = (enum up_layout)o->layout[l];
			if (o->n_batch)
				c.batch = o->batch[k];
			if (o->n_prefetch)
				c.prefetch = o->prefetch[p];
			if (o->n_huge)
				c.huge = o->huge[h];
			labels[ncfg] = NULL;
			cfgs[ncfg++] = c;
		}
	} else {
		static const char *const def[] = { "before", "affinity", "batched", "split", "best",
						   "sharded", "rte" };
		unsigned int n = o->n_presets ? o->n_presets : ARRAY_SIZE(def);

		for (unsigned int i = 0; i < n; i++) {
			const char *name = o->n_presets ? o->presets[i] : def[i];
			struct up_run_cfg c = o->run;

			if (!o->n_presets && find_preset(name)->table == UP_TABLE_RTE && upt_rte_missing()) {
				wlog("sweep: leaving out '%s': %s", name, upt_rte_missing());
				continue;
			}
			apply_preset(&c, find_preset(name));
			labels[ncfg] = find_preset(name)->name;
			cfgs[ncfg++] = c;
		}
	}
	for (unsigned int i = 0; i < ncfg; i++) {
		need_rte |= cfgs[i].table == UP_TABLE_RTE;
		if (cfgs[i].design == UP_SHARDED && cfgs[i].workers + 1 > UP_MAX_WORKERS)
			cli_usage_die("--workers: sharded needs one more thread for its dispatcher (at most 63)");
	}
	for (unsigned int s = 0; s < nsess; s++)
		if (sess[s] > max_sess)
			max_sess = sess[s];
	rc = check_rte(o, (uint32_t)max_sess, need_rte, true);
	if (rc)
		return rc;
	if (o->out_path) {
		out = fopen(o->out_path, "w");
		if (!out) {
			elog("--out: cannot write %s: %s", o->out_path, strerror(errno));
			return TK_EXIT_FAIL;
		}
	}
	if (o->floor_mib != 0) {
		if (measure_floor(o, &floor)) {
			if (out != stdout)
				fclose(out);
			return TK_EXIT_FAIL;
		}
		have_floor = true;
		note("memory floor: %.1f cycles per DRAM access with one outstanding (%.1f ns), %.1f at %u chains (%zu MiB, %llu KiB on huge pages)",
		     floor.serial_cycles, floor.serial_ns, floor.mlp_cycles, floor.mlp_chains,
		     floor.bytes >> 20, (unsigned long long)floor.huge_kib);
	}
	w = rec_writer_new(o->fmt_set ? o->fmt : REC_CSV, out);
	notes = stderr;
	if (!w)
		return TK_EXIT_FAIL;
	total = ncfg * nsess;
	for (unsigned int s = 0; s < nsess && !rc; s++) {
		struct up_traffic t;
		uint64_t packets = o->packets_set ? o->run.packets : default_packets((uint32_t)sess[s]);

		rc = load_traffic(o, (uint32_t)sess[s], packets, &t);
		if (rc)
			break;
		for (unsigned int i = 0; i < ncfg && !rc; i++) {
			struct run_rec x = { 0 };
			struct up_run_cfg c = cfgs[i];
			char err[256];

			c.packets = packets;
			c.perf = true;
			make_label(&c, labels[i], x.label, sizeof(x.label));
			x.dist = dist_names[o->gen.dist];
			x.floor = have_floor ? &floor : NULL;
			if (up_run(&t, &c, &x.r, NULL, err, sizeof(err))) {
				elog("%s at %llu sessions: %s", x.label, (unsigned long long)sess[s], err);
				rc = TK_EXIT_FAIL;
				break;
			}
			done++;
			ilog("sweep %u/%u: %s at %u sessions: %.1f cycles/packet, %.3f Mpps%s", done, total,
			     x.label, t.n_sess, x.r.cycles_per_pkt, x.r.mpps,
			     c.verify ? (x.r.verify_ok ? ", counters exact" : ", COUNTERS NOT EXACT") : "");
			if (write_run(w, &x) || rec_writer_flush(w)) {
				elog("writing the record failed");
				rc = TK_EXIT_FAIL;
			}
			if (c.verify && !x.r.verify_ok && !rc) {
				elog("%s: counters are not exact: %s", x.label, x.r.verify_msg);
				rc = EXIT_COUNTERS;
			}
		}
		up_traffic_free(&t);
	}
	if (rec_writer_free(w) && !rc)
		rc = TK_EXIT_FAIL;
	if (out != stdout && fclose(out) && !rc) {
		elog("--out: writing %s failed", o->out_path);
		rc = TK_EXIT_FAIL;
	}
	return rc;
}

static const struct rec_field lookup_fields[] = {
	{ "table", REC_STR, 0, "table", -9 },
	{ "sessions", REC_U64, 0, "sessions", 9 },
	{ "batch", REC_U64, 0, "batch", 5 },
	{ "lookups", REC_U64, 0, "lookups", 10 },
	{ "cycles_per_lookup", REC_F64, 2, "cyc/lookup", 10, 0, 1 },
	{ "mlookups_per_s", REC_F64, 2, "Mlookup/s", 9, 0, 1 },
	{ "tsc_hz", REC_F64, 0, NULL, 0 },
	{ "table_bytes", REC_U64, 0, "table MiB", 9, 1.0 / (1 << 20), 1 },
	{ "hugepages", REC_BOOL, 0, NULL, 0 },
	{ "hugepages_kib", REC_U64, 0, "THP MiB", 7, 1.0 / 1024, 0 },
	{ "misses", REC_U64, 0, "misses", 6 },
	{ "dist", REC_STR, 0, NULL, 0 },
};
static const struct rec_schema lookup_schema = { "upf_lookup", lookup_fields, ARRAY_SIZE(lookup_fields) };

static int cmd_lookup(struct opts *o)
{
	struct up_traffic t;
	struct up_lookup_result res[MAX_LIST * 2];
	unsigned int nt = o->n_table ? o->n_table : 2, nb = o->n_batch ? o->n_batch : 1, nres = 0;
	int tables[MAX_LIST] = { UP_TABLE_OWN, UP_TABLE_RTE };
	bool need_rte = false;
	struct rec_writer *w;
	uint64_t lookups;
	int rc;

	if (o->pcap_in || o->pcap_out || o->counters_out)
		cli_usage_die("%s: not with lookup",
			      o->pcap_in ? "--pcap-in" : o->pcap_out ? "--pcap-out" : "--counters-out");
	if (o->n_table)
		memcpy(tables, o->table, sizeof(tables));
	else if (upt_rte_missing()) {
		wlog("lookup: leaving out rte_hash: %s", upt_rte_missing());
		nt = 1;
	}
	for (unsigned int i = 0; i < nt; i++)
		need_rte |= tables[i] == UP_TABLE_RTE;
	rc = check_rte(o, o->gen.sessions, need_rte, o->run.huge);
	if (rc)
		return rc;
	lookups = o->lookups ? o->lookups : 4ull * o->gen.sessions < 4000000 ? 4000000
										  : 4ull * o->gen.sessions;
	rc = load_traffic(o, o->gen.sessions, lookups, &t);
	if (rc)
		return rc;
	w = rec_writer_new(out_format(o, stdout), stdout);
	notes = rec_writer_format(w) == REC_TABLE ? stdout : stderr;
	for (unsigned int b = 0; b < nb && !rc; b++)
		for (unsigned int i = 0; i < nt && !rc; i++) {
			struct up_lookup_result *r = &res[nres];
			unsigned int batch = o->n_batch ? o->batch[b] : 32;
			char err[256];
			struct rec_value v[ARRAY_SIZE(lookup_fields)];

			if (up_lookup_bench(&t, (enum up_table_kind)tables[i], batch, o->run.huge, lookups, r,
					    err, sizeof(err))) {
				elog("%s", err);
				rc = TK_EXIT_FAIL;
				break;
			}
			nres++;
			v[0] = rv_str(up_table_names[r->table]);
			v[1] = rv_u64(r->sessions);
			v[2] = rv_u64(r->batch);
			v[3] = rv_u64(r->lookups);
			v[4] = rv_f64(r->cycles_per_lookup);
			v[5] = rv_f64(r->tsc_hz / r->cycles_per_lookup / 1e6);
			v[6] = rv_f64(r->tsc_hz);
			v[7] = rv_u64(r->table_bytes);
			v[8] = rv_bool(o->run.huge);
			v[9] = rv_u64(r->huge_kib);
			v[10] = rv_u64(r->misses);
			v[11] = rv_str(dist_names[o->gen.dist]);
			if (rec_write(w, &lookup_schema, v))
				rc = TK_EXIT_FAIL;
		}
	if (rec_writer_free(w) && !rc)
		rc = TK_EXIT_FAIL;
	for (unsigned int i = 0; i < nres; i++)
		for (unsigned int j = 0; j < nres; j++)
			if (res[i].table == UP_TABLE_OWN && res[j].table == UP_TABLE_RTE &&
			    res[i].batch == res[j].batch)
				note("batch %u: own table %.1f cycles/lookup, rte_hash %.1f: own = %.2f x rte_hash",
				     res[i].batch, res[i].cycles_per_lookup, res[j].cycles_per_lookup,
				     res[i].cycles_per_lookup / res[j].cycles_per_lookup);
	up_traffic_free(&t);
	return rc;
}

static const struct rec_field floor_fields[] = {
	{ "buffer_mib", REC_U64, 0, "buffer MiB", 10 },
	{ "l3_mib", REC_F64, 1, "L3 MiB", 6, 0, 0 },
	{ "floor_serial_cycles", REC_F64, 1, "serial cyc", 10, 0, 1 },
	{ "floor_serial_ns", REC_F64, 1, "serial ns", 9, 0, 1 },
	{ "floor_cycles", REC_F64, 2, "MLP cyc", 7, 0, 1 },
	{ "floor_chains", REC_U64, 0, "chains", 6 },
	{ "hugepages_kib", REC_U64, 0, "THP MiB", 7, 1.0 / 1024, 0 },
	{ "tsc_hz", REC_F64, 0, "TSC GHz", 7, 1e-9, 3 },
};
static const struct rec_schema floor_schema = { "memory_floor", floor_fields, ARRAY_SIZE(floor_fields) };

static int cmd_floor(struct opts *o)
{
	struct up_floor f;
	struct rec_writer *w;
	struct rec_value v[ARRAY_SIZE(floor_fields)];

	if (o->floor_mib == 0)
		cli_usage_die("--floor-mib: 0 skips the floor, which is all this command measures");
	if (measure_floor(o, &f))
		return TK_EXIT_FAIL;
	v[0] = rv_u64(f.bytes >> 20);
	v[1] = rv_f64((double)up_l3_bytes() / (1 << 20));
	v[2] = rv_f64(f.serial_cycles);
	v[3] = rv_f64(f.serial_ns);
	v[4] = rv_f64(f.mlp_cycles);
	v[5] = rv_u64(f.mlp_chains);
	v[6] = rv_u64(f.huge_kib);
	v[7] = rv_f64(f.tsc_hz);
	w = rec_writer_new(out_format(o, stdout), stdout);
	if (!w || rec_write(w, &floor_schema, v) || rec_writer_free(w))
		return TK_EXIT_FAIL;
	return 0;
}

enum {
	D_FRAME, D_STATUS, D_OUTER, D_MSG, D_FLAGS, D_TEID, D_SEQ, D_NPDU, D_NEXT, D_NEXT_TYPES,
	D_PDU_TYPE, D_QFI, D_GTP_LEN, D_TPDU_LEN, D_INNER, D_SRC, D_DST, D_PROTO, D_SPORT, D_DPORT,
	D_INNER_LEN, D_N
};

static const struct rec_field decode_fields[D_N] = {
	[D_FRAME] = { "frame", REC_U64, 0, "frame", 6 },
	[D_STATUS] = { "status", REC_STR, 0, "status", -11 },
	[D_OUTER] = { "outer", REC_U64, 0, NULL, 0 },
	[D_MSG] = { "msg_type", REC_U64, 0, "msg", 3 },
	[D_FLAGS] = { "flags", REC_U64, 0, NULL, 0 },
	[D_TEID] = { "teid", REC_U64, 0, "teid", 10 },
	[D_SEQ] = { "seq", REC_U64, 0, "seq", 5 },
	[D_NPDU] = { "npdu", REC_U64, 0, NULL, 0 },
	[D_NEXT] = { "next_ext", REC_U64, 0, NULL, 0 },
	[D_NEXT_TYPES] = { "ext_types", REC_U64_LIST, 0, "ext", -8 },
	[D_PDU_TYPE] = { "pdu_type", REC_U64, 0, NULL, 0 },
	[D_QFI] = { "qfi", REC_U64, 0, "qfi", 3 },
	[D_GTP_LEN] = { "gtp_len", REC_U64, 0, NULL, 0 },
	[D_TPDU_LEN] = { "tpdu_len", REC_U64, 0, "tpdu", 5 },
	[D_INNER] = { "inner", REC_U64, 0, NULL, 0 },
	[D_SRC] = { "inner_src", REC_STR, 0, "inner src", -20 },
	[D_DST] = { "inner_dst", REC_STR, 0, "inner dst", -20 },
	[D_PROTO] = { "proto", REC_U64, 0, "proto", 5 },
	[D_SPORT] = { "sport", REC_U64, 0, "sport", 5 },
	[D_DPORT] = { "dport", REC_U64, 0, "dport", 5 },
	[D_INNER_LEN] = { "inner_len", REC_U64, 0, "len", 5 },
};
static const struct rec_schema decode_schema = { "gtpu_packet", decode_fields, D_N };

static int cmd_decode(struct opts *o)
{
	struct up_traffic t;
	struct rec_writer *w;
	char err[256];
	int rc = 0;

	if (!o->pcap_in)
		cli_usage_die("decode: --pcap-in FILE is required");
	if (up_traffic_pcap(&t, o->pcap_in, 100000000, err, sizeof(err))) {
		elog("%s", err);
		return TK_EXIT_DATA;
	}
	w = rec_writer_new(out_format(o, stdout), stdout);
	for (uint32_t i = 0; w && i < t.len && !rc; i++) {
		struct gtpu_pkt p;
		struct gtpu_hdr h;
		struct rec_value v[D_N];
		uint64_t ext[GTPU_MAX_EXT];
		char src[64] = "", dst[64] = "";
		int st = gtpu_parse_frame(t.fbuf + t.foff[i], t.flen[i], &p, &h);
		/* the GTP-U header itself parsed: report it */
		bool gtp = st == GTPU_OK || st == GTPU_NOT_GPDU || st == GTPU_ERR_INNER;

		for (int k = 0; k < D_N; k++)
			v[k] = rv_null();
		v[D_FRAME] = rv_u64(i + 1);
		v[D_STATUS] = rv_str(gtpu_status_name(st));
		if (p.outer_family)
			v[D_OUTER] = rv_u64(p.outer_family);
		if (gtp) {
			for (int k = 0; k < h.n_ext; k++)
				ext[k] = h.ext_type[k];
			v[D_MSG] = rv_u64(h.msg_type);
			v[D_FLAGS] = rv_u64(h.flags);
			v[D_TEID] = rv_u64(h.teid);
			if (h.has_opt) {
				v[D_SEQ] = rv_u64(h.seq);
				v[D_NPDU] = rv_u64(h.npdu);
				v[D_NEXT] = rv_u64(h.next_ext);
			}
			v[D_NEXT_TYPES] = rv_list(ext, h.n_ext);
			if (h.has_pdu_session) {
				v[D_PDU_TYPE] = rv_u64(h.pdu_type);
				v[D_QFI] = rv_u64(h.qfi);
			}
			v[D_GTP_LEN] = rv_u64(h.length);
			v[D_TPDU_LEN] = rv_u64(h.tpdu_len);
		}
		if (st == GTPU_OK && p.inner_family) {
			int fam = p.inner_family == 4 ? AF_INET : AF_INET6;

			inet_ntop(fam, p.src, src, sizeof(src));
			inet_ntop(fam, p.dst, dst, sizeof(dst));
			v[D_INNER] = rv_u64(p.inner_family);
			v[D_SRC] = rv_str(src);
			v[D_DST] = rv_str(dst);
			v[D_PROTO] = rv_u64(p.proto);
			v[D_SPORT] = rv_u64(p.sport);
			v[D_DPORT] = rv_u64(p.dport);
			v[D_INNER_LEN] = rv_u64(p.inner_len);
		} else if (st == GTPU_OK) {
			v[D_INNER] = rv_u64(0);
		}
		rc = rec_write(w, &decode_schema, v);
	}
	if (!w || rec_writer_free(w) || rc)
		rc = TK_EXIT_FAIL;
	up_traffic_free(&t);
	return rc;
}

static const struct rec_field identity_fields[] = {
	{ "label", REC_STR, 0, "figures", -10 },
	{ "mpps", REC_F64, 3, "Mpps", 7, 0, 2 },
	{ "cycles_per_pkt", REC_F64, 1, "cyc/pkt", 8, 0, 0 },
	{ "workers", REC_U64, 0, "workers", 7 },
	{ "hz", REC_F64, 0, "GHz", 5, 1e-9, 2 },
	{ "implied_mpps", REC_F64, 3, "implied Mpps", 12, 0, 2 },
	{ "ratio", REC_F64, 3, "ratio", 6, 0, 3 },
	{ "holds", REC_BOOL, 0, "holds", 5 },
};
static const struct rec_schema identity_schema = { "identity", identity_fields, ARRAY_SIZE(identity_fields) };

static int cmd_check_identity(struct opts *o)
{
	struct {
		const char *label;
		double mpps, cycles, ghz;
		uint64_t workers;
	} rows[2] = {
		{ "before", 0.8, 6000, 3.0, 16 },
		{ "after", 4.2, 1100, 3.0, 16 },
	};
	unsigned int n = 2;
	bool all = true;
	struct rec_writer *w;

	if (o->id_set || o->run.workers != 1) {
		if (!o->id_mpps || !o->id_cycles || !o->id_ghz)
			cli_usage_die("check-identity: give --mpps, --cycles and --ghz together (and --workers)");
		rows[0].label = "given";
		rows[0].mpps = o->id_mpps;
		rows[0].cycles = o->id_cycles;
		rows[0].ghz = o->id_ghz;
		rows[0].workers = o->run.workers;
		n = 1;
	}
	w = rec_writer_new(out_format(o, stdout), stdout);
	notes = rec_writer_format(w) == REC_TABLE ? stdout : stderr;
	for (unsigned int i = 0; i < n; i++) {
		double hz = rows[i].ghz * 1e9, implied = (double)rows[i].workers * hz / rows[i].cycles / 1e6;
		double ratio = rows[i].mpps / implied;
		bool holds = fabs(ratio - 1) <= IDENTITY_TOLERANCE;
		struct rec_value v[ARRAY_SIZE(identity_fields)] = {
			rv_str(rows[i].label), rv_f64(rows[i].mpps), rv_f64(rows[i].cycles),
			rv_u64(rows[i].workers), rv_f64(hz), rv_f64(implied), rv_f64(ratio), rv_bool(holds),
		};

		all &= holds;
		if (rec_write(w, &identity_schema, v))
			return TK_EXIT_FAIL;
	}
	if (rec_writer_free(w))
		return TK_EXIT_FAIL;
	for (unsigned int i = 0; i < n; i++) {
		double hz = rows[i].ghz * 1e9, implied = (double)rows[i].workers * hz / rows[i].cycles / 1e6;

		note("%s: %llu workers x %.2f GHz / %.0f cycles/packet = %.1f Mpps, but %.2f Mpps was reported: the identity %s",
		     rows[i].label, (unsigned long long)rows[i].workers, rows[i].ghz, rows[i].cycles,
		     implied, rows[i].mpps,
		     fabs(rows[i].mpps / implied - 1) <= IDENTITY_TOLERANCE ? "holds" : "FAILS");
	}
	return all ? TK_EXIT_OK : EXIT_IDENTITY;
}

int main(int argc, char **argv)
{
	struct opts o = {
		.cmd = "run",
		.run = { .design = UP_STEERED, .table = UP_TABLE_OWN, .layout = UP_LAYOUT_SPLIT,
			 .batch = 32, .prefetch = true, .huge = false, .workers = 1 },
		.gen = { .sessions = 100000, .dist = UP_DIST_UNIFORM, .zipf_s = 0.99, .pkt_size = 0,
			 .outer_family = 4, .mbr_bps = 100000000, .seed = 1 },
		.floor_mib = -1,
	};
	static const char *const cmds[] = { "run", "sweep", "lookup", "floor", "decode",
					    "check-identity", NULL };

	log_init(argv[0]);
	notes = stderr;
	if (argc > 1 && argv[1][0] != '-') {
		int k;

		if (cli_parse_choice("command", argv[1], cmds, &k))
			exit(TK_EXIT_USAGE);
		o.cmd = cmds[k];
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	parse_args(argc, argv, &o);
	if (!strcmp(o.cmd, "check-identity"))
		return cmd_check_identity(&o);
	if (o.id_set)
		cli_usage_die("--mpps, --cycles and --ghz are for check-identity");
	if (!strcmp(o.cmd, "decode"))
		return cmd_decode(&o);
	if (!strcmp(o.cmd, "floor"))
		return cmd_floor(&o);
	if (!strcmp(o.cmd, "lookup"))
		return cmd_lookup(&o);
	if (!strcmp(o.cmd, "sweep"))
		return cmd_sweep(&o);
	return cmd_run(&o);
}
