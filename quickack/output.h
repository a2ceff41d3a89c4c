/* SPDX-License-Identifier: GPL-2.0-only */
/* quickack's record types, each written only through lib/record.h */
#ifndef QA_OUTPUT_H
#define QA_OUTPUT_H

#include "journal.h"
#include "nl.h"
#include "quickack.h"
#include "record.h"
#include "route.h"
#include "sockscope.h"

/* CSV: the record types command cmd writes, declared for the file's one
 * header; with scopes, the socket scopes' too */
void qa_out_declare(struct rec_writer *w, enum qa_cmd cmd, bool scopes);
/* show: one "route" record per route */
int qa_out_route(struct rec_writer *w, struct qa_nl *nl, const struct qa_route *r);

/* a change and its outcome: "change" records */
int qa_out_change(struct rec_writer *w, struct qa_nl *nl, const char *op, const struct qa_route *r,
		  const char *change, const char *result, const char *error);

/* --dry-run: the request that would be sent, as a "netlink_request" record */
int qa_out_request(struct rec_writer *w, struct qa_nl *nl, const char *op, const struct qa_route *r,
		   const char *change, const struct qa_req *rq);

/* status: one "saved_route" record per route the journal holds (its oldest
 * record e, of `records`); saved: "route", or "absent" for a route quickack
 * made (restore deletes it); live: same, differs or gone; identity:
 * current, stale or unknown, and why in words */
int qa_out_saved(struct rec_writer *w, struct qa_nl *nl, const struct qaj_entry *e, unsigned int records,
		 const char *live, const char *identity, const char *why);

/* a connection a new socket scope found and set: a "scope_conn" record (output_scope.c) */
int qa_out_scope_conn(struct rec_writer *w, enum qs_side side, const struct qs_conn *conn);
/* status: one "scope" record per socket scope the journal holds */
int qa_out_scope(struct rec_writer *w, const struct qaj_scope *sc, bool in_force, const struct qs_counts *k);
/* the scopes' record types command cmd writes, for the CSV header (only
 * when a scope is asked for or the journal holds one: output_scope.c) */
void qa_out_declare_scopes(struct rec_writer *w, enum qa_cmd cmd);

/* "dev d0" / "dev d0,d1": the devices of r's nexthops */
const char *qa_route_devs(struct qa_nl *nl, const struct qa_route *r, char *buf, size_t cap);
/* the gateways of r's nexthops, "" when none */
const char *qa_route_gws(const struct qa_route *r, char *buf, size_t cap);
/* "mtu=9000 initcwnd=20 quickack=1 congctl=reno lock=rto_min": set metrics */
const char *qa_route_metrics_str(const struct qa_route *r, char *buf, size_t cap);
/* every attribute of a route, as ip route would name them */
const char *qa_route_describe(struct qa_nl *nl, const struct qa_route *r, char *buf, size_t cap);

#endif
