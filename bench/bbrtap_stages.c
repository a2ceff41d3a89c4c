// SPDX-License-Identifier: GPL-2.0-only
/*
 * The benchmark's loader for the tap's cost breakdown (bench/21-bbrtap.sh):
 * registers bbr_traced with the tap stopped after one stage (enum
 * bt_tap_stop in bpf/contract/bbrtrace.h; "none" runs no tap at all, as
 * bbrtrace --no-tap does), drains the ring buffer as bbrtrace would (without
 * decoding), and prints bt_main's bpf_stats when the time is up:
 *
 *   bbrtap_stages check            exit 0 if this kernel can run it
 *   bbrtap_stages STOP SECONDS [RINGBUF_MB]
 *       STOP: none, or 0 (whole tap) .. BT_STOP_MAX-1; RINGBUF_MB: as bbrtrace's
 *       --ringbuf-mb (default 8), the reader woken per 1/32 of it, as bbrtrace does
 *
 * prints "ready" once bbr_traced is registered (flows opt in with
 * TCP_CONGESTION), then "NS_PER_RUN RUN_CNT" at the end. The kernel's
 * bbr_main must take four arguments (6.10+): this loads bbr_traced.bpf.o only.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/contract/bbrtrace.h"
#include "bpfutil.h"
#include "bbr_traced.skel.h"

#ifndef BPF_F_LINK
#define BPF_F_LINK (1U << 13)
#endif
#define STRUCT_OPS_ATTACH 44 /* enum bpf_attach_type BPF_STRUCT_OPS, 6.4+ */
#define POLL_MS 100          /* bbrtrace's own poll period is of this order */
#define DEFAULT_RINGBUF_MB 8 /* bbrtrace's --ringbuf-mb default */
#define WAKEUP_SHIFT_BELOW_SIZE 5 /* bbrtrace wakes its reader per 1/32 of the ring */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int discard(void *ctx, void *data, size_t len)
{
	(void)ctx, (void)data, (void)len;
	return 0;
}

/* the link unregisters bbr_traced when its fd closes, even if we are killed */
static int register_ops(struct bbr_traced_bpf *s)
{
	struct bpf_link *l = bpf_map__attach_struct_ops(s->maps.bbr_traced);

	if (!l)
		return -errno;
	bpf_link__disconnect(l);
	bpf_link__destroy(l);
	return bpf_link_create(bpf_map__fd(s->maps.bbr_traced), 0, STRUCT_OPS_ATTACH, NULL);
}

static int run(struct bbr_traced_bpf *s, int secs)
{
	struct ring_buffer *rb = ring_buffer__new(bpf_map__fd(s->maps.events), discard, NULL, NULL);
	int link, stats = bpfu_enable_stats();
	uint64_t ns = 0, cnt = 0;
	time_t end = time(NULL) + secs;

	if (!rb || stats < 0) {
		fprintf(stderr, "bbrtap_stages: ring buffer or bpf_stats: %s\n", strerror(errno));
		return 1;
	}
	link = register_ops(s);
	if (link < 0) {
		fprintf(stderr, "bbrtap_stages: registering bbr_traced: %s\n", strerror(-link));
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (!stop && time(NULL) < end) /* bounded by SECONDS */
		ring_buffer__poll(rb, POLL_MS);
	bpfu_prog_stats(bpf_program__fd(s->progs.bt_main), &ns, &cnt);
	printf("%.1f %llu\n", cnt ? (double)ns / (double)cnt : 0.0, (unsigned long long)cnt);
	close(link);
	close(stats);
	ring_buffer__free(rb);
	return 0;
}

/* bbr_traced.bpf.o calls bbr_main(sk, ack, flag, rs): 6.10+ */
static bool bbr_main_4args(void)
{
	char module[64];

	if (bpfu_func_nargs("bbr_main", module, sizeof(module)) == 4)
		return true;
	fprintf(stderr, "bbrtap_stages: this kernel's bbr_main does not take (sk, ack, flag, rs) "
			"(6.10+), or BBR is not loaded\n");
	return false;
}

int main(int argc, char **argv)
{
	struct bbr_traced_bpf *s;
	long stop_at;
	int secs, rc, mb;

	if (argc == 2 && !strcmp(argv[1], "check")) /* can this kernel run it? */
		return bbr_main_4args() ? 0 : 1;
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: bbrtap_stages STOP|none SECONDS [RINGBUF_MB]\n");
		return 2;
	}
	stop_at = strcmp(argv[1], "none") ? strtol(argv[1], NULL, 10) : -1;
	secs = atoi(argv[2]);
	mb = argc == 4 ? atoi(argv[3]) : DEFAULT_RINGBUF_MB;
	if (stop_at >= BT_STOP_MAX || secs <= 0 || mb <= 0 || (mb & (mb - 1))) {
		fprintf(stderr, "bbrtap_stages: STOP is none or 0..%d; SECONDS > 0; "
				"RINGBUF_MB a power of two\n", BT_STOP_MAX - 1);
		return 2;
	}
	if (!bbr_main_4args())
		return 1;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	s = bbr_traced_bpf__open();
	if (!s)
		return 1;
	s->rodata->targ_tap = stop_at >= 0;
	s->rodata->targ_tap_stop = stop_at >= 0 ? (__u32)stop_at : BT_STOP_NONE;
	bpf_map__set_max_entries(s->maps.events, (__u32)mb << 20);
	s->rodata->targ_wakeup_shift = (__u32)__builtin_ctz((unsigned)mb << 20) - WAKEUP_SHIFT_BELOW_SIZE;
	bpf_map__set_map_flags(s->maps.bbr_traced, bpf_map__map_flags(s->maps.bbr_traced) | BPF_F_LINK);
	if (bbr_traced_bpf__load(s)) {
		fprintf(stderr, "bbrtap_stages: loading bbr_traced: %s\n", strerror(errno));
		bbr_traced_bpf__destroy(s);
		return 1;
	}
	rc = run(s, secs);
	bbr_traced_bpf__destroy(s);
	return rc;
}
