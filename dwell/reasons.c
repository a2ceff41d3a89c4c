// SPDX-License-Identifier: GPL-2.0-only
/*
 * The drop reasons' names: enum skb_drop_reason read from BTF (its prefix
 * cut) and sorted by value for lookup; without the enum, the two legacy
 * reasons (SOCKET_RCVBUFF, PROTO_MEM).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>

#include "bpf/contract/udpdwell.h"
#include "reasons.h"

#define PREFIX "SKB_DROP_REASON_"

static int cmp_value(const void *a, const void *b)
{
	const struct ud_reason *x = a, *y = b;

	return x->value < y->value ? -1 : x->value > y->value;
}

static int add(struct ud_reasons *r, unsigned int *cap, uint32_t value, const char *name)
{
	if (r->n == *cap) {
		unsigned int ncap = *cap ? *cap * 2 : 64;
		struct ud_reason *p = realloc(r->v, ncap * sizeof(*p));

		if (!p)
			return -1;
		r->v = p;
		*cap = ncap;
	}
	r->v[r->n].value = value;
	snprintf(r->v[r->n].name, sizeof(r->v[r->n].name), "%s", name);
	r->n++;
	return 0;
}

int ud_reasons_load(struct ud_reasons *r, const struct btf *btf)
{
	struct btf *own = NULL;
	unsigned int cap = 0;
	int id;

	memset(r, 0, sizeof(*r));
	if (!btf)
		btf = own = btf__load_vmlinux_btf();
	id = btf ? btf__find_by_name_kind(btf, "skb_drop_reason", BTF_KIND_ENUM) : -1;
	if (id > 0) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const struct btf_enum *e = btf_enum(t);

		for (int i = 0; i < btf_vlen(t); i++, e++) {
			const char *name = btf__name_by_offset(btf, e->name_off);

			if (!name)
				continue;
			if (!strncmp(name, PREFIX, strlen(PREFIX)))
				name += strlen(PREFIX);
			if (add(r, &cap, (uint32_t)e->val, name))
				goto nomem;
		}
		r->from_btf = true;
	} else {
		if (add(r, &cap, UD_REASON_LEGACY_RCVBUFF, "SOCKET_RCVBUFF") ||
		    add(r, &cap, UD_REASON_LEGACY_PROTO_MEM, "PROTO_MEM"))
			goto nomem;
	}
	btf__free(own);
	qsort(r->v, r->n, sizeof(*r->v), cmp_value);
	return 0;
nomem:
	btf__free(own);
	ud_reasons_free(r);
	return -1;
}

void ud_reasons_free(struct ud_reasons *r)
{
	free(r->v);
	memset(r, 0, sizeof(*r));
}

const char *ud_reason_name(const struct ud_reasons *r, uint32_t value, char *buf, size_t len)
{
	struct ud_reason key = { .value = value };
	const struct ud_reason *f = r->n ? bsearch(&key, r->v, r->n, sizeof(*r->v), cmp_value) : NULL;

	if (f)
		return f->name;
	if (value == UD_REASON_OTHERS)
		return UD_REASON_OTHERS_NAME;
	snprintf(buf, len, "REASON_%u", value);
	return buf;
}

bool ud_reason_value(const struct ud_reasons *r, const char *name, uint32_t *value)
{
	for (unsigned int i = 0; i < r->n; i++) {
		if (!strcmp(r->v[i].name, name)) {
			*value = r->v[i].value;
			return true;
		}
	}
	return false;
}
