// SPDX-License-Identifier: GPL-2.0-only
/*
 * udpdwell's records (lib/dwellrec.h): which types the output declares, and
 * one interval's records: the interval, its sockets worst first, the BPF
 * programs' costs.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <bpf/libbpf.h>

#include "bpfutil.h"
#include "common.h"
#include "dwellrec.h"

#include "udpdwell.h"

/* CSV: every record type the output may hold shares the file's one header */
void declare_records(const struct options *o, struct rec_writer *w)
{
	rec_writer_declare(w, &ud_interval_schema);
	rec_writer_declare(w, &ud_socket_schema);
	if (o->bpf_stats)
		rec_writer_declare(w, &ud_bpf_schema);
}

static void iso_time(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;
	char base[24];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03dZ", base, (int)(ts.tv_nsec / TK_NSEC_PER_MSEC % TK_MSEC_PER_SEC));
}

/* one socket's row r as its record, its drops named */
static int write_socket(struct ud_ctx *c, const struct ud_row *r)
{
	struct ud_socket_rec s = { .port = r->port, .pid = r->pid, .packets = r->d.packets,
				   .avg_us = r->avg_us, .p50_us = r->p50_us, .p99_us = r->p99_us,
				   .max_us = r->max_us, .queue_len = r->queue_len, .state = r->state };
	char unknown[32];

	snprintf(s.addr, sizeof(s.addr), "%s", r->addr);
	snprintf(s.comm, sizeof(s.comm), "%.*s", (int)sizeof(r->comm), r->comm);
	memcpy(s.buckets, r->d.buckets, sizeof(s.buckets));
	for (unsigned int i = 0; i < r->ndrops; i++) {
		struct ud_drop *d = &s.drops.v[s.drops.n++];

		snprintf(d->reason, sizeof(d->reason), "%s",
			 ud_reason_name(&c->reasons, r->drops[i].reason, unknown, sizeof(unknown)));
		d->count = r->drops[i].count;
	}
	return ud_socket_write(c->w, &s);
}

static int write_bpf_stats(struct ud_ctx *c, struct bpf_object *obj)
{
	struct bpf_program *p;

	if (!obj)
		return 0;
	bpf_object__for_each_program(p, obj) {
		struct ud_bpf_rec b = { 0 };
		int fd = bpf_program__fd(p);

		if (fd < 0 || bpfu_prog_stats(fd, &b.run_time_ns, &b.run_cnt))
			continue;
		snprintf(b.prog, sizeof(b.prog), "%s", bpf_program__name(p));
		b.ns_per_run = b.run_cnt ? (double)b.run_time_ns / (double)b.run_cnt : NAN;
		if (ud_bpf_write(c->w, &b))
			return -1;
	}
	return 0;
}

static bool is_shown(const struct options *o, const struct ud_row *r) { return r->active || o->all; }

/* the interval's totals over every socket; returns how many sockets are shown */
static unsigned int add_up(const struct ud_ctx *c, unsigned int nrows, struct ud_cumul *tot)
{
	const struct options *o = c->o;
	unsigned int n = 0;

	for (unsigned int i = 0; i < nrows; i++) {
		const struct ud_row *r = &c->rows[i];

		tot->packets += r->d.packets;
		tot->unmatched += r->d.unmatched;
		tot->resync_added += r->d.resync_added;
		tot->resync_dropped += r->d.resync_dropped;
		tot->ring_full += r->d.ring_full;
		if (is_shown(o, r))
			n++;
	}
	return o->top && n > o->top ? o->top : n;
}

/* the interval's records: the interval, its sockets worst first, the programs' costs */
int write_interval(struct ud_ctx *c, unsigned int nrows, uint64_t since, uint64_t now)
{
	const struct options *o = c->o;
	struct ud_cumul tot = { 0 };
	unsigned int shown = add_up(c, nrows, &tot);
	struct ud_interval_rec iv = { .interval_s = (double)(now - since) / TK_NSEC_PER_SEC_F, .sockets = shown,
				      .tracked = c->prev.n, .packets = tot.packets, .unmatched = tot.unmatched,
				      .resync_added = tot.resync_added, .resync_dropped = tot.resync_dropped,
				      .ring_full = tot.ring_full, .evicted = c->evicted,
				      .unattributed = c->unattributed };

	/* a live table redraws the screen; a single interval is just printed */
	if (c->tty && o->out.format == REC_TABLE && o->intervals != 1)
		fputs("\033[H\033[J", o->out.f);
	iso_time(iv.time, sizeof(iv.time));
	snprintf(iv.backend, sizeof(iv.backend), "%s", ud_backend_names[c->bpf.kind]);
	if (ud_interval_write(c->w, &iv))
		return -1;
	for (unsigned int i = 0, k = 0; i < nrows && k < shown; i++) {
		if (!is_shown(o, &c->rows[i]))
			continue;
		k++;
		if (write_socket(c, &c->rows[i]))
			return -1;
	}
	if (o->bpf_stats && (write_bpf_stats(c, c->bpf.obj) || write_bpf_stats(c, c->ref_obj)))
		return -1;
	/* a table repeats its headers each interval; CSV has one for the file */
	if (rec_writer_format(c->w) == REC_TABLE)
		rec_writer_reset_header(c->w);
	return rec_writer_flush(c->w);
}
