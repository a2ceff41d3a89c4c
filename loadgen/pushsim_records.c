// SPDX-License-Identifier: GPL-2.0-only
/*
 * pushsim's records: one per second and a summary from both ends, each
 * type's fields written once (keys, units, table columns); where they go;
 * what --help says of them; and the connection's names they carry.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "common.h"
#include "log.h"
#include "record.h"

#include "pushsim.h"

/*
 * Every time carries its unit in its key: times and durations in seconds
 * (_s), latencies and intervals in microseconds (_us); the table shows the
 * latter in ms.
 */
#define MBIT_PER_BIT TK_MBPS_PER_BPS_F
#define MS_PER_US TK_MSEC_PER_USEC_F

/* a count only the sender keeps (the receiver cannot see its socket's backlog) */
static struct rec_value sender_only(const struct stats *st, uint64_t v)
{
	return st->receiver ? rv_null() : rv_u64(v);
}

/* a latency only the receiver measures, in us; none before its first frame */
static struct rec_value latency_us(const struct stats *st, bool have, uint64_t ns)
{
	return st->receiver && have ? rv_u64(ns / TK_NSEC_PER_USEC) : rv_null();
}

/* one second of the run, st's sec_* counters */
#define SECOND_FIELDS(X)                                                                          \
	X("role", REC_STR, 0, REC_COL("role", -4, 0, 0), rv_str(st->role))                        \
	X("t_s", REC_U64, 0, REC_COL("t s", 5, 0, 0), rv_u64(st->sec_index))                      \
	X("bytes", REC_U64, 0, REC_COL("bytes", 10, 0, 0), rv_u64(st->sec_bytes))                 \
	X("goodput_bps", REC_U64, 0, REC_COL("goodput Mb/s", 12, MBIT_PER_BIT, 2),                \
	  rv_u64(st->sec_bytes * 8))                                                               \
	X("frames", REC_U64, 0, REC_COL("frames", 6, 0, 0), rv_u64(st->sec_frames))               \
	X("late_frames", REC_U64, 0, REC_COL("late", 5, 0, 0), rv_u64(st->sec_late))              \
	X("stalls", REC_U64, 0, REC_COL("stalls", 6, 0, 0), rv_u64(st->sec_stalls))               \
	X("frame_latency_max_us", REC_U64, 0, REC_COL("lat max ms", 10, MS_PER_US, 1),            \
	  latency_us(st, st->sec_frames && st->lat_n, st->sec_lat_max_ns))
static const struct rec_field second_fields[] = { SECOND_FIELDS(REC_FIELD) };
static const struct rec_schema second_schema = { "second", second_fields, ARRAY_SIZE(second_fields) };

/* the whole run, st's totals over secs seconds */
#define SUMMARY_FIELDS(X)                                                                         \
	X("role", REC_STR, 0, REC_COL("role", -4, 0, 0), rv_str(st->role))                        \
	X("mode", REC_STR, 0, REC_COL("mode", -7, 0, 0), rv_str(st->mode))                        \
	X("cc", REC_STR, 0, REC_COL("cc", -10, 0, 0), rv_str(st->cc[0] ? st->cc : NULL))          \
	X("duration_s", REC_F64, 3, REC_COL("dur s", 6, 0, 1), rv_f64(secs))                      \
	X("frames", REC_U64, 0, REC_COL("frames", 6, 0, 0), rv_u64(st->frames))                   \
	X("bytes", REC_U64, 0, REC_COL("bytes", 10, 0, 0), rv_u64(st->bytes))                     \
	X("goodput_bps", REC_U64, 0, REC_COL("goodput Mb/s", 12, MBIT_PER_BIT, 2),                \
	  rv_u64(secs > 0 ? (uint64_t)((double)st->bytes * 8 / secs) : 0))                        \
	X("late_frames", REC_U64, 0, REC_COL("late", 5, 0, 0), rv_u64(st->late))                  \
	X("stalls", REC_U64, 0, REC_COL("stalls", 6, 0, 0), sender_only(st, st->stalls))          \
	X("longest_stall_us", REC_U64, 0, REC_COL("stall ms", 8, MS_PER_US, 1),                   \
	  sender_only(st, st->longest_stall_ns / TK_NSEC_PER_USEC))                                       \
	X("app_acks", REC_U64, 0, REC_COL("appacks", 7, 0, 0), rv_u64(st->app_acks))              \
	X("mss", REC_U64, 0, REC_COL("mss", 5, 0, 0), rv_u64(st->mss))                            \
	X("frame_latency_mean_us", REC_U64, 0, REC_COL("lat ms", 7, MS_PER_US, 1),                \
	  latency_us(st, st->lat_n, st->lat_n ? st->lat_sum_ns / st->lat_n : 0))                   \
	X("frame_latency_p99_us", REC_U64, 0, REC_COL("lat p99 ms", 10, MS_PER_US, 1),            \
	  latency_us(st, st->lat_n, lathist_quantile(&st->lat, 0.99) * TK_NSEC_PER_USEC))                  \
	X("frame_latency_max_us", REC_U64, 0, REC_COL("lat max ms", 10, MS_PER_US, 1),            \
	  latency_us(st, st->lat_n, st->lat_max_ns))
static const struct rec_field summary_fields[] = { SUMMARY_FIELDS(REC_FIELD) };
static const struct rec_schema summary_schema = { "summary", summary_fields, ARRAY_SIZE(summary_fields) };

void emit_second(struct stats *st)
{
	if (!st->summary_only) {
		const struct rec_value v[] = { SECOND_FIELDS(REC_VALUE) };

		if (rec_write(st->w, &second_schema, v))
			st->write_failed = true;
		rec_writer_flush(st->w);
	}
	st->sec_index++;
	st->sec_bytes = st->sec_frames = st->sec_late = st->sec_stalls = st->sec_lat_max_ns = 0;
}

/* when the second being counted ends */
uint64_t second_end(const struct stats *st)
{
	return st->t0_ns + (st->sec_index + 1) * TK_NSEC_PER_SEC;
}

/* closes every full second up to `t` */
void advance_seconds(struct stats *st, uint64_t t)
{
	while (t >= second_end(st))
		emit_second(st);
}

void emit_summary(struct stats *st, uint64_t end_ns)
{
	double secs = st->t0_ns && end_ns > st->t0_ns ? (double)(end_ns - st->t0_ns) / TK_NSEC_PER_SEC : 0;
	const struct rec_value v[] = { SUMMARY_FIELDS(REC_VALUE) };

	rec_writer_reset_header(st->w); /* the table: the summary under its own header */
	if (rec_write(st->w, &summary_schema, v))
		st->write_failed = true;
}

/* --help's part on the records: their keys from their schemas, what they mean */
void records_help(FILE *f)
{
	fputs("\nRecords (keys in JSON and CSV; the table shows the latencies in ms):\n", f);
	rec_help_keys(f, &second_schema);
	rec_help_keys(f, &summary_schema);
	fputs("Units: every time carries its unit in its key: times and durations in\n"
	      "seconds (_s), latencies and intervals in microseconds (_us); rates in bit/s\n"
	      "(_bps); the one key in ms is the longest stall again, in whole ms, kept for\n"
	      "older readers. A second's time is when it began, since the connection; its\n"
	      "bytes are, at the sender, the bytes the peer ACKed in that second, at the\n"
	      "receiver the bytes it read; the summary's goodput is the mean over the run.\n"
	      "A frame is late when the sender starts writing it more than a quarter of a\n"
	      "frame interval after its scheduled time. A stall is a frame interval at\n"
	      "whose end bytes written before it were still not sent (tcpi_notsent_bytes\n"
	      "> 0), i.e. a frame not fully written to the network within one interval;\n"
	      "frames a late sender writes after their intervals end do not count there.\n"
	      "Frame latency (receiver) is the time from the frame's scheduled send time\n"
	      "to the moment its last byte was read; its p99 is the nearest-rank 99th\n"
	      "percentile, from a histogram exact to 1 us below 64 us and to 1/32 above.\n",
	      f);
}

/* "10.0.0.1:1935" or "[fd00::1]:1935" */
static const char *fmt_endpoint(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN], port[8];

	if (getnameinfo((const struct sockaddr *)ss, sizeof(*ss), host, sizeof(host), port, sizeof(port),
			NI_NUMERICHOST | NI_NUMERICSERV))
		snprintf(buf, len, "?");
	else
		snprintf(buf, len, ss->ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, port);
	return buf;
}

/* the connection's congestion control and MSS, for the records; with -v, on stderr */
void sock_names(int fd, struct stats *st)
{
	socklen_t len = sizeof(st->cc);
	int mss = 0;
	socklen_t mlen = sizeof(mss);

	if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, st->cc, &len))
		st->cc[0] = '\0';
	st->cc[sizeof(st->cc) - 1] = '\0';
	if (!getsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &mss, &mlen) && mss > 0)
		st->mss = (uint32_t)mss;
	if (log_get_level() >= LOG_VERBOSE) {
		struct sockaddr_storage local, peer;
		socklen_t llen = sizeof(local), plen = sizeof(peer);
		char a[INET6_ADDRSTRLEN + 8], b[INET6_ADDRSTRLEN + 8];

		if (!getsockname(fd, (struct sockaddr *)&local, &llen) &&
		    !getpeername(fd, (struct sockaddr *)&peer, &plen))
			vlog("%s: %s -> %s, cc %s, mss %u", st->role, fmt_endpoint(&local, a, sizeof(a)),
			     fmt_endpoint(&peer, b, sizeof(b)), st->cc, st->mss);
	}
}

/* where the records go, and their writer, in the format asked or the default for it */
int open_output(struct opts *o, struct stats *st, FILE **out)
{
	*out = stdout;
	if (o->output && !(*out = fopen(o->output, "w"))) {
		elog("%s: cannot create: %s", o->output, strerror(errno));
		return TK_EXIT_FAIL;
	}
	if (!o->fmt_set)
		o->fmt = rec_format_default(*out);
	st->w = rec_writer_new(o->fmt, *out);
	if (!st->w) {
		elog("out of memory");
		return TK_EXIT_FAIL;
	}
	/* CSV: the file's one header covers every record type it may hold */
	if (!o->summary_only)
		rec_writer_declare(st->w, &second_schema);
	rec_writer_declare(st->w, &summary_schema);
	return TK_EXIT_OK;
}
