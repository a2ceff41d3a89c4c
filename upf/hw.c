// SPDX-License-Identifier: GPL-2.0-only
/*
 * What upfbench reads of the machine: the TSC's rate against the monotonic
 * clock, 2 MiB-aligned memory with or without huge pages and what it got,
 * cache and TLB misses through perf_event_open, and CPU pinning.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "hw.h"

#define MIB2 (2u << 20)

double up_now_s(void)
{
	return (double)tk_mono_ns() * TK_SEC_PER_NSEC_F;
}

double up_tsc_hz(void)
{
	static double hz;
	double best_err = 1e9;

	if (hz)
		return hz;
	for (int i = 0; i < 3; i++) {
		double t0, t1, t2, t3;
		uint64_t c0, c1;

		/* bracket each TSC read by clock reads, so the error is known */
		t0 = up_now_s();
		c0 = up_tsc();
		t1 = up_now_s();
		do
			t2 = up_now_s();
		while (t2 - t1 < 0.05);
		c1 = up_tsc();
		t3 = up_now_s();
		if ((t1 - t0) + (t3 - t2) < best_err) {
			best_err = (t1 - t0) + (t3 - t2);
			hz = (double)(c1 - c0) / (((t2 + t3) - (t0 + t1)) / 2);
		}
	}
	return hz;
}

void *up_mem_alloc(size_t bytes, bool huge)
{
	size_t len = (bytes + MIB2 - 1) & ~(size_t)(MIB2 - 1), map = len + MIB2;
	uint8_t *raw, *p;

	if (!bytes)
		return NULL;
	raw = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		return NULL;
	/* keep the 2 MiB aligned part only, so huge pages can back all of it */
	p = (uint8_t *)(((uintptr_t)raw + MIB2 - 1) & ~(uintptr_t)(MIB2 - 1));
	if (p > raw)
		munmap(raw, (size_t)(p - raw));
	if (raw + map > p + len)
		munmap(p + len, (size_t)(raw + map - (p + len)));
	madvise(p, len, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	/* fault it in now, so no page fault lands in a measurement */
	for (size_t o = 0; o < len; o += 4096)
		p[o] = 0;
	return p;
}

void up_mem_free(void *p, size_t bytes)
{
	size_t len = (bytes + MIB2 - 1) & ~(size_t)(MIB2 - 1);

	if (p)
		munmap(p, len);
}

uint64_t up_mem_huge_kib(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false;
	uint64_t kib = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %lu kB", &lo) == 1) {
			kib = lo;
			break;
		}
	}
	fclose(f);
	return kib;
}

uint64_t up_proc_huge_kib(void)
{
	FILE *f = fopen("/proc/self/smaps_rollup", "r");
	char line[256];
	unsigned long kib = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %lu kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

const char *up_thp_mode(char *buf, size_t len)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	char line[128], *a, *b;

	snprintf(buf, len, "unavailable");
	if (!f)
		return buf;
	if (fgets(line, sizeof(line), f) && (a = strchr(line, '[')) && (b = strchr(a, ']'))) {
		*b = '\0';
		snprintf(buf, len, "%s", a + 1);
	}
	fclose(f);
	return buf;
}

size_t up_l3_bytes(void)
{
	long v = sysconf(_SC_LEVEL3_CACHE_SIZE);
	FILE *f;
	char line[64];
	unsigned long n;

	if (v > 0)
		return (size_t)v;
	f = fopen("/sys/devices/system/cpu/cpu0/cache/index3/size", "r");
	if (!f)
		return 0;
	if (fgets(line, sizeof(line), f) && sscanf(line, "%luK", &n) == 1)
		v = (long)n * 1024;
	fclose(f);
	return v > 0 ? (size_t)v : 0;
}

/* ---- perf_event_open --------------------------------------------------------------- */

static int perf_open_cache(unsigned int cache)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HW_CACHE;
	a.config = cache | (PERF_COUNT_HW_CACHE_OP_READ << 8) | (PERF_COUNT_HW_CACHE_RESULT_MISS << 16);
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

const char *up_perf_missing(void)
{
	static char why[160];
	static int probed;
	int a, b, ea = 0, eb = 0;

	if (probed)
		return why[0] ? why : NULL;
	probed = 1;
	a = perf_open_cache(PERF_COUNT_HW_CACHE_LL);
	if (a < 0)
		ea = errno;
	b = perf_open_cache(PERF_COUNT_HW_CACHE_DTLB);
	if (b < 0)
		eb = errno;
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
	if (ea || eb)
		snprintf(why, sizeof(why), "perf_event_open refused the %s counter: %s",
			 ea ? "LLC-miss" : "dTLB-miss", strerror(ea ? ea : eb));
	return why[0] ? why : NULL;
}

void up_perf_open(struct up_perf *p)
{
	p->fd_llc = p->fd_dtlb = -1;
	if (up_perf_missing())
		return;
	p->fd_llc = perf_open_cache(PERF_COUNT_HW_CACHE_LL);
	p->fd_dtlb = perf_open_cache(PERF_COUNT_HW_CACHE_DTLB);
}

void up_perf_start(struct up_perf *p)
{
	if (p->fd_llc >= 0)
		ioctl(p->fd_llc, PERF_EVENT_IOC_ENABLE, 0);
	if (p->fd_dtlb >= 0)
		ioctl(p->fd_dtlb, PERF_EVENT_IOC_ENABLE, 0);
}

static uint64_t perf_read_close(int fd)
{
	uint64_t v = UINT64_MAX;

	if (fd < 0)
		return UINT64_MAX;
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	if (read(fd, &v, sizeof(v)) != sizeof(v))
		v = UINT64_MAX;
	close(fd);
	return v;
}

void up_perf_stop(struct up_perf *p, uint64_t *llc, uint64_t *dtlb)
{
	*llc = perf_read_close(p->fd_llc);
	*dtlb = perf_read_close(p->fd_dtlb);
	p->fd_llc = p->fd_dtlb = -1;
}

int up_cpus(int *cpus, int max)
{
	cpu_set_t set;
	int n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	for (int c = 0; c < CPU_SETSIZE && n < max; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	return n;
}

int up_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}
