// SPDX-License-Identifier: GPL-2.0-only
/*
 * The backend chooser: a backend named is tried alone; `auto` tries each in
 * order and keeps every refusal for one line (naming root when all refused
 * without it); and the words and exit code of a load or attach failure.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "bpfutil.h"
#include "chooser.h"
#include "common.h"

/* appends to buf, never past len, and keeps it terminated */
static void append(char *buf, size_t len, const char *fmt, const char *a, const char *b)
{
	size_t n = strlen(buf);

	if (n + 1 < len)
		snprintf(buf + n, len - n, fmt, a, b);
}

static void choose_one(const struct tk_chooser *ch, int want, struct tk_choice *c)
{
	char why[512] = "";

	c->code = ch->open(want, ch->ctx, why, sizeof(why));
	c->kind = c->code == TK_EXIT_OK ? want : -1;
	if (c->kind >= 0)
		snprintf(c->line, sizeof(c->line), "backend %s (as asked)", ch->names[want]);
	else
		snprintf(c->line, sizeof(c->line), "backend %s: %s", ch->names[want], why);
}

/*
 * Every backend refused a process with CAP_BPF and CAP_PERFMON but not root:
 * some kernels want CAP_SYS_ADMIN for tracing (Debian's 6.1 at
 * kernel.perf_event_paranoid 3 refuses perf events without it). A missing
 * privilege, and the way out, rather than a missing feature.
 */
static void refused_without_root(struct tk_choice *c)
{
	size_t n = strlen(c->line);
	char p[16] = "unreadable";
	int level;

	if (bpfu_full_root() || n + 1 >= sizeof(c->line))
		return;
	level = bpfu_perf_paranoid();
	if (level != INT_MIN)
		snprintf(p, sizeof(p), "%d", level);
	snprintf(c->line + n, sizeof(c->line) - n,
		 "; without root this kernel refused every backend (kernel.perf_event_paranoid=%s): "
		 "run as root",
		 p);
	c->code = TK_EXIT_NOPERM;
}

void tk_choose(const struct tk_chooser *ch, int want, struct tk_choice *c)
{
	char refused[sizeof(c->line)] = "";
	int worst = TK_EXIT_NOTSUP;

	c->line[0] = '\0';
	if (want != TK_BACKEND_AUTO) {
		choose_one(ch, want, c);
		return;
	}
	for (int i = 0; i < ch->norder; i++) {
		int kind = ch->order[i], code;
		char why[512] = "";

		code = ch->open(kind, ch->ctx, why, sizeof(why));
		if (code == TK_EXIT_OK) {
			c->kind = kind;
			c->code = TK_EXIT_OK;
			snprintf(c->line, sizeof(c->line), "backend %s (%s)", ch->names[kind],
				 refused[0] ? refused : "the first choice");
			return;
		}
		if (code != TK_EXIT_NOTSUP)
			worst = code;
		append(refused, sizeof(refused), refused[0] ? "; %s: %s" : "%s: %s",
		       ch->names[kind], why);
	}
	c->kind = -1;
	c->code = worst;
	snprintf(c->line, sizeof(c->line), "no backend works here: %s", refused);
	refused_without_root(c);
}

int tk_load_refusal(int err, const char *what, char *why, size_t len)
{
	char buf[128];

	if (err == -EPERM || err == -EACCES) {
		/* root was checked before: this is the kernel or a policy refusing */
		snprintf(why, len, "the kernel refused to load the %s (%s)", what,
			 err == -EPERM ? "EPERM" : "EACCES: rejected by the verifier; -vv shows its log");
		return TK_EXIT_NOTSUP;
	}
	snprintf(why, len, "loading the %s failed: %s", what, bpfu_strerror(err, buf, sizeof(buf)));
	return TK_EXIT_FAIL;
}

int tk_attach_refusal(int err, const char *what, char *why, size_t len)
{
	char buf[128];

	snprintf(why, len, "the %s loaded but cannot attach: %s", what,
		 bpfu_strerror(err, buf, sizeof(buf)));
	return TK_EXIT_NOTSUP;
}
