// SPDX-License-Identifier: GPL-2.0-only
/* What bbrpcap's subcommands share: running a capture file through an
 * analysis, and the --flow option. */
#include "cli.h"
#include "common.h"
#include "log.h"
#include "pcap/shared.h"

int bp_analyse(const char *path, enum cap_reader reader, struct an *a)
{
	struct cap_file c;
	int rc;

	if (cap_open(&c, path, reader)) {
		elog("%s: %s", path, c.err);
		an_finish(a);
		return c.damaged ? TK_EXIT_DATA : TK_EXIT_FAIL;
	}
	rc = an_run(a, &c);
	if (a->oom) {
		elog("%s: out of memory during the analysis", path);
		cap_close(&c);
		return TK_EXIT_FAIL;
	}
	if (rc) {
		elog("%s: %s; the %llu frames before it were analysed", path, c.err,
		     (unsigned long long)c.frames);
		cap_close(&c);
		return TK_EXIT_DATA;
	}
	vlog("%s: %s, %llu frames, %llu TCP, %llu other, %llu truncated headers, %llu malformed", path,
	     cap_format_name(c.format), (unsigned long long)a->frames, (unsigned long long)a->tcp_frames,
	     (unsigned long long)a->other_frames, (unsigned long long)a->trunc_frames,
	     (unsigned long long)a->bad_frames);
	cap_close(&c);
	return TK_EXIT_OK;
}

void bp_add_flow(struct bp_common *c, const char *opt, const char *val)
{
	char err[160];

	if (c->nsel == ARRAY_SIZE(c->sel))
		cli_usage_die("%s: at most %zu flows may be chosen", opt, ARRAY_SIZE(c->sel));
	if (an_sel_parse(val, &c->sel[c->nsel], err, sizeof(err)))
		cli_usage_die("%s: %s", opt, err);
	c->nsel++;
}
