/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading capture files, frame by frame, without a copy or an allocation per
 * frame: the file is mapped (or read whole from a pipe) and each frame points
 * into it. pcap (both byte orders, micro- and nanosecond) and pcapng (every
 * section, per-interface link type, if_tsresol and if_tsoffset; EPB, SPB and
 * the obsolete PB) are understood.
 *
 * A damaged file stops the reader at the first bad record with an error that
 * names the frame and its byte offset; every frame before it was returned.
 *
 * A second reader, through libpcap's pcap_next_ex, exists to cross-check this
 * one and to measure it against libpcap (--reader libpcap).
 */
#ifndef PCAP_CAPFILE_H
#define PCAP_CAPFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* libpcap's own limit on a record's captured length (MAXIMUM_SNAPLEN) */
#define CAP_MAX_CAPLEN 262144u
/* a pcapng block larger than this is nonsense rather than a big frame */
#define CAP_MAX_BLOCK (16u << 20)

enum cap_format { CAP_PCAP = 1, CAP_PCAPNG = 2 };
enum cap_reader { CAP_READER_MMAP = 0, CAP_READER_LIBPCAP = 1 };

struct cap_frame {
	uint64_t no;          /* 1-based, as Wireshark numbers frames */
	int64_t ts_ns;        /* capture time, ns since the epoch */
	uint32_t caplen;      /* bytes present in data */
	uint32_t origlen;     /* bytes on the wire */
	uint32_t linktype;    /* LINKTYPE_* of the frame's interface */
	uint64_t offset;      /* byte offset of the frame's record in the file */
	const uint8_t *data;
};

struct cap_if {
	uint32_t linktype;
	uint32_t snaplen;
	uint64_t tsres_num;   /* ts units * tsres_num / tsres_den = ns */
	uint64_t tsres_den;
	int64_t tsoffset_ns;
};

struct cap_file {
	enum cap_format format;
	enum cap_reader reader;
	const uint8_t *base;
	size_t size;
	size_t off;           /* next record */
	uint64_t frames;      /* frames returned so far */
	bool swap;
	bool owned;           /* base was malloc'ed (read from a pipe) */
	bool mapped;
	/* pcap */
	uint32_t linktype, snaplen;
	bool nsec;
	/* pcapng: interfaces of the current section */
	struct cap_if *ifs;
	unsigned int nifs, cap_ifs;
	int64_t last_ts_ns;   /* for SPBs, which carry no timestamp */
	/* libpcap reader */
	void *pcap;
	bool nomem;           /* cap_open() failed for want of memory, not for the file */
	/* set when cap_next() returned -1 */
	char err[256];
};

/* 0, or -1 with an error in c->err; path "-" reads stdin */
int cap_open(struct cap_file *c, const char *path, enum cap_reader reader);
/* over a caller's buffer (fuzzing, tests); the buffer must outlive c */
int cap_open_mem(struct cap_file *c, const void *buf, size_t len);
/* 1: a frame; 0: end of file; -1: a damaged record, error in c->err */
int cap_next(struct cap_file *c, struct cap_frame *f);
void cap_close(struct cap_file *c);

const char *cap_format_name(enum cap_format f);
/* "EN10MB", "LINUX_SLL2", ... or "LINKTYPE_<n>" */
const char *cap_linktype_name(uint32_t linktype, char *buf, size_t len);

#endif
