/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef QA_QUICKACK_H
#define QA_QUICKACK_H

#include <stdbool.h>
#include <stdint.h>

#include "cli.h"
#include "common.h"
#include "record.h"
#include "route.h"

/*
 * Exit codes: lib/common.h's (0 ok, 1 other failure, 2 bad arguments (a
 * malformed prefix among them), 3 no privilege, 5 corrupt journal), then
 * quickack's own.
 */
enum qa_exit {
	QA_EXIT_NODEV = 10,     /* --dev/--all-dev names no device in the namespace */
	QA_EXIT_NOTABLE = 11,   /* --table names no table (or a table without routes) */
	QA_EXIT_NONETNS = 12,   /* --netns names no namespace */
	QA_EXIT_NOROUTE = 13,   /* no route matches; or restore found a saved route gone */
	QA_EXIT_NETLINK = 14,   /* the kernel refused the change; nothing was applied */
	QA_EXIT_PARTIAL = 15,   /* some changes applied, some refused: the journal holds the applied */
	QA_EXIT_VERIFY = 16,    /* read back, a route is not what was asked */
	QA_EXIT_JOURNAL = 17,   /* the journal cannot be written, synced or locked; nothing applied */
	QA_EXIT_REFUSED = 18,   /* a matching route cannot be changed safely (type, expiry, twins) */
};

enum qa_cmd { QA_SHOW, QA_ON, QA_OFF, QA_RTO_MIN, QA_CONGCTL, QA_RESTORE, QA_STATUS };

struct qa_args {
	enum qa_cmd cmd;
	bool has_prefix;
	struct cli_prefix prefix;
	int family;                 /* -4/-6, or the prefix's; 0: both */
	const char *table;          /* NULL: main */
	const char *dev;
	const char *all_dev;
	bool has_via;
	struct cli_addr via;
	const char *netns;
	const char *journal;        /* NULL: the default path */
	bool dry_run;
	bool lock;
	bool fmt_set;
	enum rec_format fmt;
	struct qa_change change;    /* on/off/rto-min/congctl */
	int verbosity;              /* -1 quiet, 0, 1 (-v), 2 (-vv) */
	bool help, version;
};

/*
 * Parse the command line. Returns 0, or -1 after printing one line that
 * names the option or argument and the cause (exit TK_EXIT_USAGE).
 */
int qa_args_parse(int argc, char **argv, struct qa_args *a);
const char *qa_cmd_name(enum qa_cmd c);
/* "5ms", "5", "1s", "off" -> milliseconds (0 for off); -1 with one line of error */
int qa_parse_rto_min(const char *opt, const char *s, uint32_t *ms);
/* a congestion control name, or "off" (-> "") */
int qa_parse_congctl(const char *opt, const char *s, char out[QA_CC_NAME_MAX]);

#endif
