// SPDX-License-Identifier: GPL-2.0-only
/*
 * quickack's route parser on arbitrary RTM_NEWROUTE payloads. Beyond not
 * crashing: a route it accepts must give a request it accepts again, that
 * request must describe the same state (qa_route_same), and each change
 * must be reflected in the request.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "quickack/route.h"

static void nh_cb(uint32_t ifindex, int gwf, const uint8_t *gw, void *arg)
{
	(void)ifindex;
	(void)gw;
	*(int *)arg += gwf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t req[QA_MSG_MAX + 4096];
	const struct qa_change changes[] = {
		{ .op = QA_OP_QUICKACK, .value = 1 },
		{ .op = QA_OP_QUICKACK, .value = 0 },
		{ .op = QA_OP_RTO_MIN, .value = 5 },
		{ .op = QA_OP_RTO_MIN, .value = 0 },
		{ .op = QA_OP_CONGCTL, .cc = "bbr_traced", .lock = true },
		{ .op = QA_OP_CONGCTL, .cc = "" },
	};
	struct qa_route r, q;
	struct qa_filter f = { .has_prefix = true };
	char err[256], buf[512];
	size_t near[3];
	int n, sink = 0;

	if (qa_route_parse(data, size, &r, err, sizeof(err)))
		return 0;
	qa_route_name(&r, buf, sizeof(buf));
	qa_route_changeable(&r, buf, sizeof(buf));
	qa_route_nexthops(&r, nh_cb, &sink);
	if (!qa_route_same(&r, NULL, &r, NULL))
		abort();
	for (size_t i = 0; i < sizeof(changes) / sizeof(changes[0]); i++) {
		uint32_t m[QA_RTAX_N];
		char cc[QA_CC_NAME_MAX];

		qa_change_describe(&r, &changes[i], buf, sizeof(buf));
		n = qa_route_request(&r, &changes[i], req, sizeof(req));
		if (n < 0) {
			/* only a metrics attribute already near 64 KiB can outgrow its length field */
			if (size < QA_MSG_MAX - 64)
				abort();
			continue;
		}
		if (qa_route_parse(req, (size_t)n, &q, err, sizeof(err)))
			abort();
		qa_change_apply(&r, &changes[i], m, cc);
		if (memcmp(q.metric, m, sizeof(m)) || strcmp(q.cc, cc))
			abort();
		/* a request is its own fixed point */
		if (!qa_route_same(&q, NULL, &r, &changes[i]))
			abort();
		qa_route_free(&q);
	}
	f.prefix.addr.family = r.family;
	memcpy(f.prefix.addr.bytes, r.dst, 16);
	f.prefix.len = r.rtm.rtm_dst_len;
	if (!qa_filter_match(&f, &r) || qa_closest(&f, &r, 1, near, 3) != 1)
		abort();
	qa_route_free(&r);
	return 0;
}
