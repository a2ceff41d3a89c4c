// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzzes bbrpcap's capture parser end to end: the pcap/pcapng reader, the
 * link/IP/TCP decoder, the flow table, throughput bins and the ACK analysis,
 * over one input taken as a whole capture file. Seeds are small real
 * captures (tests/fuzz/corpus/fuzz_pcap).
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
		for (uint32_t i = 0; i < a->nflows; i++) {
			for (int d = 0; d < 2; d++) {
				sum += (uint64_t)an_delay_pct(&a->flows[i]->d[d], 50);
				sum += (uint64_t)an_delay_pct(&a->flows[i]->d[d], 99);
				sum += an_dir_mss(a, a->flows[i], d);
			}
		}
		an_free(a);
	}
	cap_close(&c);
	return sum == 42 ? 0 : 0; /* keep sum alive */
}
