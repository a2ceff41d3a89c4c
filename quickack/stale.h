/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The journal's records against the world they were saved in: this boot,
 * this network namespace (the same one, not another made under the same
 * name), and each device by name and ifindex. A state saved in another
 * world is never sent back as it is: restore puts a route back through a
 * device made again under the same name, refuses the others (exit 19)
 * unless --discard-stale sets them aside, and the changing commands set
 * aside every record that does not fit before they add theirs.
 */
#ifndef QA_STALE_H
#define QA_STALE_H

#include <stdbool.h>

#include "run.h"

enum qa_fit {
	QA_FIT_CURRENT,  /* this boot, this namespace, the same devices */
	QA_FIT_UNKNOWN,  /* a format 1 journal: nothing recorded to check it by */
	QA_FIT_MOVED,    /* a device made again: the same name, another ifindex */
	QA_FIT_STALE,    /* another boot or namespace, or a device that is gone */
};

/* the longest reason, in words */
#define QA_WHY_MAX 320

struct qa_fit_of {
	enum qa_fit fit;
	bool world;           /* QA_FIT_STALE for the whole journal: another boot or namespace */
	char why[QA_WHY_MAX]; /* "" for QA_FIT_CURRENT */
};

/* this boot and this network namespace, as a journal records them */
void qa_ident_here(struct qaj_ident *id);
/* each record of j, fit[0..j->n), against this run's world (c->here, c->nl) */
void qa_journal_fit(struct ctx *c, const struct qaj *j, struct qa_fit_of *fit);
/* status' word: "current", "unknown", or "stale" (QA_FIT_MOVED too: restore maps it) */
const char *qa_fit_name(enum qa_fit f);
/* a QA_FIT_MOVED record's saved route through each device's ifindex now, into out */
int qa_entry_remap(struct ctx *c, const struct qaj_entry *e, struct qa_route *out);
/* a route's devices and their names now, for its journal record (max: r->nexthops + 1) */
size_t qa_journal_devs(struct ctx *c, const struct qa_route *r, struct qaj_dev *devs, size_t max);

/*
 * The records marked aside[] moved to a kept file beside the journal, said
 * in one line naming it, the first record and why (what: the command).
 * 0, or TK_EXIT_JOURNAL after one line.
 */
int qa_set_aside(struct qaj_file *jf, const bool *aside, const struct qa_fit_of *fit, const char *what);
/* before a change is journaled: every record that is not QA_FIT_CURRENT set aside */
int qa_set_aside_unfit(struct ctx *c, struct qaj_file *jf, const char *what);

#endif
