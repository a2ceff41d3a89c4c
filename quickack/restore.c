// SPDX-License-Identifier: GPL-2.0-only
/*
 * restore and status: each route in the journal in its oldest saved state,
 * compared with the route now; restore sends the saved states back (a
 * replace: a route deleted since stays deleted; a route quickack made, an
 * added record, is deleted), reads them back, and keeps
 * in the journal only the routes it could not restore. A record of another
 * boot or namespace, or of a device that is gone, is never sent: restore
 * refuses the whole journal (exit 19) unless --discard-stale sets those
 * records aside; a device made again under the same name gets the route
 * back through its new ifindex.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netlink.h>

#include "log.h"
#include "output.h"
#include "run.h"
#include "scope.h"
#include "stale.h"

struct restore_run {
	struct qaj_file jf;
	struct key_index ix;          /* the routes now */
	struct qa_fit_of *fit;        /* by journal index: the record against this boot, namespace, devices */
	bool *refused;                /* by journal index: stale, and its route still here (or the world is another) */
	size_t nrefused;
	size_t *pick, npick;          /* the oldest live record of each saved route, in journal order */
	unsigned int *records;        /* by journal index: the records of the route picked there */
	struct qa_route *mapped;      /* by pick: a QA_FIT_MOVED record's route through its devices now */
	struct plan *plan;
	size_t nplan, already, gone, stale, moved;
	uint8_t *arena, *del_arena, *scratch;
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
static void pick_group(const struct qaj *j, const bool *skip, const size_t *order, size_t s, size_t e,
		       size_t *pick, size_t *n, unsigned int *records)
{
	size_t first = SIZE_MAX;
	unsigned int cnt = 0;

	for (size_t k = s; k < e; k++) {
		if (j->e[order[k]].voided || (skip && skip[order[k]]))
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

/* the oldest record of each route, in journal order, but those in skip[]
 * (NULL: none); SIZE_MAX when out of memory */
static size_t pick_oldest(const struct qaj *j, const bool *skip, size_t *pick, unsigned int *records)
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
		pick_group(j, skip, order, s, e, pick, &n, records);
	}
	free(keys);
	free(order);
	/* journal order, so restore replays in the order the changes were made */
	qsort(pick, n, sizeof(*pick), cmp_size);
	return n;
}

static void restore_free(struct restore_run *run)
{
	for (size_t i = 0; run->mapped && i < run->npick; i++)
		qa_route_free(&run->mapped[i]);
	qa_index_free(&run->ix);
	free(run->fit);
	free(run->refused);
	free(run->pick);
	free(run->records);
	free(run->mapped);
	free(run->plan);
	free(run->arena);
	free(run->del_arena);
	free(run->scratch);
	qaj_close(&run->jf);
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
	c->journal_scopes = run->jf.j.nsc > 0;
	return 0;
}

/* the routes now, by their identity */
static int restore_dump(struct ctx *c, struct restore_run *run)
{
	double t = qa_now_s();
	int rc;

	if ((rc = qa_dump(c, &c->routes)))
		return rc;
	if (qa_index_build(&run->ix, &c->routes))
		return TK_EXIT_FAIL;
	run->t_dump = qa_now_s() - t;
	return 0;
}

/* each record against this world; which of them restore refuses: all of
 * another boot or namespace, and those of a device that is gone whose route
 * is still here (a route that is gone is only dropped, as ever) */
static int restore_fit(struct ctx *c, struct restore_run *run)
{
	const struct qaj *j = &run->jf.j;
	size_t n = j->n ? j->n : 1, cnt;

	free(run->fit);
	free(run->refused);
	run->fit = calloc(n, sizeof(*run->fit));
	run->refused = calloc(n, sizeof(*run->refused));
	if (!run->fit || !run->refused)
		return TK_EXIT_FAIL;
	qa_journal_fit(c, j, run->fit);
	run->nrefused = 0;
	for (size_t i = 0; i < j->n; i++) {
		struct qa_route_key k;

		if (run->fit[i].fit != QA_FIT_STALE)
			continue;
		qa_route_key(&j->e[i].route, &k);
		run->refused[i] = run->fit[i].world || qa_index_find(&run->ix, &k, &cnt) != SIZE_MAX;
		run->nrefused += run->refused[i] && !j->e[i].voided;
	}
	return 0;
}

/* one line: what restore refuses, the first record and why, and the way out */
static int refuse_stale(struct ctx *c, const struct restore_run *run)
{
	const struct qaj *j = &run->jf.j;
	char name[160], opts[PATH_MAX + 300];
	size_t i = 0;

	while (!run->refused[i] || j->e[i].voided)
		i++;
	qa_journal_opts(c, opts, sizeof(opts));
	elog("restore: %zu saved record(s) describe another boot, network namespace or device; the first, %s: %s; nothing was applied ('quickack status%s' lists them, 'quickack restore --discard-stale%s' sets them aside in a kept file)",
	     run->nrefused, qa_route_name(&j->e[i].route, name, sizeof(name)), run->fit[i].why, opts, opts);
	return TK_EXIT_STALE;
}

/* restore (not status) and the stale records: refused, or set aside when
 * --discard-stale says so (--dry-run: only left out); a format 1 journal said */
static int restore_vet(struct ctx *c, struct restore_run *run, bool *skip_stale)
{
	int rc;

	*skip_stale = false;
	if (run->jf.j.n && run->fit[0].fit == QA_FIT_UNKNOWN)
		wlog("journal %s: %s; its routes are put back as saved, unchecked", c->journal_path, run->fit[0].why);
	if (!run->nrefused)
		return 0;
	if (!c->a->discard_stale)
		return refuse_stale(c, run);
	if (c->a->dry_run) {
		ilog("dry run: --discard-stale would set aside %zu saved record(s) of another boot, network namespace or device",
		     run->nrefused);
		*skip_stale = true;
		return 0;
	}
	if ((rc = qa_set_aside(&run->jf, run->refused, run->fit, "restore --discard-stale")))
		return rc;
	return restore_fit(c, run); /* the journal holds the others now */
}

/* picked records of a device made again: their route through its new ifindex */
static int restore_map(struct ctx *c, struct restore_run *run)
{
	int rc;

	for (size_t i = 0; i < run->npick; i++) {
		const struct qaj_entry *e = &run->jf.j.e[run->pick[i]];

		if (run->fit[run->pick[i]].fit != QA_FIT_MOVED)
			continue;
		if ((rc = qa_entry_remap(c, e, &run->mapped[i])))
			return rc;
		run->moved++;
	}
	return 0;
}

/* one line: the routes that go back through a device made again */
static void say_moved(const struct restore_run *run)
{
	char name[160];

	for (size_t i = 0; i < run->npick; i++) {
		const struct qa_fit_of *f = &run->fit[run->pick[i]];

		if (f->fit != QA_FIT_MOVED)
			continue;
		ilog("restore: %zu saved route(s) go back through their device made again under the same name; the first, %s: %s",
		     run->moved, qa_route_name(&run->jf.j.e[run->pick[i]].route, name, sizeof(name)), f->why);
		return;
	}
}

/* the saved routes to compare, and each saved state as a request */
static int restore_load(struct ctx *c, struct restore_run *run, bool skip_stale)
{
	const struct qaj *j = &run->jf.j;
	size_t n = j->n ? j->n : 1;
	int rc;

	run->pick = malloc(n * sizeof(*run->pick));
	run->records = malloc(n * sizeof(*run->records));
	run->mapped = calloc(n, sizeof(*run->mapped));
	run->plan = calloc(n, sizeof(*run->plan));
	run->scratch = malloc(QA_REQ_MAX);
	if (!run->pick || !run->records || !run->mapped || !run->plan || !run->scratch)
		return TK_EXIT_FAIL;
	n = pick_oldest(j, skip_stale ? run->refused : NULL, run->pick, run->records);
	if (n == SIZE_MAX)
		return TK_EXIT_FAIL;
	run->npick = n;
	if ((rc = restore_map(c, run)))
		return rc;
	for (size_t i = 0; i < run->npick; i++)
		run->plan[i].target = run->mapped[i].msg ? &run->mapped[i] : &j->e[run->pick[i]].route;
	if (qa_build_requests(run->plan, run->npick, NULL, &run->arena)) {
		elog("cannot build the route requests (a saved route too large?)");
		return TK_EXIT_FAIL;
	}
	return 0;
}

/* a route quickack made (an added record) against the route now: as saved
 * when it is gone ("same"), else planned for deletion ("differs") */
static const char *plan_added(struct ctx *c, struct restore_run *run, const struct qaj_entry *e, size_t j)
{
	if (j == SIZE_MAX) {
		run->already++;
		return "same";
	}
	run->plan[run->nplan++] = (struct plan){ .kind = PLAN_DELETE, .before = &c->routes.v[j], .seq = e->seq };
	return "differs";
}

/* each saved route against the route now: "same", "gone", or "differs" and
 * planned; a record restore refuses (status only gets here with one) is
 * counted stale, not planned */
static void restore_plan(struct ctx *c, struct restore_run *run, bool status_only)
{
	for (size_t i = 0; i < run->npick; i++) {
		size_t at = run->pick[i], cnt, j;
		struct qaj_entry *e = &run->jf.j.e[at];
		const struct qa_fit_of *fit = &run->fit[at];
		/* plan[i] is read before plan[nplan <= i] is written */
		const uint8_t *req = run->plan[i].req;
		uint32_t req_len = run->plan[i].req_len;
		struct qa_route_key k;
		bool here, same;

		qa_route_key(&e->route, &k);
		j = qa_index_find(&run->ix, &k, &cnt);
		here = j != SIZE_MAX;
		if (e->added && !run->refused[at]) {
			const char *live = plan_added(c, run, e, j);

			if (status_only)
				qa_out_saved(qa_writer(c), &c->nl, e, run->records[at], live, qa_fit_name(fit->fit), fit->why);
			continue;
		}
		same = here && qa_holds(&c->routes.v[j], req, req_len, run->scratch);
		if (run->refused[at])
			run->stale++;
		else if (!here)
			run->gone++;
		else if (same)
			run->already++;
		else
			run->plan[run->nplan++] = (struct plan){ .before = &c->routes.v[j], .target = run->plan[i].target,
								 .seq = e->seq, .req = req, .req_len = req_len };
		if (status_only)
			qa_out_saved(qa_writer(c), &c->nl, e, run->records[at], !here ? "gone" : same ? "same" : "differs",
				     qa_fit_name(fit->fit), fit->why);
	}
}

/* status' summary line */
static void status_summary(struct ctx *c, const struct restore_run *run)
{
	char stale[200] = "", moved[120] = "";

	if (run->stale)
		snprintf(stale, sizeof(stale), "; %zu stale (of another boot, network namespace or device): restore refuses them, --discard-stale sets them aside",
			 run->stale);
	if (run->moved)
		snprintf(moved, sizeof(moved), "; %zu through a device made again, put back through it by name", run->moved);
	ilog("journal %s: %zu route(s) saved; restore would change %zu, %zu already as saved, %zu gone%s%s%s",
	     c->journal_path, run->npick, run->nplan, run->already, run->gone, moved, stale,
	     run->npick && run->fit[run->pick[0]].fit == QA_FIT_UNKNOWN ? "; format 1: unchecked" : "");
}

/* what restore does with plan p, as its records say: delete a route
 * quickack made, or put a saved state back */
static const char *restore_action(const struct plan *p)
{
	return p->kind == PLAN_DELETE ? "delete: quickack made it" : "saved state";
}

/* --dry-run: the requests as records; nothing is sent */
static int print_dry_run(struct ctx *c, const struct restore_run *run)
{
	for (size_t i = 0; i < run->nplan; i++) {
		const struct plan *p = &run->plan[i];
		struct qa_req rq = qa_plan_req(p);

		qa_out_request(qa_writer(c), &c->nl, "restore", qa_plan_route(p), restore_action(p), &rq);
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
			qa_out_change(qa_writer(c), &c->nl, "restore", qa_plan_route(p), restore_action(p), res,
				      qa_plan_error(p, etext, sizeof(etext)));
	}
}

/* routes that are gone stay gone: quickack makes no route back (a route it
 * made, gone, is as saved) */
static void report_gone(const struct restore_run *run)
{
	char name[160];

	for (size_t i = 0; i < run->npick; i++) {
		const struct qaj_entry *e = &run->jf.j.e[run->pick[i]];
		struct qa_route_key k;
		size_t cnt;

		if (e->added)
			continue;
		qa_route_key(&e->route, &k);
		if (qa_index_find(&run->ix, &k, &cnt) != SIZE_MAX)
			continue;
		qa_route_name(&e->route, name, sizeof(name));
		elog("%s: the saved route no longer exists; quickack does not make routes back, so it is dropped from the journal",
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
	ilog("restore: %zu route(s) restored and verified, %zu already as saved; journal %s %s", n->restored,
	     run->already, c->journal_path, qaj_scopes_kept(&run->jf.j) ? "keeps the socket scopes not unpinned" : "removed");
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
	rc = qaj_rewrite(&run->jf, keep, nkeep, msg, sizeof(msg));
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
	bool dry_run = c->a->dry_run, none, skip_stale = false;
	int rc, scope_rc = 0;

	if ((rc = restore_open(c, &run, !status_only && !dry_run, &none)))
		goto out;
	if (none) {
		ilog("no journal at %s: nothing to restore", c->journal_path);
		goto out;
	}
	if ((rc = restore_dump(c, &run)) || (rc = restore_fit(c, &run)) ||
	    (!status_only && (rc = restore_vet(c, &run, &skip_stale))) || (rc = restore_load(c, &run, skip_stale)))
		goto out;
	/* the socket scopes first: unpinned, or kept in the journal when that fails */
	if (!status_only)
		scope_rc = qa_scopes_restore(c, &run.jf.j);
	if (!status_only && run.moved)
		say_moved(&run);
	restore_plan(c, &run, status_only);
	/* the deletions' requests: each route as it is now, which the kernel matches exactly */
	if (run.nplan && qa_build_requests(run.plan, run.nplan, NULL, &run.del_arena)) {
		elog("cannot build the route requests (a route too large?)");
		rc = TK_EXIT_FAIL;
		goto out;
	}
	if (status_only) {
		/* a journal of socket scopes alone has no routes to speak of */
		if (run.npick || !run.jf.j.nsc)
			status_summary(c, &run);
		qa_scopes_status(c, &run.jf.j);
	} else if (dry_run)
		rc = print_dry_run(c, &run);
	else if (!run.nplan || !(rc = qa_apply_and_verify(c, run.plan, run.nplan, &run.bt)))
		rc = settle_restores(c, &run);
out:
	restore_free(&run);
	return qa_finish_output(c, rc ? rc : scope_rc);
}
