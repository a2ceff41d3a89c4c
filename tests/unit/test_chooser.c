// SPDX-License-Identifier: GPL-2.0-only
/*
 * lib/chooser.h: the backend chooser that bbrtrace and udpdwell share. Its
 * refusal lines are what a user reads when a backend cannot run, so they are
 * checked word for word here, once; the tools' bats tests check that each
 * kernel's real refusals reach those lines.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tk_assert.h"

#include "chooser.h"
#include "common.h"

enum { K_AUTO, K_A, K_B, K_C };
static const char *const names[] = { "auto", "alpha", "beta", "gamma", NULL };
static const int order[] = { K_A, K_B, K_C };

/* what each kind answers, and which were tried, in order */
struct script {
	int code[4];
	const char *why[4];
	int tried[4], ntried;
};

static int scripted_open(int kind, void *ctx, char *why, size_t len)
{
	struct script *s = ctx;

	s->tried[s->ntried++] = kind;
	if (s->code[kind] != TK_EXIT_OK)
		snprintf(why, len, "%s", s->why[kind]);
	return s->code[kind];
}

static void choose(struct script *s, int want, struct tk_choice *c)
{
	const struct tk_chooser ch = { names, order, ARRAY_SIZE(order), scripted_open, s };

	tk_choose(&ch, want, c);
}

static void test_first_choice(void **state)
{
	struct script s = { .code = { 0 } };
	struct tk_choice c;

	(void)state;
	choose(&s, TK_BACKEND_AUTO, &c);
	assert_int_equal(c.kind, K_A);
	assert_int_equal(c.code, TK_EXIT_OK);
	assert_string_equal(c.line, "backend alpha (the first choice)");
	assert_int_equal(s.ntried, 1);
}

static void test_falls_through_with_reasons(void **state)
{
	struct script s = { .code = { 0, TK_EXIT_NOTSUP, TK_EXIT_NOTSUP, 0 },
			    .why = { NULL, "no trampolines", "no kprobe PMU" } };
	struct tk_choice c;

	(void)state;
	choose(&s, TK_BACKEND_AUTO, &c);
	assert_int_equal(c.kind, K_C);
	assert_int_equal(c.code, TK_EXIT_OK);
	assert_string_equal(c.line, "backend gamma (alpha: no trampolines; beta: no kprobe PMU)");
	assert_int_equal(s.ntried, 3);
	assert_int_equal(s.tried[0], K_A);
	assert_int_equal(s.tried[2], K_C);
}

static void test_none_works(void **state)
{
	struct script s = { .code = { 0, TK_EXIT_NOTSUP, TK_EXIT_NOTSUP, TK_EXIT_NOTSUP },
			    .why = { NULL, "a", "b", "c" } };
	struct tk_choice c;

	(void)state;
	choose(&s, TK_BACKEND_AUTO, &c);
	assert_int_equal(c.kind, -1);
	assert_int_equal(c.code, TK_EXIT_NOTSUP);
	assert_string_equal(c.line, "no backend works here: alpha: a; beta: b; gamma: c");
}

/* a failure that is not the kernel lacking something decides the exit code */
static void test_other_failure_wins_the_code(void **state)
{
	struct script s = { .code = { 0, TK_EXIT_NOTSUP, TK_EXIT_FAIL, TK_EXIT_NOTSUP },
			    .why = { NULL, "a", "ring buffer", "c" } };
	struct tk_choice c;

	(void)state;
	choose(&s, TK_BACKEND_AUTO, &c);
	assert_int_equal(c.kind, -1);
	assert_int_equal(c.code, TK_EXIT_FAIL);
}

static void test_as_asked(void **state)
{
	struct script s = { .code = { 0, TK_EXIT_NOTSUP, 0, 0 }, .why = { NULL, "a" } };
	struct tk_choice c;

	(void)state;
	choose(&s, K_B, &c);
	assert_int_equal(c.kind, K_B);
	assert_string_equal(c.line, "backend beta (as asked)");
	assert_int_equal(s.ntried, 1); /* alpha, the better one, is not tried */
	choose(&s, K_A, &c);
	assert_int_equal(c.kind, -1);
	assert_int_equal(c.code, TK_EXIT_NOTSUP);
	assert_string_equal(c.line, "backend alpha: a");
}

/* refusals that fill the line are cut, not overflowed */
static void test_long_refusals(void **state)
{
	char big[600];
	struct script s = { .code = { 0, TK_EXIT_NOTSUP, TK_EXIT_NOTSUP, TK_EXIT_NOTSUP } };
	struct tk_choice c;

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	s.why[1] = s.why[2] = s.why[3] = big;
	choose(&s, TK_BACKEND_AUTO, &c);
	assert_int_equal(c.kind, -1);
	tk_assert_cmp(strlen(c.line), <, sizeof(c.line));
	assert_non_null(strstr(c.line, "alpha: xxx"));
}

static void test_load_refusals(void **state)
{
	char why[256];

	(void)state;
	assert_int_equal(tk_load_refusal(-EPERM, "fentry programs", why, sizeof(why)), TK_EXIT_NOTSUP);
	assert_string_equal(why, "the kernel refused to load the fentry programs (EPERM)");
	assert_int_equal(tk_load_refusal(-EACCES, "kprobe programs", why, sizeof(why)), TK_EXIT_NOTSUP);
	assert_string_equal(why, "the kernel refused to load the kprobe programs (EACCES: rejected "
				 "by the verifier; -vv shows its log)");
	assert_int_equal(tk_load_refusal(-ENOMEM, "BPF object", why, sizeof(why)), TK_EXIT_FAIL);
	assert_string_equal(why, "loading the BPF object failed: Cannot allocate memory");
	assert_int_equal(tk_attach_refusal(-ENOENT, "programs", why, sizeof(why)), TK_EXIT_NOTSUP);
	assert_string_equal(why, "the programs loaded but cannot attach: No such file or directory");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_choice),
		cmocka_unit_test(test_falls_through_with_reasons),
		cmocka_unit_test(test_none_works),
		cmocka_unit_test(test_other_failure_wins_the_code),
		cmocka_unit_test(test_as_asked),
		cmocka_unit_test(test_long_refusals),
		cmocka_unit_test(test_load_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
