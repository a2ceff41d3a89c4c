/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The memory floor: what one random DRAM access costs on this machine.
 *
 * A buffer far larger than the last-level cache is linked into one random
 * cycle of cache lines (huge pages asked, so page walks stay out of it).
 *   serial  one pointer chase: each load waits for the one before, so one
 *           access is outstanding; cycles per access = DRAM latency.
 *   mlp     C independent chases interleaved, for C in 1..64; the best
 *           C gives the cycles per access at maximum memory-level
 *           parallelism, the floor a batched lookup can approach.
 */
#ifndef UP_FLOOR_H
#define UP_FLOOR_H

#include <stddef.h>
#include <stdint.h>

struct up_floor {
	size_t bytes;           /* buffer size */
	double serial_cycles;   /* per access, one outstanding */
	double serial_ns;
	double mlp_cycles;      /* per access, at the best number of chains */
	unsigned int mlp_chains;
	uint64_t huge_kib;      /* AnonHugePages obtained for the buffer */
	double tsc_hz;
};

/* the default buffer: far larger than the L3, yet within what a test machine has */
#define UP_FLOOR_L3_TIMES 8
#define UP_FLOOR_MIN_MIB 1024
#define UP_FLOOR_MAX_MIB 4096
/* UP_FLOOR_L3_TIMES x the L3, within UP_FLOOR_MIN_MIB..UP_FLOOR_MAX_MIB */
size_t up_floor_default_bytes(void);
/* 0, or -1 with a sentence in err */
int up_floor_measure(size_t bytes, struct up_floor *f, char *err, size_t errlen);

#endif
