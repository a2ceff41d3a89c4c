// SPDX-License-Identifier: GPL-2.0-only
/*
 * lib/opt.h: a table of options parses into the settings it names, and
 * --help's option lines come from the same table. (A bad command line exits;
 * tests/bats/cli_errors.bats checks those lines for every tool.)
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tk_assert.h"

#include "log.h"
#include "opt.h"
#include "record.h"

struct settings {
	bool flag, on;
	const char *out;
	uint64_t n, big;
	uint32_t k;
	double ratio, secs;
	uint16_t port;
	int pick;
	enum rec_format fmt;
	bool fmt_given;
	int calls;
	const char *listen;
	char maybe[64];         /* each --maybe's value, '-' for none */
};

static int count_call(void *cfg, const char *opt, const char *val)
{
	struct settings *s = cfg;

	(void)opt;
	s->calls += val && !strcmp(val, "x");
	return 0;
}

static int maybe_call(void *cfg, const char *opt, const char *val)
{
	struct settings *s = cfg;
	size_t n = strlen(s->maybe);

	(void)opt;
	snprintf(s->maybe + n, sizeof(s->maybe) - n, "%s%s", n ? " " : "", val ? val : "-");
	return 0;
}

static const char *const picks[] = { "red", "green", NULL };

#define TK_OPT_CFG struct settings
static const struct opt table[] = {
	OPT_E_FLAG("flag", 'F', flag, "a flag"),
	OPT_E_UNFLAG("no-on", 0, on, "turns on off"),
	OPT_E_OUTPUT(out, "where it goes"),
	OPT_E_U64("n", 'n', "N", n, 1, 100, "a number"),
	OPT_E_U64("big", 0, "N", big, 1, (double)UINT64_MAX, "any u64 but 0"),
	OPT_E_U32("k", 0, "K", k, 0, 9, "another"),
	OPT_E_DOUBLE("ratio", 0, "R", ratio, 0.01, 0.99, "a ratio\nsecond line"),
	OPT_E_DURATION(secs, "how long"),
	OPT_E_PORT("port", 'p', "PORT", port, "a port"),
	OPT_E_ENDPOINT("listen", 0, listen, "where to listen"),
	OPT_E_CHOICE("pick", 0, "C", pick, picks, "a choice"),
	OPT_E_FORMAT(fmt, fmt_given),
	OPT_E_CALL("call", 0, "V", count_call, "calls back"),
	OPT_E_CALL_OPTIONAL("maybe", 'm', "on|off", maybe_call, "a value or none"),
	OPT_E_STANDARD,
	OPT_E_END,
};
#undef TK_OPT_CFG
static const struct opt_cli cli = { "Usage: t [OPTIONS] ARG\n", table, "Footer.\n", NULL, NULL };

static void test_values_land(void **state)
{
	char *argv[] = { "t", "-F", "--no-on", "-o", "f.json", "-n", "7", "--k=3", "--ratio", "0.5",
			 "-d", "0.25", "--port", "443", "--pick", "green", "-f", "csv", "ARG",
			 "--call", "x", "--call=x", "--listen", "[::1]:9435", NULL };
	struct settings s = { .on = true };
	int first;
	(void)state;

	first = opt_parse(&cli, (int)ARRAY_SIZE(argv) - 1, argv, &s);
	assert_true(s.flag);
	assert_false(s.on);
	assert_string_equal(s.out, "f.json");
	assert_int_equal(s.n, 7);
	assert_int_equal(s.k, 3);
	tk_assert_cmp(s.ratio, ==, 0.5);
	tk_assert_cmp(s.secs, ==, 0.25);
	assert_int_equal(s.port, 443);
	assert_int_equal(s.pick, 1);
	assert_int_equal(s.fmt, REC_CSV);
	assert_true(s.fmt_given);
	assert_int_equal(s.calls, 2);
	assert_string_equal(s.listen, "[::1]:9435");
	/* getopt moved the argument after the options */
	assert_int_equal(first, (int)ARRAY_SIZE(argv) - 2);
	assert_string_equal(argv[first], "ARG");
}

/* a u64 option bounded by (double)UINT64_MAX, which is 2^64, takes every u64 */
static void test_u64_to_max(void **state)
{
	char *small[] = { "t", "--big", "5", NULL };
	char *top[] = { "t", "--big", "18446744073709551615", NULL };
	struct settings s = { 0 };
	(void)state;

	opt_parse(&cli, 3, small, &s);
	assert_int_equal(s.big, 5);
	opt_parse(&cli, 3, top, &s);
	tk_assert_cmp(s.big, ==, UINT64_MAX);
}

/* an optional value: "--maybe", "--maybe=V", "--maybe V", never an option or "--" */
static void test_optional_value(void **state)
{
	char *argv[] = { "t", "--maybe", "--maybe=a", "--maybe", "b", "--maybe", "-F", "-m", "-mc",
			 "-m", "d", "--maybe", "--", "ARG", NULL };
	struct settings s = { 0 };
	int first;
	(void)state;

	first = opt_parse(&cli, (int)ARRAY_SIZE(argv) - 1, argv, &s);
	assert_string_equal(s.maybe, "- a b - - c d -");
	assert_true(s.flag);
	assert_string_equal(argv[first], "ARG");
	assert_int_equal(first, (int)ARRAY_SIZE(argv) - 2);
}

/* --help's lines: the head, the help text at its column, continuations indented */
static void test_usage_lines(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	(void)state;

	opt_usage(&cli, f);
	fclose(f);
	assert_non_null(strstr(buf, "Usage: t [OPTIONS] ARG\nOptions:\n"));
	assert_non_null(strstr(buf, "\n  -F, --flag              a flag\n"));
	assert_non_null(strstr(buf, "\n      --ratio R           a ratio\n                          second line\n"));
	assert_non_null(strstr(buf, "\n  -d, --duration SECONDS  how long\n"));
	assert_non_null(strstr(buf, "\n  -m, --maybe [on|off]    a value or none\n"));
	assert_non_null(strstr(buf, "\n  -V, --version           print the version\nFooter.\n"));
	free(buf);
}

/* a tool with commands: its options may come before the command's name */
static struct opt_cli cmd_cli_with(const struct opt *opts)
{
	return (struct opt_cli){ "Usage: t CMD\n", opts, NULL, NULL, NULL };
}

#define TK_OPT_CFG struct settings
static const struct opt other[] = { OPT_E_FLAG("lonely", 0, flag, "only here"), OPT_E_STANDARD, OPT_E_END };
#undef TK_OPT_CFG

static void test_first_operand(void **state)
{
	const struct opt_cli a = cli, b = cmd_cli_with(other);
	const struct opt_cli *const both[] = { &a, &b }, *const just_b[] = { &b };
	char *argv[] = { "t", "--lonely", "-o", "f", "-vn", "3", "--k=2", "--pick", "red", "run", "-F", "ARG", NULL };
	char *ended[] = { "t", "-v", "--", "-run", NULL };
	char *none[] = { "t", "-o", "f", NULL };
	(void)state;

	/* the values of -o, -n (in a cluster) and --pick are not the command */
	assert_int_equal(opt_first_operand(both, 2, 12, argv), 9);
	/* a table that does not know -o takes its value for the command */
	assert_int_equal(opt_first_operand(just_b, 1, 12, argv), 3);
	assert_int_equal(opt_first_operand(both, 2, 4, ended), 3);
	assert_int_equal(opt_first_operand(both, 2, 3, none), 3);
	/* nothing moved: the scan stops at the command */
	assert_string_equal(argv[9], "run");
	assert_string_equal(argv[11], "ARG");
}

/* after a scan, the command's parser still takes options after arguments */
static void test_parse_after_scan(void **state)
{
	const struct opt_cli *const one[] = { &cli };
	char *argv[] = { "t", "ARG", "-F", "--n", "5", NULL };
	struct settings s = { 0 };
	(void)state;

	assert_int_equal(opt_first_operand(one, 1, 5, argv), 1);
	assert_int_equal(opt_parse(&cli, 5, argv, &s), 4);
	assert_true(s.flag);
	assert_int_equal(s.n, 5);
	assert_string_equal(argv[4], "ARG");
}

/* defaults: applied before the command line through the same parsers, each
 * overridden by the option given; --help ends the text with "(default DEF)",
 * on a line of its own where the last line is too long to hold it */
#define TK_OPT_CFG struct settings
static const struct opt defaulted[] = {
	OPT_E_U64_D("n", 'n', "N", n, 1, 100, "42", "a number"),
	/* 38 characters in 51 bytes: with its default, 78 columns */
	OPT_E_DOUBLE_D("ratio", 0, "R", ratio, 0.01, 0.99, "0.3", "µs µs µs µs µs µs µs µs µs µs µs µs µs"),
	OPT_E_DURATION_D(secs, "1.5", "how long"),
	OPT_E_CHOICE_D("pick", 0, "C", pick, picks, "green", "a choice"),
	OPT_E_CALL_D("maybe", 'm', "V", maybe_call, "dflt", "called with its default first"),
	OPT_E_U32_D("k", 0, "K", k, 0, 9, "7", "a line long enough that its default cannot follow it"),
	OPT_E_END,
};
#undef TK_OPT_CFG
static const struct opt_cli defaulted_cli = { "Usage: t\n", defaulted, NULL, NULL, NULL };

static void test_defaults(void **state)
{
	char *none[] = { "t", NULL };
	char *given[] = { "t", "-n", "5", "--pick", "red", "-m", "x", NULL };
	struct settings s = { 0 }, g = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	(void)state;

	opt_parse(&defaulted_cli, 1, none, &s);
	assert_int_equal(s.n, 42);
	tk_assert_cmp(s.ratio, ==, 0.3);
	tk_assert_cmp(s.secs, ==, 1.5);
	assert_int_equal(s.pick, 1);
	assert_int_equal(s.k, 7);
	assert_string_equal(s.maybe, "dflt");
	opt_parse(&defaulted_cli, 7, given, &g);
	assert_int_equal(g.n, 5);
	assert_int_equal(g.pick, 0);
	tk_assert_cmp(g.ratio, ==, 0.3);
	assert_string_equal(g.maybe, "dflt x");

	f = open_memstream(&buf, &len);
	opt_usage(&defaulted_cli, f);
	fclose(f);
	assert_non_null(strstr(buf, "\n  -n, --n N               a number (default 42)\n"));
	assert_non_null(strstr(buf, "\n  -d, --duration SECONDS  how long (default 1.5)\n"));
	/* columns count characters, not bytes */
	assert_non_null(strstr(buf, "\n      --ratio R           µs µs µs µs µs µs µs µs µs µs µs µs µs (default 0.3)\n"));
	assert_non_null(strstr(buf, "\n      --k K               a line long enough that its default cannot follow it\n"
				    "                          (default 7)\n"));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values_land),
		cmocka_unit_test(test_optional_value),
		cmocka_unit_test(test_usage_lines),
		cmocka_unit_test(test_first_operand),
		cmocka_unit_test(test_parse_after_scan),
		cmocka_unit_test(test_u64_to_max),
		cmocka_unit_test(test_defaults),
	};

	log_init("test_opt");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
