// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbrtrace: every BBR rate sample, per ACK, with the max-bw filter before and
 * after it.
 *
 * This file: the start (signals, arguments, the guardian), what needs no
 * tracing (--probe, --cleanup), then one run from its output to its teardown.
 */
#include <signal.h>
#include <stdio.h>

#include "bbrtrace/args.h"
#include "bbrtrace/backend.h"
#include "bbrtrace/detect.h"
#include "bbrtrace/guard.h"
#include "bbrtrace/report.h"
#include "bbrtrace/rules.h"
#include "bbrtrace/run.h"
#include "bpfutil.h"
#include "common.h"
#include "log.h"

/* one line per backend: does it load (verifier) and attach here? */
static int probe_backends(const struct bt_env *env)
{
	for (int k = BT_FENTRY; k <= BT_STRUCT_OPS; k++) {
		struct bt_config cfg = env->cfg;
		struct bt_backend *b;
		char why[512], load[600], attach[600];
		int code;

		cfg.load_only = true;
		b = bt_backend_open(k, &cfg, NULL, NULL, why, sizeof(why), &code);
		if (b) {
			int fds[16];
			const char *names[16];
			int n = bt_backend_progs(b, fds, names, 16);

			snprintf(load, sizeof(load), "ok (%d programs passed the verifier)", n);
			bt_backend_close(b);
			cfg.load_only = false;
			b = bt_backend_open(k, &cfg, NULL, NULL, why, sizeof(why), &code);
			if (b) {
				snprintf(attach, sizeof(attach), "ok");
				bt_backend_close(b);
			} else {
				snprintf(attach, sizeof(attach), "no: %s", why);
			}
		} else {
			snprintf(load, sizeof(load), "no: %s", why);
			snprintf(attach, sizeof(attach), "-");
		}
		printf("%-10s load: %s; attach: %s\n", bt_backend_names[k], load, attach);
	}
	return TK_EXIT_OK;
}

/* what needs no tracing: --cleanup and --probe; returns -1 to go on */
static int housekeeping(struct bt_env *env)
{
	char why[512];
	int removed, code;

	if (bpfu_check_privileges(true, why, sizeof(why))) {
		elog("%s", why);
		return TK_EXIT_NOPERM;
	}
	if (bpfu_btf_missing()) {
		elog("%s", bpfu_btf_missing());
		return TK_EXIT_NOTSUP;
	}
	if (env->cleanup) {
		if (bt_stale_cleanup(&removed, why, sizeof(why))) {
			elog("%s", why);
			return TK_EXIT_FAIL;
		}
		if (!removed)
			ilog("nothing to clean: no stale bbr_traced is registered");
		return TK_EXIT_OK;
	}
	if (env->probe) {
		code = probe_backends(env);
		return code;
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct bt_env env = { 0 }; /* the defaults are the option table's (args.c) */
	struct bt_run r = { .stats_fd = -1 };
	int code;

	log_init(argv[0]);
	/* first of all: each stops the trace cleanly, even during start-up (it
	 * is read once tracing runs); a closed terminal (SIGHUP) too; a closed
	 * pipe is a write error (EPIPE) */
	signal(SIGINT, bt_run_on_signal);
	signal(SIGTERM, bt_run_on_signal);
	signal(SIGHUP, bt_run_on_signal);
	signal(SIGUSR1, bt_run_on_usr1);
	signal(SIGPIPE, SIG_IGN);
	bt_args_parse(argc, argv, &env);
	bpfu_setup_libbpf();
	/* the guardian process is forked only when a change needs undoing
	 * should bbrtrace die */
	env.cfg.guard = bt_guard_new();
	if (!env.cfg.guard) {
		elog("out of memory");
		return TK_EXIT_FAIL;
	}
	code = housekeeping(&env);
	if (code >= 0) {
		bt_guard_release(env.cfg.guard);
		return code;
	}
	pthread_mutex_init(&r.lock, NULL);
	code = bt_run_open_output(&env, &r);
	if (code == TK_EXIT_OK)
		code = bt_run_start(&env, &r);
	if (code == TK_EXIT_OK) {
		code = bt_run_loop(&env, &r);
		bt_report(&env, &r);
	}
	return bt_run_stop(&env, &r, code);
}
