// SPDX-License-Identifier: GPL-2.0-only
/*
 * Capture files read in place: pcap and pcapng frames pointed at in the
 * mapped file, libpcap's reader beside it for a cross-check, and several
 * files read as one, in the order of their first frame.
 */
#include <errno.h>
#include <fcntl.h>
#include <pcap/pcap.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capmagic.h"
#include "common.h"
#include "pcap/capfile.h"

/* pcapng's first block, the Section Header Block: its type is the file's magic */
#define NG_SHB CAP_MAGIC_PCAPNG
#define NG_IDB 0x00000001u
#define NG_PB 0x00000002u
#define NG_SPB 0x00000003u
#define NG_EPB 0x00000006u
#define NG_BOM 0x1a2b3c4du
#define NG_MAX_IFS 65536u

static void seterr(struct cap_file *c, const char *fmt, ...) TK_PRINTF(2, 3);
static void seterr(struct cap_file *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
}

static inline uint32_t rd32(const struct cap_file *c, const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return c->swap ? __builtin_bswap32(v) : v;
}

static inline uint16_t rd16(const struct cap_file *c, const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return c->swap ? __builtin_bswap16(v) : v;
}

static inline uint64_t rd64(const struct cap_file *c, const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return c->swap ? __builtin_bswap64(v) : v;
}

const char *cap_format_name(enum cap_format f)
{
	return f == CAP_PCAPNG ? "pcapng" : "pcap";
}

const char *cap_linktype_name(uint32_t lt, char *buf, size_t len)
{
	switch (lt) {
	case 0: return "NULL";
	case 1: return "EN10MB";
	case 101: return "RAW";
	case 108: return "LOOP";
	case 113: return "LINUX_SLL";
	case 228: return "IPV4";
	case 229: return "IPV6";
	case 276: return "LINUX_SLL2";
	}
	snprintf(buf, len, "LINKTYPE_%u", lt);
	return buf;
}

/* --- pcap ---------------------------------------------------------------------- */

static int pcap_header(struct cap_file *c)
{
	uint32_t magic;

	if (c->size < 24) {
		seterr(c, "byte offset %zu: file ends inside the 24-byte pcap header", c->size);
		return -1;
	}
	memcpy(&magic, c->base, 4);
	c->swap = magic == __builtin_bswap32(CAP_MAGIC_PCAP_US) || magic == __builtin_bswap32(CAP_MAGIC_PCAP_NS);
	magic = rd32(c, c->base);
	c->nsec = magic == CAP_MAGIC_PCAP_NS;
	c->snaplen = rd32(c, c->base + 16);
	/* the upper bits carry the FCS length (LT_FCS_DATALINK_EXT) */
	c->linktype = rd32(c, c->base + 20) & 0x03ffffffu;
	c->off = 24;
	return 0;
}

static int pcap_next_frame(struct cap_file *c, struct cap_frame *f)
{
	const uint8_t *p = c->base + c->off;
	size_t left = c->size - c->off;
	uint64_t no = c->frames + 1;
	uint32_t sec, frac, caplen, origlen, limit;

	if (left == 0)
		return 0;
	if (left < 16) {
		seterr(c, "frame %llu at byte offset %zu: truncated record header (%zu of 16 bytes)",
		       (unsigned long long)no, c->off, left);
		return -1;
	}
	sec = rd32(c, p);
	frac = rd32(c, p + 4);
	caplen = rd32(c, p + 8);
	origlen = rd32(c, p + 12);
	limit = c->snaplen > CAP_MAX_CAPLEN && c->snaplen <= CAP_MAX_BLOCK ? c->snaplen : CAP_MAX_CAPLEN;
	if (caplen > limit) {
		seterr(c, "frame %llu at byte offset %zu: captured length %u exceeds the maximum %u",
		       (unsigned long long)no, c->off, caplen, limit);
		return -1;
	}
	if (origlen < caplen) {
		seterr(c, "frame %llu at byte offset %zu: original length %u is less than captured length %u",
		       (unsigned long long)no, c->off, origlen, caplen);
		return -1;
	}
	if (left - 16 < caplen) {
		seterr(c, "frame %llu at byte offset %zu: truncated record (%u bytes announced, %zu in the file)",
		       (unsigned long long)no, c->off, caplen, left - 16);
		return -1;
	}
	f->no = no;
	f->ts_ns = (int64_t)sec * (int64_t)TK_NSEC_PER_SEC + (int64_t)frac * (c->nsec ? 1 : (int64_t)TK_NSEC_PER_USEC);
	f->caplen = caplen;
	f->origlen = origlen;
	f->linktype = c->linktype;
	f->offset = c->off;
	f->data = p + 16;
	c->off += 16 + (size_t)caplen;
	c->frames = no;
	return 1;
}

/* --- pcapng -------------------------------------------------------------------- */

/* walk a block's options; fn sees code, length and value */
static void ng_options(struct cap_file *c, const uint8_t *p, size_t len,
		       void (*fn)(struct cap_file *, uint16_t, uint16_t, const uint8_t *, void *), void *arg)
{
	while (len >= 4) {
		uint16_t code = rd16(c, p), olen = rd16(c, p + 2);
		size_t padded = ((size_t)olen + 3) & ~(size_t)3;

		if (code == 0 || padded > len - 4)
			return;
		fn(c, code, olen, p + 4, arg);
		p += 4 + padded;
		len -= 4 + padded;
	}
}

static void idb_option(struct cap_file *c, uint16_t code, uint16_t len, const uint8_t *v, void *arg)
{
	struct cap_if *ifc = arg;

	if (code == 9 && len == 1) { /* if_tsresol */
		uint8_t r = v[0];
		uint64_t den = 1;

		if (r & 0x80) { /* 2^-n s */
			unsigned int n = r & 0x7f;

			if (n > 40)
				return; /* finer than a picosecond: keep the default */
			ifc->tsres_num = TK_NSEC_PER_SEC;
			ifc->tsres_den = 1ull << n;
		} else {
			if (r > 18)
				return;
			for (unsigned int k = 0; k < r; k++)
				den *= 10;
			if (den <= TK_NSEC_PER_SEC) {
				ifc->tsres_num = TK_NSEC_PER_SEC / den;
				ifc->tsres_den = 1;
			} else {
				ifc->tsres_num = 1;
				ifc->tsres_den = den / TK_NSEC_PER_SEC;
			}
		}
	} else if (code == 14 && len == 8) { /* if_tsoffset, seconds */
		int64_t s = (int64_t)rd64(c, v);

		if (s > -9000000000ll && s < 9000000000ll)
			ifc->tsoffset_ns = s * (int64_t)TK_NSEC_PER_SEC;
	}
}

static int ng_shb(struct cap_file *c, size_t blen)
{
	const uint8_t *p = c->base + c->off;
	uint32_t bom;

	if (blen < 28) {
		seterr(c, "byte offset %zu: section header block of %zu bytes is too short", c->off, blen);
		return -1;
	}
	memcpy(&bom, p + 8, 4);
	if (bom == NG_BOM) {
		c->swap = false;
	} else if (bom == __builtin_bswap32(NG_BOM)) {
		c->swap = true;
	} else {
		seterr(c, "byte offset %zu: section header has byte-order magic 0x%08x, not 0x1a2b3c4d",
		       c->off + 8, bom);
		return -1;
	}
	if (rd16(c, p + 12) != 1) {
		seterr(c, "byte offset %zu: pcapng major version %u is not supported (only 1)", c->off + 12,
		       rd16(c, p + 12));
		return -1;
	}
	c->nifs = 0; /* interfaces are numbered per section */
	return 0;
}

static int ng_idb(struct cap_file *c, size_t blen)
{
	const uint8_t *p = c->base + c->off;
	struct cap_if *ifc;

	if (blen < 20) {
		seterr(c, "byte offset %zu: interface description block of %zu bytes is too short", c->off, blen);
		return -1;
	}
	if (c->nifs == c->cap_ifs) {
		unsigned int n = c->cap_ifs ? c->cap_ifs * 2 : 4;
		struct cap_if *ifs;

		if (n > NG_MAX_IFS) {
			seterr(c, "byte offset %zu: more than %u interfaces in one section", c->off, NG_MAX_IFS);
			return -1;
		}
		ifs = realloc(c->ifs, n * sizeof(*ifs));
		if (!ifs) {
			seterr(c, "byte offset %zu: out of memory", c->off);
			return -1;
		}
		c->ifs = ifs;
		c->cap_ifs = n;
	}
	ifc = &c->ifs[c->nifs++];
	ifc->linktype = rd16(c, p + 8);
	ifc->snaplen = rd32(c, p + 12);
	ifc->tsres_num = TK_NSEC_PER_USEC; /* default: microseconds */
	ifc->tsres_den = 1;
	ifc->tsoffset_ns = 0;
	ng_options(c, p + 16, blen - 20, idb_option, ifc);
	return 0;
}

/* ns since the epoch, kept within 0..2^62 so that differences never overflow */
static int64_t ng_ts(const struct cap_if *ifc, uint64_t units)
{
	__int128 ns = (__int128)((unsigned __int128)units * ifc->tsres_num / ifc->tsres_den) + ifc->tsoffset_ns;

	if (ns < 0)
		return 0;
	return ns > ((__int128)1 << 62) ? (int64_t)1 << 62 : (int64_t)ns;
}

/* the block at c->off: its type and length, checked against the file; -1 when damaged */
static int ng_block(struct cap_file *c, uint64_t no, uint32_t *type, size_t *blen)
{
	const uint8_t *p = c->base + c->off;
	size_t left = c->size - c->off;

	if (left < 12) {
		seterr(c, "frame %llu at byte offset %zu: truncated block header (%zu of 12 bytes)",
		       (unsigned long long)no, c->off, left);
		return -1;
	}
	memcpy(type, p, 4);
	if (*type == NG_SHB) {
		/* the byte order is the new section's: read it before the length */
		uint32_t bom;

		memcpy(&bom, p + 8, 4);
		if (bom == NG_BOM || bom == __builtin_bswap32(NG_BOM))
			c->swap = bom != NG_BOM;
	}
	*type = rd32(c, p);
	*blen = rd32(c, p + 4);
	if (*blen < 12 || (*blen & 3) || *blen > CAP_MAX_BLOCK) {
		seterr(c, "frame %llu at byte offset %zu: block length %zu is nonsense "
			  "(needs 12..%u and a multiple of 4)",
		       (unsigned long long)no, c->off + 4, *blen, CAP_MAX_BLOCK);
		return -1;
	}
	if (*blen > left) {
		seterr(c, "frame %llu at byte offset %zu: truncated block (%zu bytes announced, %zu in the file)",
		       (unsigned long long)no, c->off, *blen, left);
		return -1;
	}
	if (rd32(c, p + *blen - 4) != *blen) {
		seterr(c, "frame %llu at byte offset %zu: block's trailing length %u differs from its length %zu",
		       (unsigned long long)no, c->off + *blen - 4, rd32(c, p + *blen - 4), *blen);
		return -1;
	}
	return 0;
}

/* an EPB, SPB or PB at c->off into f; -1 when damaged */
static int ng_packet_block(struct cap_file *c, struct cap_frame *f, uint64_t no, uint32_t type, size_t blen)
{
	const uint8_t *p = c->base + c->off;
	uint32_t hdr = type == NG_SPB ? 12 : 28, ifid, caplen, origlen;
	const struct cap_if *ifc;

	if (blen < hdr + 4) {
		seterr(c, "frame %llu at byte offset %zu: packet block of %zu bytes is too short",
		       (unsigned long long)no, c->off, blen);
		return -1;
	}
	ifid = type == NG_EPB ? rd32(c, p + 8) : type == NG_PB ? rd16(c, p + 8) : 0;
	if (ifid >= c->nifs) {
		seterr(c, "frame %llu at byte offset %zu: interface %u was never described",
		       (unsigned long long)no, c->off, ifid);
		return -1;
	}
	ifc = &c->ifs[ifid];
	if (type == NG_SPB) {
		origlen = rd32(c, p + 8);
		caplen = origlen;
		if (ifc->snaplen && caplen > ifc->snaplen)
			caplen = ifc->snaplen;
		if (caplen > blen - 16)
			caplen = (uint32_t)(blen - 16);
		/* no timestamp in an SPB: keep the previous frame's */
		f->ts_ns = c->last_ts_ns;
	} else {
		caplen = rd32(c, p + 20);
		origlen = rd32(c, p + 24);
		if (caplen > blen - 32) {
			seterr(c, "frame %llu at byte offset %zu: captured length %u exceeds its block (%zu bytes)",
			       (unsigned long long)no, c->off, caplen, blen);
			return -1;
		}
		if (origlen < caplen) {
			seterr(c, "frame %llu at byte offset %zu: original length %u is less than captured length %u",
			       (unsigned long long)no, c->off, origlen, caplen);
			return -1;
		}
		f->ts_ns = ng_ts(ifc, ((uint64_t)rd32(c, p + 12) << 32) | rd32(c, p + 16));
	}
	f->no = no;
	c->last_ts_ns = f->ts_ns;
	f->caplen = caplen;
	f->origlen = origlen;
	f->linktype = ifc->linktype;
	f->offset = c->off;
	f->data = p + hdr;
	c->off += blen;
	c->frames = no;
	return 0;
}

static int ng_next_frame(struct cap_file *c, struct cap_frame *f)
{
	for (;;) {
		uint64_t no = c->frames + 1;
		uint32_t type;
		size_t blen;

		if (c->off == c->size)
			return 0;
		if (ng_block(c, no, &type, &blen))
			return -1;
		switch (type) {
		case NG_SHB:
			if (ng_shb(c, blen))
				return -1;
			break;
		case NG_IDB:
			if (ng_idb(c, blen))
				return -1;
			break;
		case NG_EPB:
		case NG_PB:
		case NG_SPB:
			return ng_packet_block(c, f, no, type, blen) ? -1 : 1;
		default:
			break; /* statistics, name resolution, custom blocks: not frames */
		}
		c->off += blen;
	}
}

/* --- opening ------------------------------------------------------------------- */

static int detect(struct cap_file *c)
{
	uint32_t magic;

	if (c->size < 4) {
		seterr(c, "byte offset 0: file of %zu bytes is too short for a pcap or pcapng header", c->size);
		return -1;
	}
	memcpy(&magic, c->base, 4);
	if (magic == NG_SHB) {
		c->format = CAP_PCAPNG;
		c->off = 0;
		if (c->size < 12) {
			seterr(c, "byte offset %zu: file ends inside the first pcapng block header", c->size);
			return -1;
		}
		return 0;
	}
	if (magic == CAP_MAGIC_PCAP_US || magic == CAP_MAGIC_PCAP_NS ||
	    magic == __builtin_bswap32(CAP_MAGIC_PCAP_US) || magic == __builtin_bswap32(CAP_MAGIC_PCAP_NS)) {
		c->format = CAP_PCAP;
		return pcap_header(c);
	}
	seterr(c, "byte offset 0: unknown magic number 0x%08x (neither pcap nor pcapng)", __builtin_bswap32(magic));
	return -1;
}

/* on failure nothing stays allocated; err and nomem stay set */
static int fail_open(struct cap_file *c)
{
	char err[sizeof(c->err)];
	bool nomem = c->nomem;

	memcpy(err, c->err, sizeof(err));
	cap_close(c);
	memcpy(c->err, err, sizeof(err));
	c->nomem = nomem;
	return -1;
}

static int detect_checked(struct cap_file *c)
{
	return detect(c) ? fail_open(c) : 0;
}

int cap_open_mem(struct cap_file *c, const void *buf, size_t len)
{
	memset(c, 0, sizeof(*c));
	c->base = buf;
	c->size = len;
	return detect_checked(c);
}

static int read_all(struct cap_file *c, int fd)
{
	size_t cap = 1 << 20, len = 0;
	uint8_t *buf = malloc(cap);

	if (!buf) {
		seterr(c, "out of memory");
		c->nomem = true;
		return -1;
	}
	for (;;) {
		ssize_t n;

		if (len == cap) {
			uint8_t *nb = realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				seterr(c, "out of memory after %zu bytes", len);
				c->nomem = true;
				return -1;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			seterr(c, "read failed after %zu bytes: %s", len, strerror(errno));
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	c->base = buf;
	c->size = len;
	c->owned = true;
	return 0;
}

static int open_libpcap(struct cap_file *c, const char *path)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, errbuf);

	if (!p) {
		seterr(c, "%s", errbuf);
		return -1;
	}
	c->pcap = p;
	/* a DLT is its LINKTYPE except for raw IP, whose DLT is 12 on Linux */
	c->linktype = pcap_datalink(p) == DLT_RAW ? 101 : (uint32_t)pcap_datalink(p);
	/* libpcap reports pcapng as version 1.0 and pcap as 2.4 */
	c->format = pcap_major_version(p) == 1 ? CAP_PCAPNG : CAP_PCAP;
	return 0;
}

/* populate: the whole file read in now (it is about to be read through);
 * else its pages come as they are touched (only its start is wanted) */
static int open_path(struct cap_file *c, const char *path, enum cap_reader reader, bool populate)
{
	struct stat st;
	int fd;

	memset(c, 0, sizeof(*c));
	c->reader = reader;
	if (reader == CAP_READER_LIBPCAP)
		return open_libpcap(c, path);
	fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : dup(0);
	if (fd < 0) {
		seterr(c, "cannot open: %s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | (populate ? MAP_POPULATE : 0), fd, 0);

		if (m == MAP_FAILED) {
			seterr(c, "cannot map: %s", strerror(errno));
			close(fd);
			return -1;
		}
		madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
		c->base = m;
		c->size = (size_t)st.st_size;
		c->mapped = true;
	} else if (read_all(c, fd)) {
		close(fd);
		return fail_open(c);
	}
	close(fd);
	return detect_checked(c);
}

int cap_open(struct cap_file *c, const char *path, enum cap_reader reader)
{
	return open_path(c, path, reader, true);
}

static int libpcap_next(struct cap_file *c, struct cap_frame *f)
{
	struct pcap_pkthdr *h;
	const u_char *data;
	int rc = pcap_next_ex(c->pcap, &h, &data);

	if (rc == 1) {
		f->no = ++c->frames;
		f->ts_ns = (int64_t)h->ts.tv_sec * (int64_t)TK_NSEC_PER_SEC + h->ts.tv_usec; /* nano precision */
		f->caplen = h->caplen;
		f->origlen = h->len;
		f->linktype = c->linktype;
		f->offset = 0;
		f->data = data;
		return 1;
	}
	if (rc == PCAP_ERROR_BREAK)
		return 0;
	seterr(c, "frame %llu: %s", (unsigned long long)c->frames + 1, pcap_geterr(c->pcap));
	return -1;
}

/* inlined in both readers' loops: one call per frame, not two */
static inline int next_frame(struct cap_file *c, struct cap_frame *f)
{
	if (c->reader == CAP_READER_LIBPCAP)
		return libpcap_next(c, f);
	return c->format == CAP_PCAPNG ? ng_next_frame(c, f) : pcap_next_frame(c, f);
}

int cap_next(struct cap_file *c, struct cap_frame *f)
{
	return next_frame(c, f);
}

void cap_close(struct cap_file *c)
{
	if (c->pcap)
		pcap_close(c->pcap);
	if (c->mapped)
		munmap((void *)c->base, c->size);
	else if (c->owned)
		free((void *)c->base);
	free(c->ifs);
	memset(c, 0, sizeof(*c));
}

/* --- a set of files, read as one --------------------------------------------------- */

static int set_fail(struct cap_set *s, const char *path, const char *err, bool nomem)
{
	s->err_path = path;
	snprintf(s->err, sizeof(s->err), "%s", err);
	s->nomem = nomem;
	return -1;
}

/* file i into s->c, from memory or from its path */
static int member_open(struct cap_set *s, unsigned int i, bool populate)
{
	const struct cap_member *m = &s->files[i];
	int rc = m->buf ? cap_open_mem(&s->c, m->buf, m->len) : open_path(&s->c, m->path, s->reader, populate);

	if (rc)
		return set_fail(s, m->path, s->c.err, s->c.nomem);
	s->cur = i;
	s->open = true;
	return 0;
}

static void member_close(struct cap_set *s)
{
	if (s->open)
		cap_close(&s->c);
	s->open = false;
}

/* file i's first frame (its place in time), then the file closed again */
static int peek_first(struct cap_set *s, unsigned int i)
{
	struct cap_member *m = &s->files[i];
	struct cap_frame f;
	int rc;

	if (member_open(s, i, false))
		return -1;
	rc = cap_next(&s->c, &f);
	if (rc < 0)
		set_fail(s, m->path, s->c.err, false);
	m->has_frames = rc == 1;
	m->first_ns = rc == 1 ? f.ts_ns : 0;
	member_close(s);
	return rc < 0 ? -1 : 0;
}

/* by the first frame's time, then by name; files without a frame first */
static int cmp_member(const void *x, const void *y)
{
	const struct cap_member *a = x, *b = y;

	if (a->has_frames != b->has_frames)
		return a->has_frames ? 1 : -1;
	if (a->has_frames && a->first_ns != b->first_ns)
		return a->first_ns < b->first_ns ? -1 : 1;
	return strcmp(a->path, b->path);
}

/* the files ordered (several) and the first one open; on failure nothing
 * stays allocated */
static int set_start(struct cap_set *s)
{
	s->last_file = -1;
	for (unsigned int i = 0; s->n > 1 && i < s->n; i++) {
		if (peek_first(s, i)) {
			free(s->files);
			s->files = NULL;
			return -1;
		}
	}
	qsort(s->files, s->n, sizeof(*s->files), cmp_member);
	if (member_open(s, 0, true)) {
		free(s->files);
		s->files = NULL;
		return -1;
	}
	return 0;
}

static int set_init(struct cap_set *s, unsigned int n, enum cap_reader reader)
{
	memset(s, 0, sizeof(*s));
	s->reader = reader;
	s->n = n;
	if (!n)
		return set_fail(s, "", "no capture file", false);
	s->files = calloc(n, sizeof(*s->files));
	if (!s->files)
		return set_fail(s, "", "out of memory", true);
	return 0;
}

int cap_set_open(struct cap_set *s, const char *const *paths, unsigned int n, enum cap_reader reader)
{
	if (set_init(s, n, reader))
		return -1;
	for (unsigned int i = 0; i < n; i++) {
		if (n > 1 && !strcmp(paths[i], "-")) {
			free(s->files);
			s->files = NULL;
			return set_fail(s, paths[i], "standard input can only be read alone, not as one of several files",
					false);
		}
		s->files[i].path = paths[i];
	}
	return set_start(s);
}

int cap_set_open_mem(struct cap_set *s, const struct cap_member *m, unsigned int n)
{
	if (set_init(s, n, CAP_READER_MMAP))
		return -1;
	for (unsigned int i = 0; i < n; i++) {
		s->files[i].path = m[i].path;
		s->files[i].buf = m[i].buf;
		s->files[i].len = m[i].len;
	}
	return set_start(s);
}

/* the current file is done: the next one opened (said when it overlaps the
 * last one that held frames), or none left */
static int next_member(struct cap_set *s)
{
	const struct cap_member *m;

	if (s->c.frames)
		s->last_file = (int)s->cur;
	s->base += s->c.frames;
	member_close(s);
	if (s->cur + 1 >= s->n)
		return 0;
	if (member_open(s, s->cur + 1, true))
		return -1;
	m = &s->files[s->cur];
	if (m->has_frames && s->last_file >= 0 && m->first_ns < s->last_ns && s->on_overlap)
		s->on_overlap(s->ctx, s->files[s->last_file].path, m->path);
	return 0;
}

int cap_set_next(struct cap_set *s, struct cap_frame *f)
{
	while (s->open) {
		int rc = next_frame(&s->c, f);

		if (rc == 1) {
			f->no += s->base;
			s->last_ns = f->ts_ns;
			return 1;
		}
		if (rc < 0)
			return set_fail(s, s->files[s->cur].path, s->c.err, false);
		if (next_member(s))
			return -1;
	}
	return 0;
}

void cap_set_close(struct cap_set *s)
{
	member_close(s);
	free(s->files);
	s->files = NULL;
	s->n = 0;
}
