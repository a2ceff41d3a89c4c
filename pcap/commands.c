// SPDX-License-Identifier: GPL-2.0-only
/*
 * The analysis commands of bbrpcap: flows, throughput, acks and gaps. Each reads
 * a capture (one file or several, read as one) through pcap/analysis.c and
 * writes its records; each has its own table of options.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common.h"
#include "log.h"
#include "opt.h"
#include "pcap/bbrpcap.h"
#include "record.h"
#include "trace.h"

enum cmd { CMD_FLOWS, CMD_THROUGHPUT, CMD_ACKS, CMD_GAPS };

/* the settings of one analysis command */
struct an_cmd {
	struct bp_common com; /* first: the shared options' callbacks find it at cfg */
	double bin_ms, dip_frac, delack_ms, gap_ms;
	uint32_t dip_window, mss;
	int side;             /* enum an_side */
	bool each;
};

/* the options' defaults, applied by opt_parse from the tables below */
#define BIN_MS_DEFAULT 100      /* like tshark io,stat's common choice */
#define DIP_FRAC_DEFAULT 0.5
#define DIP_WINDOW_DEFAULT 21
#define DELACK_MS_DEFAULT 10    /* the trace's delayed-ACK floor */
_Static_assert(DELACK_MS_DEFAULT * TK_USEC_PER_MSEC == BT_DELACK_FLOOR_US, "--delack-ms's default is the trace's floor");
/* a silence a viewer can see: a live player keeps about this much buffered
 * (pushsim recv's and dip.sh's --playout-ms) */
#define GAP_MS_DEFAULT 100

/* one run of a command: the settings, the capture and where the records go */
struct an_job {
	enum cmd cmd;
	struct an_cmd *cfg;
	struct bp_input in;
	FILE *out;
	struct rec_writer *w; /* opened with the first record (job_writer) */
	bool open_failed;
	struct an *a;
	bool write_failed;    /* a record written from an_config.on_ack */
};

static double rel_s(const struct an *a, int64_t ts)
{
	return (double)(ts - a->t0_ns) * TK_SEC_PER_NSEC_F;
}

/* --- flows ------------------------------------------------------------------------ */

#define MBPS TK_MBPS_PER_BPS_F

/* one direction's counts (tcptrace's names), AB = "ab" or "ba", over d */
#define FLOW_DIR_FIELDS(X, ab, AB, d, dir)                                                  \
	X("pkts_" ab, REC_U64, 0, REC_COL("pkts " AB, 9, 0, 0), rv_u64(d->pkts))             \
	X("wire_bytes_" ab, REC_U64, 0, REC_COL("bytes " AB, 11, 0, 0), rv_u64(d->wire_bytes)) \
	X("data_pkts_" ab, REC_U64, 0, REC_NOCOL, rv_u64(d->data_pkts))                      \
	X("data_bytes_" ab, REC_U64, 0, REC_NOCOL, rv_u64(d->data_bytes))                    \
	X("unique_bytes_" ab, REC_U64, 0, REC_NOCOL, rv_u64(d->unique_bytes))                \
	X("rexmt_pkts_" ab, REC_U64, 0, REC_NOCOL, rv_u64(d->rexmt_pkts))                    \
	X("rexmt_bytes_" ab, REC_U64, 0, REC_NOCOL, rv_u64(d->rexmt_bytes))                  \
	X("throughput_" ab "_bps", REC_U64, 0, REC_COL("Mb/s " AB, 9, MBPS, 2), dir_tput(f, dir))

/* a flow f of the analysis a; ea and eb its endpoints as text */
#define FLOW_FIELDS(X)                                                                       \
	X("flow", REC_U64, 0, REC_COL("flow", 4, 0, 0), rv_u64(f->id))                         \
	X("a", REC_STR, 0, REC_COL("A", -21, 0, 0), rv_str(ea))                                 \
	X("b", REC_STR, 0, REC_COL("B", -21, 0, 0), rv_str(eb))                                 \
	X("first_s", REC_F64, 6, REC_COL("start s", 10, 0, 3), rv_f64(rel_s(a, f->first_ns)))   \
	X("duration_s", REC_F64, 6, REC_COL("dur s", 8, 0, 3),                                  \
	  rv_f64((double)(f->last_ns - f->first_ns) * TK_SEC_PER_NSEC_F))                        \
	FLOW_DIR_FIELDS(X, "ab", "A>B", (&f->d[0]), 0)                                           \
	FLOW_DIR_FIELDS(X, "ba", "B>A", (&f->d[1]), 1)                                           \
	X("complete", REC_BOOL, 0, REC_COL("SYN/FIN", 7, 0, 0), rv_bool(flow_complete(f)))
static const struct rec_field flow_fields[] = { FLOW_FIELDS(REC_FIELD) };
static const struct rec_schema flow_schema = { "flow", flow_fields, ARRAY_SIZE(flow_fields) };

/* the whole capture a, read from the files `path` (in the order read); lts its link types */
#define CAPTURE_FIELDS(X)                                                                    \
	X("file", REC_STR, 0, REC_COL("file", -24, 0, 0), rv_str(path))                        \
	X("frames", REC_U64, 0, REC_COL("frames", 9, 0, 0), rv_u64(a->frames))                 \
	X("tcp_frames", REC_U64, 0, REC_COL("TCP", 9, 0, 0), rv_u64(a->tcp_frames))            \
	X("other_frames", REC_U64, 0, REC_COL("other", 7, 0, 0), rv_u64(a->other_frames))      \
	X("truncated_frames", REC_U64, 0, REC_COL("cut hdr", 7, 0, 0), rv_u64(a->trunc_frames)) \
	X("malformed_frames", REC_U64, 0, REC_COL("bad", 5, 0, 0), rv_u64(a->bad_frames))      \
	X("flows", REC_U64, 0, REC_COL("flows", 6, 0, 0), rv_u64(a->nflows))                   \
	X("duration_s", REC_F64, 6, REC_COL("dur s", 9, 0, 3),                                 \
	  rv_f64(a->frames ? (double)(a->tlast_ns - a->t0_ns) * TK_SEC_PER_NSEC_F : 0))         \
	X("linktypes", REC_STR, 0, REC_COL("link types", -16, 0, 0), rv_str(lts))
static const struct rec_field capture_fields[] = { CAPTURE_FIELDS(REC_FIELD) };
static const struct rec_schema capture_schema = { "capture", capture_fields, ARRAY_SIZE(capture_fields) };

/* tcptrace's throughput: unique bytes over the connection's elapsed time */
static struct rec_value dir_tput(const struct an_flow *f, int dir)
{
	int64_t dur = f->last_ns - f->first_ns;

	if (dur <= 0)
		return rv_null();
	return rv_u64((uint64_t)llround((double)f->d[dir].unique_bytes * 8e9 / (double)dur));
}

/* both sides' SYNs and a FIN or RST: the whole connection is in the capture */
static bool flow_complete(const struct an_flow *f)
{
	return f->d[0].syns && f->d[1].syns && (f->d[0].fins || f->d[1].fins || f->d[0].rsts || f->d[1].rsts);
}

static int write_flow(struct rec_writer *w, const struct an *a, const struct an_flow *f)
{
	char ea[64], eb[64];

	an_fmt_endpoint(f->family, f->addr[0], f->port[0], ea, sizeof(ea));
	an_fmt_endpoint(f->family, f->addr[1], f->port[1], eb, sizeof(eb));
	const struct rec_value v[] = { FLOW_FIELDS(REC_VALUE) };
	return rec_write(w, &flow_schema, v);
}

static int write_capture(struct rec_writer *w, const char *path, const struct an *a)
{
	char lts[128] = "", tmp[24];
	size_t n = 0;

	for (unsigned int i = 0; i < a->nlinktypes && n < sizeof(lts) - 1; i++)
		n += (size_t)snprintf(lts + n, sizeof(lts) - n, "%s%s", i ? "," : "",
				      cap_linktype_name(a->linktypes[i], tmp, sizeof(tmp)));
	const struct rec_value v[] = { CAPTURE_FIELDS(REC_VALUE) };
	return rec_write(w, &capture_schema, v);
}

/* --- throughput ------------------------------------------------------------------ */

/* a rate over the bin, bit/s */
#define BPS(bytes) rv_u64((uint64_t)llround((double)(bytes) * 8 / bin_s))

/* bin b (at t seconds, of bin_s) of flow f's direction src -> dst; med its moving median */
#define BIN_FIELDS(X)                                                                      \
	X("flow", REC_U64, 0, REC_COL("flow", 4, 0, 0), rv_u64(f->id))                       \
	X("src", REC_STR, 0, REC_COL("src", -21, 0, 0), rv_str(src))                          \
	X("dst", REC_STR, 0, REC_COL("dst", -21, 0, 0), rv_str(dst))                          \
	X("t_s", REC_F64, 6, REC_COL("t s", 10, 0, 3), rv_f64(t))                             \
	X("epoch_s", REC_F64, 6, REC_NOCOL, rv_f64((double)a->t0_ns * TK_SEC_PER_NSEC_F + t)) \
	X("frames", REC_U64, 0, REC_COL("frames", 7, 0, 0), rv_u64(b->frames))                \
	X("wire_bytes", REC_U64, 0, REC_COL("wire B", 10, 0, 0), rv_u64(b->wire_bytes))       \
	X("data_frames", REC_U64, 0, REC_NOCOL, rv_u64(b->data_frames))                       \
	X("data_bytes", REC_U64, 0, REC_COL("data B", 10, 0, 0), rv_u64(b->data_bytes))       \
	X("acked_bytes", REC_U64, 0, REC_COL("acked B", 10, 0, 0), rv_u64(b->acked_bytes))    \
	X("wire_bps", REC_U64, 0, REC_NOCOL, BPS(b->wire_bytes))                               \
	X("data_bps", REC_U64, 0, REC_COL("sent Mb/s", 9, MBPS, 2), BPS(b->data_bytes))        \
	X("acked_bps", REC_U64, 0, REC_COL("acked Mb/s", 10, MBPS, 2), BPS(b->acked_bytes))    \
	X("median_bps", REC_U64, 0, REC_COL("median Mb/s", 11, MBPS, 2), BPS(med))             \
	X("dip", REC_BOOL, 0, REC_COL("dip", 3, 0, 0),                                         \
	  rv_bool(med > 0 && (double)b->data_bytes < cfg->dip_frac * (double)med))
static const struct rec_field bin_fields[] = { BIN_FIELDS(REC_FIELD) };
static const struct rec_schema bin_schema = { "bin", bin_fields, ARRAY_SIZE(bin_fields) };

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

#define DENSE_MAX_BINS (4u << 20) /* beyond this span, empty bins are left out */

/*
 * Centred moving median of the data bytes per bin, over `win` bins of the
 * dense series (empty bins count as zero; bins past either end are left out).
 */
static void moving_median(const uint64_t *dense, uint64_t n, unsigned int win, uint64_t *med)
{
	uint64_t *tmp = malloc(win * sizeof(*tmp));
	int64_t half = win / 2;

	if (!tmp) {
		memset(med, 0, n * sizeof(*med));
		return;
	}
	for (int64_t i = 0; i < (int64_t)n; i++) {
		int64_t lo = i - half < 0 ? 0 : i - half;
		int64_t hi = i + half >= (int64_t)n ? (int64_t)n - 1 : i + half;
		unsigned int k = 0;

		for (int64_t j = lo; j <= hi; j++)
			tmp[k++] = dense[j];
		qsort(tmp, k, sizeof(*tmp), cmp_u64);
		med[i] = k % 2 ? tmp[k / 2] : (tmp[k / 2 - 1] + tmp[k / 2]) / 2;
	}
	free(tmp);
}

/* a direction's bins, every bin from its first to its last (or only those
 * that saw something, when the span is absurd) */
struct bin_series {
	uint64_t first, n;
	bool sparse;
	uint64_t *dense, *med;
};

static int bin_series(const struct an *a, const struct an_flow *f, const struct an_dir *d, unsigned int win,
		      struct bin_series *s)
{
	uint64_t span = d->bins[d->nbins - 1].idx - d->bins[0].idx + 1;

	s->first = d->bins[0].idx;
	s->sparse = span > DENSE_MAX_BINS;
	if (s->sparse)
		wlog("flow %u: its frames span %llu bins of %g ms (a clock jump?): empty bins are left out", f->id,
		     (unsigned long long)span, (double)a->cfg.bin_ns * TK_MSEC_PER_NSEC_F);
	s->n = s->sparse ? d->nbins : span;
	s->dense = calloc(s->n, sizeof(*s->dense));
	s->med = calloc(s->n, sizeof(*s->med));
	if (!s->dense || !s->med) {
		elog("out of memory");
		free(s->dense);
		free(s->med);
		return -1;
	}
	for (uint64_t i = 0; i < d->nbins; i++)
		s->dense[s->sparse ? i : d->bins[i].idx - s->first] = d->bins[i].data_bytes;
	moving_median(s->dense, s->n, win, s->med);
	return 0;
}

static int write_bins(struct an_job *j, const struct an_flow *f, int dir)
{
	const struct an *a = j->a;
	const struct an_cmd *cfg = j->cfg;
	const struct an_dir *d = &f->d[dir];
	double bin_s = (double)a->cfg.bin_ns * TK_SEC_PER_NSEC_F;
	struct bin_series s;
	uint64_t cur = 0;
	char src[64], dst[64];
	int rc = 0;

	if (!d->data_bytes || !d->nbins)
		return 0;
	if (bin_series(a, f, d, cfg->dip_window, &s))
		return -1;
	an_fmt_endpoint(f->family, f->addr[dir], f->port[dir], src, sizeof(src));
	an_fmt_endpoint(f->family, f->addr[!dir], f->port[!dir], dst, sizeof(dst));
	for (uint64_t i = 0; i < s.n && !rc; i++) {
		static const struct an_bin empty;
		uint64_t idx = s.sparse ? d->bins[i].idx : s.first + i;
		const struct an_bin *b = cur < d->nbins && d->bins[cur].idx == idx ? &d->bins[cur++] : &empty;
		uint64_t med = s.med[i];
		double t = (double)idx * bin_s;
		const struct rec_value v[] = { BIN_FIELDS(REC_VALUE) };

		rc = rec_write(j->w, &bin_schema, v);
	}
	free(s.dense);
	free(s.med);
	return rc;
}

/* --- acks ------------------------------------------------------------------------- */

static struct rec_writer *job_writer(struct an_job *j);

/* ACK e of flow f (from src to dst) in the analysis a */
#define ACK_FIELDS(X)                                                                           \
	X("flow", REC_U64, 0, REC_COL("flow", 4, 0, 0), rv_u64(f->id))                            \
	X("src", REC_STR, 0, REC_COL("ACK from", -21, 0, 0), rv_str(src))                          \
	X("dst", REC_STR, 0, REC_NOCOL, rv_str(dst))                                               \
	X("frame", REC_U64, 0, REC_COL("frame", 8, 0, 0), rv_u64(e->frame))                        \
	X("t_s", REC_F64, 6, REC_COL("t s", 10, 0, 6), rv_f64(rel_s(a, e->ts_ns)))                 \
	X("ack", REC_U64, 0, REC_COL("ack", 10, 0, 0), rv_u64(e->ack))                             \
	X("advancing", REC_BOOL, 0, REC_NOCOL, rv_bool(e->advancing))                              \
	X("dup", REC_BOOL, 0, REC_COL("dup", 3, 0, 0), rv_bool(e->dupack))                         \
	X("acked_bytes", REC_U64, 0, REC_COL("acked B", 8, 0, 0), rv_u64(e->acked_bytes))          \
	X("acked_segs", REC_U64, 0, REC_COL("segs", 4, 0, 0),                                      \
	  e->advancing ? rv_u64(e->acked_segs) : rv_null())                                        \
	X("covered_pkts", REC_U64, 0, REC_NOCOL, rv_u64(e->covered_pkts))                          \
	X("delay_us", REC_F64, 3, REC_COL("delay us", 10, 0, 1), us_or_null(e->delay_ns))         \
	X("data_frame", REC_U64, 0, REC_COL("data frm", 8, 0, 0),                                  \
	  e->data_frame ? rv_u64(e->data_frame) : rv_null())                                       \
	X("data_len", REC_U64, 0, REC_COL("data B", 6, 0, 0),                                      \
	  e->data_frame ? rv_u64(e->data_len) : rv_null())                                         \
	X("runt", REC_BOOL, 0, REC_COL("runt", 4, 0, 0), rv_bool(e->runt))                         \
	X("single", REC_BOOL, 0, REC_NOCOL, rv_bool(e->single))                                    \
	X("candidate", REC_BOOL, 0, REC_COL("cand", 4, 0, 0), rv_bool(e->candidate))
static const struct rec_field ack_fields[] = { ACK_FIELDS(REC_FIELD) };
static const struct rec_schema ack_schema = { "ack", ack_fields, ARRAY_SIZE(ack_fields) };

/* the ACKs of flow f's direction dir (d: its data from snd to rcv); hist its
 * segments-per-ACK histogram, maxd its longest delay */
#define ACK_SUM_FIELDS(X)                                                                        \
	X("flow", REC_U64, 0, REC_COL("flow", 4, 0, 0), rv_u64(f->id))                             \
	X("sender", REC_STR, 0, REC_COL("data sender", -21, 0, 0), rv_str(snd))                     \
	X("receiver", REC_STR, 0, REC_NOCOL, rv_str(rcv))                                           \
	X("side", REC_STR, 0, REC_COL("side", -8, 0, 0), rv_str(an_side_name(f->side[dir])))       \
	X("side_basis", REC_STR, 0, REC_COL("basis", -9, 0, 0),                                     \
	  rv_str(an_basis_name(f->side_basis[dir])))                                                 \
	X("mss", REC_U64, 0, REC_COL("mss", 5, 0, 0), rv_u64(an_dir_mss(a, f, dir)))               \
	X("acks", REC_U64, 0, REC_COL("acks", 8, 0, 0), rv_u64(d->acks))                           \
	X("advancing_acks", REC_U64, 0, REC_NOCOL, rv_u64(d->acks_adv))                             \
	X("dupacks", REC_U64, 0, REC_COL("dup", 6, 0, 0), rv_u64(d->dupacks))                      \
	X("delay_p50_us", REC_F64, 3, REC_COL("p50 us", 9, 0, 1), us_or_null(an_delay_pct(d, 50))) \
	X("delay_p90_us", REC_F64, 3, REC_COL("p90 us", 9, 0, 1), us_or_null(an_delay_pct(d, 90))) \
	X("delay_p99_us", REC_F64, 3, REC_COL("p99 us", 9, 0, 1), us_or_null(an_delay_pct(d, 99))) \
	X("delay_max_us", REC_F64, 3, REC_COL("max us", 9, 0, 1), us_or_null(maxd))                \
	X("segs_per_ack", REC_F64, 3, REC_COL("seg/ack", 7, 0, 2),                                  \
	  hist_n ? rv_f64((double)d->segs_acked / (double)hist_n) : rv_null())                       \
	X("segs_hist", REC_KV, 0, REC_NOCOL, rv_kv(hist, SEG_HIST_BUCKETS))                        \
	X("delack_ms", REC_F64, 3, REC_NOCOL, rv_f64((double)a->cfg.delack_ns * TK_MSEC_PER_NSEC_F)) \
	X("candidates", REC_U64, 0, REC_COL("cands", 6, 0, 0), rv_u64(d->candidates))
static const struct rec_field ack_sum_fields[] = { ACK_SUM_FIELDS(REC_FIELD) };
static const struct rec_schema ack_sum_schema = { "ack_summary", ack_sum_fields, ARRAY_SIZE(ack_sum_fields) };

/* an_dir.seg_hist's buckets, by their names */
static const char *const seg_hist_keys[] = { "1", "2", "3-4", "5-8", "9-16", "17+" };
#define SEG_HIST_BUCKETS ARRAY_SIZE(seg_hist_keys)

static struct rec_value us_or_null(int64_t ns)
{
	return ns < 0 ? rv_null() : rv_f64((double)ns * TK_USEC_PER_NSEC_F);
}

static void on_ack(void *ctx, const struct an_flow *f, const struct an_ack *e)
{
	struct an_job *j = ctx;
	const struct an *a = j->a;
	char src[64], dst[64];
	int ad = !e->data_dir;

	if (!j->cfg->each && !e->candidate)
		return;
	if (!job_writer(j)) {
		j->write_failed = true;
		return;
	}
	an_fmt_endpoint(f->family, f->addr[ad], f->port[ad], src, sizeof(src));
	an_fmt_endpoint(f->family, f->addr[!ad], f->port[!ad], dst, sizeof(dst));
	const struct rec_value v[] = { ACK_FIELDS(REC_VALUE) };
	if (rec_write(j->w, &ack_schema, v))
		j->write_failed = true;
}

static int write_ack_summary(struct rec_writer *w, const struct an *a, struct an_flow *f, int dir)
{
	struct an_dir *d = &f->d[dir];
	struct rec_kv hist[SEG_HIST_BUCKETS];
	char snd[64], rcv[64];
	uint64_t hist_n = 0;
	int64_t maxd = -1;

	_Static_assert(ARRAY_SIZE(seg_hist_keys) == ARRAY_SIZE(d->seg_hist), "a name per bucket");
	if (!d->data_bytes || !d->acks)
		return 0;
	for (size_t k = 0; k < SEG_HIST_BUCKETS; k++) {
		hist[k].key = seg_hist_keys[k];
		hist[k].val = d->seg_hist[k];
		hist_n += d->seg_hist[k];
	}
	for (uint64_t i = 0; i < d->ndelays; i++)
		if (d->delays[i] > maxd)
			maxd = d->delays[i];
	an_fmt_endpoint(f->family, f->addr[dir], f->port[dir], snd, sizeof(snd));
	an_fmt_endpoint(f->family, f->addr[!dir], f->port[!dir], rcv, sizeof(rcv));
	const struct rec_value v[] = { ACK_SUM_FIELDS(REC_VALUE) };
	return rec_write(w, &ack_sum_schema, v);
}

/* --- the command lines -------------------------------------------------------------- */

static const char file_help[] =
	"\n"
	"FILE is pcap or pcapng (any byte order, us or ns timestamps; \"-\" reads stdin,\n"
	"alone). Several FILEs (the ring of `bbrpcap capture --ring`: push-*.pcap;\n"
	"tcpdump -C/-W files) are read as one capture, in time order: ordered by their\n"
	"first frame's time, not as given or by name, and read one after the other, as\n"
	"`mergecap -a` joins files in that order; frame numbers run on across the files,\n"
	"as Wireshark numbers the merged file. Files that overlap in time are read all\n"
	"the same, with a warning naming both. Each file's link type decodes its frames.\n"
	"A damaged FILE: reading stops there, the records of what came before are still\n"
	"written, and the error names the file, the frame and its byte offset.\n"
	"\n"
	"A --flow that matches no flow of the capture is bad input: one line names it\n"
	"and says how many flows there are, and nothing is written. When some --flow\n"
	"match and others do not, a warning names those that do not.\n";

static void footer(FILE *f)
{
	fputs(file_help, f);
	fputs(bp_units_help, f);
}

/* the acks records, in words; after the units */
static void acks_footer(FILE *f)
{
	footer(f);
	fputs("\n"
	      "dup (per ACK) and dupacks (the summary's count) are the same duplicate ACKs, as\n"
	      "RFC 5681 defines them: data outstanding (seen above the ACK, or SACKed by it),\n"
	      "the highest cumulative ACK number again, no data, SYN, FIN or RST, and the\n"
	      "window of the ACK before (a window update is not a duplicate). tcptrace -l -r\n"
	      "counts the same, but for a FIN that repeats the number, which it counts too.\n"
	      "advancing says whether an ACK raised the cumulative ACK number.\n",
	      f);
}

/* --- gaps ------------------------------------------------------------------------- */

/* silence g of flow f, for the data that direction k (src -> dst) sends */
#define GAP_FIELDS(X)                                                                           \
	X("flow", REC_U64, 0, REC_COL("flow", 4, 0, 0), rv_u64(f->id))                            \
	X("src", REC_STR, 0, REC_COL("data sender", -21, 0, 0), rv_str(src))                       \
	X("dst", REC_STR, 0, REC_COL("data receiver", -21, 0, 0), rv_str(dst))                     \
	X("t_s", REC_F64, 6, REC_COL("t s", 10, 0, 3), rv_f64(rel_s(a, g->start_ns)))             \
	X("epoch_s", REC_F64, 6, REC_NOCOL, rv_f64((double)g->start_ns * TK_SEC_PER_NSEC_F))       \
	X("gap_us", REC_F64, 1, REC_COL("gap ms", 9, TK_MSEC_PER_USEC_F, 1),                        \
	  rv_f64((double)(g->end_ns - g->start_ns) * TK_USEC_PER_NSEC_F))                            \
	X("end_frame", REC_U64, 0, REC_COL("ends at", 8, 0, 0), rv_u64(g->frame))                 \
	X("inflight_bytes", REC_U64, 0, REC_COL("in flight B", 11, 0, 0), rv_u64(g->inflight[k])) \
	X("state", REC_STR, 0, REC_COL("state", -9, 0, 0), rv_str(g->inflight[k] ? "in_flight" : "idle"))
static const struct rec_field gap_fields[] = { GAP_FIELDS(REC_FIELD) };
static const struct rec_schema gap_schema = { "gap", gap_fields, ARRAY_SIZE(gap_fields) };

static void on_gap(void *ctx, const struct an_flow *f, const struct an_gap *g)
{
	struct an_job *j = ctx;
	const struct an *a = j->a;
	char src[64], dst[64];

	for (int k = 0; k < 2; k++) {
		if (!g->data[k])
			continue;
		if (!job_writer(j)) {
			j->write_failed = true;
			return;
		}
		an_fmt_endpoint(f->family, f->addr[k], f->port[k], src, sizeof(src));
		an_fmt_endpoint(f->family, f->addr[!k], f->port[!k], dst, sizeof(dst));
		const struct rec_value v[] = { GAP_FIELDS(REC_VALUE) };
		if (rec_write(j->w, &gap_schema, v))
			j->write_failed = true;
	}
}

#define TK_OPT_CFG struct an_cmd
static const struct opt flows_opts[] = {
	BP_OPT_E_ANALYSIS,
	OPT_E_STANDARD,
	OPT_E_END,
};

static const struct opt throughput_opts[] = {
	BP_OPT_E_ANALYSIS,
	OPT_E_DOUBLE_D("bin-ms", 0, "MS", bin_ms, 0.001, 3600000, TK_STR(BIN_MS_DEFAULT),
		       "bin width in milliseconds, 0.001..3600000;\n"
		       "bins start at the capture's first frame, like\n"
		       "tshark io,stat"),
	OPT_E_DOUBLE_D("dip-frac", 0, "F", dip_frac, 0, 1, TK_STR(DIP_FRAC_DEFAULT),
		       "a dip is a bin whose data rate is below F times the\n"
		       "moving median, 0..1"),
	OPT_E_U32_D("dip-window", 0, "N", dip_window, 3, 10001, TK_STR(DIP_WINDOW_DEFAULT),
		    "bins in the centred moving median, odd, 3..10001"),
	OPT_E_STANDARD,
	OPT_E_END,
};

static const struct opt gaps_opts[] = {
	BP_OPT_E_ANALYSIS,
	OPT_E_DOUBLE_D("min-ms", 0, "MS", gap_ms, 0.001, 3600000, TK_STR(GAP_MS_DEFAULT),
		       "the shortest silence reported, in milliseconds,\n"
		       "0.001..3600000; the default is what a live player\n"
		       "keeps buffered"),
	OPT_E_STANDARD,
	OPT_E_END,
};

static const struct opt acks_opts[] = {
	BP_OPT_E_ANALYSIS,
	OPT_E_FLAG("each", 0, each, "one record per ACK (default: only delayed-ACK\n"
				    "candidates), then one summary per flow direction"),
	OPT_E_DOUBLE_D("delack-ms", 0, "MS", delack_ms, 0, 3600000, TK_STR(DELACK_MS_DEFAULT),
		       "candidate threshold: ACKs delayed at least MS ms that\n"
		       "cover a runt (< MSS) or a single segment"),
	OPT_E_U32("mss", 0, "BYTES", mss, 1, 65535,
		  "MSS for segment counts (default: from the SYN's MSS\n"
		  "option, less 12 with timestamps; without a SYN, the\n"
		  "most frequent size)"),
	OPT_E_CHOICE_D("side", 0, "S", side, an_side_choices, "auto",
		     "where the capture was taken, relative to the data\n"
		     "sender: sender, receiver, or auto. Auto\n"
		     "uses, in order: the packet type of Linux cooked\n"
		     "captures (outgoing or incoming); TTLs (the local\n"
		     "side's still 64/128/255, the other's routed); the\n"
		     "handshake when one gap is 4x the other (SYN->SYN/ACK\n"
		     "is the round trip near the client); else side is\n"
		     "\"unknown\". From a sender-side capture an ACK's delay\n"
		     "includes the round trip; from a receiver-side capture\n"
		     "it is the receiver's own delay."),
	OPT_E_STANDARD,
	OPT_E_END,
};
#undef TK_OPT_CFG

static const int exit_codes[] = { TK_EXIT_OK, TK_EXIT_FAIL, TK_EXIT_USAGE, TK_EXIT_DATA, -1 };

static const struct opt_cli clis[] = {
	[CMD_FLOWS] = { "Usage: bbrpcap flows FILE... [OPTIONS]\n"
			"TCP flows: packets, bytes, duration and mean throughput per direction\n"
			"(tcptrace's counts: data, unique and retransmitted bytes), then one\n"
			"\"capture\" record: the file (several: comma-separated, in the order read),\n"
			"frames, TCP, other, cut and malformed frames, flows, duration and link types.\n"
			"\n",
			flows_opts, NULL, footer, exit_codes },
	[CMD_THROUGHPUT] = { "Usage: bbrpcap throughput FILE... [OPTIONS]\n"
			     "Throughput per flow, direction and time bin, from data sent and from\n"
			     "bytes ACKed, with dips marked; each direction that carried data, every\n"
			     "bin from its first to its last frame (empty bins too).\n"
			     "\n",
			     throughput_opts, NULL, footer, exit_codes },
	[CMD_ACKS] = { "Usage: bbrpcap acks FILE... [OPTIONS]\n"
		       "The ACK stream: the delay after the newest data each ACK covers,\n"
		       "segments per ACK, delayed-ACK candidates; then one summary per flow\n"
		       "direction.\n"
		       "\n",
		       acks_opts, NULL, acks_footer, exit_codes },
	[CMD_GAPS] = { "Usage: bbrpcap gaps FILE... [OPTIONS]\n"
		       "Each silence of a flow: no frame either way for --min-ms or more. One\n"
		       "record per silence and direction that had carried data, with the bytes\n"
		       "it had in flight (sent, not yet ACKed) as the silence began:\n"
		       "  idle       none: the sender sent nothing; its application wrote\n"
		       "             nothing, or its stack held what it wrote (bbrtrace's\n"
		       "             stalls say which)\n"
		       "  in_flight  some, and no ACK came: the receiver held its ACK, or the\n"
		       "             path held or lost the data or the ACK\n"
		       "\n",
		       gaps_opts, NULL, footer, exit_codes },
};

static const char *const cmd_names[] = { [CMD_FLOWS] = "flows", [CMD_THROUGHPUT] = "throughput",
					 [CMD_ACKS] = "acks", [CMD_GAPS] = "gaps" };

/* what the options say together */
static void check_args(enum cmd cmd, const struct an_cmd *cfg)
{
	if (cmd == CMD_THROUGHPUT && llround(cfg->bin_ms * TK_NSEC_PER_MSEC_F) % (long long)TK_NSEC_PER_USEC)
		cli_usage_die("--bin-ms: %g is not a whole number of microseconds", cfg->bin_ms);
	if (cmd == CMD_THROUGHPUT && cfg->dip_window % 2 == 0)
		cli_usage_die("--dip-window: %u is even; the window is centred, so it needs an odd count",
			      cfg->dip_window);
}

/* the options into cfg, the capture FILEs into in */
static void parse_args(enum cmd cmd, int argc, char **argv, struct an_cmd *cfg, struct bp_input *in)
{
	int first = opt_parse(&clis[cmd], argc, argv, cfg);

	if (first >= argc)
		cli_usage_die("%s: missing the capture FILE (see --help)", cmd_names[cmd]);
	check_args(cmd, cfg);
	in->paths = argv + first;
	in->n = (unsigned int)(argc - first);
	in->reader = (enum cap_reader)cfg->com.reader;
	bp_check_stdin(cmd_names[cmd], in->paths, in->n);
}

/* --- the run ------------------------------------------------------------------------ */

/* CSV: the record types each command writes share the file's one header */
static void declare_records(enum cmd cmd, struct rec_writer *w)
{
	switch (cmd) {
	case CMD_FLOWS:
		rec_writer_declare(w, &flow_schema);
		rec_writer_declare(w, &capture_schema);
		break;
	case CMD_THROUGHPUT:
		rec_writer_declare(w, &bin_schema);
		break;
	case CMD_ACKS:
		rec_writer_declare(w, &ack_schema);
		rec_writer_declare(w, &ack_sum_schema);
		break;
	case CMD_GAPS:
		rec_writer_declare(w, &gap_schema);
		break;
	default:
		break;
	}
}

/* the records' writer, opened on first use: nothing is created when nothing is written */
static struct rec_writer *job_writer(struct an_job *j)
{
	if (j->w || j->open_failed)
		return j->w;
	if (bp_open_records(&j->cfg->com, &j->out, &j->w) != TK_EXIT_OK) {
		j->open_failed = true;
		return NULL;
	}
	declare_records(j->cmd, j->w);
	return j->w;
}

static int setup(struct an_job *j)
{
	struct an_cmd *cfg = j->cfg;
	struct an_config acfg = {
		.bin_ns = j->cmd == CMD_THROUGHPUT ? llround(cfg->bin_ms * TK_NSEC_PER_MSEC_F) : 0,
		.acks = j->cmd == CMD_ACKS,
		.mss = cfg->mss,
		.delack_ns = llround(cfg->delack_ms * TK_NSEC_PER_MSEC_F),
		.side = (enum an_side)cfg->side,
		.sel = cfg->com.sel,
		.nsel = cfg->com.nsel,
		.on_ack = j->cmd == CMD_ACKS ? on_ack : NULL,
		.gap_ns = llround(cfg->gap_ms * TK_NSEC_PER_MSEC_F),
		.on_gap = j->cmd == CMD_GAPS ? on_gap : NULL,
		.ctx = j,
	};

	j->a = an_new(&acfg);
	if (!j->a) {
		elog("out of memory");
		return TK_EXIT_FAIL;
	}
	return TK_EXIT_OK;
}

/* each chosen flow's records, then the capture's; -1 when a write failed */
static int report(struct an_job *j)
{
	int wrc = j->write_failed || !job_writer(j) ? -1 : 0;

	for (uint32_t i = 0; i < j->a->nflows && !wrc; i++) {
		struct an_flow *f = j->a->flows[i];

		if (!f->selected)
			continue;
		if (j->cmd == CMD_FLOWS)
			wrc = write_flow(j->w, j->a, f);
		for (int dir = 0; dir < 2 && !wrc; dir++) {
			if (j->cmd == CMD_THROUGHPUT)
				wrc = write_bins(j, f, dir);
			else if (j->cmd == CMD_ACKS)
				wrc = write_ack_summary(j->w, j->a, f, dir);
		}
	}
	if (j->cmd == CMD_FLOWS && !wrc)
		wrc = write_capture(j->w, j->in.order, j->a);
	return wrc;
}

/* the analysis, then the records unless --flow chose nothing; a TK_EXIT_* code */
static int run(struct an_job *j)
{
	bool opened = false;
	int rc = bp_analyse(&j->in, j->a, &opened), sel;

	if (!opened || rc == TK_EXIT_FAIL)
		return rc;
	sel = bp_check_selection(&j->cfg->com, &j->in, j->a);
	if (sel != TK_EXIT_OK)
		return sel;
	if (report(j))
		return TK_EXIT_FAIL;
	return rc;
}

static int analysis_main(enum cmd cmd, int argc, char **argv)
{
	struct an_cmd cfg = { 0 }; /* the defaults are the command's option table's */
	struct an_job j = { .cmd = cmd, .cfg = &cfg };
	int rc;

	parse_args(cmd, argc, argv, &cfg, &j.in);
	rc = setup(&j);
	if (rc == TK_EXIT_OK)
		rc = run(&j);
	if (j.w && bp_close_records(&cfg.com, j.out, j.w) != TK_EXIT_OK)
		rc = TK_EXIT_FAIL;
	an_free(j.a);
	free(j.in.order);
	return rc;
}

int bp_flows_main(int argc, char **argv)
{
	return analysis_main(CMD_FLOWS, argc, argv);
}

int bp_throughput_main(int argc, char **argv)
{
	return analysis_main(CMD_THROUGHPUT, argc, argv);
}

int bp_acks_main(int argc, char **argv)
{
	return analysis_main(CMD_ACKS, argc, argv);
}

int bp_gaps_main(int argc, char **argv)
{
	return analysis_main(CMD_GAPS, argc, argv);
}
