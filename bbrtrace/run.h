/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One tracing run: the output opened, the backend, the detector and the
 * /metrics server started, the poll loop that feeds every event through the
 * detector, and the teardown, newest first.
 */
#ifndef BBRTRACE_RUN_H
#define BBRTRACE_RUN_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "bbrtrace/args.h"
#include "record.h"

struct bt_backend;
struct bt_defcc;
struct bt_detect;
struct prom_server;

/* one tracing run: what it opened, and what it counted */
struct bt_run {
	struct rec_writer *w;
	int records;              /* enum bt_records */
	enum rec_format format;
	FILE *out;
	uint64_t samples;
	uint64_t writes;          /* write events (the write tap, with --detect) */
	uint64_t t0_ns;
	int64_t mono_to_wall_ns;
	bool write_failed;
	int write_errno;          /* why the first failed write failed */
	const char *out_name;     /* the output, for messages */
	/* --detect: the collapse detector; lock guards it against the /metrics thread */
	struct bt_detect *det;
	pthread_mutex_t lock;
	bool locked;              /* the trace loop holds lock until its poll returns */
	struct bt_backend *b;
	struct bt_defcc *defcc;
	struct prom_server *prom;
	int stats_fd;
	uint32_t metrics_peers;   /* --metrics-peers */
};

/* the signal handlers: SIGINT, SIGTERM and SIGHUP stop the trace; SIGUSR1
 * asks for the window verdict now */
void bt_run_on_signal(int sig);
void bt_run_on_usr1(int sig);

/* each returns the exit code so far */
int bt_run_open_output(struct bt_env *env, struct bt_run *r);
int bt_run_start(struct bt_env *env, struct bt_run *r);
int bt_run_loop(const struct bt_env *env, struct bt_run *r);
/* undoes everything, newest first; returns the final exit code */
int bt_run_stop(const struct bt_env *env, struct bt_run *r, int code);

#endif
