// SPDX-License-Identifier: GPL-2.0-only
/*
 * What BPF run-time statistics (bpf_stats) cost per program run, measured
 * from the outside: a loop of recv(MSG_DONTWAIT) calls on an empty UDP
 * socket, each returning EAGAIN and firing sock:sock_recv_length once, timed
 * with clock_gettime in three phases, interleaved over rounds on one CPU:
 *   none     no program on the tracepoint
 *   empty    udpdwell's empty reference program attached, statistics off
 *   stats    the same with statistics on
 * empty - none is what running an (empty) program costs there, dispatch
 * included; stats - empty is what the statistics add to each run (two
 * sched_clock() reads and the counters' update). The statistics report, for
 * the empty program, the time between their own two clock reads: printed
 * too, as "reported". Medians over the rounds.
 *
 *   udpdwell_statcost [CALLS [ROUNDS [PORT]]]   (defaults 100000 15 41990)
 *
 * Prints one line of key=value figures (ns per call or per run).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpfutil.h"
#include "udpdwell_ref.skel.h"
#include "common.h"

/* ns per recv() over n calls that all fail with EAGAIN */
static double loop_ns(int fd, long n)
{
	char buf[16];
	uint64_t t0 = tk_mono_ns();

	for (long i = 0; i < n; i++)
		if (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
			return -1; /* someone sent us a datagram */
	return (double)(tk_mono_ns() - t0) / (double)n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int stats_already_on(void)
{
	FILE *f = fopen("/proc/sys/kernel/bpf_stats_enabled", "r");
	int on = 0;

	if (f) {
		if (fscanf(f, "%d", &on) != 1)
			on = 0;
		fclose(f);
	}
	return on;
}

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 100000;
	int rounds = argc > 2 ? atoi(argv[2]) : 15;
	int port = argc > 3 ? atoi(argv[3]) : 41990;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	double *none, *empty, *stats, *reported;
	struct udpdwell_ref_bpf *skel;
	cpu_set_t cpus;
	int fd, prog_fd, pre_on;

	if (calls < 1000 || rounds < 3 || port < 1 || port > 65535) {
		fprintf(stderr, "udpdwell_statcost: usage: udpdwell_statcost [CALLS>=1000 [ROUNDS>=3 [PORT]]]\n");
		return 2;
	}
	CPU_ZERO(&cpus);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, "udpdwell_statcost: cannot bind 127.0.0.1:%d: %s\n", port, strerror(errno));
		return 1;
	}
	skel = udpdwell_ref_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "udpdwell_statcost: cannot load the reference programs\n");
		return 1;
	}
	prog_fd = bpf_program__fd(skel->progs.ud_ref_recv_length);
	none = calloc((size_t)rounds, sizeof(double));
	empty = calloc((size_t)rounds, sizeof(double));
	stats = calloc((size_t)rounds, sizeof(double));
	reported = calloc((size_t)rounds, sizeof(double));
	if (!none || !empty || !stats || !reported)
		return 1;
	pre_on = stats_already_on();
	loop_ns(fd, calls); /* warm up */
	for (int r = 0; r < rounds; r++) {
		struct bpf_link *link;
		uint64_t t0, n0, t1, n1;
		int sfd;

		none[r] = loop_ns(fd, calls);
		link = bpf_program__attach(skel->progs.ud_ref_recv_length);
		if (!link) {
			fprintf(stderr, "udpdwell_statcost: cannot attach: %s\n", strerror(errno));
			return 1;
		}
		empty[r] = loop_ns(fd, calls);
		sfd = bpfu_enable_stats();
		if (sfd < 0) {
			fprintf(stderr, "udpdwell_statcost: cannot turn statistics on: %s\n", strerror(-sfd));
			return 1;
		}
		bpfu_prog_stats(prog_fd, &t0, &n0);
		stats[r] = loop_ns(fd, calls);
		bpfu_prog_stats(prog_fd, &t1, &n1);
		close(sfd);
		bpf_link__destroy(link);
		reported[r] = n1 > n0 ? (double)(t1 - t0) / (double)(n1 - n0) : -1;
		if (none[r] < 0 || empty[r] < 0 || stats[r] < 0) {
			fprintf(stderr, "udpdwell_statcost: port %d received a datagram\n", port);
			return 1;
		}
	}
	{
		double n = median(none, rounds), e = median(empty, rounds), s = median(stats, rounds);

		printf("calls=%ld rounds=%d none_ns=%.1f empty_ns=%.1f stats_ns=%.1f prog_ns=%.1f "
		       "stats_overhead_ns=%.1f reported_ns=%.1f stats_were_on=%d\n",
		       calls, rounds, n, e, s, e - n, s - e, median(reported, rounds), pre_on);
	}
	udpdwell_ref_bpf__destroy(skel);
	close(fd);
	return 0;
}
