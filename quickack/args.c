// SPDX-License-Identifier: GPL-2.0-only
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <getopt.h>
#include <string.h>
#include <sys/socket.h>

#include "log.h"
#include "netns.h"
#include "quickack.h"

static const char *const cmd_names[] = { "show", "on", "off", "rto-min", "congctl", "restore", "status",
					  NULL };

const char *qa_cmd_name(enum qa_cmd c)
{
	return cmd_names[c];
}

int qa_parse_rto_min(const char *opt, const char *s, uint32_t *ms)
{
	char num[24];
	size_t n;
	uint32_t v, mult = 1;

	if (s && !strcmp(s, "off")) {
		*ms = 0;
		return 0;
	}
	n = s ? strlen(s) : 0;
	if (n > 2 && !strcmp(s + n - 2, "ms"))
		n -= 2;
	else if (n > 1 && s[n - 1] == 's') {
		n -= 1;
		mult = 1000;
	}
	if (!n || n >= sizeof(num)) {
		elog("%s: '%s' is not a time (N, Nms or Ns; or off)", opt, s ? s : "");
		return -1;
	}
	memcpy(num, s, n);
	num[n] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)num[i])) {
			elog("%s: '%s' is not a time (N, Nms or Ns; or off)", opt, s);
			return -1;
		}
	}
	if (cli_parse_u32(opt, num, 1, 120000 / mult, &v))
		return -1;
	*ms = v * mult;
	return 0;
}

int qa_parse_congctl(const char *opt, const char *s, char out[QA_CC_NAME_MAX])
{
	size_t n = s ? strlen(s) : 0;

	memset(out, 0, QA_CC_NAME_MAX);
	if (s && !strcmp(s, "off"))
		return 0;
	if (!n || n >= QA_CC_NAME_MAX) {
		elog("%s: '%s' is not a congestion control name (1 to %d characters)", opt, s ? s : "",
		     QA_CC_NAME_MAX - 1);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-') {
			elog("%s: '%s' is not a congestion control name (letters, digits, '_' and '-')", opt, s);
			return -1;
		}
	}
	memcpy(out, s, n);
	return 0;
}

static int parse_dev(const char *opt, const char *s)
{
	size_t n = strlen(s);

	/* what the kernel accepts as an interface name (dev_valid_name) */
	if (!n || n >= 16 || !strcmp(s, ".") || !strcmp(s, "..")) {
		elog("%s: '%s' is not a device name (1 to 15 characters)", opt, s);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '/' || s[i] == ':' || isspace((unsigned char)s[i])) {
			elog("%s: '%s' is not a device name (no '/', ':' or spaces)", opt, s);
			return -1;
		}
	}
	return 0;
}

static int parse_prefix(const char *s, int family, struct cli_prefix *p)
{
	if (!strcmp(s, "default")) {
		memset(p, 0, sizeof(*p));
		p->addr.family = family == AF_INET6 ? AF_INET6 : AF_INET;
		return 0;
	}
	return cli_parse_prefix("prefix", s, p);
}

enum {
	OPT_TABLE = 256, OPT_DEV, OPT_ALL_DEV, OPT_VIA, OPT_NETNS, OPT_JOURNAL, OPT_DRY_RUN, OPT_LOCK,
	OPT_JSON, OPT_FORMAT,
};

static const struct option long_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "table", required_argument, NULL, OPT_TABLE },
	{ "dev", required_argument, NULL, OPT_DEV },
	{ "all-dev", required_argument, NULL, OPT_ALL_DEV },
	{ "via", required_argument, NULL, OPT_VIA },
	{ "netns", required_argument, NULL, OPT_NETNS },
	{ "journal", required_argument, NULL, OPT_JOURNAL },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "lock", no_argument, NULL, OPT_LOCK },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ NULL, 0, NULL, 0 },
};

static int fail(const char *fmt, ...) TK_PRINTF(1, 2);
static int fail(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	elog("%s", buf);
	return -1;
}

int qa_args_parse(int argc, char **argv, struct qa_args *a)
{
	const char *via = NULL, *pos[4];
	int npos = 0, c, cmd, fam4 = 0, fam6 = 0;
	bool json = false;
	char msg[256];

	memset(a, 0, sizeof(*a));
	optind = 0; /* GNU: start over (the unit tests parse many command lines) */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hVvq46", long_opts, NULL)) != -1) {
		switch (c) {
		case 'h': a->help = true; return 0;
		case 'V': a->version = true; return 0;
		case 'v': a->verbosity = a->verbosity < 0 ? 1 : a->verbosity + 1; break;
		case 'q': a->verbosity = -1; break;
		case '4': fam4 = 1; break;
		case '6': fam6 = 1; break;
		case OPT_TABLE: a->table = optarg; break;
		case OPT_DEV:
			if (parse_dev("--dev", optarg))
				return -1;
			a->dev = optarg;
			break;
		case OPT_ALL_DEV:
			if (parse_dev("--all-dev", optarg))
				return -1;
			a->all_dev = optarg;
			break;
		case OPT_VIA: via = optarg; break;
		case OPT_NETNS:
			if (netns_check_name(optarg, msg, sizeof(msg)))
				return fail("--netns: %s", msg);
			a->netns = optarg;
			break;
		case OPT_JOURNAL:
			if (!*optarg)
				return fail("--journal: the path is empty");
			a->journal = optarg;
			break;
		case OPT_DRY_RUN: a->dry_run = true; break;
		case OPT_LOCK: a->lock = true; break;
		case OPT_JSON:
			if (a->fmt_set && a->fmt != REC_JSON)
				return fail("--json: conflicts with --format %s", rec_format_name(a->fmt));
			json = true;
			a->fmt_set = true;
			a->fmt = REC_JSON;
			break;
		case OPT_FORMAT: {
			enum rec_format f;

			if (rec_format_parse("--format", optarg, &f))
				return -1;
			if (json && f != REC_JSON)
				return fail("--format: '%s' conflicts with --json", optarg);
			a->fmt_set = true;
			a->fmt = f;
			break;
		}
		case ':':
			return fail("option '%s' needs a value", argv[optind - 1]);
		default:
			if (optopt)
				elog("unknown option '-%c' (see --help)", optopt);
			else
				elog("unknown option '%s' (see --help)", argv[optind - 1]);
			return -1;
		}
	}
	if (optind >= argc)
		return fail("missing command: show, on, off, rto-min, congctl, restore or status (see --help)");
	if (cli_parse_choice("command", argv[optind], cmd_names, &cmd))
		return -1;
	a->cmd = (enum qa_cmd)cmd;
	for (int i = optind + 1; i < argc; i++) {
		if (npos == (int)ARRAY_SIZE(pos))
			return fail("%s: too many arguments ('%s')", cmd_names[cmd], argv[i]);
		pos[npos++] = argv[i];
	}
	if (fam4 && fam6)
		return fail("-4 and -6 exclude each other");
	a->family = fam4 ? AF_INET : fam6 ? AF_INET6 : 0;

	/* positional arguments per command */
	{
		int want_prefix = 0, want_value = 0;

		switch (a->cmd) {
		case QA_SHOW: want_prefix = npos >= 1; break;
		case QA_ON:
		case QA_OFF: want_prefix = !a->all_dev; break;
		case QA_RTO_MIN:
		case QA_CONGCTL:
			want_prefix = !a->all_dev;
			want_value = 1;
			break;
		case QA_RESTORE:
		case QA_STATUS: break;
		}
		if (npos > want_prefix + want_value) {
			if (a->all_dev && npos && (a->cmd == QA_ON || a->cmd == QA_OFF || npos > 1))
				return fail("%s: a PREFIX ('%s') and --all-dev exclude each other", cmd_names[cmd],
					    pos[0]);
			return fail("%s: unexpected argument '%s'", cmd_names[cmd], pos[want_prefix + want_value]);
		}
		if (npos < want_prefix + want_value) {
			if (a->cmd == QA_RTO_MIN && npos == want_prefix)
				return fail("rto-min: missing VALUE (N, Nms or Ns; or off)");
			if (a->cmd == QA_CONGCTL && npos == want_prefix)
				return fail("congctl: missing NAME (a congestion control, or off)");
			return fail("%s: missing PREFIX (or --all-dev DEV)", cmd_names[cmd]);
		}
		if (want_prefix) {
			if (parse_prefix(pos[0], a->family, &a->prefix))
				return -1;
			a->has_prefix = true;
			if (a->family && a->family != a->prefix.addr.family)
				return fail("prefix: '%s' is not %s", pos[0], a->family == AF_INET ? "IPv4 (-4)" : "IPv6 (-6)");
			a->family = a->prefix.addr.family;
		}
		if (a->cmd == QA_ON || a->cmd == QA_OFF) {
			a->change.op = QA_OP_QUICKACK;
			a->change.value = a->cmd == QA_ON;
		} else if (a->cmd == QA_RTO_MIN) {
			a->change.op = QA_OP_RTO_MIN;
			if (qa_parse_rto_min("rto-min", pos[want_prefix], &a->change.value))
				return -1;
		} else if (a->cmd == QA_CONGCTL) {
			a->change.op = QA_OP_CONGCTL;
			if (qa_parse_congctl("congctl", pos[want_prefix], a->change.cc))
				return -1;
			a->change.lock = a->lock;
		}
	}

	/* options that do not apply to the command */
	if (via) {
		int fam = a->family;

		if (cli_parse_addr("--via", via, &a->via))
			return -1;
		if (fam && fam != a->via.family)
			return fail("--via: %s is not of the prefix's family (%s)", via,
				    fam == AF_INET ? "IPv4" : "IPv6");
		a->has_via = true;
	}
	if (a->cmd == QA_RESTORE || a->cmd == QA_STATUS) {
		if (a->table || a->dev || a->all_dev || a->has_via || fam4 || fam6)
			return fail("%s: works on the whole journal; --table, --dev, --all-dev, --via, -4 and -6 do not apply",
				    cmd_names[cmd]);
	}
	if (a->all_dev && (a->cmd == QA_SHOW))
		return fail("show: use --dev DEV to list the routes through a device");
	if (a->all_dev && a->dev)
		return fail("--all-dev and --dev exclude each other");
	if (a->dry_run && (a->cmd == QA_SHOW || a->cmd == QA_STATUS))
		return fail("--dry-run: %s changes nothing anyway", cmd_names[cmd]);
	if (a->lock && a->cmd != QA_CONGCTL)
		return fail("--lock: only congctl takes it (rto-min always locks, as the kernel needs)");
	if (a->journal && a->cmd == QA_SHOW)
		return fail("--journal: show does not read the journal (see status)");
	return 0;
}
