// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guardian and bbrtrace's end of its socket: each change announced with
 * the descriptor its undo needs (SCM_RIGHTS) and acknowledged, and undone,
 * newest first, when the socket closes before bbrtrace stands it down.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <bpf/bpf.h>

#include "bbrtrace/guard.h"
#include "common.h"
#include "log.h"

#define SYSCTL_CC "/proc/sys/net/ipv4/tcp_congestion_control"
#define GUARD_MAX_UNDO 32 /* --set-default-in takes at most 16 namespaces, plus one map */
#define GUARD_SOCK_FD 3   /* the guardian's end of the socket, after it closed the rest */

enum guard_kind { GUARD_CC = 1, GUARD_STRUCT_OPS, GUARD_RELEASE };

struct guard_msg {
	uint8_t kind;
	char old[32]; /* GUARD_CC: the value to put back */
	char cc[32];  /* GUARD_CC: the value bbrtrace set */
};

struct undo {
	struct guard_msg msg;
	int fd; /* the namespace, or the struct_ops map */
};

struct bt_guard {
	int sock;
	pid_t pid;
};

/* --- the guardian's side ---------------------------------------------------------- */

static int read_sysctl(char *buf, size_t len)
{
	FILE *f = fopen(SYSCTL_CC, "r");
	bool ok;

	if (!f)
		return -1;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	buf[ok ? strcspn(buf, "\n") : 0] = '\0';
	return ok ? 0 : -1;
}

static int write_sysctl(const char *value)
{
	int fd = open(SYSCTL_CC, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, value, strlen(value));
	close(fd);
	return n == (ssize_t)strlen(value) ? 0 : -1;
}

static void undo_one(const struct undo *u)
{
	char now[32];
	uint32_t zero = 0;

	switch (u->msg.kind) {
	case GUARD_CC:
		/* a value someone else set since is theirs: leave it */
		if (setns(u->fd, CLONE_NEWNET) == 0 && read_sysctl(now, sizeof(now)) == 0 &&
		    !strcmp(now, u->msg.cc))
			write_sysctl(u->msg.old);
		break;
	case GUARD_STRUCT_OPS:
		/* unregisters a struct_ops map registered without a link; fails
		 * harmlessly when it was never registered */
		bpf_map_delete_elem(u->fd, &zero);
		break;
	}
}

/* receives one message and the descriptor that came with it (-1 if none) */
static ssize_t recv_msg(int sock, struct guard_msg *m, int *fd)
{
	char ctrl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { m, sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctrl,
			     .msg_controllen = sizeof(ctrl) };
	struct cmsghdr *c;
	ssize_t n;

	*fd = -1;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL;
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
		memcpy(fd, CMSG_DATA(c), sizeof(int));
	return n;
}

static void guardian_main(int sock)
{
	struct undo undo[GUARD_MAX_UNDO];
	int n = 0;

	/* outlive bbrtrace: ignore the terminal's signals, be our own group */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	setpgid(0, 0);
	prctl(PR_SET_NAME, "bbrtrace-guard");
	for (;;) {
		struct guard_msg m;
		int fd;
		ssize_t got = recv_msg(sock, &m, &fd);
		char ack = 1;

		if (got <= 0)
			break; /* bbrtrace is gone */
		if (got == sizeof(m) && m.kind == GUARD_RELEASE)
			_exit(0);
		if (got != sizeof(m) || fd < 0 || n == GUARD_MAX_UNDO) {
			ack = 0;
			if (fd >= 0)
				close(fd);
		} else {
			undo[n].msg = m;
			undo[n].fd = fd;
			n++;
		}
		if (write(sock, &ack, 1) != 1)
			break;
	}
	while (n-- > 0)
		undo_one(&undo[n]);
	_exit(0);
}

/* --- bbrtrace's side ----------------------------------------------------------------- */

static int start(struct bt_guard *g)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	g->pid = fork();
	if (g->pid < 0) {
		int err = -errno;

		close(sv[0]);
		close(sv[1]);
		g->pid = 0;
		return err;
	}
	if (g->pid == 0) {
		/* hold nothing of bbrtrace's: no BPF object may outlive it here */
		if (dup2(sv[1], GUARD_SOCK_FD) != GUARD_SOCK_FD)
			_exit(1);
		close_range(GUARD_SOCK_FD + 1, ~0U, 0);
		guardian_main(GUARD_SOCK_FD);
	}
	close(sv[1]);
	g->sock = sv[0];
	return 0;
}

struct bt_guard *bt_guard_new(void)
{
	struct bt_guard *g = calloc(1, sizeof(*g));

	if (g)
		g->sock = -1;
	return g;
}

/* sends one announcement with its descriptor and waits for the guardian's ack */
static int announce(struct bt_guard *g, const struct guard_msg *m, int fd)
{
	char ctrl[CMSG_SPACE(sizeof(int))] = {};
	struct iovec iov = { (void *)m, sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	char ack = 0;
	int err;

	if (!g->pid && (err = start(g)))
		return err;
	if (fd >= 0) {
		struct cmsghdr *c;

		mh.msg_control = ctrl;
		mh.msg_controllen = sizeof(ctrl);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	if (sendmsg(g->sock, &mh, MSG_NOSIGNAL) != (ssize_t)sizeof(*m))
		return -errno;
	if (read(g->sock, &ack, 1) != 1)
		return -EPIPE;
	return ack ? 0 : -ENOSPC;
}

int bt_guard_watch_cc(struct bt_guard *g, int ns_fd, const char *old, const char *cc)
{
	struct guard_msg m = { .kind = GUARD_CC };

	snprintf(m.old, sizeof(m.old), "%s", old);
	snprintf(m.cc, sizeof(m.cc), "%s", cc);
	return announce(g, &m, ns_fd);
}

int bt_guard_watch_struct_ops(struct bt_guard *g, int map_fd)
{
	struct guard_msg m = { .kind = GUARD_STRUCT_OPS };

	return announce(g, &m, map_fd);
}

int bt_guard_pid(const struct bt_guard *g)
{
	return g ? g->pid : 0;
}

void bt_guard_release(struct bt_guard *g)
{
	if (!g)
		return;
	if (g->pid > 0) {
		struct guard_msg m = { .kind = GUARD_RELEASE };

		if (send(g->sock, &m, sizeof(m), MSG_NOSIGNAL) != (ssize_t)sizeof(m))
			wlog("cannot tell the guardian process to stand down: %s", strerror(errno));
		close(g->sock);
		waitpid(g->pid, NULL, 0);
	}
	free(g);
}
