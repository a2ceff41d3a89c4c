// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbrplot: the pictures. This program only prepares each plot's data (see
 * plotdata.c) and runs gnuplot on the readable templates in plots/ (NAME.gp).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "common.h"
#include "log.h"
#include "opt.h"
#include "plots/plotdata.h"

/* the installed data directory, from PREFIX (Makefile) */
#ifndef TK_DATADIR
#define TK_DATADIR "/usr/local/share/bbrkit"
#endif

enum plot_kind { PLOT_DIP, PLOT_DWELL, PLOT_UPF, PLOT_SWEEP, PLOT_KINDS };

struct env {
	enum plot_kind kind;
	const char *input;      /* dwell/upf/sweep */
	const char *trace, *pcap, *out, *title, *keep;
	char out_abs[PATH_MAX + 256]; /* -o, absolute (for gnuplot and plot.sh) */
	const char *sender;
	bool have_cookie;
	uint64_t cookie;
	unsigned int width, height;
	double from, to, offset_ms; /* NAN: not given */
	double bin_ms;
	bool svg;
};

/* a kind of plot: its name on the command line, its template, its options;
 * the others' line in bbrplot --help and their default title */
struct plot {
	const char *name;
	const char *tmpl;
	const struct opt_cli *cli;
	const char *what;
	const char *title;
};
static const struct plot plots[PLOT_KINDS];

#define WIDTH_DEFAULT 1200
#define HEIGHT_DEFAULT 800
#define BIN_MS_DEFAULT 100 /* a few video frames */

static char data_dir[PATH_MAX - 64]; /* room for a file name after it */
static bool remove_dir;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void cleanup(void)
{
	if (remove_dir && data_dir[0])
		nftw(data_dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* where this program lives: its templates are found from there, bbrpcap beside it */
static const char *exe_dir(void)
{
	static char dir[PATH_MAX];
	char buf[PATH_MAX];
	ssize_t n;

	if (dir[0])
		return dir;
	n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	if (n <= 0)
		return ".";
	buf[n] = '\0';
	snprintf(dir, sizeof(dir), "%s", dirname(buf));
	return dir;
}

/* PATH = DIR/NAME, when that file is readable */
static bool template_in(const char *dir, const char *name, char *path, size_t len)
{
	int n = snprintf(path, len, "%s/%s", dir, name);

	return n > 0 && (size_t)n < len && access(path, R_OK) == 0;
}

/*
 * The template NAME, in BBRPLOT_TEMPLATES alone when it is set. Else beside
 * the program before the compiled-in TK_DATADIR: a build tree or a staged
 * install (DESTDIR) then draws with its own templates, never another
 * install's.
 */
static int find_template(const char *name, char *path, size_t len)
{
	const char *env = getenv("BBRPLOT_TEMPLATES");
	char installed[PATH_MAX], tree[PATH_MAX], found[PATH_MAX];
	const char *datadir = TK_DATADIR "/plots";

	if (env && *env) {
		if (template_in(env, name, path, len))
			return 0;
		elog("cannot read the gnuplot template %s (%s); set BBRPLOT_TEMPLATES to the plots/ directory",
		     path, strerror(errno));
		return -1;
	}
	snprintf(installed, sizeof(installed), "%s/../share/bbrkit/plots", exe_dir());
	snprintf(tree, sizeof(tree), "%s/../plots", exe_dir());
	if (template_in(installed, name, path, len) || template_in(tree, name, path, len) ||
	    template_in(datadir, name, path, len)) {
		if (realpath(path, found))
			snprintf(path, len, "%s", found);
		vlog("template %s", path);
		return 0;
	}
	elog("cannot find the gnuplot template %s in %s, %s or %s; set BBRPLOT_TEMPLATES to a directory that holds it",
	     name, installed, tree, datadir);
	return -1;
}

/* a gnuplot string literal: single quotes, a quote doubled */
static void gp_str(FILE *f, const char *name, const char *v)
{
	fprintf(f, "%s='", name);
	for (; *v; v++) {
		if (*v == '\'')
			fputc('\'', f);
		fputc(*v, f);
	}
	fputs("'; ", f);
}

/* runs gnuplot on TEMPLATE with the variables in VARS; its stderr shown with -v or on failure */
static int run_gnuplot(const char *tmpl, const char *vars)
{
	char errpath[PATH_MAX], line[512], cmdpath[PATH_MAX];
	int status, fd;
	pid_t pid;
	FILE *f;

	snprintf(cmdpath, sizeof(cmdpath), "%s/plot.sh", data_dir);
	f = fopen(cmdpath, "w");
	if (f) { /* the exact command, to re-run by hand (kept with --keep-data) */
		fprintf(f, "#!/bin/sh\nexec gnuplot -e \"");
		for (const char *p = vars; *p; p++) {
			if (*p == '"' || *p == '\\' || *p == '$' || *p == '`')
				fputc('\\', f);
			fputc(*p, f);
		}
		fprintf(f, "\" '%s'\n", tmpl);
		fclose(f);
		chmod(cmdpath, 0755);
	}
	snprintf(errpath, sizeof(errpath), "%s/gnuplot.err", data_dir);
	pid = fork();
	if (pid < 0) {
		elog("fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd >= 0)
			dup2(fd, 2);
		execlp("gnuplot", "gnuplot", "-e", vars, tmpl, (char *)NULL);
		fprintf(stderr, "cannot run gnuplot: %s\n", strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	f = fopen(errpath, "r");
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		while (f && fgets(line, sizeof(line), f))
			vlog("gnuplot: %s", line);
		if (f)
			fclose(f);
		return 0;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		elog("cannot run gnuplot (install gnuplot-nox: ./scripts/install-deps.sh)");
	} else {
		/* gnuplot's own words: the last non-empty line names the problem */
		char last[512] = "";

		while (f && fgets(line, sizeof(line), f))
			if (line[strspn(line, " \t\n")])
				snprintf(last, sizeof(last), "%s", line + strspn(line, " \t"));
		elog("gnuplot failed on %s: %s", tmpl, last[0] ? last : "no message");
	}
	if (f)
		fclose(f);
	return -1;
}

/* a PD_ERR_* of plotdata.h as an exit code */
static int pd_exit(int pd_err)
{
	return pd_err == PD_ERR_SYSTEM ? TK_EXIT_FAIL : TK_EXIT_DATA;
}

/* runs `bbrpcap throughput` on the capture, its CSV on *out; the child's pid, or -1 */
static pid_t start_bbrpcap(const struct env *e, const struct pd_dip_info *info, FILE **out)
{
	char bbrpcap[PATH_MAX], bin[32], flow[200], sender[96], receiver[96];
	int pipefd[2];
	pid_t pid;

	snprintf(bbrpcap, sizeof(bbrpcap), "%s/bbrpcap", exe_dir());
	if (access(bbrpcap, X_OK))
		snprintf(bbrpcap, sizeof(bbrpcap), "bbrpcap");
	snprintf(bin, sizeof(bin), "%g", e->bin_ms);
	snprintf(sender, sizeof(sender), strchr(info->saddr, ':') ? "[%s]:%u" : "%s:%u", info->saddr, info->sport);
	snprintf(receiver, sizeof(receiver), strchr(info->daddr, ':') ? "[%s]:%u" : "%s:%u", info->daddr, info->dport);
	snprintf(flow, sizeof(flow), "%s-%s", sender, receiver);
	if (pipe(pipefd)) {
		elog("pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		elog("fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		dup2(pipefd[1], 1);
		close(pipefd[0]);
		close(pipefd[1]);
		execlp(bbrpcap, "bbrpcap", "throughput", "--format", "csv", "--bin-ms", bin, "--flow", flow, e->pcap,
		       (char *)NULL);
		fprintf(stderr, "bbrplot: cannot run %s: %s\n", bbrpcap, strerror(errno));
		_exit(127);
	}
	close(pipefd[1]);
	*out = fdopen(pipefd[0], "r");
	if (!*out)
		close(pipefd[0]);
	return pid;
}

/* bbrpcap throughput on the capture, read into tput.dat: *bins of them; a TK_EXIT_* code */
static int capture_throughput(const struct env *e, struct pd_dip_info *info, double offset_s, long *bins,
			      double *first_s)
{
	char err[256] = "out of memory";
	int status;
	FILE *in = NULL;
	pid_t pid;

	/* a capture that cannot be read is bad input, said here in one line */
	if (strcmp(e->pcap, "-") && access(e->pcap, R_OK)) {
		elog("%s: cannot open: %s", e->pcap, strerror(errno));
		return TK_EXIT_DATA;
	}
	pid = start_bbrpcap(e, info, &in);
	if (pid < 0)
		return TK_EXIT_FAIL;
	*bins = in ? pd_dip_tput(in, info, offset_s, data_dir, first_s, err, sizeof(err)) : PD_ERR_SYSTEM;
	if (in)
		fclose(in);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return TK_EXIT_FAIL;
	if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != TK_EXIT_DATA)) {
		elog("bbrpcap throughput failed on %s (exit %d)", e->pcap, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return TK_EXIT_FAIL;
	}
	/* bbrpcap said why on stderr: not a capture, or damaged before any data */
	if (WEXITSTATUS(status) == TK_EXIT_DATA && *bins <= 0)
		return TK_EXIT_DATA;
	if (WEXITSTATUS(status) == TK_EXIT_DATA)
		wlog("%s is damaged: the throughput stops where bbrpcap's message says", e->pcap);
	if (*bins < 0) {
		elog("%s", err);
		return pd_exit((int)*bins);
	}
	return TK_EXIT_OK;
}

/* how each cause is drawn, in lib/trace.h's order: a colour apart from the plot's
 * lines (the pacing is brown, the estimate black, the wire blue and green) and a
 * point type; a new cause without one fails the build */
static const struct {
	const char *colour;
	int pt;
} cause_style[] = {
	{ "#d62728", 9 },  /* delayed ACK: red */
	{ "#ff7f0e", 11 }, /* rate drop: orange */
	{ "#9467bd", 5 },  /* loss/policer: purple */
	{ "#7f7f7f", 13 }, /* other: grey */
	{ "#e377c2", 7 },  /* lone late segment: pink */
	{ "#17becf", 15 }, /* old max expired: cyan */
	{ "#bcbd22", 3 },  /* sender-limited: olive */
	{ "#393b79", 1 },  /* ACK jitter: indigo */
};
_Static_assert(sizeof(cause_style) / sizeof(cause_style[0]) == BT_NCAUSES,
	       "plots/bbrplot.c: cause_style needs a colour and point type for each of lib/trace.h's causes");

/* the legend's causes, from lib/trace.h: ncauses, cause_label[], cause_n[],
 * cause_colour[] and cause_pt[] */
static void gp_causes(FILE *v, const uint64_t *counts)
{
	fprintf(v, "ncauses=%d; array cause_label[%d]; array cause_n[%d]; array cause_colour[%d]; "
		   "array cause_pt[%d]; ",
		BT_NCAUSES, BT_NCAUSES, BT_NCAUSES, BT_NCAUSES, BT_NCAUSES);
	for (int c = 0; c < BT_NCAUSES; c++) {
		char name[32];

		snprintf(name, sizeof(name), "cause_label[%d]", c + 1);
		gp_str(v, name, bt_cause_labels[c]);
		snprintf(name, sizeof(name), "cause_colour[%d]", c + 1);
		gp_str(v, name, cause_style[c].colour);
		fprintf(v, "cause_n[%d]=%llu; cause_pt[%d]=%d; ", c + 1, (unsigned long long)counts[c], c + 1,
			cause_style[c].pt);
	}
}

/* tput.dat without a capture: one row of nothing, so the template draws no wire */
static int no_capture(void)
{
	char path[PATH_MAX];
	FILE *t;

	snprintf(path, sizeof(path), "%s/tput.dat", data_dir);
	t = fopen(path, "w");
	if (!t) {
		elog("%s: cannot create: %s", path, strerror(errno));
		return TK_EXIT_FAIL;
	}
	fputs("NaN NaN NaN 0\n", t);
	return fclose(t) ? TK_EXIT_FAIL : TK_EXIT_OK;
}

/* the capture's throughput on the trace's clock: *bins of it; time 0 moves to
 * the capture's first frame when that came before the trace's first sample;
 * a TK_EXIT_* code */
static int dip_capture(const struct env *e, struct pd_dip_info *info, long *bins)
{
	double offset_s = 0, first_s = 0;
	char err[512];
	int rc;

	*bins = 0;
	if (!e->pcap)
		return no_capture();
	if (!isnan(e->offset_ms))
		offset_s = e->offset_ms * 1e-3;
	else if (info->have_offset)
		offset_s = info->offset_s;
	else if (!info->wall) {
		elog("%s has no wall_ns: its clock cannot be matched to the capture's; join it first "
		     "(bbrpcap join) or give --clock-offset-ms",
		     e->trace);
		return TK_EXIT_DATA;
	}
	rc = capture_throughput(e, info, offset_s, bins, &first_s);
	if (rc != TK_EXIT_OK)
		return rc;
	if (*bins > 0 && (rc = pd_dip_shift(data_dir, info, first_s, err, sizeof(err)))) {
		elog("%s", err);
		return pd_exit(rc);
	}
	if (*bins == 0)
		wlog("%s holds no data of %s:%u -> %s:%u", e->pcap, info->saddr, info->sport, info->daddr, info->dport);
	vlog("capture: %ld bins; clock offset %.3f ms", *bins, offset_s * 1e3);
	return TK_EXIT_OK;
}

/* the variables every template takes: the data, the picture, its title and
 * size; paths absolute, so that a kept plot.sh redraws from anywhere */
static void gp_common(FILE *v, const struct env *e, const char *title)
{
	gp_str(v, "data", data_dir);
	gp_str(v, "out", e->out_abs);
	gp_str(v, "term", e->svg ? "svg" : "pngcairo");
	gp_str(v, "ptitle", title);
	fprintf(v, "width=%u; height=%u; ", e->width, e->height);
}

/* the rate axis' floor: a decade below the lowest rate drawn, at least PD_FLOOR_MBPS */
static double rate_floor(const struct pd_dip_info *info)
{
	double f = info->min_mbps > 0 ? pow(10, floor(log10(info->min_mbps))) : PD_FLOOR_MBPS;

	return f > PD_FLOOR_MBPS ? f : PD_FLOOR_MBPS;
}

/* --from/--to must show some of what the plot covers; say what that is */
static int check_zoom(const struct env *e, const struct pd_dip_info *info)
{
	double from = isnan(e->from) ? 0 : e->from, to = isnan(e->to) ? info->last_s : e->to;

	if (from < info->last_s && to > 0)
		return TK_EXIT_OK;
	elog("--from %g --to %g is outside what the plot covers: 0 to %.3f s (from the trace's first sample "
	     "or the capture's first frame, whichever came first)",
	     from, to, info->last_s);
	return TK_EXIT_USAGE;
}

static int plot_dip(const struct env *e, char *vars, size_t vlen)
{
	struct pd_flow_sel sel = { e->have_cookie, e->cookie, e->sender };
	struct pd_dip_info info;
	char err[512], tmpl[PATH_MAX], title[512];
	long bins = 0;
	uint64_t ncoll = 0;
	int rc;
	FILE *v;

	if (find_template(plots[PLOT_DIP].tmpl, tmpl, sizeof(tmpl)))
		return TK_EXIT_FAIL;
	rc = pd_dip_trace(e->trace, &sel, data_dir, &info, err, sizeof(err));
	if (rc) {
		elog("%s", err);
		return pd_exit(rc);
	}
	for (int c = 0; c < BT_NCAUSES; c++)
		ncoll += info.collapses[c];
	vlog("%s: flow %s:%u -> %s:%u (cookie %llu), %llu samples, %llu collapses; %llu flows in the trace",
	     e->trace, info.saddr, info.sport, info.daddr, info.dport, (unsigned long long)info.cookie,
	     (unsigned long long)info.samples, (unsigned long long)ncoll, (unsigned long long)info.flows);
	rc = dip_capture(e, &info, &bins);
	if (rc != TK_EXIT_OK)
		return rc;
	rc = check_zoom(e, &info);
	if (rc != TK_EXIT_OK)
		return rc;
	if (e->title)
		snprintf(title, sizeof(title), "%s", e->title);
	else
		snprintf(title, sizeof(title), "BBR and the wire: %s:%u -> %s:%u (%llu samples, collapses: %llu)",
			 info.saddr, info.sport, info.daddr, info.dport, (unsigned long long)info.samples,
			 (unsigned long long)ncoll);
	v = fmemopen(vars, vlen, "w");
	if (!v)
		return TK_EXIT_FAIL;
	gp_common(v, e, title);
	fprintf(v, "have_pcap=%d; bin_ms=%g; floor_mbps=%g; interval_floor_us=%d; ", e->pcap && bins > 0,
		e->bin_ms, rate_floor(&info), PD_INTERVAL_FLOOR_US);
	gp_causes(v, info.collapses);
	/* both panels on one explicit time axis: 0 is the earlier of the first
	 * sample and the first frame */
	fprintf(v, "xmin=%.9g; xmax=%.9g; ", isnan(e->from) ? 0 : e->from,
		isnan(e->to) ? info.last_s : e->to);
	if (fclose(v))
		return TK_EXIT_FAIL;
	return run_gnuplot(tmpl, vars) ? TK_EXIT_FAIL : TK_EXIT_OK;
}

static int plot_other(const struct env *e, char *vars, size_t vlen)
{
	char err[512], tmpl[PATH_MAX], labels[4096] = "";
	double floor_cycles = 0;
	int n;
	FILE *v;

	if (find_template(plots[e->kind].tmpl, tmpl, sizeof(tmpl)))
		return TK_EXIT_FAIL;
	switch (e->kind) {
	case PLOT_DWELL:
		n = pd_dwell(e->input, data_dir, err, sizeof(err));
		break;
	case PLOT_UPF:
		n = pd_upf(e->input, data_dir, labels, sizeof(labels), &floor_cycles, err, sizeof(err));
		break;
	default:
		n = pd_sweep(e->input, data_dir, err, sizeof(err));
		break;
	}
	if (n < 0) {
		elog("%s", err);
		return pd_exit(n);
	}
	v = fmemopen(vars, vlen, "w");
	if (!v)
		return TK_EXIT_FAIL;
	gp_common(v, e, e->title ? e->title : plots[e->kind].title);
	if (e->kind == PLOT_DWELL)
		fprintf(v, "nsock=%d; ", n);
	if (e->kind == PLOT_UPF) {
		gp_str(v, "labels", labels);
		fprintf(v, "floor_cycles=%.9g; ", floor_cycles);
	}
	if (e->kind == PLOT_SWEEP) {
		uint64_t none[BT_NCAUSES] = { 0 };

		gp_causes(v, none);
	}
	if (fclose(v))
		return TK_EXIT_FAIL;
	return run_gnuplot(tmpl, vars) ? TK_EXIT_FAIL : TK_EXIT_OK;
}

/* --- the command line ------------------------------------------------------------ */

static int set_size(void *cfg, const char *opt, const char *val)
{
	struct env *e = cfg;
	unsigned int w, h;
	char x, tail;

	if (sscanf(val, "%u%c%u%c", &w, &x, &h, &tail) != 3 || x != 'x' || w < 320 || h < 200 || w > 8000 ||
	    h > 8000) {
		elog("%s: '%s' is not WIDTHxHEIGHT in pixels (320x200 .. 8000x8000)", opt, val);
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

/* every plot's options; the dip plot's table holds them all (take_kind reads it) */
#define BBRPLOT_OPT_E_COMMON                                                                  \
	OPT_E_OUTPUT(out, "the picture: .png or .svg (required)"),                            \
	OPT_E_STR("title", 0, "TEXT", title, "the title (default: says what is drawn)"),       \
	OPT_E_CALL("size", 0, "WxH", set_size, "pixels (default 1200x800; 320x200 .. 8000x8000)"), \
	OPT_E_STR("keep-data", 0, "DIR", keep, "write the data files and the gnuplot command\n" \
					       "(plot.sh, which redraws the picture) there")

#define TK_OPT_CFG struct env
static const struct opt dip_opts[] = {
	OPT_E_STR("trace", 0, "FILE", trace, "bbrtrace JSON lines (a joined trace from `bbrpcap join`\n"
					     "too: its frame times set the clock offset); one still\n"
					     "being written is read up to its last complete line"),
	OPT_E_STR("pcap", 0, "FILE", pcap, "a capture of the flow, for the wire's throughput"),
	BBRPLOT_OPT_E_COMMON,
	OPT_E_DOUBLE("from", 0, "S", from, -1e9, 1e9, "draw only from S seconds on (as on the axis)"),
	OPT_E_DOUBLE("to", 0, "S", to, -1e9, 1e9, "draw only up to S seconds"),
	OPT_E_CALL("cookie", 0, "N", set_cookie, "the traced socket to draw (default: the one with the\n"
						 "most samples)"),
	OPT_E_CALL("flow", 0, "ADDR:PORT", set_sender, "the traced socket to draw, by its local address"),
	OPT_E_DOUBLE("bin-ms", 0, "MS", bin_ms, 0.01, 60000,
		     "throughput bin width (default 100: a few video frames;\n"
		     "0.01..60000)"),
	OPT_E_DOUBLE("clock-offset-ms", 0, "MS", offset_ms, -1e9, 1e9,
		     "the capture's clock minus the trace's (default: from a\n"
		     "joined trace's frame times, else 0: one host, one clock)"),
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
	      "source tree) and " TK_DATADIR "/plots. The format follows OUT's extension:\n"
	      "PNG (cairo) or SVG.\n",
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
	"Usage: bbrplot [dip] --trace T.jsonl [--pcap F.pcap] -o OUT.png|OUT.svg [OPTIONS]\n"
	"       bbrplot dwell UDPDWELL.jsonl -o OUT.png|OUT.svg [OPTIONS]\n"
	"       bbrplot upf SWEEP.csv -o OUT.png|OUT.svg [OPTIONS]\n"
	"       bbrplot sweep SWEEP.csv -o OUT.png|OUT.svg [OPTIONS]\n"
	"\n"
	"The dip plot (the default), on one time axis (seconds since the trace's first\n"
	"sample):\n"
	"  upper panel (Mbit/s, log): the capture's throughput, data sent and data ACKed\n"
	"  (from `bbrpcap throughput`, the traced flow's direction); BBR's bw (the max-bw\n"
	"  filter after each ACK) and pacing rate from the trace; each collapse as a\n"
	"  marker coloured by its cause (delayed ACK, rate drop, loss/policer, other).\n"
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

static const struct plot plots[PLOT_KINDS] = {
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

static void parse_args(int argc, char **argv, struct env *e)
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

/* --- the run ---------------------------------------------------------------------- */

/* where the data files go: --keep-data, or a directory removed at exit */
static int make_data_dir(const struct env *e)
{
	const char *tmp = getenv("TMPDIR");

	if (e->keep) {
		if (mkdir(e->keep, 0755) && errno != EEXIST) {
			elog("%s: cannot create: %s", e->keep, strerror(errno));
			return TK_EXIT_FAIL;
		}
		if (!realpath(e->keep, data_dir)) {
			elog("%s: %s", e->keep, strerror(errno));
			return TK_EXIT_FAIL;
		}
		return TK_EXIT_OK;
	}
	snprintf(data_dir, sizeof(data_dir), "%s/bbrplot.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(data_dir)) {
		elog("%s: cannot create: %s", data_dir, strerror(errno));
		return TK_EXIT_FAIL;
	}
	remove_dir = true;
	atexit(cleanup);
	return TK_EXIT_OK;
}

#define VARS_MAX 65536 /* gnuplot -e's variables */

/* the data, then the picture; a TK_EXIT_* code */
static int draw(const struct env *e)
{
	char *vars = malloc(VARS_MAX);
	struct stat st;
	int rc;

	if (!vars) {
		elog("out of memory");
		return TK_EXIT_FAIL;
	}
	/* gnuplot writes OUT; remove a stale one so a failure cannot leave an old picture */
	unlink(e->out);
	rc = e->kind == PLOT_DIP ? plot_dip(e, vars, VARS_MAX) : plot_other(e, vars, VARS_MAX);
	free(vars);
	if (rc != TK_EXIT_OK)
		return rc;
	if (stat(e->out, &st) || st.st_size == 0) {
		elog("%s: gnuplot wrote nothing", e->out);
		return TK_EXIT_FAIL;
	}
	vlog("%s: %lld bytes", e->out, (long long)st.st_size);
	return TK_EXIT_OK;
}

int main(int argc, char **argv)
{
	struct env e = { .width = WIDTH_DEFAULT, .height = HEIGHT_DEFAULT, .bin_ms = BIN_MS_DEFAULT,
			 .from = NAN, .to = NAN, .offset_ms = NAN };
	int rc;

	log_init("bbrplot");
	parse_args(argc, argv, &e);
	rc = make_data_dir(&e);
	return rc == TK_EXIT_OK ? draw(&e) : rc;
}
