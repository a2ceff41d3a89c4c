/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What upfbench needs from the machine: the TSC and its measured rate,
 * memory with or without transparent huge pages (and what was obtained),
 * hardware cache/TLB counters where perf_event_open has them, CPU pinning.
 */
#ifndef UP_HW_H
#define UP_HW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static inline uint64_t up_tsc(void) { return __rdtsc(); }
#define UP_HAVE_RDTSC 1
#else
#include "common.h"
/* without a TSC, the monotonic clock's nanoseconds are the cycles */
static inline uint64_t up_tsc(void) { return tk_mono_ns(); }
#define UP_HAVE_RDTSC 0
#endif

/*
 * c ? a : b without a branch, for conditions a predictor cannot learn
 * (which slot, IPv4 or IPv6, forwarded or not): a mispredicted branch
 * costs more than computing both sides.
 */
static inline uint64_t up_sel(bool c, uint64_t a, uint64_t b)
{
	uint64_t m = (uint64_t)0 - (uint64_t)c;

	return (a & m) | (b & ~m);
}
#define UP_SELP(c, a, b) ((__typeof__(a))(uintptr_t)up_sel((c), (uintptr_t)(a), (uintptr_t)(b)))

static inline void up_prefetch(const void *p) { __builtin_prefetch(p, 0, 3); }
static inline void up_prefetch_w(const void *p) { __builtin_prefetch(p, 1, 3); }

/* TSC ticks per second, measured against CLOCK_MONOTONIC (best of 3 x 50 ms) */
double up_tsc_hz(void);
double up_now_s(void); /* CLOCK_MONOTONIC in seconds */

/*
 * Anonymous memory, 2 MiB aligned and pre-faulted. huge: madvise(MADV_HUGEPAGE),
 * else MADV_NOHUGEPAGE, so that "off" really means 4 KiB pages.
 */
void *up_mem_alloc(size_t bytes, bool huge);
void up_mem_free(void *p, size_t bytes);
/* AnonHugePages of the mapping that contains p (KiB), from /proc/self/smaps */
uint64_t up_mem_huge_kib(const void *p);
/* AnonHugePages of the whole process (KiB), from /proc/self/smaps_rollup */
uint64_t up_proc_huge_kib(void);
/* the THP mode in brackets in /sys/kernel/mm/transparent_hugepage/enabled, or "unavailable" */
const char *up_thp_mode(char *buf, size_t len);

/* last-level cache size in bytes (sysconf, then sysfs); 0 when unknown */
size_t up_l3_bytes(void);

/* hardware counters of the calling thread: LLC read misses and dTLB read misses */
struct up_perf {
	int fd_llc, fd_dtlb;
};
/* NULL when both counters can be opened here, else why not (static text) */
const char *up_perf_missing(void);
void up_perf_open(struct up_perf *p);   /* fds are -1 where unavailable */
void up_perf_start(struct up_perf *p);
/* reads and closes; UINT64_MAX for a counter that is not available */
void up_perf_stop(struct up_perf *p, uint64_t *llc, uint64_t *dtlb);

/* CPUs this process may run on, in order; returns how many (at most max) */
int up_cpus(int *cpus, int max);
int up_pin(int cpu); /* pin the calling thread */

#endif
