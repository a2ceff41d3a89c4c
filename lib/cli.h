/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Strict argument parsing shared by every tool. Each parser rejects trailing
 * garbage ("5x"), empty strings, out-of-range values and malformed addresses
 * (inet_pton() returning 0 is an error too). On failure it prints one line
 * naming the option and the reason, and returns -1; the caller exits with
 * TK_EXIT_USAGE.
 */
#ifndef TK_CLI_H
#define TK_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "common.h"

struct cli_addr {
	int family;           /* AF_INET or AF_INET6 */
	uint8_t bytes[16];    /* IPv4 in the first 4 bytes */
};

struct cli_prefix {
	struct cli_addr addr;
	unsigned int len;     /* prefix length; 32/128 when no "/len" was given */
};

int cli_parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out);
int cli_parse_u32(const char *opt, const char *s, uint32_t min, uint32_t max, uint32_t *out);
int cli_parse_int(const char *opt, const char *s, int min, int max, int *out);
int cli_parse_port(const char *opt, const char *s, uint16_t *out);
int cli_parse_double(const char *opt, const char *s, double min, double max, double *out);
int cli_parse_bool(const char *opt, const char *s, bool *out); /* on/off, 1/0, yes/no, true/false */
int cli_parse_addr(const char *opt, const char *s, struct cli_addr *out);
/* the same without a message: for data, not options */
int cli_scan_addr(const char *s, struct cli_addr *out);
/* "10.0.0.0/24", "fd00::/64", "10.0.0.1" (host); host bits beyond len must be zero */
int cli_parse_prefix(const char *opt, const char *s, struct cli_prefix *out);
/* a socket address, "ADDR:PORT" (IPv4) or "[V6ADDR]:PORT", the port 0..65535 */
int cli_parse_endpoint(const char *opt, const char *s, struct sockaddr_storage *ss, socklen_t *sslen);
/* the same without a message: the reason goes into why (whylen bytes) */
int cli_scan_endpoint(const char *s, struct sockaddr_storage *ss, socklen_t *sslen, char *why, size_t whylen);
/* one of the NULL-terminated choices; returns its index */
int cli_parse_choice(const char *opt, const char *s, const char *const *choices, int *out);

/* the address as v4-mapped IPv6 (::ffff:a.b.c.d for IPv4) */
void cli_addr_to_v6mapped(const struct cli_addr *a, uint8_t out[16]);
/* format 16 bytes that may be v4-mapped: prints dotted IPv4 for mapped ones */
const char *cli_fmt_v6mapped(const uint8_t a[16], char *buf, size_t len);

/* one line "prog: msg", then exit(TK_EXIT_USAGE) */
void cli_usage_die(const char *fmt, ...) TK_PRINTF(1, 2) __attribute__((noreturn));
void cli_print_version(void);
#endif
