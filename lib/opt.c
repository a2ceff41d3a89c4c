// SPDX-License-Identifier: GPL-2.0-only
/*
 * The option table at work: getopt_long's tables built from it, each value
 * parsed by its kind and range into the config, a bad command line refused
 * in one line; and --help's options and exit statuses printed from it.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "cli.h"
#include "common.h"
#include "log.h"
#include "opt.h"
#include "record.h"

#define OPT_MAX 96            /* options in one table */
#define OPT_SHORTS_MAX (OPT_MAX * 3 + 2) /* "x::" each, the leading ':' and the NUL */
#define OPT_KEY_BASE 256      /* getopt's value for a long-only option: its index + this */
#define OPT_HELP_COL 26       /* where the help text starts in --help */
#define OPT_USAGE_WIDTH 80    /* --help's lines fit a terminal of this width */

static size_t count(const struct opt *opts)
{
	size_t n = 0;

	while (opts[n].name)
		n++;
	return n;
}

static int key_of(const struct opt *o, size_t i)
{
	return o->letter ? o->letter : (int)(OPT_KEY_BASE + i);
}

/* getopt_long's tables from ours; ":" first, so that getopt prints nothing */
static void build(const struct opt *opts, size_t n, struct option *lo, char *shorts)
{
	char *p = shorts;

	*p++ = ':';
	for (size_t i = 0; i < n; i++) {
		int has_arg = !opts[i].arg ? no_argument
				: opts[i].optional ? optional_argument : required_argument;

		lo[i] = (struct option){ opts[i].name, has_arg, NULL, key_of(&opts[i], i) };
		if (opts[i].letter) {
			*p++ = (char)opts[i].letter;
			if (opts[i].arg)
				*p++ = ':';
			if (opts[i].optional)
				*p++ = ':';
		}
	}
	*p = '\0';
	lo[n] = (struct option){ 0 };
}

static const struct opt *find(const struct opt *opts, size_t n, int key, size_t *idx)
{
	for (size_t i = 0; i < n; i++)
		if (key_of(&opts[i], i) == key) {
			*idx = i;
			return &opts[i];
		}
	return NULL;
}

/* the name an option was given as: "--duration" or "-d" */
static void spelled(const struct opt *o, bool as_long, char *buf, size_t len)
{
	if (as_long || !o->letter)
		snprintf(buf, len, "--%s", o->name);
	else
		snprintf(buf, len, "-%c", o->letter);
}

/* a table's upper bound as a u64: (double)UINT64_MAX is 2^64, which no u64 holds */
static uint64_t u64_max_of(double max)
{
	return max >= 0x1p64 ? UINT64_MAX : (uint64_t)max;
}

static int set_number(const struct opt *o, const char *name, const char *val, void *dst)
{
	switch (o->kind) {
	case OPT_U64:
		return cli_parse_u64(name, val, (uint64_t)o->min, u64_max_of(o->max), dst);
	case OPT_U32:
		return cli_parse_u32(name, val, (uint32_t)o->min, (uint32_t)o->max, dst);
	case OPT_DOUBLE:
	case OPT_SECONDS:
		return cli_parse_double(name, val, o->min, o->max, dst);
	case OPT_PORT:
		return cli_parse_port(name, val, dst);
	case OPT_ENDPOINT: {
		struct sockaddr_storage ss;
		socklen_t sslen;

		if (cli_parse_endpoint(name, val, &ss, &sslen))
			return -1;
		*(const char **)dst = val;
		return 0;
	}
	default:
		return -1;
	}
}

/* one option's value into cfg; exits on a bad value */
static void apply(const struct opt_cli *cli, const struct opt *o, const char *name, const char *val,
		  void *cfg)
{
	char *dst = (char *)cfg + o->off;
	int idx, rc = 0;

	switch (o->kind) {
	case OPT_FLAG: *(bool *)dst = true; break;
	case OPT_UNFLAG: *(bool *)dst = false; break;
	case OPT_STR: *(const char **)dst = val; break;
	case OPT_CHOICE:
		rc = cli_parse_choice(name, val, o->choices, &idx);
		if (!rc)
			*(int *)dst = idx;
		break;
	case OPT_FORMAT:
		rc = rec_format_parse(name, val, (enum rec_format *)dst);
		if (!rc)
			*(bool *)((char *)cfg + o->off_given) = true;
		break;
	case OPT_CALL: rc = o->call(cfg, name, val); break;
	case OPT_HELP:
		opt_usage(cli, stdout);
		exit(TK_EXIT_OK);
	case OPT_VERSION:
		cli_print_version();
		exit(TK_EXIT_OK);
	case OPT_VERBOSE: log_set_level(log_get_level() + 1); break;
	case OPT_QUIET: log_set_level(LOG_QUIET); break;
	default: rc = set_number(o, name, val, dst); break;
	}
	if (rc)
		exit(TK_EXIT_USAGE);
}

/* getopt's complaint in our words: one line, exit 2 */
static void refuse(const struct opt *opts, size_t n, int c, char **argv)
{
	const char *given = argv[optind - 1];
	size_t idx;
	const struct opt *o = optopt ? find(opts, n, optopt, &idx) : NULL;
	char name[64];

	if (c == ':' && o) {
		spelled(o, !strncmp(given, "--", 2), name, sizeof(name));
		cli_usage_die("%s needs a value (see --help)", name);
	}
	if (o && !o->arg) /* "--once=1": a long option without a value given one */
		cli_usage_die("--%s takes no value (see --help)", o->name);
	if (optopt && optopt < OPT_KEY_BASE && !o)
		cli_usage_die("unknown option '-%c' (see --help)", optopt);
	snprintf(name, sizeof(name), "%s", given);
	if (strchr(name, '='))
		*strchr(name, '=') = '\0';
	cli_usage_die("unknown option '%s' (see --help)", name);
}

/* every default, as if given, before the command line */
static void apply_defaults(const struct opt_cli *cli, void *cfg)
{
	char name[64];

	for (const struct opt *o = cli->opts; o->name; o++)
		if (o->def) {
			snprintf(name, sizeof(name), "--%s", o->name);
			apply(cli, o, name, o->def, cfg);
		}
}

int opt_parse(const struct opt_cli *cli, int argc, char **argv, void *cfg)
{
	size_t n = count(cli->opts);
	struct option lo[OPT_MAX + 1];
	char shorts[OPT_SHORTS_MAX];
	int c;

	if (n > OPT_MAX)
		cli_usage_die("internal error: %zu options, at most %d", n, OPT_MAX);
	apply_defaults(cli, cfg);
	build(cli->opts, n, lo, shorts);
	opterr = 0;
	optind = 0; /* GNU: start over, ordering included (opt_first_operand's '+' may have run) */
	for (;;) {
		int longindex = -1;
		const struct opt *o;
		char name[64];
		size_t idx;

		c = getopt_long(argc, argv, shorts, lo, &longindex);
		if (c == -1)
			break;
		if (c == '?' || c == ':' || !(o = find(cli->opts, n, c, &idx)))
			refuse(cli->opts, n, c, argv);
		/* an optional value as the next argument: "--hugepages on" */
		if (o->optional && !optarg && optind < argc && argv[optind][0] != '-')
			optarg = argv[optind++];
		spelled(o, longindex >= 0, name, sizeof(name));
		apply(cli, o, name, optarg, cfg);
	}
	return optind;
}

/* the options of every table, each name once, into opts; their number */
static size_t merge(const struct opt_cli *const *clis, size_t n, struct opt *opts)
{
	size_t m = 0;

	for (size_t t = 0; t < n; t++)
		for (const struct opt *o = clis[t]->opts; o->name; o++) {
			size_t k = 0;

			while (k < m && strcmp(opts[k].name, o->name))
				k++;
			if (k == m && m < OPT_MAX)
				opts[m++] = *o;
		}
	return m;
}

int opt_first_operand(const struct opt_cli *const *clis, size_t n, int argc, char **argv)
{
	struct opt opts[OPT_MAX];
	struct option lo[OPT_MAX + 1];
	char shorts[OPT_MAX * 2 + 3];

	shorts[0] = '+'; /* stop at the first operand */
	build(opts, merge(clis, n, opts), lo, shorts + 1);
	opterr = 0;
	optind = 0;
	while (getopt_long(argc, argv, shorts, lo, NULL) != -1)
		; /* a bad option is for the command's own parser to refuse */
	return optind < argc ? optind : argc;
}

/* "  -d, --duration SECONDS" */
static int opt_head(const struct opt *o, char *buf, size_t len)
{
	int n;

	if (o->letter)
		n = snprintf(buf, len, "  -%c, --%s", o->letter, o->name);
	else
		n = snprintf(buf, len, "      --%s", o->name);
	if (o->arg)
		n += snprintf(buf + n, len - (size_t)n, o->optional ? " [%s]" : " %s", o->arg);
	return n;
}

/* an option's help text from its column, each line indented, and its
 * default after the last line, or on a line of its own where the last is
 * too long to hold it. Columns count characters: a UTF-8 continuation byte
 * (10xxxxxx, as in "µs") adds none */
static void usage_help(FILE *f, const char *h, const char *def)
{
	size_t col = OPT_HELP_COL;

	for (const char *p = h; *p; p++) {
		fputc(*p, f);
		if (((unsigned char)*p & 0xc0) != 0x80)
			col++;
		if (*p == '\n' && p[1]) {
			fprintf(f, "%*s", OPT_HELP_COL, "");
			col = OPT_HELP_COL;
		}
	}
	if (def) {
		if (col + strlen(" (default )") + strlen(def) > OPT_USAGE_WIDTH)
			fprintf(f, "\n%*s(default %s)", OPT_HELP_COL, "", def);
		else
			fprintf(f, " (default %s)", def);
	}
	fputc('\n', f);
}

void opt_usage(const struct opt_cli *cli, FILE *f)
{
	if (cli->synopsis)
		fputs(cli->synopsis, f);
	if (cli->opts[0].name)
		fputs("Options:\n", f);
	for (const struct opt *o = cli->opts; o->name; o++) {
		char head[96];
		int n = opt_head(o, head, sizeof(head));
		const char *h = o->help ? o->help : "";

		fputs(head, f);
		/* the help text from its column, or on the next line when the head is long */
		if (n >= OPT_HELP_COL - 1)
			fprintf(f, "\n%*s", OPT_HELP_COL, "");
		else
			fprintf(f, "%*s", OPT_HELP_COL - n, "");
		usage_help(f, h, o->def);
	}
	if (cli->footer)
		fputs(cli->footer, f);
	if (cli->footer_fn)
		cli->footer_fn(f);
	if (cli->exits)
		opt_exit_codes(f, cli->exits);
}

void opt_exit_codes(FILE *f, const int *codes)
{
	static const struct {
		int code;
		const char *what;
	} table[] = {
#define TK_EXIT_WHAT(name, code, what) { code, what },
		TK_EXIT_CODES(TK_EXIT_WHAT)
#undef TK_EXIT_WHAT
	};

	fputs("\nExit status:\n", f);
	for (const int *c = codes; *c >= 0; c++)
		for (size_t i = 0; i < ARRAY_SIZE(table); i++)
			if (table[i].code == *c)
				fprintf(f, "  %-3d %s\n", *c, table[i].what);
}
