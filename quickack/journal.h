/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The journal: each route's whole state, saved and made durable (fsync)
 * before quickack changes it, so that `quickack restore` can put it back
 * exactly, even after a crash or a failure halfway through a batch.
 *
 * Format, version 1: text, one record per line, fields separated by one
 * space, each line ending with " crc=XXXXXXXX", the CRC-32 (zlib) of the
 * line's bytes before that field, in 8 lowercase hex digits.
 *
 *   bbrkit-quickack-journal 1 netns=NAME created=UNIXTIME crc=...
 *   route seq=N time=UNIXTIME op=OP family=inet|inet6 table=ID dst=PREFIX metric=PRIO state=HEX crc=...
 *   void seq=N crc=...
 *
 * - The first line names the format and its version. netns is the network
 *   namespace the routes live in, "-" for the namespace quickack ran in;
 *   other bytes than [A-Za-z0-9._+-] are written %XX.
 * - A route record holds the route as the kernel reported it just before
 *   the change: state is the hex of the RTM_NEWROUTE payload (struct rtmsg
 *   then attributes). seq grows by one per record, across runs. family,
 *   table, dst and metric repeat what state holds, for people and grep, and
 *   must agree with it. op is on, off, rto-min or congctl.
 * - A void record says that the change of route record seq was never
 *   applied (the kernel refused it), so restore leaves that route alone.
 * - restore returns every route to the state of its oldest record.
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

#include "route.h"

#define QAJ_MAGIC "bbrkit-quickack-journal"
#define QAJ_VERSION 1
#define QAJ_NETNS_SELF "-"

struct qaj_entry {
	uint64_t seq;
	uint64_t time_s;
	char op[16];
	struct qa_route route;  /* the saved state */
	bool voided;
};

struct qaj {
	bool has_header;
	char netns[256];        /* decoded; QAJ_NETNS_SELF for the caller's namespace */
	uint64_t created_s;
	struct qaj_entry *e;
	size_t n, cap;
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

/* parse a whole journal; 0, or -1 with e filled (j is then freed) */
int qaj_parse(const char *buf, size_t len, struct qaj *j, struct qaj_error *e);
void qaj_free(struct qaj *j);

/* lines, each with its newline; return the length, or -1 when cap is too small */
int qaj_format_header(char *buf, size_t cap, const char *netns, uint64_t created_s);
int qaj_format_void(char *buf, size_t cap, uint64_t seq);
/* a route record needs about 2 * route->len + 200 bytes */
int qaj_format_route(char *buf, size_t cap, uint64_t seq, uint64_t time_s, const char *op,
		     const struct qa_route *route);
size_t qaj_route_line_max(const struct qa_route *route);

/* --- the file -------------------------------------------------------------------- */

enum qaj_status {
	QAJ_OK = 0,
	QAJ_EIO = -1,       /* cannot open, lock, read, write or sync: msg says which */
	QAJ_ECORRUPT = -2,  /* the journal does not parse: msg names line and offset */
};

struct qaj_file {
	int fd;             /* -1 when there is no journal file */
	char path[PATH_MAX];
	struct qaj j;
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
/* append lines (header first when the file is new) and fsync; 0 or QAJ_EIO */
int qaj_append(struct qaj_file *f, const char *netns, const char *lines, size_t len, char *msg,
	       size_t msglen);
/*
 * Replace the journal with only the given entries (atomically: temporary
 * file, fsync, rename, fsync of the directory), or remove it when n is 0.
 */
int qaj_rewrite(struct qaj_file *f, const char *netns, const struct qaj_entry *const *keep, size_t n,
		char *msg, size_t msglen);
void qaj_close(struct qaj_file *f);

/* the default path: /var/lib/bbrkit/quickack.journal, or quickack-NETNS.journal */
void qaj_default_path(const char *netns, char *buf, size_t cap);
#define QAJ_DEFAULT_DIR "/var/lib/bbrkit"

#endif
