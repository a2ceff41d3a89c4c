// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "bbrtrace/defaultcc.h"
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
	int pipe_wr;
	pid_t guardian;
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

/* restore every namespace whose value is still ours; used by both processes */
static void restore_all(struct bt_defcc *d)
{
	for (int i = 0; i < d->n; i++) {
		struct ns_cc *ns = &d->ns[i];
		char now[32];

		if (!ns->changed || enter(ns->fd))
			continue;
		if (read_cc(now, sizeof(now)) == 0 && !strcmp(now, d->cc))
			write_cc(ns->old);
		ns->changed = false;
	}
	enter(d->self_fd);
}

static void guardian_main(struct bt_defcc *d, int rd)
{
	char word = 0;

	/* outlive bbrtrace: ignore the terminal's signals, be our own group */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	setpgid(0, 0);
	prctl(PR_SET_NAME, "bbrtrace-guard");
	for (;;) {
		ssize_t n = read(rd, &word, 1);

		if (n == 1 && word == 'D')
			_exit(0);     /* bbrtrace restored everything itself */
		if (n == 0 || (n < 0 && errno != EINTR))
			break;        /* bbrtrace is gone */
	}
	restore_all(d);
	_exit(0);
}

static const char *ns_label(const struct ns_cc *ns)
{
	return ns->name[0] ? ns->name : "this namespace";
}

struct bt_defcc *bt_defcc_switch(const char *const *names, int n, const char *cc, char *why,
				 size_t len)
{
	struct bt_defcc *d = calloc(1, sizeof(*d));
	int pfd[2];

	if (!d) {
		snprintf(why, len, "out of memory");
		return NULL;
	}
	snprintf(d->cc, sizeof(d->cc), "%s", cc);
	d->self_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (d->self_fd < 0) {
		snprintf(why, len, "cannot open /proc/self/ns/net: %s", strerror(errno));
		free(d);
		return NULL;
	}
	if (n > MAX_NS) {
		snprintf(why, len, "at most %d namespaces", MAX_NS);
		goto fail;
	}
	d->n = names ? n : 1;
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
				goto fail;
			}
		} else {
			ns->fd = dup(d->self_fd);
		}
		if (enter(ns->fd) || read_cc(ns->old, sizeof(ns->old))) {
			snprintf(why, len, "cannot read %s in %s: %s", SYSCTL, ns_label(ns),
				 strerror(errno));
			enter(d->self_fd);
			goto fail;
		}
		enter(d->self_fd);
	}
	if (pipe2(pfd, O_CLOEXEC)) {
		snprintf(why, len, "pipe: %s", strerror(errno));
		goto fail;
	}
	d->guardian = fork();
	if (d->guardian < 0) {
		snprintf(why, len, "fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		goto fail;
	}
	if (d->guardian == 0) {
		close(pfd[1]);
		/* the guardian must not hold bbrtrace's BPF objects open */
		for (int fd = 3; fd < 1024; fd++) {
			bool keep = fd == pfd[0] || fd == d->self_fd;

			for (int i = 0; i < d->n; i++)
				keep |= fd == d->ns[i].fd;
			if (!keep)
				close(fd);
		}
		for (int i = 0; i < d->n; i++)
			d->ns[i].changed = true; /* restore_all checks the value first */
		guardian_main(d, pfd[0]);
	}
	close(pfd[0]);
	d->pipe_wr = pfd[1];
	for (int i = 0; i < d->n; i++) {
		struct ns_cc *ns = &d->ns[i];

		if (enter(ns->fd) || write_cc(cc)) {
			snprintf(why, len, "cannot set %s=%s in %s: %s", SYSCTL, cc, ns_label(ns),
				 strerror(errno));
			enter(d->self_fd);
			bt_defcc_restore(d);
			return NULL;
		}
		ns->changed = true;
		enter(d->self_fd);
		ilog("default congestion control in %s: %s -> %s (restored at exit)", ns_label(ns),
		     ns->old, cc);
	}
	return d;
fail:
	for (int i = 0; i < d->n; i++)
		if (d->ns[i].fd > 0)
			close(d->ns[i].fd);
	close(d->self_fd);
	free(d);
	return NULL;
}

void bt_defcc_restore(struct bt_defcc *d)
{
	if (!d)
		return;
	restore_all(d);
	if (d->guardian > 0) {
		char word = 'D';

		if (write(d->pipe_wr, &word, 1) != 1)
			wlog("cannot signal the guardian process: %s", strerror(errno));
		close(d->pipe_wr);
		waitpid(d->guardian, NULL, 0);
	}
	for (int i = 0; i < d->n; i++)
		close(d->ns[i].fd);
	close(d->self_fd);
	free(d);
}
