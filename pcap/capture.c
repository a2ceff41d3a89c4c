// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbrpcap capture: libpcap live capture with a kernel BPF filter, a
 * headers-only snaplen and nanosecond timestamps, written as pcap (libpcap's
 * dumper) or pcapng (written here: libpcap 1.10 cannot write pcapng), into a
 * ring of N files of M MB so that a long push can be captured safely.
 */
#include <errno.h>
#include <math.h>
#include <pcap/pcap.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "common.h"
#include "log.h"
#include "opt.h"
#include "pcap/bbrpcap.h"
#include "record.h"

#define DEFAULT_SNAPLEN 128 /* Ethernet + 2 VLAN tags + IPv6 + TCP with 40 bytes of options */

struct writer {
	const char *path;       /* as given with -w */
	bool pcapng;
	unsigned int ring_files;  /* 0: one file, no ring */
	uint64_t ring_bytes;
	uint64_t seq;           /* number of the current ring file */
	pcap_t *pcap;
	pcap_dumper_t *dumper;  /* pcap */
	FILE *ng;               /* pcapng */
	uint64_t bytes;         /* in the current file */
	uint64_t files;         /* files opened */
	uint64_t written;       /* frames written */
	const char *ifname;
	bool failed;
	char cur[4096];
};

static pcap_t *live;
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
	if (live)
		pcap_breakloop(live);
}

/* -w FILE, or its ring file number seq */
static void ring_name(const struct writer *w, uint64_t seq, char *buf, size_t len)
{
	if (w->ring_files)
		bp_ring_name(w->path, seq, buf, len);
	else
		snprintf(buf, len, "%s", w->path);
}

/* --- pcapng ------------------------------------------------------------------------ */

static void ng_put(struct writer *w, const void *p, size_t n)
{
	if (fwrite(p, 1, n, w->ng) != n)
		w->failed = true;
	w->bytes += n;
}

static void ng_u32(struct writer *w, uint32_t v) { ng_put(w, &v, 4); }

static void ng_header(struct writer *w)
{
	size_t nl = strlen(w->ifname), nlp = (nl + 3) & ~(size_t)3;
	uint32_t shb_len = 28, idb_len = 20 + 8 /* tsresol */ + 4 + (uint32_t)nlp /* if_name */ + 4 /* end */;
	uint16_t v16[2];
	uint64_t section_len = ~0ull;
	uint8_t tsres[4] = { 9, 0, 0, 0 }; /* nanoseconds */
	static const uint8_t zero[4];

	ng_u32(w, 0x0a0d0d0a);
	ng_u32(w, shb_len);
	ng_u32(w, 0x1a2b3c4d);
	v16[0] = 1;
	v16[1] = 0;
	ng_put(w, v16, 4);
	ng_put(w, &section_len, 8);
	ng_u32(w, shb_len);

	ng_u32(w, 1);
	ng_u32(w, idb_len);
	/* a DLT is a LINKTYPE except for raw IP, whose DLT is 12 on Linux */
	v16[0] = pcap_datalink(w->pcap) == DLT_RAW ? 101 : (uint16_t)pcap_datalink(w->pcap);
	v16[1] = 0;
	ng_put(w, v16, 4);
	ng_u32(w, (uint32_t)pcap_snapshot(w->pcap));
	v16[0] = 9; /* if_tsresol */
	v16[1] = 1;
	ng_put(w, v16, 4);
	ng_put(w, tsres, 4);
	v16[0] = 2; /* if_name */
	v16[1] = (uint16_t)nl;
	ng_put(w, v16, 4);
	ng_put(w, w->ifname, nl);
	ng_put(w, zero, nlp - nl);
	ng_u32(w, 0); /* opt_endofopt */
	ng_u32(w, idb_len);
}

static void ng_packet(struct writer *w, const struct pcap_pkthdr *h, const u_char *data)
{
	uint32_t pad = (4 - (h->caplen & 3)) & 3;
	uint32_t blen = 32 + h->caplen + pad;
	uint64_t ts = (uint64_t)h->ts.tv_sec * TK_NSEC_PER_SEC + (uint64_t)h->ts.tv_usec; /* nano precision */
	static const uint8_t zero[4];
	uint32_t hdr[7] = { 6, blen, 0, (uint32_t)(ts >> 32), (uint32_t)ts, h->caplen, h->len };

	ng_put(w, hdr, sizeof(hdr));
	ng_put(w, data, h->caplen);
	ng_put(w, zero, pad);
	ng_u32(w, blen);
}

/* --- files ------------------------------------------------------------------------- */

static void close_current(struct writer *w)
{
	if (w->dumper) {
		if (pcap_dump_flush(w->dumper))
			w->failed = true;
		pcap_dump_close(w->dumper);
		w->dumper = NULL;
	}
	if (w->ng) {
		if (fclose(w->ng))
			w->failed = true;
		w->ng = NULL;
	}
}

static int open_next(struct writer *w)
{
	close_current(w);
	w->seq++;
	ring_name(w, w->seq, w->cur, sizeof(w->cur));
	if (w->ring_files && w->seq > w->ring_files) {
		char old[4096];

		ring_name(w, w->seq - w->ring_files, old, sizeof(old));
		if (unlink(old) && errno != ENOENT)
			wlog("%s: cannot remove the oldest ring file: %s", old, strerror(errno));
	}
	w->bytes = 0;
	if (w->pcapng) {
		w->ng = fopen(w->cur, "w");
		if (!w->ng) {
			elog("%s: cannot create: %s", w->cur, strerror(errno));
			return -1;
		}
		setvbuf(w->ng, NULL, _IOFBF, 1 << 20);
		ng_header(w);
	} else {
		w->dumper = pcap_dump_open(w->pcap, w->cur);
		if (!w->dumper) {
			elog("%s: cannot create: %s", w->cur, pcap_geterr(w->pcap));
			return -1;
		}
		w->bytes = 24;
	}
	w->files++;
	return 0;
}

static void on_packet(u_char *user, const struct pcap_pkthdr *h, const u_char *data)
{
	struct writer *w = (struct writer *)user;

	if (w->failed)
		return;
	if (w->ring_files && w->bytes > 64 && w->bytes + 32 + h->caplen > w->ring_bytes && open_next(w)) {
		w->failed = true;
		pcap_breakloop(w->pcap);
		return;
	}
	if (w->pcapng) {
		ng_packet(w, h, data);
	} else {
		pcap_dump((u_char *)w->dumper, h, data);
		w->bytes += 16 + h->caplen;
	}
	w->written++;
	if (w->failed)
		pcap_breakloop(w->pcap);
}

/* --- the filter --------------------------------------------------------------- */

static int append_endpoint(char *buf, size_t len, size_t *n, const struct an_endpoint *e, const char *dirword)
{
	char a[64];
	int k = 0;

	if (!e->any_addr)
		k = snprintf(buf + *n, len - *n, " and %s%shost %s", dirword, *dirword ? " " : "",
			     an_fmt_addr(e->family, e->addr, a, sizeof(a)));
	if (k < 0 || (size_t)k >= len - *n)
		return -1;
	*n += (size_t)k;
	if (!e->any_port) {
		k = snprintf(buf + *n, len - *n, " and %s%sport %u", dirword, *dirword ? " " : "", e->port);
		if (k < 0 || (size_t)k >= len - *n)
			return -1;
		*n += (size_t)k;
	}
	return 0;
}

/* "tcp and ((A and B) or (...))" from the --flow endpoints, then --filter */
static int build_filter(const struct bp_common *c, const char *extra, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "tcp");

	if (c->nsel) {
		n += (size_t)snprintf(buf + n, len - n, " and (");
		for (unsigned int i = 0; i < c->nsel; i++) {
			const struct an_sel *s = &c->sel[i];
			int k = snprintf(buf + n, len - n, "%s(tcp", i ? " or " : "");

			if (k < 0 || (size_t)k >= len - n)
				return -1;
			n += (size_t)k;
			if (s->nend == 1) {
				if (append_endpoint(buf, len, &n, &s->end[0], ""))
					return -1;
			} else {
				/* either direction: (src A and dst B) or (src B and dst A) */
				size_t mark = n;
				char tmp[512];

				if (append_endpoint(buf, len, &n, &s->end[0], "src") ||
				    append_endpoint(buf, len, &n, &s->end[1], "dst"))
					return -1;
				snprintf(tmp, sizeof(tmp), "%.*s", (int)(n - mark), buf + mark);
				n = mark;
				k = snprintf(buf + n, len - n, " and ((tcp%s) or (tcp", tmp);
				if (k < 0 || (size_t)k >= len - n)
					return -1;
				n += (size_t)k;
				if (append_endpoint(buf, len, &n, &s->end[1], "src") ||
				    append_endpoint(buf, len, &n, &s->end[0], "dst"))
					return -1;
				k = snprintf(buf + n, len - n, "))");
				if (k < 0 || (size_t)k >= len - n)
					return -1;
				n += (size_t)k;
			}
			k = snprintf(buf + n, len - n, ")");
			if (k < 0 || (size_t)k >= len - n)
				return -1;
			n += (size_t)k;
		}
		n += (size_t)snprintf(buf + n, len - n, ")");
	}
	if (extra && n < len)
		n += (size_t)snprintf(buf + n, len - n, " and (%s)", extra);
	return n < len ? 0 : -1;
}

/* --- the command line ---------------------------------------------------------- */

#define SNAPLEN_MIN 64        /* Ethernet + IPv4 + a TCP header without options: less says nothing */
#define RING_MB_DEFAULT 100
#define BUFFER_MB_DEFAULT 64  /* the kernel's buffer: a second of a few Gbit/s of headers */

struct cap_opts {
	struct bp_common com; /* first: --flow's callback finds it at cfg; -f and -o for the summary */
	const char *iface, *path, *extra, *linktype;
	int dlt;              /* from --linktype; -1: the device's */
	uint32_t snaplen, ring, ring_mb, buffer_mb;
	uint64_t count;
	double duration;
	bool pcapng;
};

static int set_flow(void *cfg, const char *opt, const char *val)
{
	struct cap_opts *o = cfg;

	if (bp_opt_flow(cfg, opt, val))
		return -1;
	if (o->com.sel[o->com.nsel - 1].id) {
		elog("%s: a flow number means nothing to a live capture; name endpoints", opt);
		return -1;
	}
	return 0;
}

static int set_write(void *cfg, const char *opt, const char *val)
{
	if (!*val) {
		elog("%s: the file name is empty", opt);
		return -1;
	}
	((struct cap_opts *)cfg)->path = val;
	return 0;
}

static int set_linktype(void *cfg, const char *opt, const char *val)
{
	struct cap_opts *o = cfg;

	o->dlt = pcap_datalink_name_to_val(val);
	if (o->dlt < 0) {
		elog("%s: '%s' is not a link type name (e.g. EN10MB, LINUX_SLL2)", opt, val);
		return -1;
	}
	o->linktype = val;
	return 0;
}

#define TK_OPT_CFG struct cap_opts
static const struct opt options[] = {
	OPT_E_STR("interface", 'i', "IFACE", iface, "device to capture on (\"any\": all, as Linux cooked)"),
	OPT_E_CALL("write", 'w', "FILE", set_write, "the capture file; with --ring, FILE-000001.pcap, ..."),
	OPT_E_CALL("flow", 0, "SPEC", set_flow,
		   "only these flows (repeatable): ADDR:PORT,\n"
		   "[ADDR6]:PORT, :PORT, ADDR:*, or A-B for both endpoints"),
	OPT_E_STR("filter", 0, "EXPR", extra, "more pcap-filter(7) terms, ANDed with the above"),
	OPT_E_U32_D("snaplen", 's', "BYTES", snaplen, SNAPLEN_MIN, CAP_MAX_CAPLEN, TK_STR(DEFAULT_SNAPLEN),
		    "bytes kept per packet, 64..262144; the default\n"
		    "keeps the headers"),
	OPT_E_FLAG("pcapng", 0, pcapng, "write pcapng (default: pcap, nanosecond)"),
	OPT_E_U32("ring", 0, "N", ring, 2, 100000, "keep only the newest N files (2..100000; default: one\nfile)"),
	OPT_E_U32_D("ring-mb", 0, "MB", ring_mb, 1, 100000, TK_STR(RING_MB_DEFAULT),
		    "size of each ring file in MB, 1..100000"),
	OPT_E_DURATION(duration, "stop after SECONDS (default: until a signal)"),
	OPT_E_U64("count", 'c', "N", count, 1, (double)UINT64_MAX, "stop after N packets"),
	OPT_E_U32_D("buffer-mb", 0, "MB", buffer_mb, 1, 4096, TK_STR(BUFFER_MB_DEFAULT),
		    "kernel capture buffer, 1..4096"),
	OPT_E_CALL("linktype", 0, "NAME", set_linktype, "e.g. LINUX_SLL2 on \"any\" (default: the device's)"),
	OPT_E_FORMAT(com.format, com.format_set),
	OPT_E_OUTPUT(com.output, "write the summary record to FILE instead of stdout"),
	OPT_E_STANDARD,
	OPT_E_END,
};
#undef TK_OPT_CFG

static const int exit_codes[] = { TK_EXIT_OK, TK_EXIT_FAIL, TK_EXIT_USAGE, TK_EXIT_NOPERM, TK_EXIT_NODEV, -1 };
static const struct opt_cli cli = {
	"Usage: bbrpcap capture -i IFACE -w FILE [OPTIONS]\n"
	"Captures TCP with libpcap: the filter runs in the kernel (classic\n"
	"BPF on the socket), only the headers are kept (snaplen),\n"
	"timestamps are in nanoseconds. Stops on SIGINT, SIGTERM or SIGHUP\n"
	"(cleanly: the files are complete), after --duration or --count,\n"
	"and then writes a summary record with the kernel's drop count.\n"
	"\n",
	options,
	"\n"
	"Capturing needs root or CAP_NET_RAW.\n",
	NULL,
	exit_codes,
};

/* what the options say together; the filter from --flow and --filter */
static void check_args(struct cap_opts *o, char *filter, size_t len)
{
	if (!o->iface)
		cli_usage_die("capture: -i IFACE is required");
	if (!o->path)
		cli_usage_die("capture: -w FILE is required");
	if (build_filter(&o->com, o->extra, filter, len))
		cli_usage_die("--flow/--filter: the filter is longer than %zu bytes", len - 1);
}

static void parse_args(int argc, char **argv, struct cap_opts *o, char *filter, size_t len)
{
	int first = opt_parse(&cli, argc, argv, o);

	if (first < argc)
		cli_usage_die("capture: unexpected argument '%s'", argv[first]);
	check_args(o, filter, len);
}

/* --- the capture ------------------------------------------------------------------- */

#define READ_TIMEOUT_MS 100     /* the kernel hands over a partly filled block at least this often */
#define DRAIN_WAIT_NS (2 * READ_TIMEOUT_MS * TK_NSEC_PER_MSEC) /* at the end: two such periods */
#define DRAIN_READS 64          /* then at most this many non-blocking reads */
#define DISPATCH_MAX 1000000    /* packets handed over by one pcap_dispatch */

/* one capture: the device, the filter, the files, and what the kernel counted */
struct cap_run {
	pcap_t *p;
	struct writer w;
	char filter[8192];
	struct pcap_stat st;
	uint64_t t0_ns, t1_ns;
};

/* the device opened, with its filter in the kernel; a TK_EXIT_* code */
static int open_live(const struct cap_opts *o, struct cap_run *r)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	struct bpf_program prog;
	int lrc;

	r->p = pcap_create(o->iface, errbuf);
	if (!r->p) {
		elog("%s: %s", o->iface, errbuf);
		return TK_EXIT_FAIL;
	}
	pcap_set_snaplen(r->p, (int)o->snaplen);
	pcap_set_promisc(r->p, 0);
	pcap_set_timeout(r->p, READ_TIMEOUT_MS);
	pcap_set_buffer_size(r->p, (int)(o->buffer_mb << 20));
	pcap_set_tstamp_precision(r->p, PCAP_TSTAMP_PRECISION_NANO);
	lrc = pcap_activate(r->p);
	if (lrc < 0) {
		elog("%s: cannot capture: %s", o->iface, pcap_geterr(r->p));
		return lrc == PCAP_ERROR_PERM_DENIED	? TK_EXIT_NOPERM
		       : lrc == PCAP_ERROR_NO_SUCH_DEVICE ? TK_EXIT_NODEV
							  : TK_EXIT_FAIL;
	}
	if (lrc > 0)
		wlog("%s: %s", o->iface, pcap_statustostr(lrc));
	if (o->dlt >= 0 && pcap_set_datalink(r->p, o->dlt)) {
		elog("%s: link type %s: %s", o->iface, o->linktype, pcap_geterr(r->p));
		return TK_EXIT_FAIL;
	}
	if (pcap_compile(r->p, &prog, r->filter, 1, PCAP_NETMASK_UNKNOWN)) {
		elog("--filter: '%s': %s", r->filter, pcap_geterr(r->p));
		return TK_EXIT_USAGE;
	}
	lrc = pcap_setfilter(r->p, &prog);
	pcap_freecode(&prog);
	if (lrc) {
		elog("%s: cannot set the filter: %s", o->iface, pcap_geterr(r->p));
		return TK_EXIT_FAIL;
	}
	vlog("capturing on %s, snaplen %u, filter: %s", o->iface, o->snaplen, r->filter);
	return TK_EXIT_OK;
}

/* SIGINT, SIGTERM and SIGHUP (a closed terminal) stop the capture, from the start: one
 * that comes before the loop ends it before its first packet, with a summary */
static void catch_stop_signals(void)
{
	struct sigaction sa = { 0 };

	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
}

/* SIGALRM after --duration stops it too */
static void arm_timer(double duration)
{
	struct itimerval it = { 0 };

	if (duration <= 0)
		return;
	it.it_value.tv_sec = (time_t)duration;
	it.it_value.tv_usec = (suseconds_t)((duration - floor(duration)) * TK_USEC_PER_SEC_F);
	if (!it.it_value.tv_sec && !it.it_value.tv_usec)
		it.it_value.tv_usec = 1;
	setitimer(ITIMER_REAL, &it, NULL);
}

static bool count_left(const struct cap_opts *o, const struct cap_run *r)
{
	return !o->count || r->w.written < o->count;
}

/* at most DISPATCH_MAX, and no more than --count leaves */
static int batch(const struct cap_opts *o, const struct cap_run *r)
{
	if (!o->count)
		return -1;
	return (int)(o->count - r->w.written < DISPATCH_MAX ? o->count - r->w.written : DISPATCH_MAX);
}

/* until a signal, --duration, --count or an error; a TK_EXIT_* code */
static int capture_loop(const struct cap_opts *o, struct cap_run *r)
{
	char errbuf[PCAP_ERRBUF_SIZE];

	r->t0_ns = tk_mono_ns();
	while (!stop_signal && !r->w.failed && count_left(o, r)) {
		if (pcap_dispatch(r->p, batch(o, r), on_packet, (u_char *)&r->w) == PCAP_ERROR) {
			elog("%s: capture failed: %s", o->iface, pcap_geterr(r->p));
			return TK_EXIT_FAIL;
		}
	}
	if (!r->w.failed && count_left(o, r)) {
		/* frames still in the kernel's ring: its block timer hands the last
		 * block over within the timeout, then a non-blocking read drains it */
		struct timespec ts = { 0, DRAIN_WAIT_NS };

		nanosleep(&ts, NULL);
		if (pcap_setnonblock(r->p, 1, errbuf) == 0)
			for (int k = 0; k < DRAIN_READS && !r->w.failed && count_left(o, r); k++)
				if (pcap_dispatch(r->p, batch(o, r), on_packet, (u_char *)&r->w) <= 0)
					break;
	}
	return TK_EXIT_OK;
}

/* the files closed, the kernel's counts read; a TK_EXIT_* code */
static int stop_capture(const struct cap_opts *o, struct cap_run *r, int rc)
{
	r->t1_ns = tk_mono_ns();
	if (pcap_stats(r->p, &r->st))
		wlog("%s: no statistics: %s", o->iface, pcap_geterr(r->p));
	close_current(&r->w);
	live = NULL;
	if (r->w.failed) {
		elog("%s: write failed: %s", r->w.cur, strerror(errno ? errno : EIO));
		rc = TK_EXIT_FAIL;
	}
	if (r->st.ps_drop)
		wlog("the kernel dropped %u frames: the capture is incomplete (try --buffer-mb or a narrower filter)",
		     r->st.ps_drop);
	return rc;
}

/* the capture r on interface iface; lt its link type's name */
#define CAP_SUM_FIELDS(X)                                                                         \
	X("interface", REC_STR, 0, REC_COL("iface", -8, 0, 0), rv_str(o->iface))                     \
	X("linktype", REC_STR, 0, REC_COL("link", -10, 0, 0), rv_str(lt))                            \
	X("snaplen", REC_U64, 0, REC_COL("snap", 5, 0, 0), rv_u64((uint64_t)pcap_snapshot(r->p)))    \
	X("filter", REC_STR, 0, REC_NOCOL, rv_str(r->filter))                                        \
	X("written", REC_U64, 0, REC_COL("written", 9, 0, 0), rv_u64(r->w.written))                  \
	X("received", REC_U64, 0, REC_COL("received", 9, 0, 0), rv_u64(r->st.ps_recv))              \
	X("kernel_drops", REC_U64, 0, REC_COL("k.drops", 8, 0, 0), rv_u64(r->st.ps_drop))            \
	X("interface_drops", REC_U64, 0, REC_COL("if.drops", 8, 0, 0), rv_u64(r->st.ps_ifdrop))      \
	X("files", REC_U64, 0, REC_COL("files", 5, 0, 0), rv_u64(r->w.files))                        \
	X("last_file", REC_STR, 0, REC_COL("last file", -30, 0, 0), rv_str(r->w.cur))                \
	X("duration_s", REC_F64, 3, REC_COL("dur s", 7, 0, 1), rv_f64((double)(r->t1_ns - r->t0_ns) * TK_SEC_PER_NSEC_F))
static const struct rec_field cap_sum_fields[] = { CAP_SUM_FIELDS(REC_FIELD) };
static const struct rec_schema cap_sum_schema = { "capture_summary", cap_sum_fields, ARRAY_SIZE(cap_sum_fields) };

static int write_summary(struct cap_opts *o, const struct cap_run *r)
{
	int dlt = pcap_datalink(r->p);
	const char *lt = pcap_datalink_val_to_name(dlt);
	char ltbuf[24];
	struct rec_writer *w;
	FILE *out;
	int rc = bp_open_records(&o->com, &out, &w);

	if (rc != TK_EXIT_OK)
		return rc;
	if (!lt)
		lt = cap_linktype_name((uint32_t)dlt, ltbuf, sizeof(ltbuf));
	const struct rec_value v[] = { CAP_SUM_FIELDS(REC_VALUE) };
	rec_write(w, &cap_sum_schema, v);
	return bp_close_records(&o->com, out, w);
}

int bp_capture_main(int argc, char **argv)
{
	struct cap_opts o = { .dlt = -1 }; /* the values' defaults are the option table's */
	struct cap_run r = { 0 };
	int rc;

	catch_stop_signals();
	parse_args(argc, argv, &o, r.filter, sizeof(r.filter));
	r.w = (struct writer){ .path = o.path, .pcapng = o.pcapng, .ring_files = o.ring,
			       .ring_bytes = (uint64_t)o.ring_mb << 20, .ifname = o.iface };
	rc = open_live(&o, &r);
	if (rc == TK_EXIT_OK) {
		r.w.pcap = r.p;
		rc = open_next(&r.w) ? TK_EXIT_FAIL : TK_EXIT_OK;
	}
	if (rc == TK_EXIT_OK) {
		live = r.p;
		arm_timer(o.duration);
		rc = stop_capture(&o, &r, capture_loop(&o, &r));
		if (write_summary(&o, &r) != TK_EXIT_OK)
			rc = TK_EXIT_FAIL;
	}
	if (r.p)
		pcap_close(r.p);
	return rc;
}
