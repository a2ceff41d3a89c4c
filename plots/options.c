// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbrplot's command line: the plot kinds, each with its options and its
 * --help, the kind found wherever it was written, and what the options must
 * say together.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "log.h"
#include "opt.h"
#include "plots/bbrplot.h"

/* --size's bounds, in pixels, written once for set_size() and --help */
#define SIZE_W_MIN 320
#define SIZE_H_MIN 200
#define SIZE_MAX_PX 8000
#define SIZE_BOUNDS TK_STR(SIZE_W_MIN) "x" TK_STR(SIZE_H_MIN) " .. " TK_STR(SIZE_MAX_PX) "x" TK_STR(SIZE_MAX_PX)

static int set_size(void *cfg, const char *opt, const char *val)
{
	struct env *e = cfg;
	unsigned int w, h;
	char x, tail;

	if (sscanf(val, "%u%c%u%c", &w, &x, &h, &tail) != 3 || x != 'x' || w < SIZE_W_MIN || h < SIZE_H_MIN ||
	    w > SIZE_MAX_PX || h > SIZE_MAX_PX) {
		elog("%s: '%s' is not WIDTHxHEIGHT in pixels (" SIZE_BOUNDS ")", opt, val);
		return -1;
	}
	e->width = w;
	e->height = h;
	return 0;
}

static int set_cookie(void *cfg, const char *opt, const char *val)
{
	struct env *e = cfg;

	if (cli_parse_u64(opt, val, 0, UINT64_MAX, &e->cookie))
		return -1;
	e->have_cookie = true;
	return 0;
}

static int set_sender(void *cfg, const char *opt, const char *val)
{
	if (!strrchr(val, ':') || !strrchr(val, ':')[1]) {
		elog("%s: '%s' is not ADDR:PORT (the traced socket's local end)", opt, val);
		return -1;
	}
	((struct env *)cfg)->sender = val;
	return 0;
}

/* --rate-range LO:HI, Mbit/s: the rate axis, so that plots drawn apart compare */
static int set_rate_range(void *cfg, const char *opt, const char *val)
{
	struct env *e = cfg;
	char lo[64];
	const char *colon = strchr(val, ':');

	if (!colon || (size_t)(colon - val) >= sizeof(lo)) {
		elog("%s: '%s' is not LO:HI in Mbit/s (e.g. 0.01:100000)", opt, val);
		return -1;
	}
	snprintf(lo, sizeof(lo), "%.*s", (int)(colon - val), val);
	if (cli_parse_double(opt, lo, 1e-6, 1e9, &e->rate_lo) ||
	    cli_parse_double(opt, colon + 1, 1e-6, 1e9, &e->rate_hi))
		return -1;
	if (e->rate_lo >= e->rate_hi) {
		elog("%s: %g is not below %g", opt, e->rate_lo, e->rate_hi);
		return -1;
	}
	return 0;
}

/* every plot's options; the dip plot's table holds them all (take_kind reads it) */
#define BBRPLOT_OPT_E_COMMON                                                                  \
	OPT_E_OUTPUT(out, "the picture: .png or .svg (required)"),                            \
	OPT_E_STR("title", 0, "TEXT", title, "the title (default: says what is drawn)"),       \
	OPT_E_CALL_D("size", 0, "WxH", set_size, "1200x800", "pixels, " SIZE_BOUNDS),                \
	OPT_E_STR("keep-data", 0, "DIR", keep, "write the data files and the gnuplot command\n" \
					       "(plot.sh, which redraws the picture) there")

#define TK_OPT_CFG struct env
static const struct opt dip_opts[] = {
	OPT_E_STR("trace", 0, "FILE", trace, "bbrtrace JSON lines (a joined trace from\n"
					     "`bbrpcap join` too: its frame times set the\n"
					     "clock offset); one still being written is\n"
					     "read up to its last complete line"),
	OPT_E_STR("pcap", 0, "FILE", pcap, "a capture of the flow, for the wire's throughput"),
	BBRPLOT_OPT_E_COMMON,
	OPT_E_DOUBLE("from", 0, "S", from, -1e9, 1e9, "draw only from S seconds on (as on the axis)"),
	OPT_E_DOUBLE("to", 0, "S", to, -1e9, 1e9, "draw only up to S seconds"),
	OPT_E_CALL("rate-range", 0, "LO:HI", set_rate_range,
		   "the rate axis, Mbit/s (default: from a decade\n"
		   "under the lowest rate drawn); rates under LO\n"
		   "sit on it; the interval axis then spans 1 us\n"
		   "to 10 s. Give two plots the same, and the\n"
		   "same --from/--to, to compare them"),
	OPT_E_CALL("cookie", 0, "N", set_cookie, "the traced socket to draw (default: the\n"
						 "one with the most samples)"),
	OPT_E_CALL("flow", 0, "ADDR:PORT", set_sender, "the traced socket to draw, by its local address"),
	OPT_E_DOUBLE_D("bin-ms", 0, "MS", bin_ms, 0.01, 60000, "100",
		       "throughput bin width, 0.01..60000; the default\n"
		       "spans a few video frames"),
	OPT_E_DOUBLE_D("gap-ms", 0, "MS", gap_ms, 0.001, 3600000, "100",
		       "the shortest silence of the wire drawn: no\n"
		       "frame of the flow either way; 0.001..3600000;\n"
		       "the default is what a live player keeps\n"
		       "buffered"),
	OPT_E_DOUBLE("clock-offset-ms", 0, "MS", offset_ms, -1e9, 1e9,
		     "the capture's clock minus the trace's\n"
		     "(default: from a joined trace's frame\n"
		     "times, else 0: one host, one clock)"),
	OPT_E_STANDARD,
	OPT_E_END,
};

static const struct opt file_opts[] = {
	BBRPLOT_OPT_E_COMMON,
	OPT_E_STANDARD,
	OPT_E_END,
};
#undef TK_OPT_CFG

static const int exit_codes[] = { TK_EXIT_OK, TK_EXIT_FAIL, TK_EXIT_USAGE, TK_EXIT_DATA, -1 };

static void templates_help(FILE *f)
{
	fputs("\nDraws with gnuplot from a template (", f);
	for (int k = 0; k < PLOT_KINDS; k++)
		fprintf(f, "%s%s", k ? ", " : "", plots[k].tmpl);
	fputs("): those\n"
	      "in BBRPLOT_TEMPLATES=DIR when it is set, else the first found of\n"
	      "../share/bbrkit/plots beside this program (installed), ../plots beside it (the\n"
	      "source tree) and " TK_DATADIR "/plots.\n"
	      "The format follows OUT's extension: PNG (cairo) or SVG.\n",
	      f);
}

/* the dip plot's --help is bbrplot's: it lists the other plots too */
static void dip_help(FILE *f)
{
	templates_help(f);
	fputs("\n"
	      "The other plots (each has its own --help: bbrplot KIND --help):\n", f);
	for (int k = PLOT_DIP + 1; k < PLOT_KINDS; k++)
		fprintf(f, "  %-6s %s\n", plots[k].name, plots[k].what);
}

static const struct opt_cli dip_cli = {
	"Usage: bbrplot [dip] --trace T.jsonl [--pcap F.pcap]\n"
	"                     -o OUT.png|OUT.svg [OPTIONS]\n"
	"       bbrplot dwell UDPDWELL.jsonl -o OUT.png|OUT.svg [OPTIONS]\n"
	"       bbrplot upf SWEEP.csv -o OUT.png|OUT.svg [OPTIONS]\n"
	"       bbrplot sweep SWEEP.csv -o OUT.png|OUT.svg [OPTIONS]\n"
	"\n"
	"The dip plot (the default), on one time axis (seconds since the trace's first\n"
	"sample, or since the capture's first frame when that came first):\n"
	"  upper panel (Mbit/s, log): the capture's throughput, data sent and data ACKed\n"
	"  (from `bbrpcap throughput`, the traced flow's direction); BBR's bw (the max-bw\n"
	"  filter after each ACK) and pacing rate from the trace; each collapse as a\n"
	"  marker coloured by its cause (bbrtrace --help-detect defines them), large\n"
	"  and ringed when it throttled the flow, small when harmless; over the run,\n"
	"  the flow's demand (what it delivered in the last second, by bbrtrace's\n"
	"  rule) and, while it was app-limited, the pacing it needed (1.25 x the\n"
	"  demand: a pacing under it throttles), with each collapse's need as bbrtrace\n"
	"  judged it; the sender's stalls as bars along the floor, as long as each\n"
	"  held, coloured by cause;\n"
	"  above them, the wire's silences (`bbrpcap gaps`: no frame either way for\n"
	"  --gap-ms or more), light when nothing was in flight (the sender sent\n"
	"  nothing), dark when data waited for an ACK.\n"
	"  Rates below 0.01 Mbit/s, an empty bin among them, sit on the axis' floor.\n"
	"  lower panel (us, log): each rate sample's rcv_interval_us and snd_interval_us;\n"
	"  a delayed ACK stands out as rcv_interval far above snd_interval.\n"
	"\n",
	dip_opts, NULL, dip_help, exit_codes,
};

static const struct opt_cli dwell_cli = {
	"Usage: bbrplot dwell UDPDWELL.jsonl -o OUT.png|OUT.svg [OPTIONS]\n"
	"udpdwell --format json records: each socket's share of datagrams per dwell\n"
	"bucket, with its state, average, p99 and maximum in the legend.\n"
	"\n",
	file_opts, NULL, templates_help, exit_codes,
};

static const struct opt_cli upf_cli = {
	"Usage: bbrplot upf SWEEP.csv -o OUT.png|OUT.svg [OPTIONS]\n"
	"upfbench's sweep CSV: cycles per packet against sessions, a line per design.\n"
	"\n",
	file_opts, NULL, templates_help, exit_codes,
};

static const struct opt_cli sweep_cli = {
	"Usage: bbrplot sweep SWEEP.csv -o OUT.png|OUT.svg [OPTIONS]\n"
	"repro/sweep.sh's CSV: collapses per minute by cause, and goodput, per run.\n"
	"\n",
	file_opts, NULL, templates_help, exit_codes,
};

const struct plot plots[PLOT_KINDS] = {
	[PLOT_DIP] = { "dip", "dip.gp", &dip_cli, NULL, NULL },
	[PLOT_DWELL] = { "dwell", "dwell.gp", &dwell_cli, "udpdwell's records: each socket's datagrams per dwell bucket",
			 "UDP socket-queue dwell time (udpdwell): where each socket's datagrams waited" },
	[PLOT_UPF] = { "upf", "upf.gp", &upf_cli, "upfbench's sweep CSV: cycles per packet against sessions",
		       "GTP-U user plane (upfbench): cycles per packet against sessions" },
	[PLOT_SWEEP] = { "sweep", "sweep.gp", &sweep_cli, "repro/sweep.sh's CSV: collapses per minute by cause",
			 "BBR collapses per run (repro/sweep.sh): delayed ACKs, and the fix" },
};

/* does the option ARG (as given) take the next argument as its value? */
static bool takes_value(const char *arg)
{
	const struct opt *match = NULL;
	int matches = 0;

	if (arg[1] != '-') { /* -vo FILE: the first letter with a value ends the cluster */
		for (const char *p = arg + 1; *p; p++)
			for (const struct opt *o = dip_opts; o->name; o++)
				if (o->letter == *p && o->arg)
					return p[1] == '\0';
		return false;
	}
	size_t n = strcspn(arg + 2, "=");

	if (arg[2 + n] == '=')
		return false;
	for (const struct opt *o = dip_opts; o->name; o++) {
		if (strncmp(o->name, arg + 2, n))
			continue;
		if (strlen(o->name) == n) /* exact, even when also a prefix of another */
			return o->arg != NULL;
		match = o;
		matches++;
	}
	return matches == 1 && match->arg; /* getopt_long takes an unambiguous prefix */
}

/* the plot kind where the user wrote it: the first argument that is neither
 * an option nor an option's value, taken out of argv; the dip plot when that
 * argument names no kind (or there is none) */
static enum plot_kind take_kind(int *argc, char **argv)
{
	for (int i = 1; i < *argc; i++) {
		if (!strcmp(argv[i], "--")) {
			if (++i == *argc)
				break;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			i += takes_value(argv[i]);
			continue;
		}
		for (int k = 0; k < PLOT_KINDS; k++)
			if (!strcmp(argv[i], plots[k].name)) {
				memmove(&argv[i], &argv[i + 1], (size_t)(*argc - i) * sizeof(*argv));
				(*argc)--;
				return (enum plot_kind)k;
			}
		break;
	}
	return PLOT_DIP;
}

/* "dwell, upf, sweep" */
static const char *other_kinds(char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int k = PLOT_DIP + 1; k < PLOT_KINDS && n < len; k++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", k > PLOT_DIP + 1 ? ", " : "", plots[k].name);
	return buf;
}

/* what the options say together */
static void check_args(struct env *e)
{
	size_t len;
	char kinds[64];

	if (e->kind == PLOT_DIP && !e->trace)
		cli_usage_die("--trace FILE is required (or a plot kind: %s); see --help",
			      other_kinds(kinds, sizeof(kinds)));
	if (!isnan(e->from) && !isnan(e->to) && e->from >= e->to)
		cli_usage_die("--from %g is not before --to %g", e->from, e->to);
	if (e->have_cookie && e->sender)
		cli_usage_die("--cookie and --flow both choose the socket; give one");
	if (!e->out)
		cli_usage_die("-o OUT.png|OUT.svg is required");
	len = strlen(e->out);
	if (len > 4 && !strcasecmp(e->out + len - 4, ".svg"))
		e->svg = true;
	else if (!(len > 4 && !strcasecmp(e->out + len - 4, ".png")))
		cli_usage_die("-o: '%s' must end in .png or .svg", e->out);
}

/* OUT's directory must exist: say which does not, before any work */
static void check_out_dir(struct env *e)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *slash = strrchr(e->out, '/');

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - e->out) : 1, slash ? e->out : ".");
	if (slash == e->out)
		snprintf(dir, sizeof(dir), "/");
	if (!realpath(dir, real)) {
		elog("-o %s: the directory %s does not exist (%s)", e->out, dir, strerror(errno));
		exit(TK_EXIT_FAIL);
	}
	if ((size_t)snprintf(e->out_abs, sizeof(e->out_abs), "%s/%s", strcmp(real, "/") ? real : "",
			     slash ? slash + 1 : e->out) >= sizeof(e->out_abs))
		cli_usage_die("-o %s: the path is too long", e->out);
}

void parse_args(int argc, char **argv, struct env *e)
{
	char kinds[64];
	int first;

	e->kind = take_kind(&argc, argv);
	first = opt_parse(plots[e->kind].cli, argc, argv, e);
	if (e->kind == PLOT_DIP && first < argc)
		cli_usage_die("unexpected argument '%s' (a plot of another kind is: %s)", argv[first],
			      other_kinds(kinds, sizeof(kinds)));
	if (e->kind != PLOT_DIP && first >= argc)
		cli_usage_die("%s: missing the input file", plots[e->kind].name);
	if (e->kind != PLOT_DIP && first + 1 < argc)
		cli_usage_die("%s: unexpected argument '%s'", plots[e->kind].name, argv[first + 1]);
	e->input = argv[first];
	check_args(e);
	check_out_dir(e);
}
