// SPDX-License-Identifier: GPL-2.0-only
/*
 * The journal's records against this world: this run's boot and namespace
 * (inode and cookie) read, each record's world and devices judged, a route
 * remapped through devices made again, and the unfit records set aside.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "stale.h"

/* the kernel's id of this boot: a new UUID at every boot */
#define QA_BOOT_ID_PATH "/proc/sys/kernel/random/boot_id"
/* this process's network namespace (entered with --netns before this is read) */
#define QA_NETNS_PATH "/proc/self/ns/net"
#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71 /* include/uapi/asm-generic/socket.h, Linux 5.14 */
#endif

static void read_boot_id(char *out, size_t cap)
{
	FILE *f = fopen(QA_BOOT_ID_PATH, "r");
	size_t n;

	out[0] = '\0';
	if (!f)
		return;
	if (!fgets(out, (int)cap, f))
		out[0] = '\0';
	fclose(f);
	n = strcspn(out, "\n");
	out[n] = '\0';
	/* what the journal's boot= accepts: lowercase hex digits and dashes */
	if (strspn(out, "0123456789abcdef-") != n)
		out[0] = '\0';
}

void qa_ident_here(struct qaj_ident *id)
{
	struct stat st;
	socklen_t len = sizeof(id->netns_cookie);
	int fd;

	memset(id, 0, sizeof(*id));
	read_boot_id(id->boot, sizeof(id->boot));
	if (!stat(QA_NETNS_PATH, &st))
		id->netns_ino = (uint64_t)st.st_ino;
	/* the inode of a deleted namespace is given to the next one made; the
	 * cookie never is, within a boot */
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &id->netns_cookie, &len))
			id->netns_cookie = 0;
		close(fd);
	}
}

/* the journal's boot and namespace against this run's */
static enum qa_fit world_fit(const struct qaj *j, const struct qaj_ident *here, char *why, size_t len)
{
	const struct qaj_ident *was = &j->ident;

	why[0] = '\0';
	if (!j->has_ident) {
		snprintf(why, len,
			 "a format %u journal (an older quickack's) records no boot, network namespace or device names to check it by",
			 j->version);
		return QA_FIT_UNKNOWN;
	}
	if (was->boot[0] && here->boot[0] && strcmp(was->boot, here->boot)) {
		snprintf(why, len,
			 "another boot (saved in boot %s, this is boot %s): a reboot makes the routes anew, so there is nothing to restore",
			 was->boot, here->boot);
		return QA_FIT_STALE;
	}
	if ((was->netns_cookie && here->netns_cookie && was->netns_cookie != here->netns_cookie) ||
	    (was->netns_ino && here->netns_ino && was->netns_ino != here->netns_ino)) {
		snprintf(why, len,
			 "another network namespace, or this one deleted and made again (saved in the namespace of inode %" PRIu64
			 " cookie %" PRIu64 ", this is inode %" PRIu64 " cookie %" PRIu64 ")",
			 was->netns_ino, was->netns_cookie, here->netns_ino, here->netns_cookie);
		return QA_FIT_STALE;
	}
	return QA_FIT_CURRENT;
}

/* each device of e by its name and ifindex now: made again (moved), or gone */
static void devs_fit(struct ctx *c, const struct qaj_entry *e, struct qa_fit_of *f)
{
	for (uint32_t i = 0; i < e->ndevs && f->fit != QA_FIT_STALE; i++) {
		const struct qaj_dev *d = &e->devs[i];
		char now[QAJ_IFNAME_MAX], other[64] = "";
		const char *held = qa_nl_ifname_known(&c->nl, d->ifindex, now, sizeof(now));
		uint32_t idx;

		if (!d->name[0] || (held && !strcmp(held, d->name)))
			continue;
		if (held)
			snprintf(other, sizeof(other), "; ifindex %u is now %s", d->ifindex, held);
		idx = qa_nl_ifindex(&c->nl, d->name);
		if (!idx) {
			f->fit = QA_FIT_STALE;
			snprintf(f->why, sizeof(f->why), "device %s (ifindex %u) no longer exists%s", d->name, d->ifindex,
				 other);
		} else if (f->fit != QA_FIT_MOVED) {
			f->fit = QA_FIT_MOVED;
			snprintf(f->why, sizeof(f->why),
				 "device %s was ifindex %u, is now ifindex %u (made again%s): restore puts the route back through it by name",
				 d->name, d->ifindex, idx, other);
		}
	}
}

void qa_journal_fit(struct ctx *c, const struct qaj *j, struct qa_fit_of *fit)
{
	struct qa_fit_of w;

	memset(&w, 0, sizeof(w));
	w.fit = world_fit(j, &c->here, w.why, sizeof(w.why));
	w.world = w.fit == QA_FIT_STALE;
	for (size_t i = 0; i < j->n; i++) {
		fit[i] = w;
		if (w.fit == QA_FIT_CURRENT && j->e[i].has_devs)
			devs_fit(c, &j->e[i], &fit[i]);
	}
}

const char *qa_fit_name(enum qa_fit f)
{
	switch (f) {
	case QA_FIT_CURRENT: return "current";
	case QA_FIT_UNKNOWN: return "unknown";
	default: return "stale";
	}
}

int qa_entry_remap(struct ctx *c, const struct qaj_entry *e, struct qa_route *out)
{
	uint32_t *from = calloc(e->ndevs + 1, sizeof(*from)), *to = calloc(e->ndevs + 1, sizeof(*to));
	size_t n = 0;
	char err[160], name[160];
	int rc = from && to ? 0 : TK_EXIT_FAIL;

	for (uint32_t i = 0; !rc && i < e->ndevs; i++) {
		uint32_t idx = e->devs[i].name[0] ? qa_nl_ifindex(&c->nl, e->devs[i].name) : 0;

		if (idx && idx != e->devs[i].ifindex) {
			from[n] = e->devs[i].ifindex;
			to[n++] = idx;
		}
	}
	if (!rc && qa_route_remap_devs(&e->route, from, to, n, out, err, sizeof(err))) {
		elog("%s: cannot put the saved route through its devices' new ifindexes: %s",
		     qa_route_name(&e->route, name, sizeof(name)), err);
		rc = TK_EXIT_FAIL;
	}
	free(from);
	free(to);
	return rc;
}

size_t qa_journal_devs(struct ctx *c, const struct qa_route *r, struct qaj_dev *devs, size_t max)
{
	size_t n = qaj_route_devs(r, devs, max);

	for (size_t i = 0; i < n; i++)
		if (!qa_nl_ifname_known(&c->nl, devs[i].ifindex, devs[i].name, sizeof(devs[i].name)))
			devs[i].name[0] = '\0';
	return n;
}

int qa_set_aside(struct qaj_file *jf, const bool *aside, const struct qa_fit_of *fit, const char *what)
{
	char side[PATH_MAX + 64], msg[PATH_MAX + 300], name[160] = "", why[QA_WHY_MAX] = "";
	size_t n = 0;

	for (size_t i = 0; i < jf->j.n; i++) {
		if (!aside[i])
			continue;
		if (!n++) { /* the records change with the journal: named first */
			qa_route_name(&jf->j.e[i].route, name, sizeof(name));
			snprintf(why, sizeof(why), "%s", fit[i].why);
		}
	}
	for (size_t k = 0; k < jf->j.nsc; k++) {
		if (jf->j.sc[k].keep || n++)
			continue;
		snprintf(name, sizeof(name), "socket scope seq %" PRIu64, jf->j.sc[k].seq);
		snprintf(why, sizeof(why), "the journal is of another boot or network namespace");
	}
	if (qaj_set_aside(jf, aside, side, sizeof(side), msg, sizeof(msg))) {
		elog("%s; nothing was applied", msg);
		return TK_EXIT_JOURNAL;
	}
	if (n)
		wlog("%s: %zu journal record(s) that do not fit this boot, network namespace and devices set aside in %s; the first, %s: %s",
		     what, n, side, name, why);
	return 0;
}

int qa_set_aside_unfit(struct ctx *c, struct qaj_file *jf, const char *what)
{
	struct qaj *j = &jf->j;
	struct qa_fit_of *fit;
	bool *aside, any = false;
	char why[QA_WHY_MAX];
	int rc = 0;

	if (jf->fd < 0 || !j->has_header)
		return 0;
	fit = calloc(j->n ? j->n : 1, sizeof(*fit));
	aside = calloc(j->n ? j->n : 1, sizeof(*aside));
	if (!fit || !aside) {
		rc = TK_EXIT_FAIL;
		goto out;
	}
	qa_journal_fit(c, j, fit);
	for (size_t i = 0; i < j->n; i++)
		any |= aside[i] = fit[i].fit != QA_FIT_CURRENT;
	/* a header alone, of another world: the journal starts anew under this
	 * one; its socket scopes go aside with it (a pin of another boot is
	 * gone; restore --journal on the kept file unpins one that is not) */
	if (world_fit(j, &c->here, why, sizeof(why)) != QA_FIT_CURRENT) {
		for (size_t k = 0; k < j->nsc; k++)
			j->sc[k].keep = false;
		any = true;
	}
	if (any)
		rc = qa_set_aside(jf, aside, fit, what);
out:
	free(fit);
	free(aside);
	return rc;
}
