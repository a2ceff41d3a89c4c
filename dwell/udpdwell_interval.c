// SPDX-License-Identifier: GPL-2.0-only
/*
 * Closing an interval: the maps read under the lock the Prometheus thread
 * shares, one row per socket against the previous reading, the owners of the
 * sockets nobody has read yet, each socket's state kept for the gauge; then
 * the interval's records, worst dwell first.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bpfutil.h"
#include "common.h"
#include "log.h"

#include "udpdwell.h"

static struct ud_owner_query *owner_find(struct ud_ctx *c, uint64_t ino)
{
	for (unsigned int i = 0; i < c->nowners; i++)
		if (c->owners[i].ino == ino)
			return &c->owners[i];
	return NULL;
}

/*
 * Resolve through /proc the sockets that have no reader yet, and the idle
 * ones with datagrams waiting: a socket nobody holds any more is closed, and
 * its entry is deleted.
 */
static void resolve_owners(struct ud_ctx *c, struct ud_row *rows, unsigned int n)
{
	unsigned int need = 0;

	c->nowners = 0;
	for (unsigned int i = 0; i < n; i++) {
		if (!rows[i].ino || !(rows[i].pid == 0 || rows[i].idle_waiting))
			continue;
		if (c->nowners == c->capowners) {
			unsigned int ncap = c->capowners ? c->capowners * 2 : 16;
			struct ud_owner_query *p = realloc(c->owners, ncap * sizeof(*p));

			if (!p)
				return;
			c->owners = p;
			c->capowners = ncap;
		}
		c->owners[c->nowners++].ino = rows[i].ino;
		need++;
	}
	if (!need || ud_owner_resolve("/proc", c->owners, c->nowners) < 0)
		return;
	for (unsigned int i = 0; i < n; i++) {
		struct ud_owner_query *q;

		if (!rows[i].ino || !(rows[i].pid == 0 || rows[i].idle_waiting))
			continue;
		q = owner_find(c, rows[i].ino);
		if (!q)
			continue;
		if (q->pid && !rows[i].pid) {
			rows[i].pid = q->pid;
			memcpy(rows[i].comm, q->comm, sizeof(rows[i].comm));
		} else if (!q->pid && rows[i].idle_waiting) {
			/* closed: its queue was purged; give its slot back */
			ud_bpf_forget(&c->bpf, rows[i].key);
			rows[i].active = false;
		}
	}
}

static uint64_t counter(struct ud_ctx *c, uint32_t idx)
{
	return bpfu_percpu_sum(c->bpf.counters_fd, idx);
}

static void update_evicted(struct ud_ctx *c)
{
	c->evicted = counter(c, UD_CNT_EVICTED);
}

struct ud_source source_of(const struct ud_ctx *c)
{
	return (struct ud_source){ .state = c->bpf.state, .nslots = c->bpf.nslots,
				   .stats_fd = c->bpf.stats_fd, .drops_fd = c->bpf.drops_fd };
}

int keystate_cmp(const void *a, const void *b)
{
	const struct ud_keystate *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/* room for n rows; -1 when there is no memory */
static int reserve_rows(struct ud_ctx *c, unsigned int n)
{
	struct ud_row *p;

	if (c->caprows >= n)
		return 0;
	p = realloc(c->rows, n * sizeof(*p));
	if (!p)
		return -1;
	c->rows = p;
	c->caprows = n;
	return 0;
}

/* each socket's state and owner at this interval, for the Prometheus gauge */
static void keep_states(struct ud_ctx *c, unsigned int nrows)
{
	free(c->states);
	c->states = calloc(nrows ? nrows : 1, sizeof(*c->states));
	c->nstates = 0;
	for (unsigned int i = 0; c->states && i < nrows; i++) {
		struct ud_keystate *k = &c->states[c->nstates++];

		k->key = c->rows[i].key;
		k->state = c->rows[i].state;
		k->pid = c->rows[i].pid;
		memcpy(k->comm, c->rows[i].comm, sizeof(k->comm));
	}
	if (c->nstates)
		qsort(c->states, c->nstates, sizeof(*c->states), keystate_cmp);
}

/*
 * Closes the interval: reads the maps, builds one row per socket against the
 * previous reading, which this reading replaces as the next interval's
 * baseline. Sets *now to the reading's time; returns the number of rows, or
 * -1 after one line saying why.
 */
static int close_interval(struct ud_ctx *c, uint64_t *now)
{
	struct ud_source src = source_of(c);
	uint64_t epoch, since = c->interval_start_ns;
	struct ud_snapshot tmp;
	unsigned int nrows = 0;
	int err;

	pthread_mutex_lock(&c->lock);
	epoch = *c->bpf.epoch;
	__atomic_store_n(c->bpf.epoch, epoch + 1, __ATOMIC_SEQ_CST);
	*now = tk_mono_ns();
	err = ud_snapshot_read(&c->cur, &src, epoch, true);
	if (err || reserve_rows(c, c->cur.n)) {
		pthread_mutex_unlock(&c->lock);
		if (err)
			elog("cannot read the socket map: %s", strerror(-err));
		else
			elog("out of memory");
		return -1;
	}
	for (unsigned int i = 0; i < c->cur.n; i++) {
		const struct ud_entry *e = &c->cur.e[i];

		ud_row_build(&c->rows[nrows++], e, ud_snapshot_find(&c->prev, e->key), &c->o->thr,
			     c->reason_rcvbuff, c->reason_proto_mem, *now, since);
	}
	c->unattributed = ud_ledger_settle(&c->ledger, &c->cur, c->rows);
	resolve_owners(c, c->rows, nrows);
	update_evicted(c);
	keep_states(c, nrows);
	tmp = c->prev;
	c->prev = c->cur;
	c->cur = tmp;
	c->interval_start_ns = *now;
	pthread_mutex_unlock(&c->lock);
	return (int)nrows;
}

/* reads the maps, closes the interval, writes its records; returns 0 or -1 */
int interval(struct ud_ctx *c)
{
	uint64_t since = c->interval_start_ns, now;
	int nrows = close_interval(c, &now);

	if (nrows < 0)
		return -1;
	if (nrows)
		qsort(c->rows, (size_t)nrows, sizeof(*c->rows), ud_row_cmp_worst);
	if (write_interval(c, (unsigned int)nrows, since, now)) {
		elog("cannot write the output: %s", strerror(errno));
		return -1;
	}
	return 0;
}
