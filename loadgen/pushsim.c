// SPDX-License-Identifier: GPL-2.0-only
/*
 * pushsim: a live-stream push over TCP, both ends.
 *
 * The sender writes one video-like frame per tick (bitrate / fps on average,
 * a keyframe every GOP, sizes jittered and never a multiple of the MSS, so
 * each burst ends in an undersized segment) and idles until the next tick.
 * The receiver reads like the receivers that produce delayed ACKs:
 *   prompt   reads as soon as data arrives;
 *   paced    a decoder with a playout buffer: frame k is read at
 *            first-arrival + playout + k/fps, never earlier;
 *   app-ack  reads at once and answers every N bytes with a 16-byte
 *            application acknowledgement (as RTMP does), which keeps the
 *            socket in ping-pong mode.
 *
 * Every frame starts with a 24-byte header (magic, sequence, payload length,
 * flags, scheduled send time on CLOCK_MONOTONIC), so the receiver knows the
 * frame boundaries and each frame's latency (same host, same clock).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "common.h"
#include "log.h"
#include "opt.h"
#include "record.h"

#define NS_PER_MS 1000000ull
#define NS_PER_US 1000ull

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
static const char *const mode_names[] = { "prompt", "paced", "app-ack", NULL };

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static uint64_t s_to_ns(double s)
{
	return (uint64_t)llround(s * TK_NSEC_PER_SEC);
}

/* sleeps until t on CLOCK_MONOTONIC (deadline first, when it comes sooner), or a signal */
static void sleep_until(uint64_t t, uint64_t deadline)
{
	struct timespec ts;

	if (deadline && t > deadline)
		t = deadline;
	ts.tv_sec = (time_t)(t / TK_NSEC_PER_SEC);
	ts.tv_nsec = (long)(t % TK_NSEC_PER_SEC);
	while (!stop_flag && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static void put_u64(uint8_t *p, uint64_t v)
{
	put_u32(p, (uint32_t)(v >> 32));
	put_u32(p + 4, (uint32_t)v);
}

static uint32_t get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get_u64(const uint8_t *p)
{
	return (uint64_t)get_u32(p) << 32 | get_u32(p + 4);
}

/* --- the command line ------------------------------------------------------------ */

enum ps_cmd { CMD_SEND, CMD_RECV };
static const char *const cmd_names[] = { "send", "recv", NULL };

/* the sender's frames */
#define BITRATE_KBPS_DEFAULT 4000
#define BITRATE_KBPS_MAX 10000000   /* 10 Gbit/s */
#define FPS_DEFAULT 30
#define FPS_MAX 240
#define GOP_DEFAULT 60              /* a keyframe every 2 s at 30 fps, as streaming services ask */
#define GOP_MAX 1000
#define KEY_FACTOR_DEFAULT 5
#define KEY_FACTOR_MAX 50
#define JITTER_DEFAULT 0.2
#define JITTER_MAX 0.9
#define FRAME_MAX 1048576           /* bytes: a larger frame is cut to this (1 MiB) */
#define CHUNK_DEFAULT 4096          /* what RTMP pushers set with SetChunkSize */
#define SEED_DEFAULT 1
#define SEND_DURATION_DEFAULT 10
#define CC_NAME_MAX 16              /* the kernel's TCP_CA_NAME_MAX, with the NUL */
/* the receiver */
#define PLAYOUT_MS_DEFAULT 100
#define PLAYOUT_MS_MAX 10000
#define ACK_BYTES_DEFAULT 4096
#define ACK_BYTES_MAX 1073741824    /* 1 GiB */
#define ACCEPT_TIMEOUT_DEFAULT 30
#define ACCEPT_TIMEOUT_MIN 0.001
#define ACCEPT_TIMEOUT_MAX 86400    /* a day */

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

static void defaults(enum ps_cmd cmd, struct opts *o)
{
	memset(o, 0, sizeof(*o));
	o->cmd = cmd;
	o->bitrate_kbps = BITRATE_KBPS_DEFAULT;
	o->fps = FPS_DEFAULT;
	o->gop = GOP_DEFAULT;
	o->key_factor = KEY_FACTOR_DEFAULT;
	o->jitter = JITTER_DEFAULT;
	o->chunk = CHUNK_DEFAULT;
	o->seed = SEED_DEFAULT;
	o->duration_s = cmd == CMD_SEND ? SEND_DURATION_DEFAULT : 0;
	o->mode = MODE_PROMPT;
	o->playout_ms = PLAYOUT_MS_DEFAULT;
	o->ack_bytes = ACK_BYTES_DEFAULT;
	o->accept_timeout_s = ACCEPT_TIMEOUT_DEFAULT;
}

/* "[ADDR]:PORT", "ADDR:PORT", or "PORT" when host_optional, into host and port_s */
static int split_hostport(const char *opt, const char *s, bool host_optional, char *host, size_t hostlen,
			  const char **port_s)
{
	const char *colon = strrchr(s, ':');

	if (s[0] == '[') {
		const char *end = strchr(s, ']');

		if (!end || end[1] != ':' || (size_t)(end - s - 1) >= hostlen) {
			elog("%s: '%s' is not [ADDR]:PORT", opt, s);
			return -1;
		}
		memcpy(host, s + 1, (size_t)(end - s - 1));
		*port_s = end + 2;
		return 0;
	}
	if (!colon) {
		if (!host_optional) {
			elog("%s: '%s' is not ADDR:PORT", opt, s);
			return -1;
		}
		*port_s = s;
		return 0;
	}
	if (strchr(s, ':') != colon || (size_t)(colon - s) >= hostlen) {
		elog("%s: '%s' is not ADDR:PORT (write IPv6 as [ADDR]:PORT)", opt, s);
		return -1;
	}
	memcpy(host, s, (size_t)(colon - s));
	*port_s = colon + 1;
	return 0;
}

/* a socket address from an address (none: IPv6 any, which takes IPv4 too) and a port */
static void fill_sockaddr(const struct cli_addr *a, uint16_t port, struct sockaddr_storage *ss,
			  socklen_t *len)
{
	memset(ss, 0, sizeof(*ss));
	if (a && a->family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		memcpy(&s4->sin_addr, a->bytes, sizeof(s4->sin_addr));
		s4->sin_port = htons(port);
		*len = sizeof(*s4);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		if (a)
			memcpy(&s6->sin6_addr, a->bytes, sizeof(s6->sin6_addr));
		else
			s6->sin6_addr = in6addr_any;
		s6->sin6_port = htons(port);
		*len = sizeof(*s6);
	}
}

static int parse_endpoint(struct opts *o, const char *opt, const char *val, bool host_optional)
{
	char host[INET6_ADDRSTRLEN + 2] = "";
	const char *port_s;
	struct cli_addr a;
	uint16_t port;

	if (split_hostport(opt, val, host_optional, host, sizeof(host), &port_s) ||
	    cli_parse_port(opt, port_s, &port))
		return -1;
	if (port == 0) {
		elog("%s: port 0 is not allowed", opt);
		return -1;
	}
	if (host[0] && cli_parse_addr(opt, host, &a))
		return -1;
	fill_sockaddr(host[0] ? &a : NULL, port, &o->addr, &o->addrlen);
	o->have_addr = true;
	return 0;
}

static int set_connect(void *cfg, const char *opt, const char *val)
{
	return parse_endpoint(cfg, opt, val, false);
}

static int set_listen(void *cfg, const char *opt, const char *val)
{
	return parse_endpoint(cfg, opt, val, true);
}

static int set_cc(void *cfg, const char *opt, const char *val)
{
	struct opts *o = cfg;

	if (!*val || strlen(val) >= CC_NAME_MAX) {
		elog("%s: '%s' is not a congestion control name", opt, val);
		return -1;
	}
	o->cc = val;
	return 0;
}

static int set_json(void *cfg, const char *opt, const char *val)
{
	struct opts *o = cfg;

	(void)opt;
	(void)val;
	o->fmt = REC_JSON;
	o->fmt_set = true;
	return 0;
}

#define TK_OPT_CFG struct opts

/* what both commands write, and how */
#define PS_E_OUTPUT                                                                          \
	OPT_E_FORMAT(fmt, fmt_set),                                                          \
	OPT_E_CALL("json", 0, NULL, set_json, "the same as -f json"),                        \
	OPT_E_OUTPUT(output, "write the records to FILE instead of stdout"),                 \
	OPT_E_FLAG("summary-only", 0, summary_only, "write only the summary record"),        \
	OPT_E_STANDARD,                                                                      \
	OPT_E_END

static const struct opt send_opts[] = {
	OPT_E_CALL("connect", 0, "ADDR:PORT", set_connect, "the receiver to push to (IPv6 as [ADDR]:PORT)"),
	OPT_E_U64("bitrate-kbps", 0, "N", bitrate_kbps, 1, BITRATE_KBPS_MAX,
		  "mean video bitrate in kbit/s, 1.." TK_STR(BITRATE_KBPS_MAX) "\n"
		  "(default " TK_STR(BITRATE_KBPS_DEFAULT) ")"),
	OPT_E_U32("fps", 0, "N", fps, 1, FPS_MAX,
		  "frames per second, 1.." TK_STR(FPS_MAX) " (default " TK_STR(FPS_DEFAULT) ")"),
	OPT_E_U32("gop", 0, "N", gop, 1, GOP_MAX,
		  "frames per group of pictures: one keyframe every N\n"
		  "frames, 1.." TK_STR(GOP_MAX) " (default " TK_STR(GOP_DEFAULT) ")"),
	OPT_E_DOUBLE("keyframe-factor", 0, "X", key_factor, 1, KEY_FACTOR_MAX,
		     "keyframe size / other frame size, 1.." TK_STR(KEY_FACTOR_MAX) "\n"
		     "(default " TK_STR(KEY_FACTOR_DEFAULT) ")"),
	OPT_E_DOUBLE("jitter", 0, "F", jitter, 0, JITTER_MAX,
		     "frame sizes vary uniformly by +-F, 0.." TK_STR(JITTER_MAX) " (default\n"
		     TK_STR(JITTER_DEFAULT) "); a size that is a multiple of the MSS gets\n"
		     "one byte more, as real encoders never align to it"),
	OPT_E_U32("chunk-size", 0, "N", chunk, 0, FRAME_MAX,
		  "write each frame in pieces of N bytes, one write each,\n"
		  "as RTMP pushers write chunks; 0: the whole frame in\n"
		  "one write; 0.." TK_STR(FRAME_MAX) " (default " TK_STR(CHUNK_DEFAULT) ")"),
	OPT_E_CALL("cc", 0, "NAME", set_cc, "congestion control of the socket (default: the\n"
					    "namespace's net.ipv4.tcp_congestion_control)"),
	OPT_E_FLAG("nodelay", 0, nodelay, "set TCP_NODELAY (as librtmp does); default: Nagle on,\n"
					  "as ffmpeg's RTMP pusher leaves it"),
	OPT_E_U64("seed", 0, "N", seed, 0, (double)UINT64_MAX,
		  "seed of the frame-size jitter (default " TK_STR(SEED_DEFAULT) ")"),
	OPT_E_DURATION(duration_s, "seconds to push, decimals allowed (default "
		       TK_STR(SEND_DURATION_DEFAULT) ")"),
	PS_E_OUTPUT,
};

static const struct opt recv_opts[] = {
	OPT_E_CALL("listen", 0, "[ADDR:]PORT", set_listen, "where to accept the push (default address: any)"),
	OPT_E_CHOICE("mode", 0, "MODE", mode, mode_names,
		     "prompt | paced | app-ack (default prompt):\n"
		     "prompt   reads as soon as data arrives\n"
		     "paced    a decoder reading frame k at\n"
		     "         first arrival + playout + k/fps\n"
		     "app-ack  reads at once and sends a " TK_STR(PS_ACK_LEN) "-byte\n"
		     "         application ACK every --ack-bytes"),
	OPT_E_U32("fps", 0, "N", fps, 1, FPS_MAX,
		  "paced: frames per second to read, 1.." TK_STR(FPS_MAX) "\n(default " TK_STR(FPS_DEFAULT) ")"),
	OPT_E_U32("playout-ms", 0, "N", playout_ms, 0, PLAYOUT_MS_MAX,
		  "paced: playout buffer in ms, 0.." TK_STR(PLAYOUT_MS_MAX) " (default\n"
		  TK_STR(PLAYOUT_MS_DEFAULT) ")"),
	OPT_E_U32("ack-bytes", 0, "N", ack_bytes, 1, ACK_BYTES_MAX,
		  "app-ack: bytes between application ACKs,\n"
		  "1.." TK_STR(ACK_BYTES_MAX) " (default " TK_STR(ACK_BYTES_DEFAULT) ")"),
	OPT_E_DOUBLE("accept-timeout", 0, "SECONDS", accept_timeout_s, ACCEPT_TIMEOUT_MIN, ACCEPT_TIMEOUT_MAX,
		     "give up when nobody connects within SECONDS,\n"
		     TK_STR(ACCEPT_TIMEOUT_MIN) ".." TK_STR(ACCEPT_TIMEOUT_MAX)
		     " (default " TK_STR(ACCEPT_TIMEOUT_DEFAULT) ")"),
	OPT_E_DURATION(duration_s, "read for SECONDS at most, decimals allowed\n"
				   "(default: until the sender closes)"),
	PS_E_OUTPUT,
};

static const struct opt top_opts[] = {
	OPT_E_STANDARD,
	OPT_E_END,
};
#undef TK_OPT_CFG

static const char top_synopsis[] =
"Usage: pushsim [OPTIONS] COMMAND [OPTIONS]\n"
"A live-stream push over TCP, both ends. The sender writes one video-like frame\n"
"per tick and idles until the next; the receiver reads like a real player or\n"
"media server. Both ends write one record per second and a summary.\n"
"\n";

static const char send_synopsis[] =
"Usage: pushsim send --connect ADDR:PORT [OPTIONS]\n"
"Pushes video-like frames to a receiver: one frame per tick (bitrate / fps on\n"
"average, a keyframe every GOP, sizes jittered), then idle until the next tick.\n"
"\n";

static const char recv_synopsis[] =
"Usage: pushsim recv --listen [ADDR:]PORT [OPTIONS]\n"
"Accepts one push and reads it the way a player or a media server does.\n"
"\n";

static void records_help(FILE *f);

static void top_footer(FILE *f)
{
	fprintf(f,
		"\n"
		"Commands:\n"
		"  %s --connect ADDR:PORT      push frames to a receiver\n"
		"  %s --listen [ADDR:]PORT     accept one push and read it as a player would\n"
		"Each command takes its own options (pushsim COMMAND --help).\n",
		cmd_names[CMD_SEND], cmd_names[CMD_RECV]);
	records_help(f);
}

static const int send_exits[] = { TK_EXIT_OK, TK_EXIT_FAIL, TK_EXIT_USAGE, TK_EXIT_NOPERM, TK_EXIT_NOTSUP,
				  TK_EXIT_NETWORK, -1 };
static const int recv_exits[] = { TK_EXIT_OK, TK_EXIT_FAIL, TK_EXIT_USAGE, TK_EXIT_DATA, TK_EXIT_NETWORK,
				  -1 };
static const int all_exits[] = { TK_EXIT_OK, TK_EXIT_FAIL, TK_EXIT_USAGE, TK_EXIT_NOPERM, TK_EXIT_NOTSUP,
				 TK_EXIT_DATA, TK_EXIT_NETWORK, -1 };

static const struct opt_cli top_cli = { top_synopsis, top_opts, NULL, top_footer, all_exits };
static const struct opt_cli clis[] = {
	[CMD_SEND] = { send_synopsis, send_opts, NULL, records_help, send_exits },
	[CMD_RECV] = { recv_synopsis, recv_opts, NULL, records_help, recv_exits },
};

/* what the options say together */
static void check_args(const struct opts *o)
{
	if (!o->have_addr)
		cli_usage_die(o->cmd == CMD_SEND ? "--connect: missing (where to push)"
						 : "--listen: missing (where to accept the push)");
}

/* pushsim's own options, then the command: its index in cmd_names; argv[*first] is its name */
static enum ps_cmd find_command(int argc, char **argv, int *first)
{
	int i = 1;

	/* one at a time, so that the command's options are left to it */
	while (i < argc && argv[i][0] == '-' && argv[i][1]) {
		char *one[] = { argv[0], argv[i], NULL };

		opt_parse(&top_cli, 2, one, NULL);
		i++;
	}
	if (i == argc)
		cli_usage_die("missing command: %s or %s (see --help)", cmd_names[CMD_SEND],
			      cmd_names[CMD_RECV]);
	for (int k = 0; cmd_names[k]; k++)
		if (!strcmp(argv[i], cmd_names[k])) {
			*first = i;
			return (enum ps_cmd)k;
		}
	cli_usage_die("'%s' is not a command: use %s or %s", argv[i], cmd_names[CMD_SEND],
		      cmd_names[CMD_RECV]);
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	int at, first;
	enum ps_cmd cmd = find_command(argc, argv, &at);

	defaults(cmd, o);
	/* the command's name stands where the program's was */
	first = opt_parse(&clis[cmd], argc - at, argv + at, o);
	if (first < argc - at)
		cli_usage_die("unexpected argument '%s' (see --help)", argv[at + first]);
	check_args(o);
}
/* --- records ------------------------------------------------------------------------- */

/*
 * Every time carries its unit in its key: times and durations in seconds
 * (_s), latencies and intervals in microseconds (_us); the table shows the
 * latter in ms.
 */
#define MBIT_PER_BIT 1e-6
#define MS_PER_US 1e-3

struct stats {
	const char *role;           /* the command's name */
	bool receiver;
	const char *mode;           /* "push", or the receiver's --mode */
	uint64_t t0_ns;             /* when the connection was up; 0 before */
	/* this second */
	uint64_t sec_index, sec_bytes, sec_frames, sec_late, sec_stalls, sec_lat_max_ns;
	/* whole run */
	uint64_t frames, bytes, late, stalls, app_acks, lat_sum_ns, lat_max_ns, lat_n;
	uint64_t stall_start_ns, longest_stall_ns;
	uint32_t mss;
	char cc[CC_NAME_MAX];
	struct rec_writer *w;
	bool summary_only;
	bool write_failed;
};

/* a count only the sender keeps (the receiver cannot see its socket's backlog) */
static struct rec_value sender_only(const struct stats *st, uint64_t v)
{
	return st->receiver ? rv_null() : rv_u64(v);
}

/* a latency only the receiver measures, in us; none before its first frame */
static struct rec_value latency_us(const struct stats *st, bool have, uint64_t ns)
{
	return st->receiver && have ? rv_u64(ns / NS_PER_US) : rv_null();
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
	  sender_only(st, st->longest_stall_ns / NS_PER_US))                                       \
	X("app_acks", REC_U64, 0, REC_COL("appacks", 7, 0, 0), rv_u64(st->app_acks))              \
	X("mss", REC_U64, 0, REC_COL("mss", 5, 0, 0), rv_u64(st->mss))                            \
	X("frame_latency_mean_us", REC_U64, 0, REC_COL("lat ms", 7, MS_PER_US, 1),                \
	  latency_us(st, st->lat_n, st->lat_n ? st->lat_sum_ns / st->lat_n : 0))                   \
	X("frame_latency_max_us", REC_U64, 0, REC_COL("lat max ms", 10, MS_PER_US, 1),            \
	  latency_us(st, st->lat_n, st->lat_max_ns))
static const struct rec_field summary_fields[] = { SUMMARY_FIELDS(REC_FIELD) };
static const struct rec_schema summary_schema = { "summary", summary_fields, ARRAY_SIZE(summary_fields) };

static void emit_second(struct stats *st)
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
static uint64_t second_end(const struct stats *st)
{
	return st->t0_ns + (st->sec_index + 1) * TK_NSEC_PER_SEC;
}

/* closes every full second up to `t` */
static void advance_seconds(struct stats *st, uint64_t t)
{
	while (t >= second_end(st))
		emit_second(st);
}

static void emit_summary(struct stats *st, uint64_t end_ns)
{
	double secs = st->t0_ns && end_ns > st->t0_ns ? (double)(end_ns - st->t0_ns) / TK_NSEC_PER_SEC : 0;
	const struct rec_value v[] = { SUMMARY_FIELDS(REC_VALUE) };

	rec_writer_reset_header(st->w); /* the table: the summary under its own header */
	if (rec_write(st->w, &summary_schema, v))
		st->write_failed = true;
}

#define HELP_WIDTH 79
#define HELP_INDENT 11

/* "  second   key, key, ...", wrapped under the first key */
static void help_keys(FILE *f, const struct rec_schema *s)
{
	int col = fprintf(f, "  %-*s", HELP_INDENT - 2, s->type);

	for (unsigned int i = 0; i < s->nfields; i++) {
		const char *name = s->fields[i].name;
		/* the name and the comma after it */
		int len = (int)strlen(name) + 1;

		if (i && col + 2 + len > HELP_WIDTH) {
			fputs(",\n", f);
			col = fprintf(f, "%*s", HELP_INDENT, "");
		} else if (i) {
			col += fprintf(f, ", ");
		}
		col += fprintf(f, "%s", name);
	}
	fputc('\n', f);
}

/* --help's part on the records: their keys from their schemas, what they mean */
static void records_help(FILE *f)
{
	fputs("\nRecords (keys in JSON and CSV; the table shows the latencies in ms):\n", f);
	help_keys(f, &second_schema);
	help_keys(f, &summary_schema);
	fputs("Units: every time carries its unit in its key: times and durations in\n"
	      "seconds (_s), latencies and intervals in microseconds (_us); rates in bit/s\n"
	      "(_bps); the one key in ms is the longest stall again, in whole ms, kept for\n"
	      "older readers. A second's time is when it began, since the connection; its\n"
	      "bytes are, at the sender, the bytes the peer ACKed in that second, at the\n"
	      "receiver the bytes it read; the summary's goodput is the mean over the run.\n"
	      "A frame is late when the sender starts writing it more than a quarter of a\n"
	      "frame interval after its scheduled time. A stall is a frame interval at\n"
	      "whose end bytes written before it were still not sent (tcpi_notsent_bytes\n"
	      "> 0), i.e. a frame not fully written to the network within one interval.\n"
	      "Frame latency (receiver) is the time from the frame's scheduled send time\n"
	      "to the moment its last byte was read.\n",
	      f);
}

/* --- the connection -------------------------------------------------------------- */

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
static void sock_names(int fd, struct stats *st)
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

/* --- sender ------------------------------------------------------------------------ */

#define LATE_DIVISOR 4             /* late: more than 1/4 of a frame interval after its time */
#define END_WAIT_NS (2 * TK_NSEC_PER_SEC) /* at the end, for the last frames, then the last ACKs */
#define END_POLL_US 1000
#define EXACT_SLEEP_NS (2 * NS_PER_MS) /* a tick closer than this is slept to, not polled (ms) */
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
	double mean = (double)o->bitrate_kbps * 1000 / 8 / o->fps;
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

/* the end of a frame interval: was everything written before it sent? */
static void interval_end(struct sender *s)
{
	struct stats *st = s->st;

	if (s->seq > 0 && notsent_bytes(s->fd) > 0) {
		st->stalls++;
		st->sec_stalls++;
		if (!s->stalled)
			st->stall_start_ns = s->next_tick;
		s->stalled = true;
	} else if (s->stalled) {
		end_stall(s, s->next_tick);
	}
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
	return (int)((wait + NS_PER_MS - 1) / NS_PER_MS);
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
		if (poll(&pfd, 1, (int)((until - t) / NS_PER_MS) + 1) > 0 && drain_app_acks(s))
			break;
}

static int run_sender(const struct opts *o, struct stats *st)
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

/* --- receiver ---------------------------------------------------------------------- */

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
		if (deadline && (deadline - t + NS_PER_MS - 1) / NS_PER_MS < (uint64_t)ms)
			ms = (int)((deadline - t + NS_PER_MS - 1) / NS_PER_MS);
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
	uint64_t due = rv->t_first + (uint64_t)rv->o->playout_ms * NS_PER_MS + rv->paced_k * rv->interval_ns;

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

static int run_receiver(const struct opts *o, struct stats *st)
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

/* --- the run ------------------------------------------------------------------------ */

/* where the records go, and their writer, in the format asked or the default for it */
static int open_output(struct opts *o, struct stats *st, FILE **out)
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

static int setup(struct opts *o, struct stats *st, FILE **out)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	memset(st, 0, sizeof(*st));
	st->role = cmd_names[o->cmd];
	st->receiver = o->cmd == CMD_RECV;
	st->mode = o->cmd == CMD_SEND ? "push" : mode_names[o->mode];
	st->summary_only = o->summary_only;
	return open_output(o, st, out);
}

/* the writer and the file closed; a failed write turns success into a failure */
static int teardown(const struct opts *o, struct stats *st, FILE *out, int rc)
{
	bool failed = st->w && rec_writer_free(st->w);

	if (out && out != stdout && fclose(out))
		failed = true;
	if ((failed || st->write_failed) && rc == TK_EXIT_OK) {
		elog("%s: write failed: %s", o->output ? o->output : "stdout", strerror(errno ? errno : EIO));
		rc = TK_EXIT_FAIL;
	}
	return rc;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct stats st;
	FILE *out = NULL;
	int rc;

	log_init(argv[0]);
	parse_args(argc, argv, &o);
	rc = setup(&o, &st, &out);
	if (rc == TK_EXIT_OK) {
		rc = o.cmd == CMD_SEND ? run_sender(&o, &st) : run_receiver(&o, &st);
		if (st.t0_ns)
			emit_summary(&st, tk_mono_ns());
	}
	return teardown(&o, &st, out, rc);
}
