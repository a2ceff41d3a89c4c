// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbrplot's readers on what users feed them: a trace for the dip plot,
 * udpdwell's records, upfbench's and the sweep's CSV, as arbitrary bytes
 * (lines cut anywhere). The first byte picks the reader; the rest is the
 * file. Each reader writes its data files as bbrplot would before gnuplot
 * runs; nothing may crash or read out of bounds.
 */
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "plots/plotdata.h"

static char dir[4096];

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st; (void)type; (void)ftw;
	return remove(path);
}

/* the readers' data files go to a directory of this run, removed at exit */
static void remove_dir(void)
{
	nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static void make_dir(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/fuzz_plotdata.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		abort();
	atexit(remove_dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	char path[64], err[256], labels[512];
	struct pd_flow_sel sel = { 0 };
	struct pd_dip_info info;
	double floor_cycles;
	int fd;

	if (!ready) {
		make_dir();
		ready = true;
	}
	if (size < 1)
		return 0;
	fd = memfd_create("input", 0);
	if (fd < 0 || (size > 1 && write(fd, data + 1, size - 1) != (ssize_t)(size - 1)))
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	switch (data[0] % 5) {
	case 0:
		memset(&info, 0, sizeof(info));
		pd_dip_trace(path, &sel, dir, &info, err, sizeof(err));
		break;
	case 1:
		pd_dwell(path, dir, err, sizeof(err));
		break;
	case 2:
		pd_upf(path, dir, labels, sizeof(labels), &floor_cycles, err, sizeof(err));
		break;
	case 3:
		pd_sweep(path, dir, err, sizeof(err));
		break;
	default: {
		/* bbrpcap throughput's CSV, as the dip plot reads it from the pipe */
		FILE *f = fopen(path, "r");
		double first_s;

		if (!f)
			abort();
		memset(&info, 0, sizeof(info));
		pd_dip_tput(f, &info, 0, dir, &first_s, err, sizeof(err));
		fclose(f);
		break;
	}
	}
	close(fd);
	return 0;
}
