// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzzes bbrpcap's capture parser end to end: the pcap/pcapng reader, the
 * link/IP/TCP decoder, the flow table, throughput bins and the ACK analysis,
 * over one input taken as a whole capture file; then the same input twice as
 * a set of files read as one (cap_set: the order, frame numbers running on,
 * the overlap of the two). Seeds are small real captures
 * (tests/fuzz/corpus/fuzz_pcap).
 */
#include <stddef.h>
#include <stdint.h>

#include "pcap/analysis.h"
#include "pcap/capfile.h"

static void on_ack(void *ctx, const struct an_flow *f, const struct an_ack *a)
{
	uint64_t *sum = ctx;

	*sum += a->frame + (uint64_t)a->delay_ns + f->id;
}

static void on_overlap(void *ctx, const char *earlier, const char *later)
{
	uint64_t *sum = ctx;

	*sum += (uint64_t)earlier[0] + (uint64_t)later[0];
}

static uint64_t analyse(struct an *a)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < a->nflows; i++) {
		for (int d = 0; d < 2; d++) {
			sum += (uint64_t)an_delay_pct(&a->flows[i]->d[d], 50);
			sum += (uint64_t)an_delay_pct(&a->flows[i]->d[d], 99);
			sum += an_dir_mss(a, a->flows[i], d);
		}
	}
	return sum;
}

/* the input as two files of one set */
static uint64_t run_set(const uint8_t *data, size_t size, struct an_config *cfg)
{
	const struct cap_member m[2] = { { .path = "b", .buf = data, .len = size },
					 { .path = "a", .buf = data, .len = size } };
	struct cap_set s;
	uint64_t sum = 0;
	struct an *a;

	if (cap_set_open_mem(&s, m, 2))
		return 0;
	s.on_overlap = on_overlap;
	s.ctx = &sum;
	a = an_new(cfg);
	if (a) {
		an_run_set(a, &s);
		sum += analyse(a) + a->frames;
		an_free(a);
	}
	cap_set_close(&s);
	return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct an_config cfg = { .bin_ns = 1000000, .acks = true, .delack_ns = 10000000, .on_ack = on_ack };
	struct cap_file c;
	uint64_t sum = 0;
	struct an *a;

	cfg.ctx = &sum;
	if (cap_open_mem(&c, data, size))
		return 0;
	a = an_new(&cfg);
	if (a) {
		an_run(a, &c);
		sum += analyse(a);
		an_free(a);
	}
	cap_close(&c);
	sum += run_set(data, size, &cfg);
	return sum == 42 ? 0 : 0; /* keep sum alive */
}
