// SPDX-License-Identifier: GPL-2.0-only
/*
 * The journal file: opened and read under a lock (shared to read,
 * exclusive to write), appended to and fsynced before a change is sent,
 * rewritten atomically, and records of another world set aside in a kept
 * file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "journal.h"

void qaj_default_path(const char *netns, char *buf, size_t cap)
{
	if (!netns)
		snprintf(buf, cap, "%s/quickack.journal", QAJ_DEFAULT_DIR);
	else
		snprintf(buf, cap, "%s/quickack-%s.journal", QAJ_DEFAULT_DIR, netns);
}

static int mkdirs(const char *dir)
{
	char tmp[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(tmp, 0755) && errno != EEXIST)
		return -1;
	return 0;
}

static void dir_of(const char *path, char *dir, size_t cap)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(dir, cap, ".");
	else if (slash == path)
		snprintf(dir, cap, "/");
	else
		snprintf(dir, cap, "%.*s", (int)(slash - path), path);
}

static int sync_dir(const char *path)
{
	char dir[PATH_MAX];
	int fd, err = 0;

	dir_of(path, dir, sizeof(dir));
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fsync(fd))
		err = -1;
	close(fd);
	return err;
}

static int lock_wait(int fd, int op, int timeout_ms)
{
	struct timespec ts = { 0, 10 * TK_NSEC_PER_MSEC };

	for (int waited = 0;; waited += 10) {
		if (!flock(fd, op | LOCK_NB))
			return 0;
		if (errno != EWOULDBLOCK || waited >= timeout_ms)
			return -1;
		nanosleep(&ts, NULL);
	}
}

static int read_all(int fd, char **out, size_t *len)
{
	struct stat st;
	char *buf;
	size_t got = 0;

	if (fstat(fd, &st))
		return -1;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return -1;
	while (got < (size_t)st.st_size) {
		ssize_t n = pread(fd, buf + got, (size_t)st.st_size - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				break;
			free(buf);
			return -1;
		}
		got += (size_t)n;
	}
	*out = buf;
	*len = got;
	return 0;
}

int qaj_open(struct qaj_file *f, const char *path, bool write, bool create, int lock_timeout_ms,
	     char *msg, size_t msglen)
{
	struct qaj_error pe;
	char *buf = NULL;
	size_t len = 0;
	int fd = -1;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	snprintf(f->path, sizeof(f->path), "%s", path);
	for (int tries = 0;; tries++) {
		struct stat a, b;
		int flags = (write ? O_RDWR : O_RDONLY) | O_CLOEXEC;

		fd = open(path, flags);
		if (fd < 0 && errno == ENOENT && write && create) {
			char dir[PATH_MAX];

			dir_of(path, dir, sizeof(dir));
			if (mkdirs(dir)) {
				log_fmt(msg, msglen, "cannot create the journal directory %s: %s", dir,
				     strerror(errno));
				return QAJ_EIO;
			}
			fd = open(path, flags | O_CREAT | O_EXCL, 0644);
			if (fd >= 0)
				f->created = true;
			else if (errno == EEXIST)
				continue; /* another quickack made it first */
		}
		if (fd < 0) {
			if (errno == ENOENT && !(write && create))
				return QAJ_OK; /* no journal: nothing saved */
			log_fmt(msg, msglen, "cannot open the journal %s: %s", path, strerror(errno));
			return QAJ_EIO;
		}
		if (lock_wait(fd, write ? LOCK_EX : LOCK_SH, lock_timeout_ms)) {
			log_fmt(msg, msglen, "the journal %s is locked by another quickack (waited %d ms)", path,
			     lock_timeout_ms);
			close(fd);
			return QAJ_EIO;
		}
		/* the file may have been replaced or removed while we waited */
		if (!fstat(fd, &a) && !stat(path, &b) && a.st_ino == b.st_ino && a.st_dev == b.st_dev)
			break;
		close(fd);
		fd = -1;
		if (tries > 100) {
			log_fmt(msg, msglen, "the journal %s keeps changing under us", path);
			return QAJ_EIO;
		}
	}
	if (read_all(fd, &buf, &len)) {
		log_fmt(msg, msglen, "cannot read the journal %s: %s", path, strerror(errno));
		close(fd);
		return QAJ_EIO;
	}
	if (qaj_parse(buf, len, &f->j, &pe)) {
		log_fmt(msg, msglen, "journal %s is corrupt at line %lu (byte %zu): %s; nothing was applied", path,
		     pe.line, pe.offset, pe.msg);
		free(buf);
		close(fd);
		return QAJ_ECORRUPT;
	}
	f->buf = buf;
	f->buf_len = len;
	f->fd = fd;
	return QAJ_OK;
}

static int write_all(int fd, const char *p, size_t n, off_t off)
{
	while (n) {
		ssize_t w = pwrite(fd, p, n, off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
		off += w;
	}
	return 0;
}

static int upgrade(struct qaj_file *f, char *msg, size_t msglen);

int qaj_append(struct qaj_file *f, const char *netns, const struct qaj_ident *ident, const char *lines,
	       size_t len, char *msg, size_t msglen)
{
	off_t end = (off_t)f->j.valid_len;

	if (f->fd < 0) {
		log_fmt(msg, msglen, "the journal %s is not open for writing", f->path);
		return QAJ_EIO;
	}
	if (upgrade(f, msg, msglen))
		return QAJ_EIO;
	end = (off_t)f->j.valid_len;
	/* drop a line a crash cut short, so the next one does not run into it */
	if (f->j.torn_tail && ftruncate(f->fd, end)) {
		log_fmt(msg, msglen, "cannot truncate the journal %s: %s", f->path, strerror(errno));
		return QAJ_EIO;
	}
	f->j.torn_tail = false;
	if (!f->j.has_header) {
		char hdr[1024];
		int n = qaj_format_header(hdr, sizeof(hdr), netns, (uint64_t)time(NULL), ident);

		if (n < 0 || ftruncate(f->fd, 0) || write_all(f->fd, hdr, (size_t)n, 0)) {
			log_fmt(msg, msglen, "cannot write the journal %s: %s", f->path, strerror(errno));
			return QAJ_EIO;
		}
		end = n;
		f->j.has_header = true;
		f->j.version = QAJ_VERSION;
		f->j.has_ident = true;
		f->j.ident = *ident;
		snprintf(f->j.netns, sizeof(f->j.netns), "%s", netns);
	}
	if (write_all(f->fd, lines, len, end) || fsync(f->fd)) {
		log_fmt(msg, msglen, "cannot write the journal %s: %s", f->path, strerror(errno));
		return QAJ_EIO;
	}
	f->j.valid_len = (size_t)end + len;
	if (f->created) {
		if (sync_dir(f->path)) {
			log_fmt(msg, msglen, "cannot sync the directory of the journal %s: %s", f->path,
			     strerror(errno));
			return QAJ_EIO;
		}
		f->created = false;
	}
	return QAJ_OK;
}

/* a scope record's bytes in the file, with its void record's */
static size_t scope_lines(const struct qaj_scope *sc)
{
	return sc->line_len + (sc->voided ? sc->void_len : 0);
}

/* which scope records copy_lines() copies: those the journal keeps, or
 * those set aside (keep cleared) */
enum sc_copy { SC_KEPT, SC_ASIDE };

static bool scope_copied(const struct qaj_scope *sc, enum sc_copy which)
{
	return which == SC_KEPT ? sc->keep : which == SC_ASIDE && !sc->keep;
}

/* the header, the route records whose mark[] is want, and the scope records
 * `which` says, each with its void record, as they are in the file and in
 * its order; NULL when out of memory */
static char *copy_lines(const struct qaj_file *f, const bool *mark, bool want, enum sc_copy which, size_t *len)
{
	const struct qaj *j = &f->j;
	size_t n = j->header_len, i = 0, k = 0;
	char *out;

	for (i = 0; i < j->n; i++)
		if (mark[i] == want)
			n += j->e[i].line_len + j->e[i].void_len;
	for (k = 0; k < j->nsc; k++)
		if (scope_copied(&j->sc[k], which))
			n += scope_lines(&j->sc[k]);
	out = malloc(n ? n : 1);
	if (!out)
		return NULL;
	memcpy(out, f->buf, j->header_len);
	n = j->header_len;
	for (i = 0, k = 0; i < j->n || k < j->nsc;) {
		if (k < j->nsc && (i == j->n || j->sc[k].seq < j->e[i].seq)) {
			const struct qaj_scope *sc = &j->sc[k++];

			if (!scope_copied(sc, which))
				continue;
			memcpy(out + n, f->buf + sc->line_off, sc->line_len);
			n += sc->line_len;
			if (sc->voided) {
				memcpy(out + n, f->buf + sc->void_off, sc->void_len);
				n += sc->void_len;
			}
			continue;
		}
		if (mark[i] == want) {
			const struct qaj_entry *e = &j->e[i];

			memcpy(out + n, f->buf + e->line_off, e->line_len);
			n += e->line_len;
			if (e->voided) {
				memcpy(out + n, f->buf + e->void_off, e->void_len);
				n += e->void_len;
			}
		}
		i++;
	}
	*len = n;
	return out;
}

size_t qaj_scopes_kept(const struct qaj *j)
{
	size_t n = 0;

	for (size_t k = 0; k < j->nsc; k++)
		n += j->sc[k].keep;
	return n;
}

/* a new file at path holding data, synced; its descriptor, or -1 (errno set) */
static int write_synced(const char *path, int flags, const char *data, size_t len)
{
	int fd = open(path, flags | O_CREAT | O_CLOEXEC, 0644), e;

	if (fd < 0)
		return -1;
	if (!write_all(fd, data, len, 0) && !fsync(fd))
		return fd;
	e = errno;
	close(fd);
	unlink(path);
	errno = e;
	return -1;
}

/* data replaces the journal atomically; the new file's descriptor, or -1 */
static int replace_journal(struct qaj_file *f, const char *data, size_t len, char *msg, size_t msglen)
{
	char tmp[PATH_MAX + 32];
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", f->path, (int)getpid());
	fd = write_synced(tmp, O_RDWR | O_TRUNC, data, len);
	/* nobody else knows tmp yet: the lock cannot be held elsewhere */
	if (fd >= 0 && (flock(fd, LOCK_EX | LOCK_NB) || rename(tmp, f->path))) {
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		log_fmt(msg, msglen, "cannot rewrite the journal %s: %s", f->path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	sync_dir(f->path);
	return fd;
}

int qaj_rewrite(struct qaj_file *f, const struct qaj_entry *const *keep, size_t n, char *msg, size_t msglen)
{
	bool *mark;
	char *data;
	size_t len;
	int fd;

	if (!n && !qaj_scopes_kept(&f->j)) {
		if (unlink(f->path) && errno != ENOENT) {
			log_fmt(msg, msglen, "cannot remove the journal %s: %s", f->path, strerror(errno));
			return QAJ_EIO;
		}
		sync_dir(f->path);
		return QAJ_OK;
	}
	mark = calloc(f->j.n ? f->j.n : 1, sizeof(*mark));
	if (!mark) {
		log_fmt(msg, msglen, "cannot rewrite the journal %s: out of memory", f->path);
		return QAJ_EIO;
	}
	for (size_t i = 0; i < n; i++)
		mark[keep[i] - f->j.e] = true;
	data = copy_lines(f, mark, true, SC_KEPT, &len);
	free(mark);
	if (!data) {
		log_fmt(msg, msglen, "cannot rewrite the journal %s: out of memory", f->path);
		return QAJ_EIO;
	}
	fd = replace_journal(f, data, len, msg, msglen);
	free(data);
	if (fd < 0)
		return QAJ_EIO;
	/* the new file, locked, until qaj_close; j still describes the old one */
	close(f->fd);
	f->fd = fd;
	return QAJ_OK;
}

/* the records marked aside, into a new file beside the journal: its path in side */
static int write_side(const struct qaj_file *f, const bool *aside, char *side, size_t sidelen, char *msg,
		      size_t msglen)
{
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	size_t len;
	char *data = copy_lines(f, aside, true, SC_ASIDE, &len);
	int fd = -1;

	if (!data) {
		log_fmt(msg, msglen, "cannot set journal records aside: out of memory");
		return QAJ_EIO;
	}
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", gmtime_r(&now, &tm));
	for (int k = 1; fd < 0 && k <= 100; k++) {
		if (k == 1)
			snprintf(side, sidelen, "%s.stale-%s", f->path, stamp);
		else
			snprintf(side, sidelen, "%s.stale-%s-%d", f->path, stamp, k);
		fd = write_synced(side, O_WRONLY | O_EXCL, data, len);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	free(data);
	if (fd < 0) {
		log_fmt(msg, msglen, "cannot write %s to set journal records aside: %s", side, strerror(errno));
		return QAJ_EIO;
	}
	close(fd);
	sync_dir(side);
	return QAJ_OK;
}

/* no record is left: the journal is emptied in place, still locked, and
 * removed at qaj_close unless something is appended */
static int empty_journal(struct qaj_file *f, char *msg, size_t msglen)
{
	uint64_t last = f->j.last_seq;

	if (ftruncate(f->fd, 0) || fsync(f->fd)) {
		log_fmt(msg, msglen, "cannot empty the journal %s: %s", f->path, strerror(errno));
		return QAJ_EIO;
	}
	qaj_free(&f->j);
	memset(&f->j, 0, sizeof(f->j));
	f->j.last_seq = last;
	free(f->buf);
	f->buf = NULL;
	f->buf_len = 0;
	f->created = true;
	return QAJ_OK;
}

/* data (len bytes, owned from here) becomes the journal, atomically, and is
 * read again: f's descriptor, records and bytes are then the new file's */
static int install(struct qaj_file *f, char *data, size_t len, char *msg, size_t msglen)
{
	struct qaj j;
	struct qaj_error pe;
	uint64_t last = f->j.last_seq;
	int fd;

	if (!data || qaj_parse(data, len, &j, &pe)) {
		log_fmt(msg, msglen, "cannot rewrite the journal %s: %s", f->path, data ? pe.msg : "out of memory");
		free(data);
		return QAJ_EIO;
	}
	fd = replace_journal(f, data, len, msg, msglen);
	if (fd < 0) {
		qaj_free(&j);
		free(data);
		return QAJ_EIO;
	}
	close(f->fd);
	f->fd = fd;
	qaj_free(&f->j);
	f->j = j;
	f->j.last_seq = last > j.last_seq ? last : j.last_seq;
	free(f->buf);
	f->buf = data;
	f->buf_len = len;
	return QAJ_OK;
}

/* the journal rewritten with the records not set aside, and read again */
static int keep_rest(struct qaj_file *f, const bool *aside, char *msg, size_t msglen)
{
	size_t len;
	char *data = copy_lines(f, aside, false, SC_KEPT, &len);

	return install(f, data, len, msg, msglen);
}

/*
 * An older version's journal, of this world (version 2: it has the identity
 * fields), made this version's before a record is appended: its header
 * written anew, its records as they are, since each older record is one of
 * this version too. A record of the new kinds never lands under a header
 * that an older quickack would read as its own.
 */
static int upgrade(struct qaj_file *f, char *msg, size_t msglen)
{
	const struct qaj *j = &f->j;
	char hdr[1024], *data;
	int n;

	if (!j->has_header || j->version == QAJ_VERSION)
		return QAJ_OK;
	if (!j->has_ident) { /* never here: a version 1 journal is set aside before any change */
		log_fmt(msg, msglen, "the journal %s is of version %u: run 'quickack restore' with the quickack that wrote it",
			f->path, j->version);
		return QAJ_EIO;
	}
	n = qaj_format_header(hdr, sizeof(hdr), j->netns, j->created_s, &j->ident);
	data = n < 0 ? NULL : malloc((size_t)n + j->valid_len - j->header_len + 1);
	if (!data) {
		log_fmt(msg, msglen, "cannot rewrite the journal %s: out of memory", f->path);
		return QAJ_EIO;
	}
	memcpy(data, hdr, (size_t)n);
	memcpy(data + n, f->buf + j->header_len, j->valid_len - j->header_len);
	return install(f, data, (size_t)n + j->valid_len - j->header_len, msg, msglen);
}

int qaj_set_aside(struct qaj_file *f, const bool *aside, char *side, size_t sidelen, char *msg,
		  size_t msglen)
{
	size_t rest = 0;

	side[0] = '\0';
	if (f->fd < 0 || !f->j.has_header) {
		log_fmt(msg, msglen, "the journal %s is not open for writing", f->path);
		return QAJ_EIO;
	}
	for (size_t i = 0; i < f->j.n; i++)
		rest += !aside[i];
	/* no record marked (a header alone, say): no side file */
	if ((rest < f->j.n || qaj_scopes_kept(&f->j) < f->j.nsc) && write_side(f, aside, side, sidelen, msg, msglen))
		return QAJ_EIO;
	if (!rest && !qaj_scopes_kept(&f->j))
		return empty_journal(f, msg, msglen); /* failing, it may be emptied: side stays */
	if (!keep_rest(f, aside, msg, msglen))
		return QAJ_OK;
	/* the journal is as it was: its records are not in two files */
	if (side[0])
		unlink(side);
	side[0] = '\0';
	return QAJ_EIO;
}

void qaj_close(struct qaj_file *f)
{
	/* made by this run and never written: leave no empty journal behind */
	if (f->fd >= 0 && f->created)
		unlink(f->path);
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	qaj_free(&f->j);
	free(f->buf);
	f->buf = NULL;
}
