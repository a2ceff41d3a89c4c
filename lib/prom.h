/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Prometheus exposition for any tool of the project: a writer of the text
 * format (version 0.0.4) and a small HTTP server for GET /metrics.
 *
 * Writer. A tool appends metric families to a prom_buf: prom_family() writes
 * the # HELP and # TYPE lines once per family, then prom_sample() and
 * prom_histogram() write its samples. Label values are escaped (\\, \", \n),
 * HELP text too (\\, \n); names are checked against the format's grammar and
 * a bad one fails the call rather than producing an unscrapable page.
 * Histograms take per-bucket counts and write the cumulative `le` buckets
 * Prometheus expects: bucket `le=X` counts the observations <= X
 * (upper-inclusive), the last bucket is le="+Inf" and equals _count.
 *
 * Server. prom_server_start() listens on ADDR:PORT ("127.0.0.1:9435",
 * "[::1]:9435", "0.0.0.0:0" for any free port) and serves from its own
 * thread, one connection at a time: GET or HEAD /metrics (a query string is
 * ignored) calls the tool's render callback and returns 200 with the text,
 * as does the tool's extra page at its own path (bbrtrace's /verdict);
 * any other path is 404, another method 405, a malformed request 400, a
 * request head over PROM_MAX_REQUEST bytes 431, a client silent for
 * PROM_IO_TIMEOUT_MS 408. The callback runs on the server thread: it takes
 * whatever lock the tool's data needs. prom_server_stop() wakes the thread,
 * joins it and closes every socket.
 */
#ifndef TK_PROM_H
#define TK_PROM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define PROM_MAX_REQUEST 8192
#define PROM_IO_TIMEOUT_MS 2000
#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct prom_buf {
	char *data;   /* NUL-terminated */
	size_t len;
	size_t cap;
	bool failed;  /* an allocation failed or a name was invalid */
};

enum prom_type { PROM_COUNTER, PROM_GAUGE, PROM_HISTOGRAM, PROM_UNTYPED };

struct prom_label {
	const char *name;
	const char *value;
};

void prom_buf_init(struct prom_buf *b);
void prom_buf_reset(struct prom_buf *b);
void prom_buf_free(struct prom_buf *b);

/* metric names [a-zA-Z_:][a-zA-Z0-9_:]*, label names [a-zA-Z_][a-zA-Z0-9_]* (not __*) */
bool prom_valid_metric_name(const char *s);
bool prom_valid_label_name(const char *s);

/* # HELP and # TYPE lines; returns 0 or -1 (invalid name, no memory) */
int prom_family(struct prom_buf *b, const char *name, enum prom_type type, const char *help);
/* one sample line: name{labels} value */
int prom_sample(struct prom_buf *b, const char *name, const struct prom_label *labels,
		unsigned int nlabels, double value);
int prom_sample_u64(struct prom_buf *b, const char *name, const struct prom_label *labels,
		    unsigned int nlabels, uint64_t value);
/*
 * name_bucket{labels,le=...}, name_sum, name_count. le[] holds nle finite
 * upper edges in increasing order; counts[] holds nle + 1 per-bucket counts
 * (the last one for values above le[nle-1]).
 */
int prom_histogram(struct prom_buf *b, const char *name, const struct prom_label *labels,
		   unsigned int nlabels, const double *le, const uint64_t *counts, unsigned int nle,
		   double sum);
/* text as it is, for a page that is not the metrics (JSON); 0 or -1 */
int prom_buf_append_raw(struct prom_buf *b, const char *s);
/* a value as the text format writes it: integers exactly, +Inf, -Inf, NaN */
void prom_format_value(char *dst, size_t cap, double v);

/* --- HTTP ------------------------------------------------------------------ */

enum prom_req {
	PROM_REQ_INCOMPLETE, /* no end of header yet */
	PROM_REQ_METRICS,    /* GET or HEAD /metrics */
	PROM_REQ_NOT_FOUND,  /* 404 */
	PROM_REQ_BAD_METHOD, /* 405 */
	PROM_REQ_BAD,        /* 400 */
	PROM_REQ_TOO_LARGE,  /* 431 */
};

/* classify a request head received so far; *head is set for HEAD requests */
enum prom_req prom_parse_request(const char *buf, size_t len, bool *head);
/* the same, and for PROM_REQ_NOT_FOUND the path into path (cap bytes; empty
 * when longer) */
enum prom_req prom_parse_request_path(const char *buf, size_t len, bool *head, char *path, size_t cap);

/* fills b with the page; returns 0, or -1 for a 500 */
typedef int (*prom_render_fn)(struct prom_buf *b, void *ctx);

struct prom_server;

/* a page served beside /metrics, e.g. { "/verdict", "application/json", fn, ctx } */
struct prom_page {
	const char *path;
	const char *content_type;
	prom_render_fn render;
	void *ctx;
};

/* NULL on failure, with the reason in err ("cannot listen on ...: ..."); extra
 * is a second page, or NULL */
struct prom_server *prom_server_start(const char *listen, prom_render_fn render, void *ctx,
				      const struct prom_page *extra, char *err, size_t errlen);
/* the port actually bound (useful with port 0) */
uint16_t prom_server_port(const struct prom_server *s);
/* number of requests answered so far, any status */
uint64_t prom_server_requests(const struct prom_server *s);
void prom_server_stop(struct prom_server *s);

#endif
