/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Switch net.ipv4.tcp_congestion_control for bbrtrace's lifetime, in its own
 * network namespace or in named ones, and put it back however bbrtrace ends:
 * bbrtrace restores the values itself on a clean exit, and each switch is
 * announced to the guardian (guard.h) before it is made, so that a bbrtrace
 * killed by SIGKILL is undone too. A value someone else changed in the
 * meantime is left alone.
 */
#ifndef BBRTRACE_DEFAULTCC_H
#define BBRTRACE_DEFAULTCC_H

#include <stddef.h>

struct bt_defcc;
struct bt_guard;

/*
 * names: namespace names under /var/run/netns, or NULL for bbrtrace's own
 * namespace. Returns NULL with a reason in `why` when nothing was changed.
 */
struct bt_defcc *bt_defcc_switch(const char *const *names, int n, const char *cc,
				 struct bt_guard *guard, char *why, size_t len);
void bt_defcc_restore(struct bt_defcc *d);

#endif
