// SPDX-License-Identifier: GPL-2.0-only
/* quickack's journal: encoding, decoding, every kind of corruption, the
 * identity of the world it was written in (boot, namespace, devices), the
 * format 1 journals before it, records set aside, and the file's life */
#include <inttypes.h>
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

#include "tk_assert.h"
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

static const struct qaj_ident IDENT = { "83782c3f-14f6-4696-a14a-0d668e54621d", 4026532384, 25700 };

/* a route record of r, whose one device (ifindex 2) is named dev */
static int fmt_route(char *buf, size_t cap, uint64_t seq, uint64_t t, const char *op, const struct qa_route *r,
		     const char *dev)
{
	struct qaj_dev d[2];
	size_t n = qaj_route_devs(r, d, 2);

	assert_int_equal(n, 1);
	assert_int_equal(d[0].ifindex, 2);
	snprintf(d[0].name, sizeof(d[0].name), "%s", dev);
	return qaj_format_route(buf, cap, seq, t, op, false, r, d, n);
}

/* a journal with a header and two route records, in buf */
static size_t sample(char *buf, size_t cap, const char *netns)
{
	struct qa_route a, b;
	int n, m, k;

	route(&a, "10.0.1.0", RT_TABLE_MAIN);
	route(&b, "10.0.2.0", 100);
	n = qaj_format_header(buf, cap, netns, 1700000000, &IDENT);
	tk_assert_cmp(n, >, 0);
	m = fmt_route(buf + n, cap - (size_t)n, 1, 1700000001, "on", &a, "d0");
	tk_assert_cmp(m, >, 0);
	k = fmt_route(buf + n + m, cap - (size_t)(n + m), 2, 1700000002, "congctl", &b, "d0");
	tk_assert_cmp(k, >, 0);
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
	assert_int_equal(j.version, QAJ_VERSION);
	assert_string_equal(j.netns, "rp-recv");
	assert_int_equal(j.created_s, 1700000000);
	assert_true(j.has_ident);
	assert_string_equal(j.ident.boot, IDENT.boot);
	assert_int_equal(j.ident.netns_ino, 4026532384);
	assert_int_equal(j.ident.netns_cookie, 25700);
	assert_true(j.e[0].has_devs);
	assert_int_equal(j.e[0].ndevs, 1);
	assert_int_equal(j.e[0].devs[0].ifindex, 2);
	assert_string_equal(j.e[0].devs[0].name, "d0");
	/* each record knows its line, for copying it as it is */
	assert_int_equal(j.header_len, (size_t)(strchr(buf, '\n') - buf + 1));
	assert_int_equal(j.e[0].line_off, j.header_len);
	assert_int_equal(j.e[1].line_off, j.e[0].line_off + j.e[0].line_len);
	assert_int_equal(j.e[1].line_off + j.e[1].line_len, len);
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

	/* the line format itself is stable: version 4 as documented */
	assert_non_null(strstr(buf, "bbrkit-quickack-journal 4 netns=rp-recv created=1700000000 "
				    "boot=83782c3f-14f6-4696-a14a-0d668e54621d netns_ino=4026532384 netns_cookie=25700 crc="));
	assert_non_null(strstr(buf, "\nroute seq=1 time=1700000001 op=on family=inet table=254 dst=10.0.1.0/24 metric=0 devs=2:d0 state="));
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
	assert_int_equal(j.nsc, 0);
	assert_null(j.sc);
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
	len = edit(buf, len, "bbrkit-quickack-journal 4", "bbrkit-quickack-journal 5", false);
	expect_corrupt(buf, len, 1, "journal version 5 is not supported (this quickack reads versions 1 to 4)");

	len = FRESH();
	len = edit(buf, len, "bbrkit-quickack-journal 4", "bbrkit-quickack-journal 0", false);
	expect_corrupt(buf, len, 1, "journal version 0 is not supported");

	/* the identity: versions 2 and 3 have it, whole and well formed */
	len = FRESH();
	len = edit(buf, len, " boot=83782c3f-14f6-4696-a14a-0d668e54621d", "", true);
	expect_corrupt(buf, len, 1, "expected field 'boot=' here, found 'netns_ino=");

	len = FRESH();
	len = edit(buf, len, "boot=83782c3f", "boot=83782C3F", true);
	expect_corrupt(buf, len, 1, "field 'boot' is not a boot id");

	len = FRESH();
	len = edit(buf, len, "netns_cookie=25700", "netns_cookie=x", true);
	expect_corrupt(buf, len, 1, "field 'netns_cookie' is not a decimal number");

	/* devs= must name state's devices, each as IFINDEX:NAME */
	len = FRESH();
	len = edit(buf, len, "devs=2:d0", "devs=3:d0", true);
	expect_corrupt(buf, len, 2, "field 'devs' does not list the saved route's devices");

	len = FRESH();
	len = edit(buf, len, "devs=2:d0", "devs=-", true);
	expect_corrupt(buf, len, 2, "field 'devs' does not list the saved route's devices");

	len = FRESH();
	len = edit(buf, len, "devs=2:d0", "devs=2:d0,2:d0", true);
	expect_corrupt(buf, len, 2, "field 'devs' does not list the saved route's devices");

	len = FRESH();
	len = edit(buf, len, "devs=2:d0", "devs=d0", true);
	expect_corrupt(buf, len, 2, "field 'devs' has an item that is not IFINDEX:NAME");

	len = FRESH();
	len = edit(buf, len, "devs=2:d0", "devs=0:d0", true);
	expect_corrupt(buf, len, 2, "field 'devs' has an ifindex out of range");

	len = FRESH();
	len = edit(buf, len, "devs=2:d0", "devs=2:d/0", true);
	expect_corrupt(buf, len, 2, "field 'devs' has a character that must be escaped");

	len = FRESH();
	len = edit(buf, len, "devs=2:d0", "devs=2:d00000000000000000", true);
	expect_corrupt(buf, len, 2, "field 'devs' is too long");

	len = FRESH();
	len = edit(buf, len, " devs=2:d0", "", true);
	expect_corrupt(buf, len, 2, "expected field 'devs=' here, found 'state=");

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
	expect_corrupt(buf, len, 4, "void names seq 7, which no route or scope record has");

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
	tk_assert_cmp(j.valid_len, <, full);
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
	k = fmt_route(buf, sizeof(buf), 1, 5, "on", &a, "d0");
	n += (size_t)k;
	k = fmt_route(buf + n, sizeof(buf) - n, 2, 5, "on", &b, "d0");
	n += (size_t)k;
	assert_int_equal(qaj_append(&f, "ns1", &IDENT, buf, n, msg, sizeof(msg)), QAJ_OK);
	/* a second writer waits for the lock, and gives up after its timeout */
	assert_int_equal(qaj_open(&g, path, true, true, 50, msg, sizeof(msg)), QAJ_EIO);
	assert_non_null(strstr(msg, "is locked by another quickack (waited 50 ms)"));
	qaj_close(&f);

	assert_int_equal(qaj_open(&f, path, true, false, 100, msg, sizeof(msg)), QAJ_OK);
	assert_int_equal(f.j.n, 2);
	assert_string_equal(f.j.netns, "ns1");
	/* keep only the second route */
	keep[0] = &f.j.e[1];
	assert_int_equal(qaj_rewrite(&f, keep, 1, msg, sizeof(msg)), QAJ_OK);
	qaj_close(&f);
	assert_int_equal(qaj_open(&f, path, true, false, 100, msg, sizeof(msg)), QAJ_OK);
	assert_int_equal(f.j.n, 1);
	assert_int_equal(f.j.e[0].seq, 2);
	assert_int_equal(f.j.e[0].route.table, 100);
	/* the header is copied as it was, identity and all */
	assert_string_equal(f.j.ident.boot, IDENT.boot);
	/* nothing left: the journal goes away */
	assert_int_equal(qaj_rewrite(&f, NULL, 0, msg, sizeof(msg)), QAJ_OK);
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
	n = (size_t)qaj_format_header(buf, sizeof(buf), "-", 1, &IDENT);
	fp = fopen(path, "w");
	fwrite(buf, 1, n, fp);
	fputs("route seq=1 ti", fp);
	fclose(fp);
	assert_int_equal(qaj_open(&f, path, true, false, 100, msg, sizeof(msg)), QAJ_OK);
	assert_true(f.j.torn_tail);
	k = fmt_route(buf, sizeof(buf), 1, 5, "on", &a, "d0");
	assert_int_equal(qaj_append(&f, "-", &IDENT, buf, (size_t)k, msg, sizeof(msg)), QAJ_OK);
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

/* a format 1 journal (before the identity records): the sample with its
 * identity fields and devices taken out */
static size_t sample_v1(char *buf, size_t cap)
{
	size_t len = sample(buf, cap, "ns1");

	len = edit(buf, len, "bbrkit-quickack-journal 4", "bbrkit-quickack-journal 1", true);
	len = edit(buf, len, " boot=83782c3f-14f6-4696-a14a-0d668e54621d netns_ino=4026532384 netns_cookie=25700", "", true);
	len = edit(buf, len, " devs=2:d0", "", true);
	return edit(buf, len, " devs=2:d0", "", true);
}

static void test_format1(void **state)
{
	char buf[4096], copy[4096];
	size_t len = sample_v1(buf, sizeof(buf));
	struct qaj j;
	struct qaj_error e;
	(void)state;

	assert_null(strstr(buf, "devs="));
	assert_int_equal(qaj_parse(buf, len, &j, &e), 0);
	assert_int_equal(j.version, 1);
	assert_false(j.has_ident);
	assert_string_equal(j.ident.boot, "");
	assert_int_equal(j.ident.netns_ino, 0);
	assert_int_equal(j.n, 2);
	assert_false(j.e[0].has_devs);
	assert_int_equal(j.e[0].ndevs, 0);
	assert_null(j.e[0].devs);
	assert_int_equal(j.e[0].route.oif, 2);
	qaj_free(&j);
	/* a version 1 line with a version 2 field is not version 1 */
	memcpy(copy, buf, len + 1);
	len = edit(copy, len, "metric=0 state=", "metric=0 devs=2:d0 state=", true);
	expect_corrupt(copy, len, 2, "expected field 'state=' here, found 'devs=2:d0'");
}

static void test_dev_names(void **state)
{
	static const char *const names[] = { "a,b", "-", "", "x%y", "0123456789abcde", "p:q=r" };
	char buf[4096];
	struct qa_route a;
	struct qaj j;
	struct qaj_error e;
	(void)state;

	route(&a, "10.0.1.0", RT_TABLE_MAIN);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int n = qaj_format_header(buf, sizeof(buf), "-", 1, &IDENT), m;

		m = fmt_route(buf + n, sizeof(buf) - (size_t)n, 1, 1, "on", &a, names[i]);
		tk_assert_cmp(m, >, 0);
		tk_assert_cmp((size_t)m, <=, qaj_route_line_max(&a, 1));
		assert_int_equal(qaj_parse(buf, (size_t)(n + m), &j, &e), 0);
		assert_string_equal(j.e[0].devs[0].name, names[i]);
		qaj_free(&j);
	}
	/* what the escapes look like: a comma is not a separator, "-" is not "no devices" */
	fmt_route(buf, sizeof(buf), 1, 1, "on", &a, "a,b");
	assert_non_null(strstr(buf, " devs=2:a%2Cb "));
	fmt_route(buf, sizeof(buf), 1, 1, "on", &a, "-");
	assert_non_null(strstr(buf, " devs=2:%2D "));
	/* an unknown boot is "-" */
	{
		struct qaj_ident none = { "", 0, 0 };
		int n = qaj_format_header(buf, sizeof(buf), "-", 1, &none);

		assert_non_null(strstr(buf, " boot=- netns_ino=0 netns_cookie=0 crc="));
		assert_int_equal(qaj_parse(buf, (size_t)n, &j, &e), 0);
		assert_true(j.has_ident);
		assert_string_equal(j.ident.boot, "");
	}
	qa_route_free(&a);
}

/* a route through a device made again: the same bytes, but its ifindex */
static void test_remap(void **state)
{
	struct qa_route a, b;
	struct qaj_dev d[2];
	uint32_t from = 2, to = 9, oif;
	uint8_t ra[512], rb[512];
	int na, nb, diff = 0;
	char err[128];
	(void)state;

	route(&a, "10.0.1.0", RT_TABLE_MAIN);
	assert_int_equal(qa_route_remap_devs(&a, &from, &to, 1, &b, err, sizeof(err)), 0);
	assert_int_equal(b.oif, 9);
	assert_int_equal(qaj_route_devs(&b, d, 2), 1);
	assert_int_equal(d[0].ifindex, 9);
	na = qa_route_request(&a, NULL, ra, sizeof(ra));
	nb = qa_route_request(&b, NULL, rb, sizeof(rb));
	assert_int_equal(na, nb);
	for (int i = 0; i < na; i++)
		diff += ra[i] != rb[i];
	assert_int_equal(diff, 1); /* 2 -> 9: one byte of RTA_OIF */
	memcpy(&oif, b.msg + b.attr_off[RTA_OIF] + 4, 4);
	assert_int_equal(oif, 9);
	/* an ifindex not in the map stays */
	from = 5;
	qa_route_free(&b);
	assert_int_equal(qa_route_remap_devs(&a, &from, &to, 1, &b, err, sizeof(err)), 0);
	assert_int_equal(b.oif, 2);
	qa_route_free(&b);
	qa_route_free(&a);
}

static size_t file_bytes(const char *path, char *buf, size_t cap)
{
	FILE *fp = fopen(path, "r");
	size_t n;

	assert_non_null(fp);
	n = fread(buf, 1, cap - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	return n;
}

/* three records, the third voided; in path, and its bytes in buf */
static size_t three_records(const char *path, char *buf, size_t cap)
{
	struct qa_route r[3];
	size_t n;
	FILE *fp;

	route(&r[0], "10.0.1.0", RT_TABLE_MAIN);
	route(&r[1], "10.0.2.0", RT_TABLE_MAIN);
	route(&r[2], "10.0.3.0", RT_TABLE_MAIN);
	n = (size_t)qaj_format_header(buf, cap, "ns1", 7, &IDENT);
	for (int i = 0; i < 3; i++) {
		n += (size_t)fmt_route(buf + n, cap - n, (uint64_t)i + 1, 8, "on", &r[i], "d0");
		qa_route_free(&r[i]);
	}
	n += (size_t)qaj_format_void(buf + n, cap - n, 3);
	fp = fopen(path, "w");
	fwrite(buf, 1, n, fp);
	fclose(fp);
	return n;
}

static void test_set_aside(void **state)
{
	char dir[] = "/tmp/qa-unit-XXXXXX", path[256], side[512], side2[512], msg[512];
	char orig[8192], got[8192], want[8192];
	bool aside[3] = { true, false, true }, both[2] = { true, true }, none[1] = { false };
	struct qaj_file f, g;
	struct qa_route a;
	size_t n, w;
	int k;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/quickack.journal", dir);
	n = three_records(path, orig, sizeof(orig));
	assert_int_equal(qaj_open(&f, path, true, false, 100, msg, sizeof(msg)), QAJ_OK);
	assert_int_equal(qaj_set_aside(&f, aside, side, sizeof(side), msg, sizeof(msg)), QAJ_OK);
	/* the side file: the header and records 1 and 3 (with its void), byte for byte */
	assert_int_equal(strncmp(side, path, strlen(path)), 0);
	assert_int_equal(strncmp(side + strlen(path), ".stale-", 7), 0);
	assert_int_equal(strlen(side + strlen(path) + 7), 16); /* YYYYMMDDTHHMMSSZ */
	w = (size_t)(strchr(orig, '\n') - orig + 1);
	memcpy(want, orig, w);
	{
		const char *l2 = orig + w, *l3 = strchr(l2, '\n') + 1, *l4 = strchr(l3, '\n') + 1;

		memcpy(want + w, l2, (size_t)(l3 - l2));
		w += (size_t)(l3 - l2);
		memcpy(want + w, l4, n - (size_t)(l4 - orig));
		w += n - (size_t)(l4 - orig);
		want[w] = '\0';
		assert_int_equal(file_bytes(side, got, sizeof(got)), w);
		assert_string_equal(got, want);
		/* the journal keeps record 2, as it was */
		assert_int_equal(f.j.n, 1);
		assert_int_equal(f.j.e[0].seq, 2);
		file_bytes(path, got, sizeof(got));
		assert_int_equal(strncmp(got, orig, (size_t)(l2 - orig)), 0); /* the header as it was */
		assert_int_equal(strncmp(got + (l2 - orig), l3, (size_t)(l4 - l3)), 0);
		assert_null(strstr(got, "route seq=1 "));
	}
	/* still locked by us, on the new file */
	assert_int_equal(qaj_open(&g, path, true, false, 50, msg, sizeof(msg)), QAJ_EIO);
	assert_non_null(strstr(msg, "is locked by another quickack"));
	/* an append goes on with the next seq */
	route(&a, "10.0.4.0", RT_TABLE_MAIN);
	k = fmt_route(got, sizeof(got), f.j.last_seq + 1, 9, "on", &a, "d0");
	assert_int_equal(f.j.last_seq, 3);
	assert_int_equal(qaj_append(&f, "ns1", &IDENT, got, (size_t)k, msg, sizeof(msg)), QAJ_OK);
	qa_route_free(&a);
	qaj_close(&f);
	assert_int_equal(qaj_open(&f, path, true, false, 100, msg, sizeof(msg)), QAJ_OK);
	assert_int_equal(f.j.n, 2);
	assert_int_equal(f.j.e[1].seq, 4);
	/* all of it aside: the journal is emptied, and gone when nothing is appended */
	assert_int_equal(qaj_set_aside(&f, both, side2, sizeof(side2), msg, sizeof(msg)), QAJ_OK);
	assert_string_not_equal(side, side2);
	assert_int_equal(f.j.n, 0);
	assert_false(f.j.has_header);
	qaj_close(&f);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(access(side2, F_OK), 0);
	/* a header alone: nothing set aside, no side file */
	n = (size_t)qaj_format_header(orig, sizeof(orig), "ns1", 7, &IDENT);
	{
		FILE *fp = fopen(path, "w");

		fwrite(orig, 1, n, fp);
		fclose(fp);
	}
	assert_int_equal(qaj_open(&f, path, true, false, 100, msg, sizeof(msg)), QAJ_OK);
	assert_int_equal(qaj_set_aside(&f, none, side2, sizeof(side2), msg, sizeof(msg)), QAJ_OK);
	assert_string_equal(side2, "");
	qaj_close(&f);
	unlink(path);
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		assert_int_equal(system(cmd), 0);
	}
}

/* a format 1 journal rewritten stays format 1, its lines as they were */
static void test_rewrite_keeps_lines(void **state)
{
	char dir[] = "/tmp/qa-unit-XXXXXX", path[256], buf[4096], got[4096], msg[256];
	size_t len = sample_v1(buf, sizeof(buf));
	const struct qaj_entry *keep[1];
	struct qaj_file f;
	FILE *fp;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/j", dir);
	fp = fopen(path, "w");
	fwrite(buf, 1, len, fp);
	fclose(fp);
	assert_int_equal(qaj_open(&f, path, true, false, 100, msg, sizeof(msg)), QAJ_OK);
	keep[0] = &f.j.e[1];
	assert_int_equal(qaj_rewrite(&f, keep, 1, msg, sizeof(msg)), QAJ_OK);
	qaj_close(&f);
	file_bytes(path, got, sizeof(got));
	/* the header and the second record, exactly */
	assert_int_equal(strncmp(got, buf, (size_t)(strchr(buf, '\n') - buf + 1)), 0);
	assert_string_equal(strchr(got, '\n') + 1, strchr(strchr(buf, '\n') + 1, '\n') + 1);
	unlink(path);
	rmdir(dir);
}

/*
 * An added record (a host route quickack made) reads back as one, only in
 * a version 3 journal or later; a version 2 journal takes one only after its
 * header is made this version's, its records kept byte for byte.
 */
static void test_added_records(void **state)
{
	char dir[] = "/tmp/qa-unit-XXXXXX", path[256], buf[8192], v2[8192], got[8192], line[2048], msg[512];
	size_t len = sample(buf, sizeof(buf), "ns1"), v2len, hlen;
	struct qaj_dev d[2];
	struct qa_route h;
	struct qaj_file f;
	struct qaj j;
	struct qaj_error e;
	FILE *fp;
	int k;
	(void)state;

	route(&h, "10.0.3.0", RT_TABLE_MAIN);
	k = qaj_format_route(line, sizeof(line), 3, 1700000003, "on", true, &h, d, qaj_route_devs(&h, d, 2));
	tk_assert_cmp(k, >, 0);
	assert_int_equal(strncmp(line, "added seq=3 time=1700000003 op=on family=inet ", 46), 0);
	memcpy(buf + len, line, (size_t)k + 1);
	assert_int_equal(qaj_parse(buf, len + (size_t)k, &j, &e), 0);
	assert_int_equal(j.n, 3);
	assert_false(j.e[1].added);
	assert_true(j.e[2].added);
	assert_int_equal(j.e[2].route.len, h.len);
	qaj_free(&j);

	/* the same lines under a version 2 header: the added record is refused */
	v2len = edit(buf, len + (size_t)k, "bbrkit-quickack-journal 4", "bbrkit-quickack-journal 2", true);
	expect_corrupt(buf, v2len, 4, "an added record in a version 2 journal (added records came with version 3)");

	/* a version 2 journal of route records, appended to: version 4, records as they were */
	len = sample(buf, sizeof(buf), "ns1");
	v2len = edit(buf, len, "bbrkit-quickack-journal 4", "bbrkit-quickack-journal 2", true);
	memcpy(v2, buf, v2len + 1);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/j", dir);
	fp = fopen(path, "w");
	fwrite(v2, 1, v2len, fp);
	fclose(fp);
	assert_int_equal(qaj_open(&f, path, true, false, 100, msg, sizeof(msg)), QAJ_OK);
	assert_int_equal(f.j.version, 2);
	assert_int_equal(qaj_append(&f, "ns1", &IDENT, line, (size_t)k, msg, sizeof(msg)), QAJ_OK);
	qaj_close(&f);
	file_bytes(path, got, sizeof(got));
	assert_int_equal(strncmp(got, "bbrkit-quickack-journal 4 netns=ns1 created=1700000000 ", 55), 0);
	/* after the header: the old records, byte for byte, then the new one */
	hlen = (size_t)(strchr(v2, '\n') + 1 - v2);
	assert_int_equal(strncmp(strchr(got, '\n') + 1, v2 + hlen, v2len - hlen), 0);
	assert_string_equal(strchr(got, '\n') + 1 + (v2len - hlen), line);
	assert_int_equal(qaj_open(&f, path, false, false, 100, msg, sizeof(msg)), QAJ_OK);
	assert_int_equal(f.j.version, QAJ_VERSION);
	assert_int_equal(f.j.n, 3);
	assert_true(f.j.e[2].added);
	qaj_close(&f);
	qa_route_free(&h);
	unlink(path);
	rmdir(dir);
}

/* a socket scope's record, as scope.c writes it */
static int fmt_scope(char *buf, size_t cap, uint64_t seq)
{
	struct qaj_scope sc = { .seq = seq, .time_s = 1700000003, .op = "on", .side = QS_SIDE_RECV,
				.ports = { 1935, 8080 }, .nports = 2, .cgroup_id = 42 };

	snprintf(sc.cgroup, sizeof(sc.cgroup), "/sys/fs/cgroup/ingest");
	snprintf(sc.pin, sizeof(sc.pin), "/sys/fs/bpf/bbrkit/quickack/25700-%" PRIu64, seq);
	return qaj_format_scope(buf, cap, &sc);
}

/*
 * A scope record reads back whole, only in a version 4 journal; each field
 * is checked; a void record can name it; rewrite and set_aside keep its
 * line until whoever undid it clears keep.
 */
static void test_scope_records(void **state)
{
	char dir[] = "/tmp/qa-unit-XXXXXX", path[256], base[8192], buf[8192], got[8192], line[QAJ_SCOPE_LINE_MAX], msg[512];
	size_t blen = sample(base, sizeof(base), "ns1"), len;
	int k = fmt_scope(line, sizeof(line), 3);
	const struct qaj_entry *keep[1];
	bool aside[2] = { true, false };
	char side[PATH_MAX + 64];
	struct qaj_file f;
	struct qaj j;
	struct qaj_error e;
	FILE *fp;
	(void)state;

	tk_assert_cmp(k, >, 0);
	assert_int_equal(strncmp(line, "scope seq=3 time=1700000003 op=on side=recv ports=1935,8080 "
			       "cgroup=%2Fsys%2Ffs%2Fcgroup%2Fingest cgroup_id=42 "
			       "pin=%2Fsys%2Ffs%2Fbpf%2Fbbrkit%2Fquickack%2F25700-3 crc=", 154), 0);
	memcpy(base + blen, line, (size_t)k + 1);
	blen += (size_t)k;
	assert_int_equal(qaj_parse(base, blen, &j, &e), 0);
	assert_int_equal(j.n, 2);
	assert_int_equal(j.nsc, 1);
	assert_int_equal(j.last_seq, 3);
	assert_int_equal(j.sc[0].seq, 3);
	assert_int_equal(j.sc[0].side, QS_SIDE_RECV);
	assert_int_equal(j.sc[0].nports, 2);
	assert_int_equal(j.sc[0].ports[0], 1935);
	assert_int_equal(j.sc[0].ports[1], 8080);
	assert_string_equal(j.sc[0].cgroup, "/sys/fs/cgroup/ingest");
	assert_int_equal(j.sc[0].cgroup_id, 42);
	assert_string_equal(j.sc[0].pin, "/sys/fs/bpf/bbrkit/quickack/25700-3");
	assert_true(j.sc[0].keep);
	assert_false(j.sc[0].voided);
	qaj_free(&j);

	/* its void record */
	len = blen + (size_t)qaj_format_void(base + blen, sizeof(base) - blen, 3);
	assert_int_equal(qaj_parse(base, len, &j, &e), 0);
	assert_true(j.sc[0].voided);
	qaj_free(&j);

	/* under an older header, and each field wrong in turn (crcs made right) */
#define SCOPE_BAD(from, to, want)                                        \
	do {                                                             \
		memcpy(buf, base, blen + 1);                             \
		len = edit(buf, blen, from, to, true);                   \
		expect_corrupt(buf, len, 4, want);                       \
	} while (0)
	memcpy(buf, base, blen + 1);
	len = edit(buf, blen, "bbrkit-quickack-journal 4", "bbrkit-quickack-journal 3", true);
	expect_corrupt(buf, len, 4, "a scope record in a version 3 journal (scope records came with version 4)");
	SCOPE_BAD("scope seq=3", "scope seq=2", "seq 2 does not follow 2");
	SCOPE_BAD("op=on side", "op=off side", "unknown op 'off' for a scope");
	SCOPE_BAD("side=recv", "side=both", "field 'side' is neither recv nor send");
	SCOPE_BAD("ports=1935,8080", "ports=0", "field 'ports' is not a list of ports 1 to 65535");
	SCOPE_BAD("ports=1935,8080", "ports=70000", "field 'ports' is not a list of ports 1 to 65535");
	SCOPE_BAD("ports=1935,8080", "ports=1935,", "field 'ports' is not a list of ports 1 to 65535");
	SCOPE_BAD("ports=1935,8080", "ports=1,2,3,4,5,6,7,8,9", "field 'ports' names more than 8 ports");
	SCOPE_BAD("ports=1935,8080", "ports=", "field 'ports' is empty");
	SCOPE_BAD("cgroup=%2Fsys", "cgroup=/sys", "field 'cgroup' has a character that must be escaped");
	SCOPE_BAD("cgroup_id=42", "cgroup_id=x", "field 'cgroup_id' is not a decimal number");
	SCOPE_BAD("25700-3 crc=", "25700-3 extra=1 crc=", "unexpected text after the last field");
#undef SCOPE_BAD

	/* a file: rewrite with no route kept keeps the scope; set aside, it stays */
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/j", dir);
	fp = fopen(path, "w");
	fwrite(base, 1, blen, fp);
	fclose(fp);
	assert_int_equal(qaj_open(&f, path, true, false, 100, msg, sizeof(msg)), QAJ_OK);
	assert_int_equal(qaj_set_aside(&f, aside, side, sizeof(side), msg, sizeof(msg)), QAJ_OK);
	assert_int_equal(f.j.n, 1);
	assert_int_equal(f.j.nsc, 1);
	file_bytes(side, got, sizeof(got));
	assert_null(strstr(got, "\nscope "));
	unlink(side);
	keep[0] = &f.j.e[0];
	assert_int_equal(qaj_rewrite(&f, keep, 0, msg, sizeof(msg)), QAJ_OK);
	qaj_close(&f);
	file_bytes(path, got, sizeof(got));
	assert_int_equal(strncmp(got, base, (size_t)(strchr(base, '\n') - base + 1)), 0);
	assert_string_equal(strchr(got, '\n') + 1, line);
	/* undone: the journal goes */
	assert_int_equal(qaj_open(&f, path, true, false, 100, msg, sizeof(msg)), QAJ_OK);
	f.j.sc[0].keep = false;
	assert_int_equal(qaj_rewrite(&f, keep, 0, msg, sizeof(msg)), QAJ_OK);
	qaj_close(&f);
	assert_int_equal(access(path, F_OK), -1);
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
		cmocka_unit_test(test_format1),
		cmocka_unit_test(test_dev_names),
		cmocka_unit_test(test_remap),
		cmocka_unit_test(test_set_aside),
		cmocka_unit_test(test_rewrite_keeps_lines),
		cmocka_unit_test(test_added_records),
		cmocka_unit_test(test_scope_records),
		cmocka_unit_test(test_default_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
