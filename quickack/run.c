// SPDX-License-Identifier: GPL-2.0-only
/*
 * What quickack's commands share in a run: the netlink socket and the dump,
 * the selection resolved (table, device, --to), the journal opened with its
 * checks, routes found by identity, and a batch sent and read back.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <arpa/inet.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/netlink.h>

#include "log.h"
#include "output.h"
#include "run.h"
#include "stale.h"

/* how long a run waits for another quickack's lock on the journal */
#define JOURNAL_LOCK_TIMEOUT_MS 10000
/* failures named one per line; the others are counted */
#define FAILURES_SHOWN 10

int qa_open_nl(struct ctx *c, bool changes)
{
	char err[256];

	if (qa_nl_open(&c->nl, changes, err, sizeof(err))) {
		elog("%s", err);
		return TK_EXIT_FAIL;
	}
	c->nl_open = true;
	return 0;
}

int qa_dump(struct ctx *c, struct qa_routes *out)
{
	char err[256];

	if (qa_nl_dump(&c->nl, c->a->family, out, err, sizeof(err))) {
		elog("%s", err);
		return TK_EXIT_FAIL;
	}
	return 0;
}

int qa_need_net_admin(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return 0; /* cannot tell: let the kernel decide */
	if (d[CAP_NET_ADMIN / 32].effective & (1u << (CAP_NET_ADMIN % 32)))
		return 0;
	elog("changing routes needs CAP_NET_ADMIN (run as root)");
	return TK_EXIT_NOPERM;
}

static int resolve_table(struct ctx *c)
{
	const char *t = c->a->table ? c->a->table : "main";

	if (qa_table_parse(t, &c->table)) { /* a number out of range was refused with the options */
		elog("--table: no routing table is named '%s' (not main, local, default, all, a number, or in /etc/iproute2/rt_tables)",
		     t);
		return TK_EXIT_NOTABLE;
	}
	return 0;
}

static int resolve_dev(struct ctx *c)
{
	const char *opt = c->a->all_dev ? "--all-dev" : c->a->dev_opt;
	const char *dev = c->a->all_dev ? c->a->all_dev : c->a->dev;

	if (!dev)
		return 0;
	c->oif = qa_nl_ifindex(&c->nl, dev);
	if (!c->oif) {
		elog("%s: no device '%s' in %s", opt, dev, c->ns_desc);
		return TK_EXIT_NODEV;
	}
	return 0;
}

/* does unicast route r's prefix hold address `to` (of the same family)? */
static bool covers(const struct qa_route *r, const struct cli_addr *to)
{
	unsigned int len = r->rtm.rtm_dst_len, full = len / 8;

	if (r->family != to->family || r->rtm.rtm_type != RTN_UNICAST)
		return false;
	if (memcmp(r->dst, to->bytes, full))
		return false;
	return len % 8 == 0 || !((r->dst[full] ^ to->bytes[full]) & (0xff00 >> (len % 8)));
}

/* --to with --table T: the longest prefix of table T that holds the address
 * (lowest metric among equals), as the kernel's lookup in that table finds it */
static int route_in_table(struct ctx *c, struct qa_route *out, char *err, size_t errlen)
{
	struct qa_routes all = { 0 };
	const struct qa_route *best = NULL;

	if (qa_nl_dump(&c->nl, c->a->to.family, &all, err, errlen))
		return -1;
	for (size_t i = 0; i < all.n; i++) {
		const struct qa_route *r = &all.v[i];

		if (r->table != c->table || !covers(r, &c->a->to))
			continue;
		if (!best || r->rtm.rtm_dst_len > best->rtm.rtm_dst_len ||
		    (r->rtm.rtm_dst_len == best->rtm.rtm_dst_len && r->priority < best->priority))
			best = r;
	}
	if (best) {
		*out = *best;
		out->msg = malloc(best->len);
		if (!out->msg) {
			qa_routes_free(&all);
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		memcpy(out->msg, best->msg, best->len);
	}
	qa_routes_free(&all);
	return best ? 0 : 1;
}

/*
 * A change made through --to reaches every peer the route covers, not only
 * ADDR: an ingest that names one pusher may be changing its default route,
 * and with it every peer. Said at the normal level, with the route and how
 * many addresses it covers, since a change the user did not mean is the
 * one they cannot see.
 */
static void note_wide(const struct ctx *c, const struct qa_route *r)
{
	const struct qa_args *a = c->a;
	unsigned int bits = (r->family == AF_INET ? 32 : 128) - r->rtm.rtm_dst_len;
	char p[INET6_ADDRSTRLEN + 8], t[32], n[32];

	if (a->cmd == QA_SHOW || !bits || a->host)
		return;
	qa_prefix_str(r->family, r->dst, r->rtm.rtm_dst_len, p, sizeof(p));
	qa_table_str(c->table, t, sizeof(t));
	if (!r->rtm.rtm_dst_len) {
		wlog("--to %s: the route to it is the default route (%s, table %s): the change reaches every "
		     "peer without a narrower route, not only %s (--host changes a host route for it alone)",
		     a->to_text, p, t, a->to_text);
		return;
	}
	if (bits < 64)
		snprintf(n, sizeof(n), "%llu", 1ULL << bits);
	else
		snprintf(n, sizeof(n), "2^%u", bits);
	wlog("--to %s: the route to it is %s (table %s): the change reaches its %s addresses, not only %s "
	     "(--host changes a host route for it alone)",
	     a->to_text, p, t, n, a->to_text);
}

/* --to ADDR: the route the kernel would use to reach ADDR becomes the
 * selection, its prefix and its table, as if they had been given */
static int resolve_to(struct ctx *c)
{
	struct qa_args *a = c->a;
	bool in_table = a->table && c->table != QA_TABLE_ALL;
	struct qa_route r;
	char err[256], t[32];
	int rc;

	if (!a->has_to)
		return 0;
	rc = in_table ? route_in_table(c, &r, err, sizeof(err))
		      : qa_nl_route_to(&c->nl, &a->to, 0, &r, err, sizeof(err));
	if (rc < 0) {
		elog("--to %s: %s", a->to_text, err);
		return TK_EXIT_FAIL;
	}
	if (rc > 0) {
		elog("--to %s: no route reaches it in %s%s", a->to_text, c->ns_desc,
		     in_table ? " in that table" : "");
		return TK_EXIT_NOROUTE;
	}
	memset(&a->prefix, 0, sizeof(a->prefix));
	a->prefix.addr.family = r.family;
	memcpy(a->prefix.addr.bytes, r.dst, 16);
	a->prefix.len = r.rtm.rtm_dst_len;
	a->has_prefix = true;
	a->family = r.family;
	c->table = r.table;
	/* that route only, not its twins of the same prefix with another metric */
	qa_route_key(&r, &c->to_key);
	c->has_to_key = true;
	vlog("--to %s: the route to it is %s in table %s", a->to_text,
	     qa_prefix_str(r.family, r.dst, a->prefix.len, err, sizeof(err)), qa_table_str(c->table, t, sizeof(t)));
	note_wide(c, &r);
	qa_route_free(&r);
	return 0;
}

int qa_resolve_selection(struct ctx *c)
{
	int rc = resolve_table(c);

	if (!rc)
		rc = resolve_to(c);
	return rc ? rc : resolve_dev(c);
}

int qa_check_table(struct ctx *c)
{
	char t[32];
	int fam = c->a->family;

	if (c->table == QA_TABLE_ALL)
		return 0;
	for (size_t i = 0; i < c->routes.n; i++)
		if (c->routes.v[i].table == c->table)
			return 0;
	elog("--table: table %s holds no %sroutes in %s", qa_table_str(c->table, t, sizeof(t)),
	     fam == AF_INET ? "IPv4 " : fam == AF_INET6 ? "IPv6 " : "", c->ns_desc);
	return TK_EXIT_NOTABLE;
}

void qa_filter_init(const struct ctx *c, struct qa_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->family = c->a->family;
	f->table = c->table;
	f->has_prefix = c->a->has_prefix;
	f->prefix = c->a->prefix;
	f->oif = c->oif;
	f->has_via = c->a->has_via;
	f->via = c->a->via;
	f->has_key = c->has_to_key;
	f->key = c->to_key;
}

/* the journal must be of this run's namespace */
static int check_journal_netns(struct ctx *c, struct qaj_file *jf)
{
	bool self = !strcmp(jf->j.netns, QAJ_NETNS_SELF);

	if (!jf->j.has_header || !strcmp(jf->j.netns, c->ns_tag))
		return 0;
	elog("journal %s holds routes of %s%s%s, not of %s; nothing was applied", c->journal_path,
	     self ? "the namespace quickack ran in" : "network namespace '", self ? "" : jf->j.netns,
	     self ? "" : "'", c->ns_desc);
	qaj_close(jf);
	return TK_EXIT_DATA;
}

int qa_open_journal(struct ctx *c, struct qaj_file *jf, bool write, bool create)
{
	char msg[600];
	int r = qaj_open(jf, c->journal_path, write, create, JOURNAL_LOCK_TIMEOUT_MS, msg, sizeof(msg));

	qa_ident_here(&c->here);
	if (r == QAJ_ECORRUPT) {
		elog("%s", msg);
		return TK_EXIT_DATA;
	}
	if (r) {
		elog("%s; nothing was applied", msg);
		return TK_EXIT_JOURNAL;
	}
	if (jf->j.torn_tail)
		wlog("journal %s: line %lu was cut short by a crash while it was written; its change was never sent, so it is ignored",
		     c->journal_path, jf->j.torn_line);
	return check_journal_netns(c, jf);
}

const char *qa_journal_opts(const struct ctx *c, char *buf, size_t len)
{
	const struct qa_args *a = c->a;

	snprintf(buf, len, "%s%s%s%s", a->netns ? " --netns " : "", a->netns ? a->netns : "",
		 a->journal ? " --journal " : "", a->journal ? a->journal : "");
	return buf;
}

struct rec_writer *qa_writer(struct ctx *c)
{
	if (!c->out) {
		c->out = rec_writer_new(c->a->fmt_set ? c->a->fmt : rec_format_default(c->out_file), c->out_file);
		if (c->out)
			qa_out_declare(c->out, c->a->cmd, c->a->scope || c->journal_scopes);
	}
	return c->out;
}

int qa_finish_output(struct ctx *c, int rc)
{
	if (c->out && rec_writer_free(c->out)) {
		c->out = NULL;
		elog("writing the output failed: %s", strerror(errno));
		return rc ? rc : TK_EXIT_FAIL;
	}
	c->out = NULL;
	return rc;
}

double qa_now_s(void)
{
	return (double)tk_mono_ns() / (double)TK_NSEC_PER_SEC;
}

/* --- routes by identity ------------------------------------------------------------------- */

static const struct qa_route_key *sort_keys;

static int cmp_idx(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int r = qa_route_key_cmp(&sort_keys[x], &sort_keys[y]);

	return r ? r : (x < y ? -1 : x > y);
}

void qa_sort_keys(const struct qa_route_key *keys, size_t *order, size_t n)
{
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	sort_keys = keys;
	qsort(order, n, sizeof(*order), cmp_idx);
}

int qa_index_build(struct key_index *ix, const struct qa_routes *rs)
{
	ix->n = rs->n;
	ix->keys = malloc((rs->n ? rs->n : 1) * sizeof(*ix->keys));
	ix->idx = malloc((rs->n ? rs->n : 1) * sizeof(*ix->idx));
	if (!ix->keys || !ix->idx)
		return -1;
	for (size_t i = 0; i < rs->n; i++)
		qa_route_key(&rs->v[i], &ix->keys[i]);
	qa_sort_keys(ix->keys, ix->idx, ix->n);
	return 0;
}

size_t qa_index_find(const struct key_index *ix, const struct qa_route_key *k, size_t *count)
{
	size_t lo = 0, hi = ix->n;

	*count = 0;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (qa_route_key_cmp(&ix->keys[ix->idx[mid]], k) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t j = lo; j < ix->n && !qa_route_key_cmp(&ix->keys[ix->idx[j]], k); j++)
		(*count)++;
	return *count ? ix->idx[lo] : SIZE_MAX;
}

void qa_index_free(struct key_index *ix)
{
	free(ix->keys);
	free(ix->idx);
	memset(ix, 0, sizeof(*ix));
}

/* --- a planned batch ------------------------------------------------------------------------ */

int qa_build_requests(struct plan *p, size_t n, const struct qa_change *chg, uint8_t **arena_out)
{
	size_t cap = 0, used = 0;
	uint8_t *arena;

	for (size_t i = 0; i < n; i++)
		cap += qa_plan_route(&p[i])->len + QA_REQ_SLACK;
	arena = malloc(cap ? cap : 1);
	if (!arena)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct qa_route *src = qa_plan_route(&p[i]);
		int len;

		if (p[i].req)
			continue;
		len = qa_route_request(src, p[i].target ? NULL : chg, arena + used, cap - used);
		if (len < 0) {
			free(arena);
			return -1;
		}
		p[i].req = arena + used;
		p[i].req_len = (uint32_t)len;
		used += NLMSG_ALIGN((size_t)len);
	}
	*arena_out = arena;
	return 0;
}

bool qa_holds(const struct qa_route *r, const uint8_t *req, uint32_t len, uint8_t *scratch)
{
	int n = qa_route_request(r, NULL, scratch, QA_REQ_MAX);

	return n >= 0 && (uint32_t)n == len && !memcmp(scratch, req, len);
}

/* a create never replaces (NLM_F_EXCL), and a replace never creates, so
 * neither touches a route it was not planned for */
struct qa_req qa_plan_req(const struct plan *p)
{
	switch (p->kind) {
	case PLAN_CREATE: return (struct qa_req){ p->req, p->req_len, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL };
	case PLAN_DELETE: return (struct qa_req){ p->req, p->req_len, RTM_DELROUTE, 0 };
	default: return (struct qa_req){ p->req, p->req_len, RTM_NEWROUTE, NLM_F_REPLACE };
	}
}

/* the requests out, their answers into p; on a failed batch, a fresh socket to read back on */
static int send_batch(struct ctx *c, struct plan *p, size_t n, struct qa_batch_stats *st)
{
	struct qa_req *reqs = calloc(n ? n : 1, sizeof(*reqs));
	struct qa_ack *acks = calloc(n ? n : 1, sizeof(*acks));
	char err[256];
	int rc = 0;

	if (!reqs || !acks) {
		rc = TK_EXIT_FAIL;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		reqs[i] = qa_plan_req(&p[i]);
	if (qa_nl_batch(&c->nl, reqs, n, acks, st, err, sizeof(err))) {
		wlog("%s", err);
		/* answers may still sit in the socket */
		qa_nl_close(&c->nl);
		c->nl_open = false;
		rc = qa_open_nl(c, false);
	}
	for (size_t i = 0; i < n; i++)
		p[i].ack = acks[i];
out:
	free(acks);
	free(reqs);
	return rc;
}

/* plan p against its route as read back (now->v[j]; j SIZE_MAX: none) */
static enum outcome outcome_of(const struct plan *p, const struct qa_routes *now, size_t j, uint8_t *scratch)
{
	if (p->kind == PLAN_DELETE)
		return j == SIZE_MAX ? OUT_APPLIED
		       : qa_route_same(&now->v[j], NULL, p->before, NULL) ? OUT_BEFORE : OUT_OTHER;
	if (j == SIZE_MAX)
		return p->kind == PLAN_CREATE ? OUT_BEFORE : OUT_GONE;
	if (qa_holds(&now->v[j], p->req, p->req_len, scratch))
		return OUT_APPLIED;
	if (p->kind == PLAN_REPLACE && qa_route_same(&now->v[j], NULL, p->before, NULL))
		return OUT_BEFORE;
	return OUT_OTHER;
}

/* each planned route as read back: applied, as before, gone, or something else */
static int classify(struct ctx *c, struct plan *p, size_t n)
{
	uint8_t *scratch = malloc(QA_REQ_MAX);
	struct qa_routes now = { 0 };
	struct key_index ix = { 0 };
	int rc;

	if (!scratch)
		return TK_EXIT_FAIL;
	if ((rc = qa_dump(c, &now)))
		goto out;
	if (qa_index_build(&ix, &now)) {
		rc = TK_EXIT_FAIL;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct qa_route_key k;
		size_t cnt;

		qa_route_key(qa_plan_route(&p[i]), &k);
		p[i].out = outcome_of(&p[i], &now, qa_index_find(&ix, &k, &cnt), scratch);
	}
out:
	qa_index_free(&ix);
	qa_routes_free(&now);
	free(scratch);
	return rc;
}

int qa_apply_and_verify(struct ctx *c, struct plan *p, size_t n, struct batch_times *t)
{
	double t0 = qa_now_s(), t1;
	int rc = send_batch(c, p, n, &t->st);

	t1 = qa_now_s();
	if (rc || (rc = classify(c, p, n)))
		return rc;
	t->apply_s = t1 - t0;
	t->verify_s = qa_now_s() - t1;
	return 0;
}

const char *qa_ack_text(const struct qa_ack *a, char *buf, size_t len)
{
	if (!a->acked)
		snprintf(buf, len, "no answer from the kernel");
	else if (a->msg[0])
		snprintf(buf, len, "%s (%s)", a->msg, strerror(a->error));
	else
		snprintf(buf, len, "%s", strerror(a->error));
	return buf;
}

const char *qa_plan_error(const struct plan *p, char *buf, size_t len)
{
	return p->ack.acked && p->ack.error ? qa_ack_text(&p->ack, buf, len) : NULL;
}

static void report_failure(const struct plan *p, const char *what)
{
	char name[160], why[400];

	qa_route_name(qa_plan_route(p), name, sizeof(name));
	if (p->out == OUT_GONE)
		elog("%s: %s: the route no longer exists%s", name, what,
		     p->ack.acked && p->ack.error ? "" : " (it changed while quickack ran)");
	else if (p->ack.acked && p->ack.error)
		elog("%s: the kernel refused the %s: %s", name, what, qa_ack_text(&p->ack, why, sizeof(why)));
	else if (p->out == OUT_BEFORE)
		elog("%s: %s: the kernel accepted the request but the route is unchanged", name, what);
	else
		elog("%s: %s: read back, the route holds something else than asked%s", name, what,
		     p->ack.acked ? "" : " (no answer from the kernel)");
}

void qa_report_failures(const struct plan *p, size_t n, const char *what)
{
	unsigned int shown = 0, more = 0;

	for (size_t i = 0; i < n; i++) {
		if (p[i].out == OUT_APPLIED)
			continue;
		if (shown++ < FAILURES_SHOWN)
			report_failure(&p[i], what);
		else
			more++;
	}
	if (more)
		elog("... and %u more routes", more);
}
