// SPDX-License-Identifier: GPL-2.0-only
/*
 * Named network namespaces: a name checked as a plain name, opened under
 * NETNS_RUN_DIR and entered with setns(2), each failure worded for the user;
 * and the current namespace saved, or named by its inode.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "netns.h"


static void msgf(char *msg, size_t len, const char *fmt, const char *name, const char *extra)
{
	if (msg && len)
		snprintf(msg, len, fmt, name, extra);
}

int netns_check_name(const char *name, char *msg, size_t msglen)
{
	if (!name || !*name) {
		msgf(msg, msglen, "network namespace name '%s' is empty%s", "", "");
		return -EINVAL;
	}
	if (strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..")) {
		msgf(msg, msglen, "network namespace name '%s' is not a plain name%s", name,
		     " (no '/', not '.' or '..')");
		return -EINVAL;
	}
	if (strlen(name) >= NAME_MAX) {
		msgf(msg, msglen, "network namespace name '%.40s...' is too long%s", name, "");
		return -EINVAL;
	}
	return 0;
}

int netns_open(const char *name, char *msg, size_t msglen)
{
	char path[PATH_MAX];
	int fd, err;

	err = netns_check_name(name, msg, msglen);
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/%s", NETNS_RUN_DIR, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	err = -errno;
	if (err == -ENOENT)
		msgf(msg, msglen, "network namespace '%s' does not exist (no %s)", name, path);
	else if (err == -EACCES || err == -EPERM)
		msgf(msg, msglen, "network namespace '%s': cannot open %s: permission denied", name,
		     path);
	else if (msg && msglen)
		snprintf(msg, msglen, "network namespace '%s': cannot open %s: %s", name, path,
			 strerror(-err));
	return err;
}

int netns_enter_fd(int fd)
{
	return setns(fd, CLONE_NEWNET) ? -errno : 0;
}

int netns_enter(const char *name, char *msg, size_t msglen)
{
	int fd = netns_open(name, msg, msglen);
	int err;

	if (fd < 0)
		return fd;
	err = netns_enter_fd(fd);
	close(fd);
	if (!err)
		return 0;
	if (err == -EPERM)
		msgf(msg, msglen, "entering network namespace '%s' needs CAP_SYS_ADMIN%s", name, "");
	else if (err == -EINVAL) {
		/* setns() says EINVAL when the file is not a network namespace */
		msgf(msg, msglen, "%s/%s is not a network namespace", NETNS_RUN_DIR, name);
		err = -ENOTSUP;
	} else if (msg && msglen)
		snprintf(msg, msglen, "entering network namespace '%s': %s", name, strerror(-err));
	return err;
}

int netns_save(void)
{
	int fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int netns_current_inode(uint64_t *ino)
{
	struct stat st;

	if (stat("/proc/self/ns/net", &st))
		return -errno;
	*ino = (uint64_t)st.st_ino;
	return 0;
}
