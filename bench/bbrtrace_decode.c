// SPDX-License-Identifier: GPL-2.0-only
/*
 * How many events per second bbrtrace's user-space side puts back in time
 * order, decodes and writes as JSON lines (or CSV/table): the same
 * bt_reorder + bt_sample_decode + rec_write path as the tool, fed from
 * memory in the kernel's per-CPU batches (two CPUs, 16 events each),
 * writing to /dev/null (or to OUT, to compare two builds' bytes).
 *
 *   bbrtrace_decode [N] [json|csv|table] [OUT]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bbrtrace/reorder.h"
#include "bbrtrace/sample.h"
#include "common.h"

static int write_one(void *ctx, const struct bt_event *e)
{
	struct rec_writer *w = ctx;
	struct bt_sample s;

	bt_sample_decode(&s, e, 1795989563000000000LL);
	return bt_sample_write(w, &s, 1129000000000ULL);
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000;
	const char *fmt_name = argc > 2 ? argv[2] : "json";
	enum rec_format fmt = REC_JSON;
	struct bt_event ev[64];
	FILE *out = fopen(argc > 3 ? argv[3] : "/dev/null", "w");
	struct rec_writer *w;
	uint64_t t0, t1;

	if (rec_format_parse("format", fmt_name, &fmt) || !out)
		return 2;
	/* values shaped like a real PROBE_BW flow on a veth pair */
	for (int i = 0; i < 64; i++) {
		struct bt_event *e = &ev[i];

		memset(e, 0, sizeof(*e));
		e->t_ns = 1129249762983ULL + (uint64_t)i * 12345;
		e->cookie = 4242 + (uint64_t)(i & 3);
		memcpy(e->saddr, "\0\0\0\0\0\0\0\0\0\0\xff\xff\x0a\xc9\x00\x01", 16);
		memcpy(e->daddr, "\0\0\0\0\0\0\0\0\0\0\xff\xff\x0a\xc9\x00\x02", 16);
		e->sport = 47486;
		e->dport = 5201;
		e->snd_una = 3150537364U + (uint32_t)i * 2896;
		e->snd_nxt = e->snd_una + 65160;
		e->mss = 1448;
		e->cwnd = 1138;
		e->pacing_rate = 4031775000ULL;
		e->delivered = 2 + (i & 7);
		e->interval_us = 40 + i;
		e->snd_interval_us = 30 + (uint32_t)i;
		e->rcv_interval_us = 40 + (uint32_t)i;
		e->rtt_us = 12;
		e->acked_sacked = 2;
		e->prior_in_flight = 44;
		e->is_app_limited = i & 1;
		e->mode = BT_PROBE_BW;
		e->pacing_gain = 320;
		e->cwnd_gain = 512;
		e->bw_prev = 1024u * 1024 * 17;
		e->bw = 1024u * 1024 * 17;
		e->min_rtt_us = 9;
	}
	w = rec_writer_new(fmt, out);
	t0 = tk_mono_ns();
	{
		struct bt_reorder ro = {};
		uint64_t t = 0;

		for (uint64_t i = 0; i < n; i += 32) {
			/* CPU 1's batch arrives before CPU 0's older one */
			for (int cpu = 1; cpu >= 0; cpu--) {
				for (int k = 0; k < 16; k++) {
					struct bt_event e = ev[(i + (uint64_t)k) & 63];

					e.t_ns = t + (uint64_t)(2 * k + cpu) * TK_NSEC_PER_USEC;
					bt_reorder_push(&ro, &e);
				}
			}
			t += 32000;
			if ((i & 8191) == 0) /* a poll period's worth */
				bt_reorder_release(&ro, t - 16000, write_one, w);
		}
		bt_reorder_release(&ro, UINT64_MAX, write_one, w);
		bt_reorder_free(&ro);
	}
	rec_writer_flush(w);
	t1 = tk_mono_ns();
	rec_writer_free(w);
	fclose(out);
	printf("%s %llu events %.3f s %.0f events/s %.1f ns/event\n", fmt_name, (unsigned long long)n,
	       (double)(t1 - t0) * TK_SEC_PER_NSEC_F, (double)n / ((double)(t1 - t0) * TK_SEC_PER_NSEC_F),
	       (double)(t1 - t0) / (double)n);
	return 0;
}
