/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * quickack's command line: its commands, the arguments they are parsed into,
 * and the parsers of the values only quickack takes (rto-min, congctl).
 */
#ifndef QA_QUICKACK_H
#define QA_QUICKACK_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/contract/quickack_sock.h"
#include "cli.h"
#include "common.h"
#include "record.h"
#include "route.h"

/* the commands, in the order --help lists them */
enum qa_cmd { QA_SHOW, QA_ON, QA_OFF, QA_RTO_MIN, QA_CONGCTL, QA_NODELAY, QA_RESTORE, QA_STATUS, QA_NCMDS };

/* a device option as it was spelled ("-i", "--dev"), for its messages */
#define QA_OPT_NAME_MAX 24

struct qa_args {
	enum qa_cmd cmd;
	bool has_prefix;
	struct cli_prefix prefix;
	int family;                 /* -4/-6, or the prefix's; 0: both */
	bool ipv4, ipv6;            /* -4, -6 as given */
	const char *table;          /* NULL: main */
	const char *dev;            /* -i/--interface/--dev */
	char dev_opt[QA_OPT_NAME_MAX];
	const char *all_dev;
	bool has_to;                /* --to ADDR: the route the kernel uses to reach ADDR */
	struct cli_addr to;
	const char *to_text;
	bool host;                  /* --host: a host route for --to's ADDR alone */
	bool has_via;
	const char *via_text;       /* --via as given */
	struct cli_addr via;
	const char *netns;
	const char *journal;        /* NULL: the default path */
	bool dry_run;
	bool discard_stale;         /* restore: set aside the records of another boot, namespace or device */
	bool lock;
	bool fmt_set;               /* -f or --json given */
	enum rec_format fmt;
	const char *output;         /* -o FILE; NULL: stdout */
	bool change_records;        /* on/off/rto-min/congctl/restore: -f, --json or -o asks for them */
	/* a socket scope (on --port, nodelay --dport) instead of routes */
	bool scope;
	uint16_t ports[QS_PORTS_MAX];
	unsigned int nports;
	const char *cgroup;         /* --cgroup; NULL: the whole cgroup v2 hierarchy */
	struct qa_change change;    /* on/off/rto-min/congctl */
};

/*
 * Parse the command line: the command (options may come before it), its
 * options from its own table (lib/opt.h), its operands, and what they say
 * together. A bad command line exits 2 with one line; --help and --version
 * exit 0.
 */
void qa_args_parse(int argc, char **argv, struct qa_args *a);
const char *qa_cmd_name(enum qa_cmd c);
/* "5ms", "5", "1s", "off" -> milliseconds (0 for off); -1 with one line of error */
int qa_parse_rto_min(const char *opt, const char *s, uint32_t *ms);
/* "1935" or "1935,8080": 1 to QS_PORTS_MAX ports 1..65535, each once; -1 with one line of error */
int qa_parse_ports(const char *opt, const char *s, uint16_t *ports, unsigned int *n);
/* a congestion control name, or "off" (-> "") */
int qa_parse_congctl(const char *opt, const char *s, char out[QA_CC_NAME_MAX]);

#endif
