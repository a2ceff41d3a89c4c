// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbrplot: the pictures. This program only prepares each plot's data (see
 * plotdata.h) and runs gnuplot on the readable templates in plots/ (NAME.gp).
 * Here: main, and the data directory the run writes in.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "log.h"
#include "plots/bbrplot.h"

char data_dir[PATH_MAX - 64]; /* room for a file name after it */
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

int main(int argc, char **argv)
{
	/* the defaults are the option table's (options.c); NAN: not given */
	struct env e = { .from = NAN, .to = NAN, .offset_ms = NAN };
	int rc;

	log_init("bbrplot");
	parse_args(argc, argv, &e);
	rc = make_data_dir(&e);
	return rc == TK_EXIT_OK ? draw(&e) : rc;
}
