/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ackhold's BPF side: the kernel's checks, the programs loaded, configured
 * and attached, the records read from the ring buffer, the counters, and
 * the flows still open at the end.
 */
#ifndef ACKHOLD_PROBE_H
#define ACKHOLD_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "ackhold/ackhold.h"
#include "bpf/contract/ackhold.h"

struct ackhold_bpf;
struct rec_writer;
struct ring_buffer;

/* one record from the kernel; return 0 */
typedef int (*ah_rec_fn)(void *ctx, const struct ah_rec *r);

struct ah_probe {
	struct ackhold_bpf *skel;
	struct ring_buffer *rb;
	ah_rec_fn fn;
	void *ctx;
};

/*
 * Checks the kernel (BTF, the tracepoints, tcp_delack_timer's address),
 * loads and attaches the programs with o's ports, --min-hold and
 * --max-flows. TK_EXIT_OK, or an exit code after one line saying why.
 */
int ah_probe_open(struct ah_probe *p, const struct options *o, ah_rec_fn fn, void *ctx);
/* the records waiting, within timeout_ms; <0 on error (not EINTR) */
int ah_probe_poll(struct ah_probe *p, int timeout_ms);
/* detaches the programs, then reads the records they left */
void ah_probe_stop(struct ah_probe *p);
/* the counters, summed over CPUs (enum ah_counter) */
void ah_probe_counters(const struct ah_probe *p, uint64_t out[AH_CNT_MAX]);
/* each flow still in the map, as the records its close would send (its
 * pending hold without a resume, then its totals) */
void ah_probe_open_flows(struct ah_probe *p);
/* the runs of its programs the kernel skipped (one already running on that CPU) */
uint64_t ah_probe_misses(const struct ah_probe *p);
/* each program's bpf_stats (lib/progstats.h) into w and err_w (either may be
 * NULL); -1 when a write to w failed */
int ah_probe_stats(const struct ah_probe *p, struct rec_writer *w, struct rec_writer *err_w);
void ah_probe_close(struct ah_probe *p);

#endif
