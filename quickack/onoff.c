// SPDX-License-Identifier: GPL-2.0-only
/*
 * on, off, rto-min, congctl: select the routes, plan the change, journal
 * each route's whole state, send the batch, read it back, and void in the
 * journal what the kernel refused.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/netlink.h>

#include "log.h"
#include "output.h"
#include "run.h"
#include "stale.h"

/* the closest routes named when none matches */
#define CLOSEST_SHOWN 3
/* "void seq=<20 digits> crc=<8 hex digits>\n" fits */
#define VOID_LINE_MAX 48

struct change_run {
	struct qaj_file jf;
	struct qa_filter f;
	struct key_index ix;
	const struct qa_route *host_from; /* --host: the route that covers ADDR */
	struct qa_route host;             /* --host: the host route to make */
	struct plan *plan;
	uint8_t *arena;
	size_t nplan, matched, already, skipped;
	struct batch_times bt;
	double t_start, t_dump, t_journal;
};

/* what the kernel did with the planned routes */
struct tally {
	size_t applied, refused, other, eperm;
};

static const char *op_name(const struct qa_args *a)
{
	return qa_cmd_name(a->cmd);
}

/* privileges, the socket, the selection, the journal (locked), the routes */
static int change_setup(struct ctx *c, struct change_run *run)
{
	struct qa_args *a = c->a;
	double t;
	int rc;

	if (!a->dry_run && (rc = qa_need_net_admin()))
		return rc;
	if ((rc = qa_open_nl(c, !a->dry_run)) || (rc = qa_resolve_selection(c)))
		return rc;
	if (!a->dry_run && (rc = qa_open_journal(c, &run->jf, true, true)))
		return rc;
	t = qa_now_s();
	if ((rc = qa_dump(c, &c->routes)) || (rc = qa_check_table(c)))
		return rc;
	run->t_dump = qa_now_s() - t;
	qa_filter_init(c, &run->f);
	run->f.unicast_only = a->all_dev != NULL;
	if (qa_index_build(&run->ix, &c->routes))
		return TK_EXIT_FAIL;
	run->plan = calloc(c->routes.n ? c->routes.n : 1, sizeof(*run->plan));
	return run->plan ? 0 : TK_EXIT_FAIL;
}

/* why a replace cannot address r safely, or NULL */
static const char *unsafe(const struct change_run *run, const struct qa_route *r, char *why, size_t len)
{
	struct qa_route_key k;
	size_t twins;

	qa_route_key(r, &k);
	qa_index_find(&run->ix, &k, &twins);
	if (twins > 1) {
		snprintf(why, len, "%zu routes share its table, prefix, tos and metric, and a replace cannot tell them apart",
			 twins);
		return why;
	}
	return qa_route_changeable(r, why, len) ? NULL : why;
}

/*
 * --host, and the route to ADDR covers more than ADDR: a host route to
 * make, a copy of r with the change, into the plan; nothing when r already
 * gives ADDR what was asked. A route of the host route's key that exists,
 * of another type (the lookup did not pick it), is never taken over.
 */
static int plan_host(struct ctx *c, struct change_run *run, const struct qa_route *r)
{
	const struct qa_args *a = c->a;
	struct qa_route_key k;
	char err[200], name[160];
	size_t twins;

	if (!qa_change_needed(r, &a->change)) {
		run->already++;
		ilog("--host: %s already gives %s what was asked; no host route is made", qa_route_name(r, name, sizeof(name)),
		     a->to_text);
		return 0;
	}
	if (qa_route_host(r, &a->to, &a->change, &run->host, err, sizeof(err))) {
		elog("--host: cannot make a host route for %s from %s: %s; nothing was applied", a->to_text,
		     qa_route_name(r, name, sizeof(name)), err);
		return TK_EXIT_FAIL;
	}
	qa_route_key(&run->host, &k);
	if (qa_index_find(&run->ix, &k, &twins) != SIZE_MAX) {
		elog("--host: a route %s exists already and is not the one the kernel uses for %s; nothing was applied",
		     qa_route_name(&run->host, name, sizeof(name)), a->to_text);
		return TK_EXIT_UNSAFE;
	}
	run->host_from = r;
	run->plan[run->nplan++] = (struct plan){ .kind = PLAN_CREATE, .target = &run->host };
	return 0;
}

/* "quickack 0 -> 1", or "new host route from 0.0.0.0/0: quickack 0 -> 1" */
static const char *plan_change_text(const struct change_run *run, const struct plan *p, const struct qa_change *chg,
				    char *buf, size_t len)
{
	char d[128], dst[64];
	const struct qa_route *from = run->host_from;

	if (p->kind != PLAN_CREATE) {
		qa_change_describe(p->before, chg, buf, len);
		return buf;
	}
	qa_change_describe(from, chg, d, sizeof(d));
	snprintf(buf, len, "new host route from %s: %s",
		 qa_prefix_str(from->family, from->dst, from->rtm.rtm_dst_len, dst, sizeof(dst)), d);
	return buf;
}

/* the matching routes the change would alter, into the plan */
static int plan_changes(struct ctx *c, struct change_run *run)
{
	struct qa_args *a = c->a;
	char name[160], why[200], chg[128];
	int rc;

	for (size_t i = 0; i < c->routes.n; i++) {
		struct qa_route *r = &c->routes.v[i];

		if (!qa_filter_match(&run->f, r))
			continue;
		run->matched++;
		if (unsafe(run, r, why, sizeof(why))) {
			qa_route_name(r, name, sizeof(name));
			if (a->all_dev) { /* skip it, say so, change the others */
				wlog("%s: left alone: %s", name, why);
				run->skipped++;
				continue;
			}
			elog("%s: cannot be changed safely: %s; nothing was applied", name, why);
			return TK_EXIT_UNSAFE;
		}
		if (a->host && !qa_is_host_prefix(r->family, r->rtm.rtm_dst_len)) {
			if ((rc = plan_host(c, run, r)))
				return rc;
			continue;
		}
		if (!qa_change_needed(r, &a->change)) {
			run->already++;
			if (a->change_records || a->dry_run) {
				qa_change_describe(r, &a->change, chg, sizeof(chg));
				qa_out_change(qa_writer(c), &c->nl, op_name(a), r, chg, "unchanged", NULL);
			}
			continue;
		}
		run->plan[run->nplan++].before = r;
	}
	return 0;
}

/* "10.0.1.0/24 dev d0 table main, ..." */
static void closest_list(struct ctx *c, const size_t *near, size_t k, char *list, size_t len)
{
	char one[300], d[256], t[32], dst[64];

	list[0] = '\0';
	for (size_t i = 0; i < k; i++) {
		const struct qa_route *r = &c->routes.v[near[i]];

		qa_route_devs(&c->nl, r, d, sizeof(d));
		snprintf(one, sizeof(one), "%s%s%s%s table %s", i ? ", " : "",
			 qa_prefix_str(r->family, r->dst, r->rtm.rtm_dst_len, dst, sizeof(dst)), d[0] ? " dev " : "", d,
			 qa_table_str(r->table, t, sizeof(t)));
		strncat(list, one, len - strlen(list) - 1);
	}
}

/* a host PREFIX no route has: how to make one for that address */
static const char *host_hint(const struct ctx *c, const char *dst, char *buf, size_t len)
{
	const struct qa_args *a = c->a;
	const char *slash = strchr(dst, '/');
	char opts[PATH_MAX + 300];

	buf[0] = '\0';
	if (qa_is_host_prefix(a->prefix.addr.family, a->prefix.len) && slash)
		snprintf(buf, len, "; for a host route to %.*s alone: quickack %s --to %.*s --host%s", (int)(slash - dst),
			 dst, op_name(a), (int)(slash - dst), dst, qa_journal_opts(c, opts, sizeof(opts)));
	return buf;
}

/* nothing matched: one line, naming the closest routes */
static int report_no_match(struct ctx *c, const struct qa_filter *f)
{
	const struct qa_args *a = c->a;
	size_t near[CLOSEST_SHOWN], k = qa_closest(f, c->routes.v, c->routes.n, near, CLOSEST_SHOWN);
	char list[700], t[32], dst[64], hint[PATH_MAX + 500];

	closest_list(c, near, k, list, sizeof(list));
	qa_prefix_str(a->prefix.addr.family, a->prefix.addr.bytes, a->prefix.len, dst, sizeof(dst));
	if (a->all_dev)
		elog("--all-dev: no unicast route goes through %s in table %s%s%s", a->all_dev,
		     qa_table_str(c->table, t, sizeof(t)), k ? "; closest: " : "", list);
	else
		elog("no route matches %s in table %s%s%s%s%s%s%s",
		     dst, c->table == QA_TABLE_ALL ? "(all)" : qa_table_str(c->table, t, sizeof(t)), a->dev ? " dev " : "",
		     a->dev ? a->dev : "", a->has_via ? " via given gateway" : "",
		     k ? "; closest: " : "; the table holds no such routes", list, host_hint(c, dst, hint, sizeof(hint)));
	return TK_EXIT_NOROUTE;
}

/* --dry-run: the requests as records; nothing is sent */
static int print_dry_run(struct ctx *c, const struct change_run *run)
{
	const struct qa_args *a = c->a;
	char chg[200];

	for (size_t i = 0; i < run->nplan; i++) {
		const struct plan *p = &run->plan[i];

		struct qa_req rq = qa_plan_req(p);

		plan_change_text(run, p, &a->change, chg, sizeof(chg));
		qa_out_request(qa_writer(c), &c->nl, op_name(a), qa_plan_route(p), chg, &rq);
	}
	ilog("dry run: %zu route(s) would change, %zu already as asked%s; nothing was sent", run->nplan,
	     run->already, run->skipped ? ", some left alone" : "");
	return 0;
}

/* the planned routes' records, with their devices, into lines[0..*used) */
static int format_changes(struct ctx *c, struct change_run *run, char *lines, size_t cap, size_t *used,
			  struct qaj_dev *devs)
{
	uint64_t seq = run->jf.j.last_seq, now = (uint64_t)time(NULL);

	for (size_t i = 0; i < run->nplan; i++) {
		const struct qa_route *r = qa_plan_route(&run->plan[i]);
		size_t ndevs = qa_journal_devs(c, r, devs, r->nexthops + 1);
		int n = qaj_format_route(lines + *used, cap - *used, ++seq, now, op_name(c->a),
					 run->plan[i].kind == PLAN_CREATE, r, devs, ndevs);

		if (n < 0) {
			elog("cannot format a journal record; nothing was applied");
			return TK_EXIT_FAIL;
		}
		run->plan[i].seq = seq;
		*used += (size_t)n;
	}
	return 0;
}

/* the journal first: every planned route's whole state, synced, before anything
 * is sent; never after records of another boot, namespace or device */
static int journal_changes(struct ctx *c, struct change_run *run)
{
	size_t cap = 0, used = 0, most = 1;
	char *lines, msg[600];
	struct qaj_dev *devs;
	double t = qa_now_s();
	int rc;

	if ((rc = qa_set_aside_unfit(c, &run->jf, op_name(c->a))))
		return rc;
	for (size_t i = 0; i < run->nplan; i++) {
		const struct qa_route *r = qa_plan_route(&run->plan[i]);

		cap += qaj_route_line_max(r, r->nexthops + 1);
		most = r->nexthops + 1 > most ? r->nexthops + 1 : most;
	}
	lines = malloc(cap ? cap : 1);
	devs = calloc(most, sizeof(*devs));
	if (!lines || !devs)
		rc = TK_EXIT_FAIL;
	if (!rc)
		rc = format_changes(c, run, lines, cap, &used, devs);
	if (!rc && qaj_append(&run->jf, c->ns_tag, &c->here, lines, used, msg, sizeof(msg))) {
		elog("%s; nothing was applied", msg);
		rc = TK_EXIT_JOURNAL;
	}
	free(lines);
	free(devs);
	run->t_journal = qa_now_s() - t;
	return rc;
}

/* p counted in n; its result's word */
static const char *tally_one(struct tally *n, const struct plan *p)
{
	const char *res;

	switch (p->out) {
	case OUT_APPLIED: n->applied++; res = "applied"; break;
	case OUT_BEFORE: n->refused++; res = "refused"; break;
	default: n->other++; res = p->out == OUT_GONE ? "gone" : "mismatch"; break;
	}
	if (p->ack.acked && p->ack.error == EPERM)
		n->eperm++;
	return res;
}

/* the outcomes counted and, when asked, written as records; the changes the
 * kernel refused are voided, so that restore leaves those routes alone */
static int tally_changes(struct ctx *c, struct change_run *run, struct tally *n)
{
	const struct qa_args *a = c->a;
	char *voids = malloc(run->nplan * VOID_LINE_MAX + 1), msg[600], chg[200], etext[400];
	size_t vlen = 0, nvoid = 0;

	if (!voids)
		return TK_EXIT_FAIL;
	for (size_t i = 0; i < run->nplan; i++) {
		const struct plan *p = &run->plan[i];
		const char *res = tally_one(n, p);

		/* a create the kernel refused made nothing, whatever holds its key now */
		if ((p->out == OUT_BEFORE || p->kind == PLAN_CREATE) && p->ack.acked && p->ack.error) {
			vlen += (size_t)qaj_format_void(voids + vlen, VOID_LINE_MAX, p->seq);
			nvoid++;
		}
		if (a->change_records) {
			plan_change_text(run, p, &a->change, chg, sizeof(chg));
			qa_out_change(qa_writer(c), &c->nl, op_name(a), qa_plan_route(p), chg, res,
				      qa_plan_error(p, etext, sizeof(etext)));
		}
	}
	if (nvoid && qaj_append(&run->jf, c->ns_tag, &c->here, voids, vlen, msg, sizeof(msg)))
		wlog("%s (restore would put back routes that were not changed, harmlessly)", msg);
	free(voids);
	return 0;
}

/* the exit code, and one line that says what happened */
static int change_verdict(struct ctx *c, const struct change_run *run, const struct tally *n)
{
	const struct qa_args *a = c->a;
	const char *op = op_name(a);
	char opts[PATH_MAX + 300];

	if (!n->other && !n->refused && run->host_from) {
		char dst[64];

		ilog("%s: host route %s made and verified; journal %s ('quickack restore%s' deletes it)", op,
		     qa_prefix_str(run->host.family, run->host.dst, run->host.rtm.rtm_dst_len, dst, sizeof(dst)),
		     c->journal_path, qa_journal_opts(c, opts, sizeof(opts)));
		return TK_EXIT_OK;
	}
	if (!n->other && !n->refused) {
		ilog("%s: %zu route(s) changed and verified%s%s; journal %s", op, n->applied,
		     run->already ? ", others already as asked" : "", run->skipped ? ", some left alone" : "",
		     c->journal_path);
		return TK_EXIT_OK;
	}
	if (n->other)
		return TK_EXIT_VERIFY;
	if (!n->applied) {
		if (n->refused > 1) /* one refusal is already one line with the kernel's reason */
			elog("%s: nothing was applied (%zu refused)", op, n->refused);
		return n->eperm ? TK_EXIT_NOPERM : TK_EXIT_REFUSED;
	}
	elog("%s: partial: %zu route(s) changed, %zu refused; 'quickack restore%s' undoes the changed ones", op,
	     n->applied, n->refused, qa_journal_opts(c, opts, sizeof(opts)));
	return TK_EXIT_PARTIAL;
}

static int settle_changes(struct ctx *c, struct change_run *run)
{
	struct tally n = { 0 };
	int rc = tally_changes(c, run, &n);

	if (rc)
		return rc;
	qa_report_failures(run->plan, run->nplan, "change");
	vlog("timings: dump %.3f s, journal %.3f s, apply %.3f s (%u datagrams, %u requests, %" PRIu64
	     " bytes), verify %.3f s, total %.3f s", run->t_dump, run->t_journal, run->bt.apply_s,
	     run->bt.st.datagrams, run->bt.st.messages, run->bt.st.bytes, run->bt.verify_s,
	     qa_now_s() - run->t_start);
	return change_verdict(c, run, &n);
}

int qa_cmd_change(struct ctx *c)
{
	struct change_run run = { .jf = { .fd = -1 }, .t_start = qa_now_s() };
	const struct qa_args *a = c->a;
	int rc;

	if ((rc = change_setup(c, &run)) || (rc = plan_changes(c, &run)))
		goto out;
	if (!run.matched) {
		rc = report_no_match(c, &run.f);
		goto out;
	}
	if (run.nplan && qa_build_requests(run.plan, run.nplan, &a->change, &run.arena)) {
		elog("cannot build the route requests (a route too large?)");
		rc = TK_EXIT_FAIL;
		goto out;
	}
	if (a->dry_run)
		rc = print_dry_run(c, &run);
	else if (!run.nplan)
		ilog("%s: %zu route(s) already as asked; nothing to change", op_name(a), run.already);
	else if (!(rc = journal_changes(c, &run)) && !(rc = qa_apply_and_verify(c, run.plan, run.nplan, &run.bt)))
		rc = settle_changes(c, &run);
out:
	qa_index_free(&run.ix);
	qa_route_free(&run.host);
	free(run.plan);
	free(run.arena);
	qaj_close(&run.jf);
	return qa_finish_output(c, rc);
}
