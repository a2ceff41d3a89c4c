// SPDX-License-Identifier: GPL-2.0-only
/*
 * upfbench's --help: the usage lines, each command's synopsis and footer
 * (presets, tables, the memory floor, the incident's figures), and the
 * exit codes each command uses, bound to its option table.
 */
#include <stdbool.h>
#include <stdio.h>

#include "common.h"
#include "opt.h"

#include "args.h"
#include "floor.h"
#include "table_rte.h"
#include "args_cli.h"

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
			(double)x->workers * x->ghz * (TK_GIGA_F / TK_MEGA_F) / x->cycles, x->mpps);
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
const struct opt_cli up_top_cli = { top_synopsis, up_run_options, NULL, run_footer, all_exits };

static void sweep_footer(FILE *f)
{
	presets_help(f, true);
	tables_help(f);
	floor_here_help(f);
}

const struct opt_cli up_clis[UP_NCMDS] = {
	[UP_CMD_RUN] = { run_synopsis, up_run_options, NULL, run_footer, run_exits },
	[UP_CMD_SWEEP] = { sweep_synopsis, up_sweep_options, NULL, sweep_footer, sweep_exits },
	[UP_CMD_LOOKUP] = { lookup_synopsis, up_lookup_options, NULL, tables_help, lookup_exits },
	[UP_CMD_FLOOR] = { floor_synopsis, up_floor_options, NULL, floor_footer, floor_exits },
	[UP_CMD_DECODE] = { decode_synopsis, up_decode_options, NULL, NULL, decode_exits },
	[UP_CMD_IDENTITY] = { identity_synopsis, up_identity_options, NULL, identity_footer, identity_exits },
};
