// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbrplot's gnuplot: a value as a gnuplot string, and gnuplot run on a
 * template with its variables, the command kept as plot.sh and gnuplot's
 * own words shown when it fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "plots/bbrplot.h"

/* a gnuplot string literal: single quotes, a quote doubled */
void gp_str(FILE *f, const char *name, const char *v)
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
int run_gnuplot(const char *tmpl, const char *vars)
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
