// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bbrtrace/reorder.h"

struct bt_reorder_item {
	uint64_t seq;
	struct bt_event ev;
};

int bt_reorder_push(struct bt_reorder *r, const struct bt_event *e)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 4096;
		struct bt_reorder_item *p = realloc(r->items, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		r->items = p;
		r->cap = cap;
	}
	r->items[r->n].seq = r->seq++;
	r->items[r->n].ev = *e;
	r->n++;
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct bt_reorder_item *x = a, *y = b;

	if (x->ev.t_ns != y->ev.t_ns)
		return x->ev.t_ns < y->ev.t_ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

size_t bt_reorder_release(struct bt_reorder *r, uint64_t before_ns, bt_reorder_fn fn, void *ctx)
{
	size_t k = 0;

	if (!r->n)
		return 0;
	qsort(r->items, r->n, sizeof(*r->items), by_time);
	while (k < r->n && r->items[k].ev.t_ns < before_ns)
		fn(ctx, &r->items[k++].ev);
	memmove(r->items, r->items + k, (r->n - k) * sizeof(*r->items));
	r->n -= k;
	return k;
}

void bt_reorder_free(struct bt_reorder *r)
{
	free(r->items);
	memset(r, 0, sizeof(*r));
}
