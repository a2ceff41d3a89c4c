/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bpf_stats per BPF program, as every tool reports them (--stats): one
 * "prog_stats" record a program, in the tool's output and as a table on
 * stderr, so that a program's per-event cost is read the same way
 * whichever tool ran it.
 */
#ifndef TK_PROGSTATS_H
#define TK_PROGSTATS_H

#include "record.h"

extern const struct rec_schema tk_prog_stats_schema;

/*
 * The program of prog_fd, named name, into w (when not NULL) and into err_w
 * (when not NULL: the table on stderr); a program the kernel never ran, or
 * whose statistics cannot be read, is skipped. -1 when w's write failed.
 */
int tk_prog_stats_write(struct rec_writer *w, struct rec_writer *err_w, const char *name, int prog_fd);

#endif
