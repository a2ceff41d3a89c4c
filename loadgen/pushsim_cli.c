// SPDX-License-Identifier: GPL-2.0-only
/*
 * pushsim's command line: the two commands, each with its option table and
 * --help text, the endpoints they take, and what the options say together.
 */
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "cli.h"
#include "common.h"
#include "log.h"
#include "opt.h"
#include "record.h"

#include "pushsim.h"

const char *const mode_names[] = { "prompt", "paced", "app-ack", NULL };
const char *const cmd_names[] = { "send", "recv", NULL };

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
#define CHUNK_DEFAULT 4096          /* what RTMP pushers set with SetChunkSize */
#define SEED_DEFAULT 1
#define SEND_DURATION_DEFAULT 10
/* the receiver */
#define PLAYOUT_MS_DEFAULT 100
#define PLAYOUT_MS_MAX 10000
#define ACK_BYTES_DEFAULT 4096
#define ACK_BYTES_MAX 1073741824    /* 1 GiB */
#define ACCEPT_TIMEOUT_DEFAULT 30
#define ACCEPT_TIMEOUT_MIN 0.001
#define ACCEPT_TIMEOUT_MAX 86400    /* a day */

/* the command's settings before its command line: the defaults are its
 * option table's (applied by opt_parse) */
static void defaults(enum ps_cmd cmd, struct opts *o)
{
	memset(o, 0, sizeof(*o));
	o->cmd = cmd;
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
	OPT_E_U64_D("bitrate-kbps", 0, "N", bitrate_kbps, 1, BITRATE_KBPS_MAX, TK_STR(BITRATE_KBPS_DEFAULT),
		    "mean video bitrate in kbit/s, 1.." TK_STR(BITRATE_KBPS_MAX)),
	OPT_E_U32_D("fps", 0, "N", fps, 1, FPS_MAX, TK_STR(FPS_DEFAULT),
		    "frames per second, 1.." TK_STR(FPS_MAX)),
	OPT_E_U32_D("gop", 0, "N", gop, 1, GOP_MAX, TK_STR(GOP_DEFAULT),
		    "frames per group of pictures: one keyframe every N\n"
		    "frames, 1.." TK_STR(GOP_MAX)),
	OPT_E_DOUBLE_D("keyframe-factor", 0, "X", key_factor, 1, KEY_FACTOR_MAX, TK_STR(KEY_FACTOR_DEFAULT),
		       "keyframe size / other frame size, 1.." TK_STR(KEY_FACTOR_MAX)),
	OPT_E_DOUBLE_D("jitter", 0, "F", jitter, 0, JITTER_MAX, TK_STR(JITTER_DEFAULT),
		       "frame sizes vary uniformly by +-F, 0.." TK_STR(JITTER_MAX) "; a size\n"
		       "that is a multiple of the MSS gets one byte more, as\n"
		       "real encoders never align to it"),
	OPT_E_U32_D("chunk-size", 0, "N", chunk, 0, FRAME_MAX, TK_STR(CHUNK_DEFAULT),
		    "write each frame in pieces of N bytes, one write each,\n"
		    "as RTMP pushers write chunks; 0: the whole frame in\n"
		    "one write; 0.." TK_STR(FRAME_MAX)),
	OPT_E_CALL("cc", 0, "NAME", set_cc, "congestion control of the socket (default: the\n"
					    "namespace's net.ipv4.tcp_congestion_control)"),
	OPT_E_FLAG("nodelay", 0, nodelay, "set TCP_NODELAY (as librtmp does); default: Nagle on,\n"
					  "as ffmpeg's RTMP pusher leaves it"),
	OPT_E_U64_D("seed", 0, "N", seed, 0, (double)UINT64_MAX, TK_STR(SEED_DEFAULT),
		    "seed of the frame-size jitter"),
	OPT_E_DURATION_D(duration_s, TK_STR(SEND_DURATION_DEFAULT), "seconds to push, decimals allowed"),
	PS_E_OUTPUT,
};

static const struct opt recv_opts[] = {
	OPT_E_CALL("listen", 0, "[ADDR:]PORT", set_listen, "where to accept the push (default address: any)"),
	OPT_E_CHOICE_D("mode", 0, "MODE", mode, mode_names, "prompt",
		     "prompt | paced | app-ack:\n"
		     "prompt   reads as soon as data arrives\n"
		     "paced    a decoder reading frame k at\n"
		     "         first arrival + playout + k/fps\n"
		     "app-ack  reads at once and sends a " TK_STR(PS_ACK_LEN) "-byte\n"
		     "         application ACK every --ack-bytes"),
	OPT_E_U32_D("fps", 0, "N", fps, 1, FPS_MAX, TK_STR(FPS_DEFAULT),
		    "paced: frames per second to read, 1.." TK_STR(FPS_MAX)),
	OPT_E_U32_D("playout-ms", 0, "N", playout_ms, 0, PLAYOUT_MS_MAX, TK_STR(PLAYOUT_MS_DEFAULT),
		    "paced: playout buffer in ms, 0.." TK_STR(PLAYOUT_MS_MAX)),
	OPT_E_U32_D("ack-bytes", 0, "N", ack_bytes, 1, ACK_BYTES_MAX, TK_STR(ACK_BYTES_DEFAULT),
		    "app-ack: bytes between application ACKs,\n"
		    "1.." TK_STR(ACK_BYTES_MAX)),
	OPT_E_DOUBLE_D("accept-timeout", 0, "SECONDS", accept_timeout_s, ACCEPT_TIMEOUT_MIN, ACCEPT_TIMEOUT_MAX,
		       TK_STR(ACCEPT_TIMEOUT_DEFAULT),
		       "give up when nobody connects within SECONDS,\n"
		       TK_STR(ACCEPT_TIMEOUT_MIN) ".." TK_STR(ACCEPT_TIMEOUT_MAX)),
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

void parse_args(int argc, char **argv, struct opts *o)
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
