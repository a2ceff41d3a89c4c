// SPDX-License-Identifier: GPL-2.0-only
/*
 * The table of lookup methods, and the choice of a run's method and loop
 * from its configuration. A new method is its file, with a line in
 * upf/module.mk and in lookup.h, and a line here.
 */
#include <stddef.h>

#include "common.h"
#include "lookup.h"

/* in the order a configuration is offered to them: the first that runs it does */
static const struct up_lookup *const methods[] = {
	&up_lookup_slot,
	&up_lookup_inline,
	&up_lookup_rte,
	&up_lookup_own,
};

static const struct up_lookup *lookup_of(const struct up_run_cfg *c)
{
	for (size_t i = 0; i < ARRAY_SIZE(methods); i++)
		if (methods[i]->runs(c))
			return methods[i];
	return NULL;
}

up_loop_fn *up_lookup_loop(const struct up_run_cfg *c)
{
	const struct up_lookup *l = lookup_of(c);

	return l->loops[l->variant(c)][c->design == UP_SHARDED][c->design == UP_GLOBAL]
		[c->prefetch];
}
