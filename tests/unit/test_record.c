// SPDX-License-Identifier: GPL-2.0-only
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <cmocka.h>

#include "tk_assert.h"

#include "record.h"

static const struct rec_field fields[] = {
	{ "port", REC_U64, 0, "port", 5 },
	{ "delta", REC_I64, 0, "delta", 6 },
	{ "ratio", REC_F64, 3, "ratio", 6, 0, 2 },
	{ "bw_bps", REC_U64, 0, "bw Mbit/s", 9, 1e-6, 1 },
	{ "comm", REC_STR, 0, "comm", -8 },
	{ "ok", REC_BOOL, 0, NULL, 0 },
	{ "buckets", REC_U64_LIST, 0, NULL, 0 },
	{ "drops", REC_KV, 0, "drops", -12 },
};
static const struct rec_schema schema = { "socket", fields, sizeof(fields) / sizeof(fields[0]) };


static char *render(enum rec_format fmt, const struct rec_value *v, int times)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct rec_writer *w = rec_writer_new(fmt, f);

	for (int i = 0; i < times; i++)
		assert_int_equal(rec_write(w, &schema, v), 0);
	assert_int_equal(rec_writer_free(w), 0);
	fclose(f);
	return buf;
}

static void values(struct rec_value *v, const uint64_t *b, const struct rec_kv *kv)
{
	v[0] = rv_u64(5004);
	v[1] = rv_i64(-7);
	v[2] = rv_f64(0.12345);
	v[3] = rv_u64(212000000);
	v[4] = rv_str("my \"sfu\",x");
	v[5] = rv_bool(true);
	v[6] = rv_list(b, 3);
	v[7] = rv_kv(kv, 2);
}

static void test_json(void **state)
{
	static const uint64_t b[3] = { 1, 0, 18446744073709551615ULL };
	static const struct rec_kv kv[2] = { { "SOCKET_RCVBUFF", 3 }, { "PROTO_MEM", 0 } };
	struct rec_value v[8];
	char *s;
	(void)state;
	values(v, b, kv);
	s = render(REC_JSON, v, 1);
	assert_string_equal(s, "{\"type\":\"socket\",\"port\":5004,\"delta\":-7,\"ratio\":0.123,"
			       "\"bw_bps\":212000000,\"comm\":\"my \\\"sfu\\\",x\",\"ok\":true,"
			       "\"buckets\":[1,0,18446744073709551615],"
			       "\"drops\":{\"SOCKET_RCVBUFF\":3,\"PROTO_MEM\":0}}\n");
	free(s);
	v[2] = rv_f64(NAN);
	v[4] = rv_null();
	s = render(REC_JSON, v, 1);
	assert_non_null(strstr(s, "\"ratio\":null"));
	assert_non_null(strstr(s, "\"comm\":null"));
	free(s);
}

static void test_csv_header_once(void **state)
{
	static const uint64_t b[3] = { 1, 2, 3 };
	static const struct rec_kv kv[2] = { { "a", 1 }, { "b", 2 } };
	struct rec_value v[8];
	char *s;
	(void)state;
	values(v, b, kv);
	s = render(REC_CSV, v, 2);
	assert_string_equal(s, "port,delta,ratio,bw_bps,comm,ok,buckets,drops\n"
			       "5004,-7,0.123,212000000,\"my \"\"sfu\"\",x\",1,1;2;3,a=1;b=2\n"
			       "5004,-7,0.123,212000000,\"my \"\"sfu\"\",x\",1,1;2;3,a=1;b=2\n");
	free(s);
}

static void test_table_units_and_widths(void **state)
{
	static const uint64_t b[3] = { 1, 2, 3 };
	static const struct rec_kv kv[2] = { { "a", 1 }, { "b", 2 } };
	struct rec_value v[8];
	char *s;
	(void)state;
	values(v, b, kv);
	s = render(REC_TABLE, v, 1);
	/* comm is 10 characters in a column of 8: whole, and drops' padding takes the 2 back */
	assert_string_equal(s, " port  delta  ratio bw Mbit/s comm     drops       \n"
			       " 5004     -7   0.12     212.0 my \"sfu\",x a=1,b=2   \n");
	free(s);
}

/* a cell wider than its column is never cut: an IPv6 prefix shows whole, and
 * the columns after it fall back in line as soon as padding allows */
static void test_table_never_cuts(void **state)
{
	static const struct rec_field rf[] = {
		{ "dst", REC_STR, 0, "dst", -24 },
		{ "metric", REC_U64, 0, "metric", 6 },
		{ "dev", REC_STR, 0, "dev", -10 },
		{ "proto", REC_STR, 0, "proto", -7 },
	};
	static const struct rec_schema rs = { "route", rf, 4 };
	static const char *const dsts[] = { "fe80::1499:47ff:fe66:f77c/128", "10.0.1.0/24" };
	char *buf = NULL, longer[600], want[800];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct rec_writer *w = rec_writer_new(REC_TABLE, f);
	(void)state;

	for (int i = 0; i < 2; i++) {
		struct rec_value v[] = { rv_str(dsts[i]), rv_u64(1024), rv_str("d0"), rv_str("kernel") };

		assert_int_equal(rec_write(w, &rs, v), 0);
	}
	/* longer than any buffer a cell went through before */
	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	{
		struct rec_value v[] = { rv_str(longer), rv_u64(7), rv_str("d0"), rv_str("boot") };

		assert_int_equal(rec_write(w, &rs, v), 0);
	}
	assert_int_equal(rec_writer_free(w), 0);
	fclose(f);
	snprintf(want, sizeof(want),
		 "dst                      metric dev        proto  \n"
		 /* 29 characters in 24: metric's padding (2) and dev's (3 of 8) take the 5 back */
		 "fe80::1499:47ff:fe66:f77c/128 1024 d0      kernel \n"
		 "10.0.1.0/24                1024 d0         kernel \n"
		 "%s 7 d0 boot\n", longer);
	assert_string_equal(buf, want);
	free(buf);
}

static void test_header_before_records(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct rec_writer *w = rec_writer_new(REC_CSV, f);
	static const uint64_t b[3] = { 1, 2, 3 };
	static const struct rec_kv kv[2] = { { "a", 1 }, { "b", 2 } };
	struct rec_value v[8];
	(void)state;

	values(v, b, kv);
	rec_write_header(w, &schema);
	rec_write_header(w, &schema); /* once only */
	rec_write(w, &schema, v);
	rec_writer_free(w);
	fclose(f);
	assert_string_equal(buf, "port,delta,ratio,bw_bps,comm,ok,buckets,drops\n"
				 "5004,-7,0.123,212000000,\"my \"\"sfu\"\",x\",1,1;2;3,a=1;b=2\n");
	free(buf);
}

/* two record types in one CSV file: one header, their union, and each row
 * fills its own type's columns */
static void test_csv_two_types(void **state)
{
	static const struct rec_field fa[] = { { "t_ns", REC_U64 }, { "bw_bps", REC_U64 } };
	static const struct rec_field fb[] = { { "t_ns", REC_U64 }, { "cause", REC_STR } };
	static const struct rec_schema a = { "sample", fa, 2 }, b = { "collapse", fb, 2 };
	struct rec_value va[] = { rv_u64(1), rv_u64(10) }, vb[] = { rv_u64(2), rv_str("x") };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct rec_writer *w = rec_writer_new(REC_CSV, f);
	(void)state;

	rec_writer_declare(w, &a);
	rec_writer_declare(w, &b);
	rec_write(w, &a, va);
	rec_write(w, &b, vb);
	rec_write(w, &a, va);
	rec_writer_free(w);
	fclose(f);
	assert_string_equal(buf, "type,t_ns,bw_bps,cause\n"
				 "sample,1,10,\n"
				 "collapse,2,,x\n"
				 "sample,1,10,\n");
	free(buf);
}

static void test_escape_control(void **state)
{
	char out[32];
	(void)state;
	rec_json_escape(out, sizeof(out), "a\x01\n\"");
	assert_string_equal(out, "a\\u0001\\n\\\"");
	/* truncation never splits an escape and always terminates */
	rec_json_escape(out, 4, "\"\"\"\"");
	assert_string_equal(out, "\\\"");
}

static void test_big_volume(void **state)
{
	static const uint64_t b[3] = { 1, 2, 3 };
	static const struct rec_kv kv[2] = { { "a", 1 }, { "b", 2 } };
	struct rec_value v[8];
	char *s;
	size_t lines = 0;
	(void)state;
	values(v, b, kv);
	s = render(REC_JSON, v, 5000); /* crosses the internal buffer many times */
	for (char *p = s; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, 5000);
	free(s);
}

/* the writer's own number formatting must print what printf prints */
static void test_numbers_match_printf(void **state)
{
	static const struct rec_field nf[] = { { "v", REC_F64, 0 } };
	static const double cases[] = {
		0, -0.0, 0.5, 1.5, 2.5, -2.5, 0.125, 0.0625, 1.0005, 2.88671875, 1.25, 0.75,
		123456.7890125, -0.0004999, 0.9999996, 9.9999995, 1e11 + 0.5, 1e13, 3.14159265358979,
		1e-7, -1e-7, 4294967295.5, 0.045, 1.005, 2.675,
	};
	uint64_t seed = 42;
	(void)state;

	for (int prec = 0; prec <= 7; prec++) {
		for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]) + 2000; k++) {
			struct rec_field f = nf[0];
			struct rec_schema sc = { NULL, &f, 1 };
			char *buf = NULL, want[128];
			size_t len = 0;
			double d;

			if (k < sizeof(cases) / sizeof(cases[0])) {
				d = cases[k];
			} else { /* pseudo-random values over many magnitudes */
				seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
				d = (double)(seed >> 11) / (double)(1ULL << 53);
				d = (d - 0.3) * (double)(1ULL << (seed % 40));
			}
			f.prec = prec;
			FILE *out = open_memstream(&buf, &len);
			struct rec_writer *w = rec_writer_new(REC_CSV, out);
			rec_writer_reset_header(w);
			struct rec_value v = rv_f64(d);
			rec_write(w, &sc, &v);
			rec_writer_free(w);
			fclose(out);
			snprintf(want, sizeof(want), "v\n%.*f\n", prec, d);
			if (strcmp(buf, want)) {
				print_error("prec %d value %.17g: got %s want %s", prec, d, buf, want);
				fail();
			}
			free(buf);
		}
	}
}

/* a string longer than any fixed buffer comes out whole, escaped */
static void test_long_string(void **state)
{
	static const struct rec_field f[] = { { "text", REC_STR } };
	static const struct rec_schema sch = { "note", f, 1 };
	size_t n = 200000, len = 0;
	char *s = malloc(n + 1), *buf = NULL;
	FILE *out = open_memstream(&buf, &len);
	struct rec_writer *w = rec_writer_new(REC_JSON, out);
	struct rec_value v[] = { rv_str(s) };
	(void)state;

	for (size_t i = 0; i < n; i++)
		s[i] = i % 1000 == 999 ? '"' : 'a';
	s[n] = '\0';
	assert_int_equal(rec_write(w, &sch, v), 0);
	assert_int_equal(rec_writer_free(w), 0);
	fclose(out);
	/* every quote escaped, nothing cut: the length is exact */
	assert_int_equal(len, strlen("{\"type\":\"note\",\"text\":\"\"}\n") + n + n / 1000);
	assert_int_equal(buf[len - 3], '"');
	free(buf);
	free(s);
}

/*
 * A write that fails part way (a full disk; here the file size limit, which
 * fails a write the same way) leaves only whole records in the file: no
 * torn last line, and the writer reports the failure.
 */
static void test_no_torn_line(void **state)
{
	static const struct rec_field f[] = { { "i", REC_U64 }, { "pad", REC_STR } };
	static const struct rec_schema sch = { "rec", f, 2 };
	char path[] = "/tmp/test_record.XXXXXX", line[256];
	struct rlimit old, lim = { 100000, RLIM_INFINITY };
	int fd = mkstemp(path), rc = 0, lines = 0;
	FILE *out = fdopen(fd, "w"), *in;
	struct rec_writer *w = rec_writer_new(REC_JSON, out);
	uint64_t i;
	(void)state;

	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	lim.rlim_max = old.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	for (i = 0; i < 100000 && !rc; i++) {
		struct rec_value v[] = { rv_u64(i), rv_str("the quick brown fox jumps over the lazy dog") };

		rc = rec_write(w, &sch, v);
	}
	if (!rc)
		rc = rec_writer_flush(w);
	setrlimit(RLIMIT_FSIZE, &old);
	assert_int_equal(rc, -1);
	rec_writer_free(w);
	fclose(out);
	in = fopen(path, "r");
	assert_non_null(in);
	while (fgets(line, sizeof(line), in)) {
		size_t n = strlen(line);

		tk_assert_cmp(n, >, 0);
		tk_assert_cmp(line[n - 1], ==, '\n');
		assert_non_null(strstr(line, "\"pad\":\"the quick brown fox jumps over the lazy dog\"}"));
		lines++;
	}
	fclose(in);
	unlink(path);
	tk_assert_cmp(lines, >, 1000);
}

static void test_u64_digits(void **state)
{
	static const struct rec_field nf[] = { { "v", REC_U64 } };
	static const struct rec_schema sc = { NULL, nf, 1 };
	uint64_t v = 0;
	(void)state;

	for (int k = 0; k < 200; k++) {
		char *buf = NULL, want[64];
		size_t len = 0;
		FILE *out = open_memstream(&buf, &len);
		struct rec_writer *w = rec_writer_new(REC_JSON, out);
		struct rec_value val = rv_u64(v);

		rec_write(w, &sc, &val);
		rec_writer_free(w);
		fclose(out);
		snprintf(want, sizeof(want), "{\"v\":%llu}\n", (unsigned long long)v);
		assert_string_equal(buf, want);
		free(buf);
		v = v * 3 + (uint64_t)k; /* walks through every digit count */
	}
	/* each digit count's first and last values, and each power of two's */
	for (int k = 0; k < 64 * 2 + 20 * 2; k++) {
		char *buf = NULL, want[64];
		size_t len = 0;
		FILE *out = open_memstream(&buf, &len);
		struct rec_writer *w = rec_writer_new(REC_JSON, out);
		uint64_t p10 = 1;
		struct rec_value val;

		for (int d = 0; d < (k - 128) / 2; d++)
			p10 *= 10;
		v = k < 128 ? (1ULL << (k / 2)) - (uint64_t)(k % 2) : p10 - (uint64_t)(k % 2);
		val = rv_u64(k == 128 + 39 ? UINT64_MAX : v);
		rec_write(w, &sc, &val);
		rec_writer_free(w);
		fclose(out);
		snprintf(want, sizeof(want), "{\"v\":%llu}\n", (unsigned long long)val.u);
		assert_string_equal(buf, want);
		free(buf);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_csv_header_once),
		cmocka_unit_test(test_table_units_and_widths),
		cmocka_unit_test(test_table_never_cuts),
		cmocka_unit_test(test_header_before_records),
		cmocka_unit_test(test_escape_control),
		cmocka_unit_test(test_big_volume),
		cmocka_unit_test(test_numbers_match_printf),
		cmocka_unit_test(test_u64_digits),
		cmocka_unit_test(test_long_string),
		cmocka_unit_test(test_csv_two_types),
		cmocka_unit_test(test_no_torn_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
