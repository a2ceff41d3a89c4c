// SPDX-License-Identifier: GPL-2.0-only
/*
 * quickack's journal parser on arbitrary bytes. Beyond not crashing: every
 * journal it accepts (version 1 to 4) must format back into a journal of
 * this version that it accepts again, with the same records (socket scopes
 * among them, in their places), identity and devices,
 * and every saved route must turn into a request and, through its devices
 * renumbered, into a route with the same devices in the same places.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "quickack/journal.h"

/* the record's devices: as written (version 2), or by ifindex only (version 1) */
static size_t devs_of(const struct qaj_entry *e, struct qaj_dev *devs, size_t max)
{
	if (!e->has_devs)
		return qaj_route_devs(&e->route, devs, max);
	memcpy(devs, e->devs, e->ndevs * sizeof(*devs));
	return e->ndevs;
}

static void check_remap(const struct qaj_entry *e, const struct qaj_dev *devs, size_t n)
{
	uint32_t *from = calloc(n + 1, sizeof(*from)), *to = calloc(n + 1, sizeof(*to));
	struct qaj_dev *after = calloc(e->route.nexthops + 1, sizeof(*after));
	struct qa_route r;
	char err[160];

	if (!from || !to || !after)
		abort();
	for (size_t i = 0; i < n; i++) {
		from[i] = devs[i].ifindex;
		to[i] = devs[i].ifindex + 1000;
	}
	if (qa_route_remap_devs(&e->route, from, to, n, &r, err, sizeof(err)) ||
	    qaj_route_devs(&r, after, r.nexthops + 1) != n)
		abort();
	for (size_t i = 0; i < n; i++)
		if (after[i].ifindex != (uint32_t)(devs[i].ifindex + 1000))
			abort();
	qa_route_free(&r);
	free(from);
	free(to);
	free(after);
}

/* a scope record, and its void record */
static size_t format_scope(const struct qaj_scope *sc, char *out, size_t cap)
{
	int n = qaj_format_scope(out, cap, sc), m = 0;

	if (n < 0 || (sc->voided && (m = qaj_format_void(out + n, cap - (size_t)n, sc->seq)) < 0))
		abort();
	return (size_t)(n + m);
}

static size_t format_all(const struct qaj *j, char *out, size_t cap)
{
	size_t len = 0, k = 0;
	int n = qaj_format_header(out, cap, j->netns, j->created_s, &j->ident);

	if (n < 0)
		abort();
	len += (size_t)n;
	for (size_t i = 0; i < j->n || k < j->nsc; i++) {
		for (; k < j->nsc && (i == j->n || j->sc[k].seq < j->e[i].seq); k++)
			len += format_scope(&j->sc[k], out + len, cap - len);
		if (i == j->n)
			break;
		const struct qaj_entry *e = &j->e[i];
		struct qaj_dev *devs = calloc(e->route.nexthops + 1, sizeof(*devs));
		size_t nd;

		if (!devs)
			abort();
		nd = devs_of(e, devs, e->route.nexthops + 1);
		check_remap(e, devs, nd);
		n = qaj_format_route(out + len, cap - len, e->seq, e->time_s, e->op, e->added, &e->route, devs, nd);
		free(devs);
		if (n < 0)
			abort();
		len += (size_t)n;
		if (e->voided) {
			n = qaj_format_void(out + len, cap - len, e->seq);
			if (n < 0)
				abort();
			len += (size_t)n;
		}
	}
	return len;
}

static void check_same(const struct qaj *j, const struct qaj *k)
{
	if (k->n != j->n || k->version != QAJ_VERSION || !k->has_ident ||
	    memcmp(&k->ident, &j->ident, sizeof(k->ident)) || strcmp(k->netns, j->netns))
		abort();
	if (k->nsc != j->nsc)
		abort();
	for (size_t i = 0; i < j->nsc; i++) {
		const struct qaj_scope *a = &j->sc[i], *b = &k->sc[i];

		if (b->seq != a->seq || b->voided != a->voided || b->side != a->side || b->nports != a->nports ||
		    memcmp(b->ports, a->ports, sizeof(a->ports)) || strcmp(b->cgroup, a->cgroup) ||
		    b->cgroup_id != a->cgroup_id || strcmp(b->pin, a->pin))
			abort();
	}
	for (size_t i = 0; i < j->n; i++) {
		const struct qaj_entry *a = &j->e[i], *b = &k->e[i];

		if (b->seq != a->seq || b->voided != a->voided || b->added != a->added || b->route.len != a->route.len ||
		    memcmp(b->route.msg, a->route.msg, a->route.len) || !b->has_devs)
			abort();
		if (a->has_devs && (b->ndevs != a->ndevs || memcmp(b->devs, a->devs, a->ndevs * sizeof(*a->devs))))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qaj j, k;
	struct qaj_error e;
	char *out;
	size_t cap = 2048, len;

	if (qaj_parse((const char *)data, size, &j, &e))
		return 0;
	for (size_t i = 0; i < j.n; i++) {
		uint8_t req[QA_MSG_MAX + 1024];

		cap += qaj_route_line_max(&j.e[i].route, j.e[i].route.nexthops + 1) + 64;
		if (qa_route_request(&j.e[i].route, NULL, req, sizeof(req)) < 0 && j.e[i].route.len < QA_MSG_MAX - 64)
			abort();
	}
	cap += j.nsc * (QAJ_SCOPE_LINE_MAX + 64);
	if (j.has_header) {
		out = malloc(cap);
		if (!out)
			abort();
		len = format_all(&j, out, cap);
		if (qaj_parse(out, len, &k, &e))
			abort();
		check_same(&j, &k);
		qaj_free(&k);
		free(out);
	}
	qaj_free(&j);
	return 0;
}
