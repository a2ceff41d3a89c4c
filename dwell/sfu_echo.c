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
#include <getopt.h>
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
#include "prom.h"
#include "rtp.h"

#define MAX_BATCH 256
#define MAX_DGRAM 2048

static const char usage[] =
"Usage: sfu_echo --listen ADDR:PORT [OPTIONS]\n"
"\n"
"A UDP echo \"SFU\": reads RTP-like datagrams (see rtpsend), echoes each back to\n"
"its sender, and prints one JSON summary line at the end with the\n"
"application's own figures: RFC 3550 jitter, loss, reordering, and its wait per\n"
"datagram (read time minus the sender's stamp, CLOCK_MONOTONIC).\n"
"\n"
"Options:\n"
"      --listen ADDR:PORT  where to bind ([V6ADDR]:PORT for IPv6); required\n"
"      --stall-every N    sleep before every Nth read call (default 0: never)\n"
"      --stall-ms MIN-MAX the sleep, uniform in MIN..MAX ms (default 20-50)\n"
"      --batch N          read up to N datagrams per call with recvmmsg, 1..256\n"
"                         (default 1: recvmsg)\n"
"      --peek             peek at each datagram (MSG_PEEK) before reading it\n"
"      --threads N        reader threads on the one socket, 1..16 (default 1)\n"
"      --rcvbuf BYTES     receive buffer (SO_RCVBUFFORCE when allowed, else\n"
"                         SO_RCVBUF) (default: the system's)\n"
"      --no-echo          do not echo\n"
"      --kernel-ts        also measure each datagram's wait from the kernel's own\n"
"                         receive timestamp (SO_TIMESTAMPNS, taken when the stack\n"
"                         received it, just before the socket's enqueue) to the\n"
"                         return of the read call that took it (kwait_avg_us,\n"
"                         kwait_max_us) and to that call's start (kwait_pre_avg_us,\n"
"                         kwait_pre_max_us): the two bracket the dequeue, which\n"
"                         happens inside the call\n"
"      --rt-prio N        run the readers SCHED_FIFO at priority N, 1..99, as\n"
"                         real-time media servers do (default: normal scheduling)\n"
"  -n, --count N          exit after N datagrams (default: until signalled)\n"
"  -d, --duration S       exit after S seconds (default: until signalled)\n"
"      --idle-exit S      exit when nothing arrived for S seconds after the first\n"
"                         datagram (default 0: never)\n"
"      --seed N           random seed for the stalls (default 1)\n"
"  -q, --quiet            no progress messages\n"
"  -h, --help             this text\n"
"  -V, --version          print the version\n"
"\n"
"Output (stdout, at exit or on SIGINT/SIGTERM):\n"
"  {\"type\":\"receiver\",\"packets\":N,\"lost\":N,\"reordered\":N,\"jitter_ms\":X,\n"
"   \"wait_avg_us\":X,\"wait_max_us\":X,\"kwait_avg_us\":X,\"kwait_max_us\":X,\n"
"   \"kwait_max_seq\":N,\"kwait_pre_avg_us\":X,\"kwait_pre_max_us\":X,\n"
"   \"kwait_pre_max_seq\":N,\n"
"   \"stalls\":N,\"reads\":N,\"bad\":N,\"cpu_user_s\":S,\n"
"   \"cpu_sys_s\":S}\n"
"Exit status: 0 success, 1 runtime failure, 2 bad arguments.\n";

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
};

static struct opts o;
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

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* under lock */
static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static int parse_range(const char *opt, const char *s, uint32_t *lo, uint32_t *hi)
{
	const char *dash = strchr(s, '-');
	char first[16];

	if (!dash)
		return cli_parse_u32(opt, s, 0, 60000, lo) ? -1 : (*hi = *lo, 0);
	if (dash == s || (size_t)(dash - s) >= sizeof(first)) {
		elog("%s: '%s' is not MS or MIN-MAX", opt, s);
		return -1;
	}
	memcpy(first, s, (size_t)(dash - s));
	first[dash - s] = '\0';
	if (cli_parse_u32(opt, first, 0, 60000, lo) || cli_parse_u32(opt, dash + 1, 0, 60000, hi))
		return -1;
	if (*lo > *hi) {
		elog("%s: '%s' has MIN above MAX", opt, s);
		return -1;
	}
	return 0;
}

static void parse(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "stall-every", required_argument, NULL, 'e' },
		{ "stall-ms", required_argument, NULL, 'm' },
		{ "batch", required_argument, NULL, 'b' },
		{ "peek", no_argument, NULL, 'p' },
		{ "threads", required_argument, NULL, 't' },
		{ "rcvbuf", required_argument, NULL, 'B' },
		{ "no-echo", no_argument, NULL, 'N' },
		{ "kernel-ts", no_argument, NULL, 'K' },
		{ "rt-prio", required_argument, NULL, 'P' },
		{ "count", required_argument, NULL, 'n' },
		{ "duration", required_argument, NULL, 'd' },
		{ "idle-exit", required_argument, NULL, 'I' },
		{ "seed", required_argument, NULL, 'E' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o.stall_min_ms = 20;
	o.stall_max_ms = 50;
	o.batch = 1;
	o.threads = 1;
	o.echo = true;
	o.seed = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":n:d:qhV", longs, NULL)) != -1) {
		int bad = 0;

		switch (c) {
		case 'l':
			bad = prom_parse_listen("--listen", optarg, &o.addr, &o.addrlen);
			o.have_addr = true;
			break;
		case 'e': bad = cli_parse_u32("--stall-every", optarg, 0, 1000000, &o.stall_every); break;
		case 'm': bad = parse_range("--stall-ms", optarg, &o.stall_min_ms, &o.stall_max_ms); break;
		case 'b': bad = cli_parse_u32("--batch", optarg, 1, MAX_BATCH, &o.batch); break;
		case 'p': o.peek = true; break;
		case 't': bad = cli_parse_u32("--threads", optarg, 1, 16, &o.threads); break;
		case 'B': bad = cli_parse_u32("--rcvbuf", optarg, 1024, 1U << 30, &o.rcvbuf); break;
		case 'N': o.echo = false; break;
		case 'K': o.kernel_ts = true; break;
		case 'P': bad = cli_parse_u32("--rt-prio", optarg, 1, 99, &o.rt_prio); break;
		case 'n': bad = cli_parse_u64("--count", optarg, 1, UINT64_MAX, &o.count); break;
		case 'd': bad = cli_parse_double("--duration", optarg, 0.01, 86400, &o.duration_s); break;
		case 'I': bad = cli_parse_double("--idle-exit", optarg, 0.01, 86400, &o.idle_exit_s); break;
		case 'E': bad = cli_parse_u64("--seed", optarg, 1, UINT64_MAX, &o.seed); break;
		case 'q': log_set_level(LOG_QUIET); break;
		case 'h': fputs(usage, stdout); exit(TK_EXIT_OK);
		case 'V': cli_print_version(); exit(TK_EXIT_OK);
		default: cli_getopt_die(c, argv);
		}
		if (bad)
			exit(TK_EXIT_USAGE);
	}
	if (optind < argc)
		cli_usage_die("%s: unexpected argument (see --help)", argv[optind]);
	if (!o.have_addr)
		cli_usage_die("--listen: missing; where should the server listen? (see --help)");
	if (o.peek && o.batch > 1)
		cli_usage_die("--peek: works with one datagram per read, not with --batch");
}

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
		struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

		nanosleep(&ts, NULL);
	}
}

static void kwait_add(struct kwait *k, const struct timespec *ts, const struct timespec *now,
		      long seq)
{
	int64_t w = (int64_t)(now->tv_sec - ts->tv_sec) * 1000000000LL + (now->tv_nsec - ts->tv_nsec);

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

static void print_kwait(const char *name, const struct kwait *k)
{
	if (k->n)
		printf("\"%s_avg_us\":%.1f,\"%s_max_us\":%.1f,\"%s_max_seq\":%ld,", name,
		       k->sum_ns / (double)k->n / 1e3, name, (double)k->max_ns / 1e3, name, k->max_seq);
	else
		printf("\"%s_avg_us\":null,\"%s_max_us\":null,\"%s_max_seq\":null,", name, name, name);
}

static void *reader(void *arg)
{
	static __thread uint8_t bufs[MAX_BATCH][MAX_DGRAM];
	static __thread char ctl[MAX_BATCH][CMSG_SPACE(sizeof(struct timespec))];
	static __thread struct sockaddr_storage from[MAX_BATCH];
	struct mmsghdr msgs[MAX_BATCH];
	struct iovec iov[MAX_BATCH];

	(void)arg;
	while (!done()) {
		struct pollfd p = { sock, POLLIN, 0 };
		struct timespec call_start;
		int n, pr;

		/* a bounded wait, so that a signal or the end is noticed */
		pr = poll(&p, 1, 100);
		if (pr <= 0)
			continue;
		maybe_stall();
		for (uint32_t i = 0; i < o.batch; i++) {
			iov[i].iov_base = bufs[i];
			iov[i].iov_len = MAX_DGRAM;
			memset(&msgs[i], 0, sizeof(msgs[i]));
			msgs[i].msg_hdr.msg_iov = &iov[i];
			msgs[i].msg_hdr.msg_iovlen = 1;
			msgs[i].msg_hdr.msg_name = &from[i];
			msgs[i].msg_hdr.msg_namelen = sizeof(from[i]);
			if (o.kernel_ts) {
				msgs[i].msg_hdr.msg_control = ctl[i];
				msgs[i].msg_hdr.msg_controllen = sizeof(ctl[i]);
			}
		}
		if (o.peek) {
			uint8_t tmp[RTP_MIN_LEN];

			if (recv(sock, tmp, sizeof(tmp), MSG_PEEK | MSG_DONTWAIT) < 0)
				continue;
		}
		clock_gettime(CLOCK_REALTIME, &call_start);
		if (o.batch == 1) {
			ssize_t len = recvmsg(sock, &msgs[0].msg_hdr, MSG_DONTWAIT);

			n = len < 0 ? -1 : 1;
			if (len >= 0)
				msgs[0].msg_len = (unsigned int)len;
		} else {
			n = recvmmsg(sock, msgs, o.batch, MSG_DONTWAIT, NULL);
		}
		if (n <= 0)
			continue; /* another thread was faster */
		{
			uint64_t now = mono_ns();
			struct timespec rt;

			clock_gettime(CLOCK_REALTIME, &rt);

			pthread_mutex_lock(&lock);
			for (int i = 0; i < n; i++) {
				struct rtp_pkt pkt;
				bool ok = rtp_unpack(bufs[i], msgs[i].msg_len, &pkt);

				if (ok)
					rtp_stats_add(&stats, &pkt, now);
				else
					nbad++;
				if (o.kernel_ts)
					add_kernel_wait(&msgs[i].msg_hdr, &call_start, &rt, ok ? pkt.seq : -1);
			}
			last_arrival_ns = now;
			pthread_mutex_unlock(&lock);
		}
		if (o.echo) {
			for (int i = 0; i < n; i++)
				sendto(sock, bufs[i], msgs[i].msg_len, MSG_DONTWAIT,
				       (struct sockaddr *)&from[i], msgs[i].msg_hdr.msg_namelen);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[16];
	struct rusage ru;
	uint64_t start;
	int one = 1;

	log_init(argv[0]);
	parse(argc, argv);
	rng_state = o.seed * 0x9E3779B97F4A7C15ULL | 1;
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
	if (o.rt_prio) {
		struct sched_param sp = { .sched_priority = (int)o.rt_prio };

		/* threads created later inherit it */
		if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
			elog("--rt-prio: %s", strerror(errno));
			return TK_EXIT_FAIL;
		}
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	start = mono_ns();
	for (uint32_t i = 1; i < o.threads; i++) {
		if (pthread_create(&th[i], NULL, reader, NULL)) {
			elog("cannot start reader thread %u", i);
			return TK_EXIT_FAIL;
		}
	}
	/* the main thread reads too, and watches the clock */
	if (o.duration_s > 0 || o.idle_exit_s > 0) {
		pthread_t t0;

		if (pthread_create(&t0, NULL, reader, NULL)) {
			elog("cannot start the reader thread");
			return TK_EXIT_FAIL;
		}
		while (!done()) {
			struct timespec ts = { 0, 20000000 };
			uint64_t now = mono_ns(), last;

			nanosleep(&ts, NULL);
			if (o.duration_s > 0 && now - start >= (uint64_t)(o.duration_s * 1e9))
				stop = 1;
			pthread_mutex_lock(&lock);
			last = last_arrival_ns;
			pthread_mutex_unlock(&lock);
			if (o.idle_exit_s > 0 && last && now > last &&
			    now - last >= (uint64_t)(o.idle_exit_s * 1e9))
				stop = 1;
		}
		pthread_join(t0, NULL);
	} else {
		reader(NULL);
	}
	stop = 1;
	for (uint32_t i = 1; i < o.threads; i++)
		pthread_join(th[i], NULL);
	getrusage(RUSAGE_SELF, &ru);
	printf("{\"type\":\"receiver\",\"packets\":%llu,\"lost\":%llu,\"reordered\":%llu,"
	       "\"jitter_ms\":%.3f,\"wait_avg_us\":%.1f,\"wait_max_us\":%.1f,",
	       (unsigned long long)stats.received, (unsigned long long)rtp_lost(&stats),
	       (unsigned long long)stats.reordered, rtp_jitter_ms(&stats),
	       stats.wait_n ? stats.wait_sum_ns / (double)stats.wait_n / 1e3 : 0.0,
	       (double)stats.wait_max_ns / 1e3);
	print_kwait("kwait", &kwait);
	print_kwait("kwait_pre", &kwait_pre);
	printf("\"stalls\":%llu,\"reads\":%llu,\"bad\":%llu,\"cpu_user_s\":%.3f,\"cpu_sys_s\":%.3f}\n",
	       (unsigned long long)nstalls, (unsigned long long)nreads, (unsigned long long)nbad,
	       ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	fflush(stdout);
	close(sock);
	return TK_EXIT_OK;
}
