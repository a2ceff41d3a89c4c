// SPDX-License-Identifier: GPL-2.0-only
/*
 * pushsim's receiver: one push accepted and read as a player or a media
 * server reads (at once, at a paced decoder's playout times, or with an
 * application ACK every --ack-bytes), each frame's latency taken from its
 * header's scheduled send time.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common.h"
#include "log.h"

#include "pushsim.h"

#define RECV_BUF 65536             /* bytes read at once at most */
#define POLL_SLICE_MS 1000         /* a wait wakes this often to see a signal */
#define ACK_BLOCKED_WAIT_MS 100    /* an application ACK that does not fit waits this long */

/* where the stream stands: the frame header being read, or the payload left */
struct rx {
	uint8_t hdr[PS_HDR_LEN];
	size_t hdr_have;
	uint64_t payload_left;
	uint64_t sched_ns;         /* the frame's scheduled send time */
};

/* one push received: the connection, the stream, the playout clock */
struct receiver {
	const struct opts *o;
	struct stats *st;
	int fd;
	struct rx r;
	uint64_t deadline;         /* --duration's end; 0: none */
	uint64_t t_first;          /* the first byte's arrival: the playout clock's start */
	uint64_t paced_k;          /* frames the paced decoder has taken */
	uint64_t interval_ns;
	uint64_t since_ack;        /* bytes read since the last application ACK */
	uint8_t buf[RECV_BUF];
};

static void frame_done(struct stats *st, const struct rx *r, uint64_t t)
{
	uint64_t lat = t > r->sched_ns ? t - r->sched_ns : 0;

	st->frames++;
	st->sec_frames++;
	st->lat_sum_ns += lat;
	st->lat_n++;
	lathist_add(&st->lat, lat / TK_NSEC_PER_USEC);
	if (lat > st->lat_max_ns)
		st->lat_max_ns = lat;
	if (lat > st->sec_lat_max_ns)
		st->sec_lat_max_ns = lat;
}

/* up to n bytes of a frame header from p; how many it took, or -1 for a header not ours */
static long take_header(struct stats *st, struct rx *r, const uint8_t *p, size_t n, uint64_t t)
{
	size_t take = PS_HDR_LEN - r->hdr_have;

	if (take > n)
		take = n;
	memcpy(r->hdr + r->hdr_have, p, take);
	r->hdr_have += take;
	if (r->hdr_have < PS_HDR_LEN)
		return (long)take;
	if (get_u32(r->hdr + HDR_MAGIC) != PS_MAGIC)
		return -1;
	r->payload_left = get_u32(r->hdr + HDR_PAYLOAD);
	r->sched_ns = get_u64(r->hdr + HDR_SCHED_NS);
	if (r->payload_left == 0) {
		r->hdr_have = 0;
		frame_done(st, r, t);
	}
	return (long)take;
}

/* accounts n bytes just read at time t, walking the frame structure; -1 when
 * the stream is not a pushsim stream */
static int account(struct stats *st, struct rx *r, const uint8_t *p, size_t n, uint64_t t)
{
	st->bytes += n;
	st->sec_bytes += n;
	while (n) {
		size_t take;

		if (r->payload_left == 0) {
			long h = take_header(st, r, p, n, t);

			if (h < 0)
				return -1;
			take = (size_t)h;
		} else {
			take = r->payload_left < n ? (size_t)r->payload_left : n;
			r->payload_left -= take;
			if (r->payload_left == 0) {
				r->hdr_have = 0;
				frame_done(st, r, t);
			}
		}
		p += take;
		n -= take;
	}
	return 0;
}

static int send_app_ack(int fd, struct stats *st)
{
	uint8_t ack[PS_ACK_LEN];
	size_t off = 0;

	memcpy(ack + ACK_TAG, ack_tag, sizeof(ack_tag));
	put_u64(ack + ACK_BYTES, st->bytes);
	put_u32(ack + ACK_COUNT, (uint32_t)st->app_acks);
	while (off < sizeof(ack)) {
		ssize_t n = send(fd, ack + off, sizeof(ack) - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd pfd = { .fd = fd, .events = POLLOUT };

			poll(&pfd, 1, ACK_BLOCKED_WAIT_MS);
			continue;
		}
		if (n <= 0)
			return -1;
		off += (size_t)n;
	}
	st->app_acks++;
	return 0;
}

/* waits until fd is readable or `deadline` (0: none) passes; 1 readable, 0
 * the deadline or a signal, -1 poll failed */
static int wait_readable(int fd, uint64_t deadline)
{
	for (;;) {
		uint64_t t = tk_mono_ns();
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int ms = POLL_SLICE_MS, n;

		if (stop_flag || (deadline && t >= deadline))
			return 0;
		if (deadline && (deadline - t + TK_NSEC_PER_MSEC - 1) / TK_NSEC_PER_MSEC < (uint64_t)ms)
			ms = (int)((deadline - t + TK_NSEC_PER_MSEC - 1) / TK_NSEC_PER_MSEC);
		n = poll(&pfd, 1, ms);
		if (n > 0)
			return 1;
		if (n < 0 && errno != EINTR)
			return -1;
	}
}

/* the one connection of the push, on --listen; a TK_EXIT code */
static int accept_push(const struct opts *o, struct stats *st, int *fdp)
{
	int one = 1, fd, lfd = socket(o->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (lfd < 0) {
		elog("socket: %s", strerror(errno));
		return TK_EXIT_NETWORK;
	}
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&o->addr, o->addrlen) || listen(lfd, 1)) {
		elog("listen: %s", strerror(errno));
		close(lfd);
		return TK_EXIT_NETWORK;
	}
	if (wait_readable(lfd, tk_mono_ns() + s_to_ns(o->accept_timeout_s)) != 1) {
		if (!stop_flag)
			elog("nobody connected within %g s", o->accept_timeout_s);
		close(lfd);
		return stop_flag ? TK_EXIT_OK : TK_EXIT_NETWORK;
	}
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	close(lfd);
	if (fd < 0) {
		elog("accept: %s", strerror(errno));
		return TK_EXIT_NETWORK;
	}
	sock_names(fd, st);
	*fdp = fd;
	return TK_EXIT_OK;
}

/*
 * The paced decoder: between frames, the next one is taken at its playout
 * time, not before. 0: read now, *want bytes at most (the rest of this
 * frame's header or payload); 1: it slept, look again; -1: --duration is over.
 */
static int paced_turn(struct receiver *rv, size_t *want)
{
	struct stats *st = rv->st;
	struct rx *r = &rv->r;
	uint64_t due = rv->t_first + (uint64_t)rv->o->playout_ms * TK_NSEC_PER_MSEC + rv->paced_k * rv->interval_ns;

	if (r->payload_left == 0 && r->hdr_have == 0) {
		advance_seconds(st, tk_mono_ns());
		if (tk_mono_ns() < due) {
			uint64_t sec_end = second_end(st);

			sleep_until(due < sec_end ? due : sec_end, rv->deadline);
			return rv->deadline && tk_mono_ns() >= rv->deadline ? -1 : 1;
		}
		if (tk_mono_ns() - due > rv->interval_ns / LATE_DIVISOR) {
			st->late++;
			st->sec_late++;
		}
		rv->paced_k++;
	}
	*want = r->payload_left ? r->payload_left : PS_HDR_LEN - r->hdr_have;
	if (*want > sizeof(rv->buf))
		*want = sizeof(rv->buf);
	return 0;
}

/* app-ack: one application ACK per --ack-bytes read; a TK_EXIT code */
static int answer_app_acks(struct receiver *rv, size_t n)
{
	rv->since_ack += n;
	while (rv->since_ack >= rv->o->ack_bytes) {
		rv->since_ack -= rv->o->ack_bytes;
		if (send_app_ack(rv->fd, rv->st)) {
			elog("send: %s", strerror(errno));
			return TK_EXIT_NETWORK;
		}
	}
	return TK_EXIT_OK;
}

enum rx_step { RX_DATA, RX_AGAIN, RX_END };

/* up to `want` bytes, accounted; at the end, *rc says why (TK_EXIT_OK: the
 * sender closed, --duration is over, or a signal) */
static enum rx_step read_some(struct receiver *rv, size_t want, size_t *got, int *rc)
{
	int w = wait_readable(rv->fd, rv->deadline);
	ssize_t n;
	uint64_t t;

	if (w <= 0) {
		*rc = w < 0 ? TK_EXIT_NETWORK : TK_EXIT_OK;
		return RX_END;
	}
	n = recv(rv->fd, rv->buf, want, MSG_DONTWAIT);
	t = tk_mono_ns();
	advance_seconds(rv->st, t);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return RX_AGAIN;
	if (n <= 0) {
		if (n < 0)
			elog("recv: %s", strerror(errno));
		*rc = n < 0 ? TK_EXIT_NETWORK : TK_EXIT_OK;
		return RX_END;
	}
	if (!rv->t_first)
		rv->t_first = t;
	if (account(rv->st, &rv->r, rv->buf, (size_t)n, t)) {
		elog("the stream is not a pushsim stream (bad frame header)");
		*rc = TK_EXIT_DATA;
		return RX_END;
	}
	*got = (size_t)n;
	return RX_DATA;
}

/* reads the push the way --mode says, until it ends; a TK_EXIT code */
static int receive_stream(struct receiver *rv)
{
	int rc = TK_EXIT_OK;

	if (rv->o->mode == MODE_PACED) {
		/* the playout clock starts when the first byte arrives */
		if (wait_readable(rv->fd, rv->deadline) < 0)
			return TK_EXIT_NETWORK;
		rv->t_first = tk_mono_ns();
	}
	while (!stop_flag && rc == TK_EXIT_OK) {
		size_t want = sizeof(rv->buf), got = 0;
		enum rx_step step;

		if (rv->o->mode == MODE_PACED) {
			int turn = paced_turn(rv, &want);

			if (turn < 0)
				break;
			if (turn > 0)
				continue;
		}
		step = read_some(rv, want, &got, &rc);
		if (step == RX_END)
			break;
		if (step == RX_DATA && rv->o->mode == MODE_APPACK)
			rc = answer_app_acks(rv, got);
	}
	return rc;
}

int run_receiver(const struct opts *o, struct stats *st)
{
	struct receiver *rv = calloc(1, sizeof(*rv));
	int rc;

	if (!rv) {
		elog("out of memory");
		return TK_EXIT_FAIL;
	}
	rv->o = o;
	rv->st = st;
	rv->fd = -1;
	rv->interval_ns = TK_NSEC_PER_SEC / o->fps;
	rc = accept_push(o, st, &rv->fd);
	if (rc == TK_EXIT_OK && rv->fd >= 0) {
		st->t0_ns = tk_mono_ns();
		if (o->duration_s)
			rv->deadline = st->t0_ns + s_to_ns(o->duration_s);
		rc = receive_stream(rv);
		advance_seconds(st, tk_mono_ns());
		if (st->sec_frames || st->sec_bytes)
			emit_second(st);
		close(rv->fd);
	}
	free(rv);
	return rc;
}
