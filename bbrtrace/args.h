/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bbrtrace's command line: its settings, the option table (lib/opt.h), what
 * the options say together, and the checks made before anything is loaded.
 */
#ifndef BBRTRACE_ARGS_H
#define BBRTRACE_ARGS_H

#include <stdbool.h>
#include <stdint.h>

#include "bbrtrace/backend.h"
#include "record.h"

#define MAX_DEFAULT_NS 16
/* with --prometheus, a daemon's window verdict once a minute: as often as
 * the window (BT_WINDOW_MIN) moves */
#define BT_VERDICT_EVERY_S 60
/* /metrics names this many peers, the worst first, and sums the others: the
 * series stay bounded however many peers the host has */
#define BT_METRICS_PEERS 10
#define BT_METRICS_PEERS_MAX 1000 /* --metrics-peers' range */

/* what the output holds (--records): every ACK's sample and the detector's
 * records; the detector's records only (collapses, stalls, the summary and
 * the verdict); or nothing (the verdict on stderr, /metrics) */
enum bt_records { BT_REC_SAMPLES = 0, BT_REC_EVENTS, BT_REC_NONE };

struct bt_env {
	int backend;              /* enum bt_backend_kind */
	int records;              /* enum bt_records */
	bool records_set;
	struct bt_config cfg;
	enum rec_format format;
	bool format_set;
	const char *output;
	double duration_s;        /* 0: until Ctrl-C */
	uint32_t ringbuf_mb;
	uint32_t max_flows;
	bool no_tap;
	bool set_default;
	const char *default_ns[MAX_DEFAULT_NS];
	int n_default_ns;
	bool probe;
	bool cleanup;
	bool stats;
	bool detect;
	bool check;
	double collapse_ratio;
	const char *prometheus;
	double verdict_every_s;   /* a window verdict this often; 0: never */
	bool verdict_every_set;
	uint32_t metrics_peers;   /* peers named on /metrics, the worst first */
};

/*
 * Parses and checks the command line into env (its defaults already set).
 * Exits 2 with one line on a bad one, TK_EXIT_NONETNS when a
 * --set-default-in namespace does not exist, 0 after --help and --version.
 */
void bt_args_parse(int argc, char **argv, struct bt_env *env);

#endif
