/* SPDX-License-Identifier: GPL-2.0-only */
/* Shared definitions for every tool: exit codes and small macros. */
#ifndef TK_COMMON_H
#define TK_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/*
 * Exit codes shared by all tools. A tool documents in --help which of them it
 * uses; tools with more failure classes (quickack) add their own from 10 up.
 */
enum tk_exit {
	TK_EXIT_OK = 0,
	TK_EXIT_FAIL = 1,     /* runtime failure not covered below */
	TK_EXIT_USAGE = 2,    /* bad arguments */
	TK_EXIT_NOPERM = 3,   /* missing privilege (root, CAP_BPF, CAP_NET_ADMIN) */
	TK_EXIT_NOTSUP = 4,   /* the kernel lacks a needed feature (BTF, a hook) */
	TK_EXIT_DATA = 5,     /* bad input data (a truncated file, a corrupt journal) */
	TK_EXIT_LOST = 6,     /* finished, but events were lost (only with --strict) */
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define TK_NSEC_PER_SEC 1000000000ULL

/* CLOCK_MONOTONIC in nanoseconds: the time base of every tool and of the
 * BPF programs' bpf_ktime_get_ns() */
static inline uint64_t tk_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * TK_NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}
#define TK_UNUSED __attribute__((unused))
#define TK_PRINTF(a, b) __attribute__((format(printf, a, b)))

#ifndef TOOLKIT_VERSION
#define TOOLKIT_VERSION "0.1"
#endif

#endif
