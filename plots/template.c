// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbrplot's templates: where the gnuplot template of a plot is found, from
 * BBRPLOT_TEMPLATES, beside the program, or in the installed data directory.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "plots/bbrplot.h"

/* where this program lives: its templates are found from there, bbrpcap beside it */
const char *exe_dir(void)
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
int find_template(const char *name, char *path, size_t len)
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
