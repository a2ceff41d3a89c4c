/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The journal: each route's whole state, saved and made durable (fsync)
 * before quickack changes it, so that `quickack restore` can put it back
 * exactly, even after a crash or a failure halfway through a batch; and
 * the world that state belongs to (the boot, the network namespace, the
 * devices), so that a state saved in another world is never sent back.
 *
 * Format, version 3: text, one record per line, fields separated by one
 * space, each line ending with " crc=XXXXXXXX", the CRC-32 (zlib) of the
 * line's bytes before that field, in 8 lowercase hex digits.
 *
 *   bbrkit-quickack-journal 2 netns=NAME created=UNIXTIME boot=BOOT_ID netns_ino=N netns_cookie=N crc=...
 *   route seq=N time=UNIXTIME op=OP family=inet|inet6 table=ID dst=PREFIX metric=PRIO devs=DEVS state=HEX crc=...
 *   added seq=N time=UNIXTIME op=OP family=inet|inet6 table=ID dst=PREFIX metric=PRIO devs=DEVS state=HEX crc=...
 *   scope seq=N time=UNIXTIME op=on side=recv|send ports=P[,P...] cgroup=PATH cgroup_id=N pin=PATH crc=...
 *   void seq=N crc=...
 *
 * - The first line names the format and its version. netns is the network
 *   namespace the routes live in, as the command line named it: "-" for
 *   the namespace quickack ran in; other bytes than [A-Za-z0-9._+-] are
 *   written %XX. boot is /proc/sys/kernel/random/boot_id ("-": unknown);
 *   netns_ino the namespace's inode (as `stat -L /proc/self/ns/net` shows
 *   it) and netns_cookie its SO_NETNS_COOKIE (0: unknown, kernels before
 *   5.14): the kernel reuses a deleted namespace's inode number, never
 *   its cookie within a boot.
 * - A route record holds the route as the kernel reported it just before
 *   the change: state is the hex of the RTM_NEWROUTE payload (struct rtmsg
 *   then attributes). seq grows by one per record, across runs. family,
 *   table, dst and metric repeat what state holds, for people and grep, and
 *   must agree with it. op is on, off, rto-min or congctl. devs names each
 *   device of the route's nexthops, in order, as IFINDEX:NAME joined by
 *   commas (NAME %XX-escaped like netns, empty when it was not known), "-"
 *   for none; its ifindexes must be those of state.
 * - An added record (version 3) is a route quickack made, a host route
 *   (`on --to ADDR --host`): it did not exist before, so its saved state is
 *   "absent", and state holds the route as it was asked for. Its fields
 *   are a route record's.
 * - A scope record (version 4) is a socket scope (sockscope.h) that
 *   quickack attached to the cgroup v2 directory cgroup (its id cgroup_id,
 *   0 for the whole hierarchy) and pinned at pin, written and synced
 *   before the attach: side recv sets the delayed-ACK maximum of the
 *   connections accepted on the local ports, side send TCP_NODELAY on those
 *   made to the remote ports, in the header's namespace. op is on. cgroup
 *   and pin are written like netns. restore unpins it (a pin that is gone
 *   was never made, or the boot is another: nothing to undo).
 * - A void record says that the change of route (or added, or scope) record
 *   seq was never applied (the kernel refused it), so restore leaves that
 *   route alone.
 * - restore returns every route to the state of its oldest record: it
 *   deletes a route whose oldest record is an added one.
 * - Every record of one file belongs to the header's boot and namespace:
 *   records of another world are set aside in another file, never mixed.
 *
 * Version 3 is version 4 without scope records, and version 2 is version 3
 * without added records; it is still read, and a
 * version 2 journal is rewritten with a version 3 header (the same fields)
 * before anything is appended to it (so is a version 3 journal). Version 1 (quickack before the
 * identity records) is still read: its header has no boot, netns_ino or
 * netns_cookie and its route records no devs; what it lacks is unknown
 * (has_ident, has_devs false).
 *
 * A line that does not end with a newline at the end of the file is a write
 * cut short by a crash; its change was never sent (changes are sent only
 * after the records are synced), so it is ignored, with a warning. Anything
 * else that does not follow this format makes the whole journal unusable:
 * the error names the line and the byte offset, and nothing is applied.
 */
#ifndef QA_JOURNAL_H
#define QA_JOURNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/contract/quickack_sock.h"
#include "route.h"

#define QAJ_MAGIC "bbrkit-quickack-journal"
#define QAJ_VERSION 4            /* what this quickack writes */
#define QAJ_VERSION_ADDED 3      /* the first with added records */
#define QAJ_VERSION_SCOPE 4      /* the first with scope records */
#define QAJ_VERSION_NO_IDENT 1   /* the oldest it reads: no boot, namespace or devices */
#define QAJ_NETNS_SELF "-"
#define QAJ_UNKNOWN "-"          /* boot: not known */
#define QAJ_BOOT_ID_MAX 64       /* a boot id is a UUID: 36 characters */
#define QAJ_IFNAME_MAX 16        /* IFNAMSIZ, with its NUL */

/* the world a journal's routes live in; empty or 0: unknown */
struct qaj_ident {
	char boot[QAJ_BOOT_ID_MAX + 1];
	uint64_t netns_ino;
	uint64_t netns_cookie;
};

/* a device of a saved route, as it was when the state was saved */
struct qaj_dev {
	uint32_t ifindex;
	char name[QAJ_IFNAME_MAX];  /* "" when it was not known */
};

struct qaj_entry {
	uint64_t seq;
	uint64_t time_s;
	char op[16];
	struct qa_route route;  /* the saved state; added: the route as it was made */
	bool added;             /* an added record: the saved state is "absent" */
	bool voided;
	bool has_devs;          /* version 2: devs says which devices state's ifindexes were */
	struct qaj_dev *devs;
	uint32_t ndevs;
	size_t line_off;        /* the record's line in the file, with its newline */
	uint32_t line_len;
	size_t void_off;        /* its void record's line, when voided */
	uint32_t void_len;
};

/* a socket scope's record (version 4) */
struct qaj_scope {
	uint64_t seq;
	uint64_t time_s;
	char op[16];
	uint8_t side;           /* enum qs_side */
	uint16_t ports[QS_PORTS_MAX];
	unsigned int nports;
	char cgroup[PATH_MAX];
	uint64_t cgroup_id;
	char pin[PATH_MAX];
	bool voided;
	bool keep;              /* qaj_rewrite() and qaj_set_aside() keep its lines in the
				 * journal: true as parsed, cleared by whoever undid it */
	size_t line_off;
	uint32_t line_len;
	size_t void_off;
	uint32_t void_len;
};

struct qaj {
	bool has_header;
	unsigned int version;
	char netns[256];        /* decoded; QAJ_NETNS_SELF for the caller's namespace */
	uint64_t created_s;
	bool has_ident;         /* version 2: ident holds what was known */
	struct qaj_ident ident;
	size_t header_len;      /* the header line, with its newline */
	struct qaj_entry *e;
	size_t n, cap;
	struct qaj_scope *sc;   /* the scope records, in journal order */
	size_t nsc, sccap;
	uint64_t last_seq;
	size_t valid_len;       /* bytes in complete lines */
	bool torn_tail;         /* an unfinished last line was ignored */
	unsigned long torn_line;
};

struct qaj_error {
	unsigned long line;     /* 1-based */
	size_t offset;          /* byte offset in the file of the fault */
	char msg[256];
};

/* --- the lines: read by journal_parse.c, written by journal_format.c ----------------- */

/* parse a whole journal; 0, or -1 with e filled (j is then freed) */
int qaj_parse(const char *buf, size_t len, struct qaj *j, struct qaj_error *e);
void qaj_free(struct qaj *j);

/* lines, each with its newline; return the length, or -1 when cap is too small */
int qaj_format_header(char *buf, size_t cap, const char *netns, uint64_t created_s,
		      const struct qaj_ident *ident);
int qaj_format_void(char *buf, size_t cap, uint64_t seq);
/* a route record (added: an added record), its devices in devs[0..ndevs)
 * (qaj_route_devs), needs qaj_route_line_max() bytes */
int qaj_format_route(char *buf, size_t cap, uint64_t seq, uint64_t time_s, const char *op, bool added,
		     const struct qa_route *route, const struct qaj_dev *devs, size_t ndevs);
size_t qaj_route_line_max(const struct qa_route *route, size_t ndevs);
/* a scope record; needs QAJ_SCOPE_LINE_MAX bytes */
#define QAJ_SCOPE_LINE_MAX (6 * PATH_MAX + 512)
int qaj_format_scope(char *buf, size_t cap, const struct qaj_scope *sc);
/* the distinct ifindexes of route's nexthops, in order, into devs (names
 * empty); at most route->nexthops + 1 */
size_t qaj_route_devs(const struct qa_route *route, struct qaj_dev *devs, size_t max);

/* --- the file (journal_file.c) ------------------------------------------------------- */

enum qaj_status {
	QAJ_OK = 0,
	QAJ_EIO = -1,       /* cannot open, lock, read, write or sync: msg says which */
	QAJ_ECORRUPT = -2,  /* the journal does not parse: msg names line and offset */
};

struct qaj_file {
	int fd;             /* -1 when there is no journal file */
	char path[PATH_MAX];
	struct qaj j;
	char *buf;          /* the bytes j was parsed from: records are copied from here */
	size_t buf_len;
	bool created;       /* made by this run: its directory is synced too */
};

/*
 * Open, lock and read the journal at path. For writing (restore, changes)
 * the lock is exclusive and a missing file is created with its directory
 * when create is set; for reading it is shared and a missing file is an
 * empty journal (fd -1). Waits up to lock_timeout_ms for another quickack.
 */
int qaj_open(struct qaj_file *f, const char *path, bool write, bool create, int lock_timeout_ms,
	     char *msg, size_t msglen);
/* append lines (a header naming netns and ident first when the file has
 * none; an older version's header made this version's first) and fsync;
 * 0 or QAJ_EIO */
int qaj_append(struct qaj_file *f, const char *netns, const struct qaj_ident *ident, const char *lines,
	       size_t len, char *msg, size_t msglen);
/*
 * Replace the journal with only the given entries and the scope records
 * still marked keep, their lines and the header copied as they are (atomically: temporary file, fsync, rename,
 * fsync of the directory), or remove it when none is left.
 */
int qaj_rewrite(struct qaj_file *f, const struct qaj_entry *const *keep, size_t n, char *msg,
		size_t msglen);
/*
 * Move the entries marked in aside[0..j.n) to a new file, kept: the
 * journal's path + ".stale-YYYYMMDDTHHMMSSZ" (then "-2", "-3", ... when
 * taken), into side. It holds the header and those records' lines as they
 * were, so it is a journal of the same world that status and restore read
 * with --journal. Then the journal keeps only the others (and its scope
 * records marked keep): rewritten and
 * read again under the same lock, or emptied (its next append writes a new
 * header) when none is left. The side file is synced before the journal
 * changes, so no record is ever lost. With no record marked, no side file
 * is written (side is ""). 0 or QAJ_EIO.
 */
int qaj_set_aside(struct qaj_file *f, const bool *aside, char *side, size_t sidelen, char *msg,
		  size_t msglen);
void qaj_close(struct qaj_file *f);
/* the scope records marked keep: those the journal keeps at a rewrite */
size_t qaj_scopes_kept(const struct qaj *j);

/* the default path: /var/lib/bbrkit/quickack.journal, or quickack-NETNS.journal */
void qaj_default_path(const char *netns, char *buf, size_t cap);
#define QAJ_DEFAULT_DIR "/var/lib/bbrkit"

#endif
