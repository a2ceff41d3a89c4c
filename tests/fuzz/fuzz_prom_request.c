// SPDX-License-Identifier: GPL-2.0-only
/*
 * The Prometheus endpoint's input parsers, which see bytes from the network
 * (lib/prom's HTTP request head) and from the command line (--prometheus
 * ADDR:PORT, lib/cli's endpoint parser): any input must classify or fail
 * cleanly, never read out of bounds.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "log.h"
#include "prom.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_storage ss;
	socklen_t len;
	bool head;
	char *s;

	(void)prom_parse_request((const char *)data, size, &head);
	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	log_set_level(LOG_QUIET - 1);
	(void)cli_parse_endpoint("--prometheus", s, &ss, &len);
	free(s);
	return 0;
}
