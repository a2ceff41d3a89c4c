// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbrpcap: what the wire showed. Flows, throughput with its dips, the ACK
 * stream, and the frame behind every BBR sample.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common.h"
#include "log.h"
#include "pcap/bbrpcap.h"
#include "record.h"

static const char usage_text[] =
	"Usage: bbrpcap COMMAND [OPTIONS] ...\n"
	"What the wire showed: TCP flows, throughput and its dips, the ACK stream, and\n"
	"the capture frame behind every bbrtrace sample.\n"
	"\n"
	"Commands:\n"
	"  capture -i IFACE -w FILE   live capture of chosen flows (libpcap, kernel BPF\n"
	"                             filter, headers-only snaplen, ring of files);\n"
	"                             see `bbrpcap capture --help`\n"
	"  flows FILE                 TCP flows: packets, bytes, duration, mean throughput\n"
	"  throughput FILE            throughput per flow, direction and time bin (CSV),\n"
	"                             from data sent and from bytes ACKed, with dips marked;\n"
	"                             each direction that carried data, every bin from its\n"
	"                             first to its last frame (empty bins too)\n"
	"  acks FILE                  the ACK stream: delay after the newest data each ACK\n"
	"                             covers, segments per ACK, delayed-ACK candidates\n"
	"  join TRACE.jsonl FILE      the frame of the ACK behind every bbrtrace sample and\n"
	"                             collapse; see `bbrpcap join --help`\n"
	"\n"
	"FILE is pcap or pcapng (any byte order, us or ns timestamps; \"-\" reads stdin).\n"
	"Link types: Ethernet with or without 802.1Q/802.1ad tags, Linux cooked SLL\n"
	"and SLL2, raw IPv4/IPv6, BSD loopback. Payload sizes come from the IP header,\n"
	"so headers-only captures (small snaplen) and TSO/GRO super-segments count right.\n"
	"\n"
	"Options of flows, throughput and acks:\n"
	"  --flow SPEC       only these flows (repeatable): a flow number from `flows`,\n"
	"                    an endpoint ADDR:PORT, [ADDR6]:PORT, :PORT or ADDR:*, or two\n"
	"                    endpoints A-B (either direction)\n"
	"  --format FMT      table, csv or json (default: csv for throughput; otherwise\n"
	"                    table on a terminal, json lines elsewhere)\n"
	"  --reader R        mmap (default: the file mapped, no copy) or libpcap\n"
	"                    (pcap_next_ex; for cross-checks; offsets not reported)\n"
	"  -v, -q            more or less on stderr\n"
	"throughput:\n"
	"  --bin-ms MS       bin width in milliseconds (default 100; 0.001..3600000);\n"
	"                    bins start at the capture's first frame, like tshark io,stat\n"
	"  --dip-frac F      a dip is a bin whose data rate is below F times the moving\n"
	"                    median (default 0.5; 0..1)\n"
	"  --dip-window N    bins in the centred moving median (default 21; odd, 3..10001)\n"
	"acks:\n"
	"  --each            one record per ACK (default: only delayed-ACK candidates),\n"
	"                    then one summary per flow direction\n"
	"  --delack-ms MS    candidate threshold: ACKs delayed at least MS ms that cover\n"
	"                    a runt (< MSS) or a single segment (default 10)\n"
	"  --mss BYTES       MSS for segment counts (default: from the SYN's MSS option,\n"
	"                    less 12 with timestamps; without a SYN, the most frequent size)\n"
	"  --side S          where the capture was taken, relative to the data sender:\n"
	"                    sender, receiver, or auto (default). Auto uses, in order: the\n"
	"                    packet type of Linux cooked captures (outgoing or incoming);\n"
	"                    TTLs (the local side's still 64/128/255, the other's routed);\n"
	"                    the handshake when one gap is 4x the other (SYN->SYN/ACK is the\n"
	"                    round trip near the client); else side is \"unknown\".\n"
	"                    From a sender-side capture an ACK's delay includes the round\n"
	"                    trip; from a receiver-side capture it is the receiver's own delay.\n"
	"\n"
	"Units: times in seconds (t_s, relative to the capture's first frame) or\n"
	"microseconds (_us); rates in bit/s (_bps; tables show Mbit/s); bytes are frame\n"
	"bytes (wire_bytes, as tshark counts) or TCP payload (data_bytes, as tcptrace).\n"
	"\n"
	"Exit status: 0 success; 1 failure; 2 bad arguments; 3 no permission (capture);\n"
	"5 damaged capture or trace (what came before the damage is still printed, and the\n"
	"error names the frame and its byte offset); 10 join --strict: a collapse found no frame.\n"
	"\n"
	"Other options: -h, --help; --version\n";

static void usage(FILE *out)
{
	fputs(usage_text, out);
}

static double rel_s(const struct an *a, int64_t ts)
{
	return (double)(ts - a->t0_ns) * 1e-9;
}

/* --- flows ------------------------------------------------------------------------ */

#define MBPS 1e-6
static const struct rec_field flow_fields[] = {
	{ "flow", REC_U64, 0, "flow", 4 },
	{ "a", REC_STR, 0, "A", -21 },
	{ "b", REC_STR, 0, "B", -21 },
	{ "first_s", REC_F64, 6, "start s", 10, 0, 3 },
	{ "duration_s", REC_F64, 6, "dur s", 8, 0, 3 },
	{ "pkts_ab", REC_U64, 0, "pkts A>B", 9 },
	{ "wire_bytes_ab", REC_U64, 0, "bytes A>B", 11 },
	{ "data_pkts_ab", REC_U64 },
	{ "data_bytes_ab", REC_U64 },
	{ "unique_bytes_ab", REC_U64 },
	{ "rexmt_pkts_ab", REC_U64 },
	{ "rexmt_bytes_ab", REC_U64 },
	{ "throughput_ab_bps", REC_U64, 0, "Mb/s A>B", 9, MBPS, 2 },
	{ "pkts_ba", REC_U64, 0, "pkts B>A", 9 },
	{ "wire_bytes_ba", REC_U64, 0, "bytes B>A", 11 },
	{ "data_pkts_ba", REC_U64 },
	{ "data_bytes_ba", REC_U64 },
	{ "unique_bytes_ba", REC_U64 },
	{ "rexmt_pkts_ba", REC_U64 },
	{ "rexmt_bytes_ba", REC_U64 },
	{ "throughput_ba_bps", REC_U64, 0, "Mb/s B>A", 9, MBPS, 2 },
	{ "complete", REC_BOOL, 0, "SYN/FIN", 7 },
};
static const struct rec_schema flow_schema = { "flow", flow_fields, ARRAY_SIZE(flow_fields) };

static const struct rec_field capture_fields[] = {
	{ "file", REC_STR, 0, "file", -24 },
	{ "frames", REC_U64, 0, "frames", 9 },
	{ "tcp_frames", REC_U64, 0, "TCP", 9 },
	{ "other_frames", REC_U64, 0, "other", 7 },
	{ "truncated_frames", REC_U64, 0, "cut hdr", 7 },
	{ "malformed_frames", REC_U64, 0, "bad", 5 },
	{ "flows", REC_U64, 0, "flows", 6 },
	{ "duration_s", REC_F64, 6, "dur s", 9, 0, 3 },
	{ "linktypes", REC_STR, 0, "link types", -16 },
};
static const struct rec_schema capture_schema = { "capture", capture_fields, ARRAY_SIZE(capture_fields) };

/* tcptrace's throughput: unique bytes over the connection's elapsed time */
static struct rec_value dir_tput(const struct an_flow *f, int dir)
{
	int64_t dur = f->last_ns - f->first_ns;

	if (dur <= 0)
		return rv_null();
	return rv_u64((uint64_t)llround((double)f->d[dir].unique_bytes * 8e9 / (double)dur));
}

static int write_flow(struct rec_writer *w, const struct an *a, const struct an_flow *f)
{
	struct rec_value v[ARRAY_SIZE(flow_fields)];
	char ea[64], eb[64];
	int k = 0;

	v[k++] = rv_u64(f->id);
	v[k++] = rv_str(an_fmt_endpoint(f->family, f->addr[0], f->port[0], ea, sizeof(ea)));
	v[k++] = rv_str(an_fmt_endpoint(f->family, f->addr[1], f->port[1], eb, sizeof(eb)));
	v[k++] = rv_f64(rel_s(a, f->first_ns));
	v[k++] = rv_f64((double)(f->last_ns - f->first_ns) * 1e-9);
	for (int dir = 0; dir < 2; dir++) {
		const struct an_dir *d = &f->d[dir];

		v[k++] = rv_u64(d->pkts);
		v[k++] = rv_u64(d->wire_bytes);
		v[k++] = rv_u64(d->data_pkts);
		v[k++] = rv_u64(d->data_bytes);
		v[k++] = rv_u64(d->unique_bytes);
		v[k++] = rv_u64(d->rexmt_pkts);
		v[k++] = rv_u64(d->rexmt_bytes);
		v[k++] = dir_tput(f, dir);
	}
	v[k++] = rv_bool(f->d[0].syns && f->d[1].syns && (f->d[0].fins || f->d[1].fins || f->d[0].rsts || f->d[1].rsts));
	return rec_write(w, &flow_schema, v);
}

static int write_capture(struct rec_writer *w, const char *path, const struct an *a)
{
	struct rec_value v[ARRAY_SIZE(capture_fields)];
	char lts[128] = "", tmp[24];
	size_t n = 0;

	for (unsigned int i = 0; i < a->nlinktypes && n < sizeof(lts) - 1; i++)
		n += (size_t)snprintf(lts + n, sizeof(lts) - n, "%s%s", i ? "," : "",
				      cap_linktype_name(a->linktypes[i], tmp, sizeof(tmp)));
	v[0] = rv_str(path);
	v[1] = rv_u64(a->frames);
	v[2] = rv_u64(a->tcp_frames);
	v[3] = rv_u64(a->other_frames);
	v[4] = rv_u64(a->trunc_frames);
	v[5] = rv_u64(a->bad_frames);
	v[6] = rv_u64(a->nflows);
	v[7] = rv_f64(a->frames ? (double)(a->tlast_ns - a->t0_ns) * 1e-9 : 0);
	v[8] = rv_str(lts);
	return rec_write(w, &capture_schema, v);
}

/* --- throughput ------------------------------------------------------------------ */

static const struct rec_field bin_fields[] = {
	{ "flow", REC_U64, 0, "flow", 4 },
	{ "src", REC_STR, 0, "src", -21 },
	{ "dst", REC_STR, 0, "dst", -21 },
	{ "t_s", REC_F64, 6, "t s", 10, 0, 3 },
	{ "epoch_s", REC_F64, 6 },
	{ "frames", REC_U64, 0, "frames", 7 },
	{ "wire_bytes", REC_U64, 0, "wire B", 10 },
	{ "data_frames", REC_U64 },
	{ "data_bytes", REC_U64, 0, "data B", 10 },
	{ "acked_bytes", REC_U64, 0, "acked B", 10 },
	{ "wire_bps", REC_U64 },
	{ "data_bps", REC_U64, 0, "sent Mb/s", 9, MBPS, 2 },
	{ "acked_bps", REC_U64, 0, "acked Mb/s", 10, MBPS, 2 },
	{ "median_bps", REC_U64, 0, "median Mb/s", 11, MBPS, 2 },
	{ "dip", REC_BOOL, 0, "dip", 3 },
};
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

static int write_bins(struct rec_writer *w, const struct an *a, const struct an_flow *f, int dir,
		      double dip_frac, unsigned int win)
{
	const struct an_dir *d = &f->d[dir];
	double bin_s = (double)a->cfg.bin_ns * 1e-9;
	uint64_t *dense, *med, first, span, n, cur = 0;
	bool sparse;
	char src[64], dst[64];
	int rc = 0;

	if (!d->data_bytes || !d->nbins)
		return 0;
	first = d->bins[0].idx;
	span = d->bins[d->nbins - 1].idx - first + 1;
	sparse = span > DENSE_MAX_BINS;
	if (sparse)
		wlog("flow %u: its frames span %llu bins of %g ms (a clock jump?): empty bins are left out", f->id,
		     (unsigned long long)span, bin_s * 1e3);
	n = sparse ? d->nbins : span;
	dense = calloc(n, sizeof(*dense));
	med = calloc(n, sizeof(*med));
	if (!dense || !med) {
		free(dense);
		free(med);
		return -1;
	}
	for (uint64_t i = 0; i < d->nbins; i++)
		dense[sparse ? i : d->bins[i].idx - first] = d->bins[i].data_bytes;
	moving_median(dense, n, win, med);
	an_fmt_endpoint(f->family, f->addr[dir], f->port[dir], src, sizeof(src));
	an_fmt_endpoint(f->family, f->addr[!dir], f->port[!dir], dst, sizeof(dst));
	for (uint64_t i = 0; i < n && !rc; i++) {
		static const struct an_bin empty;
		uint64_t idx = sparse ? d->bins[i].idx : first + i;
		const struct an_bin *b = cur < d->nbins && d->bins[cur].idx == idx ? &d->bins[cur++] : &empty;
		struct rec_value v[ARRAY_SIZE(bin_fields)];
		double t = (double)idx * bin_s;

		v[0] = rv_u64(f->id);
		v[1] = rv_str(src);
		v[2] = rv_str(dst);
		v[3] = rv_f64(t);
		v[4] = rv_f64((double)a->t0_ns * 1e-9 + t);
		v[5] = rv_u64(b->frames);
		v[6] = rv_u64(b->wire_bytes);
		v[7] = rv_u64(b->data_frames);
		v[8] = rv_u64(b->data_bytes);
		v[9] = rv_u64(b->acked_bytes);
		v[10] = rv_u64((uint64_t)llround((double)b->wire_bytes * 8 / bin_s));
		v[11] = rv_u64((uint64_t)llround((double)b->data_bytes * 8 / bin_s));
		v[12] = rv_u64((uint64_t)llround((double)b->acked_bytes * 8 / bin_s));
		v[13] = rv_u64((uint64_t)llround((double)med[i] * 8 / bin_s));
		v[14] = rv_bool(med[i] > 0 && (double)b->data_bytes < dip_frac * (double)med[i]);
		rc = rec_write(w, &bin_schema, v);
	}
	free(dense);
	free(med);
	return rc;
}

/* --- acks ------------------------------------------------------------------------- */

static const struct rec_field ack_fields[] = {
	{ "flow", REC_U64, 0, "flow", 4 },
	{ "src", REC_STR, 0, "ACK from", -21 },
	{ "dst", REC_STR },
	{ "frame", REC_U64, 0, "frame", 8 },
	{ "t_s", REC_F64, 6, "t s", 10, 0, 6 },
	{ "ack", REC_U64, 0, "ack", 10 },
	{ "dup", REC_BOOL, 0, "dup", 3 },
	{ "acked_bytes", REC_U64, 0, "acked B", 8 },
	{ "acked_segs", REC_U64, 0, "segs", 4 },
	{ "covered_pkts", REC_U64 },
	{ "delay_us", REC_F64, 3, "delay us", 10, 0, 1 },
	{ "data_frame", REC_U64, 0, "data frm", 8 },
	{ "data_len", REC_U64, 0, "data B", 6 },
	{ "runt", REC_BOOL, 0, "runt", 4 },
	{ "single", REC_BOOL },
	{ "candidate", REC_BOOL, 0, "cand", 4 },
};
static const struct rec_schema ack_schema = { "ack", ack_fields, ARRAY_SIZE(ack_fields) };

static const struct rec_field ack_sum_fields[] = {
	{ "flow", REC_U64, 0, "flow", 4 },
	{ "sender", REC_STR, 0, "data sender", -21 },
	{ "receiver", REC_STR },
	{ "side", REC_STR, 0, "side", -8 },
	{ "side_basis", REC_STR, 0, "basis", -9 },
	{ "mss", REC_U64, 0, "mss", 5 },
	{ "acks", REC_U64, 0, "acks", 8 },
	{ "advancing_acks", REC_U64 },
	{ "dupacks", REC_U64, 0, "dup", 6 },
	{ "delay_p50_us", REC_F64, 3, "p50 us", 9, 0, 1 },
	{ "delay_p90_us", REC_F64, 3, "p90 us", 9, 0, 1 },
	{ "delay_p99_us", REC_F64, 3, "p99 us", 9, 0, 1 },
	{ "delay_max_us", REC_F64, 3, "max us", 9, 0, 1 },
	{ "segs_per_ack", REC_F64, 3, "seg/ack", 7, 0, 2 },
	{ "segs_hist", REC_KV },
	{ "delack_ms", REC_F64, 3 },
	{ "candidates", REC_U64, 0, "cands", 6 },
};
static const struct rec_schema ack_sum_schema = { "ack_summary", ack_sum_fields, ARRAY_SIZE(ack_sum_fields) };

struct acks_ctx {
	struct rec_writer *w;
	const struct an *a;
	bool each;
	bool failed;
};

static void on_ack(void *ctx, const struct an_flow *f, const struct an_ack *e)
{
	struct acks_ctx *c = ctx;
	struct rec_value v[ARRAY_SIZE(ack_fields)];
	char src[64], dst[64];
	int ad = !e->data_dir;

	if (!c->each && !e->candidate)
		return;
	v[0] = rv_u64(f->id);
	v[1] = rv_str(an_fmt_endpoint(f->family, f->addr[ad], f->port[ad], src, sizeof(src)));
	v[2] = rv_str(an_fmt_endpoint(f->family, f->addr[!ad], f->port[!ad], dst, sizeof(dst)));
	v[3] = rv_u64(e->frame);
	v[4] = rv_f64(rel_s(c->a, e->ts_ns));
	v[5] = rv_u64(e->ack);
	v[6] = rv_bool(!e->advancing);
	v[7] = rv_u64(e->acked_bytes);
	v[8] = e->advancing ? rv_u64(e->acked_segs) : rv_null();
	v[9] = rv_u64(e->covered_pkts);
	v[10] = e->delay_ns >= 0 ? rv_f64((double)e->delay_ns * 1e-3) : rv_null();
	v[11] = e->data_frame ? rv_u64(e->data_frame) : rv_null();
	v[12] = e->data_frame ? rv_u64(e->data_len) : rv_null();
	v[13] = rv_bool(e->runt);
	v[14] = rv_bool(e->single);
	v[15] = rv_bool(e->candidate);
	if (rec_write(c->w, &ack_schema, v))
		c->failed = true;
}

static struct rec_value us_or_null(int64_t ns)
{
	return ns < 0 ? rv_null() : rv_f64((double)ns * 1e-3);
}

static int write_ack_summary(struct rec_writer *w, const struct an *a, struct an_flow *f, int dir)
{
	static const char *const hist_keys[] = { "1", "2", "3-4", "5-8", "9-16", "17+" };
	struct an_dir *d = &f->d[dir];
	struct rec_value v[ARRAY_SIZE(ack_sum_fields)];
	struct rec_kv hist[6];
	char snd[64], rcv[64];
	uint64_t hist_n = 0;
	int64_t maxd = -1;

	if (!d->data_bytes || !d->acks)
		return 0;
	for (int k = 0; k < 6; k++) {
		hist[k].key = hist_keys[k];
		hist[k].val = d->seg_hist[k];
		hist_n += d->seg_hist[k];
	}
	for (uint64_t i = 0; i < d->ndelays; i++)
		if (d->delays[i] > maxd)
			maxd = d->delays[i];
	v[0] = rv_u64(f->id);
	v[1] = rv_str(an_fmt_endpoint(f->family, f->addr[dir], f->port[dir], snd, sizeof(snd)));
	v[2] = rv_str(an_fmt_endpoint(f->family, f->addr[!dir], f->port[!dir], rcv, sizeof(rcv)));
	v[3] = rv_str(an_side_name(f->side[dir]));
	v[4] = rv_str(an_basis_name(f->side_basis[dir]));
	v[5] = rv_u64(an_dir_mss(a, f, dir));
	v[6] = rv_u64(d->acks);
	v[7] = rv_u64(d->acks_adv);
	v[8] = rv_u64(d->dupacks);
	v[9] = us_or_null(an_delay_pct(d, 50));
	v[10] = us_or_null(an_delay_pct(d, 90));
	v[11] = us_or_null(an_delay_pct(d, 99));
	v[12] = us_or_null(maxd);
	v[13] = hist_n ? rv_f64((double)d->segs_acked / (double)hist_n) : rv_null();
	v[14] = rv_kv(hist, 6);
	v[15] = rv_f64((double)a->cfg.delack_ns * 1e-6);
	v[16] = rv_u64(d->candidates);
	return rec_write(w, &ack_sum_schema, v);
}

/* --- the analysis commands ---------------------------------------------------- */

enum cmd { CMD_FLOWS, CMD_THROUGHPUT, CMD_ACKS };

enum {
	OPT_FLOW = 256, OPT_FORMAT, OPT_READER, OPT_BIN_MS, OPT_DIP_FRAC, OPT_DIP_WINDOW, OPT_EACH,
	OPT_DELACK_MS, OPT_MSS, OPT_SIDE, OPT_VERSION,
};

static const struct option analysis_opts[] = {
	{ "flow", required_argument, NULL, OPT_FLOW },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "reader", required_argument, NULL, OPT_READER },
	{ "bin-ms", required_argument, NULL, OPT_BIN_MS },
	{ "dip-frac", required_argument, NULL, OPT_DIP_FRAC },
	{ "dip-window", required_argument, NULL, OPT_DIP_WINDOW },
	{ "each", no_argument, NULL, OPT_EACH },
	{ "delack-ms", required_argument, NULL, OPT_DELACK_MS },
	{ "mss", required_argument, NULL, OPT_MSS },
	{ "side", required_argument, NULL, OPT_SIDE },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ 0 },
};

static const char *const cmd_names[] = { "flows", "throughput", "acks" };

/* options that only some commands take */
static void only_for(enum cmd cmd, enum cmd want, const char *opt)
{
	if (cmd != want)
		cli_usage_die("%s: not an option of `bbrpcap %s` (only of %s)", opt, cmd_names[cmd], cmd_names[want]);
}

static int analysis_main(enum cmd cmd, int argc, char **argv)
{
	static const char *const readers[] = { "mmap", "libpcap", NULL };
	static const char *const sides[] = { "auto", "sender", "receiver", NULL };
	struct bp_common com = { .reader = CAP_READER_MMAP };
	struct an_config cfg = { .delack_ns = 10000000 };
	struct acks_ctx actx = { 0 };
	double bin_ms = 100, dip_frac = 0.5, delack_ms = 10;
	uint32_t dip_window = 21, mss = 0;
	bool each = false;
	struct rec_writer *w;
	struct an *a;
	int opt, rc, idx;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "vqh", analysis_opts, NULL)) != -1) {
		switch (opt) {
		case OPT_FLOW:
			bp_add_flow(&com, "--flow", optarg);
			break;
		case OPT_FORMAT:
			if (rec_format_parse("--format", optarg, &com.format))
				exit(TK_EXIT_USAGE);
			com.format_set = true;
			break;
		case OPT_READER:
			if (cli_parse_choice("--reader", optarg, readers, &idx))
				exit(TK_EXIT_USAGE);
			com.reader = (enum cap_reader)idx;
			break;
		case OPT_BIN_MS:
			only_for(cmd, CMD_THROUGHPUT, "--bin-ms");
			if (cli_parse_double("--bin-ms", optarg, 0.001, 3600000, &bin_ms))
				exit(TK_EXIT_USAGE);
			break;
		case OPT_DIP_FRAC:
			only_for(cmd, CMD_THROUGHPUT, "--dip-frac");
			if (cli_parse_double("--dip-frac", optarg, 0, 1, &dip_frac))
				exit(TK_EXIT_USAGE);
			break;
		case OPT_DIP_WINDOW:
			only_for(cmd, CMD_THROUGHPUT, "--dip-window");
			if (cli_parse_u32("--dip-window", optarg, 3, 10001, &dip_window))
				exit(TK_EXIT_USAGE);
			if (dip_window % 2 == 0)
				cli_usage_die("--dip-window: %u is even; the window is centred, so it needs an odd count",
					      dip_window);
			break;
		case OPT_EACH:
			only_for(cmd, CMD_ACKS, "--each");
			each = true;
			break;
		case OPT_DELACK_MS:
			only_for(cmd, CMD_ACKS, "--delack-ms");
			if (cli_parse_double("--delack-ms", optarg, 0, 3600000, &delack_ms))
				exit(TK_EXIT_USAGE);
			break;
		case OPT_MSS:
			only_for(cmd, CMD_ACKS, "--mss");
			if (cli_parse_u32("--mss", optarg, 1, 65535, &mss))
				exit(TK_EXIT_USAGE);
			break;
		case OPT_SIDE:
			only_for(cmd, CMD_ACKS, "--side");
			if (cli_parse_choice("--side", optarg, sides, &idx))
				exit(TK_EXIT_USAGE);
			cfg.side = (enum an_side)idx;
			break;
		case 'v':
			log_set_level(log_get_level() + 1);
			break;
		case 'q':
			log_set_level(LOG_QUIET);
			break;
		case 'h':
			usage(stdout);
			return TK_EXIT_OK;
		case OPT_VERSION:
			cli_print_version();
			return TK_EXIT_OK;
		default:
			exit(TK_EXIT_USAGE); /* getopt said why */
		}
	}
	if (optind >= argc)
		cli_usage_die("%s: missing the capture FILE", cmd_names[cmd]);
	if (optind + 1 < argc)
		cli_usage_die("%s: unexpected argument '%s' after FILE", cmd_names[cmd], argv[optind + 1]);
	if (cmd == CMD_THROUGHPUT) {
		cfg.bin_ns = (int64_t)llround(bin_ms * 1e6);
		if (cfg.bin_ns % 1000)
			cli_usage_die("--bin-ms: %g is not a whole number of microseconds", bin_ms);
	}
	if (!com.format_set)
		com.format = cmd == CMD_THROUGHPUT ? REC_CSV : rec_format_default(stdout);
	cfg.sel = com.sel;
	cfg.nsel = com.nsel;
	cfg.acks = cmd == CMD_ACKS;
	cfg.mss = mss;
	cfg.delack_ns = (int64_t)llround(delack_ms * 1e6);
	w = rec_writer_new(com.format, stdout);
	a = NULL;
	if (w) {
		actx.w = w;
		actx.each = each;
		cfg.on_ack = cmd == CMD_ACKS ? on_ack : NULL;
		cfg.ctx = &actx;
		a = an_new(&cfg);
		actx.a = a;
	}
	if (!w || !a) {
		elog("out of memory");
		return TK_EXIT_FAIL;
	}
	rc = bp_analyse(argv[optind], com.reader, a);
	if (rc != TK_EXIT_FAIL) {
		int wrc = actx.failed ? -1 : 0;

		for (uint32_t i = 0; i < a->nflows && !wrc; i++) {
			struct an_flow *f = a->flows[i];

			if (!f->selected)
				continue;
			if (cmd == CMD_FLOWS)
				wrc = write_flow(w, a, f);
			for (int dir = 0; dir < 2 && !wrc; dir++) {
				if (cmd == CMD_THROUGHPUT)
					wrc = write_bins(w, a, f, dir, dip_frac, dip_window);
				else if (cmd == CMD_ACKS)
					wrc = write_ack_summary(w, a, f, dir);
			}
		}
		if (cmd == CMD_FLOWS && !wrc)
			wrc = write_capture(w, argv[optind], a);
		if (rec_writer_flush(w) || wrc) {
			elog("writing the output failed");
			rc = TK_EXIT_FAIL;
		}
	}
	rec_writer_free(w);
	an_free(a);
	return rc;
}

int main(int argc, char **argv)
{
	const char *cmd;

	log_init("bbrpcap");
	if (argc < 2)
		cli_usage_die("missing a command (capture, flows, throughput, acks, join); see --help");
	cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		usage(stdout);
		return TK_EXIT_OK;
	}
	if (!strcmp(cmd, "--version")) {
		cli_print_version();
		return TK_EXIT_OK;
	}
	if (!strcmp(cmd, "flows"))
		return analysis_main(CMD_FLOWS, argc - 1, argv + 1);
	if (!strcmp(cmd, "throughput"))
		return analysis_main(CMD_THROUGHPUT, argc - 1, argv + 1);
	if (!strcmp(cmd, "acks"))
		return analysis_main(CMD_ACKS, argc - 1, argv + 1);
	if (!strcmp(cmd, "join"))
		return bp_join_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "capture"))
		return bp_capture_main(argc - 1, argv + 1);
	cli_usage_die("'%s' is not a command (capture, flows, throughput, acks, join); see --help", cmd);
}
