// SPDX-License-Identifier: GPL-2.0-only
/*
 * Naming flows: the --flow selector parsed from its text and matched
 * against a flow, and endpoints formatted for output.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcap/analysis.h"

static bool ep_match(const struct an_endpoint *e, uint8_t fam, const uint8_t *addr, uint16_t port)
{
	if (!e->any_port && e->port != port)
		return false;
	if (e->any_addr)
		return true;
	return e->family == fam && !memcmp(e->addr, addr, fam == 4 ? 4 : 16);
}

bool an_flow_selected(const struct an_sel *sel, unsigned int nsel, const struct an_flow *f)
{
	if (!nsel)
		return true;
	for (unsigned int i = 0; i < nsel; i++) {
		const struct an_sel *s = &sel[i];

		if (s->id) {
			if (s->id == f->id)
				return true;
			continue;
		}
		if (s->nend == 1) {
			if (ep_match(&s->end[0], f->family, f->addr[0], f->port[0]) ||
			    ep_match(&s->end[0], f->family, f->addr[1], f->port[1]))
				return true;
		} else if ((ep_match(&s->end[0], f->family, f->addr[0], f->port[0]) &&
			    ep_match(&s->end[1], f->family, f->addr[1], f->port[1])) ||
			   (ep_match(&s->end[0], f->family, f->addr[1], f->port[1]) &&
			    ep_match(&s->end[1], f->family, f->addr[0], f->port[0]))) {
			return true;
		}
	}
	return false;
}

const char *an_fmt_addr(uint8_t family, const uint8_t *addr, char *buf, size_t len)
{
	if (!inet_ntop(family == 6 ? AF_INET6 : AF_INET, addr, buf, (socklen_t)len))
		snprintf(buf, len, "?");
	return buf;
}

const char *an_fmt_endpoint(uint8_t family, const uint8_t *addr, uint16_t port, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	an_fmt_addr(family, addr, a, sizeof(a));
	snprintf(buf, len, family == 6 ? "[%s]:%u" : "%s:%u", a, port);
	return buf;
}

static int parse_endpoint(const char *s, size_t n, struct an_endpoint *e, char *err, size_t errlen)
{
	char buf[80], *colon, *addr;
	char *end;
	unsigned long port;

	memset(e, 0, sizeof(*e));
	if (n == 0 || n >= sizeof(buf)) {
		snprintf(err, errlen, "'%.*s' is not an endpoint ([ADDR]:PORT)", (int)(n < 60 ? n : 60), s);
		return -1;
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
	colon = strrchr(buf, ':');
	if (!colon || (buf[0] == '[' && (colon == buf || colon[-1] != ']'))) {
		snprintf(err, errlen, "'%s' is not an endpoint (ADDR:PORT, [ADDR6]:PORT, :PORT or ADDR:*)", buf);
		return -1;
	}
	*colon = '\0';
	if (!strcmp(colon + 1, "*")) {
		e->any_port = true;
	} else {
		if (!colon[1] || colon[1] == '-' || colon[1] == '+') {
			snprintf(err, errlen, "'%s' is not a port", colon + 1);
			return -1;
		}
		port = strtoul(colon + 1, &end, 10);
		if (*end || port > 65535) {
			snprintf(err, errlen, "'%s' is not a port (0..65535)", colon + 1);
			return -1;
		}
		e->port = (uint16_t)port;
	}
	addr = buf;
	if (addr[0] == '[') {
		addr++;
		addr[strlen(addr) - 1] = '\0';
		if (inet_pton(AF_INET6, addr, e->addr) != 1) {
			snprintf(err, errlen, "'%s' is not an IPv6 address", addr);
			return -1;
		}
		e->family = 6;
	} else if (!*addr) {
		e->any_addr = true;
	} else if (inet_pton(AF_INET, addr, e->addr) == 1) {
		e->family = 4;
	} else {
		snprintf(err, errlen, "'%s' is not an IPv4 address (IPv6 goes in brackets)", addr);
		return -1;
	}
	if (e->any_addr && e->any_port) {
		snprintf(err, errlen, "':*' matches everything; name an address or a port");
		return -1;
	}
	return 0;
}

int an_sel_parse(const char *s, struct an_sel *out, char *err, size_t errlen)
{
	const char *sep;
	char *end;

	memset(out, 0, sizeof(*out));
	if (s[0] >= '0' && s[0] <= '9' && !strpbrk(s, ":.")) {
		unsigned long id = strtoul(s, &end, 10);

		if (*end || id == 0 || id > UINT32_MAX) {
			snprintf(err, errlen, "'%s' is not a flow number (1.. as `bbrpcap flows` lists them)", s);
			return -1;
		}
		out->id = (uint32_t)id;
		return 0;
	}
	sep = strchr(s, ',');
	if (!sep)
		sep = strchr(s, '-');
	if (!sep) {
		out->nend = 1;
		return parse_endpoint(s, strlen(s), &out->end[0], err, errlen);
	}
	out->nend = 2;
	if (parse_endpoint(s, (size_t)(sep - s), &out->end[0], err, errlen))
		return -1;
	return parse_endpoint(sep + 1, strlen(sep + 1), &out->end[1], err, errlen);
}
