// SPDX-License-Identifier: GPL-2.0-only
/* quickack's command line: what each form means, and what is refused */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "log.h"
#include "quickack/quickack.h"

static struct qa_args a;

/* parse a command line given as one string (words split on spaces) */
static int parse(const char *line)
{
	static char buf[512];
	char *argv[32];
	int argc = 0;

	snprintf(buf, sizeof(buf), "quickack %s", line);
	for (char *t = strtok(buf, " "); t && argc < 31; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	return qa_args_parse(argc, argv, &a);
}

static int setup(void **state)
{
	(void)state;
	log_set_level(LOG_QUIET - 1); /* keep the expected errors out of the TAP stream */
	return 0;
}

static void test_commands(void **state)
{
	(void)state;
	assert_int_equal(parse("show"), 0);
	assert_int_equal(a.cmd, QA_SHOW);
	assert_false(a.has_prefix);
	assert_int_equal(a.family, 0);
	assert_null(a.table);
	assert_false(a.fmt_set);

	assert_int_equal(parse("on 10.0.1.0/24"), 0);
	assert_int_equal(a.cmd, QA_ON);
	assert_true(a.has_prefix);
	assert_int_equal(a.family, AF_INET);
	assert_int_equal(a.prefix.len, 24);
	assert_int_equal(a.change.op, QA_OP_QUICKACK);
	assert_int_equal(a.change.value, 1);

	assert_int_equal(parse("off fd00:1::/64 --table 100 --dev d0 --netns rp-recv --journal /x/j"), 0);
	assert_int_equal(a.cmd, QA_OFF);
	assert_int_equal(a.family, AF_INET6);
	assert_int_equal(a.change.value, 0);
	assert_string_equal(a.table, "100");
	assert_string_equal(a.dev, "d0");
	assert_string_equal(a.netns, "rp-recv");
	assert_string_equal(a.journal, "/x/j");

	/* options before the command, too (what scripts write varies) */
	assert_int_equal(parse("--netns rp-recv on 10.0.1.0/24 --journal /d/quickack.journal"), 0);
	assert_int_equal(a.cmd, QA_ON);
	assert_string_equal(a.netns, "rp-recv");

	assert_int_equal(parse("on --all-dev eth0 -6"), 0);
	assert_string_equal(a.all_dev, "eth0");
	assert_false(a.has_prefix);
	assert_int_equal(a.family, AF_INET6);

	assert_int_equal(parse("restore --netns rp-recv --journal /d/j"), 0);
	assert_int_equal(a.cmd, QA_RESTORE);
	assert_int_equal(parse("status --json"), 0);
	assert_int_equal(a.cmd, QA_STATUS);
	assert_true(a.fmt_set);
	assert_int_equal(a.fmt, REC_JSON);
	assert_int_equal(parse("show --format csv -v -v"), 0);
	assert_int_equal(a.fmt, REC_CSV);
	assert_int_equal(a.verbosity, 2);
	assert_int_equal(parse("--help"), 0);
	assert_true(a.help);
	assert_int_equal(parse("on --version"), 0);
	assert_true(a.version);
}

static void test_prefixes(void **state)
{
	uint8_t zero[16] = { 0 };
	(void)state;
	assert_int_equal(parse("on default"), 0);
	assert_int_equal(a.prefix.addr.family, AF_INET);
	assert_int_equal(a.prefix.len, 0);
	assert_int_equal(parse("on default -6"), 0);
	assert_int_equal(a.prefix.addr.family, AF_INET6);
	assert_memory_equal(a.prefix.addr.bytes, zero, 16);
	assert_int_equal(parse("on 10.0.1.1"), 0);
	assert_int_equal(a.prefix.len, 32);
	assert_int_equal(parse("on 10.0.1.300/24"), -1);
	assert_int_equal(parse("on 10.0.1.1/24"), -1);
	assert_int_equal(parse("on 10.0.1.0/33"), -1);
	assert_int_equal(parse("on 10.0.1.0/2x"), -1);
	assert_int_equal(parse("on fd00::/64 -4"), -1);
	assert_int_equal(parse("on 10.0.0.0/8 -6"), -1);
	assert_int_equal(parse("on 10.0.1.0/24 --via 10.9.0.1"), 0);
	assert_true(a.has_via);
	assert_int_equal(parse("on 10.0.1.0/24 --via fd00::1"), -1);
	assert_int_equal(parse("on 10.0.1.0/24 --via 10.9.0"), -1);
}

static void test_values(void **state)
{
	uint32_t ms;
	char cc[QA_CC_NAME_MAX];
	(void)state;
	assert_int_equal(parse("rto-min 10.0.1.0/24 5"), 0);
	assert_int_equal(a.change.op, QA_OP_RTO_MIN);
	assert_int_equal(a.change.value, 5);
	assert_int_equal(qa_parse_rto_min("x", "5ms", &ms), 0);
	assert_int_equal(ms, 5);
	assert_int_equal(qa_parse_rto_min("x", "2s", &ms), 0);
	assert_int_equal(ms, 2000);
	assert_int_equal(qa_parse_rto_min("x", "off", &ms), 0);
	assert_int_equal(ms, 0);
	assert_int_equal(qa_parse_rto_min("x", "120000ms", &ms), 0);
	assert_int_equal(qa_parse_rto_min("x", "120001", &ms), -1);
	assert_int_equal(qa_parse_rto_min("x", "0", &ms), -1);
	assert_int_equal(qa_parse_rto_min("x", "5x", &ms), -1);
	assert_int_equal(qa_parse_rto_min("x", "5us", &ms), -1);
	assert_int_equal(qa_parse_rto_min("x", "-5", &ms), -1);
	assert_int_equal(qa_parse_rto_min("x", "ms", &ms), -1);
	assert_int_equal(qa_parse_rto_min("x", "", &ms), -1);
	assert_int_equal(qa_parse_rto_min("x", "1.5s", &ms), -1);

	assert_int_equal(parse("congctl 10.0.1.0/24 bbr_traced --lock"), 0);
	assert_int_equal(a.change.op, QA_OP_CONGCTL);
	assert_string_equal(a.change.cc, "bbr_traced");
	assert_true(a.change.lock);
	assert_int_equal(parse("congctl --all-dev d0 off"), 0);
	assert_string_equal(a.change.cc, "");
	assert_int_equal(qa_parse_congctl("x", "0123456789abcde", cc), 0);
	assert_int_equal(qa_parse_congctl("x", "0123456789abcdef", cc), -1);
	assert_int_equal(qa_parse_congctl("x", "bbr traced", cc), -1);
	assert_int_equal(qa_parse_congctl("x", "", cc), -1);
}

static void test_refused(void **state)
{
	(void)state;
	assert_int_equal(parse(""), -1);
	assert_int_equal(parse("frob"), -1);
	assert_int_equal(parse("on"), -1);
	assert_int_equal(parse("on 10.0.1.0/24 10.0.2.0/24"), -1);
	assert_int_equal(parse("on 10.0.1.0/24 --all-dev d0"), -1);
	assert_int_equal(parse("on --all-dev d0 --dev d1"), -1);
	assert_int_equal(parse("rto-min 10.0.1.0/24"), -1);
	assert_int_equal(parse("congctl 10.0.1.0/24"), -1);
	assert_int_equal(parse("rto-min --all-dev d0 5 6"), -1);
	assert_int_equal(parse("show --all-dev d0"), -1);
	assert_int_equal(parse("show --dry-run"), -1);
	assert_int_equal(parse("show --journal /x"), -1);
	assert_int_equal(parse("status --dry-run"), -1);
	assert_int_equal(parse("restore --table 100"), -1);
	assert_int_equal(parse("restore 10.0.1.0/24"), -1);
	assert_int_equal(parse("on 10.0.1.0/24 --lock"), -1);
	assert_int_equal(parse("on 10.0.1.0/24 -4 -6"), -1);
	assert_int_equal(parse("on 10.0.1.0/24 --dev"), -1);
	assert_int_equal(parse("on 10.0.1.0/24 --dev a/b"), -1);
	assert_int_equal(parse("on 10.0.1.0/24 --dev 0123456789abcdef"), -1);
	assert_int_equal(parse("on 10.0.1.0/24 --netns .."), -1);
	assert_int_equal(parse("on 10.0.1.0/24 --netns a/b"), -1);
	assert_int_equal(parse("on 10.0.1.0/24 --bogus"), -1);
	assert_int_equal(parse("on 10.0.1.0/24 -x"), -1);
	assert_int_equal(parse("show --json --format table"), -1);
	assert_int_equal(parse("show --format yaml"), -1);
	assert_int_equal(parse("on 10.0.1.0/24 --dry-run"), 0);
	assert_true(a.dry_run);
	assert_int_equal(parse("restore --dry-run"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_commands, setup),
		cmocka_unit_test_setup(test_prefixes, setup),
		cmocka_unit_test_setup(test_values, setup),
		cmocka_unit_test_setup(test_refused, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
