// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbrplot: the pictures. This program only prepares each plot's data (see
 * plotdata.c) and runs gnuplot on the readable templates in plots/ (NAME.gp).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
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
#include "plots/plotdata.h"

/* the installed data directory, from PREFIX (Makefile) */
#ifndef TK_DATADIR
#define TK_DATADIR "/usr/local/share/bbrkit"
#endif

static const char usage_text[] =
	"Usage: bbrplot --trace T.jsonl [--pcap F.pcap] -o OUT.png|OUT.svg [OPTIONS]\n"
	"       bbrplot dwell UDPDWELL.jsonl -o OUT.png|OUT.svg [OPTIONS]\n"
	"       bbrplot upf SWEEP.csv -o OUT.png|OUT.svg [OPTIONS]\n"
	"       bbrplot sweep SWEEP.csv -o OUT.png|OUT.svg [OPTIONS]\n"
	"\n"
	"Draws with gnuplot, from the templates dip.gp, dwell.gp, upf.gp and sweep.gp:\n"
	"those in BBRPLOT_TEMPLATES=DIR when it is set, else the first found of\n"
	"../share/bbrkit/plots beside this program (installed), ../plots beside it (the\n"
	"source tree) and " TK_DATADIR "/plots. The format follows OUT's extension:\n"
	"PNG (cairo) or SVG.\n"
	"\n"
	"The dip plot (--trace), on one time axis (seconds since the trace's first sample):\n"
	"  upper panel (Mbit/s, log): the capture's throughput, data sent and data ACKed\n"
	"  (from `bbrpcap throughput`, the traced flow's direction); BBR's bw (the max-bw\n"
	"  filter after each ACK) and pacing rate from the trace; each collapse as a\n"
	"  marker coloured by its cause (delayed ACK, rate drop, loss/policer, other).\n"
	"  Rates below 0.01 Mbit/s, an empty bin among them, sit on the axis' floor.\n"
	"  lower panel (us, log): each rate sample's rcv_interval_us and snd_interval_us;\n"
	"  a delayed ACK stands out as rcv_interval far above snd_interval.\n"
	"The other plots:\n"
	"  dwell  udpdwell --format json records: each socket's share of datagrams per\n"
	"         dwell bucket, with its state, average, p99 and maximum in the legend\n"
	"  upf    upfbench's sweep CSV: cycles per packet against sessions, per design\n"
	"  sweep  repro/sweep.sh's CSV: collapses per minute by cause, and goodput, per run\n"
	"\n"
	"Options:\n"
	"  -o, --output FILE      the picture: .png or .svg (required)\n"
	"  --title TEXT           the title (default: says what is drawn)\n"
	"  --size WxH             pixels (default 1200x800; 320x200 .. 8000x8000)\n"
	"dip plot:\n"
	"  --trace FILE           bbrtrace JSON lines (a joined trace from `bbrpcap join`\n"
	"                         too: its frame times set the clock offset)\n"
	"  --pcap FILE            a capture of the flow, for the wire's throughput\n"
	"  --from S, --to S       draw only this time range (seconds, as on the axis)\n"
	"  --cookie N             the traced socket to draw (default: the one with the\n"
	"  --flow ADDR:PORT       most samples); --flow names it by its local address\n"
	"  --bin-ms MS            throughput bin width (default 100: a few video frames;\n"
	"                         0.01..60000)\n"
	"  --clock-offset-ms MS   the capture's clock minus the trace's (default: from a\n"
	"                         joined trace's frame times, else 0: one host, one clock)\n"
	"  --keep-data DIR        write the data files and the gnuplot command there\n"
	"  -v, -q, -h/--help, --version\n"
	"\n"
	"Exit status: 0 success; 1 failure (gnuplot or bbrpcap failed, a file could not be\n"
	"written); 2 bad arguments; 5 bad input data (a malformed trace or CSV, nothing to\n"
	"draw).\n";

enum plot_kind { PLOT_DIP, PLOT_DWELL, PLOT_UPF, PLOT_SWEEP };

struct env {
	enum plot_kind kind;
	const char *input;      /* dwell/upf/sweep */
	const char *trace, *pcap, *out, *title, *keep;
	const char *sender;
	bool have_cookie;
	uint64_t cookie;
	unsigned int width, height;
	bool have_from, have_to, have_offset;
	double from, to, bin_ms, offset_ms;
	bool svg;
};

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

/* bbrpcap throughput on the capture, read into tput.dat; -1 on failure */
static long capture_throughput(const struct env *e, const struct pd_dip_info *info, double offset_s)
{
	char bbrpcap[PATH_MAX], bin[32], flow[200], err[256], sender[96], receiver[96];
	int pipefd[2], status;
	pid_t pid;
	FILE *in;
	long n;

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
	in = fdopen(pipefd[0], "r");
	n = in ? pd_dip_tput(in, info, offset_s, data_dir, err, sizeof(err)) : -1;
	if (in)
		fclose(in);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != TK_EXIT_DATA)) {
		elog("bbrpcap throughput failed on %s (exit %d)", e->pcap, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return -1;
	}
	if (WEXITSTATUS(status) == TK_EXIT_DATA)
		wlog("%s is damaged: the throughput stops where bbrpcap's message says", e->pcap);
	if (n < 0) {
		elog("%s", err);
		return -1;
	}
	return n;
}

/* the legend's causes, from lib/trace.h: ncauses, cause_label[] and cause_n[] */
static void gp_causes(FILE *v, const uint64_t *counts)
{
	fprintf(v, "ncauses=%d; array cause_label[%d]; array cause_n[%d]; ", BT_NCAUSES, BT_NCAUSES,
		BT_NCAUSES);
	for (int c = 0; c < BT_NCAUSES; c++) {
		char name[32];

		snprintf(name, sizeof(name), "cause_label[%d]", c + 1);
		gp_str(v, name, bt_cause_labels[c]);
		fprintf(v, "cause_n[%d]=%llu; ", c + 1, (unsigned long long)counts[c]);
	}
}

static int plot_dip(const struct env *e, char *vars, size_t vlen)
{
	struct pd_flow_sel sel = { e->have_cookie, e->cookie, e->sender };
	struct pd_dip_info info;
	char err[512], tmpl[PATH_MAX], title[512];
	double offset_s = 0;
	long bins = 0;
	uint64_t ncoll = 0;
	FILE *v;

	if (find_template("dip.gp", tmpl, sizeof(tmpl)))
		return TK_EXIT_FAIL;
	if (pd_dip_trace(e->trace, &sel, data_dir, &info, err, sizeof(err))) {
		elog("%s", err);
		return strstr(err, "cannot open") || strstr(err, "cannot create") ? TK_EXIT_FAIL : TK_EXIT_DATA;
	}
	for (int c = 0; c < BT_NCAUSES; c++)
		ncoll += info.collapses[c];
	vlog("%s: flow %s:%u -> %s:%u (cookie %llu), %llu samples, %llu collapses; %llu flows in the trace",
	     e->trace, info.saddr, info.sport, info.daddr, info.dport, (unsigned long long)info.cookie,
	     (unsigned long long)info.samples, (unsigned long long)ncoll, (unsigned long long)info.flows);
	if (e->pcap) {
		if (e->have_offset)
			offset_s = e->offset_ms * 1e-3;
		else if (info.have_offset)
			offset_s = info.offset_s;
		else if (!info.wall) {
			elog("%s has no wall_ns: its clock cannot be matched to the capture's; join it first "
			     "(bbrpcap join) or give --clock-offset-ms",
			     e->trace);
			return TK_EXIT_DATA;
		}
		bins = capture_throughput(e, &info, offset_s);
		if (bins < 0)
			return TK_EXIT_FAIL;
		if (bins == 0)
			wlog("%s holds no data of %s:%u -> %s:%u", e->pcap, info.saddr, info.sport, info.daddr, info.dport);
		vlog("capture: %ld bins; clock offset %.3f ms", bins, offset_s * 1e3);
	} else {
		FILE *t;
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/tput.dat", data_dir);
		t = fopen(path, "w");
		if (!t) {
			elog("%s: cannot create: %s", path, strerror(errno));
			return TK_EXIT_FAIL;
		}
		fputs("NaN NaN NaN 0\n", t);
		fclose(t);
	}
	if (e->title)
		snprintf(title, sizeof(title), "%s", e->title);
	else
		snprintf(title, sizeof(title), "BBR and the wire: %s:%u -> %s:%u (%llu samples, collapses: %llu)",
			 info.saddr, info.sport, info.daddr, info.dport, (unsigned long long)info.samples,
			 (unsigned long long)ncoll);
	v = fmemopen(vars, vlen, "w");
	if (!v)
		return TK_EXIT_FAIL;
	gp_str(v, "data", data_dir);
	gp_str(v, "out", e->out);
	gp_str(v, "term", e->svg ? "svg" : "pngcairo");
	gp_str(v, "ptitle", title);
	fprintf(v, "width=%u; height=%u; have_pcap=%d; bin_ms=%g; floor_mbps=%g; ", e->width, e->height,
		e->pcap && bins > 0, e->bin_ms, PD_FLOOR_MBPS);
	gp_causes(v, info.collapses);
	if (e->have_from)
		fprintf(v, "xfrom=%.9g; ", e->from);
	if (e->have_to)
		fprintf(v, "xto=%.9g; ", e->to);
	if (fclose(v))
		return TK_EXIT_FAIL;
	return run_gnuplot(tmpl, vars) ? TK_EXIT_FAIL : TK_EXIT_OK;
}

static int plot_other(const struct env *e, char *vars, size_t vlen)
{
	static const char *const tmpls[] = { NULL, "dwell.gp", "upf.gp", "sweep.gp" };
	char err[512], tmpl[PATH_MAX], title[512], labels[4096] = "";
	double floor_cycles = 0;
	int n;
	FILE *v;

	if (find_template(tmpls[e->kind], tmpl, sizeof(tmpl)))
		return TK_EXIT_FAIL;
	switch (e->kind) {
	case PLOT_DWELL:
		n = pd_dwell(e->input, data_dir, err, sizeof(err));
		snprintf(title, sizeof(title), "UDP socket-queue dwell time (udpdwell): where each socket's datagrams waited");
		break;
	case PLOT_UPF:
		n = pd_upf(e->input, data_dir, labels, sizeof(labels), &floor_cycles, err, sizeof(err));
		snprintf(title, sizeof(title), "GTP-U user plane (upfbench): cycles per packet against sessions");
		break;
	default:
		n = pd_sweep(e->input, data_dir, err, sizeof(err));
		snprintf(title, sizeof(title), "BBR collapses per run (repro/sweep.sh): delayed ACKs, and the fix");
		break;
	}
	if (n < 0) {
		elog("%s", err);
		return strstr(err, "cannot open") || strstr(err, "cannot create") ? TK_EXIT_FAIL : TK_EXIT_DATA;
	}
	if (e->title)
		snprintf(title, sizeof(title), "%s", e->title);
	v = fmemopen(vars, vlen, "w");
	if (!v)
		return TK_EXIT_FAIL;
	gp_str(v, "data", data_dir);
	gp_str(v, "out", e->out);
	gp_str(v, "term", e->svg ? "svg" : "pngcairo");
	gp_str(v, "ptitle", title);
	fprintf(v, "width=%u; height=%u; ", e->width, e->height);
	if (e->kind == PLOT_DWELL)
		fprintf(v, "nsock=%d; ", n);
	if (e->kind == PLOT_UPF) {
		gp_str(v, "labels", labels);
		fprintf(v, "floor_cycles=%.9g; ", floor_cycles);
	}
	if (fclose(v))
		return TK_EXIT_FAIL;
	return run_gnuplot(tmpl, vars) ? TK_EXIT_FAIL : TK_EXIT_OK;
}

static void parse_size(const char *s, struct env *e)
{
	unsigned int w, h;
	char x, tail;

	if (sscanf(s, "%u%c%u%c", &w, &x, &h, &tail) != 3 || x != 'x' || w < 320 || h < 200 || w > 8000 || h > 8000)
		cli_usage_die("--size: '%s' is not WIDTHxHEIGHT in pixels (320x200 .. 8000x8000)", s);
	e->width = w;
	e->height = h;
}

int main(int argc, char **argv)
{
	enum { O_TRACE = 256, O_PCAP, O_TITLE, O_SIZE, O_FROM, O_TO, O_COOKIE, O_FLOW, O_BIN, O_OFFSET, O_KEEP, O_VERSION };
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "trace", required_argument, NULL, O_TRACE },
		{ "pcap", required_argument, NULL, O_PCAP },
		{ "title", required_argument, NULL, O_TITLE },
		{ "size", required_argument, NULL, O_SIZE },
		{ "from", required_argument, NULL, O_FROM },
		{ "to", required_argument, NULL, O_TO },
		{ "cookie", required_argument, NULL, O_COOKIE },
		{ "flow", required_argument, NULL, O_FLOW },
		{ "bin-ms", required_argument, NULL, O_BIN },
		{ "clock-offset-ms", required_argument, NULL, O_OFFSET },
		{ "keep-data", required_argument, NULL, O_KEEP },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, O_VERSION },
		{ 0 },
	};
	static const char *const kinds[] = { "dwell", "upf", "sweep" };
	struct env e = { .width = 1200, .height = 800, .bin_ms = 100 };
	const char *dip_only = NULL;
	char *vars;
	size_t len;
	int opt, rc;

	log_init("bbrplot");
	for (int k = 0; argc > 1 && k < 3; k++) {
		if (!strcmp(argv[1], kinds[k])) {
			e.kind = (enum plot_kind)(k + 1);
			argv++;
			argc--;
			break;
		}
	}
	while ((opt = getopt_long(argc, argv, "o:vqh", opts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			e.out = optarg;
			break;
		case O_TRACE:
			e.trace = optarg;
			dip_only = "--trace";
			break;
		case O_PCAP:
			e.pcap = optarg;
			dip_only = "--pcap";
			break;
		case O_TITLE:
			e.title = optarg;
			break;
		case O_SIZE:
			parse_size(optarg, &e);
			break;
		case O_FROM:
			if (cli_parse_double("--from", optarg, -1e9, 1e9, &e.from))
				return TK_EXIT_USAGE;
			e.have_from = true;
			dip_only = "--from";
			break;
		case O_TO:
			if (cli_parse_double("--to", optarg, -1e9, 1e9, &e.to))
				return TK_EXIT_USAGE;
			e.have_to = true;
			dip_only = "--to";
			break;
		case O_COOKIE:
			if (cli_parse_u64("--cookie", optarg, 0, UINT64_MAX, &e.cookie))
				return TK_EXIT_USAGE;
			e.have_cookie = true;
			dip_only = "--cookie";
			break;
		case O_FLOW:
			if (!strrchr(optarg, ':') || !strrchr(optarg, ':')[1])
				cli_usage_die("--flow: '%s' is not ADDR:PORT (the traced socket's local end)", optarg);
			e.sender = optarg;
			dip_only = "--flow";
			break;
		case O_BIN:
			if (cli_parse_double("--bin-ms", optarg, 0.01, 60000, &e.bin_ms))
				return TK_EXIT_USAGE;
			dip_only = "--bin-ms";
			break;
		case O_OFFSET:
			if (cli_parse_double("--clock-offset-ms", optarg, -1e9, 1e9, &e.offset_ms))
				return TK_EXIT_USAGE;
			e.have_offset = true;
			dip_only = "--clock-offset-ms";
			break;
		case O_KEEP:
			e.keep = optarg;
			break;
		case 'v':
			log_set_level(log_get_level() + 1);
			break;
		case 'q':
			log_set_level(LOG_QUIET);
			break;
		case 'h':
			fputs(usage_text, stdout);
			return TK_EXIT_OK;
		case O_VERSION:
			cli_print_version();
			return TK_EXIT_OK;
		default:
			return TK_EXIT_USAGE;
		}
	}
	if (e.kind == PLOT_DIP) {
		if (optind < argc)
			cli_usage_die("unexpected argument '%s' (a plot of another kind is: dwell, upf or sweep)",
				      argv[optind]);
		if (!e.trace)
			cli_usage_die("--trace FILE is required (or a plot kind: dwell, upf, sweep); see --help");
		if (e.have_from && e.have_to && e.from >= e.to)
			cli_usage_die("--from %g is not before --to %g", e.from, e.to);
		if (e.have_cookie && e.sender)
			cli_usage_die("--cookie and --flow both choose the socket; give one");
	} else {
		if (dip_only)
			cli_usage_die("%s: only the dip plot (--trace) takes it", dip_only);
		if (optind >= argc)
			cli_usage_die("%s: missing the input file", kinds[e.kind - 1]);
		if (optind + 1 < argc)
			cli_usage_die("%s: unexpected argument '%s'", kinds[e.kind - 1], argv[optind + 1]);
		e.input = argv[optind];
	}
	if (!e.out)
		cli_usage_die("-o OUT.png|OUT.svg is required");
	len = strlen(e.out);
	if (len > 4 && !strcasecmp(e.out + len - 4, ".svg"))
		e.svg = true;
	else if (!(len > 4 && !strcasecmp(e.out + len - 4, ".png")))
		cli_usage_die("-o: '%s' must end in .png or .svg", e.out);

	if (e.keep) {
		if (mkdir(e.keep, 0755) && errno != EEXIST) {
			elog("%s: cannot create: %s", e.keep, strerror(errno));
			return TK_EXIT_FAIL;
		}
		snprintf(data_dir, sizeof(data_dir), "%s", e.keep);
	} else {
		const char *tmp = getenv("TMPDIR");

		snprintf(data_dir, sizeof(data_dir), "%s/bbrplot.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(data_dir)) {
			elog("%s: cannot create: %s", data_dir, strerror(errno));
			return TK_EXIT_FAIL;
		}
		remove_dir = true;
		atexit(cleanup);
	}
	vars = malloc(65536);
	if (!vars) {
		elog("out of memory");
		return TK_EXIT_FAIL;
	}
	/* gnuplot writes OUT; remove a stale one so a failure cannot leave an old picture */
	unlink(e.out);
	rc = e.kind == PLOT_DIP ? plot_dip(&e, vars, 65536) : plot_other(&e, vars, 65536);
	free(vars);
	if (rc == TK_EXIT_OK) {
		struct stat st;

		if (stat(e.out, &st) || st.st_size == 0) {
			elog("%s: gnuplot wrote nothing", e.out);
			return TK_EXIT_FAIL;
		}
		vlog("%s: %lld bytes", e.out, (long long)st.st_size);
	}
	return rc;
}
