// SPDX-License-Identifier: GPL-2.0-only
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "jsonl.h"

static void test_flat_record(void **state)
{
	char line[] = "{\"type\":\"sample\",\"t_ns\":18446744073709551615,\"rtt_us\":-3,"
		      "\"pacing_gain\":1.25,\"is_app_limited\":false,\"bw\":null,"
		      "\"comm\":\"a\\\"b\\u00e9\",\"buckets\":[1,[2],\"]\"],\"drops\":{\"x\":1}}\n";
	struct jl_obj o;
	char err[64];
	uint64_t u;
	int64_t i;
	double d;
	bool b;
	(void)state;

	assert_int_equal(jl_parse(line, &o, err, sizeof(err)), 0);
	assert_int_equal(o.n, 9);
	assert_string_equal(jl_str(&o, "type"), "sample");
	assert_true(jl_u64(&o, "t_ns", &u));
	assert_true(u == 18446744073709551615ULL);
	assert_true(jl_i64(&o, "rtt_us", &i));
	assert_int_equal(i, -3);
	assert_false(jl_u64(&o, "rtt_us", &u));
	assert_true(jl_num(&o, "pacing_gain", &d));
	assert_true(d == 1.25);
	assert_false(jl_u64(&o, "pacing_gain", &u));
	assert_true(jl_bool(&o, "is_app_limited", &b));
	assert_false(b);
	assert_int_equal(jl_get(&o, "bw")->kind, JL_NULL);
	assert_string_equal(jl_str(&o, "comm"), "a\"b\xc3\xa9");
	assert_int_equal(jl_get(&o, "buckets")->kind, JL_RAW);
	assert_int_equal(jl_get(&o, "buckets")->len, strlen("[1,[2],\"]\"]"));
	assert_null(jl_get(&o, "nope"));
}

static void test_errors(void **state)
{
	static const char *const bad[] = {
		"", "[1]", "{\"a\" 1}", "{\"a\":}", "{\"a\":1,}", "{\"a\":1", "{\"a\":\"x}",
		"{\"a\":1} x", "{\"a\":tru}", "{\"a\":[1,2}", "{\"a\":\"\\q\"}", "{\"a\":-}",
	};
	struct jl_obj o;
	char err[64];
	(void)state;

	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		char buf[64];

		strcpy(buf, bad[k]);
		assert_int_equal(jl_parse(buf, &o, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "column"));
	}
}

static void test_many_fields(void **state)
{
	char line[4096] = "{";
	struct jl_obj o;
	char err[64];
	(void)state;

	for (int k = 0; k < 100; k++)
		sprintf(line + strlen(line), "%s\"k%d\":%d", k ? "," : "", k, k);
	strcat(line, "}");
	/* no silent cap: a line with more fields than the reader keeps is refused */
	assert_int_equal(jl_parse(line, &o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "more than 64 fields"));
	/* and exactly as many is read whole */
	strcpy(line, "{");
	for (int k = 0; k < JL_MAX_FIELDS; k++)
		sprintf(line + strlen(line), "%s\"k%d\":%d", k ? "," : "", k, k);
	strcat(line, "}");
	assert_int_equal(jl_parse(line, &o, err, sizeof(err)), 0);
	assert_int_equal(o.n, JL_MAX_FIELDS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flat_record),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_many_fields),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
