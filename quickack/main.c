// SPDX-License-Identifier: GPL-2.0-only
/*
 * quickack: turn quick ACKs (RTAX_QUICKACK) and the related delayed-ACK
 * knobs on or off for existing routes, keeping everything else about each
 * route, with a journal that undoes the change exactly.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "journal.h"
#include "log.h"
#include "netns.h"
#include "nl.h"
#include "output.h"
#include "quickack.h"

static void usage(void)
{
	printf(
"Usage: quickack COMMAND [ARGS] [OPTIONS]\n"
"\n"
"Turn quick ACKs (the RTAX_QUICKACK route metric) and related delayed-ACK\n"
"knobs on or off for existing routes, keeping every other attribute and\n"
"metric of each route, and undo the change exactly from a journal.\n"
"\n"
"Commands:\n"
"  show [PREFIX]               list routes with their quickack state and metrics\n"
"  on PREFIX | --all-dev DEV   set quickack 1: the receiver ACKs every segment at once\n"
"  off PREFIX | --all-dev DEV  set quickack 0 (the kernel's default: delayed ACKs)\n"
"  rto-min PREFIX VALUE        set the route's rto_min, locked (the kernel uses it\n"
"                              only locked). VALUE: N or Nms (milliseconds), Ns\n"
"                              (seconds), from 1 ms to 120 s; or off. On kernels\n"
"                              since about 6.6 it also caps the delayed-ACK timer\n"
"                              at rto_min - 1 ms.\n"
"  congctl PREFIX NAME         set the route's congestion control (bbr, bbr_traced,\n"
"                              ...; off removes it); --lock also locks it\n"
"  restore                     put every route in the journal back as it was before\n"
"                              its first recorded change, then empty the journal\n"
"  status                      list the routes the journal holds and whether\n"
"                              restore would change them\n"
"  rto-min and congctl also take --all-dev DEV instead of PREFIX.\n"
"\n"
"PREFIX is ADDRESS/LEN (10.0.1.0/24, fd00::/64), a host address (a /32 or\n"
"/128), or 'default'. It matches the routes whose destination is exactly\n"
"that prefix, in table main unless --table says otherwise. Only unicast\n"
"routes are changed.\n"
"\n"
"Options:\n"
"  --table T       routing table: main (default), local, default, a number,\n"
"                  a name from /etc/iproute2/rt_tables, or all\n"
"  --dev DEV       only routes through device DEV (any of their nexthops)\n"
"  --via GW        only routes through gateway GW\n"
"  --all-dev DEV   every unicast route through DEV (on, off, rto-min, congctl)\n"
"  -4, -6          only IPv4 or only IPv6 routes (default: both, or the PREFIX's)\n"
"  --netns NAME    work in network namespace NAME (/var/run/netns/NAME)\n"
"  --journal FILE  the journal; default " QAJ_DEFAULT_DIR "/quickack.journal, or\n"
"                  " QAJ_DEFAULT_DIR "/quickack-NAME.journal with --netns NAME\n"
"  --dry-run       print the netlink requests that would be sent, change\n"
"                  nothing and write no journal\n"
"  --lock          (congctl) also set the metric's lock bit, so that sockets\n"
"                  cannot choose another congestion control\n"
"  --json          JSON lines (same as --format json)\n"
"  --format F      table (default), csv or json\n"
"  -v, -q          more (-vv: debugging) or fewer messages on stderr\n"
"  -h, --help      this text;  -V, --version  the version\n"
"\n"
"Output: show prints 'route' records (rto_min_ms in milliseconds; mtu,\n"
"advmss in bytes; initcwnd, initrwnd in segments); status prints\n"
"'saved_route' records; --dry-run prints 'netlink_request' records; the\n"
"changing commands print one summary line on stderr, and 'change' records\n"
"on stdout when --json or --format is given.\n"
"\n"
"How a change is made: quickack dumps the routes (RTM_GETROUTE), writes the\n"
"whole state of each route it will change to the journal and fsyncs it, then\n"
"sends one RTM_NEWROUTE with NLM_F_REPLACE (never NLM_F_CREATE: no route is\n"
"ever created) per route, carrying every attribute the kernel reported with\n"
"only the one metric changed, many requests per datagram. Then it reads the\n"
"routes back and checks that each holds exactly what was asked. When the\n"
"kernel refuses some, its message is shown and the journal still restores\n"
"every route that was changed. The journal is text, one record per line with\n"
"a CRC-32, versioned (format 1; see quickack/journal.h); routes are saved as\n"
"the kernel's own bytes. A corrupt journal stops quickack before anything is\n"
"applied, naming the line and byte offset.\n"
"\n"
"Exit status:\n"
"   0  success, or nothing needed changing\n"
"   1  another failure\n"
"   2  bad arguments, a malformed PREFIX or value among them\n"
"   3  no privilege: changing routes needs CAP_NET_ADMIN, --netns CAP_SYS_ADMIN\n"
"   5  the journal is corrupt or belongs to another namespace; nothing applied\n"
"  10  no such device (--dev, --all-dev)\n"
"  11  no such routing table (--table), or the table holds no routes\n"
"  12  no such network namespace (--netns)\n"
"  13  no route matches (the closest routes are named); for restore: a saved\n"
"      route no longer exists (it is not created again)\n"
"  14  the kernel refused the change (its message is shown); nothing applied\n"
"  15  partial failure: some routes changed, some refused; restore undoes them\n"
"  16  read back, a route does not hold what was asked\n"
"  17  the journal cannot be created, written, synced or locked; nothing applied\n"
"  18  a matching route cannot be changed safely: not unicast, expiring, learned\n"
"      from router advertisements, or sharing its identity with another route\n");
}

struct ctx {
	struct qa_args *a;
	struct qa_nl nl;
	bool nl_open;
	struct qa_routes routes;
	const char *ns_tag;        /* the namespace as the journal names it */
	char ns_desc[300];         /* "network namespace 'x'" or "this network namespace" */
	char journal_path[PATH_MAX];
	uint32_t table;
	uint32_t oif;
	struct rec_writer *out;
};

static int open_nl(struct ctx *c, bool changes)
{
	char err[256];

	if (qa_nl_open(&c->nl, changes, err, sizeof(err))) {
		elog("%s", err);
		return TK_EXIT_FAIL;
	}
	c->nl_open = true;
	return 0;
}

static bool has_net_admin(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return true; /* cannot tell: let the kernel decide */
	return d[CAP_NET_ADMIN / 32].effective & (1u << (CAP_NET_ADMIN % 32));
}

static int resolve_table(struct ctx *c)
{
	const char *t = c->a->table ? c->a->table : "main";
	int r = qa_table_parse(t, &c->table);

	if (r == -2) {
		elog("--table: %s is out of range 1..4294967295", t);
		return TK_EXIT_USAGE;
	}
	if (r) {
		elog("--table: no routing table is named '%s' (not main, local, default, all, a number, or in /etc/iproute2/rt_tables)",
		     t);
		return QA_EXIT_NOTABLE;
	}
	return 0;
}

static int resolve_dev(struct ctx *c)
{
	const char *opt = c->a->all_dev ? "--all-dev" : "--dev";
	const char *dev = c->a->all_dev ? c->a->all_dev : c->a->dev;

	if (!dev)
		return 0;
	c->oif = qa_nl_ifindex(&c->nl, dev);
	if (!c->oif) {
		elog("%s: no device '%s' in %s", opt, dev, c->ns_desc);
		return QA_EXIT_NODEV;
	}
	return 0;
}

static int dump(struct ctx *c, struct qa_routes *out)
{
	char err[256];

	if (qa_nl_dump(&c->nl, c->a->family, out, err, sizeof(err))) {
		elog("%s", err);
		return TK_EXIT_FAIL;
	}
	return 0;
}

/* a numeric table the kernel has no route in does not exist for it */
static int check_table_exists(struct ctx *c)
{
	char t[32];

	if (c->table == QA_TABLE_ALL)
		return 0;
	for (size_t i = 0; i < c->routes.n; i++)
		if (c->routes.v[i].table == c->table)
			return 0;
	elog("--table: table %s holds no %sroutes in %s", qa_table_str(c->table, t, sizeof(t)),
	     c->a->family == AF_INET ? "IPv4 " : c->a->family == AF_INET6 ? "IPv6 " : "", c->ns_desc);
	return QA_EXIT_NOTABLE;
}

static void filter_init(struct ctx *c, struct qa_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->family = c->a->family;
	f->table = c->table;
	f->has_prefix = c->a->has_prefix;
	f->prefix = c->a->prefix;
	f->oif = c->oif;
	f->has_via = c->a->has_via;
	f->via = c->a->via;
}

static struct rec_writer *writer(struct ctx *c)
{
	if (!c->out)
		c->out = rec_writer_new(c->a->fmt_set ? c->a->fmt : REC_TABLE, stdout);
	return c->out;
}

static int finish_output(struct ctx *c, int rc)
{
	if (c->out && rec_writer_free(c->out)) {
		c->out = NULL;
		elog("writing the output failed: %s", strerror(errno));
		return rc ? rc : TK_EXIT_FAIL;
	}
	c->out = NULL;
	return rc;
}

/* --- show ---------------------------------------------------------------------------- */

static int cmd_show(struct ctx *c)
{
	struct qa_filter f;
	int rc;

	if ((rc = open_nl(c, false)) || (rc = resolve_table(c)) || (rc = resolve_dev(c)) ||
	    (rc = dump(c, &c->routes)) || (rc = check_table_exists(c)))
		return rc;
	filter_init(c, &f);
	for (size_t i = 0; i < c->routes.n; i++)
		if (qa_filter_match(&f, &c->routes.v[i]))
			qa_out_route(writer(c), &c->nl, &c->routes.v[i]);
	return finish_output(c, 0);
}

/* --- keys: find a route by what the kernel replaces it by ------------------------------- */

struct key_index {
	struct qa_route_key *keys;
	size_t *idx;
	size_t n;
};

static const struct qa_route_key *sort_keys;

static int cmp_idx(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int r = qa_route_key_cmp(&sort_keys[x], &sort_keys[y]);

	return r ? r : (x < y ? -1 : x > y);
}

static int index_build(struct key_index *ix, const struct qa_routes *rs)
{
	ix->n = rs->n;
	ix->keys = malloc((rs->n ? rs->n : 1) * sizeof(*ix->keys));
	ix->idx = malloc((rs->n ? rs->n : 1) * sizeof(*ix->idx));
	if (!ix->keys || !ix->idx)
		return -1;
	for (size_t i = 0; i < rs->n; i++) {
		qa_route_key(&rs->v[i], &ix->keys[i]);
		ix->idx[i] = i;
	}
	sort_keys = ix->keys;
	qsort(ix->idx, ix->n, sizeof(*ix->idx), cmp_idx);
	return 0;
}

/* the first route with key k, and how many share it */
static size_t index_find(const struct key_index *ix, const struct qa_route_key *k, size_t *count)
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

static void index_free(struct key_index *ix)
{
	free(ix->keys);
	free(ix->idx);
	memset(ix, 0, sizeof(*ix));
}

/* --- applying a planned batch ------------------------------------------------------------ */

enum outcome { OUT_PENDING, OUT_APPLIED, OUT_BEFORE, OUT_GONE, OUT_OTHER };

struct plan {
	struct qa_route *before;         /* the state to change (or, for restore, the current one) */
	const struct qa_route *target;   /* restore: the saved state to put back */
	uint64_t seq;                    /* journal record */
	const uint8_t *req;              /* the request: also the state expected afterwards */
	uint32_t req_len;
	enum outcome out;
	struct qa_ack ack;
};

/* requests for every plan entry that has none yet, into one arena (freed by the caller) */
static int build_requests(struct plan *p, size_t n, const struct qa_change *chg, uint8_t **arena_out)
{
	size_t cap = 0, used = 0;
	uint8_t *arena;

	for (size_t i = 0; i < n; i++)
		cap += (p[i].target ? p[i].target : p[i].before)->len + 256;
	arena = malloc(cap ? cap : 1);
	if (!arena)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct qa_route *src = p[i].target ? p[i].target : p[i].before;
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

/* whether route r holds exactly the state of request req (scratch: a buffer of QA_MSG_MAX + 4096) */
static bool holds(const struct qa_route *r, const uint8_t *req, uint32_t len, uint8_t *scratch)
{
	int n = qa_route_request(r, NULL, scratch, QA_MSG_MAX + 4096);

	return n >= 0 && (uint32_t)n == len && !memcmp(scratch, req, len);
}

/* send the planned requests; then read the routes back and classify each */
static int apply_and_verify(struct ctx *c, struct plan *p, size_t n, struct qa_batch_stats *st,
			    double *apply_s, double *verify_s)
{
	struct qa_req *reqs = calloc(n ? n : 1, sizeof(*reqs));
	struct qa_ack *acks = calloc(n ? n : 1, sizeof(*acks));
	uint8_t *scratch = malloc(QA_MSG_MAX + 4096);
	struct qa_routes now = { 0 };
	struct key_index ix = { 0 };
	struct timespec t0, t1, t2;
	char err[256];
	int rc = 0, brc;

	if (!reqs || !acks || !scratch) {
		rc = TK_EXIT_FAIL;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		reqs[i] = (struct qa_req){ p[i].req, p[i].req_len };
	clock_gettime(CLOCK_MONOTONIC, &t0);
	brc = qa_nl_batch(&c->nl, reqs, n, NLM_F_REPLACE, acks, st, err, sizeof(err));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (brc) {
		wlog("%s", err);
		/* answers may still sit in the socket: read back on a fresh one */
		qa_nl_close(&c->nl);
		c->nl_open = false;
		if ((rc = open_nl(c, false)))
			goto out;
	}
	for (size_t i = 0; i < n; i++)
		p[i].ack = acks[i];
	if ((rc = dump(c, &now)))
		goto out;
	if (index_build(&ix, &now)) {
		rc = TK_EXIT_FAIL;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct qa_route_key k;
		size_t cnt, j;

		qa_route_key(p[i].target ? p[i].target : p[i].before, &k);
		j = index_find(&ix, &k, &cnt);
		if (j == SIZE_MAX)
			p[i].out = OUT_GONE;
		else if (holds(&now.v[j], p[i].req, p[i].req_len, scratch))
			p[i].out = OUT_APPLIED;
		else if (qa_route_same(&now.v[j], NULL, p[i].before, NULL))
			p[i].out = OUT_BEFORE;
		else
			p[i].out = OUT_OTHER;
	}
	clock_gettime(CLOCK_MONOTONIC, &t2);
	*apply_s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	*verify_s = (double)(t2.tv_sec - t1.tv_sec) + (double)(t2.tv_nsec - t1.tv_nsec) / 1e9;
out:
	index_free(&ix);
	qa_routes_free(&now);
	free(scratch);
	free(acks);
	free(reqs);
	return rc;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static const char *errno_name(int e, char *buf, size_t len)
{
	snprintf(buf, len, "%s", strerror(e));
	return buf;
}

/* "Nexthop has invalid gateway (Invalid argument)" */
static const char *ack_text(const struct qa_ack *a, char *buf, size_t len)
{
	char e[128];

	if (!a->acked)
		snprintf(buf, len, "no answer from the kernel");
	else if (a->msg[0])
		snprintf(buf, len, "%s (%s)", a->msg, errno_name(a->error, e, sizeof(e)));
	else
		snprintf(buf, len, "%s", errno_name(a->error, e, sizeof(e)));
	return buf;
}

static int open_journal(struct ctx *c, struct qaj_file *jf, bool write, bool create)
{
	char msg[600];
	int r = qaj_open(jf, c->journal_path, write, create, 10000, msg, sizeof(msg));

	if (r == QAJ_ECORRUPT) {
		elog("%s", msg);
		return TK_EXIT_DATA;
	}
	if (r) {
		elog("%s; nothing was applied", msg);
		return QA_EXIT_JOURNAL;
	}
	if (jf->j.torn_tail)
		wlog("journal %s: line %lu was cut short by a crash while it was written; its change was never sent, so it is ignored",
		     c->journal_path, jf->j.torn_line);
	if (jf->j.has_header && strcmp(jf->j.netns, c->ns_tag)) {
		elog("journal %s holds routes of %s%s%s, not of %s; nothing was applied", c->journal_path,
		     strcmp(jf->j.netns, QAJ_NETNS_SELF) ? "network namespace '" : "the namespace quickack ran in",
		     strcmp(jf->j.netns, QAJ_NETNS_SELF) ? jf->j.netns : "",
		     strcmp(jf->j.netns, QAJ_NETNS_SELF) ? "'" : "", c->ns_desc);
		qaj_close(jf);
		return TK_EXIT_DATA;
	}
	return 0;
}

static void report_failures(struct ctx *c, const struct plan *p, size_t n, const char *what)
{
	unsigned int shown = 0, more = 0;
	char name[160], why[400];

	for (size_t i = 0; i < n; i++) {
		const struct qa_route *r = p[i].target ? p[i].target : p[i].before;

		if (p[i].out == OUT_APPLIED)
			continue;
		if (shown >= 10) {
			more++;
			continue;
		}
		shown++;
		qa_route_name(r, name, sizeof(name));
		if (p[i].out == OUT_GONE)
			elog("%s: %s: the route no longer exists%s", name, what,
			     p[i].ack.acked && p[i].ack.error ? "" : " (it changed while quickack ran)");
		else if (p[i].ack.acked && p[i].ack.error)
			elog("%s: the kernel refused the %s: %s", name, what, ack_text(&p[i].ack, why, sizeof(why)));
		else if (p[i].out == OUT_BEFORE)
			elog("%s: %s: the kernel accepted the request but the route is unchanged", name, what);
		else
			elog("%s: %s: read back, the route holds something else than asked%s", name, what,
			     p[i].ack.acked ? "" : " (no answer from the kernel)");
		(void)c;
	}
	if (more)
		elog("... and %u more routes", more);
}

/* --- on / off / rto-min / congctl ------------------------------------------------------------ */

static const char *op_name(const struct qa_args *a)
{
	return qa_cmd_name(a->cmd);
}

static int cmd_change(struct ctx *c)
{
	struct qa_args *a = c->a;
	struct qaj_file jf = { .fd = -1 };
	struct qa_filter f;
	struct key_index ix = { 0 };
	struct plan *plan = NULL;
	uint8_t *arena = NULL;
	size_t nplan = 0, matched = 0, already = 0, skipped = 0;
	char name[160], why[200], chg[128];
	struct qa_batch_stats st = { 0 };
	double t_start = now_s(), t_dump = 0, t_journal = 0, t_apply = 0, t_verify = 0;
	int rc;

	if (!a->dry_run && !has_net_admin()) {
		elog("changing routes needs CAP_NET_ADMIN (run as root)");
		return TK_EXIT_NOPERM;
	}
	if ((rc = open_nl(c, !a->dry_run)) || (rc = resolve_table(c)) || (rc = resolve_dev(c)))
		return rc;
	if (!a->dry_run && (rc = open_journal(c, &jf, true, true)))
		return rc;
	{
		double t = now_s();

		if ((rc = dump(c, &c->routes)) || (rc = check_table_exists(c)))
			goto out;
		t_dump = now_s() - t;
	}
	filter_init(c, &f);
	f.unicast_only = a->all_dev != NULL;
	if (index_build(&ix, &c->routes)) {
		rc = TK_EXIT_FAIL;
		goto out;
	}
	plan = calloc(c->routes.n ? c->routes.n : 1, sizeof(*plan));
	if (!plan) {
		rc = TK_EXIT_FAIL;
		goto out;
	}
	for (size_t i = 0; i < c->routes.n; i++) {
		struct qa_route *r = &c->routes.v[i];
		struct qa_route_key k;
		size_t twins;

		if (!qa_filter_match(&f, r))
			continue;
		matched++;
		qa_route_key(r, &k);
		index_find(&ix, &k, &twins);
		if (!qa_route_changeable(r, why, sizeof(why)) || twins > 1) {
			if (twins > 1)
				snprintf(why, sizeof(why),
					 "%zu routes share its table, prefix, tos and metric, and a replace cannot tell them apart",
					 twins);
			qa_route_name(r, name, sizeof(name));
			if (a->all_dev) { /* skip it, say so, change the others */
				wlog("%s: left alone: %s", name, why);
				skipped++;
				continue;
			}
			elog("%s: cannot be changed safely: %s; nothing was applied", name, why);
			rc = QA_EXIT_REFUSED;
			goto out;
		}
		if (!qa_change_needed(r, &a->change)) {
			already++;
			if (a->fmt_set || a->dry_run) {
				qa_change_describe(r, &a->change, chg, sizeof(chg));
				qa_out_change(writer(c), &c->nl, op_name(a), r, chg, "unchanged", NULL);
			}
			continue;
		}
		plan[nplan++].before = r;
	}
	if (!matched) {
		size_t near[3], k = qa_closest(&f, c->routes.v, c->routes.n, near, 3);
		char list[700] = "", one[300], d[256], t[32], dst[64];
		const char *what = a->all_dev ? a->all_dev : NULL;

		for (size_t i = 0; i < k; i++) {
			const struct qa_route *r = &c->routes.v[near[i]];

			qa_route_devs(&c->nl, r, d, sizeof(d));
			snprintf(one, sizeof(one), "%s%s%s%s table %s", i ? ", " : "",
				 qa_prefix_str(r->family, r->dst, r->rtm.rtm_dst_len, dst, sizeof(dst)), d[0] ? " dev " : "",
				 d, qa_table_str(r->table, t, sizeof(t)));
			strncat(list, one, sizeof(list) - strlen(list) - 1);
		}
		if (what)
			elog("--all-dev: no unicast route goes through %s in table %s%s%s", what,
			     qa_table_str(c->table, t, sizeof(t)), k ? "; closest: " : "", list);
		else
			elog("no route matches %s in table %s%s%s%s%s%s", qa_prefix_str(a->prefix.addr.family,
			     a->prefix.addr.bytes, a->prefix.len, dst, sizeof(dst)), c->table == QA_TABLE_ALL ? "(all)" :
			     qa_table_str(c->table, t, sizeof(t)), a->dev ? " dev " : "", a->dev ? a->dev : "",
			     a->has_via ? " via given gateway" : "", k ? "; closest: " : "; the table holds no such routes",
			     list);
		rc = QA_EXIT_NOROUTE;
		goto out;
	}
	if (nplan && build_requests(plan, nplan, &a->change, &arena)) {
		elog("cannot build the route requests (a route too large?)");
		rc = TK_EXIT_FAIL;
		goto out;
	}
	if (a->dry_run) {
		for (size_t i = 0; i < nplan; i++) {
			qa_change_describe(plan[i].before, &a->change, chg, sizeof(chg));
			qa_out_request(writer(c), &c->nl, op_name(a), plan[i].before, chg, plan[i].req, plan[i].req_len,
				       NLM_F_REPLACE);
		}
		ilog("dry run: %zu route(s) would change, %zu already as asked%s; nothing was sent", nplan, already,
		     skipped ? ", some left alone" : "");
		rc = 0;
		goto out;
	}
	if (!nplan) {
		ilog("%s: %zu route(s) already as asked; nothing to change", op_name(a), already);
		rc = 0;
		goto out;
	}

	/* the journal first: every route's whole state, synced, before anything is sent */
	{
		size_t cap = 0, used = 0;
		char *lines, msg[600];
		uint64_t seq = jf.j.last_seq, now = (uint64_t)time(NULL);
		double t = now_s();

		for (size_t i = 0; i < nplan; i++)
			cap += qaj_route_line_max(plan[i].before);
		lines = malloc(cap ? cap : 1);
		if (!lines) {
			rc = TK_EXIT_FAIL;
			goto out;
		}
		for (size_t i = 0; i < nplan; i++) {
			int n = qaj_format_route(lines + used, cap - used, ++seq, now, op_name(a), plan[i].before);

			if (n < 0) {
				free(lines);
				elog("cannot format a journal record; nothing was applied");
				rc = TK_EXIT_FAIL;
				goto out;
			}
			plan[i].seq = seq;
			used += (size_t)n;
		}
		if (qaj_append(&jf, c->ns_tag, lines, used, msg, sizeof(msg))) {
			free(lines);
			elog("%s; nothing was applied", msg);
			rc = QA_EXIT_JOURNAL;
			goto out;
		}
		free(lines);
		t_journal = now_s() - t;
	}

	if ((rc = apply_and_verify(c, plan, nplan, &st, &t_apply, &t_verify)))
		goto out;

	/* the changes that never happened are voided, so restore leaves those routes alone */
	{
		size_t applied = 0, refused = 0, other = 0, eperm = 0, nvoid = 0;
		char *voids = malloc(nplan * 48 + 1), msg[600];
		size_t vlen = 0;

		if (!voids) {
			rc = TK_EXIT_FAIL;
			goto out;
		}
		for (size_t i = 0; i < nplan; i++) {
			const char *res;
			char etext[400];

			switch (plan[i].out) {
			case OUT_APPLIED: applied++; res = "applied"; break;
			case OUT_BEFORE:
				refused++;
				res = "refused";
				if (plan[i].ack.acked && plan[i].ack.error) {
					vlen += (size_t)qaj_format_void(voids + vlen, 48, plan[i].seq);
					nvoid++;
				}
				break;
			default: other++; res = plan[i].out == OUT_GONE ? "gone" : "mismatch"; break;
			}
			if (plan[i].ack.acked && plan[i].ack.error == EPERM)
				eperm++;
			if (a->fmt_set) {
				qa_change_describe(plan[i].before, &a->change, chg, sizeof(chg));
				qa_out_change(writer(c), &c->nl, op_name(a), plan[i].before, chg, res,
					      plan[i].ack.acked && plan[i].ack.error ? ack_text(&plan[i].ack, etext, sizeof(etext)) : NULL);
			}
		}
		if (nvoid && qaj_append(&jf, c->ns_tag, voids, vlen, msg, sizeof(msg)))
			wlog("%s (restore would put back routes that were not changed, harmlessly)", msg);
		free(voids);
		report_failures(c, plan, nplan, "change");
		vlog("timings: dump %.3f s, journal %.3f s, apply %.3f s (%u datagrams, %u requests, %" PRIu64
		     " bytes), verify %.3f s, total %.3f s", t_dump, t_journal, t_apply, st.datagrams, st.messages,
		     st.bytes, t_verify, now_s() - t_start);
		if (!other && !refused) {
			ilog("%s: %zu route(s) changed and verified%s%s; journal %s", op_name(a), applied,
			     already ? ", others already as asked" : "", skipped ? ", some left alone" : "",
			     c->journal_path);
			rc = 0;
		} else if (other) {
			rc = QA_EXIT_VERIFY;
		} else if (!applied) {
			rc = eperm ? TK_EXIT_NOPERM : QA_EXIT_NETLINK;
			if (refused > 1) /* one refusal is already one line with the kernel's reason */
				elog("%s: nothing was applied (%zu refused)", op_name(a), refused);
		} else {
			rc = QA_EXIT_PARTIAL;
			elog("%s: partial: %zu route(s) changed, %zu refused; 'quickack restore%s%s%s%s' undoes the changed ones",
			     op_name(a), applied, refused, c->a->netns ? " --netns " : "", c->a->netns ? c->a->netns : "",
			     c->a->journal ? " --journal " : "", c->a->journal ? c->a->journal : "");
		}
	}
out:
	index_free(&ix);
	free(plan);
	free(arena);
	qaj_close(&jf);
	return finish_output(c, rc);
}

/* --- restore / status ----------------------------------------------------------------------- */

/* the oldest record of each route, in journal order */
static size_t pick_oldest(struct qaj *j, size_t *pick, unsigned int *records)
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
		order[i] = i;
	}
	sort_keys = keys;
	qsort(order, j->n, sizeof(*order), cmp_idx);
	for (size_t i = 0; i < j->n; i++)
		records[i] = 0;
	for (size_t s = 0; s < j->n;) {
		size_t e = s, first = SIZE_MAX;
		unsigned int cnt = 0;

		while (e < j->n && !qa_route_key_cmp(&keys[order[s]], &keys[order[e]]))
			e++;
		for (size_t k = s; k < e; k++) { /* sorted by key, then by position */
			if (j->e[order[k]].voided)
				continue;
			cnt++;
			if (first == SIZE_MAX)
				first = order[k];
		}
		if (first != SIZE_MAX) {
			records[first] = cnt;
			pick[n++] = first;
		}
		s = e;
	}
	free(keys);
	free(order);
	/* journal order, so restore replays in the order the changes were made */
	for (size_t i = 1; i < n; i++)
		for (size_t k = i; k > 0 && pick[k - 1] > pick[k]; k--) {
			size_t t = pick[k];

			pick[k] = pick[k - 1];
			pick[k - 1] = t;
		}
	return n;
}

static int cmd_restore(struct ctx *c, bool status_only)
{
	struct qa_args *a = c->a;
	bool write = !status_only && !a->dry_run;
	struct qaj_file jf = { .fd = -1 };
	struct key_index ix = { 0 };
	struct plan *plan = NULL;
	size_t *pick = NULL, npick, nplan = 0, already = 0, gone = 0;
	unsigned int *records = NULL;
	uint8_t *arena = NULL, *scratch = NULL;
	struct qa_batch_stats st = { 0 };
	double t_apply = 0, t_verify = 0;
	char name[160];
	int rc;

	double t_start = now_s(), t_read, t_dump = 0;

	if (write && !has_net_admin()) {
		elog("changing routes needs CAP_NET_ADMIN (run as root)");
		return TK_EXIT_NOPERM;
	}
	if ((rc = open_nl(c, write)))
		return rc;
	t_read = now_s();
	if ((rc = open_journal(c, &jf, write, false)))
		return rc;
	t_read = now_s() - t_read;
	if (jf.fd < 0 || !jf.j.has_header) {
		ilog("no journal at %s: nothing to restore", c->journal_path);
		qaj_close(&jf);
		return finish_output(c, 0);
	}
	pick = malloc((jf.j.n ? jf.j.n : 1) * sizeof(*pick));
	records = malloc((jf.j.n ? jf.j.n : 1) * sizeof(*records));
	plan = calloc(jf.j.n ? jf.j.n : 1, sizeof(*plan));
	if (!pick || !records || !plan || (npick = pick_oldest(&jf.j, pick, records)) == SIZE_MAX) {
		rc = TK_EXIT_FAIL;
		goto out;
	}
	t_dump = now_s();
	if ((rc = dump(c, &c->routes)) || index_build(&ix, &c->routes)) {
		rc = rc ? rc : TK_EXIT_FAIL;
		goto out;
	}
	t_dump = now_s() - t_dump;
	/* the saved states as requests, once: to compare with the routes now, and to send */
	for (size_t i = 0; i < npick; i++)
		plan[i].target = &jf.j.e[pick[i]].route;
	scratch = malloc(QA_MSG_MAX + 4096);
	if (!scratch || build_requests(plan, npick, NULL, &arena)) {
		elog("cannot build the route requests (a saved route too large?)");
		rc = TK_EXIT_FAIL;
		goto out;
	}
	for (size_t i = 0; i < npick; i++) {
		struct qaj_entry *e = &jf.j.e[pick[i]];
		struct qa_route_key k;
		size_t cnt, j;
		const char *live;
		const uint8_t *req = plan[i].req;
		uint32_t req_len = plan[i].req_len;

		qa_route_key(&e->route, &k);
		j = index_find(&ix, &k, &cnt);
		if (j == SIZE_MAX) {
			live = "gone";
			gone++;
		} else if (holds(&c->routes.v[j], req, req_len, scratch)) {
			live = "same";
			already++;
		} else {
			live = "differs";
			plan[nplan] = (struct plan){ .before = &c->routes.v[j], .target = &e->route, .seq = e->seq,
						     .req = req, .req_len = req_len };
			nplan++;
		}
		if (status_only)
			qa_out_saved(writer(c), &c->nl, e->seq, e->time_s, e->op, records[pick[i]], &e->route, live);
	}
	if (status_only) {
		ilog("journal %s: %zu route(s) saved; restore would change %zu, %zu already as saved, %zu gone",
		     c->journal_path, npick, nplan, already, gone);
		rc = 0;
		goto out;
	}
	if (a->dry_run) {
		for (size_t i = 0; i < nplan; i++)
			qa_out_request(writer(c), &c->nl, "restore", plan[i].target, "saved state", plan[i].req,
				       plan[i].req_len, NLM_F_REPLACE);
		ilog("dry run: restore would change %zu route(s), %zu already as saved, %zu gone; nothing was sent",
		     nplan, already, gone);
		rc = 0;
		goto out;
	}
	if (nplan && (rc = apply_and_verify(c, plan, nplan, &st, &t_apply, &t_verify)))
		goto out;
	{
		const struct qaj_entry **keep = calloc(nplan ? nplan : 1, sizeof(*keep));
		size_t nkeep = 0, restored = 0, failed = 0, eperm = 0;
		char msg[600];

		if (!keep) {
			rc = TK_EXIT_FAIL;
			goto out;
		}
		for (size_t i = 0; i < nplan; i++) {
			char etext[400];
			const char *res = plan[i].out == OUT_APPLIED ? "restored" : plan[i].out == OUT_GONE ? "gone" : "failed";

			if (plan[i].out == OUT_APPLIED)
				restored++;
			else if (plan[i].out == OUT_GONE)
				gone++;
			else {
				failed++;
				for (size_t k = 0; k < jf.j.n; k++)
					if (jf.j.e[k].seq == plan[i].seq)
						keep[nkeep++] = &jf.j.e[k];
			}
			if (plan[i].ack.acked && plan[i].ack.error == EPERM)
				eperm++;
			if (a->fmt_set)
				qa_out_change(writer(c), &c->nl, "restore", plan[i].target, "saved state", res,
					      plan[i].ack.acked && plan[i].ack.error ? ack_text(&plan[i].ack, etext, sizeof(etext)) : NULL);
		}
		report_failures(c, plan, nplan, "restore");
		/* routes that are gone stay gone: quickack never creates a route */
		for (size_t i = 0; i < npick; i++) {
			struct qaj_entry *e = &jf.j.e[pick[i]];
			struct qa_route_key k;
			size_t cnt;

			qa_route_key(&e->route, &k);
			if (index_find(&ix, &k, &cnt) == SIZE_MAX) {
				qa_route_name(&e->route, name, sizeof(name));
				elog("%s: the saved route no longer exists; quickack does not create routes, so it is dropped from the journal",
				     name);
			}
		}
		if (qaj_rewrite(&jf, c->ns_tag, keep, nkeep, msg, sizeof(msg))) {
			elog("%s", msg);
			free(keep);
			rc = QA_EXIT_JOURNAL;
			goto out;
		}
		free(keep);
		vlog("timings: journal read %.3f s, dump %.3f s, apply %.3f s (%u datagrams, %u requests), verify %.3f s, total %.3f s",
		     t_read, t_dump, t_apply, st.datagrams, st.messages, t_verify, now_s() - t_start);
		if (failed) {
			rc = !restored ? (eperm ? TK_EXIT_NOPERM : QA_EXIT_NETLINK) : QA_EXIT_PARTIAL;
			elog("restore: %zu route(s) restored, %zu failed and stay in the journal %s", restored, failed,
			     c->journal_path);
		} else if (gone) {
			rc = QA_EXIT_NOROUTE;
			elog("restore: %zu route(s) restored, %zu already as saved, %zu gone; the journal is empty",
			     restored, already, gone);
		} else {
			ilog("restore: %zu route(s) restored and verified, %zu already as saved; journal %s removed",
			     restored, already, c->journal_path);
			rc = 0;
		}
	}
out:
	index_free(&ix);
	free(pick);
	free(records);
	free(plan);
	free(arena);
	free(scratch);
	qaj_close(&jf);
	return finish_output(c, rc);
}

int main(int argc, char **argv)
{
	struct qa_args a;
	struct ctx c;
	int rc;

	log_init(argv[0]);
	if (qa_args_parse(argc, argv, &a))
		return TK_EXIT_USAGE;
	if (a.help) {
		usage();
		return 0;
	}
	if (a.version) {
		cli_print_version();
		return 0;
	}
	log_set_level(a.verbosity);
	memset(&c, 0, sizeof(c));
	c.a = &a;
	c.ns_tag = a.netns ? a.netns : QAJ_NETNS_SELF;
	if (a.netns)
		snprintf(c.ns_desc, sizeof(c.ns_desc), "network namespace '%s'", a.netns);
	else
		snprintf(c.ns_desc, sizeof(c.ns_desc), "this network namespace");
	if (a.journal)
		snprintf(c.journal_path, sizeof(c.journal_path), "%s", a.journal);
	else
		qaj_default_path(a.netns, c.journal_path, sizeof(c.journal_path));
	if (a.netns) {
		char msg[512];
		int e = netns_enter(a.netns, msg, sizeof(msg));

		if (e) {
			elog("--netns: %s", msg);
			return e == -ENOENT ? QA_EXIT_NONETNS : (e == -EPERM || e == -EACCES) ? TK_EXIT_NOPERM
											   : TK_EXIT_FAIL;
		}
	}
	switch (a.cmd) {
	case QA_SHOW: rc = cmd_show(&c); break;
	case QA_RESTORE: rc = cmd_restore(&c, false); break;
	case QA_STATUS: rc = cmd_restore(&c, true); break;
	default: rc = cmd_change(&c); break;
	}
	qa_routes_free(&c.routes);
	if (c.nl_open)
		qa_nl_close(&c.nl);
	return rc;
}
