/* SPDX-License-Identifier: GPL-2.0-only */
/* Shared definitions for every tool: exit codes and small macros. */
#ifndef TK_COMMON_H
#define TK_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/*
 * The exit codes of the whole toolkit: one table, so that the same failure
 * has the same code in every tool and no code means two things. Each tool's
 * --help lists the codes it uses, with these words (tk_exit_help).
 * X(name, code, what it means)
 */
#define TK_EXIT_CODES(X)                                                                   \
	X(OK, 0, "success")                                                                 \
	X(FAIL, 1, "a runtime failure not named below")                                     \
	X(USAGE, 2, "bad arguments")                                                        \
	X(NOPERM, 3, "a missing privilege")                                                 \
	X(NOTSUP, 4, "the kernel lacks a needed feature")                                   \
	X(DATA, 5, "bad input: missing, unreadable, damaged, or not what was expected") \
	X(NODEV, 10, "no such network device")                                              \
	X(NOTABLE, 11, "no such routing table")                                             \
	X(NONETNS, 12, "no such network namespace")                                         \
	X(NOROUTE, 13, "no route matches")                                                  \
	X(REFUSED, 14, "the kernel refused the change; nothing was applied")                \
	X(PARTIAL, 15, "some changes were applied, some refused")                           \
	X(VERIFY, 16, "read back, a route is not what was asked")                           \
	X(JOURNAL, 17, "the journal cannot be written, synced or locked; nothing applied")  \
	X(UNSAFE, 18, "a matching route cannot be changed safely")                          \
	X(STALE, 19, "the journal describes another boot, namespace or device; nothing applied") \
	X(NETWORK, 20, "a connection or network I/O failed")                                \
	X(UNMATCHED, 21, "--strict: a record found no frame in the capture")                \
	X(IDENTITY, 22, "the figures fail the identity Mpps = workers x Hz / cycles")        \
	X(COUNTERS, 23, "--verify: counters differ from what was sent")

enum tk_exit {
#define TK_EXIT_ENUM(name, code, what) TK_EXIT_##name = code,
	TK_EXIT_CODES(TK_EXIT_ENUM)
#undef TK_EXIT_ENUM
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* a macro's value as a string, for help texts that quote a default */
#define TK_STR_(x) #x
#define TK_STR(x) TK_STR_(x)

#define TK_NSEC_PER_SEC 1000000000ULL
#define TK_NSEC_PER_MSEC 1000000ULL
#define TK_NSEC_PER_USEC 1000ULL
#define TK_USEC_PER_SEC 1000000ULL
#define TK_USEC_PER_MSEC 1000ULL
#define TK_MSEC_PER_SEC 1000ULL

/* for floating-point arithmetic: the same units as doubles, each spelled as the
 * literal it stands for, so an expression keeps its value to the bit */
#define TK_NSEC_PER_SEC_F 1e9
#define TK_NSEC_PER_MSEC_F 1e6
#define TK_NSEC_PER_USEC_F 1e3
#define TK_USEC_PER_SEC_F 1e6
#define TK_USEC_PER_MSEC_F 1e3
#define TK_MSEC_PER_SEC_F 1e3
#define TK_SEC_PER_NSEC_F 1e-9
#define TK_SEC_PER_USEC_F 1e-6
#define TK_SEC_PER_MSEC_F 1e-3
#define TK_MSEC_PER_NSEC_F 1e-6
#define TK_MSEC_PER_USEC_F 1e-3
#define TK_USEC_PER_NSEC_F 1e-3

/* rates: bit/s in a Gbit/s and a Mbit/s */
#define TK_BPS_PER_GBPS 1000000000ULL
#define TK_BPS_PER_MBPS 1000000ULL
/* for floating-point arithmetic: bit/s per Gbit/s, Mbit/s, kbit/s, and Mbit/s per bit/s */
#define TK_BPS_PER_GBPS_F 1e9
#define TK_BPS_PER_MBPS_F 1e6
#define TK_BPS_PER_KBPS_F 1e3
#define TK_MBPS_PER_BPS_F 1e-6

/* sizes in decimal units, as the verdicts print them: bytes in a kB and an MB */
#define TK_BYTES_PER_KB 1000ULL
#define TK_BYTES_PER_KB_F 1e3
#define TK_BYTES_PER_MB_F 1e6

/* SI prefixes, for rates in other units than bits and time (Mpps, cycles
 * per second in GHz) and for the k, M and G of a count */
#define TK_KILO_F 1e3
#define TK_MEGA_F 1e6
#define TK_GIGA_F 1e9
#define TK_NANO_F 1e-9

/* CLOCK_MONOTONIC in nanoseconds: the time base of every tool and of the
 * BPF programs' bpf_ktime_get_ns() */
static inline uint64_t tk_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * TK_NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* the word for n of a thing, in every tool's sentences: one, or many */
static inline const char *tk_plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}
/*
 * Fetches p's cache line into every level of the cache, a hint for a load
 * soon. Not __builtin_prefetch alone: GCC 12 at -O2 takes a function whose
 * only effect is that builtin for one without effects, and drops its calls
 * (the detector's hints lost two of their three stages that way), so on x86
 * the instruction is an asm statement the compiler must keep.
 */
static inline void tk_prefetch(const void *p)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ volatile("prefetcht0 %0" : : "m"(*(const char *)p));
#else
	__builtin_prefetch(p, 0, 3);
#endif
}

#define TK_UNUSED __attribute__((unused))
#define TK_PRINTF(a, b) __attribute__((format(printf, a, b)))

#endif
