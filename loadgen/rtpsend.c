// SPDX-License-Identifier: GPL-2.0-only
/*
 * rtpsend: the media-server demo's sender. Sends RTP-like datagrams (see
 * rtp.h) at a fixed packet rate, each stamped with its send time, and
 * reads back whatever the server echoes. Where the kernel has no netem, it
 * can impair its own stream the way a bad network would (delay with jitter,
 * loss, reordering), so that the server sees the same thing.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "cli.h"
#include "common.h"
#include "log.h"
#include "opt.h"
#include "record.h"
#include "recout.h"

#include "rtp.h"

#define XSTR(x) #x
#define STR(x) XSTR(x)

#define DEFAULT_RATE 9000
#define MAX_RATE 2000000
#define DEFAULT_DURATION_S 5
#define DEFAULT_SIZE 200
#define MIN_SIZE 20              /* --help's words for RTP_MIN_LEN, which is an expression */
_Static_assert(MIN_SIZE == RTP_MIN_LEN, "rtpsend's --help names the smallest datagram");
#define MAX_SIZE 65000
#define DEFAULT_SSRC 24301       /* 0x5eed, written as --ssrc parses it: decimal */
#define MAX_EMULATED_MS 10000
#define STAMP_SLACK_NS TK_NSEC_PER_MSEC /* a packet made later than this is stamped when made */
#define DRAIN_EVERY_NS TK_NSEC_PER_MSEC /* echoes are read once a millisecond, not per packet */
/*
 * At the end, the sender waits for the last echoes until every datagram sent
 * has come back, or none has for LAST_ECHO_QUIET_NS (the rest are lost), and
 * never longer than LAST_ECHOES_MAX_NS. The quiet window is 4 x the 118 ms a
 * server beside a busy core held a datagram in a CI run, when a fixed 100 ms
 * wait missed 41 echoes of 500 that did come back.
 */
#define LAST_ECHO_QUIET_NS 500000000ULL
#define LAST_ECHOES_MAX_NS 3000000000ULL
#define LAST_ECHOES_POLL_NS 5000000

struct opts {
	struct sockaddr_storage to;
	socklen_t tolen;
	bool have_to;
	uint32_t rate;
	double duration_s;
	uint64_t count;
	uint32_t size;
	uint32_t ssrc;
	double delay_ms, jitter_ms, loss_pct, reorder_pct;
	uint64_t seed;
	struct rec_out out;
};

/* one run: the socket, the packets made and sent, the echoes, and how long
 * the send() calls took */
struct sender {
	int fd;
	uint8_t *buf;
	bool emulate;
	uint64_t start_ns, period_ns, next_drain_ns;
	uint64_t made, sent, lost, echoes, order;
	uint64_t send_n, send_max_ns;
	long send_max_seq;        /* the datagram whose send() took longest */
	double send_sum_ns;
};

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }

/* xorshift64*: reproducible, good enough for an emulated network */
static uint64_t rng_state;
static double urand(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (double)((rng_state * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

static double nrand(void)
{
	double u = urand(), v = urand();

	if (u < 1e-12)
		u = 1e-12;
	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* datagrams held back by the emulated network, released in time order */
struct held {
	uint64_t release_ns;
	uint64_t order;
	struct rtp_pkt p;
};

static struct held *heap;
static size_t nheap, capheap;

static bool earlier(const struct held *a, const struct held *b)
{
	return a->release_ns != b->release_ns ? a->release_ns < b->release_ns : a->order < b->order;
}

static int heap_push(const struct held *h)
{
	size_t i;

	if (nheap == capheap) {
		size_t ncap = capheap ? capheap * 2 : 1024;
		struct held *p = realloc(heap, ncap * sizeof(*p));

		if (!p)
			return -1;
		heap = p;
		capheap = ncap;
	}
	i = nheap++;
	heap[i] = *h;
	while (i && earlier(&heap[i], &heap[(i - 1) / 2])) {
		struct held t = heap[i];

		heap[i] = heap[(i - 1) / 2];
		heap[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
	return 0;
}

static void heap_pop(void)
{
	size_t i = 0;

	heap[0] = heap[--nheap];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		struct held t;

		if (l < nheap && earlier(&heap[l], &heap[m]))
			m = l;
		if (r < nheap && earlier(&heap[r], &heap[m]))
			m = r;
		if (m == i)
			break;
		t = heap[i];
		heap[i] = heap[m];
		heap[m] = t;
		i = m;
	}
}

/* --- the command line ----------------------------------------------------------------- */

static const char synopsis[] =
"Usage: rtpsend --to ADDR:PORT [OPTIONS]\n"
"Sends RTP-like datagrams (12-byte RTP header, then the send time) at a fixed\n"
"rate to a UDP server, reads back its echoes, and writes one summary record at\n"
"the end. The media-server demo's sender (repro/sfu.sh).\n"
"\n";

/* --help's part on the record, its keys from its schema (below) */
static void records_help(FILE *f);

static int set_to(void *cfg, const char *opt, const char *val)
{
	struct opts *o = cfg;

	if (cli_parse_endpoint(opt, val, &o->to, &o->tolen))
		return -1;
	o->have_to = true;
	return 0;
}

#define TK_OPT_CFG struct opts
static const struct opt options[] = {
	OPT_E_CALL("to", 0, "ADDR:PORT", set_to, "where to send ([V6ADDR]:PORT for IPv6); required"),
	OPT_E_U32_D("rate", 'r', "PPS", rate, 1, MAX_RATE, STR(DEFAULT_RATE), "packets per second, 1.." STR(MAX_RATE)),
	OPT_E_DURATION_D(duration_s, STR(DEFAULT_DURATION_S), "seconds to send"),
	OPT_E_U64("count", 'c', "N", count, 1, UINT32_MAX, "stop after N packets (default: rate x duration)"),
	OPT_E_U32_D("size", 's', "BYTES", size, MIN_SIZE, MAX_SIZE, STR(DEFAULT_SIZE),
		    "datagram size, " STR(MIN_SIZE) ".." STR(MAX_SIZE)),
	OPT_E_U32_D("ssrc", 0, "N", ssrc, 0, UINT32_MAX, STR(DEFAULT_SSRC), "RTP SSRC"),
	OPT_E_DOUBLE_D("delay-ms", 0, "MS", delay_ms, 0, MAX_EMULATED_MS, "0",
		       "emulate a network: delay every packet MS ms"),
	OPT_E_DOUBLE_D("jitter-ms", 0, "MS", jitter_ms, 0, MAX_EMULATED_MS, "0",
		       "... plus a normal random delay of this standard\n"
		       "deviation, as netem's \"delay MS JITTER\""),
	OPT_E_DOUBLE_D("loss", 0, "PCT", loss_pct, 0, 100, "0", "... and drop PCT percent of the packets"),
	OPT_E_DOUBLE_D("reorder", 0, "PCT", reorder_pct, 0, 100, "0",
		       "... and send PCT percent at once, ahead of the\n"
		       "delayed ones (netem's reorder)"),
	OPT_E_U64_D("seed", 0, "N", seed, 1, (double)UINT64_MAX, "1", "random seed for the emulation"),
	OPT_E_FORMAT(out.format, out.format_set),
	OPT_E_OUTPUT(out.path, "write the summary record to FILE instead of stdout"),
	OPT_E_STANDARD,
	OPT_E_END,
};
#undef TK_OPT_CFG

/* a send() that fails otherwise than ECONNREFUSED or ENOBUFS: exit 20 */
static const int exit_codes[] = { TK_EXIT_OK, TK_EXIT_FAIL, TK_EXIT_USAGE, TK_EXIT_NETWORK, -1 };
static const struct opt_cli cli = { synopsis, options, NULL, records_help, exit_codes };

static void parse_args(int argc, char **argv, struct opts *o)
{
	int first = opt_parse(&cli, argc, argv, o);

	if (first < argc)
		cli_usage_die("unexpected argument '%s' (see --help)", argv[first]);
	if (!o->have_to)
		cli_usage_die("--to: missing; where should the datagrams go? (see --help)");
	if (!o->count)
		o->count = (uint64_t)llround(o->rate * o->duration_s);
	if (!o->count)
		o->count = 1;
}

/* --- sending ---------------------------------------------------------------------------- */

static ssize_t timed_send(struct sender *s, const void *buf, size_t len, long seq)
{
	uint64_t t0 = tk_mono_ns(), d;
	ssize_t r = send(s->fd, buf, len, 0);

	d = tk_mono_ns() - t0;
	s->send_n++;
	s->send_sum_ns += (double)d;
	if (d > s->send_max_ns) {
		s->send_max_ns = d;
		s->send_max_seq = seq;
	}
	return r;
}

static void drain_echoes(struct sender *s)
{
	char buf[2048];

	while (recv(s->fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
		s->echoes++;
}

/* when the packet numbered n is due */
static uint64_t due_ns(const struct sender *s, uint64_t n)
{
	return s->start_ns + n * s->period_ns;
}

/* every packet whose time has come, into the (emulated) network; -1: no memory */
static int make_due(struct sender *s, const struct opts *o, uint64_t now)
{
	while (s->made < o->count && due_ns(s, s->made) <= now) {
		struct rtp_pkt p = { .seq = (uint16_t)s->made, .ssrc = o->ssrc };
		struct held h;

		p.send_ns = due_ns(s, s->made);
		if (p.send_ns < now - STAMP_SLACK_NS) /* far behind: stamp the truth */
			p.send_ns = now;
		p.ts = (uint32_t)(p.send_ns / (TK_NSEC_PER_SEC / RTP_CLOCK_HZ));
		s->made++;
		if (s->emulate && urand() * 100 < o->loss_pct) {
			s->lost++;
			continue;
		}
		h.p = p;
		h.order = s->order++;
		h.release_ns = now;
		if (s->emulate && !(urand() * 100 < o->reorder_pct)) {
			double d = o->delay_ms + o->jitter_ms * nrand();

			if (d > 0)
				h.release_ns = now + (uint64_t)(d * TK_NSEC_PER_MSEC_F);
		}
		if (heap_push(&h))
			return -1;
	}
	return 0;
}

/* sends what the (emulated) network releases by now; TK_EXIT_* */
static int send_released(struct sender *s, const struct opts *o, uint64_t now)
{
	while (nheap && heap[0].release_ns <= now) {
		struct rtp_pkt p = heap[0].p;

		heap_pop();
		if (!s->emulate)
			p.send_ns = tk_mono_ns(); /* the truth, as late as possible */
		rtp_pack(s->buf, &p);
		if (timed_send(s, s->buf, o->size, p.seq) < 0 && errno != ECONNREFUSED && errno != ENOBUFS) {
			elog("send: %s", strerror(errno));
			return TK_EXIT_NETWORK;
		}
		s->sent++;
	}
	return TK_EXIT_OK;
}

/* until the next packet is due or released; late wakeups make bursts, the rate holds */
static void sleep_until_due(const struct sender *s, const struct opts *o)
{
	uint64_t due = s->made < o->count ? due_ns(s, s->made) : UINT64_MAX;
	uint64_t now;

	if (nheap && heap[0].release_ns < due)
		due = heap[0].release_ns;
	now = tk_mono_ns();
	if (due != UINT64_MAX && due > now) {
		struct timespec ts = { (time_t)((due - now) / TK_NSEC_PER_SEC),
				       (long)((due - now) % TK_NSEC_PER_SEC) };

		nanosleep(&ts, NULL);
	}
}

static int open_socket(struct sender *s, const struct opts *o)
{
	s->buf = calloc(1, o->size);
	if (!s->buf) {
		elog("out of memory");
		return TK_EXIT_FAIL;
	}
	s->fd = socket(o->to.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s->fd < 0) {
		elog("cannot open a socket: %s", strerror(errno));
		return TK_EXIT_FAIL;
	}
	if (connect(s->fd, (struct sockaddr *)&o->to, o->tolen)) {
		elog("cannot open a socket to the server: %s", strerror(errno));
		return TK_EXIT_NETWORK;
	}
	return TK_EXIT_OK;
}

/* reads echoes until all have come back, they go quiet, or the bound passes */
static void wait_last_echoes(struct sender *s)
{
	uint64_t start = tk_mono_ns(), heard = start, before = s->echoes;

	while (!stop && s->echoes < s->sent) {
		struct timespec ts = { 0, LAST_ECHOES_POLL_NS };
		uint64_t now = tk_mono_ns();

		if (now - heard >= LAST_ECHO_QUIET_NS || now - start >= LAST_ECHOES_MAX_NS)
			break;
		nanosleep(&ts, NULL);
		drain_echoes(s);
		if (s->echoes != before) {
			before = s->echoes;
			heard = tk_mono_ns();
		}
	}
}

/* sends o->count packets (or until Ctrl-C), then waits for the last echoes */
static int run(struct sender *s, const struct opts *o)
{
	int code = TK_EXIT_OK;

	s->emulate = o->delay_ms > 0 || o->jitter_ms > 0 || o->loss_pct > 0 || o->reorder_pct > 0;
	s->period_ns = TK_NSEC_PER_SEC / o->rate;
	vlog("sending %llu datagrams of %u bytes, %u a second%s", (unsigned long long)o->count, o->size,
	     o->rate, s->emulate ? ", through the emulated network" : "");
	s->start_ns = tk_mono_ns();
	while (!stop && code == TK_EXIT_OK && (s->made < o->count || nheap)) {
		uint64_t now = tk_mono_ns();

		if (make_due(s, o, now)) {
			elog("out of memory");
			return TK_EXIT_FAIL;
		}
		code = send_released(s, o, now);
		if (now >= s->next_drain_ns) {
			drain_echoes(s);
			s->next_drain_ns = now + DRAIN_EVERY_NS;
		}
		sleep_until_due(s, o);
	}
	if (code == TK_EXIT_OK)
		wait_last_echoes(s);
	return code;
}

/* --- the summary ---------------------------------------------------------------------- */

static double tv_s(const struct timeval *tv) { return (double)tv->tv_sec + (double)tv->tv_usec / TK_USEC_PER_SEC_F; }

#define SENDER_FIELDS(X)                                                                             \
	X("sent", REC_U64, 0, REC_COL("sent", 9, 0, 0), rv_u64(s->sent))                              \
	X("emulated_loss", REC_U64, 0, REC_COL("em.lost", 8, 0, 0), rv_u64(s->lost))                  \
	X("echoes", REC_U64, 0, REC_COL("echoes", 9, 0, 0), rv_u64(s->echoes))                        \
	X("duration_s", REC_F64, 3, REC_COL("dur s", 8, 0, 3), rv_f64(elapsed_s))                     \
	X("rate_pps", REC_U64, 0, REC_COL("rate pps", 8, 0, 0), rv_u64(o->rate))                      \
	X("send_avg_us", REC_F64, 1, REC_COL("send avg us", 11, 0, 1),                                 \
	  rv_f64(s->send_n ? s->send_sum_ns / (double)s->send_n / TK_NSEC_PER_USEC_F : 0.0))           \
	X("send_max_us", REC_F64, 1, REC_COL("send max us", 11, 0, 1), rv_f64((double)s->send_max_ns / TK_NSEC_PER_USEC_F)) \
	X("send_max_seq", REC_I64, 0, REC_COL("max seq", 7, 0, 0), rv_i64(s->send_max_seq))           \
	X("cpu_user_s", REC_F64, 3, REC_COL("cpu user s", 10, 0, 3), rv_f64(tv_s(&ru.ru_utime)))      \
	X("cpu_sys_s", REC_F64, 3, REC_COL("cpu sys s", 9, 0, 3), rv_f64(tv_s(&ru.ru_stime)))
static const struct rec_field sender_fields[] = { SENDER_FIELDS(REC_FIELD) };
static const struct rec_schema sender_schema = { "sender", sender_fields, ARRAY_SIZE(sender_fields) };

static void records_help(FILE *f)
{
	fputs("\nOutput: one record at the end, with these keys:\n", f);
	rec_help_keys(f, &sender_schema);
	fputs("The send_* keys time the send() calls, which on loopback carry each\n"
	      "datagram through the receiving stack up to the server's socket queue.\n",
	      f);
}

static void write_summary(const struct sender *s, const struct opts *o)
{
	double elapsed_s = (double)(tk_mono_ns() - s->start_ns) / TK_NSEC_PER_SEC_F;
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	const struct rec_value v[] = { SENDER_FIELDS(REC_VALUE) };
	rec_write(o->out.w, &sender_schema, v);
}

int main(int argc, char **argv)
{
	struct opts o = { 0 }; /* the defaults are the option table's */
	struct sender s = { .fd = -1 };
	int code;

	log_init(argv[0]);
	parse_args(argc, argv, &o);
	rng_state = o.seed * 0x9E3779B97F4A7C15ULL | 1;
	code = rec_out_open(&o.out);
	if (code == TK_EXIT_OK)
		code = open_socket(&s, &o);
	if (code == TK_EXIT_OK) {
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		code = run(&s, &o);
		if (code == TK_EXIT_OK)
			write_summary(&s, &o);
	}
	if (s.fd >= 0)
		close(s.fd);
	free(s.buf);
	free(heap);
	return rec_out_close(&o.out, code);
}
