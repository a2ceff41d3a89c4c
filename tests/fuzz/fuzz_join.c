// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbrpcap join on what users feed it: a trace and a capture, both arbitrary
 * bytes (traces cut in the middle of a line, captures damaged anywhere). The
 * input is split in two: its first two bytes give the trace's length, the
 * trace follows, and the rest is the capture. The whole command runs, from
 * reading both files to writing the joined records, as `bbrpcap join` would.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "log.h"
#include "pcap/bbrpcap.h"

/* a memory file holding bytes, named by its /proc path; -1 on failure */
static int memfile(const char *name, const uint8_t *p, size_t n, char *path, size_t len)
{
	int fd = memfd_create(name, 0);

	if (fd < 0)
		return -1;
	if (n && write(fd, p, n) != (ssize_t)n) {
		close(fd);
		return -1;
	}
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

/* runs the join with its lines (stdout) sent to /dev/null, and stdout back after */
static void join_quietly(char *trace, char *cap)
{
	char *argv[] = { "join", trace, cap, "-o", "/dev/null", "-q", NULL };
	int saved = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY);

	if (saved < 0 || null < 0)
		abort();
	fflush(stdout);
	dup2(null, STDOUT_FILENO);
	bp_join_main(6, argv);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	close(null);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char trace[64], cap[64];
	size_t tlen;
	int tfd, cfd;

	if (size < 2)
		return 0;
	tlen = (size_t)data[0] | (size_t)data[1] << 8;
	if (tlen > size - 2)
		tlen = size - 2;
	tfd = memfile("trace", data + 2, tlen, trace, sizeof(trace));
	cfd = memfile("capture", data + 2 + tlen, size - 2 - tlen, cap, sizeof(cap));
	if (tfd < 0 || cfd < 0)
		abort();
	join_quietly(trace, cap);
	close(tfd);
	close(cfd);
	return 0;
}
