/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which process holds a socket, by its inode: one pass over /proc/PID/fd
 * resolves every inode asked for. Used for sockets that nobody has read yet
 * (the kernel side learns the owner at the first read), and to tell a socket
 * that was closed from one that is stuck.
 */
#ifndef UD_OWNER_H
#define UD_OWNER_H

#include <stdint.h>

struct ud_owner_query {
	uint64_t ino;     /* in */
	uint32_t pid;     /* out: 0 when no process holds it */
	char comm[16];    /* out */
};

/*
 * Fills pid and comm for each query; proc is the procfs root ("/proc").
 * Returns the number of inodes found, or -1 when proc cannot be read.
 */
int ud_owner_resolve(const char *proc, struct ud_owner_query *q, unsigned int n);

#endif
