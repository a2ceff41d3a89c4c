/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A socket scope in the kernel: bpf/quickack_sock.bpf.c loaded for one
 * scope, attached to a cgroup through a BPF link, and pinned in bpffs so
 * that it stays in force after quickack exits, until restore unpins it.
 * The journal's side of a scope is journal.h's; the commands are scope.c's.
 */
#ifndef QA_SOCKSCOPE_H
#define QA_SOCKSCOPE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/contract/quickack_sock.h"

/* where a scope's link and counters are pinned: QS_PIN_ROOT/NETNSCOOKIE-SEQ/{link,counters} */
#define QS_BPFFS "/sys/fs/bpf"
#define QS_PIN_ROOT QS_BPFFS "/bbrkit/quickack"
/* where the cgroup v2 hierarchy usually is; a hybrid system mounts it elsewhere
 * (/sys/fs/cgroup/unified) */
#define QS_CGROUP_ROOT "/sys/fs/cgroup"

struct qs_scope {
	enum qs_side side;
	uint16_t ports[QS_PORTS_MAX];  /* host order */
	unsigned int nports;
	char cgroup[PATH_MAX];         /* a cgroup v2 directory */
	uint64_t cgroup_id;            /* its id (the directory's inode), 0 for the root's "any" */
	uint64_t netns_cookie;         /* the namespace's sockets only; 0: any */
};

/* what a scope has done: bpf/contract/quickack_sock.h's counters */
struct qs_counts {
	uint64_t set_new, set_existing, failed, delack_us;
};

/* each connection that existed before the scope, as the iterator set it */
typedef void (*qs_conn_fn)(const struct qs_conn *conn, void *arg);

/* the cgroup v2 hierarchy's root (a scope without --cgroup: every socket),
 * into out; 0, or TK_EXIT_NOTSUP after one line in msg */
int qs_cgroup_root(char *out, size_t len, char *msg, size_t msglen);

/*
 * The cgroup v2 directory path: its id into *id, or an exit code
 * (TK_EXIT_NOTSUP: no cgroup v2 there; TK_EXIT_DATA: no such directory)
 * after one line in msg.
 */
int qs_cgroup_check(const char *path, uint64_t *id, char *msg, size_t len);

/*
 * Loads the programs for scope s, attaches the sock_ops program to its
 * cgroup and pins the link and the counters in pin_dir (made here), then
 * sets the option on the connections that exist already, each passed to fn.
 * 0, or an exit code after one line in msg; on failure nothing stays
 * attached or pinned. A failure of the iterator alone leaves the scope in
 * force and says so in msg with 0 returned and *iter_failed set.
 */
int qs_attach(const struct qs_scope *s, const char *pin_dir, qs_conn_fn fn, void *arg, bool *iter_failed,
	      char *msg, size_t len);

/* whether pin_dir holds a scope in force (its link pinned), and its counts */
bool qs_in_force(const char *pin_dir, struct qs_counts *counts);

/* unpins pin_dir's link (the program detaches) and counters, and removes
 * it; 0 when done or when nothing was pinned there, else -1 with msg */
int qs_detach(const char *pin_dir, char *msg, size_t len);

/* "1935,8080" */
void qs_ports_text(const uint16_t *ports, unsigned int nports, char *buf, size_t len);
/* "recv" / "send" */
const char *qs_side_name(enum qs_side side);

#endif
