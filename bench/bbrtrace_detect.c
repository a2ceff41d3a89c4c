// SPDX-License-Identifier: GPL-2.0-only
/*
 * What bbrtrace --detect --records events costs in user space per ACK, with
 * FLOWS flows at once: the tool's own path (bt_reorder, with the detector's
 * hints from BT_DETECT_PREFETCH_FLOWS flows on, bt_sample_decode,
 * bt_detect_feed; no record is written) fed from memory in the kernel's
 * per-CPU batches. Each flow's max-bw filter moves as
 * BBR's does on a bulk flow (new maxima, a round every few ACKs, a 10-round
 * window), so the culprit slots, the demand checkpoints and the stall
 * tracker do their real work; the flows take turns, as ACKs of many flows
 * interleave on a busy host.
 *
 *   bbrtrace_detect [ACKS] [FLOWS] [GAP_NS]
 *                                       prints ns/ACK and the detector's RSS
 *
 * GAP_NS: the time between two ACKs of the host (default 1000 ns: a million
 * ACKs a second); each flow ACKs every FLOWS x GAP_NS. A flow's ACK rate
 * sets how many demand checkpoints its window holds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bbrtrace/detect.h"
#include "bbrtrace/reorder.h"
#include "bbrtrace/sample.h"
#include "common.h"

/* one flow's state in the generator: its sequence numbers and BBR's filter */
struct gen_flow {
	uint32_t una, round;
	uint32_t t[3], v[3];
};

struct ctx {
	struct bt_detect *d;
	uint64_t collapses;
};

static int feed_one(void *p, const struct bt_event *e)
{
	struct ctx *c = p;
	struct bt_sample s;
	struct bt_collapse col;

	bt_sample_decode(&s, e, 0);
	c->collapses += bt_detect_feed(c->d, &s, &col);
	return 0;
}

/* BBR's windowed max (lib/win_minmax.c), shortened: a new max resets it, an
 * expired one rotates in the next */
static void gen_filter(struct gen_flow *f, uint32_t bw)
{
	if (bw >= f->v[0] || f->round - f->t[2] > 10) {
		for (int k = 0; k < 3; k++) {
			f->t[k] = f->round;
			f->v[k] = bw;
		}
		return;
	}
	if (bw >= f->v[1]) {
		f->t[1] = f->t[2] = f->round;
		f->v[1] = f->v[2] = bw;
	} else if (bw >= f->v[2]) {
		f->t[2] = f->round;
		f->v[2] = bw;
	}
	if (f->round - f->t[0] > 10) {
		f->t[0] = f->t[1], f->v[0] = f->v[1];
		f->t[1] = f->t[2], f->v[1] = f->v[2];
	}
}

static void gen_event(struct bt_event *e, struct gen_flow *f, uint64_t id, uint64_t t, uint32_t *seed)
{
	uint32_t prev;

	*seed = *seed * 1103515245 + 12345;
	memset(e, 0, sizeof(*e));
	e->t_ns = t;
	e->cookie = 1000 + id;
	memcpy(e->saddr, "\0\0\0\0\0\0\0\0\0\0\xff\xff\x0a\xc9\x00\x01", 16);
	memcpy(e->daddr, "\0\0\0\0\0\0\0\0\0\0\xff\xff\x0a\xc9\x00\x02", 16);
	e->sport = (uint16_t)(30000 + id % 30000);
	e->dport = 5201;
	f->una += 2896;
	e->snd_una = f->una;
	e->snd_nxt = f->una + 65160;
	e->write_seq = e->snd_nxt + 131072;
	e->snd_wnd = 1 << 20;
	e->mss = 1448;
	e->cwnd = 100;
	e->pacing_rate = 4031775000ULL;
	e->delivered = 2 + (int32_t)(*seed >> 24) % 8;
	e->interval_us = 40 + (*seed >> 16) % 64;
	e->snd_interval_us = (uint32_t)e->interval_us - 5;
	e->rcv_interval_us = (uint32_t)e->interval_us;
	e->rtt_us = 12;
	e->acked_sacked = (uint32_t)e->delivered;
	e->prior_in_flight = 44;
	e->mode = BT_PROBE_BW;
	e->pacing_gain = 256;
	e->cwnd_gain = 512;
	e->min_rtt_us = 9;
	if ((*seed >> 8) % 4 == 0)
		f->round++;
	prev = f->v[0];
	gen_filter(f, (uint32_t)(((uint64_t)e->delivered << 24) / (uint64_t)e->interval_us));
	e->bw_prev = prev;
	e->bw = f->v[0];
	e->bw1 = f->v[1];
	e->bw2 = f->v[2];
}

static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kib = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return kib;
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000;
	uint64_t flows = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000;
	uint64_t gap = argc > 3 ? strtoull(argv[3], NULL, 10) : TK_NSEC_PER_USEC;
	struct gen_flow *gf = calloc(flows ? flows : 1, sizeof(*gf));
	struct ctx c = { 0 };
	struct bt_reorder ro = { 0 };
	uint64_t t = TK_NSEC_PER_SEC, t0, t1;
	long rss0 = rss_kib();
	uint32_t seed = 1;

	if (!flows || !gap || !gf)
		return 2;
	c.d = bt_detect_new(NULL);
	t0 = tk_mono_ns();
	for (uint64_t i = 0; i < n; i += 32) {
		/* CPU 1's batch of 16 arrives before CPU 0's older one */
		for (int cpu = 1; cpu >= 0; cpu--) {
			for (int k = 0; k < 16; k++) {
				uint64_t id = (i + (uint64_t)(2 * k + cpu)) % flows;
				struct bt_event e;

				gen_event(&e, &gf[id], id, t + (uint64_t)(2 * k + cpu) * gap, &seed);
				bt_reorder_push(&ro, &e);
			}
		}
		t += 32 * gap;
		if ((i & 8191) == 0) {
			/* the detector's hints, as bbrtrace/run.c runs them */
			bt_reorder_set_ahead(&ro, bt_detect_hints_pay(c.d) ? bt_detect_ahead : NULL, c.d);
			bt_reorder_release(&ro, t - 16 * gap, feed_one, &c);
		}
	}
	bt_reorder_release(&ro, UINT64_MAX, feed_one, &c);
	t1 = tk_mono_ns();
	printf("flows %llu acks %llu %.1f ns/ack (generator included) collapses %llu rss %+ld KiB (%.0f B/flow)\n",
	       (unsigned long long)flows, (unsigned long long)n, (double)(t1 - t0) / (double)n,
	       (unsigned long long)c.collapses, rss_kib() - rss0, (double)(rss_kib() - rss0) * 1024 / (double)flows);
	bt_reorder_free(&ro);
	bt_detect_free(c.d);
	free(gf);
	return 0;
}
