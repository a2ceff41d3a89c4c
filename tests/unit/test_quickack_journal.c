// SPDX-License-Identifier: GPL-2.0-only
/* quickack's journal: encoding, decoding, every kind of corruption, and the file's life */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <zlib.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "quickack/journal.h"

/* 10.0.1.0/24 dev 2 table main, mtu 9000, as the kernel dumps it */
static void route(struct qa_route *r, const char *dst, uint32_t table)
{
	uint8_t b[256];
	size_t len = NLMSG_ALIGN(sizeof(struct rtmsg));
	struct rtmsg rtm = { .rtm_family = AF_INET, .rtm_dst_len = 24, .rtm_table = RT_TABLE_COMPAT,
			     .rtm_protocol = RTPROT_STATIC, .rtm_type = RTN_UNICAST };
	uint16_t h[2];
	uint32_t v;
	struct in_addr a;
	char err[128];

	memcpy(b, &rtm, sizeof(rtm));
	h[0] = 8, h[1] = RTA_TABLE, v = table;
	memcpy(b + len, h, 4), memcpy(b + len + 4, &v, 4), len += 8;
	inet_pton(AF_INET, dst, &a);
	h[0] = 8, h[1] = RTA_DST;
	memcpy(b + len, h, 4), memcpy(b + len + 4, &a, 4), len += 8;
	h[0] = 12, h[1] = RTA_METRICS;
	memcpy(b + len, h, 4), len += 4;
	h[0] = 8, h[1] = RTAX_MTU, v = 9000;
	memcpy(b + len, h, 4), memcpy(b + len + 4, &v, 4), len += 8;
	h[0] = 8, h[1] = RTA_OIF, v = 2;
	memcpy(b + len, h, 4), memcpy(b + len + 4, &v, 4), len += 8;
	assert_int_equal(qa_route_parse(b, len, r, err, sizeof(err)), 0);
}

/* a journal with a header and two route records, in buf */
static size_t sample(char *buf, size_t cap, const char *netns)
{
	struct qa_route a, b;
	int n, m, k;

	route(&a, "10.0.1.0", RT_TABLE_MAIN);
	route(&b, "10.0.2.0", 100);
	n = qaj_format_header(buf, cap, netns, 1700000000);
	assert_true(n > 0);
	m = qaj_format_route(buf + n, cap - (size_t)n, 1, 1700000001, "on", &a);
	assert_true(m > 0);
	k = qaj_format_route(buf + n + m, cap - (size_t)(n + m), 2, 1700000002, "congctl", &b);
	assert_true(k > 0);
	qa_route_free(&a);
	qa_route_free(&b);
	return (size_t)(n + m + k);
}

static void test_roundtrip(void **state)
{
	char buf[4096];
	size_t len = sample(buf, sizeof(buf), "rp-recv");
	struct qaj j;
	struct qaj_error e;
	struct qa_route a;
	(void)state;

	assert_int_equal(qaj_parse(buf, len, &j, &e), 0);
	assert_true(j.has_header);
	assert_string_equal(j.netns, "rp-recv");
	assert_int_equal(j.created_s, 1700000000);
	assert_int_equal(j.n, 2);
	assert_int_equal(j.e[0].seq, 1);
	assert_int_equal(j.e[0].time_s, 1700000001);
	assert_string_equal(j.e[0].op, "on");
	assert_string_equal(j.e[1].op, "congctl");
	assert_int_equal(j.e[1].route.table, 100);
	assert_int_equal(j.e[1].route.metric[RTAX_MTU], 9000);
	assert_int_equal(j.last_seq, 2);
	assert_int_equal(j.valid_len, len);
	assert_false(j.torn_tail);
	/* the saved bytes are the kernel's bytes */
	route(&a, "10.0.1.0", RT_TABLE_MAIN);
	assert_int_equal(j.e[0].route.len, a.len);
	assert_memory_equal(j.e[0].route.msg, a.msg, a.len);
	qa_route_free(&a);
	qaj_free(&j);

	/* the line format itself is stable: version 1 as documented */
	assert_non_null(strstr(buf, "bbrkit-quickack-journal 1 netns=rp-recv created=1700000000 crc="));
	assert_non_null(strstr(buf, "\nroute seq=1 time=1700000001 op=on family=inet table=254 dst=10.0.1.0/24 metric=0 state="));
}

static void test_netns_names(void **state)
{
	char buf[4096];
	size_t len;
	struct qaj j;
	struct qaj_error e;
	(void)state;

	len = sample(buf, sizeof(buf), "a b/%");
	assert_non_null(strstr(buf, "netns=a%20b%2F%25 "));
	assert_int_equal(qaj_parse(buf, len, &j, &e), 0);
	assert_string_equal(j.netns, "a b/%");
	qaj_free(&j);
	len = sample(buf, sizeof(buf), QAJ_NETNS_SELF);
	assert_non_null(strstr(buf, "netns=- "));
	assert_int_equal(qaj_parse(buf, len, &j, &e), 0);
	assert_string_equal(j.netns, QAJ_NETNS_SELF);
	qaj_free(&j);
	/* a namespace named "-" is not the caller's own */
	len = sample(buf, sizeof(buf), "-x");
	assert_int_equal(qaj_parse(buf, len, &j, &e), 0);
	assert_string_equal(j.netns, "-x");
	qaj_free(&j);
}

/* replace the first occurrence of from by to in the journal, fixing crcs unless keep_crc */
static size_t edit(char *buf, size_t len, const char *from, const char *to, bool fix_crc)
{
	char out[8192], *p = strstr(buf, from);
	size_t n;

	assert_non_null(p);
	n = (size_t)(p - buf);
	memcpy(out, buf, n);
	strcpy(out + n, to);
	strcat(out, p + strlen(from));
	len = strlen(out);
	if (fix_crc) { /* recompute every line's crc, so that only the edit is wrong */
		char fixed[8192] = "", line[4096];
		char *s = out, *nl;

		while ((nl = strchr(s, '\n'))) {
			size_t l = (size_t)(nl - s);
			char *crc;

			memcpy(line, s, l);
			line[l] = '\0';
			crc = strstr(line, " crc=");
			if (crc) {
				*crc = '\0';
				snprintf(line + strlen(line), sizeof(line) - strlen(line), " crc=%08lx",
					 (unsigned long)crc32(0, (const Bytef *)line, (uInt)strlen(line)));
			}
			strcat(fixed, line);
			strcat(fixed, "\n");
			s = nl + 1;
		}
		strcat(fixed, s);
		strcpy(out, fixed);
		len = strlen(out);
	}
	memcpy(buf, out, len + 1);
	return len;
}

static void expect_corrupt(const char *buf, size_t len, unsigned long line, const char *msg)
{
	struct qaj j;
	struct qaj_error e;

	assert_int_equal(qaj_parse(buf, len, &j, &e), -1);
	if (e.line != line || !strstr(e.msg, msg))
		fail_msg("line %lu (want %lu), offset %zu: '%s' (want '%s')", e.line, line, e.offset, e.msg, msg);
	/* nothing survives a failed parse: there is nothing to apply */
	assert_int_equal(j.n, 0);
	assert_null(j.e);
}

static void test_corrupt(void **state)
{
	char base[4096], buf[8192];
	size_t blen = sample(base, sizeof(base), "ns1"), len;
	struct qaj j;
	struct qaj_error e;
	const char *l2 = strchr(base, '\n') + 1;
	(void)state;

#define FRESH() (memcpy(buf, base, blen + 1), blen)
	len = FRESH();
	len = edit(buf, len, "state=02", "state=03", false);
	expect_corrupt(buf, len, 2, "checksum mismatch (stored ");
	assert_int_equal(qaj_parse(buf, len, &j, &e), -1);
	assert_int_equal(e.offset, (size_t)(l2 - base)); /* the line's first byte */

	len = FRESH();
	len = edit(buf, len, "bbrkit-quickack-journal 1", "bbrkit-quickack-journal 2", false);
	expect_corrupt(buf, len, 1, "journal version 2 is not supported (this quickack reads version 1)");

	len = FRESH();
	len = edit(buf, len, "bbrkit-quickack-journal", "some-other-file", false);
	expect_corrupt(buf, len, 1, "not a quickack journal");

	len = FRESH();
	len = edit(buf, len, "op=congctl", "op=frob", true);
	expect_corrupt(buf, len, 3, "unknown op 'frob'");

	len = FRESH();
	len = edit(buf, len, "seq=2", "seq=1", true);
	expect_corrupt(buf, len, 3, "seq 1 does not follow 1");

	len = FRESH();
	len = edit(buf, len, "dst=10.0.2.0/24", "dst=10.0.3.0/24", true);
	expect_corrupt(buf, len, 3, "fields family/table/dst/metric do not match the saved route (inet 10.0.2.0/24 table 100 metric 0)");

	len = FRESH();
	len = edit(buf, len, "state=02", "state=2", true);
	expect_corrupt(buf, len, 2, "field 'state' has ");

	len = FRESH();
	len = edit(buf, len, "state=02", "state=0X", true);
	expect_corrupt(buf, len, 2, "not lowercase hex");

	len = FRESH();
	len = edit(buf, len, "state=0218", "state=0a18", true); /* family 10 with a 4-byte dst */
	expect_corrupt(buf, len, 2, "the saved route does not parse: destination address at offset");

	len = FRESH();
	len = edit(buf, len, " time=1700000001", "", true);
	expect_corrupt(buf, len, 2, "expected field 'time=' here, found 'op=on'");

	len = FRESH();
	len = edit(buf, len, "time=1700000001", "time=01", true);
	expect_corrupt(buf, len, 2, "field 'time' is not a decimal number");

	len = FRESH();
	strcat(buf, "void seq=7 crc=00000000\n");
	len = edit(buf, strlen(buf), "void seq=7", "void seq=7", true);
	expect_corrupt(buf, len, 4, "void names seq 7, which no route record has");

	len = FRESH();
	strcat(buf, "void seq=1 crc=0\nvoid seq=1 crc=0\n");
	len = edit(buf, strlen(buf), "void", "void", true);
	expect_corrupt(buf, len, 5, "seq 1 is voided twice");

	len = FRESH();
	strcat(buf, "frob seq=1 crc=0\n");
	len = edit(buf, strlen(buf), "frob", "frob", true);
	expect_corrupt(buf, len, 4, "unknown record 'frob'");

	len = FRESH();
	strcat(buf, "\n");
	expect_corrupt(buf, len + 1, 4, "empty line");

	len = FRESH();
	len = edit(buf, len, "netns=ns1", "netns=n%2", true);
	expect_corrupt(buf, len, 1, "field 'netns' has a cut %XX escape");

	len = FRESH();
	len = edit(buf, len, " crc=", " crx=", false);
	expect_corrupt(buf, len, 1, "does not end with its ' crc=' field");

	len = FRESH();
	buf[l2 - base + 3] = '\0';
	expect_corrupt(buf, len, 2, "NUL byte in the line");
#undef FRESH
}

static void test_torn_tail_and_empty(void **state)
{
	char buf[4096];
	size_t len = sample(buf, sizeof(buf), "ns1"), full = len;
	struct qaj j;
	struct qaj_error e;
	(void)state;

	/* the last record, cut in the middle: never applied, so ignored */
	len -= 30;
	assert_int_equal(qaj_parse(buf, len, &j, &e), 0);
	assert_int_equal(j.n, 1);
	assert_true(j.torn_tail);
	assert_int_equal(j.torn_line, 3);
	assert_true(j.valid_len < full);
	assert_int_equal(buf[j.valid_len - 1], '\n');
	qaj_free(&j);

	assert_int_equal(qaj_parse("", 0, &j, &e), 0);
	assert_false(j.has_header);
	assert_int_equal(j.n, 0);
	/* a header cut short: the file was being created */
	assert_int_equal(qaj_parse("bbrkit-quick", 12, &j, &e), 0);
	assert_false(j.has_header);
	assert_true(j.torn_tail);
}

static void test_file_life(void **state)
{
	char dir[] = "/tmp/qa-unit-XXXXXX", path[256], buf[4096], msg[512];
	struct qaj_file f, g;
	struct qa_route a, b;
	const struct qaj_entry *keep[1];
	size_t n = 0;
	FILE *fp;
	struct stat st;
	int k;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/sub/quickack.journal", dir);
	/* reading a journal that does not exist: empty, no file made */
	assert_int_equal(qaj_open(&f, path, false, false, 100, msg, sizeof(msg)), QAJ_OK);
	assert_int_equal(f.fd, -1);
	qaj_close(&f);
	/* made on first write, with its directory */
	assert_int_equal(qaj_open(&f, path, true, true, 100, msg, sizeof(msg)), QAJ_OK);
	assert_true(f.created);
	route(&a, "10.0.1.0", RT_TABLE_MAIN);
	route(&b, "10.0.2.0", 100);
	k = qaj_format_route(buf, sizeof(buf), 1, 5, "on", &a);
	n += (size_t)k;
	k = qaj_format_route(buf + n, sizeof(buf) - n, 2, 5, "on", &b);
	n += (size_t)k;
	assert_int_equal(qaj_append(&f, "ns1", buf, n, msg, sizeof(msg)), QAJ_OK);
	/* a second writer waits for the lock, and gives up after its timeout */
	assert_int_equal(qaj_open(&g, path, true, true, 50, msg, sizeof(msg)), QAJ_EIO);
	assert_non_null(strstr(msg, "is locked by another quickack (waited 50 ms)"));
	qaj_close(&f);

	assert_int_equal(qaj_open(&f, path, true, false, 100, msg, sizeof(msg)), QAJ_OK);
	assert_int_equal(f.j.n, 2);
	assert_string_equal(f.j.netns, "ns1");
	/* keep only the second route */
	keep[0] = &f.j.e[1];
	assert_int_equal(qaj_rewrite(&f, "ns1", keep, 1, msg, sizeof(msg)), QAJ_OK);
	qaj_close(&f);
	assert_int_equal(qaj_open(&f, path, true, false, 100, msg, sizeof(msg)), QAJ_OK);
	assert_int_equal(f.j.n, 1);
	assert_int_equal(f.j.e[0].seq, 2);
	assert_int_equal(f.j.e[0].route.table, 100);
	/* nothing left: the journal goes away */
	assert_int_equal(qaj_rewrite(&f, "ns1", NULL, 0, msg, sizeof(msg)), QAJ_OK);
	qaj_close(&f);
	assert_int_not_equal(stat(path, &st), 0);

	/* a corrupt file: the error names the file, the line and the byte */
	fp = fopen(path, "w");
	fputs("bbrkit-quickack-journal 1 netns=- created=1 crc=00000000\n", fp);
	fclose(fp);
	assert_int_equal(qaj_open(&f, path, true, false, 100, msg, sizeof(msg)), QAJ_ECORRUPT);
	assert_non_null(strstr(msg, "is corrupt at line 1 (byte 0): checksum mismatch"));
	assert_non_null(strstr(msg, "nothing was applied"));

	/* a torn tail is cut off before the next append */
	n = (size_t)qaj_format_header(buf, sizeof(buf), "-", 1);
	fp = fopen(path, "w");
	fwrite(buf, 1, n, fp);
	fputs("route seq=1 ti", fp);
	fclose(fp);
	assert_int_equal(qaj_open(&f, path, true, false, 100, msg, sizeof(msg)), QAJ_OK);
	assert_true(f.j.torn_tail);
	k = qaj_format_route(buf, sizeof(buf), 1, 5, "on", &a);
	assert_int_equal(qaj_append(&f, "-", buf, (size_t)k, msg, sizeof(msg)), QAJ_OK);
	qaj_close(&f);
	assert_int_equal(qaj_open(&f, path, false, false, 100, msg, sizeof(msg)), QAJ_OK);
	assert_false(f.j.torn_tail);
	assert_int_equal(f.j.n, 1);
	qaj_close(&f);

	qa_route_free(&a);
	qa_route_free(&b);
	unlink(path);
	snprintf(path, sizeof(path), "%s/sub", dir);
	rmdir(path);
	rmdir(dir);
}

static void test_default_path(void **state)
{
	char p[256];
	(void)state;

	qaj_default_path(NULL, p, sizeof(p));
	assert_string_equal(p, "/var/lib/bbrkit/quickack.journal");
	qaj_default_path("rp-recv", p, sizeof(p));
	assert_string_equal(p, "/var/lib/bbrkit/quickack-rp-recv.journal");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_netns_names),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_torn_tail_and_empty),
		cmocka_unit_test(test_file_life),
		cmocka_unit_test(test_default_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
