/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * upfbench's command lines: one lib/opt table per command, what each
 * command's options say together, and the named designs (--preset).
 */
#ifndef UP_ARGS_H
#define UP_ARGS_H

#include <stdbool.h>
#include <stdint.h>

#include "record.h"

#include "path.h"
#include "traffic.h"

#define UP_MAX_LIST 16          /* values in one comma-separated list */
#define UP_MAX_SESSIONS 4000000u
#define UP_FLOOR_DEFAULT UINT64_MAX /* --floor-mib not given: 8 x the L3 */

enum up_cmd { UP_CMD_RUN, UP_CMD_SWEEP, UP_CMD_LOOKUP, UP_CMD_FLOOR, UP_CMD_DECODE,
	      UP_CMD_IDENTITY, UP_NCMDS };
extern const char *const up_cmd_names[]; /* NULL-terminated, by enum */

/* the design choices a sweep takes a list of; run takes one of each */
enum up_knob { UP_K_DESIGN, UP_K_TABLE, UP_K_LAYOUT, UP_K_BATCH, UP_K_PREFETCH, UP_K_HUGE,
	       UP_K_TEID_CHECK, UP_NKNOBS };

struct up_list {
	unsigned int n;         /* 0: not given */
	uint64_t v[UP_MAX_LIST];
};

struct up_preset {
	const char *name;
	enum up_design design;
	enum up_layout layout;
	unsigned int batch;
	bool prefetch, huge;
	enum up_table_kind table;
	bool teid_check;        /* the slot table's */
	bool swept;             /* in sweep's default list */
	const char *what;       /* in --help */
};
extern const struct up_preset up_presets[];
extern const unsigned int up_npresets;

struct up_args {
	enum up_cmd cmd;
	struct up_run_cfg run;
	struct up_gen_opts gen;
	const char *preset;     /* --preset's name: the run's label */
	const char *pcap_in, *pcap_out, *counters_out;
	const char *output;     /* -o; NULL: stdout */
	uint64_t floor_mib;     /* UP_FLOOR_DEFAULT, or 0: no floor */
	uint64_t lookups;       /* lookup; 0: the default */
	bool sessions_set, packets_set;
	enum rec_format fmt;
	bool fmt_set;
	struct up_list knob[UP_NKNOBS]; /* sweep: each knob's values; lookup: tables, batches */
	struct up_list sessions;        /* sweep: the session counts */
	struct up_list presets;         /* sweep --presets: indexes into up_presets */
	/* check-identity: the figures to check; 0 when not given */
	double id_mpps, id_cycles, id_ghz;
	uint64_t id_workers;
};

/*
 * argv[0] is the program, argv[1] may be a command: the command's settings
 * from its options, with the defaults filled in. Exits 2 after one line on
 * a bad command line, 0 after --help and --version.
 */
void up_args_parse(struct up_args *a, int argc, char **argv);

/* "design/layout/bBATCH[p]/table/thp|4k": a configuration's name in a sweep
 * (table: slot-unchecked for the slot table without its TEID check) */
void up_label(const struct up_run_cfg *c, char *buf, size_t len);

/* figures that check-identity checks; by default the incident's */
struct up_figures {
	const char *label;
	double mpps, cycles, ghz;
	uint64_t workers;
};
#define UP_NINCIDENT 2
extern const struct up_figures up_incident[UP_NINCIDENT];
/* the identity holds when Mpps over workers x Hz / cycles is within this of 1 */
#define UP_IDENTITY_TOLERANCE 0.10

/* a sharded design needs a thread more than its workers: exits 2 when there is none */
void up_check_workers(const struct up_run_cfg *c);

/* set one knob of a configuration to a value of its list */
void up_knob_set(struct up_run_cfg *c, enum up_knob k, uint64_t v);
void up_preset_apply(struct up_run_cfg *c, const struct up_preset *p);
/* packets per run when --packets is not given: 4 x sessions, at least 1M */
uint64_t up_default_packets(uint32_t sessions);
/* lookups per table when --lookups is not given: 4 x sessions, at least 4M */
uint64_t up_default_lookups(uint32_t sessions);

#endif
