// SPDX-License-Identifier: GPL-2.0-only
/*
 * lib/prom: the exposition text, exactly; the request classifier and the
 * listen-address parser; and the server, over real TCP on loopback.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <math.h>
#include <poll.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "tk_assert.h"

#include "log.h"
#include "prom.h"

static void test_family_and_samples(void **state)
{
	struct prom_buf b;
	struct prom_label l[2] = { { "port", "5004" }, { "comm", "sfu" } };
	(void)state;

	prom_buf_init(&b);
	assert_int_equal(prom_family(&b, "udp_socket_drops_total", PROM_COUNTER,
				     "Drops.\nSecond line with \\ backslash"), 0);
	assert_int_equal(prom_sample_u64(&b, "udp_socket_drops_total", l, 2, 18446744073709551615ULL), 0);
	assert_int_equal(prom_family(&b, "up", PROM_GAUGE, NULL), 0);
	assert_int_equal(prom_sample(&b, "up", NULL, 0, 1), 0);
	assert_string_equal(b.data,
			    "# HELP udp_socket_drops_total Drops.\\nSecond line with \\\\ backslash\n"
			    "# TYPE udp_socket_drops_total counter\n"
			    "udp_socket_drops_total{port=\"5004\",comm=\"sfu\"} 18446744073709551615\n"
			    "# TYPE up gauge\n"
			    "up 1\n");
	prom_buf_free(&b);
}

static void test_label_values_are_escaped(void **state)
{
	struct prom_buf b;
	struct prom_label l[1] = { { "comm", "a\"b\\c\nd" } };
	(void)state;

	prom_buf_init(&b);
	assert_int_equal(prom_sample(&b, "x", l, 1, 2.5), 0);
	assert_string_equal(b.data, "x{comm=\"a\\\"b\\\\c\\nd\"} 2.5\n");
	prom_buf_free(&b);
}

static void test_invalid_names_fail(void **state)
{
	struct prom_buf b;
	struct prom_label bad[1] = { { "0port", "1" } };
	struct prom_label reserved[1] = { { "__name__", "1" } };
	(void)state;

	assert_true(prom_valid_metric_name("a:b_c9"));
	assert_false(prom_valid_metric_name("9a"));
	assert_false(prom_valid_metric_name("a-b"));
	assert_false(prom_valid_metric_name(""));
	assert_true(prom_valid_label_name("le"));
	assert_false(prom_valid_label_name("a:b"));
	prom_buf_init(&b);
	assert_int_equal(prom_family(&b, "bad name", PROM_GAUGE, "x"), -1);
	assert_true(b.failed);
	prom_buf_reset(&b);
	assert_false(b.failed);
	assert_int_equal(prom_sample(&b, "x", bad, 1, 1), -1);
	prom_buf_reset(&b);
	assert_int_equal(prom_sample(&b, "x", reserved, 1, 1), -1);
	prom_buf_free(&b);
}

static void test_values(void **state)
{
	char v[64];
	(void)state;

	prom_format_value(v, sizeof(v), 1e-5);
	assert_string_equal(v, "1e-05");
	prom_format_value(v, sizeof(v), 0.0005);
	assert_string_equal(v, "0.0005");
	prom_format_value(v, sizeof(v), 0.1);
	assert_string_equal(v, "0.1");
	prom_format_value(v, sizeof(v), 123456789);
	assert_string_equal(v, "123456789");
	prom_format_value(v, sizeof(v), -3);
	assert_string_equal(v, "-3");
	prom_format_value(v, sizeof(v), INFINITY);
	assert_string_equal(v, "+Inf");
	prom_format_value(v, sizeof(v), -INFINITY);
	assert_string_equal(v, "-Inf");
	prom_format_value(v, sizeof(v), NAN);
	assert_string_equal(v, "NaN");
	prom_format_value(v, sizeof(v), 0.30000000000000004);
	assert_string_equal(v, "0.30000000000000004");
}

static void test_histogram_is_cumulative(void **state)
{
	static const double le[2] = { 1e-5, 5e-5 };
	static const uint64_t counts[3] = { 3, 0, 2 };
	struct prom_label l[1] = { { "port", "1" } };
	struct prom_buf b;
	(void)state;

	prom_buf_init(&b);
	assert_int_equal(prom_histogram(&b, "d_seconds", l, 1, le, counts, 2, 0.25), 0);
	assert_string_equal(b.data,
			    "d_seconds_bucket{port=\"1\",le=\"1e-05\"} 3\n"
			    "d_seconds_bucket{port=\"1\",le=\"5e-05\"} 3\n"
			    "d_seconds_bucket{port=\"1\",le=\"+Inf\"} 5\n"
			    "d_seconds_sum{port=\"1\"} 0.25\n"
			    "d_seconds_count{port=\"1\"} 5\n");
	prom_buf_reset(&b);
	assert_int_equal(prom_histogram(&b, "h", NULL, 0, le, counts, 2, 0), 0);
	assert_non_null(strstr(b.data, "h_bucket{le=\"+Inf\"} 5\n"));
	assert_non_null(strstr(b.data, "h_count 5\n"));
	prom_buf_free(&b);
}

static void test_buffer_grows(void **state)
{
	struct prom_buf b;
	(void)state;

	prom_buf_init(&b);
	for (int i = 0; i < 5000; i++)
		assert_int_equal(prom_sample(&b, "metric_with_a_long_name", NULL, 0, i), 0);
	tk_assert_cmp(b.len, >, 100000);
	assert_int_equal(strlen(b.data), b.len);
	assert_non_null(strstr(b.data, "metric_with_a_long_name 4999\n"));
	prom_buf_free(&b);
}

static void test_parse_request(void **state)
{
	bool head;
	char big[PROM_MAX_REQUEST + 10];
	(void)state;

#define REQ(s) prom_parse_request(s, strlen(s), &head)
	assert_int_equal(REQ("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"), PROM_REQ_METRICS);
	assert_false(head);
	assert_int_equal(REQ("HEAD /metrics HTTP/1.0\r\n\r\n"), PROM_REQ_METRICS);
	assert_true(head);
	assert_int_equal(REQ("GET /metrics?x=1 HTTP/1.1\n\n"), PROM_REQ_METRICS);
	assert_int_equal(REQ("GET /metricsx HTTP/1.1\r\n\r\n"), PROM_REQ_NOT_FOUND);
	assert_int_equal(REQ("GET / HTTP/1.1\r\n\r\n"), PROM_REQ_NOT_FOUND);
	assert_int_equal(REQ("POST /metrics HTTP/1.1\r\n\r\n"), PROM_REQ_BAD_METHOD);
	assert_int_equal(REQ("GET /metrics\r\n\r\n"), PROM_REQ_BAD);
	assert_int_equal(REQ("get /metrics HTTP/1.1\r\n\r\n"), PROM_REQ_BAD);
	assert_int_equal(REQ("GET /metrics FTP/1.1\r\n\r\n"), PROM_REQ_BAD);
	assert_int_equal(REQ("GET /metrics HTTP/1.1\r\nHost: x\r\n"), PROM_REQ_INCOMPLETE);
	assert_int_equal(REQ(""), PROM_REQ_INCOMPLETE);
	memset(big, 'a', sizeof(big));
	assert_int_equal(prom_parse_request(big, sizeof(big), &head), PROM_REQ_TOO_LARGE);
#undef REQ
}

/* --- the server, over loopback -------------------------------------------------- */

static int renders;

static int render_ok(struct prom_buf *b, void *ctx)
{
	(void)ctx;
	renders++;
	prom_family(b, "test_up", PROM_GAUGE, "Always 1.");
	return prom_sample(b, "test_up", NULL, 0, 1);
}

static int render_fail(struct prom_buf *b, void *ctx)
{
	(void)b;
	(void)ctx;
	return -1;
}

/* sends req (NULL: nothing), returns what came back until close, in out */
static void http(uint16_t port, const char *req, char *out, size_t cap)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	size_t len = 0;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	tk_assert_cmp(fd, >=, 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	if (req)
		assert_int_equal(send(fd, req, strlen(req), 0), (ssize_t)strlen(req));
	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t n;

		tk_assert_cmp(poll(&p, 1, 10000), ==, 1); /* bounded: the test fails, not hangs */
		n = recv(fd, out + len, cap - 1 - len, 0);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	out[len] = '\0';
	close(fd);
}

static void test_server(void **state)
{
	char err[256], out[16384], req[PROM_MAX_REQUEST + 64];
	struct prom_server *s;
	uint16_t port;
	(void)state;

	s = prom_server_start("127.0.0.1:0", render_ok, NULL, NULL, err, sizeof(err));
	assert_non_null(s);
	port = prom_server_port(s);
	tk_assert_cmp(port, >, 0);

	http(port, "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n", out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 200 OK\r\n"));
	assert_non_null(strstr(out, "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
	assert_non_null(strstr(out, "Content-Length: 56\r\n"));
	assert_non_null(strstr(out, "\r\n\r\n# HELP test_up Always 1.\n# TYPE test_up gauge\ntest_up 1\n"));
	assert_int_equal(renders, 1);

	http(port, "HEAD /metrics HTTP/1.1\r\n\r\n", out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 200 OK\r\n"));
	assert_null(strstr(out, "test_up 1"));

	http(port, "GET /other HTTP/1.1\r\n\r\n", out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 404 Not Found\r\n"));
	http(port, "DELETE /metrics HTTP/1.1\r\n\r\n", out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 405 Method Not Allowed\r\n"));
	assert_non_null(strstr(out, "Allow: GET, HEAD\r\n"));
	http(port, "nonsense\r\n\r\n", out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 400 Bad Request\r\n"));
	memset(req, 'x', sizeof(req) - 1);
	req[sizeof(req) - 1] = '\0';
	memcpy(req, "GET /metrics HTTP/1.1\r\nX: ", 26);
	http(port, req, out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 431 "));

	/* a client that says nothing is cut off after the timeout */
	{
		struct timespec t0, t1;
		double secs;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		http(port, NULL, out, sizeof(out));
		clock_gettime(CLOCK_MONOTONIC, &t1);
		secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		assert_non_null(strstr(out, "HTTP/1.1 408 Request Timeout\r\n"));
		tk_assert_cmp(secs, >=, PROM_IO_TIMEOUT_MS / 1000.0 - 0.05);
	}
	/* and the server still answers afterwards */
	http(port, "GET /metrics HTTP/1.0\r\n\r\n", out, sizeof(out));
	assert_non_null(strstr(out, "test_up 1"));
	assert_int_equal(prom_server_requests(s), 8);
	prom_server_stop(s);

	/* stopped: nothing listens any more */
	{
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		assert_int_not_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
		close(fd);
	}
}

static void test_server_render_failure_is_500(void **state)
{
	char err[256], out[4096];
	struct prom_server *s;
	(void)state;

	s = prom_server_start("127.0.0.1:0", render_fail, NULL, NULL, err, sizeof(err));
	assert_non_null(s);
	http(prom_server_port(s), "GET /metrics HTTP/1.1\r\n\r\n", out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 500 Internal Server Error\r\n"));
	prom_server_stop(s);
}

static void test_server_bad_address(void **state)
{
	char err[256];
	struct prom_server *s, *t;
	(void)state;

	assert_null(prom_server_start("127.0.0.1", render_ok, NULL, NULL, err, sizeof(err)));
	assert_string_equal(err, "'127.0.0.1' is not ADDR:PORT (write IPv6 as [ADDR]:PORT)");
	/* a port in use */
	s = prom_server_start("127.0.0.1:0", render_ok, NULL, NULL, err, sizeof(err));
	assert_non_null(s);
	{
		char addr[32];

		snprintf(addr, sizeof(addr), "127.0.0.1:%u", prom_server_port(s));
		t = prom_server_start(addr, render_ok, NULL, NULL, err, sizeof(err));
		assert_null(t);
		assert_non_null(strstr(err, "Address already in use"));
	}
	prom_server_stop(s);
}

static int render_json(struct prom_buf *b, void *ctx)
{
	(void)ctx;
	return prom_buf_append_raw(b, "{\"ok\":1}\n");
}

/* a second page beside /metrics: its own path and content type; the rest 404 */
static void test_server_extra_page(void **state)
{
	const struct prom_page page = { "/verdict", "application/json", render_json, NULL };
	char err[256], out[4096];
	struct prom_server *s;
	uint16_t port;
	(void)state;

	s = prom_server_start("127.0.0.1:0", render_ok, NULL, &page, err, sizeof(err));
	assert_non_null(s);
	port = prom_server_port(s);
	http(port, "GET /verdict HTTP/1.1\r\n\r\n", out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 200 OK\r\n"));
	assert_non_null(strstr(out, "Content-Type: application/json\r\n"));
	assert_non_null(strstr(out, "\r\n\r\n{\"ok\":1}\n"));
	http(port, "GET /verdict?x HTTP/1.1\r\n\r\n", out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 200 OK\r\n"));
	http(port, "GET /metrics HTTP/1.1\r\n\r\n", out, sizeof(out));
	assert_non_null(strstr(out, "test_up 1"));
	http(port, "GET /verdicts HTTP/1.1\r\n\r\n", out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 404 Not Found\r\n"));
	prom_server_stop(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_family_and_samples),
		cmocka_unit_test(test_label_values_are_escaped),
		cmocka_unit_test(test_invalid_names_fail),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_histogram_is_cumulative),
		cmocka_unit_test(test_buffer_grows),
		cmocka_unit_test(test_parse_request),
		cmocka_unit_test(test_server),
		cmocka_unit_test(test_server_render_failure_is_500),
		cmocka_unit_test(test_server_bad_address),
		cmocka_unit_test(test_server_extra_page),
	};

	log_init("test_prom");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
