// SPDX-License-Identifier: GPL-2.0-only
/*
 * A design as upfbench's command lines name it: the presets (--preset,
 * --presets), one knob set to a value of its list, and the label a sweep
 * gives a configuration.
 */
#include <stdbool.h>
#include <stdio.h>

#include "common.h"

#include "args.h"

const struct up_preset up_presets[] = {
	{ "before", UP_GLOBAL, UP_LAYOUT_FAT, 1, false, false, UP_TABLE_OWN, true, true, "the incident's design" },
	{ "affinity", UP_STEERED, UP_LAYOUT_FAT, 1, false, false, UP_TABLE_OWN, true, true,
	  "+ flow affinity" },
	{ "batched", UP_STEERED, UP_LAYOUT_FAT, 8, true, false, UP_TABLE_OWN, true, true, "+ batch 8, prefetch" },
	{ "split", UP_STEERED, UP_LAYOUT_SPLIT, 8, true, false, UP_TABLE_OWN, true, true, "+ hot/cold split" },
	{ "best", UP_STEERED, UP_LAYOUT_SPLIT, 8, true, true, UP_TABLE_OWN, true, true, "+ huge pages" },
	{ "sharded", UP_SHARDED, UP_LAYOUT_SPLIT, 8, true, true, UP_TABLE_OWN, true, true, "best, a dispatcher" },
	{ "rte", UP_STEERED, UP_LAYOUT_SPLIT, 8, true, true, UP_TABLE_RTE, true, true, "best with rte_hash" },
	{ "before-rte", UP_GLOBAL, UP_LAYOUT_FAT, 1, false, false, UP_TABLE_RTE, true, false,
	  "before with rte_hash" },
	{ "inline", UP_STEERED, UP_LAYOUT_INLINE, 8, true, true, UP_TABLE_OWN, true, true,
	  "best, inline hot part" },
	{ "slot", UP_STEERED, UP_LAYOUT_SPLIT, 8, true, true, UP_TABLE_SLOT, true, true,
	  "best, TEID names slot" },
	{ "slot-unchecked", UP_STEERED, UP_LAYOUT_SPLIT, 8, true, true, UP_TABLE_SLOT, false, false,
	  "slot, TEID not checked" },
};
const unsigned int up_npresets = ARRAY_SIZE(up_presets);

void up_preset_apply(struct up_run_cfg *c, const struct up_preset *p)
{
	c->design = p->design;
	c->layout = p->layout;
	c->batch = p->batch;
	c->prefetch = p->prefetch;
	c->huge = p->huge;
	c->table = p->table;
	c->teid_check = p->teid_check;
}

void up_knob_set(struct up_run_cfg *c, enum up_knob k, uint64_t v)
{
	switch (k) {
	case UP_K_DESIGN: c->design = (enum up_design)v; break;
	case UP_K_TABLE: c->table = (enum up_table_kind)v; break;
	case UP_K_LAYOUT: c->layout = (enum up_layout)v; break;
	case UP_K_BATCH: c->batch = (unsigned int)v; break;
	case UP_K_PREFETCH: c->prefetch = v; break;
	case UP_K_HUGE: c->huge = v; break;
	case UP_K_TEID_CHECK: c->teid_check = v; break;
	default: break;
	}
}

void up_label(const struct up_run_cfg *c, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s/b%u%s/%s%s/%s", up_design_names[c->design], up_layout_names[c->layout],
		 c->batch, c->prefetch ? "p" : "", up_table_names[c->table],
		 c->table == UP_TABLE_SLOT && !c->teid_check ? "-unchecked" : "", c->huge ? "thp" : "4k");
}
