/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What upfbench's command-line files share among themselves: the value
 * parsers, each command's option table and lib/opt interface, and the
 * default burst size. The commands see only args.h.
 */
#ifndef UP_ARGS_CLI_H
#define UP_ARGS_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "opt.h"

#include "args.h"

#define DEFAULT_BATCH 32

/* ---- values (args_value.c) ---- */

/* an integer count, optionally with a k/M/G suffix: "10k", "2.2M" */
int up_parse_count(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* one value of an option that may take a list: into *out, or -1 after one line */
typedef int (*up_item_fn)(const char *opt, const char *item, const void *ctx, uint64_t *out);

int up_item_choice(const char *opt, const char *item, const void *choices, uint64_t *out);
int up_item_batch(const char *opt, const char *item, const void *ctx, uint64_t *out);
int up_item_sessions(const char *opt, const char *item, const void *ctx, uint64_t *out);
/* a preset's index in up_presets */
int up_item_preset(const char *opt, const char *item, const void *ctx, uint64_t *out);

/* the option's value: a comma-separated list where the command takes one, else one value */
int up_parse_values(const char *opt, const char *val, bool list, up_item_fn fn, const void *ctx,
		    struct up_list *l);

/* ---- each command's option table (args_options.c) ---- */

extern const struct opt up_run_options[], up_sweep_options[], up_lookup_options[],
	up_floor_options[], up_decode_options[], up_identity_options[];

/* ---- each command's lib/opt interface: synopsis, options, footer, exits (args_help.c) ---- */

/* upfbench without a command: run's options, under the whole tool's help */
extern const struct opt_cli up_top_cli;
extern const struct opt_cli up_clis[UP_NCMDS];

#endif
