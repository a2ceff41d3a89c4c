// SPDX-License-Identifier: GPL-2.0-only
/*
 * rte_hash as a session table: the EAL started once, with a private runtime
 * directory removed after and our CPU affinity put back; without DPDK at
 * build time, the same functions failing with -ENOTSUP.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "table_rte.h"

#ifdef UP_HAVE_DPDK

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>
#include <rte_memory.h>
#include <rte_version.h>

#include "hw.h"

struct upt_rte {
	struct rte_hash *h;
};

static int eal_state; /* 0 not started, 1 running, -errno failed */
static void *eal_va;

const char *upt_rte_missing(void) { return NULL; }
const char *upt_rte_version(void) { return rte_version(); }

size_t upt_rte_mem_mb(uint32_t max_keys)
{
	/* buckets + extendable buckets + key store + two free-slot rings, all power-of-two sized */
	uint64_t slots = 8;

	while (slots < (uint64_t)max_keys + max_keys / 4)
		slots <<= 1;
	return (size_t)(64 + (slots * 64 + (1u << 20) - 1) / (1u << 20));
}

static int madvise_msl(const struct rte_memseg_list *msl, void *arg)
{
	bool huge = *(bool *)arg;

	if (msl->len) {
		madvise(msl->base_va, msl->len, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
		if (!eal_va)
			eal_va = msl->base_va;
	}
	return 0;
}

int upt_rte_eal_init(size_t mem_mb, bool huge, char *err, size_t errlen)
{
	char mem[32], prefix[64];
	char *argv[] = { "upfbench", "--no-huge", "--no-pci", "--no-shconf", "--no-telemetry",
			 "--log-level=lib.eal:error", "-l", "0", "-m", mem, "--file-prefix", prefix,
			 NULL };
	char rundir[] = "/tmp/up-dpdk.XXXXXX", path[128];
	const char *old_rd;
	cpu_set_t saved;
	int rc;

	if (eal_state == 1)
		return 0;
	if (eal_state < 0) {
		snprintf(err, errlen, "DPDK EAL failed to start earlier: %s", strerror(-eal_state));
		return eal_state;
	}
	snprintf(mem, sizeof(mem), "%zu", mem_mb);
	snprintf(prefix, sizeof(prefix), "up-%d", (int)getpid());
	/*
	 * The EAL makes $RUNTIME_DIRECTORY/dpdk/<prefix> even with --no-shconf,
	 * and leaves it behind: give it a private directory and remove that.
	 */
	if (!mkdtemp(rundir)) {
		snprintf(err, errlen, "DPDK EAL: cannot make a runtime directory in /tmp: %s",
			 strerror(errno));
		return -errno;
	}
	old_rd = getenv("RUNTIME_DIRECTORY");
	setenv("RUNTIME_DIRECTORY", rundir, 1);
	/* the EAL pins its main thread to lcore 0; put our affinity back afterwards */
	pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved);
	rc = rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv);
	pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved);
	if (old_rd)
		setenv("RUNTIME_DIRECTORY", old_rd, 1);
	else
		unsetenv("RUNTIME_DIRECTORY");
	snprintf(path, sizeof(path), "%s/dpdk/%s", rundir, prefix);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/dpdk", rundir);
	rmdir(path);
	rmdir(rundir);
	if (rc < 0) {
		eal_state = -(rte_errno ? rte_errno : EINVAL);
		snprintf(err, errlen, "DPDK EAL (--no-huge --no-pci) failed to start: %s",
			 rte_strerror(rte_errno));
		return eal_state;
	}
	rte_memseg_list_walk(madvise_msl, &huge);
	eal_state = 1;
	return 0;
}

struct upt_rte *upt_rte_create(const char *name, uint32_t max_keys)
{
	struct rte_hash_parameters p = {
		.name = name,
		.entries = max_keys + max_keys / 4 > 8 ? max_keys + max_keys / 4 : 8,
		.key_len = sizeof(uint32_t),
		.hash_func = rte_hash_crc,
		.hash_func_init_val = 0,
		.socket_id = SOCKET_ID_ANY,
		/* extendable buckets: an insert never fails below `entries` */
		.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE,
	};
	struct upt_rte *t;

	if (eal_state != 1)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->h = rte_hash_create(&p);
	if (!t->h) {
		free(t);
		return NULL;
	}
	return t;
}

void upt_rte_free(struct upt_rte *t)
{
	if (!t)
		return;
	rte_hash_free(t->h);
	free(t);
}

int upt_rte_insert(struct upt_rte *t, uint32_t teid, uint32_t val)
{
	int rc = rte_hash_add_key_data(t->h, &teid, (void *)(uintptr_t)val);

	return rc < 0 ? rc : 0;
}

uint32_t upt_rte_lookup(const struct upt_rte *t, uint32_t teid)
{
	void *data;

	if (rte_hash_lookup_data(t->h, &teid, &data) < 0)
		return UINT32_MAX;
	return (uint32_t)(uintptr_t)data;
}

void upt_rte_lookup_bulk(const struct upt_rte *t, const uint32_t *teids, unsigned int n,
			 uint32_t *vals)
{
	const void *keys[RTE_HASH_LOOKUP_BULK_MAX];
	void *data[RTE_HASH_LOOKUP_BULK_MAX];

	while (n) {
		unsigned int k = n < RTE_HASH_LOOKUP_BULK_MAX ? n : RTE_HASH_LOOKUP_BULK_MAX;
		uint64_t hits = 0;

		for (unsigned int i = 0; i < k; i++)
			keys[i] = &teids[i];
		rte_hash_lookup_bulk_data(t->h, keys, k, &hits, data);
		for (unsigned int i = 0; i < k; i++)
			vals[i] = (hits >> i) & 1 ? (uint32_t)(uintptr_t)data[i] : UINT32_MAX;
		teids += k;
		vals += k;
		n -= k;
	}
}

size_t upt_rte_heap_bytes(void)
{
	struct rte_malloc_socket_stats st;
	size_t used = 0;

	for (int s = 0; s < RTE_MAX_NUMA_NODES; s++)
		if (!rte_malloc_get_socket_stats(s, &st))
			used += st.heap_allocsz_bytes;
	return used;
}

uint64_t upt_rte_huge_kib(void)
{
	return eal_va ? up_mem_huge_kib(eal_va) : 0;
}

#else /* no DPDK at build time */

#include <stdlib.h>

const char *upt_rte_missing(void)
{
	return "this upfbench was built without DPDK (pkg-config found no libdpdk; install libdpdk-dev and rebuild)";
}
const char *upt_rte_version(void) { return ""; }
size_t upt_rte_mem_mb(uint32_t max_keys) { (void)max_keys; return 0; }

int upt_rte_eal_init(size_t mem_mb, bool huge, char *err, size_t errlen)
{
	(void)mem_mb;
	(void)huge;
	snprintf(err, errlen, "%s", upt_rte_missing());
	return -ENOTSUP;
}

struct upt_rte *upt_rte_create(const char *name, uint32_t max_keys)
{
	(void)name;
	(void)max_keys;
	errno = ENOTSUP;
	return NULL;
}

void upt_rte_free(struct upt_rte *t) { (void)t; }
int upt_rte_insert(struct upt_rte *t, uint32_t teid, uint32_t val)
{
	(void)t;
	(void)teid;
	(void)val;
	return -ENOTSUP;
}
uint32_t upt_rte_lookup(const struct upt_rte *t, uint32_t teid)
{
	(void)t;
	(void)teid;
	return UINT32_MAX;
}
void upt_rte_lookup_bulk(const struct upt_rte *t, const uint32_t *teids, unsigned int n,
			 uint32_t *vals)
{
	(void)t;
	(void)teids;
	for (unsigned int i = 0; i < n; i++)
		vals[i] = UINT32_MAX;
}
size_t upt_rte_heap_bytes(void) { return 0; }
uint64_t upt_rte_huge_kib(void) { return 0; }

#endif
