/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Logging with levels. Every message is one line prefixed with the program
 * name: "bbrtrace: failed to load BPF object: Operation not permitted".
 *   elog  errors, always shown
 *   wlog  warnings, always shown
 *   log   normal progress (hidden with --quiet)
 *   vlog  details (-v)
 *   dlog  debugging, including libbpf's own output (-vv)
 */
#ifndef TK_LOG_H
#define TK_LOG_H

#include "common.h"

enum log_level { LOG_QUIET = -1, LOG_NORMAL = 0, LOG_VERBOSE = 1, LOG_DEBUG = 2 };

void log_init(const char *prog);
void log_set_level(int level);
int log_get_level(void);
const char *log_prog(void);

void elog(const char *fmt, ...) TK_PRINTF(1, 2);
void wlog(const char *fmt, ...) TK_PRINTF(1, 2);
void ilog(const char *fmt, ...) TK_PRINTF(1, 2);
void vlog(const char *fmt, ...) TK_PRINTF(1, 2);
void dlog(const char *fmt, ...) TK_PRINTF(1, 2);

/* a message into the caller's buffer (for a caller that reports it later);
 * nothing when buf is NULL or len 0 */
void log_fmt(char *buf, size_t len, const char *fmt, ...) TK_PRINTF(3, 4);

#endif
