// SPDX-License-Identifier: GPL-2.0-only
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tk_assert.h"

#include "jlines.h"
#include "jsonl.h"
#include "log.h"

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
	tk_assert_cmp(u, ==, 18446744073709551615ULL);
	assert_true(jl_i64(&o, "rtt_us", &i));
	assert_int_equal(i, -3);
	assert_false(jl_u64(&o, "rtt_us", &u));
	assert_true(jl_num(&o, "pacing_gain", &d));
	tk_assert_cmp(d, ==, 1.25);
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

/* --- the lines of a file (jlines.h) ---------------------------------------------------- */

/* jl_lines' answer for each line of the size bytes at text, cut as getline()
 * cuts them (a line keeps its '\n'); at most n; r: the reader afterwards */
static size_t read_lines(const char *text, size_t size, struct jl_lines *r, enum jl_line *kinds, size_t n)
{
	struct jl_obj o;
	char err[64], line[256];
	size_t pos = 0, k = 0;

	jl_lines_init(r, "t.jsonl");
	while (pos < size && k < n) {
		const char *nl = memchr(text + pos, '\n', size - pos);
		size_t len = nl ? (size_t)(nl - (text + pos)) + 1 : size - pos;

		tk_assert_cmp(len, <, sizeof(line));
		memcpy(line, text + pos, len);
		line[len] = '\0';
		kinds[k++] = jl_lines_next(r, line, len, &o, err, sizeof(err));
		pos += len;
	}
	return k;
}

/* a file still being written: its last line, cut inside a record, ends the
 * records; those before it stand */
static void test_lines_cut_last(void **state)
{
	static const char text[] = "{\"a\":1}\n\n{\"a\":2}\n{\"a\":3,\"b\"";
	enum jl_line k[8];
	struct jl_lines r;
	(void)state;

	assert_int_equal(read_lines(text, sizeof(text) - 1, &r, k, 8), 4);
	assert_int_equal(k[0], JL_LINE_RECORD);
	assert_int_equal(k[1], JL_LINE_BLANK);
	assert_int_equal(k[2], JL_LINE_RECORD);
	assert_int_equal(k[3], JL_LINE_CUT);
	assert_int_equal(r.records, 2);
	assert_int_equal(r.lineno, 4);
	assert_null(r.capture);
}

/* a last line without its '\n' that parses is a whole record; white space
 * alone is a blank line */
static void test_lines_last_without_newline(void **state)
{
	static const char *const texts[] = { "{\"a\":1}\n{\"a\":2}", "{\"a\":1}\n{\"a\":2} \r" };
	enum jl_line k[4];
	struct jl_lines r;
	(void)state;

	for (size_t t = 0; t < 2; t++) {
		assert_int_equal(read_lines(texts[t], strlen(texts[t]), &r, k, 4), 2);
		assert_int_equal(k[1], JL_LINE_RECORD);
		assert_int_equal(r.records, 2);
	}
	assert_int_equal(read_lines("{\"a\":1}\n  ", 10, &r, k, 4), 2);
	assert_int_equal(k[1], JL_LINE_BLANK);
}

/* no record cut short parses: every proper prefix of one, as the last line,
 * is cut, never a record (why a last line that parses is taken whole) */
static void test_lines_every_prefix_is_cut(void **state)
{
	static const char rec[] = "{\"type\":\"sample\",\"t_ns\":123,\"mode\":\"PROBE_BW\",\"bw\":null,"
				  "\"gain\":1.25,\"ok\":true,\"nested\":{\"b\":[1,{\"c\":2}]},\"s\":\"}\"}";
	enum jl_line k[2];
	struct jl_lines r;
	(void)state;

	log_set_level(LOG_QUIET - 1); /* not a warning per prefix */
	for (size_t len = 1; len < sizeof(rec) - 1; len++) {
		assert_int_equal(read_lines(rec, len, &r, k, 2), 1);
		if (k[0] != JL_LINE_CUT)
			fail_msg("the first %zu bytes of the record: kind %d, not cut", len, k[0]);
		assert_int_equal(r.records, 0);
	}
	log_set_level(LOG_NORMAL);
	assert_int_equal(read_lines(rec, sizeof(rec) - 1, &r, k, 2), 1);
	assert_int_equal(k[0], JL_LINE_RECORD);
}

/* a malformed line is the file's damage wherever its '\n' says it ended:
 * in the middle, or last */
static void test_lines_bad_is_not_forgiven(void **state)
{
	static const char mid[] = "{\"a\":1}\n{\"a\":\n{\"a\":3}\n", last[] = "{\"a\":1}\n{\"a\":\n";
	enum jl_line k[4];
	struct jl_lines r;
	(void)state;

	assert_int_equal(read_lines(mid, sizeof(mid) - 1, &r, k, 4), 3);
	assert_int_equal(k[1], JL_LINE_BAD);
	assert_int_equal(read_lines(last, sizeof(last) - 1, &r, k, 4), 2);
	assert_int_equal(k[1], JL_LINE_BAD);
	assert_int_equal(r.lineno, 2);
}

/* a capture, by its first four bytes in either byte order, before any line
 * of it is judged; pcapng's first byte is a line of its own */
static void test_lines_capture(void **state)
{
	static const struct {
		const char *bytes;
		const char *kind;
	} files[] = {
		{ "\xd4\xc3\xb2\xa1\x02\x00\x04\x00\n{", "pcap" }, /* little-endian, us */
		{ "\xa1\xb2\xc3\xd4\x00\x02\x00\x04", "pcap" },     /* big-endian, us */
		{ "\x4d\x3c\xb2\xa1\x02\x00\x04\x00", "pcap" },     /* little-endian, ns */
		{ "\xa1\xb2\x3c\x4d\x00\x02\x00\x04", "pcap" },     /* big-endian, ns */
		{ "\n\r\r\n\x1c\x00\x00\x00\n\x4d\x3c", "pcapng" },
	};
	enum jl_line k[4];
	struct jl_lines r;
	size_t n;
	(void)state;

	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		n = read_lines(files[f].bytes, 8 + (f == 0 || f == 4) * 2, &r, k, 4);
		assert_int_equal(k[n - 1], JL_LINE_CAPTURE);
		for (size_t i = 0; i < n; i++)
			if (k[i] != JL_LINE_BLANK && k[i] != JL_LINE_CAPTURE)
				fail_msg("file %zu, line %zu: kind %d, before the capture was seen", f, i + 1, k[i]);
		assert_string_equal(r.capture, files[f].kind);
	}
	/* three bytes are no magic number; a JSON line's first four neither */
	assert_int_equal(read_lines("\xd4\xc3\xb2", 3, &r, k, 4), 1);
	assert_int_equal(k[0], JL_LINE_CUT);
	assert_int_equal(read_lines("{\"a\":1}\n", 8, &r, k, 4), 1);
	assert_int_equal(k[0], JL_LINE_RECORD);
	assert_null(r.capture);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flat_record),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_many_fields),
		cmocka_unit_test(test_lines_cut_last),
		cmocka_unit_test(test_lines_last_without_newline),
		cmocka_unit_test(test_lines_every_prefix_is_cut),
		cmocka_unit_test(test_lines_bad_is_not_forgiven),
		cmocka_unit_test(test_lines_capture),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
