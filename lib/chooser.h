/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The toolkit's one backend chooser. A tool lists its kernel backends in its
 * order of preference, with one function that opens any of them (probe the
 * kernel, load, attach). `auto` tries them in that order and keeps each
 * refusal in words; a backend named on the command line is tried alone.
 * The outcome is one log line: which backend runs and why the others did
 * not, or why none can.
 */
#ifndef TK_CHOOSER_H
#define TK_CHOOSER_H

#include <stddef.h>

#define TK_BACKEND_AUTO 0 /* index 0 of every tool's backend names */

/*
 * Opens backend `kind`. Returns TK_EXIT_OK, or a TK_EXIT_* code with a phrase
 * in `why` that does not repeat the backend's name: TK_EXIT_NOTSUP when the
 * kernel lacks what the backend needs, another code for other failures.
 */
typedef int (*tk_open_fn)(int kind, void *ctx, char *why, size_t len);

struct tk_chooser {
	const char *const *names; /* indexed by kind; names[TK_BACKEND_AUTO] is "auto" */
	const int *order;         /* the kinds auto tries, best first */
	int norder;
	tk_open_fn open;
	void *ctx;
};

struct tk_choice {
	int kind;        /* the backend that runs, or -1 when none opened */
	int code;        /* TK_EXIT_OK, else the exit code the tool ends with */
	char line[1536]; /* the log line, e.g. "backend kprobe (fentry: ...)" */
};

/* tries `want` (a kind, or TK_BACKEND_AUTO) and fills c */
void tk_choose(const struct tk_chooser *ch, int want, struct tk_choice *c);

/*
 * A libbpf error while loading or attaching `what`, in words, with its exit
 * code: the kernel refusing (EPERM, EACCES: the verifier, a lockdown, a
 * missing feature) is TK_EXIT_NOTSUP, anything else TK_EXIT_FAIL.
 */
int tk_load_refusal(int err, const char *what, char *why, size_t len);
int tk_attach_refusal(int err, const char *what, char *why, size_t len);

#endif
