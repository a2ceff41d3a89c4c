// SPDX-License-Identifier: GPL-2.0-only
/*
 * sfu_echo: the media-server demo's server. Reads RTP-like datagrams from a
 * UDP socket and echoes them back, like an SFU forwarding media, and keeps
 * the application's own figures: RFC 3550 jitter, loss and reordering (what
 * WebRTC's getStats() shows), and for each datagram the time from the
 * sender's stamp to this read, the ground truth that udpdwell's dwell time
 * is compared with.
 *
 * It can be made a slow server (a delay before every Nth read), read with
 * recvmmsg, peek before each read, or read from several threads.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <poll.h>
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

#define MAX_BATCH 256
#define MAX_DGRAM 2048
#define MAX_THREADS 16
#define MAX_STALL_MS 60000
#define DEFAULT_STALL_MIN_MS 20
#define DEFAULT_STALL_MAX_MS 50
#define POLL_MS 100             /* a reader's bounded wait: a signal or the end is noticed */
#define CLOCK_WATCH_NS 20000000 /* the main thread looks at the clock every 20 ms */

struct opts {
	struct sockaddr_storage addr;
	socklen_t addrlen;
	bool have_addr;
	uint32_t stall_every;
	uint32_t stall_min_ms, stall_max_ms;
	uint32_t batch;
	bool peek;
	uint32_t threads;
	uint32_t rcvbuf;
	bool echo;
	bool kernel_ts;
	uint32_t rt_prio;
	uint64_t count;
	double duration_s;
	double idle_exit_s;
	uint64_t seed;
	struct rec_out out;
};

/* the values' defaults are the option table's; a flag's is its absence */
static struct opts o = { .echo = true };
static int sock = -1;
static volatile sig_atomic_t stop;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct rtp_stats stats;
static uint64_t nreads, nstalls, nbad, last_arrival_ns;
/* from the kernel's receive timestamp to the read call's return, and to its start */
struct kwait {
	uint64_t n, max_ns;
	double sum_ns;
	long max_seq; /* the sequence number of the datagram that waited longest */
};
static struct kwait kwait, kwait_pre;
static uint64_t rng_state;

static void on_signal(int sig) { (void)sig; stop = 1; }

/* under lock */
static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

/* --- the command line ----------------------------------------------------------------- */

static const char synopsis[] =
"Usage: sfu_echo --listen ADDR:PORT [OPTIONS]\n"
"A UDP echo \"SFU\": reads RTP-like datagrams (see rtpsend), echoes each back to\n"
"its sender, and writes one summary record at the end with the application's\n"
"own figures: RFC 3550 jitter, loss, reordering, and its wait per datagram\n"
"(read time minus the sender's stamp, CLOCK_MONOTONIC).\n"
"\n";

/* --help's part on the record, its keys from its schema (below) */
static void records_help(FILE *f);

static int set_listen(void *cfg, const char *opt, const char *val)
{
	struct opts *c = cfg;

	if (cli_parse_endpoint(opt, val, &c->addr, &c->addrlen))
		return -1;
	c->have_addr = true;
	return 0;
}

static int parse_range(const char *opt, const char *s, uint32_t *lo, uint32_t *hi)
{
	const char *dash = strchr(s, '-');
	char first[16];

	if (!dash)
		return cli_parse_u32(opt, s, 0, MAX_STALL_MS, lo) ? -1 : (*hi = *lo, 0);
	if (dash == s || (size_t)(dash - s) >= sizeof(first)) {
		elog("%s: '%s' is not MS or MIN-MAX", opt, s);
		return -1;
	}
	memcpy(first, s, (size_t)(dash - s));
	first[dash - s] = '\0';
	if (cli_parse_u32(opt, first, 0, MAX_STALL_MS, lo) || cli_parse_u32(opt, dash + 1, 0, MAX_STALL_MS, hi))
		return -1;
	if (*lo > *hi) {
		elog("%s: '%s' has MIN above MAX", opt, s);
		return -1;
	}
	return 0;
}

static int set_stall_ms(void *cfg, const char *opt, const char *val)
{
	struct opts *c = cfg;

	return parse_range(opt, val, &c->stall_min_ms, &c->stall_max_ms);
}

#define TK_OPT_CFG struct opts
static const struct opt options[] = {
	OPT_E_CALL("listen", 0, "ADDR:PORT", set_listen, "where to bind ([V6ADDR]:PORT for IPv6); required"),
	OPT_E_U32_D("stall-every", 0, "N", stall_every, 0, 1000000, "0", "sleep before every Nth read call; 0: never"),
	OPT_E_CALL_D("stall-ms", 0, "MIN-MAX", set_stall_ms, STR(DEFAULT_STALL_MIN_MS) "-" STR(DEFAULT_STALL_MAX_MS),
		     "the sleep, uniform in MIN..MAX ms"),
	OPT_E_U32_D("batch", 0, "N", batch, 1, MAX_BATCH, "1",
		    "read up to N datagrams per call with recvmmsg, 1.." STR(MAX_BATCH) ";\n"
		    "1: recvmsg"),
	OPT_E_FLAG("peek", 0, peek, "peek at each datagram (MSG_PEEK) before reading it"),
	OPT_E_U32_D("threads", 0, "N", threads, 1, MAX_THREADS, "1",
		    "reader threads on the one socket, 1.." STR(MAX_THREADS)),
	OPT_E_U32("rcvbuf", 0, "BYTES", rcvbuf, 1024, 1U << 30,
		  "receive buffer (SO_RCVBUFFORCE when allowed, else\nSO_RCVBUF) (default: the system's)"),
	OPT_E_UNFLAG("no-echo", 0, echo, "do not echo"),
	OPT_E_FLAG("kernel-ts", 0, kernel_ts,
		   "also measure each datagram's wait from the kernel's\n"
		   "own receive timestamp (SO_TIMESTAMPNS, taken when the\n"
		   "stack received it, just before the socket's enqueue)\n"
		   "to the return of the read call that took it\n"
		   "(kwait_avg_us, kwait_max_us) and to that call's start\n"
		   "(kwait_pre_avg_us, kwait_pre_max_us): the two bracket\n"
		   "the dequeue, which happens inside the call"),
	OPT_E_U32("rt-prio", 0, "N", rt_prio, 1, 99,
		  "run the readers SCHED_FIFO at priority N, 1..99, as\n"
		  "real-time media servers do (default: normal\n"
		  "scheduling)"),
	OPT_E_U64("count", 'c', "N", count, 1, (double)UINT64_MAX, "exit after N datagrams (default: until signalled)"),
	OPT_E_DURATION(duration_s, "exit after SECONDS (default: until signalled)"),
	OPT_E_DOUBLE("idle-exit", 0, "SECONDS", idle_exit_s, 0.01, 86400,
		     "exit when nothing arrived for SECONDS after the first\n"
		     "datagram (default 0: never)"),
	OPT_E_U64_D("seed", 0, "N", seed, 1, (double)UINT64_MAX, "1", "random seed for the stalls"),
	OPT_E_FORMAT(out.format, out.format_set),
	OPT_E_OUTPUT(out.path, "write the summary record to FILE instead of stdout"),
	OPT_E_STANDARD,
	OPT_E_END,
};
#undef TK_OPT_CFG

static const int exit_codes[] = { TK_EXIT_OK, TK_EXIT_FAIL, TK_EXIT_USAGE, -1 };
static const struct opt_cli cli = { synopsis, options, NULL, records_help, exit_codes };

static void parse_args(int argc, char **argv)
{
	int first = opt_parse(&cli, argc, argv, &o);

	if (first < argc)
		cli_usage_die("unexpected argument '%s' (see --help)", argv[first]);
	if (!o.have_addr)
		cli_usage_die("--listen: missing; where should the server listen? (see --help)");
	if (o.peek && o.batch > 1)
		cli_usage_die("--peek: works with one datagram per read, not with --batch");
}

/* --- the readers ------------------------------------------------------------------------ */

static bool done(void)
{
	return stop || (o.count && __atomic_load_n(&stats.received, __ATOMIC_RELAXED) >= o.count);
}

static void maybe_stall(void)
{
	uint64_t n, ms = 0;

	pthread_mutex_lock(&lock);
	n = ++nreads;
	if (o.stall_every && n % o.stall_every == 0) {
		ms = o.stall_min_ms + rng() % (o.stall_max_ms - o.stall_min_ms + 1);
		nstalls++;
	}
	pthread_mutex_unlock(&lock);
	if (ms) {
		struct timespec ts = { (time_t)(ms / TK_MSEC_PER_SEC),
					(long)(ms % TK_MSEC_PER_SEC * TK_NSEC_PER_MSEC) };

		nanosleep(&ts, NULL);
	}
}

static void kwait_add(struct kwait *k, const struct timespec *ts, const struct timespec *now,
		      long seq)
{
	int64_t w = (int64_t)(now->tv_sec - ts->tv_sec) * (int64_t)TK_NSEC_PER_SEC + (now->tv_nsec - ts->tv_nsec);

	if (w < 0)
		w = 0;
	k->n++;
	k->sum_ns += (double)w;
	if ((uint64_t)w > k->max_ns) {
		k->max_ns = (uint64_t)w;
		k->max_seq = seq;
	}
}

/*
 * The wait from the kernel's receive timestamp (CLOCK_REALTIME) to the
 * return of the read call (end) and to its start (start); under lock
 */
static void add_kernel_wait(struct msghdr *m, const struct timespec *start,
			    const struct timespec *end, long seq)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		struct timespec ts;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS)
			continue;
		memcpy(&ts, CMSG_DATA(c), sizeof(ts));
		kwait_add(&kwait, &ts, end, seq);
		kwait_add(&kwait_pre, &ts, start, seq);
	}
}

/* one read call's buffers: up to o.batch datagrams, each with its sender and timestamp */
struct batch {
	uint8_t bufs[MAX_BATCH][MAX_DGRAM];
	char ctl[MAX_BATCH][CMSG_SPACE(sizeof(struct timespec))];
	struct sockaddr_storage from[MAX_BATCH];
	struct mmsghdr msgs[MAX_BATCH];
	struct iovec iov[MAX_BATCH];
};

static void batch_reset(struct batch *b)
{
	for (uint32_t i = 0; i < o.batch; i++) {
		b->iov[i].iov_base = b->bufs[i];
		b->iov[i].iov_len = MAX_DGRAM;
		memset(&b->msgs[i], 0, sizeof(b->msgs[i]));
		b->msgs[i].msg_hdr.msg_iov = &b->iov[i];
		b->msgs[i].msg_hdr.msg_iovlen = 1;
		b->msgs[i].msg_hdr.msg_name = &b->from[i];
		b->msgs[i].msg_hdr.msg_namelen = sizeof(b->from[i]);
		if (o.kernel_ts) {
			b->msgs[i].msg_hdr.msg_control = b->ctl[i];
			b->msgs[i].msg_hdr.msg_controllen = sizeof(b->ctl[i]);
		}
	}
}

/* one read call (recvmsg, or recvmmsg with --batch); the datagrams read, or
 * <= 0 when another thread was faster */
static int read_batch(struct batch *b, struct timespec *call_start)
{
	ssize_t len;

	if (o.peek) {
		uint8_t tmp[RTP_MIN_LEN];

		if (recv(sock, tmp, sizeof(tmp), MSG_PEEK | MSG_DONTWAIT) < 0)
			return 0;
	}
	clock_gettime(CLOCK_REALTIME, call_start);
	if (o.batch > 1)
		return recvmmsg(sock, b->msgs, o.batch, MSG_DONTWAIT, NULL);
	len = recvmsg(sock, &b->msgs[0].msg_hdr, MSG_DONTWAIT);
	if (len < 0)
		return -1;
	b->msgs[0].msg_len = (unsigned int)len;
	return 1;
}

/* the figures of n datagrams just read */
static void account(struct batch *b, int n, const struct timespec *call_start)
{
	uint64_t now = tk_mono_ns();
	struct timespec rt;

	clock_gettime(CLOCK_REALTIME, &rt);
	pthread_mutex_lock(&lock);
	for (int i = 0; i < n; i++) {
		struct rtp_pkt pkt;
		bool ok = rtp_unpack(b->bufs[i], b->msgs[i].msg_len, &pkt);

		if (ok)
			rtp_stats_add(&stats, &pkt, now);
		else
			nbad++;
		if (o.kernel_ts)
			add_kernel_wait(&b->msgs[i].msg_hdr, call_start, &rt, ok ? pkt.seq : -1);
	}
	last_arrival_ns = now;
	pthread_mutex_unlock(&lock);
}

static void *reader(void *arg)
{
	static __thread struct batch b;

	(void)arg;
	while (!done()) {
		struct pollfd p = { sock, POLLIN, 0 };
		struct timespec call_start;
		int n;

		if (poll(&p, 1, POLL_MS) <= 0)
			continue;
		maybe_stall();
		batch_reset(&b);
		n = read_batch(&b, &call_start);
		if (n <= 0)
			continue;
		account(&b, n, &call_start);
		for (int i = 0; o.echo && i < n; i++)
			sendto(sock, b.bufs[i], b.msgs[i].msg_len, MSG_DONTWAIT, (struct sockaddr *)&b.from[i],
			       b.msgs[i].msg_hdr.msg_namelen);
	}
	return NULL;
}

/* --- setup, run, report --------------------------------------------------------------- */

static int open_socket(void)
{
	int one = 1;

	sock = socket(o.addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sock < 0) {
		elog("socket: %s", strerror(errno));
		return TK_EXIT_FAIL;
	}
	setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (o.rcvbuf) {
		int v = (int)o.rcvbuf;

		if (setsockopt(sock, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)) &&
		    setsockopt(sock, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v))) {
			elog("--rcvbuf: %s", strerror(errno));
			return TK_EXIT_FAIL;
		}
	}
	if (o.kernel_ts && setsockopt(sock, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one))) {
		elog("--kernel-ts: %s", strerror(errno));
		return TK_EXIT_FAIL;
	}
	if (bind(sock, (struct sockaddr *)&o.addr, o.addrlen)) {
		elog("cannot bind: %s", strerror(errno));
		return TK_EXIT_FAIL;
	}
	return TK_EXIT_OK;
}

static int set_rt_prio(void)
{
	struct sched_param sp = { .sched_priority = (int)o.rt_prio };

	/* threads created later inherit it */
	if (o.rt_prio && sched_setscheduler(0, SCHED_FIFO, &sp)) {
		elog("--rt-prio: %s", strerror(errno));
		return TK_EXIT_FAIL;
	}
	return TK_EXIT_OK;
}

/* --duration and --idle-exit: whether the time has come to stop */
static bool time_is_up(uint64_t start)
{
	uint64_t now = tk_mono_ns(), last;

	if (o.duration_s > 0 && now - start >= (uint64_t)(o.duration_s * TK_NSEC_PER_SEC_F))
		return true;
	pthread_mutex_lock(&lock);
	last = last_arrival_ns;
	pthread_mutex_unlock(&lock);
	return o.idle_exit_s > 0 && last && now > last && now - last >= (uint64_t)(o.idle_exit_s * TK_NSEC_PER_SEC_F);
}

static void watch_clock(uint64_t start)
{
	while (!done()) {
		struct timespec ts = { 0, CLOCK_WATCH_NS };

		nanosleep(&ts, NULL);
		if (time_is_up(start))
			stop = 1;
	}
}

/* the readers until the end: --count, --duration, --idle-exit or a signal */
static int run(void)
{
	/* the main thread reads too, unless it must watch the clock */
	bool watch = o.duration_s > 0 || o.idle_exit_s > 0;
	uint32_t want = o.threads - 1 + (watch ? 1 : 0), n;
	pthread_t th[MAX_THREADS];
	uint64_t start = tk_mono_ns();
	int code = TK_EXIT_OK;

	vlog("listening with %u reader thread%s, %s", o.threads, o.threads > 1 ? "s" : "",
	     o.echo ? "echoing" : "not echoing");
	for (n = 0; n < want; n++) {
		if (pthread_create(&th[n], NULL, reader, NULL)) {
			elog("cannot start reader thread %u", n + 1);
			code = TK_EXIT_FAIL;
			break;
		}
	}
	if (code == TK_EXIT_OK && watch)
		watch_clock(start);
	else if (code == TK_EXIT_OK)
		reader(NULL);
	stop = 1;
	for (uint32_t i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return code;
}

static double tv_s(const struct timeval *tv) { return (double)tv->tv_sec + (double)tv->tv_usec / TK_USEC_PER_SEC_F; }

static struct rec_value avg_us(const struct kwait *k)
{
	return k->n ? rv_f64(k->sum_ns / (double)k->n / TK_NSEC_PER_USEC_F) : rv_null();
}

static struct rec_value max_us(const struct kwait *k)
{
	return k->n ? rv_f64((double)k->max_ns / TK_NSEC_PER_USEC_F) : rv_null();
}

static struct rec_value max_seq(const struct kwait *k)
{
	return k->n ? rv_i64(k->max_seq) : rv_null();
}

#define RECEIVER_FIELDS(X)                                                                           \
	X("packets", REC_U64, 0, REC_COL("packets", 9, 0, 0), rv_u64(stats.received))                 \
	X("lost", REC_U64, 0, REC_COL("lost", 7, 0, 0), rv_u64(rtp_lost(&stats)))                      \
	X("reordered", REC_U64, 0, REC_COL("reord", 7, 0, 0), rv_u64(stats.reordered))                 \
	X("jitter_ms", REC_F64, 3, REC_COL("jitter ms", 9, 0, 3), rv_f64(rtp_jitter_ms(&stats)))      \
	X("jitter_max_ms", REC_F64, 3, REC_COL("jit max ms", 10, 0, 3), rv_f64(rtp_jitter_max_ms(&stats))) \
	X("wait_avg_us", REC_F64, 1, REC_COL("wait avg us", 11, 0, 1),                                 \
	  rv_f64(stats.wait_n ? stats.wait_sum_ns / (double)stats.wait_n / TK_NSEC_PER_USEC_F : 0.0))  \
	X("wait_max_us", REC_F64, 1, REC_COL("wait max us", 11, 0, 1), rv_f64((double)stats.wait_max_ns / TK_NSEC_PER_USEC_F)) \
	X("kwait_avg_us", REC_F64, 1, REC_COL("kwait avg us", 12, 0, 1), avg_us(&kwait))               \
	X("kwait_max_us", REC_F64, 1, REC_COL("kwait max us", 12, 0, 1), max_us(&kwait))               \
	X("kwait_max_seq", REC_I64, 0, REC_NOCOL, max_seq(&kwait))                                     \
	X("kwait_pre_avg_us", REC_F64, 1, REC_COL("pre avg us", 10, 0, 1), avg_us(&kwait_pre))         \
	X("kwait_pre_max_us", REC_F64, 1, REC_COL("pre max us", 10, 0, 1), max_us(&kwait_pre))         \
	X("kwait_pre_max_seq", REC_I64, 0, REC_NOCOL, max_seq(&kwait_pre))                             \
	X("stalls", REC_U64, 0, REC_COL("stalls", 7, 0, 0), rv_u64(nstalls))                           \
	X("reads", REC_U64, 0, REC_COL("reads", 9, 0, 0), rv_u64(nreads))                              \
	X("bad", REC_U64, 0, REC_COL("bad", 5, 0, 0), rv_u64(nbad))                                    \
	X("cpu_user_s", REC_F64, 3, REC_COL("cpu user s", 10, 0, 3), rv_f64(tv_s(&ru.ru_utime)))      \
	X("cpu_sys_s", REC_F64, 3, REC_COL("cpu sys s", 9, 0, 3), rv_f64(tv_s(&ru.ru_stime)))
static const struct rec_field receiver_fields[] = { RECEIVER_FIELDS(REC_FIELD) };
static const struct rec_schema receiver_schema = { "receiver", receiver_fields,
						   ARRAY_SIZE(receiver_fields) };

static void records_help(FILE *f)
{
	fputs("\nOutput: one record at exit or on SIGINT/SIGTERM, with these keys:\n", f);
	rec_help_keys(f, &receiver_schema);
	fputs("The kwait_* keys are null without --kernel-ts. jitter_ms is RFC 3550's J at\n"
	      "the end, a moving average over the last ~16 datagrams; jitter_max_ms is the\n"
	      "largest J over the stream.\n",
	      f);
}

/* after the readers have stopped: no lock needed */
static void write_summary(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	const struct rec_value v[] = { RECEIVER_FIELDS(REC_VALUE) };
	rec_write(o.out.w, &receiver_schema, v);
}

int main(int argc, char **argv)
{
	int code;

	log_init(argv[0]);
	parse_args(argc, argv);
	rng_state = o.seed * 0x9E3779B97F4A7C15ULL | 1;
	code = rec_out_open(&o.out);
	if (code == TK_EXIT_OK)
		code = open_socket();
	if (code == TK_EXIT_OK)
		code = set_rt_prio();
	if (code == TK_EXIT_OK) {
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		code = run();
		if (code == TK_EXIT_OK)
			write_summary();
	}
	if (sock >= 0)
		close(sock);
	return rec_out_close(&o.out, code);
}
