// SPDX-License-Identifier: GPL-2.0-only
/*
 * Socket owners by inode: one walk of /proc/PID/fd matches each socket link
 * against every inode still asked for, and stops when none is left.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "owner.h"

static int parse_socket_link(const char *link, uint64_t *ino)
{
	char *end;

	if (strncmp(link, "socket:[", 8))
		return -1;
	*ino = strtoull(link + 8, &end, 10);
	return *end == ']' && end[1] == '\0' ? 0 : -1;
}

static void read_comm(const char *proc, const char *pid, char comm[16])
{
	char path[300];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s/comm", proc, pid);
	comm[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, comm, 15);
	close(fd);
	if (n <= 0)
		n = 0;
	comm[n] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
}

int ud_owner_resolve(const char *proc, struct ud_owner_query *q, unsigned int n)
{
	unsigned int left = 0, found = 0;
	struct dirent *pe;
	DIR *pd;

	for (unsigned int i = 0; i < n; i++) {
		q[i].pid = 0;
		q[i].comm[0] = '\0';
		left += q[i].ino != 0;
	}
	pd = opendir(proc);
	if (!pd)
		return -1;
	while (left && (pe = readdir(pd))) {
		char fdpath[300];
		struct dirent *fe;
		DIR *fdd;

		if (pe->d_name[0] < '1' || pe->d_name[0] > '9')
			continue;
		snprintf(fdpath, sizeof(fdpath), "%s/%s/fd", proc, pe->d_name);
		fdd = opendir(fdpath);
		if (!fdd)
			continue; /* gone, or not ours to read */
		while (left && (fe = readdir(fdd))) {
			char lpath[600], link[64];
			uint64_t ino;
			ssize_t len;

			if (fe->d_name[0] == '.')
				continue;
			snprintf(lpath, sizeof(lpath), "%s/%s", fdpath, fe->d_name);
			len = readlink(lpath, link, sizeof(link) - 1);
			if (len <= 0)
				continue;
			link[len] = '\0';
			if (parse_socket_link(link, &ino))
				continue;
			for (unsigned int i = 0; i < n; i++) {
				if (q[i].ino != ino || q[i].pid)
					continue;
				q[i].pid = (uint32_t)strtoul(pe->d_name, NULL, 10);
				read_comm(proc, pe->d_name, q[i].comm);
				found++;
				left--;
			}
		}
		closedir(fdd);
	}
	closedir(pd);
	return (int)found;
}
