// SPDX-License-Identifier: GPL-2.0-only
/* What bbrpcap's subcommands share: running a capture file through an
 * analysis, the --flow option, and where the records go. */
#include <errno.h>
#include <string.h>

#include "cli.h"
#include "common.h"
#include "log.h"
#include "pcap/shared.h"

const char *const bp_reader_names[] = { "mmap", "libpcap", NULL };

const char bp_units_help[] =
	"\n"
	"Units: times in seconds (t_s, relative to the capture's first frame) or\n"
	"microseconds (_us); rates in bit/s (_bps; tables show Mbit/s); bytes are frame\n"
	"bytes (wire_bytes, as tshark counts) or TCP payload (data_bytes, as tcptrace).\n";

int bp_analyse(const char *path, enum cap_reader reader, struct an *a, bool *opened)
{
	struct cap_file c;
	int rc;

	*opened = false;
	if (cap_open(&c, path, reader)) {
		elog("%s: %s", path, c.err);
		an_finish(a);
		return c.nomem ? TK_EXIT_FAIL : TK_EXIT_DATA;
	}
	*opened = true;
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

void bp_warn_unmatched(const struct bp_common *c, const char *path, const struct an *a)
{
	for (uint32_t i = 0; i < a->nflows; i++)
		if (a->flows[i]->selected)
			return;
	if (c->nsel)
		wlog("--flow: no flow of %s matches (it holds %u; `bbrpcap flows` lists them)", path,
		     a->nflows);
}

int bp_opt_flow(void *cfg, const char *opt, const char *val)
{
	struct bp_common *c = cfg;
	char err[160];

	if (c->nsel == BP_MAX_FLOWS) {
		elog("%s: at most %d flows may be chosen", opt, BP_MAX_FLOWS);
		return -1;
	}
	if (an_sel_parse(val, &c->sel[c->nsel], err, sizeof(err))) {
		elog("%s: %s", opt, err);
		return -1;
	}
	c->nsel++;
	return 0;
}

int bp_open_records(struct bp_common *c, FILE **out, struct rec_writer **w)
{
	*out = stdout;
	if (c->output && !(*out = fopen(c->output, "w"))) {
		elog("%s: cannot create: %s", c->output, strerror(errno));
		return TK_EXIT_FAIL;
	}
	if (!c->format_set)
		c->format = rec_format_default(*out);
	*w = rec_writer_new(c->format, *out);
	if (!*w) {
		elog("out of memory");
		if (*out != stdout)
			fclose(*out);
		*out = NULL;
		return TK_EXIT_FAIL;
	}
	return TK_EXIT_OK;
}

int bp_close_records(const struct bp_common *c, FILE *out, struct rec_writer *w)
{
	int failed = rec_writer_free(w);

	if (out && out != stdout && fclose(out))
		failed = -1;
	if (failed) {
		elog("%s: write failed: %s", c->output ? c->output : "stdout", strerror(errno ? errno : EIO));
		return TK_EXIT_FAIL;
	}
	return TK_EXIT_OK;
}
