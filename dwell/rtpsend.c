// SPDX-License-Identifier: GPL-2.0-only
/*
 * rtpsend: the media-server demo's sender. Sends RTP-like datagrams (see
 * dwell/rtp.h) at a fixed packet rate, each stamped with its send time, and
 * reads back whatever the server echoes. Where the kernel has no netem, it
 * can impair its own stream the way a bad network would (delay with jitter,
 * loss, reordering), so that the server sees the same thing.
 */
#include <errno.h>
#include <getopt.h>
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
#include "prom.h"
#include "rtp.h"

static const char usage[] =
"Usage: rtpsend --to ADDR:PORT [OPTIONS]\n"
"\n"
"Sends RTP-like datagrams (12-byte RTP header, then the send time) at a fixed\n"
"rate to a UDP server, reads back its echoes, and prints one JSON summary line\n"
"at the end. The media-server demo's sender (repro/sfu.sh).\n"
"\n"
"Options:\n"
"      --to ADDR:PORT     where to send ([V6ADDR]:PORT for IPv6); required\n"
"  -r, --rate PPS         packets per second, 1..2000000 (default 9000)\n"
"  -d, --duration S       seconds to send, 0.01..86400 (default 5)\n"
"  -n, --count N          stop after N packets (default: rate x duration)\n"
"  -s, --size BYTES       datagram size, 20..65000 (default 200)\n"
"      --ssrc N           RTP SSRC (default 0x5eed)\n"
"      --delay-ms MS      emulate a network: delay every packet MS ms (default 0)\n"
"      --jitter-ms MS     ... plus a normal random delay of this standard\n"
"                         deviation, as netem's \"delay MS JITTER\" (default 0)\n"
"      --loss PCT         ... and drop PCT percent of the packets (default 0)\n"
"      --reorder PCT      ... and send PCT percent at once, ahead of delayed ones\n"
"                         (netem's reorder) (default 0)\n"
"      --seed N           random seed for the emulation (default 1)\n"
"  -q, --quiet            no progress messages\n"
"  -h, --help             this text\n"
"  -V, --version          print the version\n"
"\n"
"Output: {\"type\":\"sender\",\"sent\":N,\"emulated_loss\":N,\"echoes\":N,\n"
"\"duration_s\":S,\"rate_pps\":R,\"send_avg_us\":X,\"send_max_us\":X,\"send_max_seq\":N,\n"
"\"cpu_user_s\":S,"
"\"cpu_sys_s\":S}; send_* time the send() calls, which on loopback carry each\n"
"datagram through the receiving stack up to the server's socket queue\n"
"Exit status: 0 success, 1 runtime failure (socket errors), 2 bad arguments.\n";

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
};

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }

/* how long the send() calls took */
static uint64_t send_n, send_max_ns;
static long send_max_seq; /* the datagram whose send() took longest */
static double send_sum_ns;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static ssize_t timed_send(int fd, const void *buf, size_t len, long seq)
{
	uint64_t t0 = mono_ns(), d;
	ssize_t r = send(fd, buf, len, 0);

	d = mono_ns() - t0;
	send_n++;
	send_sum_ns += (double)d;
	if (d > send_max_ns) {
		send_max_ns = d;
		send_max_seq = seq;
	}
	return r;
}

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

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option longs[] = {
		{ "to", required_argument, NULL, 't' },
		{ "rate", required_argument, NULL, 'r' },
		{ "duration", required_argument, NULL, 'd' },
		{ "count", required_argument, NULL, 'n' },
		{ "size", required_argument, NULL, 's' },
		{ "ssrc", required_argument, NULL, 'S' },
		{ "delay-ms", required_argument, NULL, 'D' },
		{ "jitter-ms", required_argument, NULL, 'J' },
		{ "loss", required_argument, NULL, 'L' },
		{ "reorder", required_argument, NULL, 'R' },
		{ "seed", required_argument, NULL, 'E' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->rate = 9000;
	o->duration_s = 5;
	o->size = 200;
	o->ssrc = 0x5eed;
	o->seed = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":r:d:n:s:qhV", longs, NULL)) != -1) {
		int bad = 0;

		switch (c) {
		case 't':
			bad = prom_parse_listen("--to", optarg, &o->to, &o->tolen);
			o->have_to = true;
			break;
		case 'r': bad = cli_parse_u32("--rate", optarg, 1, 2000000, &o->rate); break;
		case 'd': bad = cli_parse_double("--duration", optarg, 0.01, 86400, &o->duration_s); break;
		case 'n': bad = cli_parse_u64("--count", optarg, 1, UINT32_MAX, &o->count); break;
		case 's': bad = cli_parse_u32("--size", optarg, RTP_MIN_LEN, 65000, &o->size); break;
		case 'S': bad = cli_parse_u32("--ssrc", optarg, 0, UINT32_MAX, &o->ssrc); break;
		case 'D': bad = cli_parse_double("--delay-ms", optarg, 0, 10000, &o->delay_ms); break;
		case 'J': bad = cli_parse_double("--jitter-ms", optarg, 0, 10000, &o->jitter_ms); break;
		case 'L': bad = cli_parse_double("--loss", optarg, 0, 100, &o->loss_pct); break;
		case 'R': bad = cli_parse_double("--reorder", optarg, 0, 100, &o->reorder_pct); break;
		case 'E': bad = cli_parse_u64("--seed", optarg, 1, UINT64_MAX, &o->seed); break;
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
	if (!o->have_to)
		cli_usage_die("--to: missing; where should the datagrams go? (see --help)");
	if (!o->count)
		o->count = (uint64_t)llround(o->rate * o->duration_s);
	if (!o->count)
		o->count = 1;
}

static void drain_echoes(int fd, uint64_t *echoes)
{
	char buf[2048];

	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
		(*echoes)++;
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	uint64_t sent = 0, lost = 0, echoes = 0, order = 0, made = 0, start, period_ns;
	uint64_t next_drain_ns = 0;
	bool emulate;
	struct rusage ru;
	uint8_t *buf;
	int fd;

	log_init(argv[0]);
	parse(argc, argv, &o);
	rng_state = o.seed * 0x9E3779B97F4A7C15ULL | 1;
	emulate = o.delay_ms > 0 || o.jitter_ms > 0 || o.loss_pct > 0 || o.reorder_pct > 0;
	buf = calloc(1, o.size);
	fd = socket(o.to.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (!buf || fd < 0 || connect(fd, (struct sockaddr *)&o.to, o.tolen)) {
		elog("cannot open a socket to the server: %s", strerror(errno));
		return TK_EXIT_FAIL;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	period_ns = 1000000000ULL / o.rate;
	start = mono_ns();
	while (!stop && (made < o.count || nheap)) {
		uint64_t now = mono_ns();
		uint64_t due = made < o.count ? start + made * period_ns : UINT64_MAX;
		struct held h;

		/* make every packet whose time has come */
		while (made < o.count && start + made * period_ns <= now) {
			struct rtp_pkt p = { .seq = (uint16_t)made, .ssrc = o.ssrc };

			p.send_ns = start + made * period_ns;
			if (p.send_ns < now - 1000000) /* more than 1 ms behind: stamp the truth */
				p.send_ns = now;
			p.ts = (uint32_t)(p.send_ns / (1000000000ULL / RTP_CLOCK_HZ));
			made++;
			if (emulate && urand() * 100 < o.loss_pct) {
				lost++;
				continue;
			}
			h.p = p;
			h.order = order++;
			h.release_ns = now;
			if (emulate && !(urand() * 100 < o.reorder_pct)) {
				double d = o.delay_ms + o.jitter_ms * nrand();

				if (d > 0)
					h.release_ns = now + (uint64_t)(d * 1e6);
			}
			if (heap_push(&h)) {
				elog("out of memory");
				return TK_EXIT_FAIL;
			}
		}
		/* send what the (emulated) network releases now */
		while (nheap && heap[0].release_ns <= now) {
			struct rtp_pkt p = heap[0].p;

			heap_pop();
			if (!emulate)
				p.send_ns = mono_ns(); /* the truth, as late as possible */
			rtp_pack(buf, &p);
			if (timed_send(fd, buf, o.size, p.seq) < 0 && errno != ECONNREFUSED && errno != ENOBUFS) {
				elog("send: %s", strerror(errno));
				return TK_EXIT_FAIL;
			}
			sent++;
		}
		if (now >= next_drain_ns) { /* a read per millisecond, not per packet */
			drain_echoes(fd, &echoes);
			next_drain_ns = now + 1000000;
		}
		if (nheap && heap[0].release_ns < due)
			due = heap[0].release_ns;
		now = mono_ns();
		if (due != UINT64_MAX && due > now) { /* late wakeups make bursts, the rate holds */
			struct timespec ts = { (time_t)((due - now) / 1000000000ULL),
					       (long)((due - now) % 1000000000ULL) };

			nanosleep(&ts, NULL);
		}
	}
	/* give the last echoes a moment */
	for (int i = 0; i < 20; i++) {
		struct timespec ts = { 0, 5000000 };

		drain_echoes(fd, &echoes);
		nanosleep(&ts, NULL);
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("{\"type\":\"sender\",\"sent\":%llu,\"emulated_loss\":%llu,\"echoes\":%llu,"
	       "\"duration_s\":%.3f,\"rate_pps\":%u,\"send_avg_us\":%.1f,\"send_max_us\":%.1f,\"send_max_seq\":%ld,"
	       "\"cpu_user_s\":%.3f,\"cpu_sys_s\":%.3f}\n",
	       (unsigned long long)sent, (unsigned long long)lost, (unsigned long long)echoes,
	       (double)(mono_ns() - start) / 1e9, o.rate,
	       send_n ? send_sum_ns / (double)send_n / 1e3 : 0.0, (double)send_max_ns / 1e3, send_max_seq,
	       ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	close(fd);
	free(buf);
	free(heap);
	return TK_EXIT_OK;
}
