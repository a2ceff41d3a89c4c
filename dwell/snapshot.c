// SPDX-License-Identifier: GPL-2.0-only
/*
 * udpdwell's readings and rows: each live slot copied while its generation
 * holds, with its per-CPU stats and drop counters; then two readings made
 * into a row per socket, and the reads that no row accounted for.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "common.h"
#include "snapshot.h"

static int cmp_entry(const void *a, const void *b)
{
	const struct ud_entry *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

struct ud_entry *ud_snapshot_find(const struct ud_snapshot *s, uint64_t key)
{
	struct ud_entry k = { .key = key };

	return s->n ? bsearch(&k, s->e, s->n, sizeof(*s->e), cmp_entry) : NULL;
}

uint64_t ud_entry_drops(const struct ud_entry *e, uint32_t reason)
{
	for (unsigned int i = 0; i < e->ndrops; i++)
		if (e->drops[i].reason == reason)
			return e->drops[i].count;
	return 0;
}

void ud_entry_from(struct ud_entry *e, uint32_t slot, const struct ud_sock *st,
		   const struct ud_sock_stats *pcpu, int ncpus, uint64_t epoch)
{
	uint32_t ep = epoch & 1, tag = (uint32_t)epoch;

	memset(e, 0, sizeof(*e));
	e->key = ud_key(slot, st->gen);
	memcpy(e->addr, st->addr, 16);
	e->port = st->port;
	e->netns = st->netns;
	e->ino = st->ino;
	e->tgid = st->tgid;
	memcpy(e->comm, st->comm, sizeof(e->comm));
	e->comm[sizeof(e->comm) - 1] = '\0';
	e->queue_len = st->tail > st->head ? (uint32_t)(st->tail - st->head) : 0;
	e->last_event_ns = st->enq_event_ns > st->read_event_ns ? st->enq_event_ns
								  : st->read_event_ns;
	for (int c = 0; c < ncpus; c++) {
		const struct ud_sock_stats *p = &pcpu[c];

		e->slot_reads += p->reads;
		if (p->gen != st->gen)
			continue;
		e->cumul.sum_ns += p->sum_ns;
		for (int i = 0; i < UD_NBUCKETS; i++)
			e->cumul.buckets[i] += p->buckets[i];
		e->cumul.unmatched += p->unmatched;
		if (p->max_ns > e->max_ns)
			e->max_ns = p->max_ns;
		if (p->max_epoch_tag[ep] == tag && p->max_epoch_ns[ep] > e->interval_max_ns)
			e->interval_max_ns = p->max_epoch_ns[ep];
		/* reads that already saw the next epoch belong to this reading too */
		if (p->max_epoch_tag[ep ^ 1] == (uint32_t)(tag + 1) &&
		    p->max_epoch_ns[ep ^ 1] > e->interval_max_ns)
			e->interval_max_ns = p->max_epoch_ns[ep ^ 1];
	}
	for (int i = 0; i < UD_NBUCKETS; i++)
		e->cumul.packets += e->cumul.buckets[i];
	e->cumul.resync_added = st->resync_added;
	e->cumul.resync_dropped = st->resync_dropped;
	e->cumul.ring_full = st->ring_full;
	if (e->queue_len)
		e->oldest_stamp_ns = st->ring[st->head & UD_RING_MASK];
}

/* a consistent copy of the slot's fixed part, or false when it changed hands meanwhile */
static bool copy_slot(const struct ud_sock *live, struct ud_sock *copy)
{
	uint32_t gen = __atomic_load_n(&live->gen, __ATOMIC_ACQUIRE);

	if (!__atomic_load_n(&live->owner, __ATOMIC_ACQUIRE))
		return false;
	memcpy(copy, live, offsetof(struct ud_sock, ring));
	copy->ring[copy->head & UD_RING_MASK] = live->ring[copy->head & UD_RING_MASK];
	copy->gen = gen;
	return __atomic_load_n(&live->gen, __ATOMIC_ACQUIRE) == gen && copy->owner;
}

void ud_drops_add(struct ud_drop_count *v, unsigned int *n, uint32_t reason, uint64_t count)
{
	for (unsigned int i = 0; i < *n; i++) {
		if (v[i].reason == reason) {
			v[i].count += count;
			return;
		}
	}
	/* the last slot is kept for OTHER_REASONS: at most one append of it */
	if (reason != UD_REASON_OTHERS && *n >= UD_MAX_REASONS - 1) {
		ud_drops_add(v, n, UD_REASON_OTHERS, count);
		return;
	}
	if (*n < UD_MAX_REASONS)
		v[(*n)++] = (struct ud_drop_count){ reason, count };
}

bool ud_drops_has(const struct ud_drop_count *v, unsigned int n, uint32_t reason)
{
	for (unsigned int i = 0; i < n; i++)
		if (v[i].reason == reason)
			return true;
	return false;
}

struct drop_pair {
	uint64_t key;
	uint32_t reason;
	uint64_t count;
};

static int cmp_pair(const void *a, const void *b)
{
	const struct drop_pair *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->reason < y->reason ? -1 : x->reason > y->reason;
}

/* each socket's reasons in reason order (the same ones fold into UD_REASON_OTHERS every
 * time); a pair seen twice by a restarted walk counts once, with its larger count */
static void apply_drops(struct ud_snapshot *s, struct drop_pair *p, size_t n)
{
	qsort(p, n, sizeof(*p), cmp_pair);
	for (size_t i = 0; i < n; i++) {
		struct ud_entry *e;

		if (i + 1 < n && !cmp_pair(&p[i], &p[i + 1])) {
			if (p[i].count > p[i + 1].count)
				p[i + 1].count = p[i].count;
			continue;
		}
		e = ud_snapshot_find(s, p[i].key);
		if (e)
			ud_drops_add(e->drops, &e->ndrops, p[i].reason, p[i].count);
	}
}

/* the (socket, reason) drop counters; those of sockets no longer in the snapshot are orphans */
static int read_drops(struct ud_snapshot *s, const struct ud_source *src, bool delete_orphans)
{
	struct ud_drop_key dk, dnext, *dprev = NULL;
	struct drop_pair *pairs = NULL;
	size_t n = 0, cap = 0;
	/* bounded: an LRU map changing under us may restart the iteration */
	unsigned int bound = 4 * 65536, steps = 0;

	while (steps++ < bound && bpf_map_get_next_key(src->drops_fd, dprev, &dnext) == 0) {
		uint64_t count;

		dk = dnext;
		dprev = &dk;
		if (bpf_map_lookup_elem(src->drops_fd, &dk, &count))
			continue;
		s->drop_entries++;
		if (!ud_snapshot_find(s, ud_key(dk.slot, dk.gen))) {
			s->orphan_drops++;
			if (delete_orphans)
				bpf_map_delete_elem(src->drops_fd, &dk);
			continue;
		}
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 256;
			struct drop_pair *q = realloc(pairs, ncap * sizeof(*q));

			if (!q) {
				free(pairs);
				return -ENOMEM;
			}
			pairs = q;
			cap = ncap;
		}
		pairs[n++] = (struct drop_pair){ ud_key(dk.slot, dk.gen), dk.reason, count };
	}
	apply_drops(s, pairs, n);
	free(pairs);
	return 0;
}

int ud_snapshot_read(struct ud_snapshot *s, const struct ud_source *src, uint64_t epoch,
		     bool delete_orphans)
{
	struct ud_sock *copy = malloc(sizeof(*copy));
	int err = 0;

	if (!copy)
		return -ENOMEM;
	if (!s->pcpu) {
		s->ncpus = libbpf_num_possible_cpus();
		if (s->ncpus <= 0) {
			free(copy);
			return s->ncpus < 0 ? s->ncpus : -EINVAL;
		}
		s->pcpu = calloc((size_t)s->ncpus, sizeof(*s->pcpu));
		if (!s->pcpu) {
			free(copy);
			return -ENOMEM;
		}
	}
	s->n = 0;
	s->drop_entries = 0;
	s->orphan_drops = 0;
	for (uint32_t slot = 0; slot < src->nslots; slot++) {
		bool known;

		if (!copy_slot(&src->state[slot], copy))
			continue;
		known = !bpf_map_lookup_elem(src->stats_fd, &slot, s->pcpu);
		if (!known)
			memset(s->pcpu, 0, (size_t)s->ncpus * sizeof(*s->pcpu));
		if (s->n == s->cap) {
			unsigned int ncap = s->cap ? s->cap * 2 : 64;
			struct ud_entry *p = realloc(s->e, ncap * sizeof(*p));

			if (!p) {
				err = -ENOMEM;
				goto out;
			}
			s->e = p;
			s->cap = ncap;
		}
		ud_entry_from(&s->e[s->n], slot, copy, s->pcpu, s->ncpus, epoch);
		s->e[s->n++].reads_known = known;
	}
	if (s->n)
		qsort(s->e, s->n, sizeof(*s->e), cmp_entry);

	err = read_drops(s, src, delete_orphans);
out:
	free(copy);
	return err;
}

int ud_ledger_init(struct ud_ledger *l, uint32_t nslots)
{
	memset(l, 0, sizeof(*l));
	l->seen = calloc(nslots ? nslots : 1, sizeof(*l->seen));
	if (!l->seen)
		return -ENOMEM;
	l->nslots = nslots;
	return 0;
}

void ud_ledger_free(struct ud_ledger *l)
{
	free(l->seen);
	memset(l, 0, sizeof(*l));
}

uint64_t ud_ledger_settle(struct ud_ledger *l, const struct ud_snapshot *s,
			  const struct ud_row *rows)
{
	uint64_t out;

	for (unsigned int i = 0; i < s->n; i++) {
		uint32_t slot = (uint32_t)s->e[i].key;
		uint32_t reads;

		if (slot >= l->nslots || !s->e[i].reads_known)
			continue;
		reads = s->e[i].slot_reads - l->seen[slot]; /* mod 2^32 */
		l->seen[slot] = s->e[i].slot_reads;
		l->owed += (int64_t)reads - (int64_t)(rows[i].d.packets + rows[i].d.unmatched);
	}
	out = l->owed > 0 ? (uint64_t)l->owed : 0;
	l->owed -= (int64_t)out;
	l->total += out;
	return out;
}

void ud_snapshot_free(struct ud_snapshot *s)
{
	free(s->e);
	free(s->pcpu);
	memset(s, 0, sizeof(*s));
}

void ud_row_build(struct ud_row *r, const struct ud_entry *cur, const struct ud_entry *prev,
		  const struct ud_thresholds *t, uint32_t reason_rcvbuff, uint32_t reason_proto_mem,
		  uint64_t now_ns, uint64_t since_ns)
{
	static const struct ud_cumul zero;
	bool reset;

	memset(r, 0, sizeof(*r));
	r->key = cur->key;
	r->port = cur->port;
	r->ino = cur->ino;
	cli_fmt_v6mapped(cur->addr, r->addr, sizeof(r->addr));
	r->pid = cur->tgid;
	memcpy(r->comm, cur->comm, sizeof(r->comm));
	r->queue_len = cur->queue_len;
	if (prev && prev->port != cur->port)
		prev = NULL;
	reset = ud_cumul_delta(&cur->cumul, prev ? &prev->cumul : &zero, &r->d);
	if (reset)
		prev = NULL;

	for (unsigned int i = 0; i < cur->ndrops; i++) {
		uint64_t before = prev ? ud_entry_drops(prev, cur->drops[i].reason) : 0;
		uint64_t d = cur->drops[i].count >= before ? cur->drops[i].count - before
							    : cur->drops[i].count;

		if (!d)
			continue;
		r->drops[r->ndrops++] = (struct ud_drop_count){ cur->drops[i].reason, d };
		if (cur->drops[i].reason == reason_rcvbuff || cur->drops[i].reason == reason_proto_mem)
			r->buffer_drops += d;
	}

	if (cur->oldest_stamp_ns && now_ns > cur->oldest_stamp_ns)
		r->oldest_wait_us = (double)(now_ns - cur->oldest_stamp_ns) / TK_NSEC_PER_USEC_F;
	if (r->d.packets) {
		double max_us = (double)cur->interval_max_ns / TK_NSEC_PER_USEC_F;

		r->avg_us = (double)r->d.sum_ns / (double)r->d.packets / TK_NSEC_PER_USEC_F;
		r->max_us = max_us;
		r->p50_us = ud_quantile_us(r->d.buckets, 0.50, max_us);
		r->p99_us = ud_quantile_us(r->d.buckets, 0.99, max_us);
	} else {
		r->avg_us = r->p50_us = r->p99_us = r->max_us = NAN;
	}
	if (r->oldest_wait_us > 0 && (isnan(r->max_us) || r->oldest_wait_us > r->max_us))
		r->max_us = r->oldest_wait_us;
	r->state = ud_state_of(t, r->p99_us, r->max_us, r->oldest_wait_us, r->buffer_drops);
	r->idle_waiting = cur->queue_len && cur->last_event_ns < since_ns;
	r->active = r->d.packets || r->ndrops || r->d.unmatched || cur->queue_len ||
		    cur->last_event_ns >= since_ns;
}

static double worst_key(const struct ud_row *r)
{
	double p = isnan(r->p99_us) ? 0 : r->p99_us;

	return p > r->oldest_wait_us ? p : r->oldest_wait_us;
}

int ud_row_cmp_worst(const void *a, const void *b)
{
	const struct ud_row *x = a, *y = b;
	double kx = worst_key(x), ky = worst_key(y);
	double mx = isnan(x->max_us) ? 0 : x->max_us, my = isnan(y->max_us) ? 0 : y->max_us;

	if (kx != ky)
		return kx > ky ? -1 : 1;
	if (mx != my)
		return mx > my ? -1 : 1;
	return x->port < y->port ? -1 : x->port > y->port;
}
