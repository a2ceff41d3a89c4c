/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the journal's writer (journal_format.c) and reader
 * (journal_parse.c) share about a line: the " crc=" field that ends it,
 * and the bytes a name keeps as they are (the others are written %XX).
 * Private to the journal_*.c files.
 */
#ifndef QA_JOURNAL_LINE_H
#define QA_JOURNAL_LINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#define CRC_FIELD_LEN 13 /* " crc=" + 8 hex digits */

static inline uint32_t line_crc(const char *p, size_t n)
{
	return (uint32_t)crc32(crc32(0L, Z_NULL, 0), (const Bytef *)p, (uInt)n);
}

static inline bool netns_plain(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
	       c == '_' || c == '+' || c == '-';
}

#endif
