/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What pushsim's parts share: the wire format (a frame's header, an
 * application ACK), the options, the counters the records are made of, and
 * what each part offers the others: the command line (pushsim_cli.c), the
 * records (pushsim_records.c), the sender (pushsim_send.c), the receiver
 * (pushsim_recv.c) and the run (pushsim.c).
 */
#ifndef LG_PUSHSIM_H
#define LG_PUSHSIM_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "common.h"
#include "record.h"
#include "loadgen/lathist.h"

/* a frame's header, big-endian: where each field starts */
enum {
	HDR_MAGIC = 0,       /* PS_MAGIC */
	HDR_SEQ = 4,         /* the frame's number, from 0 */
	HDR_PAYLOAD = 8,     /* bytes after the header */
	HDR_FLAGS = 12,      /* PS_FLAG_KEY */
	HDR_SCHED_NS = 16,   /* the scheduled send time, CLOCK_MONOTONIC ns */
	PS_HDR_LEN = 24,
};
#define PS_MAGIC 0x50534831u /* "PSH1" */
#define PS_FLAG_KEY 1u

/* an application ACK (as RTMP's Acknowledgement): a tag, the bytes read so
 * far, the ACKs sent before this one */
enum { ACK_TAG = 0, ACK_BYTES = 4, ACK_COUNT = 12 };
#define PS_ACK_LEN 16
static const uint8_t ack_tag[ACK_BYTES] = { 'A', 'C', 'K', '1' };

enum ps_mode { MODE_PROMPT, MODE_PACED, MODE_APPACK };
extern const char *const mode_names[];

enum ps_cmd { CMD_SEND, CMD_RECV };
extern const char *const cmd_names[];

#define FRAME_MAX 1048576           /* bytes: a larger frame is cut to this (1 MiB) */
#define CC_NAME_MAX 16              /* the kernel's TCP_CA_NAME_MAX, with the NUL */
#define LATE_DIVISOR 4             /* late: more than 1/4 of a frame interval after its time */

struct opts {
	enum ps_cmd cmd;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	bool have_addr;
	uint64_t bitrate_kbps;
	uint32_t fps;
	uint32_t gop;
	double key_factor;
	double jitter;
	uint32_t chunk;
	const char *cc;
	bool nodelay;
	uint64_t seed;
	double duration_s;        /* send: seconds to push; recv: 0 reads until the sender closes */
	int mode;                 /* enum ps_mode */
	uint32_t playout_ms;
	uint32_t ack_bytes;
	double accept_timeout_s;
	enum rec_format fmt;
	bool fmt_set;
	const char *output;       /* -o FILE; NULL: stdout */
	bool summary_only;
};

/* what a run counted, for its records */
struct stats {
	const char *role;           /* the command's name */
	bool receiver;
	const char *mode;           /* "push", or the receiver's --mode */
	uint64_t t0_ns;             /* when the connection was up; 0 before */
	/* this second */
	uint64_t sec_index, sec_bytes, sec_frames, sec_late, sec_stalls, sec_lat_max_ns;
	/* whole run */
	uint64_t frames, bytes, late, stalls, app_acks, lat_sum_ns, lat_max_ns, lat_n;
	struct lathist lat;         /* the receiver's frame latencies, for their p99 */
	uint64_t stall_start_ns, longest_stall_ns;
	uint32_t mss;
	char cc[CC_NAME_MAX];
	struct rec_writer *w;
	bool summary_only;
	bool write_failed;
};

/* the wire format's byte order */
static inline void put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static inline void put_u64(uint8_t *p, uint64_t v)
{
	put_u32(p, (uint32_t)(v >> 32));
	put_u32(p + 4, (uint32_t)v);
}

static inline uint32_t get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t get_u64(const uint8_t *p)
{
	return (uint64_t)get_u32(p) << 32 | get_u32(p + 4);
}

/* pushsim.c: the run; stop_flag is set by SIGINT and SIGTERM */
extern volatile sig_atomic_t stop_flag;
uint64_t s_to_ns(double s);
void sleep_until(uint64_t t, uint64_t deadline);

/* pushsim_cli.c: the command line, or exit with TK_EXIT_USAGE */
void parse_args(int argc, char **argv, struct opts *o);

/* pushsim_records.c: the records, where they go, what --help says of them */
int open_output(struct opts *o, struct stats *st, FILE **out);
void emit_second(struct stats *st);
uint64_t second_end(const struct stats *st);
void advance_seconds(struct stats *st, uint64_t t);
void emit_summary(struct stats *st, uint64_t end_ns);
void records_help(FILE *f);
void sock_names(int fd, struct stats *st);

/* pushsim_send.c: one push to --connect; a TK_EXIT code */
int run_sender(const struct opts *o, struct stats *st);
/* pushsim_recv.c: one push accepted on --listen and read as --mode says; a TK_EXIT code */
int run_receiver(const struct opts *o, struct stats *st);

#endif
