/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The magic numbers that open a packet capture file, and the test for them:
 * pcap (microsecond or nanosecond timestamps) and pcapng (its Section Header
 * Block). A writer stores the pcap magic in its own byte order, so it reads
 * as the value or as its byte swap; the pcapng block type reads the same
 * both ways.
 */
#ifndef TK_CAPMAGIC_H
#define TK_CAPMAGIC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define CAP_MAGIC_PCAP_US 0xa1b2c3d4u
#define CAP_MAGIC_PCAP_NS 0xa1b23c4du
#define CAP_MAGIC_PCAPNG 0x0a0d0d0au

/* the bytes a capture file starts with that say which it is */
#define CAP_MAGIC_LEN 4

/* "pcap" or "pcapng" when the len bytes at head open a capture, else NULL */
static inline const char *cap_magic_kind(const void *head, size_t len)
{
	uint32_t m;

	if (len < CAP_MAGIC_LEN)
		return NULL;
	memcpy(&m, head, sizeof(m));
	if (m == CAP_MAGIC_PCAPNG)
		return "pcapng";
	if (m == CAP_MAGIC_PCAP_US || m == CAP_MAGIC_PCAP_NS || m == __builtin_bswap32(CAP_MAGIC_PCAP_US) ||
	    m == __builtin_bswap32(CAP_MAGIC_PCAP_NS))
		return "pcap";
	return NULL;
}

#endif
