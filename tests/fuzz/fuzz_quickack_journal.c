// SPDX-License-Identifier: GPL-2.0-only
/*
 * quickack's journal parser on arbitrary bytes. Beyond not crashing: every
 * journal it accepts must format back into a journal it accepts again, with
 * the same records, and every saved route must turn into a request.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "quickack/journal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qaj j, k;
	struct qaj_error e;
	char *out;
	size_t cap = 1024, len = 0;

	if (qaj_parse((const char *)data, size, &j, &e))
		return 0;
	for (size_t i = 0; i < j.n; i++)
		cap += qaj_route_line_max(&j.e[i].route) + 64;
	out = malloc(cap);
	if (!out)
		abort();
	if (j.has_header) {
		int n = qaj_format_header(out, cap, j.netns, j.created_s);

		if (n < 0)
			abort();
		len += (size_t)n;
	}
	for (size_t i = 0; i < j.n; i++) {
		uint8_t req[QA_MSG_MAX + 1024];
		int n = qaj_format_route(out + len, cap - len, j.e[i].seq, j.e[i].time_s, j.e[i].op, &j.e[i].route);

		if (n < 0)
			abort();
		len += (size_t)n;
		if (j.e[i].voided) {
			n = qaj_format_void(out + len, cap - len, j.e[i].seq);
			if (n < 0)
				abort();
			len += (size_t)n;
		}
		if (qa_route_request(&j.e[i].route, NULL, req, sizeof(req)) < 0 && j.e[i].route.len < QA_MSG_MAX - 64)
			abort();
	}
	if (j.has_header) {
		if (qaj_parse(out, len, &k, &e) || k.n != j.n)
			abort();
		for (size_t i = 0; i < j.n; i++)
			if (k.e[i].seq != j.e[i].seq || k.e[i].voided != j.e[i].voided ||
			    k.e[i].route.len != j.e[i].route.len ||
			    memcmp(k.e[i].route.msg, j.e[i].route.msg, j.e[i].route.len))
				abort();
		qaj_free(&k);
	}
	free(out);
	qaj_free(&j);
	return 0;
}
