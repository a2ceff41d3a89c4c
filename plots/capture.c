// SPDX-License-Identifier: GPL-2.0-only
/*
 * The dip plot's capture: `bbrpcap throughput` run on it, its CSV read into
 * tput.dat on the trace's clock (plotdata.h), and what its exit says.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "plots/bbrplot.h"

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
int dip_capture(const struct env *e, struct pd_dip_info *info, long *bins)
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
