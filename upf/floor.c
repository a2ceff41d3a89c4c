// SPDX-License-Identifier: GPL-2.0-only
/*
 * The memory floor measured: a buffer linked into one random cycle of cache
 * lines, chased alone for DRAM latency and as C interleaved chains (one
 * function per C, its pointers in registers) for the best parallelism.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "floor.h"
#include "hw.h"

#define LINE 64

size_t up_floor_default_bytes(void)
{
	size_t b = UP_FLOOR_L3_TIMES * up_l3_bytes();

	if (b < ((size_t)UP_FLOOR_MIN_MIB << 20))
		b = (size_t)UP_FLOOR_MIN_MIB << 20;
	if (b > ((size_t)UP_FLOOR_MAX_MIB << 20))
		b = (size_t)UP_FLOOR_MAX_MIB << 20;
	return b;
}

/* C chases interleaved; C is a constant in each instance, so p[] lives in registers */
#define DEFINE_CHASE(C)                                                              \
	static __attribute__((noinline)) uintptr_t chase_##C(void *const *start, uint64_t rounds) \
	{                                                                            \
		void *p[C];                                                          \
		uintptr_t x = 0;                                                     \
		for (int j = 0; j < C; j++)                                          \
			p[j] = start[j];                                             \
		for (uint64_t r = 0; r < rounds; r++)                                \
			for (int j = 0; j < C; j++)                                  \
				p[j] = *(void *volatile *)p[j];                      \
		for (int j = 0; j < C; j++)                                          \
			x ^= (uintptr_t)p[j];                                        \
		return x;                                                            \
	}
DEFINE_CHASE(1)
DEFINE_CHASE(2)
DEFINE_CHASE(4)
DEFINE_CHASE(8)
DEFINE_CHASE(12)
DEFINE_CHASE(16)
DEFINE_CHASE(24)
DEFINE_CHASE(32)
DEFINE_CHASE(48)
DEFINE_CHASE(64)

static const unsigned int chains[] = { 1, 2, 4, 8, 12, 16, 24, 32, 48, 64 };

static uintptr_t chase(unsigned int c, void *const *start, uint64_t rounds)
{
	switch (c) {
	case 1: return chase_1(start, rounds);
	case 2: return chase_2(start, rounds);
	case 4: return chase_4(start, rounds);
	case 8: return chase_8(start, rounds);
	case 12: return chase_12(start, rounds);
	case 16: return chase_16(start, rounds);
	case 24: return chase_24(start, rounds);
	case 32: return chase_32(start, rounds);
	case 48: return chase_48(start, rounds);
	default: return chase_64(start, rounds);
	}
}

static volatile uintptr_t sink;

int up_floor_measure(size_t bytes, struct up_floor *f, char *err, size_t errlen)
{
	size_t n = bytes / LINE;
	uint32_t *order;
	uint8_t *buf;
	uint64_t rs = 0x9E3779B97F4A7C15ull;

	memset(f, 0, sizeof(*f));
	if (n < 1024 || n > UINT32_MAX) {
		snprintf(err, errlen, "memory floor: buffer of %zu bytes is out of range", bytes);
		return -1;
	}
	f->bytes = n * LINE;
	f->tsc_hz = up_tsc_hz();
	buf = up_mem_alloc(f->bytes, true);
	order = malloc(n * sizeof(*order));
	if (!buf || !order) {
		up_mem_free(buf, f->bytes);
		free(order);
		snprintf(err, errlen, "memory floor: cannot allocate %zu MiB", bytes >> 20);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j;
		uint32_t x;

		rs ^= rs >> 12;
		rs ^= rs << 25;
		rs ^= rs >> 27;
		j = (size_t)((((rs * 0x2545F4914F6CDD1Dull) >> 32) * (uint64_t)(i + 1)) >> 32);
		x = order[i];
		order[i] = order[j];
		order[j] = x;
	}
	/* one cycle through every line, in random order */
	for (size_t i = 0; i < n; i++)
		*(void **)(buf + (size_t)order[i] * LINE) = buf + (size_t)order[(i + 1) % n] * LINE;
	f->huge_kib = up_mem_huge_kib(buf);

	void *start[64];
	double best_serial = 1e30, best_mlp = 1e30;
	uint64_t serial_rounds = n < (1u << 17) ? n : (1u << 17);

	for (int rep = 0; rep < 3; rep++) {
		uint64_t t0, t1;

		start[0] = buf + (size_t)order[(size_t)rep * (n / 3)] * LINE;
		t0 = up_tsc();
		sink ^= chase(1, start, serial_rounds);
		t1 = up_tsc();
		if ((double)(t1 - t0) / (double)serial_rounds < best_serial)
			best_serial = (double)(t1 - t0) / (double)serial_rounds;
	}
	for (unsigned int ci = 1; ci < sizeof(chains) / sizeof(chains[0]); ci++) {
		unsigned int c = chains[ci];
		uint64_t rounds = (1u << 20) / c;

		if (rounds * c > n)
			rounds = n / c;
		for (int rep = 0; rep < 3; rep++) {
			uint64_t t0, t1;
			double per;

			/* chains start evenly spaced along the cycle, so they never meet */
			for (unsigned int j = 0; j < c; j++)
				start[j] = buf + (size_t)order[(j * (n / c) + (size_t)rep * 997) % n] * LINE;
			t0 = up_tsc();
			sink ^= chase(c, start, rounds);
			t1 = up_tsc();
			per = (double)(t1 - t0) / (double)(rounds * c);
			if (per < best_mlp) {
				best_mlp = per;
				f->mlp_chains = c;
			}
		}
	}
	f->serial_cycles = best_serial;
	f->serial_ns = best_serial / f->tsc_hz * TK_NSEC_PER_SEC_F;
	f->mlp_cycles = best_mlp < best_serial ? best_mlp : best_serial;
	if (best_mlp >= best_serial)
		f->mlp_chains = 1;
	free(order);
	up_mem_free(buf, f->bytes);
	return 0;
}
