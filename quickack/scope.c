// SPDX-License-Identifier: GPL-2.0-only
/*
 * The socket scopes' commands: on --port and nodelay --dport attach a scope
 * (its journal record written and synced first, then the scope attached and
 * pinned: sockscope.c), status lists the scopes, restore unpins them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bpfutil.h"
#include "log.h"
#include "output.h"
#include "run.h"
#include "scope.h"
#include "sockscope.h"
#include "stale.h"

/* what the command line asks for, in this namespace; 0 or an exit code */
static int scope_build(struct ctx *c, struct qs_scope *s)
{
	char msg[PATH_MAX + 300], root[PATH_MAX];
	int rc;

	memset(s, 0, sizeof(*s));
	s->side = c->a->cmd == QA_NODELAY ? QS_SIDE_SEND : QS_SIDE_RECV;
	memcpy(s->ports, c->a->ports, sizeof(s->ports));
	s->nports = c->a->nports;
	s->netns_cookie = c->here.netns_cookie;
	if (c->a->cgroup) {
		/* as the kernel names it, so that a second identical scope is seen as one
		 * (a path that does not resolve is named as given, by the check below) */
		if (!realpath(c->a->cgroup, s->cgroup))
			snprintf(s->cgroup, sizeof(s->cgroup), "%s", c->a->cgroup);
		rc = qs_cgroup_root(root, sizeof(root), msg, sizeof(msg)) ?:
		     qs_cgroup_check(s->cgroup, &s->cgroup_id, msg, sizeof(msg));
	} else {
		rc = qs_cgroup_root(s->cgroup, sizeof(s->cgroup), msg, sizeof(msg));
	}
	if (rc)
		elog("%s; nothing was attached", msg);
	return rc;
}

static bool same_ports(const uint16_t *a, unsigned int na, const uint16_t *b, unsigned int nb)
{
	if (na != nb)
		return false;
	for (unsigned int i = 0; i < na; i++) {
		bool found = false;

		for (unsigned int k = 0; k < nb && !found; k++)
			found = a[i] == b[k];
		if (!found)
			return false;
	}
	return true;
}

/* a scope the journal holds, in force, that matches and sets what s would */
static const struct qaj_scope *twin_in_force(const struct qaj *j, const struct qs_scope *s, struct qs_counts *k)
{
	for (size_t i = 0; i < j->nsc; i++) {
		const struct qaj_scope *sc = &j->sc[i];

		if (sc->voided || !sc->keep || sc->side != s->side || strcmp(sc->cgroup, s->cgroup) ||
		    !same_ports(sc->ports, sc->nports, s->ports, s->nports))
			continue;
		if (qs_in_force(sc->pin, k))
			return sc;
	}
	return NULL;
}

/* the scope's record, appended and synced before anything is attached */
static int journal_scope(struct ctx *c, struct qaj_file *jf, const struct qs_scope *s, struct qaj_scope *rec)
{
	static char line[QAJ_SCOPE_LINE_MAX];
	char msg[PATH_MAX + 300];
	int n;

	memset(rec, 0, sizeof(*rec));
	rec->seq = jf->j.last_seq + 1;
	rec->time_s = (uint64_t)time(NULL);
	snprintf(rec->op, sizeof(rec->op), "on");
	rec->side = (uint8_t)s->side;
	memcpy(rec->ports, s->ports, sizeof(rec->ports));
	rec->nports = s->nports;
	snprintf(rec->cgroup, sizeof(rec->cgroup), "%s", s->cgroup);
	rec->cgroup_id = s->cgroup_id;
	snprintf(rec->pin, sizeof(rec->pin), "%s/%" PRIu64 "-%" PRIu64, QS_PIN_ROOT, c->here.netns_cookie, rec->seq);
	n = qaj_format_scope(line, sizeof(line), rec);
	if (n < 0) {
		elog("the scope's journal record is too long (the cgroup's path?); nothing was attached");
		return TK_EXIT_FAIL;
	}
	if (qaj_append(jf, c->ns_tag, &c->here, line, (size_t)n, msg, sizeof(msg))) {
		elog("%s; nothing was attached", msg);
		return TK_EXIT_JOURNAL;
	}
	return 0;
}

/* the record of a scope that could not be attached: voided, so that restore leaves it */
static void journal_void(struct ctx *c, struct qaj_file *jf, uint64_t seq)
{
	char line[64], msg[PATH_MAX + 300];
	int n = qaj_format_void(line, sizeof(line), seq);

	if (n < 0 || qaj_append(jf, c->ns_tag, &c->here, line, (size_t)n, msg, sizeof(msg)))
		wlog("the journal's record of the scope that was not attached stays (%s): status shows it not in force, restore drops it",
		     n < 0 ? "too long" : msg);
}

struct conn_tally {
	struct ctx *c;
	enum qs_side side;
	size_t set, refused;
};

static void conn_seen(const struct qs_conn *conn, void *arg)
{
	struct conn_tally *t = arg;

	if (conn->err)
		t->refused++;
	else
		t->set++;
	if (t->c->a->change_records)
		qa_out_scope_conn(qa_writer(t->c), t->side, conn);
}

/* "connections accepted on local port(s) 1935, every cgroup" */
static const char *scope_words(const struct qs_scope *s, char *buf, size_t len)
{
	char ports[QS_PORTS_MAX * 6 + 1], cg[PATH_MAX + 16];

	qs_ports_text(s->ports, s->nports, ports, sizeof(ports));
	if (s->cgroup_id)
		snprintf(cg, sizeof(cg), "cgroup %s", s->cgroup);
	else
		snprintf(cg, sizeof(cg), "every cgroup");
	snprintf(buf, len, "%s port(s) %s (%s)",
		 s->side == QS_SIDE_RECV ? "connections accepted on local" : "connections made to remote", ports, cg);
	return buf;
}

static void say_attached(const struct ctx *c, const struct qs_scope *s, const char *pin, const struct conn_tally *t)
{
	char what[PATH_MAX + 120], set[160];
	struct qs_counts k;

	qs_in_force(pin, &k);
	if (s->side == QS_SIDE_RECV && k.delack_us)
		snprintf(set, sizeof(set), "hold an ACK %.1f ms at most (the delayed-ACK timer's shortest)",
			 (double)k.delack_us / TK_USEC_PER_MSEC);
	else if (s->side == QS_SIDE_RECV)
		snprintf(set, sizeof(set), "hold an ACK 2 jiffies at most (the delayed-ACK timer's shortest)");
	else
		snprintf(set, sizeof(set), "send with TCP_NODELAY");
	ilog("%s in %s: %s now %s; pinned at %s until quickack restore; %zu existing connection(s) set, %zu refused",
	     c->a->cmd == QA_NODELAY ? "nodelay" : "on --port", c->ns_desc, scope_words(s, what, sizeof(what)), set,
	     pin, t->set, t->refused);
}

int qa_cmd_scope(struct ctx *c)
{
	struct qaj_file jf = { .fd = -1 };
	struct conn_tally t = { .c = c };
	const struct qaj_scope *twin;
	char why[256], what[PATH_MAX + 120], msg[PATH_MAX + 300];
	struct qaj_scope rec;
	struct qs_scope s;
	struct qs_counts k;
	bool iter_failed;
	int rc;

	if (bpfu_check_privileges(true, why, sizeof(why))) {
		elog("a socket scope needs %s; nothing was attached", why);
		return TK_EXIT_NOPERM;
	}
	qa_ident_here(&c->here);
	if ((rc = scope_build(c, &s)))
		return rc;
	t.side = s.side;
	if (c->a->dry_run) {
		ilog("dry run: would attach a scope: %s; nothing was attached", scope_words(&s, what, sizeof(what)));
		return 0;
	}
	/* the journal's route records are checked against the devices: netlink */
	if ((rc = qa_open_nl(c, false)) || (rc = qa_open_journal(c, &jf, true, true)) ||
	    (rc = qa_set_aside_unfit(c, &jf, c->a->cmd == QA_NODELAY ? "nodelay" : "on --port")))
		goto out;
	if ((twin = twin_in_force(&jf.j, &s, &k))) {
		ilog("%s: already in force (journal seq %" PRIu64 ", pinned at %s; %" PRIu64 " socket(s) set); nothing changed",
		     scope_words(&s, what, sizeof(what)), twin->seq, twin->pin, k.set_new + k.set_existing);
		goto out;
	}
	if ((rc = journal_scope(c, &jf, &s, &rec)))
		goto out;
	bpfu_setup_libbpf();
	rc = qs_attach(&s, rec.pin, conn_seen, &t, &iter_failed, msg, sizeof(msg));
	if (rc) {
		elog("%s; nothing was attached", msg);
		journal_void(c, &jf, rec.seq);
		goto out;
	}
	if (iter_failed)
		wlog("%s", msg);
	say_attached(c, &s, rec.pin, &t);
out:
	qaj_close(&jf);
	return qa_finish_output(c, rc);
}

void qa_scopes_status(struct ctx *c, const struct qaj *j)
{
	size_t live = 0, n = 0;
	struct qs_counts k;

	for (size_t i = 0; i < j->nsc; i++) {
		const struct qaj_scope *sc = &j->sc[i];
		bool in_force;

		if (sc->voided)
			continue;
		in_force = qs_in_force(sc->pin, &k);
		live += in_force;
		n++;
		qa_out_scope(qa_writer(c), sc, in_force, &k);
	}
	if (n)
		ilog("journal %s: %zu socket scope(s), %zu in force; restore unpins them", c->journal_path, n, live);
}

int qa_scopes_restore(struct ctx *c, struct qaj *j)
{
	size_t undone = 0, failed = 0;
	char msg[PATH_MAX + 300];
	struct qs_counts k;

	for (size_t i = 0; i < j->nsc; i++) {
		struct qaj_scope *sc = &j->sc[i];

		if (sc->voided || !sc->keep) {
			sc->keep = false; /* never attached: nothing to undo */
			continue;
		}
		if (c->a->dry_run) {
			ilog("dry run: restore would unpin the socket scope at %s (%s)", sc->pin,
			     qs_in_force(sc->pin, &k) ? "in force" : "not in force");
			continue;
		}
		if (qs_detach(sc->pin, msg, sizeof(msg))) {
			elog("%s; the scope stays in the journal", msg);
			failed++;
			continue;
		}
		sc->keep = false;
		undone++;
	}
	if (failed)
		elog("restore: %zu socket scope(s) detached and unpinned, %zu not: they stay in the journal", undone, failed);
	else if (undone)
		ilog("restore: %zu socket scope(s) detached and unpinned", undone);
	return failed ? TK_EXIT_FAIL : 0;
}
