// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbrpcap join: each bbrtrace sample and collapse record gets the capture
 * frame of the ACK that produced it.
 *
 * A sample is taken when the sender processes the ACK whose cumulative ACK
 * number is the sample's snd_una, so the candidates are the frames from the
 * receiver (daddr:dport) to the sender (saddr:sport) carrying that number.
 * This file is the command: its options, the capture's ACKs of the trace's
 * flows, the checks that there is something to join, and the report;
 * pcap/jointrace.c reads the trace (through lib/trace.h's readers),
 * pcap/joinout.c writes the joined records, and pcap/joinmatch.c does the
 * matching.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cli.h"
#include "common.h"
#include "log.h"
#include "opt.h"
#include "pcap/bbrpcap.h"
#include "pcap/join.h"
#include "trace.h"

/* --- the capture ------------------------------------------------------------------ */

static void on_ack(void *ctx, const struct an_flow *f, const struct an_ack *e)
{
	struct join *j = ctx;
	int ds = e->data_dir, dr = !e->data_dir;
	int32_t tf;

	size_t key = (size_t)f->id * 2 + (size_t)ds;

	if (key >= j->cap_map) {
		size_t n = j->cap_map ? j->cap_map : 64;
		int32_t *m;

		while (n <= key)
			n *= 2;
		m = realloc(j->flow_map, n * sizeof(*m));
		if (!m) {
			j->oom = true;
			return;
		}
		for (size_t i = j->cap_map; i < n; i++)
			m[i] = -2;
		j->flow_map = m;
		j->cap_map = n;
	}
	tf = j->flow_map[key];
	if (tf == -2) {
		tf = -1;
		for (uint32_t i = 0; i < j->nflows; i++) {
			const struct tr_flow *t = &j->flows[i];

			if (t->family == f->family && t->sport == f->port[ds] && t->dport == f->port[dr] &&
			    !memcmp(t->saddr, f->addr[ds], 16) && !memcmp(t->daddr, f->addr[dr], 16)) {
				tf = (int32_t)i;
				break;
			}
		}
		j->flow_map[key] = tf;
	}
	if (tf < 0)
		return;
	if (j->m.nevs == j->cap_evs) {
		size_t n = j->cap_evs ? j->cap_evs * 2 : 4096;
		struct jm_ev *v = realloc(j->m.evs, n * sizeof(*v));

		if (!v) {
			j->oom = true;
			return;
		}
		j->m.evs = v;
		j->cap_evs = n;
	}
	j->m.evs[j->m.nevs++] = (struct jm_ev){ .flow = (uint32_t)tf, .ack = e->ack, .ts_ns = e->ts_ns,
						.frame = e->frame, .delay_ns = e->delay_ns };
}

struct join_opts {
	const char *out_path;
	struct bp_input in;   /* the CAPTURE files */
	int reader;           /* enum cap_reader */
	double max_skew_ms;
	bool strict;
};

#define MAX_SKEW_MS_DEFAULT 500 /* well over a round trip, well under a sequence wraparound */

#define TK_OPT_CFG struct join_opts
static const struct opt options[] = {
	OPT_E_OUTPUT(out_path, "write the joined records to FILE"),
	OPT_E_DOUBLE_D("max-skew-ms", 0, "MS", max_skew_ms, 0.001, 3600000, TK_STR(MAX_SKEW_MS_DEFAULT),
		       "a frame further than MS ms from its record's time\n"
		       "(after the clock offset) is no match;\n"
		       "0.001..3600000"),
	OPT_E_FLAG("strict", 0, strict, "fail (exit status below) when a collapse record found\n"
					"no frame"),
	OPT_E_CHOICE_D("reader", 0, "R", reader, bp_reader_names, "mmap", "mmap or libpcap"),
	OPT_E_STANDARD,
	OPT_E_END,
};
#undef TK_OPT_CFG

static const int exit_codes[] = { TK_EXIT_OK, TK_EXIT_FAIL, TK_EXIT_USAGE, TK_EXIT_DATA, TK_EXIT_UNMATCHED, -1 };
static const struct opt_cli cli = {
	"Usage: bbrpcap join TRACE.jsonl CAPTURE... [-o OUT.jsonl] [OPTIONS]\n"
	"Finds, for every bbrtrace \"sample\" and \"collapse\" record, the capture frame of\n"
	"the ACK that produced it: the frame from the receiver (daddr:dport) to the\n"
	"sender (saddr:sport) whose ACK number is the record's snd_una. For a \"stall\"\n"
	"record, the ACK it waited for: the one that acknowledged all the data in flight\n"
	"when it began (its snd_nxt), at its end (t_ns + duration_us); a stall that the\n"
	"next write ended may have no such frame, when that ACK also covered newer data.\n"
	"\n"
	"The capture may be taken on either host, may hold several flows, and may be\n"
	"several files (a ring: read as one, in time order, frames numbered on as\n"
	"Wireshark numbers the files merged by mergecap -a; see bbrpcap flows --help).\n"
	"The offset between the trace's clock (wall_ns, else t_ns) and the capture's is\n"
	"estimated from the data; each record takes the candidate frame nearest in time\n"
	"after that offset, so equal ACK numbers 4 GiB apart (sequence wraparound) are\n"
	"told apart.\n"
	"\n"
	"Output: the trace's records, in order, as JSON lines (the trace's own\n"
	"format), with frame (Wireshark's frame number), frame_time_s (since the\n"
	"epoch, us precision), frame_time_ns, frame_time_rel_s (since the first\n"
	"frame, Wireshark's default time) and ack_delay_us (how long after the\n"
	"newest data it covers the ACK was captured: from a sender-side capture\n"
	"this includes the round trip); null when no frame matched. Other\n"
	"records pass through unchanged. For each of the first " TK_STR(JOIN_LINES_SHOWN) " collapses one\n"
	"line (-v: for every one, -q: none), then how many more there were:\n"
	"  frame 48213 (t=12.345678 s): ACK 3962813608 came 39.8 ms after\n"
	"  the data it covers; BBR bw 212 Mbit/s \u2192 3.1 Mbit/s\n"
	"With -o the records go to OUT and the lines to stdout; without, the records go\n"
	"to stdout and the lines to stderr.\n"
	"\n",
	options,
	"\n"
	"A trace without sample or collapse records (not bbrtrace's), a damaged trace or\n"
	"capture, or one that cannot be read, is bad input; the records before damage are\n"
	"still joined. A capture that holds none of the trace's flows (every record would\n"
	"go unmatched) is bad input too: one line names the flows, nothing is written.\n"
	"A trace still being written is read up to its last complete line: a last line\n"
	"cut short is left out, with a warning.\n",
	NULL,
	exit_codes,
};

static void parse_join_args(int argc, char **argv, struct join *j, struct join_opts *op)
{
	int first = opt_parse(&cli, argc, argv, op);

	if (argc - first < 2)
		cli_usage_die("join: needs TRACE.jsonl and CAPTURE");
	j->trace_path = argv[first];
	op->in.paths = argv + first + 1;
	op->in.n = (unsigned int)(argc - first - 1);
	op->in.reader = (enum cap_reader)op->reader;
	bp_check_stdin("join", op->in.paths, op->in.n);
	if (!strcmp(j->trace_path, "-") && !strcmp(op->in.paths[0], "-"))
		cli_usage_die("join: the trace and the capture cannot both come from stdin");
}

/* a trace with nothing to join is not bbrtrace's: TK_EXIT_DATA after saying so */
static int check_trace(const struct join *j)
{
	for (size_t i = 0; i < j->m.nrecs; i++)
		if (j->m.recs[i].kind != JM_OTHER)
			return TK_EXIT_OK;
	elog("%s: no bbrtrace \"%s\" or \"%s\" records (bbrtrace -f json writes them): nothing to join",
	     j->trace_path, bt_sample_schema.type, bt_collapse_schema.type);
	return TK_EXIT_DATA;
}

/* a trace whose records name no flow has nothing to look for: TK_EXIT_DATA after saying so */
static int check_trace_flows(const struct join *j)
{
	if (j->nflows)
		return TK_EXIT_OK;
	elog("%s: no \"%s\" or \"%s\" record names its flow (%s, %s, %s, %s): nothing to join", j->trace_path,
	     bt_sample_schema.type, bt_collapse_schema.type, bt_sample_schema.fields[BT_F_SADDR].name,
	     bt_sample_schema.fields[BT_F_SPORT].name, bt_sample_schema.fields[BT_F_DADDR].name,
	     bt_sample_schema.fields[BT_F_DPORT].name);
	return TK_EXIT_DATA;
}

/* "10.0.0.1:40000-10.0.0.2:5201, ..." (the first few) */
static void trace_flow_names(const struct join *j, char *buf, size_t len)
{
	enum { SHOWN = 3 };
	size_t n = 0;

	buf[0] = '\0';
	for (uint32_t i = 0; i < j->nflows && i < SHOWN && n < len; i++) {
		const struct tr_flow *f = &j->flows[i];
		char s[64], d[64];

		an_fmt_endpoint(f->family, f->saddr, f->sport, s, sizeof(s));
		an_fmt_endpoint(f->family, f->daddr, f->dport, d, sizeof(d));
		n += (size_t)snprintf(buf + n, len - n, "%s%s-%s", i ? ", " : "", s, d);
	}
	if (j->nflows > SHOWN && n < len)
		snprintf(buf + n, len - n, " and %u more", j->nflows - SHOWN);
}

/* none of the trace's flows in the capture: every record would go unmatched */
static bool flows_absent(const struct join *j, const struct join_opts *op, const struct an *a)
{
	char names[320], what[32];
	const char *cap;

	for (uint32_t i = 0; i < a->nflows; i++)
		if (a->flows[i]->selected)
			return false;
	trace_flow_names(j, names, sizeof(names));
	cap = bp_input_name(&op->in, what, sizeof(what));
	if (a->nflows)
		elog("join: %s %s none of the trace's flows (%s), but %u other%s (`bbrpcap flows` lists them): "
		     "nothing to join",
		     cap, op->in.n == 1 ? "holds" : "hold", names, a->nflows, a->nflows == 1 ? "" : "s");
	else
		elog("join: %s %s none of the trace's flows (%s), and no other TCP flow: nothing to join", cap,
		     op->in.n == 1 ? "holds" : "hold", names);
	return true;
}

/* the analysis of the trace's flows only */
static struct an *trace_analysis(struct join *j, struct an_sel **sel)
{
	struct an_config cfg = { .acks = true, .delack_ns = BT_DELACK_FLOOR_US * TK_NSEC_PER_USEC };
	struct an *a;

	*sel = calloc(j->nflows, sizeof(**sel));
	if (!*sel)
		return NULL;
	for (uint32_t i = 0; i < j->nflows; i++) {
		(*sel)[i].nend = 2;
		for (int k = 0; k < 2; k++) {
			(*sel)[i].end[k].family = j->flows[i].family;
			memcpy((*sel)[i].end[k].addr, k ? j->flows[i].daddr : j->flows[i].saddr, 16);
			(*sel)[i].end[k].port = k ? j->flows[i].dport : j->flows[i].sport;
		}
	}
	cfg.sel = *sel;
	cfg.nsel = j->nflows;
	cfg.on_ack = on_ack;
	cfg.ctx = j;
	a = an_new(&cfg);
	if (!a)
		free(*sel);
	return a;
}

/* the capture's ACKs of the trace's flows into j->m.evs; a TK_EXIT_* code,
 * and whether there is anything to join (the capture read, at least in part,
 * and holding one of the trace's flows) */
static int read_capture(struct join *j, struct join_opts *op, bool *joinable)
{
	struct an_sel *sel;
	struct an *a = trace_analysis(j, &sel);
	int rc;

	*joinable = false;
	if (!a) {
		elog("out of memory");
		return TK_EXIT_FAIL;
	}
	rc = bp_analyse(&op->in, a, joinable);
	j->t0_ns = a->t0_ns;
	if (*joinable && rc != TK_EXIT_FAIL && flows_absent(j, op, a)) {
		*joinable = false;
		rc = TK_EXIT_DATA;
	}
	an_free(a);
	free(sel);
	free(op->in.order);
	if (j->oom) {
		elog("out of memory");
		return TK_EXIT_FAIL;
	}
	return rc;
}

static void join_free(struct join *j)
{
	if (j->mapped)
		munmap(j->buf, j->size);
	else
		free(j->buf);
	free(j->m.recs);
	free(j->flows);
	free(j->cookies);
	free(j->m.evs);
	free(j->flow_map);
}

/* the collapse lines to show: none with -q, every one with -v */
static uint64_t lines_shown(void)
{
	if (log_get_level() == LOG_QUIET)
		return 0;
	return log_get_level() >= LOG_VERBOSE ? UINT64_MAX : JOIN_LINES_SHOWN;
}

/* matches, writes, reports; a TK_EXIT_* code */
static int join_and_write(struct join *j, const struct join_opts *op, int trc, int arc)
{
	struct join_counts n = { 0 };
	FILE *out = stdout;
	size_t support = 0;
	int rc;

	jm_sort_events(&j->m);
	if (jm_estimate_offset(&j->m, &support))
		vlog("clock offset (capture - trace): %.3f us, from %zu candidate frames",
		     (double)j->m.offset_ns * TK_USEC_PER_NSEC_F, support);
	jm_match(&j->m, (int64_t)llround(op->max_skew_ms * TK_NSEC_PER_MSEC_F));
	if (j->m.oom) {
		elog("out of memory");
		return TK_EXIT_FAIL;
	}
	if (op->out_path && !(out = fopen(op->out_path, "w"))) {
		elog("%s: cannot create: %s", op->out_path, strerror(errno));
		return TK_EXIT_FAIL;
	}
	rc = join_write_output(j, out, op->out_path ? stdout : stderr, lines_shown(), op->out_path ?: "stdout", &n);
	if (out != stdout && fclose(out) && rc == TK_EXIT_OK) {
		elog("%s: write failed", op->out_path);
		rc = TK_EXIT_FAIL;
	}
	if (rc != TK_EXIT_OK)
		return rc;
	ilog("matched %llu of %llu samples and %llu of %llu collapses to frames; clock offset (capture - trace) "
	     "%.3f ms",
	     (unsigned long long)n.samples_matched, (unsigned long long)n.samples,
	     (unsigned long long)n.collapses_matched, (unsigned long long)n.collapses,
	     (double)j->m.offset_ns * TK_MSEC_PER_NSEC_F);
	if (n.stalls)
		ilog("matched %llu of %llu stalls to the ACK each waited for (a stall that the next write "
		     "ended may have none: its ACK also covered newer data)",
		     (unsigned long long)n.stalls_matched, (unsigned long long)n.stalls);
	if (trc > 0 || arc == TK_EXIT_DATA)
		return TK_EXIT_DATA;
	if (op->strict && n.collapses_matched < n.collapses)
		return TK_EXIT_UNMATCHED;
	return TK_EXIT_OK;
}

int bp_join_main(int argc, char **argv)
{
	struct join_opts op = { 0 }; /* the defaults are the option table's */
	struct join j = { 0 };
	bool joinable = false;
	int rc, trc, arc;

	parse_join_args(argc, argv, &j, &op);
	rc = join_load_file(&j, j.trace_path);
	if (rc != TK_EXIT_OK)
		return rc;
	trc = join_read_trace(&j);
	rc = trc < 0 ? TK_EXIT_FAIL : trc == 2 ? TK_EXIT_DATA : trc == 0 ? check_trace(&j) : TK_EXIT_OK;
	if (rc == TK_EXIT_OK)
		rc = check_trace_flows(&j);
	if (rc == TK_EXIT_OK) {
		arc = read_capture(&j, &op, &joinable);
		rc = arc == TK_EXIT_FAIL || !joinable ? arc : join_and_write(&j, &op, trc, arc);
	}
	join_free(&j);
	return rc;
}
