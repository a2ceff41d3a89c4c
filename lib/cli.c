// SPDX-License-Identifier: GPL-2.0-only
/*
 * The strict parsers of argument values (integers, numbers, booleans,
 * choices, addresses, prefixes, endpoints), each failure one line naming the
 * option; and the v4-mapped address form, the usage exit and --version's line.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h> /* optind, optopt */

#include "cli.h"
#include "log.h"

int cli_parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ') {
		elog("%s: '%s' is not a non-negative integer", opt, s ? s : "");
		return -1;
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end) {
		elog("%s: '%s' is not an integer", opt, s);
		return -1;
	}
	if (errno == ERANGE || v < min || v > max) {
		elog("%s: %s is out of range %llu..%llu", opt, s, (unsigned long long)min,
		     (unsigned long long)max);
		return -1;
	}
	*out = v;
	return 0;
}

int cli_parse_u32(const char *opt, const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	uint64_t v;

	if (cli_parse_u64(opt, s, min, max, &v))
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int cli_parse_int(const char *opt, const char *s, int min, int max, int *out)
{
	char *end;
	long v;

	if (!s || !*s || *s == ' ') {
		elog("%s: '%s' is not an integer", opt, s ? s : "");
		return -1;
	}
	errno = 0;
	v = strtol(s, &end, 10);
	if (*end) {
		elog("%s: '%s' is not an integer", opt, s);
		return -1;
	}
	if (errno == ERANGE || v < min || v > max) {
		elog("%s: %s is out of range %d..%d", opt, s, min, max);
		return -1;
	}
	*out = (int)v;
	return 0;
}

int cli_parse_port(const char *opt, const char *s, uint16_t *out)
{
	uint64_t v;

	if (cli_parse_u64(opt, s, 0, 65535, &v))
		return -1;
	*out = (uint16_t)v;
	return 0;
}

/* a bound as people write it: 31536000, not 3.1536e+07; 0.001, not 1e-03 */
static void fmt_bound(char *buf, size_t len, double v)
{
	char *p;

	snprintf(buf, len, "%.6f", v);
	p = buf + strlen(buf) - 1;
	while (p > buf && *p == '0')
		*p-- = '\0';
	if (*p == '.')
		*p = '\0';
}

int cli_parse_double(const char *opt, const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	if (!s || !*s || *s == ' ') {
		elog("%s: '%s' is not a number", opt, s ? s : "");
		return -1;
	}
	errno = 0;
	v = strtod(s, &end);
	if (*end || !isfinite(v)) {
		elog("%s: '%s' is not a number", opt, s);
		return -1;
	}
	if (errno == ERANGE || v < min || v > max) {
		char lo[48], hi[48];

		fmt_bound(lo, sizeof(lo), min);
		fmt_bound(hi, sizeof(hi), max);
		elog("%s: %s is out of range %s..%s", opt, s, lo, hi);
		return -1;
	}
	*out = v;
	return 0;
}

int cli_parse_bool(const char *opt, const char *s, bool *out)
{
	static const char *const yes[] = { "on", "1", "yes", "true" };
	static const char *const no[] = { "off", "0", "no", "false" };

	for (size_t i = 0; s && i < ARRAY_SIZE(yes); i++) {
		if (!strcasecmp(s, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*out = false;
			return 0;
		}
	}
	elog("%s: '%s' is not on/off", opt, s ? s : "");
	return -1;
}

int cli_scan_addr(const char *s, struct cli_addr *out)
{
	memset(out, 0, sizeof(*out));
	if (s && strchr(s, ':')) {
		if (inet_pton(AF_INET6, s, out->bytes) == 1) {
			out->family = AF_INET6;
			return 0;
		}
	} else if (s && inet_pton(AF_INET, s, out->bytes) == 1) {
		out->family = AF_INET;
		return 0;
	}
	return -1;
}

int cli_parse_addr(const char *opt, const char *s, struct cli_addr *out)
{
	if (cli_scan_addr(s, out) == 0)
		return 0;
	elog("%s: '%s' is not an IPv4 or IPv6 address", opt, s ? s : "");
	return -1;
}

int cli_parse_prefix(const char *opt, const char *s, struct cli_prefix *out)
{
	char buf[INET6_ADDRSTRLEN + 8];
	const char *slash;
	unsigned int max;

	if (!s || strlen(s) >= sizeof(buf)) {
		elog("%s: '%s' is not a prefix (ADDRESS[/LEN])", opt, s ? s : "");
		return -1;
	}
	strcpy(buf, s);
	slash = strchr(s, '/');
	if (slash)
		buf[slash - s] = '\0';
	if (cli_parse_addr(opt, buf, &out->addr))
		return -1;
	max = out->addr.family == AF_INET ? 32 : 128;
	out->len = max;
	if (slash) {
		uint32_t len;

		if (cli_parse_u32(opt, slash + 1, 0, max, &len))
			return -1;
		out->len = len;
	}
	for (unsigned int bit = out->len; bit < max; bit++) {
		if (out->addr.bytes[bit / 8] & (0x80 >> (bit % 8))) {
			elog("%s: '%s' has host bits set beyond /%u", opt, s, out->len);
			return -1;
		}
	}
	return 0;
}

int cli_scan_endpoint(const char *s, struct sockaddr_storage *ss, socklen_t *sslen, char *why, size_t whylen)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon, *h = s, *p;
	unsigned long port = 0;
	bool v6 = false;
	size_t hlen;

	if (*s == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':') {
			snprintf(why, whylen, "'%s' is not [IPV6]:PORT", s);
			return -1;
		}
		h = s + 1;
		hlen = (size_t)(close - h);
		colon = close + 1;
		v6 = true;
	} else {
		colon = strrchr(s, ':');
		if (!colon || strchr(s, ':') != colon) {
			snprintf(why, whylen, "'%s' is not ADDR:PORT (write IPv6 as [ADDR]:PORT)", s);
			return -1;
		}
		hlen = (size_t)(colon - s);
	}
	if (hlen == 0 || hlen >= sizeof(host)) {
		snprintf(why, whylen, "'%s' has no address before the port", s);
		return -1;
	}
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	for (p = colon + 1; *p; p++) {
		if (*p < '0' || *p > '9' || port > 65535)
			break;
		port = port * 10 + (unsigned long)(*p - '0');
	}
	if (p == colon + 1 || *p || port > 65535) {
		snprintf(why, whylen, "'%s' does not end in a port 0..65535", s);
		return -1;
	}
	memset(ss, 0, sizeof(*ss));
	if (!v6) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		if (inet_pton(AF_INET, host, &in->sin_addr) != 1) {
			snprintf(why, whylen, "'%s' is not an IPv4 address", host);
			return -1;
		}
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		*sslen = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		if (inet_pton(AF_INET6, host, &in6->sin6_addr) != 1) {
			snprintf(why, whylen, "'%s' is not an IPv6 address", host);
			return -1;
		}
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*sslen = sizeof(*in6);
	}
	return 0;
}

int cli_parse_endpoint(const char *opt, const char *s, struct sockaddr_storage *ss, socklen_t *sslen)
{
	char why[160];

	if (cli_scan_endpoint(s ? s : "", ss, sslen, why, sizeof(why))) {
		elog("%s: %s", opt, why);
		return -1;
	}
	return 0;
}

int cli_parse_choice(const char *opt, const char *s, const char *const *choices, int *out)
{
	char list[256] = "";

	for (int i = 0; choices[i]; i++) {
		if (s && !strcmp(s, choices[i])) {
			*out = i;
			return 0;
		}
		if (i)
			strncat(list, "|", sizeof(list) - strlen(list) - 1);
		strncat(list, choices[i], sizeof(list) - strlen(list) - 1);
	}
	elog("%s: '%s' is not one of %s", opt, s ? s : "", list);
	return -1;
}

void cli_addr_to_v6mapped(const struct cli_addr *a, uint8_t out[16])
{
	if (a->family == AF_INET6) {
		memcpy(out, a->bytes, 16);
		return;
	}
	memset(out, 0, 10);
	out[10] = out[11] = 0xff;
	memcpy(out + 12, a->bytes, 4);
}

const char *cli_fmt_v6mapped(const uint8_t a[16], char *buf, size_t len)
{
	static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (!memcmp(a, prefix, sizeof(prefix)) && len >= INET_ADDRSTRLEN) {
		/* dotted quad by hand: inet_ntop() goes through sprintf */
		char *p = buf;

		for (int i = 12; i < 16; i++) {
			unsigned int o = a[i];

			if (o >= 100)
				*p++ = (char)('0' + o / 100);
			if (o >= 10)
				*p++ = (char)('0' + o / 10 % 10);
			*p++ = (char)('0' + o % 10);
			*p++ = i < 15 ? '.' : '\0';
		}
		return buf;
	}
	if (!memcmp(a, prefix, sizeof(prefix)))
		inet_ntop(AF_INET, a + 12, buf, len);
	else
		inet_ntop(AF_INET6, a, buf, len);
	return buf;
}

void cli_usage_die(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	elog("%s", msg);
	exit(TK_EXIT_USAGE);
}

/* the Makefile's: the number in VERSION, and the commit when built from git */
#ifndef TOOLKIT_VERSION
#error "TOOLKIT_VERSION comes from the Makefile (-DTOOLKIT_VERSION)"
#endif

void cli_print_version(void)
{
	printf("%s %s\n", log_prog(), TOOLKIT_VERSION);
}

