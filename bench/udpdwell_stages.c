// SPDX-License-Identifier: GPL-2.0-only
/*
 * udpdwell's tracepoint programs stopped after one stage (enum ud_stage in
 * bpf/contract/udpdwell.h), for bench/60-udpdwell.sh's cost breakdown: loads
 * bpf/udpdwell_tp_stages.bpf.c (the tracepoint backend with the stage knob)
 * with targ_stop_at = STAGE and the rest as udpdwell sets it, without the
 * drop programs (a drop is rare in the benchmark), turns on bpf_stats, says
 * "backend ..." on stderr when attached, and on SIGINT or SIGTERM (or after
 * 600 s) prints each program's statistics as udpdwell --bpf-stats does (JSON
 * lines, "type":"bpf_prog"), then exits.
 *
 *   udpdwell_stages --list          the stages: "NUMBER NAME WHAT" per line
 *   udpdwell_stages STAGE LO-HI     run stage STAGE on local ports LO..HI
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bpfutil.h"
#include "common.h"
#include "dwellrec.h"
#include "record.h"
#include "bpf/contract/udpdwell.h"
#include "udpdwell_tp_stages.skel.h"

#define MAX_WAIT_S 600 /* a forgotten run ends by itself */

static const char *const stage_names[] = UD_STAGE_NAMES;
static const char *const stage_what[] = UD_STAGE_WHAT;

/* each program's statistics, as udpdwell --bpf-stats writes them (lib/dwellrec.h) */
static int print_stats(struct bpf_object *obj)
{
	struct rec_writer *w = rec_writer_new(REC_JSON, stdout);
	struct bpf_program *p;
	int err = 0;

	if (!w)
		return -1;
	bpf_object__for_each_program(p, obj) {
		struct ud_bpf_rec b = { 0 };
		int fd = bpf_program__fd(p);

		if (fd < 0 || bpfu_prog_stats(fd, &b.run_time_ns, &b.run_cnt))
			continue;
		snprintf(b.prog, sizeof(b.prog), "%s", bpf_program__name(p));
		b.ns_per_run = b.run_cnt ? (double)b.run_time_ns / (double)b.run_cnt : NAN;
		if (ud_bpf_write(w, &b))
			err = -1;
	}
	return rec_writer_free(w) || err ? -1 : 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: udpdwell_stages --list | STAGE LO-HI\n");
	return TK_EXIT_USAGE;
}

/* loaded and attached as udpdwell's tracepoint backend, stopping at stop_at */
static struct udpdwell_tp_stages_bpf *open_stages(uint32_t stop_at, uint16_t lo, uint16_t hi)
{
	struct udpdwell_tp_stages_bpf *s = udpdwell_tp_stages_bpf__open();
	char module[64];

	if (!s)
		return NULL;
	s->rodata->targ_port_lo = lo;
	s->rodata->targ_port_hi = hi;
	s->rodata->targ_max_sockets = UD_DEFAULT_SOCKETS;
	s->rodata->targ_rdonly_cast = bpfu_func_nargs("bpf_rdonly_cast", module, sizeof(module)) >= 0;
	s->rodata->targ_stop_at = stop_at;
	bpf_program__set_autoload(s->progs.ud_kfree_skb, false);
	bpf_program__set_autoload(s->progs.ud_udp_fail_queue, false);
	if (udpdwell_tp_stages_bpf__load(s) || udpdwell_tp_stages_bpf__attach(s)) {
		udpdwell_tp_stages_bpf__destroy(s);
		return NULL;
	}
	return s;
}

int main(int argc, char **argv)
{
	struct timespec wait = { .tv_sec = MAX_WAIT_S };
	struct udpdwell_tp_stages_bpf *s;
	unsigned int lo, hi, stage;
	sigset_t set;
	int stats_fd, rc;

	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (int i = 0; i < UD_STAGE_MAX; i++)
			printf("%d %s %s\n", i, stage_names[i], stage_what[i]);
		return TK_EXIT_OK;
	}
	if (argc != 3 || sscanf(argv[1], "%u", &stage) != 1 || stage >= UD_STAGE_MAX ||
	    sscanf(argv[2], "%u-%u", &lo, &hi) != 2 || lo > hi || hi > 65535)
		return usage();
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	bpfu_setup_libbpf();
	s = open_stages(stage, (uint16_t)lo, (uint16_t)hi);
	if (!s) {
		fprintf(stderr, "udpdwell_stages: cannot load or attach the programs\n");
		return TK_EXIT_FAIL;
	}
	stats_fd = bpfu_enable_stats();
	if (stats_fd < 0) {
		fprintf(stderr, "udpdwell_stages: cannot turn on bpf_stats\n");
		udpdwell_tp_stages_bpf__destroy(s);
		return TK_EXIT_FAIL;
	}
	fprintf(stderr, "backend tracepoint, stopping after stage %s\n", stage_names[stage]);
	sigtimedwait(&set, NULL, &wait);
	rc = print_stats(s->obj) ? TK_EXIT_FAIL : TK_EXIT_OK;
	close(stats_fd);
	udpdwell_tp_stages_bpf__destroy(s);
	return rc;
}
