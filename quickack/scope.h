/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The socket scopes' commands (scope.c): attach one (on --port, nodelay
 * --dport), and their part of status and restore.
 */
#ifndef QA_SCOPE_H
#define QA_SCOPE_H

#include "journal.h"
#include "run.h"

/* on --port, nodelay --dport: 0 or the exit code, after one line */
int qa_cmd_scope(struct ctx *c);
/* status: a 'scope' record for each scope the journal holds, and one line */
void qa_scopes_status(struct ctx *c, const struct qaj *j);
/* restore: unpin each scope the journal holds, clearing keep on those undone
 * (--dry-run: say what would be); 0 or TK_EXIT_FAIL after one line */
int qa_scopes_restore(struct ctx *c, struct qaj *j);

#endif
