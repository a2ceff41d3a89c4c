/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guardian: a process that undoes bbrtrace's changes to the system if
 * bbrtrace dies without undoing them itself, even by SIGKILL.
 *
 * It is forked on first use, before the first change, and closes every file
 * descriptor it inherited. Each change is announced to it before it is made,
 * over a socket, with the descriptor the undo needs (SCM_RIGHTS). When
 * bbrtrace has undone everything itself it says so and the guardian exits
 * quietly; when the socket closes without that word, the guardian undoes the
 * announced changes, newest first:
 *   - a default congestion control switched in a network namespace is put
 *     back, unless someone else changed it in the meantime;
 *   - a struct_ops map registered without a BPF link (kernels before 6.4
 *     have no struct_ops links) is unregistered. With a link the kernel does
 *     this itself when bbrtrace's descriptors close.
 */
#ifndef BBRTRACE_GUARD_H
#define BBRTRACE_GUARD_H

#include <stddef.h>

struct bt_guard;

struct bt_guard *bt_guard_new(void);
/* announce: the default congestion control of namespace `ns_fd` goes from
 * `old` to `cc` (the guardian gets its own copy of ns_fd) */
int bt_guard_watch_cc(struct bt_guard *g, int ns_fd, const char *old, const char *cc);
/* announce: struct_ops map `map_fd` is about to be registered without a link */
int bt_guard_watch_struct_ops(struct bt_guard *g, int map_fd);
/* everything was undone by the caller: the guardian exits without acting */
void bt_guard_release(struct bt_guard *g);
/* the guardian's pid, 0 when it was never needed */
int bt_guard_pid(const struct bt_guard *g);

#endif
