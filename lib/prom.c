// SPDX-License-Identifier: GPL-2.0-only
/*
 * Prometheus exposition: the text format's writer (names checked, labels and
 * HELP escaped, histograms made cumulative), and the HTTP server that answers
 * GET and HEAD for /metrics from its own thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "cli.h"
#include "log.h"
#include "prom.h"

/* --- buffer ------------------------------------------------------------------ */

void prom_buf_init(struct prom_buf *b) { memset(b, 0, sizeof(*b)); }

void prom_buf_reset(struct prom_buf *b)
{
	b->len = 0;
	b->failed = false;
	if (b->data)
		b->data[0] = '\0';
}

void prom_buf_free(struct prom_buf *b)
{
	free(b->data);
	prom_buf_init(b);
}

static int reserve(struct prom_buf *b, size_t n)
{
	size_t cap;
	char *p;

	if (b->failed)
		return -1;
	if (b->len + n + 1 <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + n + 1)
		cap *= 2;
	p = realloc(b->data, cap);
	if (!p) {
		b->failed = true;
		return -1;
	}
	b->data = p;
	b->cap = cap;
	return 0;
}

static int put(struct prom_buf *b, const char *s, size_t n)
{
	if (reserve(b, n))
		return -1;
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

static int puts_(struct prom_buf *b, const char *s) { return put(b, s, strlen(s)); }

int prom_buf_append_raw(struct prom_buf *b, const char *s)
{
	if (puts_(b, s)) {
		b->failed = true;
		return -1;
	}
	return 0;
}

/* escape \ and newline (HELP), and " too (label values) */
static int put_escaped(struct prom_buf *b, const char *s, bool quote)
{
	for (; *s; s++) {
		const char *rep = NULL;

		if (*s == '\\')
			rep = "\\\\";
		else if (*s == '\n')
			rep = "\\n";
		else if (quote && *s == '"')
			rep = "\\\"";
		if (rep ? puts_(b, rep) : put(b, s, 1))
			return -1;
	}
	return 0;
}

/* --- names and values ---------------------------------------------------------- */

static bool name_ok(const char *s, bool colon)
{
	if (!s || !*s)
		return false;
	for (const char *p = s; *p; p++) {
		char c = *p;
		bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
			     (colon && c == ':');

		if (!alpha && !(p != s && c >= '0' && c <= '9'))
			return false;
	}
	return true;
}

bool prom_valid_metric_name(const char *s) { return name_ok(s, true); }

bool prom_valid_label_name(const char *s)
{
	return name_ok(s, false) && strncmp(s, "__", 2) != 0;
}

void prom_format_value(char *dst, size_t cap, double v)
{
	if (isnan(v))
		snprintf(dst, cap, "NaN");
	else if (isinf(v))
		snprintf(dst, cap, v > 0 ? "+Inf" : "-Inf");
	else if (v == floor(v) && fabs(v) < 9007199254740992.0) /* 2^53: exact */
		snprintf(dst, cap, "%.0f", v);
	else
		for (int prec = 1; prec <= 17; prec++) { /* the shortest text that reads back exactly */
			snprintf(dst, cap, "%.*g", prec, v);
			if (strtod(dst, NULL) == v)
				break;
		}
}

static const char *type_name(enum prom_type t)
{
	switch (t) {
	case PROM_COUNTER: return "counter";
	case PROM_GAUGE: return "gauge";
	case PROM_HISTOGRAM: return "histogram";
	case PROM_UNTYPED: break;
	}
	return "untyped";
}

int prom_family(struct prom_buf *b, const char *name, enum prom_type type, const char *help)
{
	if (!prom_valid_metric_name(name)) {
		b->failed = true;
		return -1;
	}
	if (help) {
		puts_(b, "# HELP ");
		puts_(b, name);
		puts_(b, " ");
		put_escaped(b, help, false);
		puts_(b, "\n");
	}
	puts_(b, "# TYPE ");
	puts_(b, name);
	puts_(b, " ");
	puts_(b, type_name(type));
	puts_(b, "\n");
	return b->failed ? -1 : 0;
}

/* name{a="x",b="y"[,extra="v"]} value */
static int sample_line(struct prom_buf *b, const char *name, const char *suffix,
		       const struct prom_label *labels, unsigned int n, const char *extra_name,
		       const char *extra_value, const char *value)
{
	char full[256];
	bool any = n || extra_name;

	snprintf(full, sizeof(full), "%s%s", name, suffix);
	if (!prom_valid_metric_name(full)) {
		b->failed = true;
		return -1;
	}
	puts_(b, full);
	if (any)
		puts_(b, "{");
	for (unsigned int i = 0, first = 1; i <= n; i++) {
		const char *ln = i < n ? labels[i].name : extra_name;
		const char *lv = i < n ? labels[i].value : extra_value;

		if (!ln)
			continue;
		if (!prom_valid_label_name(ln)) {
			b->failed = true;
			return -1;
		}
		if (!first)
			puts_(b, ",");
		first = 0;
		puts_(b, ln);
		puts_(b, "=\"");
		put_escaped(b, lv ? lv : "", true);
		puts_(b, "\"");
	}
	if (any)
		puts_(b, "}");
	puts_(b, " ");
	puts_(b, value);
	puts_(b, "\n");
	return b->failed ? -1 : 0;
}

int prom_sample(struct prom_buf *b, const char *name, const struct prom_label *labels,
		unsigned int nlabels, double value)
{
	char v[64];

	prom_format_value(v, sizeof(v), value);
	return sample_line(b, name, "", labels, nlabels, NULL, NULL, v);
}

int prom_sample_u64(struct prom_buf *b, const char *name, const struct prom_label *labels,
		    unsigned int nlabels, uint64_t value)
{
	char v[32];

	snprintf(v, sizeof(v), "%llu", (unsigned long long)value);
	return sample_line(b, name, "", labels, nlabels, NULL, NULL, v);
}

int prom_histogram(struct prom_buf *b, const char *name, const struct prom_label *labels,
		   unsigned int nlabels, const double *le, const uint64_t *counts, unsigned int nle,
		   double sum)
{
	uint64_t cum = 0;
	char v[32], edge[64];

	for (unsigned int i = 0; i <= nle; i++) {
		cum += counts[i];
		if (i < nle)
			prom_format_value(edge, sizeof(edge), le[i]);
		else
			snprintf(edge, sizeof(edge), "+Inf");
		snprintf(v, sizeof(v), "%llu", (unsigned long long)cum);
		if (sample_line(b, name, "_bucket", labels, nlabels, "le", edge, v))
			return -1;
	}
	prom_format_value(v, sizeof(v), sum);
	if (sample_line(b, name, "_sum", labels, nlabels, NULL, NULL, v))
		return -1;
	snprintf(v, sizeof(v), "%llu", (unsigned long long)cum);
	return sample_line(b, name, "_count", labels, nlabels, NULL, NULL, v);
}

/* --- HTTP request ------------------------------------------------------------------ */

static const char *find_end_of_head(const char *buf, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++) {
		if (buf[i] == '\n' && buf[i + 1] == '\n')
			return buf + i + 2;
		if (i + 3 < len && !memcmp(buf + i, "\r\n\r\n", 4))
			return buf + i + 4;
	}
	return NULL;
}

enum prom_req prom_parse_request(const char *buf, size_t len, bool *head)
{
	return prom_parse_request_path(buf, len, head, NULL, 0);
}

enum prom_req prom_parse_request_path(const char *buf, size_t len, bool *head, char *path, size_t cap)
{
	const char *eol, *sp1, *sp2, *path_end;
	size_t mlen, plen;

	*head = false;
	if (cap)
		path[0] = '\0';
	if (!find_end_of_head(buf, len))
		return len >= PROM_MAX_REQUEST ? PROM_REQ_TOO_LARGE : PROM_REQ_INCOMPLETE;
	eol = memchr(buf, '\n', len);
	if (!eol)
		return PROM_REQ_BAD;
	sp1 = memchr(buf, ' ', (size_t)(eol - buf));
	if (!sp1 || sp1 == buf)
		return PROM_REQ_BAD;
	sp2 = memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1));
	if (!sp2 || sp2 == sp1 + 1)
		return PROM_REQ_BAD;
	if ((size_t)(eol - sp2) < 9 || memcmp(sp2 + 1, "HTTP/1.", 7) != 0)
		return PROM_REQ_BAD;
	for (const char *p = buf; p < sp1; p++)
		if (*p < 'A' || *p > 'Z')
			return PROM_REQ_BAD;
	mlen = (size_t)(sp1 - buf);
	if (mlen == 4 && !memcmp(buf, "HEAD", 4))
		*head = true;
	else if (!(mlen == 3 && !memcmp(buf, "GET", 3)))
		return PROM_REQ_BAD_METHOD;
	path_end = memchr(sp1 + 1, '?', (size_t)(sp2 - sp1 - 1));
	if (!path_end)
		path_end = sp2;
	plen = (size_t)(path_end - sp1 - 1);
	if (plen == 8 && !memcmp(sp1 + 1, "/metrics", 8))
		return PROM_REQ_METRICS;
	if (cap && plen < cap) {
		memcpy(path, sp1 + 1, plen);
		path[plen] = '\0';
	}
	return PROM_REQ_NOT_FOUND;
}

/* --- HTTP server ------------------------------------------------------------------ */

struct prom_server {
	int listen_fd;
	int wake[2];
	uint16_t port;
	prom_render_fn render;
	void *ctx;
	struct prom_page extra;    /* a second page beside /metrics (path NULL: none) */
	pthread_t thread;
	uint64_t requests; /* written by the server thread only */
	struct prom_buf page;
};

static int64_t mono_ms(void)
{
	return (int64_t)(tk_mono_ns() / TK_NSEC_PER_MSEC);
}

/* wait for fd (POLLIN or POLLOUT) or the wake pipe, until deadline; 1 ready, 0 not */
static int wait_fd(struct prom_server *s, int fd, short ev, int64_t deadline)
{
	for (;;) {
		struct pollfd p[2] = { { fd, ev, 0 }, { s->wake[0], POLLIN, 0 } };
		int64_t left = deadline - mono_ms();
		int n;

		if (left <= 0)
			return 0;
		n = poll(p, 2, (int)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || p[1].revents)
			return 0;
		return 1;
	}
}

static int send_all(struct prom_server *s, int fd, const char *buf, size_t len, int64_t deadline)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		if (!wait_fd(s, fd, POLLOUT, deadline))
			return -1;
	}
	return 0;
}

static void respond_as(struct prom_server *s, int fd, int code, const char *reason, const char *type,
		       const char *extra_headers, const char *body, size_t blen, bool head,
		       int64_t deadline)
{
	char hdr[512];
	int n;

	n = snprintf(hdr, sizeof(hdr),
		     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s"
		     "Connection: close\r\n\r\n",
		     code, reason, type, blen, extra_headers ? extra_headers : "");
	if (n < 0 || (size_t)n >= sizeof(hdr))
		return;
	if (send_all(s, fd, hdr, (size_t)n, deadline) == 0 && !head && blen)
		send_all(s, fd, body, blen, deadline);
}

static void respond(struct prom_server *s, int fd, int code, const char *reason,
		    const char *extra_headers, const char *body, size_t blen, bool head,
		    int64_t deadline)
{
	respond_as(s, fd, code, reason, code == 200 ? PROM_CONTENT_TYPE : "text/plain; charset=utf-8",
		   extra_headers, body, blen, head, deadline);
}

/* a page's render into s->page, and the answer: 200, or 500 */
static void serve_page(struct prom_server *s, int fd, prom_render_fn render, void *ctx, const char *type,
		       bool head, int64_t deadline)
{
	prom_buf_reset(&s->page);
	if (render(&s->page, ctx) || s->page.failed) {
		static const char msg[] = "failed to render the page\n";

		respond(s, fd, 500, "Internal Server Error", NULL, msg, sizeof(msg) - 1, head, deadline);
	} else {
		respond_as(s, fd, 200, "OK", type, NULL, s->page.data ? s->page.data : "", s->page.len, head,
			   deadline);
	}
}

static void serve_one(struct prom_server *s, int fd)
{
	char req[PROM_MAX_REQUEST], path[64];
	int64_t deadline = mono_ms() + PROM_IO_TIMEOUT_MS;
	enum prom_req r = PROM_REQ_INCOMPLETE;
	size_t len = 0;
	bool head = false;

	while (r == PROM_REQ_INCOMPLETE) {
		ssize_t n;

		if (!wait_fd(s, fd, POLLIN, deadline)) {
			static const char msg[] = "request timeout\n";

			respond(s, fd, 408, "Request Timeout", NULL, msg, sizeof(msg) - 1, false,
				mono_ms() + 200);
			return;
		}
		n = recv(fd, req + len, sizeof(req) - len, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			return; /* the client went away */
		len += (size_t)n;
		r = prom_parse_request_path(req, len, &head, path, sizeof(path));
	}
	switch (r) {
	case PROM_REQ_METRICS:
		serve_page(s, fd, s->render, s->ctx, PROM_CONTENT_TYPE, head, deadline);
		break;
	case PROM_REQ_NOT_FOUND: {
		static const char msg[] = "not found: the metrics are at /metrics\n";

		if (s->extra.path && !strcmp(path, s->extra.path)) {
			serve_page(s, fd, s->extra.render, s->extra.ctx, s->extra.content_type, head, deadline);
			break;
		}
		respond(s, fd, 404, "Not Found", NULL, msg, sizeof(msg) - 1, head, deadline);
		break;
	}
	case PROM_REQ_BAD_METHOD: {
		static const char msg[] = "method not allowed: use GET\n";

		respond(s, fd, 405, "Method Not Allowed", "Allow: GET, HEAD\r\n", msg,
			sizeof(msg) - 1, false, deadline);
		break;
	}
	case PROM_REQ_TOO_LARGE: {
		static const char msg[] = "request header too large\n";

		respond(s, fd, 431, "Request Header Fields Too Large", NULL, msg, sizeof(msg) - 1,
			false, deadline);
		break;
	}
	default: {
		static const char msg[] = "bad request\n";

		respond(s, fd, 400, "Bad Request", NULL, msg, sizeof(msg) - 1, false, deadline);
		break;
	}
	}
}

static void *server_main(void *arg)
{
	struct prom_server *s = arg;

	for (;;) {
		struct pollfd p[2] = { { s->listen_fd, POLLIN, 0 }, { s->wake[0], POLLIN, 0 } };
		int fd;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			continue;
		serve_one(s, fd);
		__atomic_add_fetch(&s->requests, 1, __ATOMIC_RELAXED);
		shutdown(fd, SHUT_WR);
		close(fd);
	}
	return NULL;
}

struct prom_server *prom_server_start(const char *listen_on, prom_render_fn render, void *ctx,
				      const struct prom_page *extra, char *err, size_t errlen)
{
	struct sockaddr_storage ss, bound;
	socklen_t sslen, blen = sizeof(bound);
	struct prom_server *s;
	int one = 1;

	if (cli_scan_endpoint(listen_on, &ss, &sslen, err, errlen))
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->render = render;
	s->ctx = ctx;
	if (extra)
		s->extra = *extra;
	s->wake[0] = s->wake[1] = -1;
	prom_buf_init(&s->page);
	s->listen_fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->listen_fd < 0)
		goto fail;
	setsockopt(s->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s->listen_fd, (struct sockaddr *)&ss, sslen) || listen(s->listen_fd, 16))
		goto fail;
	if (getsockname(s->listen_fd, (struct sockaddr *)&bound, &blen) == 0)
		s->port = ntohs(bound.ss_family == AF_INET ?
					((struct sockaddr_in *)&bound)->sin_port :
					((struct sockaddr_in6 *)&bound)->sin6_port);
	if (pipe2(s->wake, O_CLOEXEC | O_NONBLOCK))
		goto fail;
	errno = pthread_create(&s->thread, NULL, server_main, s);
	if (errno)
		goto fail;
	return s;
fail:
	snprintf(err, errlen, "cannot listen on %s: %s", listen_on, strerror(errno));
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->wake[0] >= 0) {
		close(s->wake[0]);
		close(s->wake[1]);
	}
	free(s);
	return NULL;
}

uint16_t prom_server_port(const struct prom_server *s) { return s->port; }

uint64_t prom_server_requests(const struct prom_server *s)
{
	return __atomic_load_n(&s->requests, __ATOMIC_RELAXED);
}

void prom_server_stop(struct prom_server *s)
{
	if (!s)
		return;
	if (write(s->wake[1], "x", 1) < 0) {
		/* the pipe is non-blocking and empty: this cannot fail in practice */
	}
	pthread_join(s->thread, NULL);
	close(s->listen_fd);
	close(s->wake[0]);
	close(s->wake[1]);
	prom_buf_free(&s->page);
	free(s);
}
