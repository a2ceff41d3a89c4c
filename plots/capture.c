// SPDX-License-Identifier: GPL-2.0-only
/*
 * The dip plot's capture: `bbrpcap throughput` and `bbrpcap gaps` run on
 * it, their CSV read into tput.dat and gaps.dat on the trace's clock
 * (plotdata.h), and what their exits say.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "log.h"
#include "plots/bbrplot.h"

/* runs `bbrpcap CMD --format csv --flow FLOW OPT VALUE PCAP` on the capture,
 * for the traced flow; its CSV on *out; the child's pid, or -1 */
static pid_t start_bbrpcap(const struct env *e, const struct pd_dip_info *info, const char *cmd, const char *opt,
			   const char *value, FILE **out)
{
	char bbrpcap[PATH_MAX], flow[200], sender[96], receiver[96];
	int pipefd[2];
	pid_t pid;

	snprintf(bbrpcap, sizeof(bbrpcap), "%s/bbrpcap", exe_dir());
	if (access(bbrpcap, X_OK))
		snprintf(bbrpcap, sizeof(bbrpcap), "bbrpcap");
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
		execlp(bbrpcap, "bbrpcap", cmd, "--format", "csv", "--flow", flow, opt, value, e->pcap, (char *)NULL);
		fprintf(stderr, "bbrplot: cannot run %s: %s\n", bbrpcap, strerror(errno));
		_exit(127);
	}
	close(pipefd[1]);
	*out = fdopen(pipefd[0], "r");
	if (!*out)
		close(pipefd[0]);
	return pid;
}

/* waits for bbrpcap CMD: its exit status, or -1 when it did not exit */
static int wait_bbrpcap(pid_t pid, const char *cmd, const char *pcap)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != TK_EXIT_DATA)) {
		elog("bbrpcap %s failed on %s (exit %d)", cmd, pcap, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return -1;
	}
	return WEXITSTATUS(status);
}

/* bbrpcap throughput on the capture, read into tput.dat: *bins of them; a TK_EXIT_* code */
static int capture_throughput(const struct env *e, struct pd_dip_info *info, double offset_s, long *bins,
			      double *first_s)
{
	char err[256] = "out of memory", bin[32];
	FILE *in = NULL;
	int status;
	pid_t pid;

	/* a capture that cannot be read is bad input, said here in one line */
	if (strcmp(e->pcap, "-") && access(e->pcap, R_OK)) {
		elog("%s: cannot open: %s", e->pcap, strerror(errno));
		return TK_EXIT_DATA;
	}
	snprintf(bin, sizeof(bin), "%g", e->bin_ms);
	pid = start_bbrpcap(e, info, "throughput", "--bin-ms", bin, &in);
	if (pid < 0)
		return TK_EXIT_FAIL;
	*bins = in ? pd_dip_tput(in, info, offset_s, data_dir, first_s, err, sizeof(err)) : PD_ERR_SYSTEM;
	if (in)
		fclose(in);
	status = wait_bbrpcap(pid, "throughput", e->pcap);
	if (status < 0)
		return TK_EXIT_FAIL;
	/* bbrpcap said why on stderr: not a capture, or damaged before any data */
	if (status == TK_EXIT_DATA && *bins <= 0)
		return TK_EXIT_DATA;
	if (status == TK_EXIT_DATA)
		wlog("%s is damaged: the throughput stops where bbrpcap's message says", e->pcap);
	if (*bins < 0) {
		elog("%s", err);
		return pd_exit((int)*bins);
	}
	return TK_EXIT_OK;
}

/* bbrpcap gaps on the capture, read into gaps.dat; a TK_EXIT_* code. Run
 * after the throughput, which has said what a damaged capture holds */
static int capture_gaps(const struct env *e, struct pd_dip_info *info, double offset_s)
{
	char err[256] = "out of memory", min[32];
	FILE *in = NULL;
	long n;
	pid_t pid;

	snprintf(min, sizeof(min), "%g", e->gap_ms);
	pid = start_bbrpcap(e, info, "gaps", "--min-ms", min, &in);
	if (pid < 0)
		return TK_EXIT_FAIL;
	n = in ? pd_dip_gaps(in, info, offset_s, data_dir, err, sizeof(err)) : PD_ERR_SYSTEM;
	if (in)
		fclose(in);
	if (wait_bbrpcap(pid, "gaps", e->pcap) < 0)
		return TK_EXIT_FAIL;
	if (n < 0) {
		elog("%s", err);
		return pd_exit((int)n);
	}
	vlog("capture: %ld silences of %g ms or more", n, e->gap_ms);
	return TK_EXIT_OK;
}

/* data file NAME holding CONTENT, for what a plot without a capture draws */
static int write_empty(const char *name, const char *content)
{
	char path[PATH_MAX];
	FILE *t;

	snprintf(path, sizeof(path), "%s/%s", data_dir, name);
	t = fopen(path, "w");
	if (!t) {
		elog("%s: cannot create: %s", path, strerror(errno));
		return TK_EXIT_FAIL;
	}
	fputs(content, t);
	return fclose(t) ? TK_EXIT_FAIL : TK_EXIT_OK;
}

/* without a capture: rows of nothing, so the template draws no wire and no silence */
static int no_capture(void)
{
	int rc = write_empty("tput.dat", "NaN NaN NaN 0\n");

	return rc ? rc : write_empty("gaps.dat", "NaN NaN\n\n\nNaN NaN\n");
}

/* the capture's throughput on the trace's clock: *bins of it; time 0 moves to
 * the capture's first frame when that came before the trace's first sample;
 * a TK_EXIT_* code */
int dip_capture(const struct env *e, struct pd_dip_info *info, long *bins)
{
	double offset_s = 0, first_s = 0;
	char err[512];
	int rc;

	*bins = 0;
	if (!e->pcap)
		return no_capture();
	if (!isnan(e->offset_ms))
		offset_s = e->offset_ms * TK_SEC_PER_MSEC_F;
	else if (info->have_offset)
		offset_s = info->offset_s;
	else if (!info->wall) {
		elog("%s has no wall_ns: its clock cannot be matched to the capture's; join it first "
		     "(bbrpcap join) or give --clock-offset-ms",
		     e->trace);
		return TK_EXIT_DATA;
	}
	rc = capture_throughput(e, info, offset_s, bins, &first_s);
	if (rc == TK_EXIT_OK)
		rc = capture_gaps(e, info, offset_s);
	if (rc != TK_EXIT_OK)
		return rc;
	if (*bins > 0 && (rc = pd_dip_shift(data_dir, info, first_s, err, sizeof(err)))) {
		elog("%s", err);
		return pd_exit(rc);
	}
	if (*bins == 0)
		wlog("%s holds no data of %s:%u -> %s:%u", e->pcap, info->saddr, info->sport, info->daddr, info->dport);
	vlog("capture: %ld bins; clock offset %.3f ms", *bins, offset_s * TK_MSEC_PER_SEC_F);
	return TK_EXIT_OK;
}
