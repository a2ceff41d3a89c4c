// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbrpcap join's trace: read whole (mapped, or from a pipe), line by line
 * through lib/jlines.h, each sample, collapse and stall record described by
 * its flow, ACK number and time for the matching (pcap/joinmatch.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "jlines.h"
#include "jsonl.h"
#include "log.h"
#include "pcap/join.h"
#include "trace.h"

/* the trace into j->buf; a TK_EXIT_* code */
int join_load_file(struct join *j, const char *path)
{
	struct stat st;
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : dup(0);
	size_t cap = 1 << 20, len = 0;

	if (fd < 0) {
		elog("%s: cannot open: %s", path, strerror(errno));
		return TK_EXIT_DATA;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);

		close(fd);
		if (m == MAP_FAILED) {
			elog("%s: cannot map: %s", path, strerror(errno));
			return TK_EXIT_DATA;
		}
		j->buf = m;
		j->size = (size_t)st.st_size;
		j->mapped = true;
		return TK_EXIT_OK;
	}
	j->buf = malloc(cap);
	for (;;) {
		ssize_t n;

		if (!j->buf) {
			close(fd);
			elog("%s: out of memory", path);
			return TK_EXIT_FAIL;
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
			return TK_EXIT_DATA;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	j->size = len;
	return TK_EXIT_OK;
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

/* a v4-mapped address as the capture has it: IPv4 in the first 4 bytes */
static uint8_t wire_addr(const uint8_t mapped[16], uint8_t out[16])
{
	static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	memset(out, 0, 16);
	if (!memcmp(mapped, prefix, 12)) {
		memcpy(out, mapped + 12, 4);
		return 4;
	}
	memcpy(out, mapped, 16);
	return 6;
}

/* the record's flow, ACK number and time; its flow stays -1 when it lacks them */
/*
 * A stall record as join matches it: against the ACK it waited for, the one
 * that acknowledged all the data in flight when it began (what Nagle waits
 * for), at its end. Its fields say when it began; the copy in `x` is moved.
 */
static const struct bt_sample *stall_key(struct bt_stall *x, const struct jl_obj *o,
					 struct bt_fieldset *fs)
{
	bt_stall_read(o, x, fs);
	x->at.snd_una = x->at.snd_nxt;
	x->at.t_ns += x->duration_us * TK_NSEC_PER_USEC;
	x->at.wall_ns += x->duration_us * TK_NSEC_PER_USEC;
	return &x->at;
}

static void describe(struct join *j, struct jm_rec *r, const struct jl_obj *o)
{
	struct bt_collapse c;
	struct bt_stall x;
	struct bt_fieldset fs;
	const struct bt_sample *s = &c.ack;
	struct tr_flow k = { 0 };

	if (r->kind == JM_SAMPLE)
		bt_sample_read(o, &c.ack, &fs);
	else if (r->kind == JM_COLLAPSE)
		bt_collapse_read(o, &c, &fs);
	else
		s = stall_key(&x, o, &fs);
	r->throttling = r->kind == JM_COLLAPSE && bt_has(&fs, BT_C_IMPACT) && c.impact == BT_IMPACT_THROTTLING;
	r->flow = -1;
	if (!j->time_chosen) {
		j->use_wall = bt_has(&fs, BT_F_WALL_NS);
		j->time_chosen = true;
	}
	if (!bt_has(&fs, j->use_wall ? BT_F_WALL_NS : BT_F_T_NS) || !bt_has(&fs, BT_F_SND_UNA))
		return;
	r->t_ns = (int64_t)(j->use_wall ? s->wall_ns : s->t_ns);
	r->snd_una = s->snd_una;
	if (bt_has(&fs, BT_F_SPORT) && bt_has(&fs, BT_F_DPORT) && bt_has(&fs, BT_F_SADDR) &&
	    bt_has(&fs, BT_F_DADDR)) {
		k.family = wire_addr(s->saddr, k.saddr);
		if (wire_addr(s->daddr, k.daddr) == k.family) {
			k.sport = s->sport;
			k.dport = s->dport;
			r->flow = flow_index(j, &k);
			if (bt_has(&fs, BT_F_COOKIE) && r->flow >= 0)
				note_cookie(j, s->cookie, r->flow);
			return;
		}
	}
	if (bt_has(&fs, BT_F_COOKIE)) /* a collapse record may name its socket by cookie only */
		r->flow = cookie_flow(j, s->cookie);
}

/* the record o, at off (len bytes) in the trace, into j->m.recs; -1 when out of memory */
static int add_record(struct join *j, const struct jl_obj *o, size_t off, size_t len, unsigned long lineno)
{
	struct jm_rec *r;
	const char *type;

	if (j->m.nrecs == j->cap_recs) {
		size_t n = j->cap_recs ? j->cap_recs * 2 : 1024;
		struct jm_rec *v = realloc(j->m.recs, n * sizeof(*v));

		if (!v)
			return -1;
		j->m.recs = v;
		j->cap_recs = n;
	}
	r = &j->m.recs[j->m.nrecs++];
	memset(r, 0, sizeof(*r));
	r->off = off;
	r->len = len;
	r->lineno = (uint32_t)lineno;
	r->flow = -1;
	r->ev = -1;
	type = bt_record_type(o);
	r->kind = !type ? JM_OTHER
		  : !strcmp(type, bt_sample_schema.type)   ? JM_SAMPLE
		  : !strcmp(type, bt_collapse_schema.type) ? JM_COLLAPSE
		  : !strcmp(type, bt_stall_schema.type)    ? JM_STALL
							   : JM_OTHER;
	if (r->kind != JM_OTHER)
		describe(j, r, o);
	return 0;
}

/* one line of the trace, at off; what join_read_trace returns, or 3 at the end of the records */
static int trace_line(struct join *j, struct jl_lines *lines, char *line, size_t off, size_t len, bool ended,
		      struct jl_obj *o)
{
	char err[128];

	switch (jl_lines_next(lines, line, len + ended, o, err, sizeof(err))) {
	case JL_LINE_RECORD:
		return add_record(j, o, off, len, lines->lineno);
	case JL_LINE_BLANK:
		return 0;
	case JL_LINE_CUT:
		return 3;
	case JL_LINE_CAPTURE:
		elog("%s looks like a packet capture (%s), not a bbrtrace trace: join takes the trace first, "
		     "then the capture (bbrpcap join TRACE.jsonl CAPTURE)", j->trace_path, lines->capture);
		return 2;
	default:
		elog("%s:%lu: not a JSON record: %s; the %lu lines before it were read", j->trace_path,
		     lines->lineno, err, lines->lineno - 1);
		return 1;
	}
}

/* reads the trace; -1 on a system error, 1 on a bad line (records before it
 * kept), 2 when it is a packet capture (nothing kept) */
int join_read_trace(struct join *j)
{
	char *scratch = NULL;
	size_t scap = 0, pos = 0;
	struct jl_obj *o = malloc(sizeof(*o));
	struct jl_lines lines;
	int rc = o ? 0 : -1;

	jl_lines_init(&lines, j->trace_path);
	while (!rc && pos < j->size) {
		char *nl = memchr(j->buf + pos, '\n', j->size - pos);
		size_t len = nl ? (size_t)(nl - (j->buf + pos)) : j->size - pos;

		if (len + 2 > scap) {
			char *ns = realloc(scratch, scap = len + 2 + 4096);

			if (!ns) {
				rc = -1;
				break;
			}
			scratch = ns;
		}
		/* with its '\n': a last line without one may be cut short */
		memcpy(scratch, j->buf + pos, len + (nl != NULL));
		scratch[len + (nl != NULL)] = '\0';
		rc = trace_line(j, &lines, scratch, pos, len, nl != NULL, o);
		pos += len + 1;
	}
	free(scratch);
	free(o);
	if (rc < 0 || j->oom) {
		elog("%s: out of memory", j->trace_path);
		return -1;
	}
	return rc == 3 ? 0 : rc;
}
