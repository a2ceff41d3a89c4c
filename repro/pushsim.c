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
#include <getopt.h>
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
#include "record.h"

#define PS_MAGIC 0x50534831u /* "PSH1" */
#define PS_HDR_LEN 24
#define PS_ACK_LEN 16
#define PS_FLAG_KEY 1u
#define NS_PER_S 1000000000ull

enum ps_mode { MODE_PROMPT, MODE_PACED, MODE_APPACK };
static const char *const mode_names[] = { "prompt", "paced", "app-ack", NULL };

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
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

/* --- options ------------------------------------------------------------------- */

struct opts {
	bool sender;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	uint64_t bitrate_bps;
	uint32_t fps;
	uint32_t gop;
	double key_factor;
	double jitter;
	uint32_t chunk;
	const char *cc;
	bool nodelay;
	uint32_t duration_s;
	uint64_t seed;
	int mode;
	uint32_t playout_ms;
	uint32_t ack_bytes;
	uint32_t accept_timeout_s;
	enum rec_format fmt;
	bool fmt_set;
	bool quiet_seconds;
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: pushsim send --connect ADDR:PORT [options]\n"
		"       pushsim recv --listen [ADDR:]PORT [options]\n"
		"\n"
		"A live-stream push over TCP. The sender writes one video-like frame per\n"
		"tick and idles until the next; the receiver reads like a real player or\n"
		"media server. Both ends print one record per second and a summary.\n"
		"\n"
		"send options:\n"
		"  --connect ADDR:PORT     receiver to push to (IPv6 as [ADDR]:PORT)\n"
		"  --bitrate-kbps N        mean video bitrate in kbit/s (default 4000)\n"
		"  --fps N                 frames per second, 1..240 (default 30)\n"
		"  --gop N                 frames per group of pictures: one keyframe every\n"
		"                          N frames, 1..1000 (default 60)\n"
		"  --keyframe-factor X     keyframe size / other frame size, 1..50 (default 5)\n"
		"  --jitter F              frame sizes vary uniformly by +-F, 0..0.9 (default 0.2)\n"
		"                          (a size that is a multiple of the MSS gets one byte\n"
		"                          more, as real encoders never align to it)\n"
		"  --chunk-size N          write each frame in pieces of N bytes, one write\n"
		"                          each, as RTMP pushers write chunks; 0: the whole\n"
		"                          frame in one write, 0..1048576 (default 4096)\n"
		"  --cc NAME               congestion control of the socket (default: the\n"
		"                          namespace's net.ipv4.tcp_congestion_control)\n"
		"  --nodelay               set TCP_NODELAY (as librtmp does); default: Nagle\n"
		"                          on, as ffmpeg's RTMP pusher leaves it\n"
		"  --seed N                seed of the frame-size jitter (default 1)\n"
		"\n"
		"recv options:\n"
		"  --listen [ADDR:]PORT    where to accept the push (default address: any)\n"
		"  --mode MODE             prompt | paced | app-ack (default prompt):\n"
		"                          prompt   reads as soon as data arrives\n"
		"                          paced    a decoder reading frame k at\n"
		"                                   first arrival + playout + k/fps\n"
		"                          app-ack  reads at once and sends a 16-byte\n"
		"                                   application ACK every --ack-bytes\n"
		"  --fps N                 paced: frames per second to read (default 30)\n"
		"  --playout-ms N          paced: playout buffer in ms, 0..10000 (default 100)\n"
		"  --ack-bytes N           app-ack: bytes between application ACKs,\n"
		"                          1..1073741824 (default 4096)\n"
		"  --accept-timeout S      give up when nobody connects within S seconds,\n"
		"                          1..86400 (default 30)\n"
		"\n"
		"common options:\n"
		"  --duration S            send: seconds to push; recv: seconds to read at\n"
		"                          most (0: until the sender closes), 0..86400\n"
		"                          (default 10 to send, 0 to receive)\n"
		"  --format table|csv|json output format (default: table on a terminal,\n"
		"                          JSON lines otherwise)\n"
		"  --json                  the same as --format json\n"
		"  --summary-only          print only the summary record\n"
		"  -h, --help              this help\n"
		"  -V, --version           print the version\n"
		"\n"
		"Records (fields in JSON and CSV):\n"
		"  second   role, second, bytes, goodput_bps (sender: bytes ACKed by the\n"
		"           peer in that second; receiver: bytes read), frames,\n"
		"           late_frames, stalls, frame_latency_max_us\n"
		"  summary  role, mode, cc, duration_s, frames, bytes, goodput_bps (mean),\n"
		"           late_frames, stalls, longest_stall_ms, app_acks, mss,\n"
		"           frame_latency_mean_us, frame_latency_max_us\n"
		"A frame is late when the sender starts writing it more than a quarter of a\n"
		"frame interval after its scheduled time. A stall is a frame interval at\n"
		"whose end bytes written before it were still not sent (tcpi_notsent_bytes\n"
		"> 0), i.e. a frame not fully written to the network within one interval.\n"
		"Frame latency (receiver) is the time from the frame's scheduled send time\n"
		"to the moment its last byte was read.\n"
		"\n"
		"Exit status: 0 ok, 1 failure, 2 bad arguments, %d network failure\n"
		"(connect, listen, accept, read or write).\n",
		TK_EXIT_NETWORK);
}

static int parse_hostport(const char *opt, const char *s, bool host_optional,
			  struct sockaddr_storage *ss, socklen_t *len)
{
	char host[INET6_ADDRSTRLEN + 2] = "";
	const char *port_s;
	struct cli_addr a;
	uint16_t port;

	memset(ss, 0, sizeof(*ss));
	if (s[0] == '[') {
		const char *end = strchr(s, ']');

		if (!end || end[1] != ':' || (size_t)(end - s - 1) >= sizeof(host)) {
			elog("%s: '%s' is not [ADDR]:PORT", opt, s);
			return -1;
		}
		memcpy(host, s + 1, (size_t)(end - s - 1));
		port_s = end + 2;
	} else {
		const char *colon = strrchr(s, ':');

		if (!colon) {
			if (!host_optional) {
				elog("%s: '%s' is not ADDR:PORT", opt, s);
				return -1;
			}
			port_s = s;
		} else {
			if (strchr(s, ':') != colon || (size_t)(colon - s) >= sizeof(host)) {
				elog("%s: '%s' is not ADDR:PORT (write IPv6 as [ADDR]:PORT)", opt, s);
				return -1;
			}
			memcpy(host, s, (size_t)(colon - s));
			port_s = colon + 1;
		}
	}
	if (cli_parse_port(opt, port_s, &port))
		return -1;
	if (port == 0) {
		elog("%s: port 0 is not allowed", opt);
		return -1;
	}
	if (!host[0]) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_any;
		s6->sin6_port = htons(port);
		*len = sizeof(*s6);
		return 0;
	}
	if (cli_parse_addr(opt, host, &a))
		return -1;
	if (a.family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		memcpy(&s4->sin_addr, a.bytes, 4);
		s4->sin_port = htons(port);
		*len = sizeof(*s4);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		memcpy(&s6->sin6_addr, a.bytes, 16);
		s6->sin6_port = htons(port);
		*len = sizeof(*s6);
	}
	return 0;
}

enum {
	OPT_CONNECT = 256, OPT_LISTEN, OPT_BITRATE, OPT_FPS, OPT_GOP, OPT_KEYF, OPT_JITTER, OPT_CC,
	OPT_NAGLE, OPT_SEED, OPT_CHUNK, OPT_MODE, OPT_PLAYOUT, OPT_ACKB, OPT_ACCEPT_TO, OPT_DURATION,
	OPT_FORMAT, OPT_JSON, OPT_SUMMARY_ONLY,
};

static const struct option long_opts[] = {
	{ "connect", required_argument, NULL, OPT_CONNECT },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "bitrate-kbps", required_argument, NULL, OPT_BITRATE },
	{ "fps", required_argument, NULL, OPT_FPS },
	{ "gop", required_argument, NULL, OPT_GOP },
	{ "keyframe-factor", required_argument, NULL, OPT_KEYF },
	{ "jitter", required_argument, NULL, OPT_JITTER },
	{ "cc", required_argument, NULL, OPT_CC },
	{ "nodelay", no_argument, NULL, OPT_NAGLE },
	{ "chunk-size", required_argument, NULL, OPT_CHUNK },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "playout-ms", required_argument, NULL, OPT_PLAYOUT },
	{ "ack-bytes", required_argument, NULL, OPT_ACKB },
	{ "accept-timeout", required_argument, NULL, OPT_ACCEPT_TO },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "summary-only", no_argument, NULL, OPT_SUMMARY_ONLY },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* options that belong to one role only */
static const int send_only[] = { OPT_CONNECT, OPT_BITRATE, OPT_GOP, OPT_KEYF, OPT_JITTER,
				 OPT_CC, OPT_NAGLE, OPT_SEED, OPT_CHUNK };
static const int recv_only[] = { OPT_LISTEN, OPT_MODE, OPT_PLAYOUT, OPT_ACKB, OPT_ACCEPT_TO };

static const char *opt_name(int c)
{
	for (const struct option *o = long_opts; o->name; o++)
		if (o->val == c)
			return o->name;
	return "?";
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	bool have_addr = false, have_duration = false;
	int c;

	memset(o, 0, sizeof(*o));
	o->bitrate_bps = 4000000;
	o->fps = 30;
	o->gop = 60;
	o->key_factor = 5;
	o->jitter = 0.2;
	o->seed = 1;
	o->chunk = 4096;
	o->mode = MODE_PROMPT;
	o->playout_ms = 100;
	o->ack_bytes = 4096;
	o->accept_timeout_s = 30;
	o->fmt = rec_format_default(stdout);

	if (argc < 2)
		cli_usage_die("missing command: send or recv (see --help)");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		exit(TK_EXIT_OK);
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		cli_print_version();
		exit(TK_EXIT_OK);
	}
	if (!strcmp(argv[1], "send"))
		o->sender = true;
	else if (strcmp(argv[1], "recv"))
		cli_usage_die("'%s' is not a command: use send or recv", argv[1]);
	o->duration_s = o->sender ? 10 : 0;

	optind = 2;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "hV", long_opts, NULL)) != -1) {
		uint64_t u;
		int rc = 0;

		for (size_t i = 0; i < ARRAY_SIZE(send_only); i++)
			if (c == send_only[i] && !o->sender)
				cli_usage_die("--%s: only for pushsim send", opt_name(c));
		for (size_t i = 0; i < ARRAY_SIZE(recv_only); i++)
			if (c == recv_only[i] && o->sender)
				cli_usage_die("--%s: only for pushsim recv", opt_name(c));
		switch (c) {
		case OPT_CONNECT:
			rc = parse_hostport("--connect", optarg, false, &o->addr, &o->addrlen);
			have_addr = true;
			break;
		case OPT_LISTEN:
			rc = parse_hostport("--listen", optarg, true, &o->addr, &o->addrlen);
			have_addr = true;
			break;
		case OPT_BITRATE:
			rc = cli_parse_u64("--bitrate-kbps", optarg, 1, 10000000, &u);
			o->bitrate_bps = u * 1000;
			break;
		case OPT_FPS: rc = cli_parse_u32("--fps", optarg, 1, 240, &o->fps); break;
		case OPT_GOP: rc = cli_parse_u32("--gop", optarg, 1, 1000, &o->gop); break;
		case OPT_KEYF:
			rc = cli_parse_double("--keyframe-factor", optarg, 1, 50, &o->key_factor);
			break;
		case OPT_JITTER: rc = cli_parse_double("--jitter", optarg, 0, 0.9, &o->jitter); break;
		case OPT_CC:
			if (!*optarg || strlen(optarg) >= 16)
				cli_usage_die("--cc: '%s' is not a congestion control name", optarg);
			o->cc = optarg;
			break;
		case OPT_NAGLE: o->nodelay = true; break;
		case OPT_CHUNK: rc = cli_parse_u32("--chunk-size", optarg, 0, 1u << 20, &o->chunk); break;
		case OPT_SEED: rc = cli_parse_u64("--seed", optarg, 0, UINT64_MAX, &o->seed); break;
		case OPT_MODE: rc = cli_parse_choice("--mode", optarg, mode_names, &o->mode); break;
		case OPT_PLAYOUT:
			rc = cli_parse_u32("--playout-ms", optarg, 0, 10000, &o->playout_ms);
			break;
		case OPT_ACKB:
			rc = cli_parse_u32("--ack-bytes", optarg, 1, 1u << 30, &o->ack_bytes);
			break;
		case OPT_ACCEPT_TO:
			rc = cli_parse_u32("--accept-timeout", optarg, 1, 86400, &o->accept_timeout_s);
			break;
		case OPT_DURATION:
			rc = cli_parse_u32("--duration", optarg, o->sender ? 1 : 0, 86400,
					   &o->duration_s);
			have_duration = true;
			break;
		case OPT_FORMAT:
			rc = rec_format_parse("--format", optarg, &o->fmt);
			o->fmt_set = true;
			break;
		case OPT_JSON: o->fmt = REC_JSON; break;
		case OPT_SUMMARY_ONLY: o->quiet_seconds = true; break;
		case 'h': usage(stdout); exit(TK_EXIT_OK);
		case 'V': cli_print_version(); exit(TK_EXIT_OK);
		default:
			if (optopt >= OPT_CONNECT)
				cli_usage_die("--%s: needs a value", opt_name(optopt));
			cli_usage_die("%s: unknown option (see --help)", argv[optind - 1]);
		}
		if (rc)
			exit(TK_EXIT_USAGE);
	}
	if (optind < argc)
		cli_usage_die("'%s': unexpected argument", argv[optind]);
	if (!have_addr)
		cli_usage_die(o->sender ? "--connect: missing (where to push)"
					: "--listen: missing (where to accept the push)");
	(void)have_duration;
}

/* --- records ------------------------------------------------------------------ */

static const struct rec_field second_fields[] = {
	{ "role", REC_STR, 0, "role", -4 },
	{ "second", REC_U64, 0, "sec", 5 },
	{ "bytes", REC_U64, 0, "bytes", 10 },
	{ "goodput_bps", REC_U64, 0, "goodput Mb/s", 12, 1e-6, 2 },
	{ "frames", REC_U64, 0, "frames", 6 },
	{ "late_frames", REC_U64, 0, "late", 5 },
	{ "stalls", REC_U64, 0, "stalls", 6 },
	{ "frame_latency_max_us", REC_U64, 0, "lat max ms", 10, 1e-3, 1 },
};
static const struct rec_schema second_schema = { "second", second_fields,
						 ARRAY_SIZE(second_fields) };

static const struct rec_field summary_fields[] = {
	{ "role", REC_STR, 0, "role", -4 },
	{ "mode", REC_STR, 0, "mode", -7 },
	{ "cc", REC_STR, 0, "cc", -10 },
	{ "duration_s", REC_F64, 3, "secs", 6, 0, 1 },
	{ "frames", REC_U64, 0, "frames", 6 },
	{ "bytes", REC_U64, 0, "bytes", 10 },
	{ "goodput_bps", REC_U64, 0, "goodput Mb/s", 12, 1e-6, 2 },
	{ "late_frames", REC_U64, 0, "late", 5 },
	{ "stalls", REC_U64, 0, "stalls", 6 },
	{ "longest_stall_ms", REC_U64, 0, "stall ms", 8 },
	{ "app_acks", REC_U64, 0, "appacks", 7 },
	{ "mss", REC_U64, 0, "mss", 5 },
	{ "frame_latency_mean_us", REC_U64, 0, "lat ms", 7, 1e-3, 1 },
	{ "frame_latency_max_us", REC_U64, 0, "lat max ms", 10, 1e-3, 1 },
};
static const struct rec_schema summary_schema = { "summary", summary_fields,
						  ARRAY_SIZE(summary_fields) };

struct stats {
	const char *role;
	uint64_t t0_ns;
	/* this second */
	uint64_t sec_index, sec_bytes, sec_frames, sec_late, sec_stalls, sec_lat_max_ns;
	/* whole run */
	uint64_t frames, bytes, late, stalls, app_acks, lat_sum_ns, lat_max_ns, lat_n;
	uint64_t stall_start_ns, longest_stall_ns;
	uint32_t mss;
	char cc[16];
	struct rec_writer *w;
	bool quiet_seconds;
	bool write_failed;
};

static void emit_second(struct stats *st)
{
	struct rec_value v[ARRAY_SIZE(second_fields)];

	if (!st->quiet_seconds) {
		v[0] = rv_str(st->role);
		v[1] = rv_u64(st->sec_index);
		v[2] = rv_u64(st->sec_bytes);
		v[3] = rv_u64(st->sec_bytes * 8);
		v[4] = rv_u64(st->sec_frames);
		v[5] = rv_u64(st->sec_late);
		v[6] = rv_u64(st->sec_stalls);
		v[7] = st->sec_frames && st->lat_n ? rv_u64(st->sec_lat_max_ns / 1000) : rv_null();
		if (strcmp(st->role, "recv"))
			v[7] = rv_null();
		if (rec_write(st->w, &second_schema, v))
			st->write_failed = true;
		rec_writer_flush(st->w);
	}
	st->sec_index++;
	st->sec_bytes = st->sec_frames = st->sec_late = st->sec_stalls = st->sec_lat_max_ns = 0;
}

/* closes every full second up to `t` */
static void advance_seconds(struct stats *st, uint64_t t)
{
	while (t >= st->t0_ns + (st->sec_index + 1) * NS_PER_S)
		emit_second(st);
}

static void emit_summary(struct stats *st, const char *mode, uint64_t end_ns)
{
	struct rec_value v[ARRAY_SIZE(summary_fields)];
	double secs = st->t0_ns && end_ns > st->t0_ns ? (double)(end_ns - st->t0_ns) / 1e9 : 0;
	bool recv = !strcmp(st->role, "recv");

	v[0] = rv_str(st->role);
	v[1] = rv_str(mode);
	v[2] = st->cc[0] ? rv_str(st->cc) : rv_null();
	v[3] = rv_f64(secs);
	v[4] = rv_u64(st->frames);
	v[5] = rv_u64(st->bytes);
	v[6] = rv_u64(secs > 0 ? (uint64_t)((double)st->bytes * 8 / secs) : 0);
	v[7] = rv_u64(st->late);
	v[8] = recv ? rv_null() : rv_u64(st->stalls);
	v[9] = recv ? rv_null() : rv_u64(st->longest_stall_ns / 1000000);
	v[10] = rv_u64(st->app_acks);
	v[11] = rv_u64(st->mss);
	v[12] = recv && st->lat_n ? rv_u64(st->lat_sum_ns / st->lat_n / 1000) : rv_null();
	v[13] = recv && st->lat_n ? rv_u64(st->lat_max_ns / 1000) : rv_null();
	rec_writer_reset_header(st->w);
	if (rec_write(st->w, &summary_schema, v))
		st->write_failed = true;
}

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
}

/* --- sender ------------------------------------------------------------------- */

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
	double mean = (double)o->bitrate_bps / 8 / o->fps;
	double p = mean * o->gop / (o->key_factor + o->gop - 1);
	double base = seq % o->gop == 0 ? p * o->key_factor : p;
	double u = (double)(rng_next(rng) >> 11) / 9007199254740992.0; /* [0,1) */
	double sz = base * (1 + o->jitter * (2 * u - 1));
	size_t total = sz < PS_HDR_LEN + 1 ? PS_HDR_LEN + 1 : (size_t)llround(sz);

	if (mss && total % mss == 0)
		total++;
	return total;
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static uint32_t notsent_bytes(int fd, uint64_t *acked)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
		return 0;
	if (acked)
		*acked = ti.tcpi_bytes_acked;
	return ti.tcpi_notsent_bytes;
}

/* reads and counts the receiver's application ACKs; -1 on EOF or error */
static int drain_app_acks(int fd, struct stats *st, uint64_t *partial)
{
	uint8_t buf[4096];

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n > 0) {
			*partial += (uint64_t)n;
			st->app_acks += *partial / PS_ACK_LEN;
			*partial %= PS_ACK_LEN;
			continue;
		}
		if (n == 0)
			return -1;
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
	}
}

static int run_sender(const struct opts *o, struct stats *st)
{
	uint64_t interval_ns = NS_PER_S / o->fps, rng = o->seed, ack_partial = 0;
	uint64_t seq = 0, t_end, next_tick, acked_prev = 0, acked = 0;
	size_t cap = 1 << 20, len = 0, off = 0;
	uint8_t *frame = malloc(cap);
	int one = 1, fd, rc = TK_EXIT_OK;
	bool in_frame = false, stalled = false;

	if (!frame) {
		elog("out of memory");
		return TK_EXIT_FAIL;
	}
	for (size_t i = 0; i < cap; i++)
		frame[i] = (uint8_t)(i * 131 + 7);
	fd = socket(o->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		elog("socket: %s", strerror(errno));
		free(frame);
		return TK_EXIT_NETWORK;
	}
	if (o->cc && setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, o->cc, (socklen_t)strlen(o->cc))) {
		elog("--cc: cannot use congestion control '%s': %s", o->cc, strerror(errno));
		close(fd);
		free(frame);
		return errno == ENOENT ? TK_EXIT_NOTSUP : TK_EXIT_FAIL;
	}
	if (o->nodelay)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&o->addr, o->addrlen)) {
		elog("connect: %s", strerror(errno));
		close(fd);
		free(frame);
		return TK_EXIT_NETWORK;
	}
	sock_names(fd, st);
	set_nonblock(fd);
	/* the SYN counts in tcpi_bytes_acked: start from what is acked now */
	notsent_bytes(fd, &acked_prev);

	st->t0_ns = now_ns();
	next_tick = st->t0_ns;
	t_end = st->t0_ns + (uint64_t)o->duration_s * NS_PER_S;
	while (!stop_flag) {
		uint64_t t = now_ns();
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int timeout_ms;

		advance_seconds(st, t);
		if (!in_frame && t >= next_tick) {
			if (next_tick >= t_end)
				break;
			/* end of an interval: was everything written before it sent? */
			if (seq > 0 && notsent_bytes(fd, &acked) > 0) {
				st->stalls++;
				st->sec_stalls++;
				if (!stalled)
					st->stall_start_ns = next_tick;
				stalled = true;
			} else if (stalled) {
				stalled = false;
				if (next_tick - st->stall_start_ns > st->longest_stall_ns)
					st->longest_stall_ns = next_tick - st->stall_start_ns;
			}
			if (t - next_tick > interval_ns / 4) {
				st->late++;
				st->sec_late++;
			}
			len = frame_size(o, seq, &rng, st->mss);
			if (len > cap)
				len = cap;
			put_u32(frame, PS_MAGIC);
			put_u32(frame + 4, (uint32_t)seq);
			put_u32(frame + 8, (uint32_t)(len - PS_HDR_LEN));
			put_u32(frame + 12, seq % o->gop == 0 ? PS_FLAG_KEY : 0);
			put_u64(frame + 16, next_tick);
			off = 0;
			in_frame = true;
			seq++;
			next_tick = st->t0_ns + seq * NS_PER_S / o->fps;
		}
		if (in_frame) {
			size_t piece = len - off;
			ssize_t n;

			if (o->chunk && piece > o->chunk - off % o->chunk)
				piece = o->chunk - off % o->chunk;
			n = send(fd, frame + off, piece, MSG_NOSIGNAL);

			if (n > 0) {
				off += (size_t)n;
				if (off == len) {
					in_frame = false;
					st->frames++;
					st->sec_frames++;
				}
				continue;
			}
			if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
				elog("send: %s", strerror(errno));
				rc = TK_EXIT_NETWORK;
				break;
			}
			pfd.events |= POLLOUT;
		}
		notsent_bytes(fd, &acked);
		if (acked > acked_prev) {
			st->sec_bytes += acked - acked_prev;
			st->bytes += acked - acked_prev;
			acked_prev = acked;
		}
		timeout_ms = 1;
		if (!in_frame && next_tick > t) {
			uint64_t wait = next_tick - t;
			uint64_t to_sec = st->t0_ns + (st->sec_index + 1) * NS_PER_S - t;

			if (to_sec < wait)
				wait = to_sec;
			timeout_ms = (int)((wait + 999999) / 1000000);
			if (wait < 2000000) {
				/* poll() has ms granularity; sleep to the tick exactly */
				struct timespec ts = { (time_t)(next_tick / NS_PER_S),
						       (long)(next_tick % NS_PER_S) };

				if (wait == next_tick - t) {
					clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
					continue;
				}
			}
		}
		if (poll(&pfd, 1, timeout_ms) > 0 && (pfd.revents & (POLLIN | POLLERR | POLLHUP))) {
			if (drain_app_acks(fd, st, &ack_partial)) {
				elog("the receiver closed the connection");
				rc = TK_EXIT_NETWORK;
				break;
			}
		}
	}
	/* let the last frames reach the receiver before closing (2 s at most) */
	for (int i = 0; i < 2000 && rc == TK_EXIT_OK && !stop_flag; i++) {
		struct tcp_info ti;
		socklen_t l = sizeof(ti);

		memset(&ti, 0, sizeof(ti));
		if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &l) ||
		    (ti.tcpi_notsent_bytes == 0 && ti.tcpi_unacked == 0))
			break;
		advance_seconds(st, now_ns());
		usleep(1000);
	}
	notsent_bytes(fd, &acked);
	if (acked > acked_prev) {
		st->sec_bytes += acked - acked_prev;
		st->bytes += acked - acked_prev;
	}
	/*
	 * The receiver sends its last application ACKs after reading the last
	 * bytes, which can be after TCP acknowledged them: say we are done and
	 * count ACKs until it closes (2 s at most).
	 */
	if (rc == TK_EXIT_OK && !stop_flag && !shutdown(fd, SHUT_WR)) {
		uint64_t until = now_ns() + 2 * NS_PER_S;
		struct pollfd dp = { .fd = fd, .events = POLLIN };

		for (int i = 0; i < 4000; i++) {
			uint64_t t = now_ns();

			if (t >= until || stop_flag)
				break;
			if (poll(&dp, 1, (int)((until - t) / 1000000) + 1) > 0 &&
			    drain_app_acks(fd, st, &ack_partial))
				break;
		}
	} else {
		drain_app_acks(fd, st, &ack_partial);
	}
	if (stalled && now_ns() - st->stall_start_ns > st->longest_stall_ns)
		st->longest_stall_ns = now_ns() - st->stall_start_ns;
	if (st->sec_frames || st->sec_bytes)
		emit_second(st);
	close(fd);
	free(frame);
	return rc;
}

/* --- receiver ----------------------------------------------------------------- */

struct rx {
	int fd;
	uint8_t hdr[PS_HDR_LEN];
	size_t hdr_have;
	uint64_t payload_left;
	uint64_t sched_ns;
	uint64_t since_ack;
	bool bad;
};

static void frame_done(struct stats *st, struct rx *r, uint64_t t)
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

/* accounts `n` bytes just read at time t, walking the frame structure */
static int account(struct stats *st, struct rx *r, const uint8_t *p, size_t n, uint64_t t)
{
	st->bytes += n;
	st->sec_bytes += n;
	while (n) {
		if (r->payload_left == 0 && r->hdr_have < PS_HDR_LEN) {
			size_t take = PS_HDR_LEN - r->hdr_have;

			if (take > n)
				take = n;
			memcpy(r->hdr + r->hdr_have, p, take);
			r->hdr_have += take;
			p += take;
			n -= take;
			if (r->hdr_have < PS_HDR_LEN)
				break;
			if (get_u32(r->hdr) != PS_MAGIC) {
				r->bad = true;
				return -1;
			}
			r->payload_left = get_u32(r->hdr + 8);
			r->sched_ns = get_u64(r->hdr + 16);
			if (r->payload_left == 0) {
				r->hdr_have = 0;
				frame_done(st, r, t);
			}
			continue;
		}
		size_t take = r->payload_left < n ? (size_t)r->payload_left : n;

		r->payload_left -= take;
		p += take;
		n -= take;
		if (r->payload_left == 0) {
			r->hdr_have = 0;
			frame_done(st, r, t);
		}
	}
	return 0;
}

static int send_app_ack(struct rx *r, struct stats *st)
{
	uint8_t ack[PS_ACK_LEN] = { 'A', 'C', 'K', '1' };
	size_t off = 0;

	put_u64(ack + 4, st->bytes);
	put_u32(ack + 12, (uint32_t)st->app_acks);
	while (off < sizeof(ack)) {
		ssize_t n = send(r->fd, ack + off, sizeof(ack) - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd pfd = { .fd = r->fd, .events = POLLOUT };

			poll(&pfd, 1, 100);
			continue;
		}
		if (n <= 0)
			return -1;
		off += (size_t)n;
	}
	st->app_acks++;
	return 0;
}

/* waits until fd is readable or `deadline` passes; 1 readable, 0 timeout */
static int wait_readable(int fd, uint64_t deadline)
{
	for (;;) {
		uint64_t t = now_ns();
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int ms, n;

		if (stop_flag)
			return 0;
		if (deadline && t >= deadline)
			return 0;
		ms = deadline ? (int)((deadline - t + 999999) / 1000000) : 1000;
		if (ms > 1000)
			ms = 1000;
		n = poll(&pfd, 1, ms);
		if (n > 0)
			return 1;
		if (n < 0 && errno != EINTR)
			return -1;
		if (!deadline)
			continue;
	}
}

static int sleep_until(uint64_t t, uint64_t deadline)
{
	struct timespec ts;

	if (deadline && t > deadline)
		t = deadline;
	ts.tv_sec = (time_t)(t / NS_PER_S);
	ts.tv_nsec = (long)(t % NS_PER_S);
	while (!stop_flag && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	return 0;
}

static int run_receiver(const struct opts *o, struct stats *st)
{
	int lfd, fd, one = 1, rc = TK_EXIT_OK;
	uint8_t buf[65536];
	struct rx r;
	uint64_t deadline = 0, t_first = 0, paced_k = 0;
	uint64_t interval_ns = NS_PER_S / o->fps;

	lfd = socket(o->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
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
	if (wait_readable(lfd, now_ns() + (uint64_t)o->accept_timeout_s * NS_PER_S) != 1) {
		if (!stop_flag)
			elog("nobody connected within %u s", o->accept_timeout_s);
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
	memset(&r, 0, sizeof(r));
	r.fd = fd;
	st->t0_ns = now_ns();
	if (o->duration_s)
		deadline = st->t0_ns + (uint64_t)o->duration_s * NS_PER_S;

	if (o->mode == MODE_PACED) {
		/* the playout clock starts when the first byte arrives */
		int w = wait_readable(fd, deadline);

		if (w < 0)
			rc = TK_EXIT_NETWORK;
		t_first = now_ns();
	}
	while (!stop_flag && rc == TK_EXIT_OK) {
		size_t want = sizeof(buf);
		ssize_t n;
		uint64_t t;

		if (o->mode == MODE_PACED) {
			/* a decoder: the next frame is read at its playout time, not before */
			uint64_t due = t_first + (uint64_t)o->playout_ms * 1000000 + paced_k * interval_ns;

			if (r.payload_left == 0 && r.hdr_have == 0) {
				advance_seconds(st, now_ns());
				if (now_ns() < due) {
					uint64_t sec_end = st->t0_ns + (st->sec_index + 1) * NS_PER_S;

					sleep_until(due < sec_end ? due : sec_end, deadline);
					if (deadline && now_ns() >= deadline)
						break;
					continue;
				}
				if (now_ns() - due > interval_ns / 4) {
					st->late++;
					st->sec_late++;
				}
				paced_k++;
			}
			want = r.payload_left ? r.payload_left : PS_HDR_LEN - r.hdr_have;
			if (want > sizeof(buf))
				want = sizeof(buf);
		}
		int w = wait_readable(fd, deadline);

		if (w <= 0) {
			if (w < 0)
				rc = TK_EXIT_NETWORK;
			break;
		}
		n = recv(fd, buf, want, MSG_DONTWAIT);
		t = now_ns();
		advance_seconds(st, t);
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			elog("recv: %s", strerror(errno));
			rc = TK_EXIT_NETWORK;
			break;
		}
		if (!t_first)
			t_first = t;
		if (account(st, &r, buf, (size_t)n, t)) {
			elog("the stream is not a pushsim stream (bad frame header)");
			rc = TK_EXIT_DATA;
			break;
		}
		if (o->mode == MODE_APPACK) {
			r.since_ack += (uint64_t)n;
			while (r.since_ack >= o->ack_bytes) {
				r.since_ack -= o->ack_bytes;
				if (send_app_ack(&r, st)) {
					elog("send: %s", strerror(errno));
					rc = TK_EXIT_NETWORK;
					break;
				}
			}
			if (rc)
				break;
		}
	}
	advance_seconds(st, now_ns());
	if (st->sec_frames || st->sec_bytes)
		emit_second(st);
	close(fd);
	return rc;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct stats st;
	struct sigaction sa;
	int rc, rc_out;

	log_init(argv[0]);
	parse_args(argc, argv, &o);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	memset(&st, 0, sizeof(st));
	st.role = o.sender ? "send" : "recv";
	st.quiet_seconds = o.quiet_seconds;
	st.w = rec_writer_new(o.fmt, stdout);
	if (!st.w) {
		elog("out of memory");
		return TK_EXIT_FAIL;
	}
	rc = o.sender ? run_sender(&o, &st) : run_receiver(&o, &st);
	if (st.t0_ns)
		emit_summary(&st, o.sender ? "push" : mode_names[o.mode], now_ns());
	rc_out = rec_writer_free(st.w);
	if ((rc_out || st.write_failed) && rc == TK_EXIT_OK) {
		elog("writing the output failed: %s", strerror(errno));
		rc = TK_EXIT_FAIL;
	}
	return rc;
}
