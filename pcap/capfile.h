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
/* an error's room: a path is not in it */
#define CAP_ERR_LEN 256

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
	char err[CAP_ERR_LEN];
};

/* 0, or -1 with an error in c->err; path "-" reads stdin */
int cap_open(struct cap_file *c, const char *path, enum cap_reader reader);
/* over a caller's buffer (fuzzing, tests); the buffer must outlive c */
int cap_open_mem(struct cap_file *c, const void *buf, size_t len);
/* 1: a frame; 0: end of file; -1: a damaged record, error in c->err */
int cap_next(struct cap_file *c, struct cap_frame *f);
void cap_close(struct cap_file *c);

const char *cap_format_name(enum cap_format f);

/*
 * Several capture files read as one, in time order: the files are ordered by
 * their first frame's time (then by name), not by the order given, and read
 * one after the other, as `mergecap -a` would concatenate them in that
 * order; frame numbers run on across the files, as Wireshark numbers the
 * merged file. A frame older than the one before it is fine inside a file;
 * a file whose first frame is older than the previous file's last frame
 * overlaps it, and on_overlap (when set) hears of it. Each frame keeps its
 * own file's link type. Only one file is open (mapped) at a time.
 */
struct cap_member {
	const char *path;     /* the caller's name for it */
	const void *buf;      /* cap_set_open_mem only: its bytes */
	size_t len;
	bool has_frames;      /* false: a header and no frame */
	int64_t first_ns;     /* its first frame's time */
};

struct cap_set {
	enum cap_reader reader;
	struct cap_member *files; /* in time order, once opened */
	unsigned int n;
	unsigned int cur;     /* the file in c */
	bool open;            /* c holds files[cur] */
	struct cap_file c;
	uint64_t base;        /* frames of the files before the current one */
	int64_t last_ns;      /* the last frame's time */
	int last_file;        /* the last file that held a frame; -1: none yet */
	void (*on_overlap)(void *ctx, const char *earlier, const char *later);
	void *ctx;
	bool nomem;           /* failed for want of memory, not for a file */
	const char *err_path; /* the file that failed */
	char err[CAP_ERR_LEN];
};

/*
 * Opens the files (at least one; "-", stdin, only alone) and orders them; 0,
 * or -1 with the failing file in s->err_path and why in s->err. Every file's
 * header and first frame are read here (one file: only opened), so a missing,
 * foreign or damaged-from-the-start file fails before any frame is returned.
 * s->on_overlap and s->ctx may be set after it.
 */
int cap_set_open(struct cap_set *s, const char *const *paths, unsigned int n, enum cap_reader reader);
/* over the callers' buffers (fuzzing, tests): m[i].path and .buf, .len */
int cap_set_open_mem(struct cap_set *s, const struct cap_member *m, unsigned int n);
/* 1: a frame (no: its number across the set); 0: the end of the last file;
 * -1: a damaged record, in s->err_path, error in s->err (the file's frame
 * number and byte offset) */
int cap_set_next(struct cap_set *s, struct cap_frame *f);
void cap_set_close(struct cap_set *s);
/* "EN10MB", "LINUX_SLL2", ... or "LINKTYPE_<n>" */
const char *cap_linktype_name(uint32_t linktype, char *buf, size_t len);

#endif
