// SPDX-License-Identifier: GPL-2.0-only
/*
 * udpdwell's programs stopped after one stage (enum ud_stage in
 * bpf/contract/udpdwell.h), for bench/60-udpdwell.sh's cost breakdown: loads
 * the backend udpdwell would (auto) with targ_stop_at = STAGE, turns on
 * bpf_stats, says "backend ..." on stderr when attached, and on SIGINT or
 * SIGTERM (or after 600 s) prints each program's statistics as udpdwell
 * --bpf-stats does (JSON lines, "type":"bpf_prog"), then exits.
 *
 *   udpdwell_stages --list          the stages: "NUMBER NAME WHAT" per line
 *   udpdwell_stages STAGE LO-HI     run stage STAGE on local ports LO..HI
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bpfutil.h"
#include "common.h"
#include "bpf/contract/udpdwell.h"
#include "dwell/backend.h"

#define MAX_WAIT_S 600 /* a forgotten run ends by itself */

static const char *const stage_names[] = UD_STAGE_NAMES;
static const char *const stage_what[] = UD_STAGE_WHAT;

static void print_stats(struct bpf_object *obj)
{
	struct bpf_program *p;

	bpf_object__for_each_program(p, obj) {
		uint64_t ns, cnt;
		int fd = bpf_program__fd(p);

		if (fd < 0 || bpfu_prog_stats(fd, &ns, &cnt))
			continue;
		printf("{\"type\":\"bpf_prog\",\"prog\":\"%s\",\"run_cnt\":%llu,\"run_time_ns\":%llu}\n",
		       bpf_program__name(p), (unsigned long long)cnt, (unsigned long long)ns);
	}
}

static int usage(void)
{
	fprintf(stderr, "usage: udpdwell_stages --list | STAGE LO-HI\n");
	return TK_EXIT_USAGE;
}

int main(int argc, char **argv)
{
	struct ud_bpf_opts o = { .max_sockets = UD_DEFAULT_SOCKETS,
				 .reason_rcvbuff = UD_REASON_LEGACY_RCVBUFF,
				 .reason_proto_mem = UD_REASON_LEGACY_PROTO_MEM };
	struct timespec wait = { .tv_sec = MAX_WAIT_S };
	struct ud_bpf b = { 0 };
	unsigned int lo, hi;
	sigset_t set;
	int stats_fd;

	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (int i = 0; i < UD_STAGE_MAX; i++)
			printf("%d %s %s\n", i, stage_names[i], stage_what[i]);
		return TK_EXIT_OK;
	}
	if (argc != 3 || sscanf(argv[2], "%u-%u", &lo, &hi) != 2 || lo > hi || hi > 65535)
		return usage();
	o.stop_at = (uint32_t)atoi(argv[1]);
	o.port_lo = (uint16_t)lo;
	o.port_hi = (uint16_t)hi;
	if (o.stop_at >= UD_STAGE_MAX)
		return usage();
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	bpfu_setup_libbpf();
	if (ud_bpf_open(UD_BACKEND_AUTO, &o, &b) != TK_EXIT_OK) {
		fprintf(stderr, "udpdwell_stages: %s\n", b.summary);
		return TK_EXIT_FAIL;
	}
	stats_fd = bpfu_enable_stats();
	if (stats_fd < 0) {
		fprintf(stderr, "udpdwell_stages: cannot turn on bpf_stats\n");
		ud_bpf_close(&b);
		return TK_EXIT_FAIL;
	}
	fprintf(stderr, "%s; stage %s\n", b.summary, stage_names[o.stop_at]);
	sigtimedwait(&set, NULL, &wait);
	print_stats(b.obj);
	close(stats_fd);
	ud_bpf_close(&b);
	return TK_EXIT_OK;
}
