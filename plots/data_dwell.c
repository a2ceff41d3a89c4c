// SPDX-License-Identifier: GPL-2.0-only
/*
 * The dwell plot's data: udpdwell's socket records, read through its own
 * record definitions (lib/dwellrec.h), summed per socket and written as
 * dwell.dat, a row per dwell bucket and a column per socket.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dwellrec.h"
#include "jlines.h"
#include "jsonl.h"
#include "log.h"
#include "plots/data_file.h"
#include "plots/plotdata.h"

struct dwell_sock {
	ud_text addr, comm;
	uint16_t port;
	uint64_t packets, buckets[UD_NBUCKETS], drops;
	double avg_sum, max_us, p99_us;
	enum ud_state state; /* its worst */
};

static int cmp_sock(const void *x, const void *y)
{
	const struct dwell_sock *a = x, *b = y;

	if (a->state != b->state)
		return (int)b->state - (int)a->state;
	return a->port < b->port ? -1 : a->port > b->port;
}

/* the sockets seen so far */
struct dwell_set {
	struct dwell_sock *socks;
	size_t n, cap;
};

/* the socket at addr:port, added when new; NULL when out of memory */
static struct dwell_sock *dwell_sock_of(struct dwell_set *set, const char *addr, uint16_t port)
{
	struct dwell_sock *s;

	for (size_t i = 0; i < set->n; i++)
		if (set->socks[i].port == port && !strcmp(set->socks[i].addr, addr))
			return &set->socks[i];
	if (set->n == set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 8;
		struct dwell_sock *v = realloc(set->socks, cap * sizeof(*v));

		if (!v)
			return NULL;
		set->socks = v;
		set->cap = cap;
	}
	s = &set->socks[set->n++];
	memset(s, 0, sizeof(*s));
	snprintf(s->addr, sizeof(s->addr), "%s", addr);
	s->port = port;
	return s;
}

/* one "socket" record into its socket's sums; 0 or PD_ERR_* with err set */
static int dwell_add(struct dwell_set *set, const struct jl_obj *o, const char *where, char *err, size_t errlen)
{
	struct ud_socket_rec r;
	struct ud_fieldset fs;
	struct dwell_sock *s;

	ud_socket_read(o, &r, &fs);
	if (!ud_has(&fs, UD_SK_buckets)) {
		log_fmt(err, errlen, "%s: a socket record without its buckets array of %d counts", where,
			UD_NBUCKETS);
		return PD_ERR_INPUT;
	}
	s = dwell_sock_of(set, r.addr, r.port);
	if (!s)
		return pd_out_of_memory(err, errlen);
	if (r.comm[0])
		memcpy(s->comm, r.comm, sizeof(s->comm));
	s->packets += r.packets;
	if (!isnan(r.avg_us))
		s->avg_sum += r.avg_us * (double)r.packets;
	if (r.max_us > s->max_us)
		s->max_us = r.max_us;
	if (r.p99_us > s->p99_us)
		s->p99_us = r.p99_us;
	if (r.state > s->state)
		s->state = r.state;
	for (int k = 0; k < UD_NBUCKETS; k++)
		s->buckets[k] += r.buckets[k];
	for (unsigned int j = 0; j < r.drops.n; j++)
		s->drops += r.drops.v[j].count;
	return 0;
}

/* one line of the file into the sockets' sums: 0 to go on, 1 at the end of
 * the records, or PD_ERR_* with err set */
static int dwell_line(struct jl_lines *lines, char *line, ssize_t len, struct jl_obj *o, struct dwell_set *set,
		      char *err, size_t errlen)
{
	char perr[96], where[4200];

	switch (jl_lines_next(lines, line, (size_t)len, o, perr, sizeof(perr))) {
	case JL_LINE_RECORD:
		if (!ud_record_is(o, &ud_socket_schema))
			return 0;
		snprintf(where, sizeof(where), "%s:%lu", lines->path, lines->lineno);
		return dwell_add(set, o, where, err, errlen);
	case JL_LINE_BLANK:
		return 0;
	case JL_LINE_CUT:
		return 1;
	case JL_LINE_CAPTURE:
		log_fmt(err, errlen, "%s looks like a packet capture (%s), not udpdwell's records (udpdwell "
			"--format json): bbrplot draws a capture in the dip plot, with --pcap", lines->path,
			lines->capture);
		return PD_ERR_INPUT;
	default:
		log_fmt(err, errlen, "%s:%lu: not a JSON record: %s", lines->path, lines->lineno, perr);
		return PD_ERR_INPUT;
	}
}

/* every "socket" record of the file; 0 or PD_ERR_* with err set */
static int dwell_read(FILE *in, const char *path, struct dwell_set *set, char *err, size_t errlen)
{
	struct jl_obj *o = malloc(sizeof(*o));
	struct jl_lines lines;
	size_t linecap = 0;
	char *line = NULL;
	ssize_t len;
	int rc = o ? 0 : pd_out_of_memory(err, errlen);

	jl_lines_init(&lines, path);
	while (!rc && (len = getline(&line, &linecap, in)) > 0)
		rc = dwell_line(&lines, line, len, o, set, err, errlen);
	free(line);
	free(o);
	if (rc > 0)
		rc = 0;
	if (!rc && !set->n) {
		log_fmt(err, errlen, "%s: no \"%s\" records (udpdwell --format json)", path, ud_socket_schema.type);
		rc = PD_ERR_INPUT;
	}
	return rc;
}

/* dwell.dat: a header of the sockets' legends, then a row per bucket */
static int dwell_write(const char *dir, const struct dwell_set *set, char *err, size_t errlen)
{
	FILE *out = pd_open_out(dir, "dwell.dat", err, errlen);

	if (!out)
		return PD_ERR_SYSTEM;
	fputs("\"bucket\"", out);
	for (size_t i = 0; i < set->n; i++) {
		const struct dwell_sock *s = &set->socks[i];

		fprintf(out, " \"%s:%u %s: %s, avg %.0f us, p99 %.0f us, max %.0f us, %llu drops\"", s->addr,
			s->port, s->comm, ud_state_name(s->state),
			s->packets ? s->avg_sum / (double)s->packets : 0, s->p99_us, s->max_us,
			(unsigned long long)s->drops);
	}
	fputc('\n', out);
	for (unsigned int k = 0; k < UD_NBUCKETS; k++) {
		fprintf(out, "\"%s\"", ud_bucket_name(k));
		for (size_t i = 0; i < set->n; i++) {
			uint64_t tot = 0;

			for (int q = 0; q < UD_NBUCKETS; q++)
				tot += set->socks[i].buckets[q];
			pd_put_num(out, tot ? 100.0 * (double)set->socks[i].buckets[k] / (double)tot : 0);
		}
		fputc('\n', out);
	}
	return pd_close_out(out, "dwell.dat", err, errlen) ? PD_ERR_SYSTEM : 0;
}

int pd_dwell(const char *path, const char *dir, char *err, size_t errlen)
{
	FILE *in = fopen(path, "r");
	struct dwell_set set = { 0 };
	int rc;

	if (!in) {
		log_fmt(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return PD_ERR_INPUT;
	}
	rc = dwell_read(in, path, &set, err, errlen);
	fclose(in);
	if (!rc) {
		qsort(set.socks, set.n, sizeof(*set.socks), cmp_sock);
		rc = dwell_write(dir, &set, err, errlen);
	}
	free(set.socks);
	return rc ? rc : (int)set.n;
}
