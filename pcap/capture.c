// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbrpcap capture: libpcap live capture with a kernel BPF filter, a
 * headers-only snaplen and nanosecond timestamps, written as pcap (libpcap's
 * dumper) or pcapng (written here: libpcap 1.10 cannot write pcapng), into a
 * ring of N files of M MB so that a long push can be captured safely.
 */
#include <errno.h>
#include <getopt.h>
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

/* x.pcap -> x-000001.pcap, x -> x-000001 */
static void ring_name(const struct writer *w, uint64_t seq, char *buf, size_t len)
{
	const char *slash = strrchr(w->path, '/'), *dot = strrchr(w->path, '.');

	if (!w->ring_files) {
		snprintf(buf, len, "%s", w->path);
		return;
	}
	if (dot && (!slash || dot > slash + 1))
		snprintf(buf, len, "%.*s-%06llu%s", (int)(dot - w->path), w->path, (unsigned long long)seq, dot);
	else
		snprintf(buf, len, "%s-%06llu", w->path, (unsigned long long)seq);
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
	uint64_t ts = (uint64_t)h->ts.tv_sec * 1000000000 + (uint64_t)h->ts.tv_usec; /* nano precision */
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

/* --- the command ------------------------------------------------------------------ */

static const struct rec_field cap_sum_fields[] = {
	{ "interface", REC_STR, 0, "iface", -8 },
	{ "linktype", REC_STR, 0, "link", -10 },
	{ "snaplen", REC_U64, 0, "snap", 5 },
	{ "filter", REC_STR },
	{ "written", REC_U64, 0, "written", 9 },
	{ "received", REC_U64, 0, "received", 9 },
	{ "kernel_drops", REC_U64, 0, "k.drops", 8 },
	{ "interface_drops", REC_U64, 0, "if.drops", 8 },
	{ "files", REC_U64, 0, "files", 5 },
	{ "last_file", REC_STR, 0, "last file", -30 },
	{ "duration_s", REC_F64, 3, "dur s", 7, 0, 1 },
};
static const struct rec_schema cap_sum_schema = { "capture_summary", cap_sum_fields, ARRAY_SIZE(cap_sum_fields) };

static const char capture_usage[] =
	"Usage: bbrpcap capture -i IFACE -w FILE [OPTIONS]\n"
	"Captures TCP with libpcap: the filter runs in the kernel (classic BPF on the\n"
	"socket), only the headers are kept (snaplen), timestamps are in nanoseconds.\n"
	"Stops on SIGINT or SIGTERM (cleanly: the files are complete), after --duration or\n"
	"--count, and then prints a summary record with the kernel's drop count.\n"
	"\n"
	"Options:\n"
	"  -i, --interface IFACE  device to capture on (\"any\": all, as Linux cooked)\n"
	"  -w, --write FILE       output file; with --ring, FILE-000001.pcap, ...\n"
	"  --flow SPEC            only these flows (repeatable): ADDR:PORT, [ADDR6]:PORT,\n"
	"                         :PORT, ADDR:*, or A-B for both endpoints\n"
	"  --filter EXPR          more pcap-filter(7) terms, ANDed with the above\n"
	"  -s, --snaplen BYTES    bytes kept per frame (default 128: the headers; 64..262144)\n"
	"  --pcapng               write pcapng (default: pcap, nanosecond)\n"
	"  --ring N               keep only the newest N files (2..100000; default: one file)\n"
	"  --ring-mb MB           size of each ring file in MB (default 100; 1..100000)\n"
	"  --duration SECONDS     stop after this long (default: until a signal)\n"
	"  --count N              stop after N frames\n"
	"  --buffer-mb MB         kernel capture buffer (default 64; 1..4096)\n"
	"  --linktype NAME        e.g. LINUX_SLL2 on \"any\" (default: the device's)\n"
	"  --format FMT           summary as table, csv or json\n"
	"  -v, -q, -h/--help, --version\n"
	"Exit status: 0 success; 1 failure (no such device, write error); 2 bad arguments;\n"
	"3 no permission to capture (needs root or CAP_NET_RAW).\n";

int bp_capture_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "interface", required_argument, NULL, 'i' },
		{ "write", required_argument, NULL, 'w' },
		{ "snaplen", required_argument, NULL, 's' },
		{ "flow", required_argument, NULL, 1 },
		{ "filter", required_argument, NULL, 2 },
		{ "pcapng", no_argument, NULL, 3 },
		{ "ring", required_argument, NULL, 4 },
		{ "ring-mb", required_argument, NULL, 5 },
		{ "duration", required_argument, NULL, 6 },
		{ "count", required_argument, NULL, 7 },
		{ "buffer-mb", required_argument, NULL, 8 },
		{ "linktype", required_argument, NULL, 9 },
		{ "format", required_argument, NULL, 10 },
		{ "version", no_argument, NULL, 11 },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct bp_common com = { 0 };
	struct writer w = { 0 };
	const char *iface = NULL, *extra = NULL, *linktype = NULL;
	uint32_t snaplen = DEFAULT_SNAPLEN, ring = 0, ring_mb = 100, buffer_mb = 64;
	uint64_t count = 0;
	double duration = 0;
	char errbuf[PCAP_ERRBUF_SIZE], filter[8192], ltbuf[24];
	struct bpf_program prog;
	struct pcap_stat st = { 0 };
	struct rec_value v[ARRAY_SIZE(cap_sum_fields)];
	struct rec_writer *rw;
	struct timespec t0, t1;
	struct sigaction sa = { 0 };
	int opt, rc = TK_EXIT_OK, lrc, dlt = -1;
	pcap_t *p;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "i:w:s:vqh", opts, NULL)) != -1) {
		switch (opt) {
		case 'i':
			iface = optarg;
			break;
		case 'w':
			if (!*optarg)
				cli_usage_die("-w: the file name is empty");
			w.path = optarg;
			break;
		case 's':
			if (cli_parse_u32("--snaplen", optarg, 64, 262144, &snaplen))
				exit(TK_EXIT_USAGE);
			break;
		case 1:
			bp_add_flow(&com, "--flow", optarg);
			if (com.sel[com.nsel - 1].id)
				cli_usage_die("--flow: a flow number means nothing to a live capture; name endpoints");
			break;
		case 2:
			extra = optarg;
			break;
		case 3:
			w.pcapng = true;
			break;
		case 4:
			if (cli_parse_u32("--ring", optarg, 2, 100000, &ring))
				exit(TK_EXIT_USAGE);
			break;
		case 5:
			if (cli_parse_u32("--ring-mb", optarg, 1, 100000, &ring_mb))
				exit(TK_EXIT_USAGE);
			break;
		case 6:
			if (cli_parse_double("--duration", optarg, 0.001, 31536000, &duration))
				exit(TK_EXIT_USAGE);
			break;
		case 7:
			if (cli_parse_u64("--count", optarg, 1, UINT64_MAX, &count))
				exit(TK_EXIT_USAGE);
			break;
		case 8:
			if (cli_parse_u32("--buffer-mb", optarg, 1, 4096, &buffer_mb))
				exit(TK_EXIT_USAGE);
			break;
		case 9:
			dlt = pcap_datalink_name_to_val(optarg);
			if (dlt < 0)
				cli_usage_die("--linktype: '%s' is not a link type name (e.g. EN10MB, LINUX_SLL2)", optarg);
			linktype = optarg;
			break;
		case 10:
			if (rec_format_parse("--format", optarg, &com.format))
				exit(TK_EXIT_USAGE);
			com.format_set = true;
			break;
		case 11:
			cli_print_version();
			return TK_EXIT_OK;
		case 'v':
			log_set_level(log_get_level() + 1);
			break;
		case 'q':
			log_set_level(LOG_QUIET);
			break;
		case 'h':
			fputs(capture_usage, stdout);
			return TK_EXIT_OK;
		default:
			exit(TK_EXIT_USAGE);
		}
	}
	if (optind < argc)
		cli_usage_die("capture: unexpected argument '%s'", argv[optind]);
	if (!iface)
		cli_usage_die("capture: -i IFACE is required");
	if (!w.path)
		cli_usage_die("capture: -w FILE is required");
	if (build_filter(&com, extra, filter, sizeof(filter)))
		cli_usage_die("--flow/--filter: the filter is longer than %zu bytes", sizeof(filter) - 1);
	w.ring_files = ring;
	w.ring_bytes = (uint64_t)ring_mb << 20;
	w.ifname = iface;

	p = pcap_create(iface, errbuf);
	if (!p) {
		elog("%s: %s", iface, errbuf);
		return TK_EXIT_FAIL;
	}
	pcap_set_snaplen(p, (int)snaplen);
	pcap_set_promisc(p, 0);
	pcap_set_timeout(p, 100);
	pcap_set_buffer_size(p, (int)(buffer_mb << 20));
	pcap_set_tstamp_precision(p, PCAP_TSTAMP_PRECISION_NANO);
	lrc = pcap_activate(p);
	if (lrc < 0) {
		elog("%s: cannot capture: %s", iface, pcap_geterr(p));
		pcap_close(p);
		return lrc == PCAP_ERROR_PERM_DENIED ? TK_EXIT_NOPERM : TK_EXIT_FAIL;
	}
	if (lrc > 0)
		wlog("%s: %s", iface, pcap_statustostr(lrc));
	if (dlt >= 0 && pcap_set_datalink(p, dlt)) {
		elog("%s: link type %s: %s", iface, linktype, pcap_geterr(p));
		pcap_close(p);
		return TK_EXIT_FAIL;
	}
	if (pcap_compile(p, &prog, filter, 1, PCAP_NETMASK_UNKNOWN)) {
		elog("--filter: '%s': %s", filter, pcap_geterr(p));
		pcap_close(p);
		return TK_EXIT_USAGE;
	}
	if (pcap_setfilter(p, &prog)) {
		elog("%s: cannot set the filter: %s", iface, pcap_geterr(p));
		pcap_freecode(&prog);
		pcap_close(p);
		return TK_EXIT_FAIL;
	}
	pcap_freecode(&prog);
	vlog("capturing on %s, snaplen %u, filter: %s", iface, snaplen, filter);
	w.pcap = p;
	if (open_next(&w)) {
		pcap_close(p);
		return TK_EXIT_FAIL;
	}

	live = p;
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	if (duration > 0) {
		struct itimerval it = { 0 };

		it.it_value.tv_sec = (time_t)duration;
		it.it_value.tv_usec = (suseconds_t)((duration - floor(duration)) * 1e6);
		if (!it.it_value.tv_sec && !it.it_value.tv_usec)
			it.it_value.tv_usec = 1;
		setitimer(ITIMER_REAL, &it, NULL);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!stop_signal && !w.failed && (!count || w.written < count)) {
		lrc = pcap_dispatch(p, count ? (int)(count - w.written < 1000000 ? count - w.written : 1000000) : -1,
				    on_packet, (u_char *)&w);
		if (lrc == PCAP_ERROR) {
			elog("%s: capture failed: %s", iface, pcap_geterr(p));
			rc = TK_EXIT_FAIL;
			break;
		}
	}
	if (rc == TK_EXIT_OK && !w.failed && (!count || w.written < count)) {
		/* frames still in the kernel's ring: its block timer hands the last
		 * block over within the timeout, then a non-blocking read drains it */
		struct timespec ts = { 0, 200 * 1000000 };

		nanosleep(&ts, NULL);
		if (pcap_setnonblock(p, 1, errbuf) == 0)
			for (int k = 0; k < 64 && !w.failed && (!count || w.written < count); k++)
				if (pcap_dispatch(p, count ? (int)(count - w.written) : -1, on_packet, (u_char *)&w) <= 0)
					break;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (pcap_stats(p, &st))
		wlog("%s: no statistics: %s", iface, pcap_geterr(p));
	close_current(&w);
	live = NULL;
	if (w.failed) {
		elog("%s: write failed: %s", w.cur, strerror(errno ? errno : EIO));
		rc = TK_EXIT_FAIL;
	}
	if (st.ps_drop)
		wlog("the kernel dropped %u frames: the capture is incomplete (try --buffer-mb or a narrower filter)",
		     st.ps_drop);
	if (!com.format_set)
		com.format = rec_format_default(stdout);
	rw = rec_writer_new(com.format, stdout);
	v[0] = rv_str(iface);
	v[1] = rv_str(pcap_datalink_val_to_name(pcap_datalink(p)) ? pcap_datalink_val_to_name(pcap_datalink(p))
								   : cap_linktype_name((uint32_t)pcap_datalink(p), ltbuf, sizeof(ltbuf)));
	v[2] = rv_u64((uint64_t)pcap_snapshot(p));
	v[3] = rv_str(filter);
	v[4] = rv_u64(w.written);
	v[5] = rv_u64(st.ps_recv);
	v[6] = rv_u64(st.ps_drop);
	v[7] = rv_u64(st.ps_ifdrop);
	v[8] = rv_u64(w.files);
	v[9] = rv_str(w.cur);
	v[10] = rv_f64((double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9);
	if (!rw || rec_write(rw, &cap_sum_schema, v)) {
		elog("writing the summary failed");
		rc = TK_EXIT_FAIL;
	}
	if (rec_writer_free(rw) && rc == TK_EXIT_OK) {
		elog("writing the summary failed");
		rc = TK_EXIT_FAIL;
	}
	pcap_close(p);
	return rc;
}
