// SPDX-License-Identifier: GPL-2.0-only
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "tk_assert.h"

#include "cli.h"
#include "log.h"

static void test_u64_strict(void **state)
{
	uint64_t v;
	(void)state;
	log_set_level(LOG_QUIET - 1); /* keep the expected errors out of the TAP stream */
	assert_int_equal(cli_parse_u64("--n", "42", 0, 100, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(cli_parse_u64("--n", "5x", 0, 100, &v), -1);
	assert_int_equal(cli_parse_u64("--n", "", 0, 100, &v), -1);
	assert_int_equal(cli_parse_u64("--n", "-1", 0, 100, &v), -1);
	assert_int_equal(cli_parse_u64("--n", " 1", 0, 100, &v), -1);
	assert_int_equal(cli_parse_u64("--n", "101", 0, 100, &v), -1);
	assert_int_equal(cli_parse_u64("--n", "99999999999999999999999", 0, UINT64_MAX, &v), -1);
	assert_int_equal(cli_parse_u64("--n", "1.5", 0, 100, &v), -1);
}

static void test_port(void **state)
{
	uint16_t p;
	(void)state;
	assert_int_equal(cli_parse_port("--dport", "65535", &p), 0);
	assert_int_equal(p, 65535);
	assert_int_equal(cli_parse_port("--dport", "70000", &p), -1);
	assert_int_equal(cli_parse_port("--dport", "0x10", &p), -1);
}

static void test_int_and_double(void **state)
{
	int i;
	double d;
	(void)state;
	assert_int_equal(cli_parse_int("--x", "-5", -10, 10, &i), 0);
	assert_int_equal(i, -5);
	assert_int_equal(cli_parse_int("--x", "11", -10, 10, &i), -1);
	assert_int_equal(cli_parse_double("--r", "0.3", 0, 1, &d), 0);
	tk_assert_cmp(d, >, 0.29);
	tk_assert_cmp(d, <, 0.31);
	assert_int_equal(cli_parse_double("--r", "nan", 0, 1, &d), -1);
	assert_int_equal(cli_parse_double("--r", "1.5", 0, 1, &d), -1);
	assert_int_equal(cli_parse_double("--r", "0.5s", 0, 1, &d), -1);
}

static void test_addr(void **state)
{
	struct cli_addr a;
	uint8_t m[16];
	char buf[64];
	(void)state;
	assert_int_equal(cli_parse_addr("--saddr", "10.1.2.3", &a), 0);
	assert_int_equal(a.family, AF_INET);
	cli_addr_to_v6mapped(&a, m);
	assert_string_equal(cli_fmt_v6mapped(m, buf, sizeof(buf)), "10.1.2.3");
	for (int i = 0; i < 256; i += 7) { /* every digit count of each octet */
		char want[32];
		snprintf(want, sizeof(want), "%d.%d.%d.%d", i, 255 - i, i / 10, 100 + i % 156);
		assert_int_equal(cli_parse_addr("--saddr", want, &a), 0);
		cli_addr_to_v6mapped(&a, m);
		assert_string_equal(cli_fmt_v6mapped(m, buf, sizeof(buf)), want);
	}
	assert_int_equal(cli_parse_addr("--saddr", "1.2.3", &a), -1);
	assert_int_equal(cli_parse_addr("--saddr", "1.2.3.256", &a), -1);
	assert_int_equal(cli_parse_addr("--saddr", "fd00::1", &a), 0);
	assert_int_equal(a.family, AF_INET6);
	cli_addr_to_v6mapped(&a, m);
	assert_string_equal(cli_fmt_v6mapped(m, buf, sizeof(buf)), "fd00::1");
	assert_int_equal(cli_parse_addr("--saddr", "fd00:::1", &a), -1);
	assert_int_equal(cli_parse_addr("--saddr", "", &a), -1);
}

static void test_prefix(void **state)
{
	struct cli_prefix p;
	(void)state;
	assert_int_equal(cli_parse_prefix("PREFIX", "10.0.0.0/8", &p), 0);
	assert_int_equal(p.len, 8);
	assert_int_equal(cli_parse_prefix("PREFIX", "10.0.0.1", &p), 0);
	assert_int_equal(p.len, 32);
	assert_int_equal(cli_parse_prefix("PREFIX", "10.0.0.1/8", &p), -1);  /* host bits */
	assert_int_equal(cli_parse_prefix("PREFIX", "10.0.0.0/33", &p), -1);
	assert_int_equal(cli_parse_prefix("PREFIX", "10.0.0.0/", &p), -1);
	assert_int_equal(cli_parse_prefix("PREFIX", "fd00::/64", &p), 0);
	assert_int_equal(p.len, 64);
	assert_int_equal(cli_parse_prefix("PREFIX", "fd00::/129", &p), -1);
	assert_int_equal(cli_parse_prefix("PREFIX", "bogus/24", &p), -1);
}

static void test_choice_bool(void **state)
{
	static const char *const backends[] = { "auto", "fentry", "kprobe", "struct_ops", NULL };
	int i;
	bool b;
	(void)state;
	assert_int_equal(cli_parse_choice("--backend", "kprobe", backends, &i), 0);
	assert_int_equal(i, 2);
	assert_int_equal(cli_parse_choice("--backend", "kprobes", backends, &i), -1);
	assert_int_equal(cli_parse_bool("--quickack", "on", &b), 0);
	assert_true(b);
	assert_int_equal(cli_parse_bool("--quickack", "OFF", &b), 0);
	assert_false(b);
	assert_int_equal(cli_parse_bool("--quickack", "maybe", &b), -1);
}

static void test_endpoint(void **state)
{
	struct sockaddr_storage ss;
	socklen_t len;
	(void)state;

	log_set_level(LOG_QUIET - 1);
	assert_int_equal(cli_parse_endpoint("--p", "127.0.0.1:9435", &ss, &len), 0);
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(ntohs(((struct sockaddr_in *)&ss)->sin_port), 9435);
	assert_int_equal(cli_parse_endpoint("--p", "[::1]:0", &ss, &len), 0);
	assert_int_equal(ss.ss_family, AF_INET6);
	assert_int_equal(cli_parse_endpoint("--p", "127.0.0.1", &ss, &len), -1);
	assert_int_equal(cli_parse_endpoint("--p", "127.0.0.1:", &ss, &len), -1);
	assert_int_equal(cli_parse_endpoint("--p", "127.0.0.1:65536", &ss, &len), -1);
	assert_int_equal(cli_parse_endpoint("--p", "127.0.0.1:5x", &ss, &len), -1);
	assert_int_equal(cli_parse_endpoint("--p", "1.2.3:80", &ss, &len), -1);
	assert_int_equal(cli_parse_endpoint("--p", "::1:80", &ss, &len), -1);
	assert_int_equal(cli_parse_endpoint("--p", "[127.0.0.1]:80", &ss, &len), -1);
	assert_int_equal(cli_parse_endpoint("--p", ":80", &ss, &len), -1);
	assert_int_equal(cli_parse_endpoint("--p", "", &ss, &len), -1);
	log_set_level(LOG_NORMAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_u64_strict),   cmocka_unit_test(test_port),
		cmocka_unit_test(test_int_and_double), cmocka_unit_test(test_addr),
		cmocka_unit_test(test_prefix),       cmocka_unit_test(test_choice_bool),
		cmocka_unit_test(test_endpoint),
	};
	log_init("test_cli");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
