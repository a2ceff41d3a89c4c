// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbrpcap join: each bbrtrace sample and collapse record gets the capture
 * frame of the ACK that produced it.
 *
 * A sample is taken when the sender processes the ACK whose cumulative ACK
 * number is the sample's snd_una, so the candidates are the frames from the
 * receiver (daddr:dport) to the sender (saddr:sport) carrying that number.
 * The capture may come from either host, and its clock (CLOCK_REALTIME at
 * the capture point) differs from the trace's by an unknown offset: the
 * offset is the densest cluster of (frame time - record time) over all
 * candidates, and each record then takes the candidate nearest in time, in
 * order within equal ACK numbers (duplicate ACKs). Equal 32-bit ACK numbers
 * 4 GiB apart (wraparound) are told apart by time.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "common.h"
#include "jsonl.h"
#include "log.h"
#include "pcap/bbrpcap.h"
#include "record.h"

#define CLUSTER_NS 20000000 /* width of the window in which the clock offset is sought */
#define MAX_CAND 8          /* candidates per record used for the offset */

enum rec_kind { RK_OTHER = 0, RK_SAMPLE, RK_COLLAPSE };

struct tr_flow {
	uint8_t family;
	uint8_t saddr[16], daddr[16];
	uint16_t sport, dport;
};

struct tr_rec {
	size_t off;          /* line in the trace buffer */
	size_t len;
	uint32_t lineno;
	uint8_t kind;
	int32_t tflow;       /* -1: no flow */
	uint32_t snd_una;
	int64_t t_ns;
	int64_t ev;          /* matched event, -1 */
};

struct ack_ev {
	uint32_t tflow;
	uint32_t ack;
	int64_t ts_ns;
	uint64_t frame;
	int64_t delay_ns;
};

struct join {
	/* trace */
	const char *trace_path;
	char *buf;
	size_t size;
	bool mapped;
	struct tr_rec *recs;
	size_t nrecs, cap_recs;
	struct tr_flow *flows;
	uint32_t nflows, cap_flows;
	struct { uint64_t cookie; int32_t tflow; } *cookies;
	size_t ncookies, cap_cookies;
	bool use_wall;
	bool time_chosen;
	/* capture */
	struct ack_ev *evs;
	size_t nevs, cap_evs;
	int32_t *flow_map;   /* an_flow id * 2 + data direction -> tflow; -2: not yet known */
	size_t cap_map;
	bool oom;
	int64_t offset_ns;
	int64_t t0_ns;
};

/* --- the trace ------------------------------------------------------------------- */

static int load_file(struct join *j, const char *path)
{
	struct stat st;
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : dup(0);
	size_t cap = 1 << 20, len = 0;

	if (fd < 0) {
		elog("%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);

		close(fd);
		if (m == MAP_FAILED) {
			elog("%s: cannot map: %s", path, strerror(errno));
			return -1;
		}
		j->buf = m;
		j->size = (size_t)st.st_size;
		j->mapped = true;
		return 0;
	}
	j->buf = malloc(cap);
	for (;;) {
		ssize_t n;

		if (!j->buf) {
			close(fd);
			elog("%s: out of memory", path);
			return -1;
		}
		if (len == cap) {
			char *nb = realloc(j->buf, cap *= 2);

			if (!nb) {
				free(j->buf);
				j->buf = NULL;
				continue;
			}
			j->buf = nb;
		}
		n = read(fd, j->buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			elog("%s: read failed: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	j->size = len;
	return 0;
}

static bool parse_addr(const char *s, uint8_t *fam, uint8_t out[16])
{
	memset(out, 0, 16);
	if (!s)
		return false;
	if (inet_pton(AF_INET, s, out) == 1) {
		*fam = 4;
		return true;
	}
	if (inet_pton(AF_INET6, s, out) == 1) {
		static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

		if (!memcmp(out, mapped, 12)) { /* ::ffff:a.b.c.d is IPv4 on the wire */
			memmove(out, out + 12, 4);
			memset(out + 4, 0, 12);
			*fam = 4;
		} else {
			*fam = 6;
		}
		return true;
	}
	return false;
}

static int32_t flow_index(struct join *j, const struct tr_flow *k)
{
	for (uint32_t i = 0; i < j->nflows; i++) {
		const struct tr_flow *f = &j->flows[i];

		if (f->family == k->family && f->sport == k->sport && f->dport == k->dport &&
		    !memcmp(f->saddr, k->saddr, 16) && !memcmp(f->daddr, k->daddr, 16))
			return (int32_t)i;
	}
	if (j->nflows == j->cap_flows) {
		uint32_t n = j->cap_flows ? j->cap_flows * 2 : 8;
		struct tr_flow *v = realloc(j->flows, n * sizeof(*v));

		if (!v) {
			j->oom = true;
			return -1;
		}
		j->flows = v;
		j->cap_flows = n;
	}
	j->flows[j->nflows] = *k;
	return (int32_t)j->nflows++;
}

static void note_cookie(struct join *j, uint64_t cookie, int32_t tflow)
{
	for (size_t i = 0; i < j->ncookies; i++)
		if (j->cookies[i].cookie == cookie)
			return;
	if (j->ncookies == j->cap_cookies) {
		size_t n = j->cap_cookies ? j->cap_cookies * 2 : 8;
		void *v = realloc(j->cookies, n * sizeof(*j->cookies));

		if (!v) {
			j->oom = true;
			return;
		}
		j->cookies = v;
		j->cap_cookies = n;
	}
	j->cookies[j->ncookies].cookie = cookie;
	j->cookies[j->ncookies].tflow = tflow;
	j->ncookies++;
}

static int32_t cookie_flow(const struct join *j, uint64_t cookie)
{
	for (size_t i = 0; i < j->ncookies; i++)
		if (j->cookies[i].cookie == cookie)
			return j->cookies[i].tflow;
	return -1;
}

/* the record's flow, ACK number and time; false when it lacks them */
static void describe(struct join *j, struct tr_rec *r, const struct jl_obj *o)
{
	struct tr_flow k = { 0 };
	uint64_t sport, dport, una, cookie, t;
	bool have_cookie = jl_u64(o, "cookie", &cookie);

	r->tflow = -1;
	if (!j->time_chosen) {
		j->use_wall = jl_get(o, "wall_ns") != NULL;
		j->time_chosen = true;
	}
	if (!jl_u64(o, j->use_wall ? "wall_ns" : "t_ns", &t) || !jl_u64(o, "snd_una", &una) || una > UINT32_MAX)
		return;
	r->t_ns = (int64_t)t;
	r->snd_una = (uint32_t)una;
	if (jl_u64(o, "sport", &sport) && jl_u64(o, "dport", &dport) && sport <= 65535 && dport <= 65535) {
		uint8_t fs = 0, fd = 0;

		if (parse_addr(jl_str(o, "saddr"), &fs, k.saddr) && parse_addr(jl_str(o, "daddr"), &fd, k.daddr) &&
		    fs == fd) {
			k.family = fs;
			k.sport = (uint16_t)sport;
			k.dport = (uint16_t)dport;
			r->tflow = flow_index(j, &k);
			if (have_cookie && r->tflow >= 0)
				note_cookie(j, cookie, r->tflow);
			return;
		}
	}
	if (have_cookie) /* a collapse record may name its socket by cookie only */
		r->tflow = cookie_flow(j, cookie);
}

/* reads the trace; -1 on a system error, 1 on a bad line (records before it kept) */
static int read_trace(struct join *j)
{
	char *scratch = NULL, err[128];
	size_t scap = 0, pos = 0;
	uint32_t lineno = 0;
	struct jl_obj *o = malloc(sizeof(*o));
	int rc = 0;

	if (!o)
		return -1;
	while (pos < j->size) {
		char *nl = memchr(j->buf + pos, '\n', j->size - pos);
		size_t len = nl ? (size_t)(nl - (j->buf + pos)) : j->size - pos;
		struct tr_rec *r;
		const char *type;

		lineno++;
		if (len + 1 > scap) {
			char *ns = realloc(scratch, scap = len + 1 + 4096);

			if (!ns) {
				rc = -1;
				break;
			}
			scratch = ns;
		}
		memcpy(scratch, j->buf + pos, len);
		scratch[len] = '\0';
		if (len == 0 || strspn(scratch, " \t\r") == len) {
			pos += len + 1;
			continue;
		}
		if (jl_parse(scratch, o, err, sizeof(err))) {
			elog("%s:%u: not a JSON record: %s; the %u lines before it were read", j->trace_path, lineno, err,
			     lineno - 1);
			rc = 1;
			break;
		}
		if (j->nrecs == j->cap_recs) {
			size_t n = j->cap_recs ? j->cap_recs * 2 : 1024;
			struct tr_rec *v = realloc(j->recs, n * sizeof(*v));

			if (!v) {
				rc = -1;
				break;
			}
			j->recs = v;
			j->cap_recs = n;
		}
		r = &j->recs[j->nrecs++];
		memset(r, 0, sizeof(*r));
		r->off = pos;
		r->len = len;
		r->lineno = lineno;
		r->tflow = -1;
		r->ev = -1;
		type = jl_str(o, "type");
		r->kind = !type ? RK_OTHER : !strcmp(type, "sample") ? RK_SAMPLE : !strcmp(type, "collapse") ? RK_COLLAPSE
														     : RK_OTHER;
		if (r->kind != RK_OTHER)
			describe(j, r, o);
		pos += len + 1;
	}
	free(scratch);
	free(o);
	if (rc < 0 || j->oom) {
		elog("%s: out of memory", j->trace_path);
		return -1;
	}
	return rc;
}

/* --- the capture ------------------------------------------------------------------ */

static void on_ack(void *ctx, const struct an_flow *f, const struct an_ack *e)
{
	struct join *j = ctx;
	int ds = e->data_dir, dr = !e->data_dir;
	int32_t tf;

	size_t key = (size_t)f->id * 2 + (size_t)ds;

	if (key >= j->cap_map) {
		size_t n = j->cap_map ? j->cap_map : 64;
		int32_t *m;

		while (n <= key)
			n *= 2;
		m = realloc(j->flow_map, n * sizeof(*m));
		if (!m) {
			j->oom = true;
			return;
		}
		for (size_t i = j->cap_map; i < n; i++)
			m[i] = -2;
		j->flow_map = m;
		j->cap_map = n;
	}
	tf = j->flow_map[key];
	if (tf == -2) {
		tf = -1;
		for (uint32_t i = 0; i < j->nflows; i++) {
			const struct tr_flow *t = &j->flows[i];

			if (t->family == f->family && t->sport == f->port[ds] && t->dport == f->port[dr] &&
			    !memcmp(t->saddr, f->addr[ds], 16) && !memcmp(t->daddr, f->addr[dr], 16)) {
				tf = (int32_t)i;
				break;
			}
		}
		j->flow_map[key] = tf;
	}
	if (tf < 0)
		return;
	if (j->nevs == j->cap_evs) {
		size_t n = j->cap_evs ? j->cap_evs * 2 : 4096;
		struct ack_ev *v = realloc(j->evs, n * sizeof(*v));

		if (!v) {
			j->oom = true;
			return;
		}
		j->evs = v;
		j->cap_evs = n;
	}
	j->evs[j->nevs].tflow = (uint32_t)tf;
	j->evs[j->nevs].ack = e->ack;
	j->evs[j->nevs].ts_ns = e->ts_ns;
	j->evs[j->nevs].frame = e->frame;
	j->evs[j->nevs].delay_ns = e->delay_ns;
	j->nevs++;
}

static int cmp_ev(const void *x, const void *y)
{
	const struct ack_ev *a = x, *b = y;

	if (a->tflow != b->tflow)
		return a->tflow < b->tflow ? -1 : 1;
	if (a->ack != b->ack)
		return a->ack < b->ack ? -1 : 1;
	return a->ts_ns < b->ts_ns ? -1 : a->ts_ns > b->ts_ns;
}

/* first event with (tflow, ack) >= the key */
static size_t ev_lower(const struct join *j, uint32_t tflow, uint32_t ack)
{
	size_t lo = 0, hi = j->nevs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ack_ev *e = &j->evs[mid];

		if (e->tflow < tflow || (e->tflow == tflow && e->ack < ack))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t ev_upper(const struct join *j, size_t lo, uint32_t tflow, uint32_t ack)
{
	while (lo < j->nevs && j->evs[lo].tflow == tflow && j->evs[lo].ack == ack)
		lo++;
	return lo;
}

static int cmp_i64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;

	return a < b ? -1 : a > b;
}

/* the capture-minus-trace clock offset: the median of the densest cluster */
static bool estimate_offset(struct join *j, size_t *support)
{
	int64_t *d = NULL;
	size_t n = 0, cap = 0, best_lo = 0, best_n = 0;

	for (size_t i = 0; i < j->nrecs; i++) {
		const struct tr_rec *r = &j->recs[i];
		size_t lo, hi;

		if (r->kind == RK_OTHER || r->tflow < 0)
			continue;
		lo = ev_lower(j, (uint32_t)r->tflow, r->snd_una);
		hi = ev_upper(j, lo, (uint32_t)r->tflow, r->snd_una);
		if (hi - lo > MAX_CAND)
			hi = lo + MAX_CAND;
		for (size_t k = lo; k < hi; k++) {
			if (n == cap) {
				int64_t *v = realloc(d, (cap = cap ? cap * 2 : 4096) * sizeof(*v));

				if (!v) {
					free(d);
					j->oom = true;
					return false;
				}
				d = v;
			}
			d[n++] = j->evs[k].ts_ns - r->t_ns;
		}
	}
	if (!n) {
		free(d);
		*support = 0;
		return false;
	}
	qsort(d, n, sizeof(*d), cmp_i64);
	for (size_t lo = 0, hi = 0; lo < n; lo++) {
		while (hi < n && d[hi] - d[lo] <= CLUSTER_NS)
			hi++;
		if (hi - lo > best_n) {
			best_n = hi - lo;
			best_lo = lo;
		}
	}
	j->offset_ns = d[best_lo + best_n / 2];
	*support = best_n;
	free(d);
	return true;
}

static const struct join *sort_ctx;

static int cmp_rec_idx(const void *x, const void *y)
{
	const struct tr_rec *a = &sort_ctx->recs[*(const size_t *)x], *b = &sort_ctx->recs[*(const size_t *)y];

	if (a->tflow != b->tflow)
		return a->tflow < b->tflow ? -1 : 1;
	if (a->snd_una != b->snd_una)
		return a->snd_una < b->snd_una ? -1 : 1;
	if (a->t_ns != b->t_ns)
		return a->t_ns < b->t_ns ? -1 : 1;
	return *(const size_t *)x < *(const size_t *)y ? -1 : 1;
}

#define DP_MAX_CELLS (4u << 20)

/*
 * Records r[0..m) (in time order) against the frames evs[lo..lo+n) (in time
 * order) carrying the same ACK number: the order-preserving assignment with
 * the least total time error, a record left without a frame costing the
 * tolerance. Duplicate ACKs and the frames of ACKs that made no sample are
 * told apart this way. false when the group is too large for it.
 */
static bool match_group_dp(struct join *j, const size_t *r, size_t m, size_t lo, size_t n, int64_t max_skew_ns)
{
	size_t w = n + 1, i, k;
	double *cost;
	uint8_t *how;

	if ((m + 1) * w > DP_MAX_CELLS)
		return false;
	cost = malloc((m + 1) * w * sizeof(*cost));
	how = malloc((m + 1) * w);
	if (!cost || !how) {
		free(cost);
		free(how);
		return false;
	}
	for (k = 0; k <= n; k++) {
		cost[k] = 0;
		how[k] = 0;
	}
	for (i = 1; i <= m; i++) {
		int64_t want = j->recs[r[i - 1]].t_ns + j->offset_ns;

		cost[i * w] = cost[(i - 1) * w] + (double)max_skew_ns;
		how[i * w] = 1;
		for (k = 1; k <= n; k++) {
			int64_t err = j->evs[lo + k - 1].ts_ns - want;
			double best = cost[i * w + k - 1], c;
			uint8_t h = 0; /* frame k unused */

			c = cost[(i - 1) * w + k] + (double)max_skew_ns;
			if (c < best) {
				best = c;
				h = 1; /* record i unmatched */
			}
			if (err < 0)
				err = -err;
			if (err <= max_skew_ns) {
				c = cost[(i - 1) * w + k - 1] + (double)err;
				if (c < best) {
					best = c;
					h = 2; /* record i is frame k */
				}
			}
			cost[i * w + k] = best;
			how[i * w + k] = h;
		}
	}
	for (i = m, k = n; i > 0;) {
		uint8_t h = how[i * w + k];

		if (h == 0) {
			k--;
		} else if (h == 1) {
			i--;
		} else {
			j->recs[r[i - 1]].ev = (int64_t)(lo + k - 1);
			i--;
			k--;
		}
	}
	free(cost);
	free(how);
	return true;
}

/* the fallback for huge groups: each record takes the nearest frame after the previous one's */
static void match_group_greedy(struct join *j, const size_t *r, size_t m, size_t lo, size_t hi, int64_t max_skew_ns)
{
	size_t next = lo;

	for (size_t k = 0; k < m && next < hi; k++) {
		struct tr_rec *rec = &j->recs[r[k]];
		int64_t want = rec->t_ns + j->offset_ns, err;
		size_t a = next, b = hi, best;

		while (a < b) { /* first candidate at or after the expected time */
			size_t mid = a + (b - a) / 2;

			if (j->evs[mid].ts_ns < want)
				a = mid + 1;
			else
				b = mid;
		}
		best = a < hi ? a : hi - 1;
		if (a > next && (a == hi || want - j->evs[a - 1].ts_ns <= j->evs[a].ts_ns - want))
			best = a - 1;
		err = j->evs[best].ts_ns - want;
		if (err > max_skew_ns || err < -max_skew_ns)
			continue;
		rec->ev = (int64_t)best;
		next = best + 1;
	}
}

/*
 * Records of one kind (samples, or collapses: a collapse comes from the same
 * ACK as its sample, so the two kinds do not compete for frames).
 */
static void match_kind(struct join *j, uint8_t kind, int64_t max_skew_ns)
{
	size_t *idx = malloc((j->nrecs ? j->nrecs : 1) * sizeof(*idx));
	size_t n = 0;

	if (!idx) {
		j->oom = true;
		return;
	}
	for (size_t i = 0; i < j->nrecs; i++)
		if (j->recs[i].kind == kind && j->recs[i].tflow >= 0)
			idx[n++] = i;
	sort_ctx = j;
	qsort(idx, n, sizeof(*idx), cmp_rec_idx);
	for (size_t g = 0; g < n;) {
		const struct tr_rec *first = &j->recs[idx[g]];
		size_t lo = ev_lower(j, (uint32_t)first->tflow, first->snd_una);
		size_t hi = ev_upper(j, lo, (uint32_t)first->tflow, first->snd_una);
		size_t end = g;

		while (end < n && j->recs[idx[end]].tflow == first->tflow && j->recs[idx[end]].snd_una == first->snd_una)
			end++;
		if (hi > lo && !match_group_dp(j, idx + g, end - g, lo, hi - lo, max_skew_ns))
			match_group_greedy(j, idx + g, end - g, lo, hi, max_skew_ns);
		g = end;
	}
	free(idx);
}

static void match(struct join *j, int64_t max_skew_ns)
{
	match_kind(j, RK_SAMPLE, max_skew_ns);
	match_kind(j, RK_COLLAPSE, max_skew_ns);
}

/* --- output ------------------------------------------------------------------------ */

static unsigned int decimals(const struct jl_field *f)
{
	const char *dot = memchr(f->str, '.', f->len), *e = NULL;
	unsigned int n = 0;

	for (size_t i = 0; i < f->len; i++)
		if (f->str[i] == 'e' || f->str[i] == 'E')
			e = f->str + i;
	if (dot)
		for (const char *p = dot + 1; p < (e ? e : f->str + f->len); p++)
			n++;
	if (e) {
		long x = strtol(e + 1, NULL, 10);

		n = x < 0 ? n + (unsigned int)(-x) : (n > (unsigned long)x ? n - (unsigned int)x : 0);
	}
	return n > 20 ? 20 : n;
}

static const char *const added[] = { "frame", "frame_time", "frame_time_ns", "frame_time_rel", "ack_delay_us" };

/* the trace record as it came, plus where its ACK is in the capture */
static int write_joined(struct rec_writer *w, const struct join *j, const struct tr_rec *r,
			const struct jl_obj *o)
{
	struct rec_field fields[JL_MAX_FIELDS + ARRAY_SIZE(added)];
	struct rec_value v[JL_MAX_FIELDS + ARRAY_SIZE(added)];
	struct rec_schema s = { jl_str(o, "type"), fields, 0 };
	const struct ack_ev *e = r->ev >= 0 ? &j->evs[r->ev] : NULL;
	unsigned int n = 0;

	for (unsigned int i = 0; i < o->n; i++) {
		const struct jl_field *f = &o->f[i];
		bool skip = !strcmp(f->key, "type");

		for (size_t k = 0; k < ARRAY_SIZE(added) && !skip; k++)
			skip = !strcmp(f->key, added[k]);
		if (skip)
			continue;
		memset(&fields[n], 0, sizeof(fields[n]));
		fields[n].name = f->key;
		memset(&v[n], 0, sizeof(v[n]));
		switch (f->kind) {
		case JL_NUM:
			if (f->is_int && f->str[0] != '-') {
				fields[n].type = REC_U64;
				v[n].u = f->u64;
			} else if (f->is_int) {
				fields[n].type = REC_I64;
				v[n].i = f->i64;
			} else {
				fields[n].type = REC_F64;
				fields[n].prec = (int)decimals(f);
				v[n].d = f->num;
			}
			break;
		case JL_STR:
			fields[n].type = REC_STR;
			v[n].s = f->str;
			break;
		case JL_BOOL:
			fields[n].type = REC_BOOL;
			v[n].b = f->b;
			break;
		case JL_NULL:
			fields[n].type = REC_U64;
			v[n].null = true;
			break;
		case JL_RAW:
			fields[n].type = REC_RAW;
			v[n].raw.s = f->str;
			v[n].raw.len = f->len;
			break;
		}
		n++;
	}
	if (r->kind != RK_OTHER) {
		static const struct rec_field tail[] = {
			{ "frame", REC_U64 },
			{ "frame_time", REC_F64, 6 },
			{ "frame_time_ns", REC_U64 },
			{ "frame_time_rel", REC_F64, 9 },
			{ "ack_delay_us", REC_F64, 3 },
		};

		for (size_t k = 0; k < ARRAY_SIZE(tail); k++) {
			fields[n] = tail[k];
			v[n] = rv_null();
			if (e) {
				switch (k) {
				case 0: v[n] = rv_u64(e->frame); break;
				case 1: v[n] = rv_f64((double)e->ts_ns * 1e-9); break;
				case 2: v[n] = rv_u64((uint64_t)e->ts_ns); break;
				case 3: v[n] = rv_f64((double)(e->ts_ns - j->t0_ns) * 1e-9); break;
				case 4: v[n] = e->delay_ns >= 0 ? rv_f64((double)e->delay_ns * 1e-3) : rv_null(); break;
				}
			}
			n++;
		}
	}
	s.nfields = n;
	return rec_write(w, &s, v);
}

/* 212 Mbit/s, 3.1 Mbit/s, 0.042 Mbit/s */
static void fmt_mbps(double bps, char *buf, size_t len)
{
	double m = bps * 1e-6;

	if (m >= 100 || m == 0)
		snprintf(buf, len, "%.0f", m);
	else if (m >= 10)
		snprintf(buf, len, "%.1f", m);
	else
		snprintf(buf, len, "%.2g", m);
}

static void collapse_line(FILE *out, const struct join *j, const struct tr_rec *r, const struct jl_obj *o)
{
	const struct ack_ev *e = r->ev >= 0 ? &j->evs[r->ev] : NULL;
	char bw0[32] = "?", bw1[32] = "?";
	double b;

	if (jl_num(o, "bw_prev_bps", &b))
		fmt_mbps(b, bw0, sizeof(bw0));
	if (jl_num(o, "bw_bps", &b))
		fmt_mbps(b, bw1, sizeof(bw1));
	if (!e) {
		fprintf(out, "no frame (trace line %u): ACK %u is not in the capture; BBR bw %s Mbit/s \u2192 %s Mbit/s\n",
			r->lineno, r->snd_una, bw0, bw1);
		return;
	}
	fprintf(out, "frame %llu (t=%.6f s): ACK %u ", (unsigned long long)e->frame,
		(double)(e->ts_ns - j->t0_ns) * 1e-9, r->snd_una);
	if (e->delay_ns >= 1000000)
		fprintf(out, "came %.1f ms after the data it covers", (double)e->delay_ns * 1e-6);
	else if (e->delay_ns >= 0)
		fprintf(out, "came %.0f \u00b5s after the data it covers", (double)e->delay_ns * 1e-3);
	else
		fprintf(out, "covers data that is not in the capture");
	fprintf(out, "; BBR bw %s Mbit/s \u2192 %s Mbit/s\n", bw0, bw1);
}

static const char join_usage[] =
	"Usage: bbrpcap join TRACE.jsonl CAPTURE [-o OUT.jsonl] [OPTIONS]\n"
	"Finds, for every bbrtrace \"sample\" and \"collapse\" record, the capture frame of\n"
	"the ACK that produced it: the frame from the receiver (daddr:dport) to the sender\n"
	"(saddr:sport) whose ACK number is the record's snd_una.\n"
	"\n"
	"The capture may be taken on either host and may hold several flows. The offset\n"
	"between the trace's clock (wall_ns, else t_ns) and the capture's is estimated from\n"
	"the data; each record takes the candidate frame nearest in time after that offset,\n"
	"so equal ACK numbers 4 GiB apart (sequence wraparound) are told apart.\n"
	"\n"
	"Output: the trace's records, in order, with frame (Wireshark's frame number),\n"
	"frame_time (s since the epoch, us precision), frame_time_ns, frame_time_rel (s since\n"
	"the first frame, Wireshark's default time) and ack_delay_us (how long after the\n"
	"newest data it covers the ACK was captured: from a sender-side capture this includes\n"
	"the round trip); null when no frame matched. Other records pass through unchanged.\n"
	"For each collapse one line:\n"
	"  frame 48213 (t=12.345678 s): ACK 3962813608 came 39.8 ms after the data it covers;\n"
	"  BBR bw 212 Mbit/s \u2192 3.1 Mbit/s\n"
	"With -o the records go to OUT and the lines to stdout; without, the records go to\n"
	"stdout and the lines to stderr.\n"
	"\n"
	"Options:\n"
	"  -o, --output FILE   write the joined records to FILE\n"
	"  --max-skew-ms MS    a frame further than MS ms from its record's time (after the\n"
	"                      clock offset) is no match (default 500; 0.001..3600000)\n"
	"  --strict            exit 10 when a collapse record found no frame\n"
	"  --reader R          mmap (default) or libpcap\n"
	"  -v, -q, -h/--help, --version\n"
	"Exit status: 0 success; 1 failure; 2 bad arguments; 5 damaged capture or trace\n"
	"(the records before the damage are still joined); 10 --strict and a collapse unmatched.\n";

int bp_join_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "max-skew-ms", required_argument, NULL, 1 },
		{ "strict", no_argument, NULL, 2 },
		{ "reader", required_argument, NULL, 3 },
		{ "version", no_argument, NULL, 4 },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static const char *const readers[] = { "mmap", "libpcap", NULL };
	struct join j = { 0 };
	struct an_config cfg = { .acks = true, .delack_ns = 10000000 };
	struct an_sel *sel = NULL;
	const char *out_path = NULL, *cap_path;
	enum cap_reader reader = CAP_READER_MMAP;
	double max_skew_ms = 500;
	bool strict = false;
	struct rec_writer *w = NULL;
	FILE *out = stdout, *lines;
	struct jl_obj *o = NULL;
	char *scratch = NULL;
	size_t scap = 0, support = 0;
	uint64_t nsamples = 0, msamples = 0, ncoll = 0, mcoll = 0;
	struct an *a = NULL;
	int opt, idx, rc = TK_EXIT_OK, trc, arc;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "o:vqh", opts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			out_path = optarg;
			break;
		case 1:
			if (cli_parse_double("--max-skew-ms", optarg, 0.001, 3600000, &max_skew_ms))
				exit(TK_EXIT_USAGE);
			break;
		case 2:
			strict = true;
			break;
		case 3:
			if (cli_parse_choice("--reader", optarg, readers, &idx))
				exit(TK_EXIT_USAGE);
			reader = (enum cap_reader)idx;
			break;
		case 4:
			cli_print_version();
			return TK_EXIT_OK;
		case 'v':
			log_set_level(log_get_level() + 1);
			break;
		case 'q':
			log_set_level(LOG_QUIET);
			break;
		case 'h':
			fputs(join_usage, stdout);
			return TK_EXIT_OK;
		default:
			exit(TK_EXIT_USAGE);
		}
	}
	if (argc - optind < 2)
		cli_usage_die("join: needs TRACE.jsonl and CAPTURE");
	if (argc - optind > 2)
		cli_usage_die("join: unexpected argument '%s' after CAPTURE", argv[optind + 2]);
	j.trace_path = argv[optind];
	cap_path = argv[optind + 1];
	if (!strcmp(j.trace_path, "-") && !strcmp(cap_path, "-"))
		cli_usage_die("join: the trace and the capture cannot both come from stdin");

	if (load_file(&j, j.trace_path))
		return TK_EXIT_FAIL;
	trc = read_trace(&j);
	if (trc < 0) {
		rc = TK_EXIT_FAIL;
		goto out;
	}
	/* only the trace's flows are analysed */
	sel = calloc(j.nflows ? j.nflows : 1, sizeof(*sel));
	if (!sel) {
		rc = TK_EXIT_FAIL;
		goto out;
	}
	for (uint32_t i = 0; i < j.nflows; i++) {
		sel[i].nend = 2;
		for (int k = 0; k < 2; k++) {
			sel[i].end[k].family = j.flows[i].family;
			memcpy(sel[i].end[k].addr, k ? j.flows[i].daddr : j.flows[i].saddr, 16);
			sel[i].end[k].port = k ? j.flows[i].dport : j.flows[i].sport;
		}
	}
	cfg.sel = sel;
	cfg.nsel = j.nflows ? j.nflows : 1;
	if (!j.nflows) { /* nothing to match: select nothing */
		sel[0].id = UINT32_MAX;
	}
	cfg.on_ack = on_ack;
	cfg.ctx = &j;
	a = an_new(&cfg);
	if (!a) {
		elog("out of memory");
		rc = TK_EXIT_FAIL;
		goto out;
	}
	arc = bp_analyse(cap_path, reader, a);
	if (arc == TK_EXIT_FAIL || j.oom) {
		if (j.oom)
			elog("out of memory");
		rc = TK_EXIT_FAIL;
		goto out;
	}
	j.t0_ns = a->t0_ns;
	qsort(j.evs, j.nevs, sizeof(*j.evs), cmp_ev);
	if (estimate_offset(&j, &support))
		vlog("clock offset (capture - trace): %.3f us, from %zu candidate frames", (double)j.offset_ns * 1e-3,
		     support);
	match(&j, (int64_t)llround(max_skew_ms * 1e6));
	if (j.oom) {
		elog("out of memory");
		rc = TK_EXIT_FAIL;
		goto out;
	}

	if (out_path) {
		out = fopen(out_path, "w");
		if (!out) {
			elog("%s: cannot create: %s", out_path, strerror(errno));
			rc = TK_EXIT_FAIL;
			goto out;
		}
	}
	lines = out_path ? stdout : stderr;
	w = rec_writer_new(REC_JSON, out);
	o = malloc(sizeof(*o));
	if (!w || !o) {
		elog("out of memory");
		rc = TK_EXIT_FAIL;
		goto out;
	}
	for (size_t i = 0; i < j.nrecs; i++) {
		const struct tr_rec *r = &j.recs[i];
		char err[128];

		if (r->len + 1 > scap) {
			char *ns = realloc(scratch, scap = r->len + 4097);

			if (!ns) {
				elog("out of memory");
				rc = TK_EXIT_FAIL;
				goto out;
			}
			scratch = ns;
		}
		memcpy(scratch, j.buf + r->off, r->len);
		scratch[r->len] = '\0';
		if (jl_parse(scratch, o, err, sizeof(err)))
			continue; /* cannot happen: the first pass parsed it */
		if (write_joined(w, &j, r, o)) {
			elog("%s: write failed: %s", out_path ? out_path : "stdout", strerror(errno));
			rc = TK_EXIT_FAIL;
			goto out;
		}
		if (r->kind == RK_SAMPLE) {
			nsamples++;
			msamples += r->ev >= 0;
		} else if (r->kind == RK_COLLAPSE) {
			ncoll++;
			mcoll += r->ev >= 0;
			rec_writer_flush(w); /* keep the lines after their records when both go to stdout */
			collapse_line(lines, &j, r, o);
		}
	}
	if (rec_writer_flush(w) || (out != stdout && fflush(out))) {
		elog("%s: write failed", out_path ? out_path : "stdout");
		rc = TK_EXIT_FAIL;
		goto out;
	}
	ilog("matched %llu of %llu samples and %llu of %llu collapses to frames; clock offset (capture - trace) "
	     "%.3f ms",
	     (unsigned long long)msamples, (unsigned long long)nsamples, (unsigned long long)mcoll,
	     (unsigned long long)ncoll, (double)j.offset_ns * 1e-6);
	if (trc > 0 || arc == TK_EXIT_DATA)
		rc = TK_EXIT_DATA;
	else if (strict && mcoll < ncoll)
		rc = BP_EXIT_UNMATCHED;
out:
	if (w)
		rec_writer_free(w);
	if (out && out != stdout && fclose(out) && rc == TK_EXIT_OK) {
		elog("%s: write failed", out_path);
		rc = TK_EXIT_FAIL;
	}
	free(o);
	free(scratch);
	free(sel);
	an_free(a);
	if (j.mapped)
		munmap(j.buf, j.size);
	else
		free(j.buf);
	free(j.recs);
	free(j.flows);
	free(j.cookies);
	free(j.evs);
	free(j.flow_map);
	return rc;
}
