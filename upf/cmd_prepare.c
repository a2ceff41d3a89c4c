// SPDX-License-Identifier: GPL-2.0-only
/*
 * What upfbench's commands prepare before they measure: the memory floor,
 * the traffic (generated, or a capture's), and DPDK's EAL for rte_hash.
 */
#include <errno.h>
#include <stdint.h>

#include "common.h"
#include "log.h"

#include "floor.h"
#include "table_rte.h"
#include "traffic.h"
#include "cmd.h"

int up_measure_floor(const struct up_args *a, struct up_floor *f)
{
	char err[256];
	size_t bytes = a->floor_mib == UP_FLOOR_DEFAULT ? up_floor_default_bytes()
							: (size_t)a->floor_mib << 20;

	vlog("measuring the memory floor over %zu MiB", bytes >> 20);
	if (up_floor_measure(bytes, f, err, sizeof(err))) {
		elog("%s", err);
		return -1;
	}
	return 0;
}

/* the capture (--pcap-in), or sessions and packets generated */
int up_load_traffic(const struct up_args *a, uint32_t sessions, uint64_t packets,
		    struct up_traffic *t)
{
	char err[256];
	struct up_gen_opts g = a->gen;

	if (a->pcap_in) {
		if (up_traffic_pcap(t, a->pcap_in, a->gen.mbr_bps, err, sizeof(err))) {
			elog("%s", err);
			return TK_EXIT_DATA;
		}
		if (t->truncated)
			wlog("--pcap-in: %u frames were cut short by the capture's snap length; they count as malformed",
			     t->truncated);
		return 0;
	}
	g.sessions = sessions;
	g.packets = packets;
	vlog("generating %u sessions and their packet stream", sessions);
	if (up_traffic_gen(t, &g, err, sizeof(err))) {
		elog("%s", err);
		return TK_EXIT_FAIL;
	}
	return 0;
}

/* DPDK's EAL, when a table of max_sessions keys will be an rte_hash */
int up_check_rte(uint32_t max_sessions, bool needed, bool huge)
{
	char err[256];
	int rc;

	if (!needed)
		return 0;
	rc = up_rte_prepare(max_sessions, huge, err, sizeof(err));
	if (rc) {
		elog("%s", err);
		return rc == -ENOTSUP ? TK_EXIT_NOTSUP : TK_EXIT_FAIL;
	}
	return 0;
}
