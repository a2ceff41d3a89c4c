/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One quickack run: its context, and what the changing commands (onoff.c)
 * and restore/status (restore.c) share: routes found by their identity, a
 * planned batch of requests sent and read back, the journal opened with its
 * checks, and the records' writer.
 */
#ifndef QA_RUN_H
#define QA_RUN_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#include "journal.h"
#include "nl.h"
#include "quickack.h"

/* the largest request for one route, and the scratch buffer that holds one */
#define QA_REQ_MAX (QA_MSG_MAX + QA_REQ_SLACK)

struct ctx {
	struct qa_args *a;
	struct qa_nl nl;
	bool nl_open;
	struct qa_routes routes;
	const char *ns_tag;        /* the namespace as the journal names it */
	struct qaj_ident here;     /* this boot and namespace, read when the journal is opened */
	char ns_desc[300];         /* "network namespace 'x'" or "this network namespace" */
	char journal_path[PATH_MAX];
	uint32_t table;
	uint32_t oif;
	bool has_to_key;           /* --to: the one route the kernel uses */
	struct qa_route_key to_key;
	FILE *out_file;            /* stdout, or -o FILE */
	struct rec_writer *out;    /* opened at the first record */
	bool journal_scopes;       /* the journal holds socket scopes: their records may be written */
};

/* each returns 0 or the exit code, after one line on stderr */
int qa_open_nl(struct ctx *c, bool changes);
int qa_dump(struct ctx *c, struct qa_routes *out);
int qa_open_journal(struct ctx *c, struct qaj_file *jf, bool write, bool create);
/* TK_EXIT_NOPERM, after one line, when this process cannot change routes */
int qa_need_net_admin(void);

/* --table, and the device of -i/--dev or --all-dev, resolved in this namespace */
int qa_resolve_selection(struct ctx *c);
/* a numeric table the kernel has no route in does not exist for it */
int qa_check_table(struct ctx *c);
/* what the command line selects, as a filter on the dumped routes */
void qa_filter_init(const struct ctx *c, struct qa_filter *f);

/* " --netns NS --journal FILE" as given, for the commands a message suggests */
const char *qa_journal_opts(const struct ctx *c, char *buf, size_t len);

/* the records' writer, in -f's format (default: table on a terminal, JSON otherwise) */
struct rec_writer *qa_writer(struct ctx *c);
/* flush the records; rc, or TK_EXIT_FAIL when they could not be written */
int qa_finish_output(struct ctx *c, int rc);

double qa_now_s(void);

/* --- routes by identity: what the kernel replaces a route by ----------------------------- */

/* order[0..n) sorted by keys[order[i]], then by position */
void qa_sort_keys(const struct qa_route_key *keys, size_t *order, size_t n);

struct key_index {
	struct qa_route_key *keys;
	size_t *idx;
	size_t n;
};

int qa_index_build(struct key_index *ix, const struct qa_routes *rs);
/* the first route with key k, and how many share it; SIZE_MAX when none */
size_t qa_index_find(const struct key_index *ix, const struct qa_route_key *k, size_t *count);
void qa_index_free(struct key_index *ix);

/* --- a planned batch ---------------------------------------------------------------------- */

enum outcome { OUT_PENDING, OUT_APPLIED, OUT_BEFORE, OUT_GONE, OUT_OTHER };

/* what a request does to its route: replace its state (NLM_F_REPLACE, never
 * NLM_F_CREATE), make it where no route of its key is (a host route), or
 * delete it (restore, of a route quickack made) */
enum plan_kind { PLAN_REPLACE, PLAN_CREATE, PLAN_DELETE };

struct plan {
	enum plan_kind kind;
	struct qa_route *before;         /* the state to change (or, for restore, the current one); NULL to create */
	const struct qa_route *target;   /* restore: the saved state to put back; create: the route to make */
	uint64_t seq;                    /* journal record */
	const uint8_t *req;              /* the request: also the state expected afterwards */
	uint32_t req_len;
	enum outcome out;
	struct qa_ack ack;
};

/* the timings and counts of a batch, for -v */
struct batch_times {
	struct qa_batch_stats st;
	double apply_s, verify_s;
};

/* the route plan p is about: the state it puts in place (a restore's saved
 * state, a route to make), else the route it changes or deletes. A replace
 * in on/off has no target and a create no before, so either reading of an
 * on/off plan gives the same route. */
static inline const struct qa_route *qa_plan_route(const struct plan *p)
{
	return p->target ? p->target : p->before;
}

/* plan p as the netlink request that carries it out */
struct qa_req qa_plan_req(const struct plan *p);
/* requests for every plan entry that has none yet, into one arena (freed by the caller) */
int qa_build_requests(struct plan *p, size_t n, const struct qa_change *chg, uint8_t **arena_out);
/* whether route r holds exactly the state of request req (scratch: QA_REQ_MAX bytes) */
bool qa_holds(const struct qa_route *r, const uint8_t *req, uint32_t len, uint8_t *scratch);
/* send the planned requests; then read the routes back and classify each:
 * applied (a deleted route gone), as before (absent, for a create), gone
 * (a replaced route), or other */
int qa_apply_and_verify(struct ctx *c, struct plan *p, size_t n, struct batch_times *t);
/* one line per route not applied (what: "change", "restore") */
void qa_report_failures(const struct plan *p, size_t n, const char *what);
/* the kernel's answer: "Nexthop has invalid gateway (Invalid argument)" */
const char *qa_ack_text(const struct qa_ack *a, char *buf, size_t len);
/* the kernel's error text of p, NULL when it refused nothing */
const char *qa_plan_error(const struct plan *p, char *buf, size_t len);

int qa_cmd_change(struct ctx *c);
int qa_cmd_restore(struct ctx *c, bool status_only);

#endif
