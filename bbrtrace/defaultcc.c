// SPDX-License-Identifier: GPL-2.0-only
/*
 * The default congestion control switch: each namespace's value read first,
 * then each switch announced to the guardian before it is written, and put
 * back at exit only where the value is still the one bbrtrace set.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bbrtrace/defaultcc.h"
#include "bbrtrace/guard.h"
#include "log.h"

#define SYSCTL "/proc/sys/net/ipv4/tcp_congestion_control"
#define MAX_NS 16

struct ns_cc {
	char name[64];   /* "" for our own namespace */
	int fd;          /* the namespace */
	char old[32];
	bool changed;
};

struct bt_defcc {
	struct ns_cc ns[MAX_NS];
	int n;
	int self_fd;     /* our own namespace, to come back to */
	char cc[32];
};

static int enter(int fd)
{
	return setns(fd, CLONE_NEWNET);
}

static int read_cc(char *buf, size_t len)
{
	FILE *f = fopen(SYSCTL, "r");

	if (!f)
		return -1;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int write_cc(const char *cc)
{
	int fd = open(SYSCTL, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, cc, strlen(cc));
	close(fd);
	return n == (ssize_t)strlen(cc) ? 0 : -1;
}

static const char *ns_label(const struct ns_cc *ns)
{
	return ns->name[0] ? ns->name : "this namespace";
}

/* opens each namespace and reads its current value; nothing changes yet */
static int open_namespaces(struct bt_defcc *d, const char *const *names, char *why, size_t len)
{
	for (int i = 0; i < d->n; i++) {
		struct ns_cc *ns = &d->ns[i];

		if (names) {
			char path[128];

			snprintf(ns->name, sizeof(ns->name), "%s", names[i]);
			snprintf(path, sizeof(path), "/var/run/netns/%s", names[i]);
			ns->fd = open(path, O_RDONLY | O_CLOEXEC);
			if (ns->fd < 0) {
				snprintf(why, len, "network namespace '%s' does not exist (%s)",
					 names[i], strerror(errno));
				return -1;
			}
		} else {
			ns->fd = fcntl(d->self_fd, F_DUPFD_CLOEXEC, 0);
		}
		if (enter(ns->fd) || read_cc(ns->old, sizeof(ns->old))) {
			snprintf(why, len, "cannot read %s in %s: %s", SYSCTL, ns_label(ns),
				 strerror(errno));
			enter(d->self_fd);
			return -1;
		}
		enter(d->self_fd);
	}
	return 0;
}

/* announces each switch to the guardian, then makes it */
static int switch_namespaces(struct bt_defcc *d, struct bt_guard *guard, char *why, size_t len)
{
	for (int i = 0; i < d->n; i++) {
		struct ns_cc *ns = &d->ns[i];
		int err = bt_guard_watch_cc(guard, ns->fd, ns->old, d->cc);

		if (err) {
			snprintf(why, len, "cannot start the guardian process that restores %s: %s",
				 SYSCTL, strerror(-err));
			return -1;
		}
		if (enter(ns->fd) || write_cc(d->cc)) {
			snprintf(why, len, "cannot set %s=%s in %s: %s", SYSCTL, d->cc, ns_label(ns),
				 strerror(errno));
			enter(d->self_fd);
			return -1;
		}
		ns->changed = true;
		enter(d->self_fd);
		ilog("default congestion control in %s: %s -> %s (restored at exit)", ns_label(ns),
		     ns->old, d->cc);
	}
	return 0;
}

struct bt_defcc *bt_defcc_switch(const char *const *names, int n, const char *cc,
				 struct bt_guard *guard, char *why, size_t len)
{
	struct bt_defcc *d = calloc(1, sizeof(*d));

	if (!d) {
		snprintf(why, len, "out of memory");
		return NULL;
	}
	snprintf(d->cc, sizeof(d->cc), "%s", cc);
	for (int i = 0; i < MAX_NS; i++)
		d->ns[i].fd = -1;
	d->self_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (d->self_fd < 0) {
		snprintf(why, len, "cannot open /proc/self/ns/net: %s", strerror(errno));
		free(d);
		return NULL;
	}
	if (n > MAX_NS) {
		snprintf(why, len, "at most %d namespaces", MAX_NS);
		bt_defcc_restore(d);
		return NULL;
	}
	d->n = names ? n : 1;
	if (open_namespaces(d, names, why, len) || switch_namespaces(d, guard, why, len)) {
		bt_defcc_restore(d);
		return NULL;
	}
	return d;
}

/* puts back every value that is still ours, and frees d */
void bt_defcc_restore(struct bt_defcc *d)
{
	if (!d)
		return;
	for (int i = 0; i < d->n; i++) {
		struct ns_cc *ns = &d->ns[i];
		char now[32];

		if (ns->changed && enter(ns->fd) == 0 && read_cc(now, sizeof(now)) == 0 &&
		    !strcmp(now, d->cc))
			write_cc(ns->old);
	}
	enter(d->self_fd);
	for (int i = 0; i < d->n; i++)
		if (d->ns[i].fd >= 0)
			close(d->ns[i].fd);
	close(d->self_fd);
	free(d);
}
