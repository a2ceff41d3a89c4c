// SPDX-License-Identifier: GPL-2.0-only
/*
 * restore and status: each route in the journal in its oldest saved state,
 * compared with the route now; restore sends the saved states back (a
 * replace: a route deleted since stays deleted), reads them back, and keeps
 * in the journal only the routes it could not restore.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netlink.h>

#include "log.h"
#include "output.h"
#include "run.h"

struct restore_run {
	struct qaj_file jf;
	struct key_index ix;          /* the routes now */
	size_t *pick, npick;          /* the oldest live record of each saved route, in journal order */
	unsigned int *records;        /* by journal index: the records of the route picked there */
	struct plan *plan;
	size_t nplan, already, gone;
	uint8_t *arena, *scratch;
	struct batch_times bt;
	double t_start, t_read, t_dump;
};

/* what restore did with the planned routes */
struct tally {
	size_t restored, failed, eperm;
};

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* among order[s..e) (one route's records, in journal order), the first not
 * voided into pick, with the number of such records */
static void pick_group(const struct qaj *j, const size_t *order, size_t s, size_t e, size_t *pick, size_t *n,
		       unsigned int *records)
{
	size_t first = SIZE_MAX;
	unsigned int cnt = 0;

	for (size_t k = s; k < e; k++) {
		if (j->e[order[k]].voided)
			continue;
		cnt++;
		if (first == SIZE_MAX)
			first = order[k];
	}
	if (first != SIZE_MAX) {
		records[first] = cnt;
		pick[(*n)++] = first;
	}
}

/* the oldest record of each route, in journal order; SIZE_MAX when out of memory */
static size_t pick_oldest(const struct qaj *j, size_t *pick, unsigned int *records)
{
	struct qa_route_key *keys = malloc((j->n ? j->n : 1) * sizeof(*keys));
	size_t *order = malloc((j->n ? j->n : 1) * sizeof(*order)), n = 0;

	if (!keys || !order) {
		free(keys);
		free(order);
		return SIZE_MAX;
	}
	for (size_t i = 0; i < j->n; i++) {
		qa_route_key(&j->e[i].route, &keys[i]);
		records[i] = 0;
	}
	qa_sort_keys(keys, order, j->n);
	for (size_t s = 0, e; s < j->n; s = e) {
		for (e = s; e < j->n && !qa_route_key_cmp(&keys[order[s]], &keys[order[e]]); e++)
			;
		pick_group(j, order, s, e, pick, &n, records);
	}
	free(keys);
	free(order);
	/* journal order, so restore replays in the order the changes were made */
	qsort(pick, n, sizeof(*pick), cmp_size);
	return n;
}

/* privileges, the socket, the journal (locked); *none when there is none */
static int restore_open(struct ctx *c, struct restore_run *run, bool write, bool *none)
{
	double t;
	int rc;

	if (write && (rc = qa_need_net_admin()))
		return rc;
	if ((rc = qa_open_nl(c, write)))
		return rc;
	t = qa_now_s();
	if ((rc = qa_open_journal(c, &run->jf, write, false)))
		return rc;
	run->t_read = qa_now_s() - t;
	*none = run->jf.fd < 0 || !run->jf.j.has_header;
	return 0;
}

/* the saved routes to compare, the routes now, and each saved state as a request */
static int restore_load(struct ctx *c, struct restore_run *run)
{
	const struct qaj *j = &run->jf.j;
	size_t n = j->n ? j->n : 1;
	double t;
	int rc;

	run->pick = malloc(n * sizeof(*run->pick));
	run->records = malloc(n * sizeof(*run->records));
	run->plan = calloc(n, sizeof(*run->plan));
	run->scratch = malloc(QA_REQ_MAX);
	if (!run->pick || !run->records || !run->plan || !run->scratch ||
	    (run->npick = pick_oldest(j, run->pick, run->records)) == SIZE_MAX)
		return TK_EXIT_FAIL;
	t = qa_now_s();
	if ((rc = qa_dump(c, &c->routes)))
		return rc;
	if (qa_index_build(&run->ix, &c->routes))
		return TK_EXIT_FAIL;
	run->t_dump = qa_now_s() - t;
	for (size_t i = 0; i < run->npick; i++)
		run->plan[i].target = &j->e[run->pick[i]].route;
	if (qa_build_requests(run->plan, run->npick, NULL, &run->arena)) {
		elog("cannot build the route requests (a saved route too large?)");
		return TK_EXIT_FAIL;
	}
	return 0;
}

/* each saved route against the route now: "same", "gone", or "differs" and planned */
static void restore_plan(struct ctx *c, struct restore_run *run, bool status_only)
{
	for (size_t i = 0; i < run->npick; i++) {
		struct qaj_entry *e = &run->jf.j.e[run->pick[i]];
		/* plan[i] is read before plan[nplan <= i] is written */
		const uint8_t *req = run->plan[i].req;
		uint32_t req_len = run->plan[i].req_len;
		struct qa_route_key k;
		size_t cnt, j;
		const char *live;

		qa_route_key(&e->route, &k);
		j = qa_index_find(&run->ix, &k, &cnt);
		if (j == SIZE_MAX) {
			live = "gone";
			run->gone++;
		} else if (qa_holds(&c->routes.v[j], req, req_len, run->scratch)) {
			live = "same";
			run->already++;
		} else {
			live = "differs";
			run->plan[run->nplan++] = (struct plan){ .before = &c->routes.v[j], .target = &e->route,
								 .seq = e->seq, .req = req, .req_len = req_len };
		}
		if (status_only)
			qa_out_saved(qa_writer(c), &c->nl, e->seq, e->time_s, e->op, run->records[run->pick[i]],
				     &e->route, live);
	}
}

/* --dry-run: the requests as records; nothing is sent */
static int print_dry_run(struct ctx *c, const struct restore_run *run)
{
	for (size_t i = 0; i < run->nplan; i++) {
		const struct plan *p = &run->plan[i];

		qa_out_request(qa_writer(c), &c->nl, "restore", p->target, "saved state", p->req, p->req_len,
			       NLM_F_REPLACE);
	}
	ilog("dry run: restore would change %zu route(s), %zu already as saved, %zu gone; nothing was sent",
	     run->nplan, run->already, run->gone);
	return 0;
}

/* the outcomes counted and, when asked, written as records; the journal
 * records of the routes that failed, to keep */
static void tally_restores(struct ctx *c, struct restore_run *run, struct tally *n,
			   const struct qaj_entry **keep, size_t *nkeep)
{
	char etext[400];

	for (size_t i = 0; i < run->nplan; i++) {
		const struct plan *p = &run->plan[i];
		const char *res = p->out == OUT_APPLIED ? "restored" : p->out == OUT_GONE ? "gone" : "failed";

		if (p->out == OUT_APPLIED) {
			n->restored++;
		} else if (p->out == OUT_GONE) {
			run->gone++;
		} else {
			n->failed++;
			for (size_t k = 0; k < run->jf.j.n; k++)
				if (run->jf.j.e[k].seq == p->seq)
					keep[(*nkeep)++] = &run->jf.j.e[k];
		}
		if (p->ack.acked && p->ack.error == EPERM)
			n->eperm++;
		if (c->a->change_records)
			qa_out_change(qa_writer(c), &c->nl, "restore", p->target, "saved state", res,
				      qa_plan_error(p, etext, sizeof(etext)));
	}
}

/* routes that are gone stay gone: quickack never creates a route */
static void report_gone(const struct restore_run *run)
{
	char name[160];

	for (size_t i = 0; i < run->npick; i++) {
		const struct qaj_entry *e = &run->jf.j.e[run->pick[i]];
		struct qa_route_key k;
		size_t cnt;

		qa_route_key(&e->route, &k);
		if (qa_index_find(&run->ix, &k, &cnt) != SIZE_MAX)
			continue;
		qa_route_name(&e->route, name, sizeof(name));
		elog("%s: the saved route no longer exists; quickack does not create routes, so it is dropped from the journal",
		     name);
	}
}

/* the exit code, and one line that says what happened */
static int restore_verdict(struct ctx *c, const struct restore_run *run, const struct tally *n)
{
	if (n->failed) {
		elog("restore: %zu route(s) restored, %zu failed and stay in the journal %s", n->restored, n->failed,
		     c->journal_path);
		return !n->restored ? (n->eperm ? TK_EXIT_NOPERM : TK_EXIT_REFUSED) : TK_EXIT_PARTIAL;
	}
	if (run->gone) {
		elog("restore: %zu route(s) restored, %zu already as saved, %zu gone; the journal is empty", n->restored,
		     run->already, run->gone);
		return TK_EXIT_NOROUTE;
	}
	ilog("restore: %zu route(s) restored and verified, %zu already as saved; journal %s removed", n->restored,
	     run->already, c->journal_path);
	return TK_EXIT_OK;
}

/* after the batch: outcomes, the journal rewritten with what failed, the verdict */
static int settle_restores(struct ctx *c, struct restore_run *run)
{
	const struct qaj_entry **keep = calloc(run->nplan ? run->nplan : 1, sizeof(*keep));
	struct tally n = { 0 };
	size_t nkeep = 0;
	char msg[600];
	int rc;

	if (!keep)
		return TK_EXIT_FAIL;
	tally_restores(c, run, &n, keep, &nkeep);
	qa_report_failures(run->plan, run->nplan, "restore");
	report_gone(run);
	rc = qaj_rewrite(&run->jf, c->ns_tag, keep, nkeep, msg, sizeof(msg));
	free(keep);
	if (rc) {
		elog("%s", msg);
		return TK_EXIT_JOURNAL;
	}
	vlog("timings: journal read %.3f s, dump %.3f s, apply %.3f s (%u datagrams, %u requests), verify %.3f s, total %.3f s",
	     run->t_read, run->t_dump, run->bt.apply_s, run->bt.st.datagrams, run->bt.st.messages, run->bt.verify_s,
	     qa_now_s() - run->t_start);
	return restore_verdict(c, run, &n);
}

int qa_cmd_restore(struct ctx *c, bool status_only)
{
	struct restore_run run = { .jf = { .fd = -1 }, .t_start = qa_now_s() };
	bool dry_run = c->a->dry_run, none;
	int rc;

	if ((rc = restore_open(c, &run, !status_only && !dry_run, &none)))
		goto out;
	if (none) {
		ilog("no journal at %s: nothing to restore", c->journal_path);
		goto out;
	}
	if ((rc = restore_load(c, &run)))
		goto out;
	restore_plan(c, &run, status_only);
	if (status_only)
		ilog("journal %s: %zu route(s) saved; restore would change %zu, %zu already as saved, %zu gone",
		     c->journal_path, run.npick, run.nplan, run.already, run.gone);
	else if (dry_run)
		rc = print_dry_run(c, &run);
	else if (!run.nplan || !(rc = qa_apply_and_verify(c, run.plan, run.nplan, &run.bt)))
		rc = settle_restores(c, &run);
out:
	qa_index_free(&run.ix);
	free(run.pick);
	free(run.records);
	free(run.plan);
	free(run.arena);
	free(run.scratch);
	qaj_close(&run.jf);
	return qa_finish_output(c, rc);
}
