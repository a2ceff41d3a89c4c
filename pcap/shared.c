// SPDX-License-Identifier: GPL-2.0-only
/* What bbrpcap's subcommands share: running capture files through an
 * analysis, the --flow option, and where the records go. */
#include <errno.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* where FILE's extension starts (its end when it has none) */
static size_t ring_stem(const char *path)
{
	const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');

	return dot && (!slash || dot > slash + 1) ? (size_t)(dot - path) : strlen(path);
}

#define RING_DIGITS 6 /* x-000001.pcap */

void bp_ring_name(const char *path, uint64_t seq, char *buf, size_t len)
{
	size_t stem = ring_stem(path);

	snprintf(buf, len, "%.*s-%0*llu%s", (int)stem, path, RING_DIGITS, (unsigned long long)seq, path + stem);
}

void bp_ring_glob(const char *path, char *buf, size_t len)
{
	size_t stem = ring_stem(path);

	snprintf(buf, len, "%.*s-*%s", (int)stem, path, path + stem);
}

/* " (a --ring capture? ...)" when path is missing and its ring files are there */
static const char *ring_hint(const char *path, char *buf, size_t len)
{
	char pattern[4096];
	glob_t g;
	size_t stem = ring_stem(path);
	bool ring;

	buf[0] = '\0';
	if (!strcmp(path, "-") || access(path, F_OK) == 0 || errno != ENOENT)
		return buf;
	/* x-NNNNNN.pcap: the digits, then anything (a ring past 999999 has more) */
	snprintf(pattern, sizeof(pattern), "%.*s-[0-9][0-9][0-9][0-9][0-9][0-9]*%s", (int)stem, path, path + stem);
	ring = glob(pattern, GLOB_NOSORT, NULL, &g) == 0 && g.gl_pathc > 0;
	globfree(&g);
	if (ring) {
		bp_ring_glob(path, pattern, sizeof(pattern));
		snprintf(buf, len, " (a --ring capture? give all its files: %s)", pattern);
	}
	return buf;
}

static void on_overlap(void *ctx, const char *earlier, const char *later)
{
	(void)ctx;
	wlog("%s starts before the last frame of %s: the files overlap in time (read one after the other, "
	     "in the order of their first frames)",
	     later, earlier);
}

/* in->order: the files as the set reads them */
static int note_order(struct bp_input *in, const struct cap_set *s)
{
	size_t len = 1, n = 0;

	for (unsigned int i = 0; i < s->n; i++)
		len += strlen(s->files[i].path) + 1;
	in->order = malloc(len);
	if (!in->order)
		return -1;
	in->order[0] = '\0';
	for (unsigned int i = 0; i < s->n; i++) {
		n += (size_t)snprintf(in->order + n, len - n, "%s%s", i ? "," : "", s->files[i].path);
		vlog("file %u of %u in time order: %s", i + 1, s->n, s->files[i].path);
	}
	return 0;
}

/* after the set stopped at a damaged record: where, and what was analysed */
static void say_damage(const struct bp_input *in, const struct cap_set *s, const struct an *a)
{
	if (in->n == 1)
		elog("%s: %s; the %llu frames before it were analysed", s->err_path, s->err,
		     (unsigned long long)a->frames);
	else
		elog("%s: %s; it is frame %llu of the %u files in time order: the %llu before it were analysed",
		     s->err_path, s->err, (unsigned long long)a->frames + 1, in->n, (unsigned long long)a->frames);
}

int bp_analyse(struct bp_input *in, struct an *a, bool *opened)
{
	struct cap_set s;
	int rc;

	*opened = false;
	if (cap_set_open(&s, (const char *const *)in->paths, in->n, in->reader)) {
		char hint[4200];

		elog("%s: %s%s", s.err_path, s.err, ring_hint(s.err_path, hint, sizeof(hint)));
		an_finish(a);
		return s.nomem ? TK_EXIT_FAIL : TK_EXIT_DATA;
	}
	*opened = true;
	s.on_overlap = on_overlap;
	if (note_order(in, &s)) {
		elog("out of memory");
		cap_set_close(&s);
		return TK_EXIT_FAIL;
	}
	rc = an_run_set(a, &s);
	if (a->oom || s.nomem) {
		elog("%s: out of memory during the analysis", s.err_path ? s.err_path : in->order);
		cap_set_close(&s);
		return TK_EXIT_FAIL;
	}
	if (rc)
		say_damage(in, &s, a);
	else
		vlog("%s: %llu frames, %llu TCP, %llu other, %llu truncated headers, %llu malformed", in->order,
		     (unsigned long long)a->frames, (unsigned long long)a->tcp_frames,
		     (unsigned long long)a->other_frames, (unsigned long long)a->trunc_frames,
		     (unsigned long long)a->bad_frames);
	cap_set_close(&s);
	return rc ? TK_EXIT_DATA : TK_EXIT_OK;
}

const char *bp_input_name(const struct bp_input *in, char *buf, size_t len)
{
	if (in->n == 1)
		return in->paths[0];
	snprintf(buf, len, "the %u files", in->n);
	return buf;
}

void bp_check_stdin(const char *cmd, char *const *paths, unsigned int n)
{
	for (unsigned int i = 0; n > 1 && i < n; i++)
		if (!strcmp(paths[i], "-"))
			cli_usage_die("%s: \"-\" (standard input) can only be read alone, not as one of %u files", cmd, n);
}

/* whether --flow's i-th SPEC chose a flow of a */
static bool spec_matched(const struct bp_common *c, unsigned int i, const struct an *a)
{
	for (uint32_t k = 0; k < a->nflows; k++)
		if (an_flow_selected(&c->sel[i], 1, a->flows[k]))
			return true;
	return false;
}

/* the SPECs of --flow that chose no flow of a, as "--flow A or --flow B"; whether any chose one */
static bool unmatched_specs(const struct bp_common *c, const struct an *a, char *buf, size_t len)
{
	size_t n = 0;
	bool any = false;

	buf[0] = '\0';
	for (unsigned int i = 0; i < c->nsel; i++) {
		if (spec_matched(c, i, a))
			any = true;
		else if (n < len)
			n += (size_t)snprintf(buf + n, len - n, "%s--flow %s", n ? " or " : "", c->spec[i]);
	}
	return any;
}

static uint32_t selected_flows(const struct an *a)
{
	uint32_t n = 0;

	for (uint32_t k = 0; k < a->nflows; k++)
		n += a->flows[k]->selected;
	return n;
}

int bp_check_selection(const struct bp_common *c, const struct bp_input *in, const struct an *a)
{
	char specs[512], name[32];
	const char *what = bp_input_name(in, name, sizeof(name));

	if (!c->nsel)
		return TK_EXIT_OK;
	if (unmatched_specs(c, a, specs, sizeof(specs))) {
		if (specs[0])
			wlog("no flow of %s matches %s (the other --flow chose %u)", what, specs, selected_flows(a));
		return TK_EXIT_OK;
	}
	if (in->n == 1)
		elog("no flow of %s matches %s (it holds %u flow%s; `bbrpcap flows %s` lists them)", what, specs,
		     a->nflows, a->nflows == 1 ? "" : "s", in->paths[0]);
	else
		elog("no flow of %s matches %s (they hold %u flow%s; `bbrpcap flows` on the same files lists them)",
		     what, specs, a->nflows, a->nflows == 1 ? "" : "s");
	return TK_EXIT_DATA;
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
	c->spec[c->nsel++] = val;
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
