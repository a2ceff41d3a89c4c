// SPDX-License-Identifier: GPL-2.0-only
/*
 * upfbench's command line as a whole: the command word, the defaults
 * (the incident's figures for check-identity among them), and what each
 * command's options say together.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common.h"
#include "log.h"
#include "opt.h"

#include "args.h"
#include "table_rte.h"
#include "args_cli.h"

#define DEFAULT_SESSIONS 100000
#define DEFAULT_PACKETS_MIN 1000000     /* a run of fewer packets is over before it settles */
#define DEFAULT_LOOKUPS_MIN 4000000

const char *const up_cmd_names[] = { "run", "sweep", "lookup", "floor", "decode", "check-identity",
				     NULL };

/* the incident (16 workers at 3.0 GHz): what was reported before and after the fix */
const struct up_figures up_incident[UP_NINCIDENT] = {
	{ "before", 0.8, 6000, 3.0, 16 },
	{ "after", 4.2, 1100, 3.0, 16 },
};

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
	/* the knobs' defaults (--design, --table, ... --sessions) are set here,
	 * not by their options: an option sets its knob's list, which sweep
	 * and lookup read as given; the generator's and --workers' defaults are
	 * the option tables' (args_options.c) */
	a->run = (struct up_run_cfg){ .design = UP_STEERED, .table = UP_TABLE_OWN,
				      .layout = UP_LAYOUT_SPLIT, .batch = DEFAULT_BATCH,
				      .prefetch = true, .huge = false, .teid_check = true };
	a->gen = (struct up_gen_opts){ .sessions = DEFAULT_SESSIONS };
	a->floor_mib = UP_FLOOR_DEFAULT;
}

void up_args_parse(struct up_args *a, int argc, char **argv)
{
	const struct opt_cli *cli = &up_top_cli;
	int first;

	args_defaults(a);
	if (argc > 1 && argv[1][0] != '-') {
		int k;

		if (cli_parse_choice("command", argv[1], up_cmd_names, &k))
			exit(TK_EXIT_USAGE);
		a->cmd = (enum up_cmd)k;
		cli = &up_clis[k];
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	first = opt_parse(cli, argc, argv, a);
	if (first < argc)
		cli_usage_die("unexpected argument '%s' (see --help)", argv[first]);
	checks[a->cmd](a);
}
