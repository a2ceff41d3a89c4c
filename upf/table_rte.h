/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * DPDK's rte_hash as an optional session table back end, so that the
 * project's table and rte_hash can be compared in one run. DPDK's EAL runs
 * with --no-huge --no-pci --no-shconf: no devices, no hugetlbfs, no shared files.
 *
 * Without DPDK at build time (pkg-config finds no libdpdk) every function
 * here fails with -ENOTSUP and upt_rte_missing() says why.
 */
#ifndef UP_TABLE_RTE_H
#define UP_TABLE_RTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct upt_rte;

/* NULL when rte_hash is built in, else a sentence why not */
const char *upt_rte_missing(void);
/* "DPDK 22.11.11", or "" */
const char *upt_rte_version(void);

/*
 * Start the EAL once per process with mem_mb of memory; huge: madvise that
 * memory for transparent huge pages. The calling thread's CPU affinity is
 * kept. 0, or a negative errno with a sentence in err.
 */
int upt_rte_eal_init(size_t mem_mb, bool huge, char *err, size_t errlen);
/* EAL memory (MiB) that a table of this many keys needs */
size_t upt_rte_mem_mb(uint32_t max_keys);

struct upt_rte *upt_rte_create(const char *name, uint32_t max_keys);
void upt_rte_free(struct upt_rte *t);
int upt_rte_insert(struct upt_rte *t, uint32_t teid, uint32_t val);
/* single lookup: rte_hash_lookup_data(); UINT32_MAX when absent */
uint32_t upt_rte_lookup(const struct upt_rte *t, uint32_t teid);
/* rte_hash_lookup_bulk_data() in chunks of 64; UINT32_MAX when absent */
void upt_rte_lookup_bulk(const struct upt_rte *t, const uint32_t *teids, unsigned int n,
			 uint32_t *vals);
/* bytes of EAL heap in use (the table's footprint is the difference) */
size_t upt_rte_heap_bytes(void);
/* AnonHugePages (KiB) of the EAL memory */
uint64_t upt_rte_huge_kib(void);

#endif
