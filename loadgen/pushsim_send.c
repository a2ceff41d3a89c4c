// SPDX-License-Identifier: GPL-2.0-only
/*
 * pushsim's sender: one frame per tick (its size from the bitrate, the GOP
 * and the jitter), written in chunks on a non-blocking socket; it counts
 * the bytes the peer ACKed, late frames and stalls, and reads the
 * receiver's application ACKs.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common.h"
#include "log.h"

#include "pushsim.h"

#define END_WAIT_NS (2 * TK_NSEC_PER_SEC) /* at the end, for the last frames, then the last ACKs */
#define END_POLL_US 1000
#define EXACT_SLEEP_NS (2 * TK_NSEC_PER_MSEC) /* a tick closer than this is slept to, not polled (ms) */
#define APP_ACK_READ 4096          /* bytes of application ACKs read at once */

/* one push: the connection, the frame being written, the frame clock */
struct sender {
	const struct opts *o;
	struct stats *st;
	int fd;
	uint8_t *frame;            /* FRAME_MAX bytes; the header rewritten for each frame */
	size_t len, off;           /* the frame being written: its size, the bytes written */
	bool in_frame;
	uint64_t seq;              /* frames started */
	uint64_t next_tick, t_end, interval_ns;
	uint64_t written;          /* bytes the socket took */
	bool behind;               /* the last frame began after its own interval ended */
	uint64_t behind_written;   /* written when the frames behind the clock began */
	uint64_t rng;
	uint64_t acked;            /* tcpi_bytes_acked, as far as counted */
	uint64_t ack_partial;      /* bytes of an application ACK not complete yet */
	bool stalled;
};

/* splitmix64: a small, seedable generator; frame sizes must be reproducible */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static size_t frame_size(const struct opts *o, uint64_t seq, uint64_t *rng, uint32_t mss)
{
	/* the mean over a GOP is bitrate / fps: (k + gop - 1) * p = gop * mean */
	double mean = (double)o->bitrate_kbps * TK_BPS_PER_KBPS_F / 8 / o->fps;
	double p = mean * o->gop / (o->key_factor + o->gop - 1);
	double base = seq % o->gop == 0 ? p * o->key_factor : p;
	double u = (double)(rng_next(rng) >> 11) / 0x1p53; /* 53 random bits: [0,1) */
	double sz = base * (1 + o->jitter * (2 * u - 1));
	size_t total = sz < PS_HDR_LEN + 1 ? PS_HDR_LEN + 1 : (size_t)llround(sz);

	if (mss && total % mss == 0)
		total++;
	return total < FRAME_MAX ? total : FRAME_MAX;
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static int tcp_info_of(int fd, struct tcp_info *ti)
{
	socklen_t len = sizeof(*ti);

	memset(ti, 0, sizeof(*ti));
	return getsockopt(fd, IPPROTO_TCP, TCP_INFO, ti, &len);
}

static uint32_t notsent_bytes(int fd)
{
	struct tcp_info ti;

	return tcp_info_of(fd, &ti) ? 0 : ti.tcpi_notsent_bytes;
}

/* the bytes the peer ACKed since the last call: the second's and the run's goodput */
static void count_acked(struct sender *s)
{
	struct tcp_info ti;

	if (tcp_info_of(s->fd, &ti) || ti.tcpi_bytes_acked <= s->acked)
		return;
	s->st->sec_bytes += ti.tcpi_bytes_acked - s->acked;
	s->st->bytes += ti.tcpi_bytes_acked - s->acked;
	s->acked = ti.tcpi_bytes_acked;
}

/* reads and counts the receiver's application ACKs; -1 on EOF or error */
static int drain_app_acks(struct sender *s)
{
	uint8_t buf[APP_ACK_READ];

	for (;;) {
		ssize_t n = recv(s->fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n > 0) {
			s->ack_partial += (uint64_t)n;
			s->st->app_acks += s->ack_partial / PS_ACK_LEN;
			s->ack_partial %= PS_ACK_LEN;
			continue;
		}
		if (n == 0)
			return -1;
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
	}
}

/* a TK_EXIT code for a --cc the kernel refused */
static int cc_refused(const char *cc, int err)
{
	elog("--cc: cannot use congestion control '%s': %s", cc, strerror(err));
	if (err == ENOENT)
		return TK_EXIT_NOTSUP;
	/* not in net.ipv4.tcp_allowed_congestion_control, without CAP_NET_ADMIN */
	return err == EPERM ? TK_EXIT_NOPERM : TK_EXIT_FAIL;
}

/* the connection to the receiver, non-blocking, with --cc and --nodelay */
static int connect_push(const struct opts *o, struct stats *st, int *fdp)
{
	int one = 1, fd = socket(o->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		elog("socket: %s", strerror(errno));
		return TK_EXIT_NETWORK;
	}
	if (o->cc && setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, o->cc, (socklen_t)strlen(o->cc))) {
		int rc = cc_refused(o->cc, errno);

		close(fd);
		return rc;
	}
	if (o->nodelay)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&o->addr, o->addrlen)) {
		elog("connect: %s", strerror(errno));
		close(fd);
		return TK_EXIT_NETWORK;
	}
	sock_names(fd, st);
	set_nonblock(fd);
	*fdp = fd;
	return TK_EXIT_OK;
}

static int sender_open(struct sender *s, const struct opts *o, struct stats *st)
{
	struct tcp_info ti;
	int rc;

	memset(s, 0, sizeof(*s));
	s->o = o;
	s->st = st;
	s->fd = -1;
	s->rng = o->seed;
	s->interval_ns = TK_NSEC_PER_SEC / o->fps;
	s->frame = malloc(FRAME_MAX);
	if (!s->frame) {
		elog("out of memory");
		return TK_EXIT_FAIL;
	}
	/* a payload that does not repeat within a segment */
	for (size_t i = 0; i < FRAME_MAX; i++)
		s->frame[i] = (uint8_t)(i * 131 + 7);
	rc = connect_push(o, st, &s->fd);
	if (rc)
		return rc;
	/* the SYN counts in tcpi_bytes_acked: start from what is acked now */
	if (!tcp_info_of(s->fd, &ti))
		s->acked = ti.tcpi_bytes_acked;
	st->t0_ns = tk_mono_ns();
	s->next_tick = st->t0_ns;
	s->t_end = st->t0_ns + s_to_ns(o->duration_s);
	return TK_EXIT_OK;
}

static void sender_close(struct sender *s)
{
	if (s->fd >= 0)
		close(s->fd);
	free(s->frame);
}

static void end_stall(struct sender *s, uint64_t t)
{
	struct stats *st = s->st;

	s->stalled = false;
	if (t - st->stall_start_ns > st->longest_stall_ns)
		st->longest_stall_ns = t - st->stall_start_ns;
}

/*
 * The end of a frame interval: were bytes written before it still unsent?
 * A sender behind its clock (descheduled, then catching up) writes its late
 * frames back to back, after the ends of their intervals: the bytes it wrote
 * since it fell behind are newer than the end it judges, and Nagle or the
 * pacing holding them for the microseconds until the next write is no stall
 * of that interval. Only older bytes unsent are (tcpi_notsent_bytes over
 * the newer ones).
 */
static void interval_end(struct sender *s)
{
	struct stats *st = s->st;
	uint64_t newer = s->behind ? s->written - s->behind_written : 0;

	if (s->seq > 0 && notsent_bytes(s->fd) > newer) {
		st->stalls++;
		st->sec_stalls++;
		if (!s->stalled)
			st->stall_start_ns = s->next_tick;
		s->stalled = true;
	} else if (s->stalled) {
		end_stall(s, s->next_tick);
	}
}

/* does the frame starting at t begin after its own interval's end? and
 * since when are the frames behind the clock (for interval_end) */
static void note_behind(struct sender *s, uint64_t t)
{
	bool behind = t >= s->st->t0_ns + (s->seq + 1) * TK_NSEC_PER_SEC / s->o->fps;

	if (behind && !s->behind)
		s->behind_written = s->written;
	s->behind = behind;
}

/* the next frame, at time t: its size, its header, and the tick after it */
static void start_frame(struct sender *s, uint64_t t)
{
	struct stats *st = s->st;
	uint8_t *h = s->frame;

	if (t - s->next_tick > s->interval_ns / LATE_DIVISOR) {
		st->late++;
		st->sec_late++;
	}
	note_behind(s, t);
	s->len = frame_size(s->o, s->seq, &s->rng, st->mss);
	put_u32(h + HDR_MAGIC, PS_MAGIC);
	put_u32(h + HDR_SEQ, (uint32_t)s->seq);
	put_u32(h + HDR_PAYLOAD, (uint32_t)(s->len - PS_HDR_LEN));
	put_u32(h + HDR_FLAGS, s->seq % s->o->gop == 0 ? PS_FLAG_KEY : 0);
	put_u64(h + HDR_SCHED_NS, s->next_tick);
	s->off = 0;
	s->in_frame = true;
	s->seq++;
	s->next_tick = st->t0_ns + s->seq * TK_NSEC_PER_SEC / s->o->fps;
}

/* one write of the frame (up to the end of its --chunk-size chunk): 1 bytes
 * went, 0 the socket is full, -1 it failed */
static int write_piece(struct sender *s)
{
	size_t piece = s->len - s->off;
	uint32_t chunk = s->o->chunk;
	ssize_t n;

	if (chunk && piece > chunk - s->off % chunk)
		piece = chunk - s->off % chunk;
	n = send(s->fd, s->frame + s->off, piece, MSG_NOSIGNAL);
	if (n > 0) {
		s->off += (size_t)n;
		s->written += (uint64_t)n;
		if (s->off == s->len) {
			s->in_frame = false;
			s->st->frames++;
			s->st->sec_frames++;
		}
		return 1;
	}
	if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
		elog("send: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* idle at time t: poll()'s timeout up to the next tick or the end of the
 * second (to report it on time), or -1 after sleeping to a tick too close
 * for poll()'s milliseconds */
static int idle_timeout_ms(struct sender *s, uint64_t t)
{
	uint64_t to_tick = s->next_tick - t, to_second = second_end(s->st) - t;
	uint64_t wait = to_second < to_tick ? to_second : to_tick;

	if (wait == to_tick && wait < EXACT_SLEEP_NS) {
		sleep_until(s->next_tick, 0);
		return -1;
	}
	return (int)((wait + TK_NSEC_PER_MSEC - 1) / TK_NSEC_PER_MSEC);
}

/* frames at their ticks until --duration; a TK_EXIT code */
static int push_frames(struct sender *s)
{
	while (!stop_flag) {
		uint64_t t = tk_mono_ns();
		struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
		int timeout_ms = 1, w;

		advance_seconds(s->st, t);
		if (!s->in_frame && t >= s->next_tick) {
			if (s->next_tick >= s->t_end)
				break;
			interval_end(s);
			start_frame(s, t);
		}
		if (s->in_frame) {
			w = write_piece(s);
			if (w > 0)
				continue;
			if (w < 0)
				return TK_EXIT_NETWORK;
			pfd.events |= POLLOUT;
		}
		count_acked(s);
		if (!s->in_frame && s->next_tick > t && (timeout_ms = idle_timeout_ms(s, t)) < 0)
			continue;
		if (poll(&pfd, 1, timeout_ms) > 0 && (pfd.revents & (POLLIN | POLLERR | POLLHUP)) &&
		    drain_app_acks(s)) {
			elog("the receiver closed the connection");
			return TK_EXIT_NETWORK;
		}
	}
	return TK_EXIT_OK;
}

/* lets the last frames reach the receiver before closing (END_WAIT_NS at most) */
static void flush_frames(struct sender *s)
{
	uint64_t until = tk_mono_ns() + END_WAIT_NS;
	struct tcp_info ti;

	while (!stop_flag && tk_mono_ns() < until) {
		if (tcp_info_of(s->fd, &ti) || (ti.tcpi_notsent_bytes == 0 && ti.tcpi_unacked == 0))
			break;
		advance_seconds(s->st, tk_mono_ns());
		usleep(END_POLL_US);
	}
	count_acked(s);
}

/*
 * The receiver sends its last application ACKs after reading the last
 * bytes, which can be after TCP acknowledged them: say we are done and
 * count ACKs until it closes (END_WAIT_NS at most).
 */
static void count_last_acks(struct sender *s)
{
	uint64_t until = tk_mono_ns() + END_WAIT_NS;
	struct pollfd pfd = { .fd = s->fd, .events = POLLIN };

	if (shutdown(s->fd, SHUT_WR)) {
		drain_app_acks(s);
		return;
	}
	for (uint64_t t = tk_mono_ns(); t < until && !stop_flag; t = tk_mono_ns())
		if (poll(&pfd, 1, (int)((until - t) / TK_NSEC_PER_MSEC) + 1) > 0 && drain_app_acks(s))
			break;
}

int run_sender(const struct opts *o, struct stats *st)
{
	struct sender s;
	int rc = sender_open(&s, o, st);

	if (rc == TK_EXIT_OK)
		rc = push_frames(&s);
	if (rc == TK_EXIT_OK && !stop_flag) {
		flush_frames(&s);
		count_last_acks(&s);
	} else if (s.fd >= 0) {
		count_acked(&s);
		drain_app_acks(&s);
	}
	if (s.fd >= 0) {
		if (s.stalled)
			end_stall(&s, tk_mono_ns());
		if (st->sec_frames || st->sec_bytes)
			emit_second(st);
	}
	sender_close(&s);
	return rc;
}
