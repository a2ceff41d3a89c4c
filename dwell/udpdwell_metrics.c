// SPDX-License-Identifier: GPL-2.0-only
/*
 * udpdwell's Prometheus page: the maps as they are at the scrape, one series
 * per (port, addr, pid, comm), each socket's state as of the last interval.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common.h"
#include "dwellrec.h"
#include "prom.h"

#include "udpdwell.h"

static const struct ud_keystate *keystate_find(const struct ud_ctx *c, uint64_t key)
{
	struct ud_keystate k = { .key = key };

	return c->nstates ? bsearch(&k, c->states, c->nstates, sizeof(*c->states), keystate_cmp)
			  : NULL;
}

/* one series per (port, addr, pid, comm): sockets sharing them are summed */
struct series {
	uint16_t port;
	char addr[48];
	uint32_t pid;
	char comm[16];
	uint64_t buckets[UD_NBUCKETS];
	uint64_t sum_ns;
	uint64_t queue_len;
	enum ud_state state;
	struct ud_drop_count drops[UD_MAX_REASONS];
	unsigned int ndrops;
};

static int series_cmp(const void *a, const void *b)
{
	const struct series *x = a, *y = b;
	int d;

	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	if ((d = strcmp(x->addr, y->addr)))
		return d;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return strcmp(x->comm, y->comm);
}

/* the series of one socket entry e of the scrape */
static void series_of(const struct ud_ctx *c, const struct ud_entry *e, struct series *x)
{
	const struct ud_keystate *k = keystate_find(c, e->key);

	x->port = e->port;
	cli_fmt_v6mapped(e->addr, x->addr, sizeof(x->addr));
	x->pid = e->tgid ? e->tgid : (k ? k->pid : 0);
	snprintf(x->comm, sizeof(x->comm), "%s", e->tgid ? e->comm : (k ? k->comm : ""));
	memcpy(x->buckets, e->cumul.buckets, sizeof(x->buckets));
	x->sum_ns = e->cumul.sum_ns;
	x->queue_len = e->queue_len;
	x->state = k ? k->state : UD_OK;
	x->ndrops = e->ndrops;
	memcpy(x->drops, e->drops, sizeof(x->drops));
}

/* x's figures added to a's, which has the same labels */
static void series_add(struct series *a, const struct series *x)
{
	for (int i = 0; i < UD_NBUCKETS; i++)
		a->buckets[i] += x->buckets[i];
	a->sum_ns += x->sum_ns;
	a->queue_len += x->queue_len;
	if (x->state > a->state)
		a->state = x->state;
	for (unsigned int i = 0; i < x->ndrops; i++)
		ud_drops_add(a->drops, &a->ndrops, x->drops[i].reason, x->drops[i].count);
}

/* sorts the n series and merges those with equal labels; returns how many are left */
static unsigned int series_merge(struct series *s, unsigned int n)
{
	unsigned int w = 0;

	if (n < 2)
		return n;
	qsort(s, n, sizeof(*s), series_cmp);
	for (unsigned int r = 1; r < n; r++) {
		if (series_cmp(&s[w], &s[r]))
			s[++w] = s[r];
		else
			series_add(&s[w], &s[r]);
	}
	return w + 1;
}

/* a series' four labels, in the caller's buffers */
struct labels {
	char port[8], pid[12];
	struct prom_label l[4];
};

static const struct prom_label *labels_of(const struct series *s, struct labels *b)
{
	snprintf(b->port, sizeof(b->port), "%u", s->port);
	snprintf(b->pid, sizeof(b->pid), "%u", s->pid);
	b->l[0] = (struct prom_label){ "port", b->port };
	b->l[1] = (struct prom_label){ "addr", s->addr };
	b->l[2] = (struct prom_label){ "pid", b->pid };
	b->l[3] = (struct prom_label){ "comm", s->comm };
	return b->l;
}
#define NLABELS ARRAY_SIZE(((struct labels *)0)->l)

/* the metric names, in Prometheus's base units; monitoring/ names them too */
#define METRIC_DWELL "udp_socket_dwell_seconds"
#define METRIC_DROPS "udp_socket_drops_total"
#define METRIC_STATE "udp_socket_state"
#define METRIC_QUEUE "udp_socket_queue_length"
#define METRIC_EVICTED "udpdwell_sockets_evicted_total"
#define METRIC_TRACKED "udpdwell_sockets_tracked"
#define METRIC_UNATTRIBUTED "udpdwell_unattributed_reads_total"

static int put_dwell(struct prom_buf *b, const struct series *s, unsigned int n)
{
	double le_s[UD_NBUCKETS - 1];
	int err;

	for (int i = 0; i < UD_NBUCKETS - 1; i++)
		le_s[i] = ud_le_us[i] / TK_USEC_PER_SEC_F;
	err = prom_family(b, METRIC_DWELL, PROM_HISTOGRAM,
			  "Time each datagram waited in the socket receive queue, from the "
			  "kernel's enqueue to the application's read.");
	for (unsigned int i = 0; i < n; i++) {
		struct labels lb;

		err |= prom_histogram(b, METRIC_DWELL, labels_of(&s[i], &lb), NLABELS, le_s,
				      s[i].buckets, UD_NBUCKETS - 1, (double)s[i].sum_ns / TK_NSEC_PER_SEC_F);
	}
	return err;
}

static int put_drops(struct prom_buf *b, const struct ud_ctx *c, const struct series *s, unsigned int n)
{
	int err = prom_family(b, METRIC_DROPS, PROM_COUNTER,
			      "Datagrams the kernel dropped for the socket, by drop reason "
			      "(enum skb_drop_reason of the running kernel).");

	for (unsigned int i = 0; i < n; i++) {
		struct labels lb;
		struct prom_label l[NLABELS + 1];
		char rbuf[32];

		memcpy(l, labels_of(&s[i], &lb), sizeof(lb.l));
		for (unsigned int j = 0; j < s[i].ndrops; j++) {
			l[NLABELS] = (struct prom_label){
				"reason", ud_reason_name(&c->reasons, s[i].drops[j].reason, rbuf, sizeof(rbuf))
			};
			err |= prom_sample_u64(b, METRIC_DROPS, l, NLABELS + 1, s[i].drops[j].count);
		}
	}
	return err;
}

static int put_gauges(struct prom_buf *b, const struct series *s, unsigned int n)
{
	int err = prom_family(b, METRIC_STATE, PROM_GAUGE,
			      "The socket's state at the last interval: " UD_STATE_LEGEND ".");

	for (unsigned int i = 0; i < n; i++) {
		struct labels lb;

		err |= prom_sample(b, METRIC_STATE, labels_of(&s[i], &lb), NLABELS, (double)s[i].state);
	}
	err |= prom_family(b, METRIC_QUEUE, PROM_GAUGE,
			   "Datagrams waiting in the receive queue at the socket's last event.");
	for (unsigned int i = 0; i < n; i++) {
		struct labels lb;

		err |= prom_sample_u64(b, METRIC_QUEUE, labels_of(&s[i], &lb), NLABELS,
				       s[i].queue_len);
	}
	return err;
}

static int put_map(struct prom_buf *b, const struct ud_ctx *c)
{
	int err = prom_family(b, METRIC_EVICTED, PROM_COUNTER,
			      "Sockets evicted from the bounded (LRU) socket map.");

	err |= prom_sample_u64(b, METRIC_EVICTED, NULL, 0, c->evicted);
	err |= prom_family(b, METRIC_TRACKED, PROM_GAUGE, "Sockets in the kernel's socket map.");
	err |= prom_sample_u64(b, METRIC_TRACKED, NULL, 0, c->scrape.n);
	err |= prom_family(b, METRIC_UNATTRIBUTED, PROM_COUNTER,
			   "Reads of sockets evicted before an interval reported them (as of the "
			   "last interval).");
	err |= prom_sample_u64(b, METRIC_UNATTRIBUTED, NULL, 0, c->ledger.total);
	return err;
}

/* the /metrics page, on the server's thread: the maps as they are now */
int render_metrics(struct prom_buf *b, void *arg)
{
	struct ud_ctx *c = arg;
	struct ud_source src = source_of(c);
	struct series *s = NULL;
	unsigned int n = 0;
	int err = -1;

	pthread_mutex_lock(&c->lock);
	if (ud_snapshot_read(&c->scrape, &src, *c->bpf.epoch, false) == 0)
		s = calloc(c->scrape.n ? c->scrape.n : 1, sizeof(*s));
	if (s) {
		for (unsigned int i = 0; i < c->scrape.n; i++)
			series_of(c, &c->scrape.e[i], &s[n++]);
		n = series_merge(s, n);
		/* one family after the other, in this order */
		err = put_dwell(b, s, n);
		err |= put_drops(b, c, s, n);
		err |= put_gauges(b, s, n);
		err |= put_map(b, c);
	}
	pthread_mutex_unlock(&c->lock);
	free(s);
	return err ? -1 : 0;
}
