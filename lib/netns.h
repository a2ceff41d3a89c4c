/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Entering a named network namespace, the way `ip netns exec NAME` finds it:
 * the bind mount /var/run/netns/NAME (iproute2's NETNS_RUN_DIR).
 *
 * Only the calling thread moves (setns(2)); sockets opened before the call
 * stay in the namespace they were opened in, so enter first, then open
 * netlink or other sockets. Failures come back as -errno with one line of
 * text for the user, e.g.
 *   network namespace 'rp-recv' does not exist (no /var/run/netns/rp-recv)
 *   entering network namespace 'rp-recv' needs CAP_SYS_ADMIN
 */
#ifndef TK_NETNS_H
#define TK_NETNS_H

#include <stddef.h>
#include <stdint.h>

#define NETNS_RUN_DIR "/var/run/netns"

/*
 * 0 when NAME can name a namespace under NETNS_RUN_DIR (what `ip netns add`
 * accepts: non-empty, no '/', not "." or "..", shorter than NAME_MAX);
 * otherwise -EINVAL with the reason in msg.
 */
int netns_check_name(const char *name, char *msg, size_t msglen);

/* open NETNS_RUN_DIR/NAME read-only; returns an fd or -errno (with msg) */
int netns_open(const char *name, char *msg, size_t msglen);

/*
 * Move the calling thread into the network namespace NAME. Returns 0, or
 * -EINVAL (bad name), -ENOENT (no such namespace), -EPERM (no
 * CAP_SYS_ADMIN), -ENOTSUP (the file is not a network namespace) or another
 * -errno, each with one line in msg.
 */
int netns_enter(const char *name, char *msg, size_t msglen);

/* setns() into an fd from netns_open() or netns_save(); 0 or -errno */
int netns_enter_fd(int fd);

/* an fd for the caller's current network namespace, to come back with netns_enter_fd() */
int netns_save(void);

/* the inode number that identifies the current network namespace; 0 or -errno */
int netns_current_inode(uint64_t *ino);

#endif
