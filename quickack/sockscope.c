// SPDX-License-Identifier: GPL-2.0-only
/*
 * A socket scope in the kernel (sockscope.h): load, attach, pin, set the
 * connections that exist already, read back, detach.
 *
 * The order keeps a killed quickack harmless: the link is made, then its
 * counters map is pinned, then the link itself; until that last pin the
 * link lives only in this process and goes with it. The iterator runs after
 * the attach, so no connection established meanwhile is missed (one set
 * by both is counted twice).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpfutil.h"
#include "common.h"
#include "log.h"
#include "sockscope.h"

#include "quickack_sock.skel.h"

const char *qs_side_name(enum qs_side side)
{
	return side == QS_SIDE_SEND ? "send" : "recv";
}

void qs_ports_text(const uint16_t *ports, unsigned int nports, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned int i = 0; i < nports && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%u", i ? "," : "", ports[i]);
}

/* whether this process shares the mounts of PID 1 (the host's): false under
 * `ip netns exec`, which gives its command a mount namespace of its own and
 * a /sys of the network namespace, without cgroup2 or bpffs; true when it
 * cannot tell (a /proc/1 that even root may not read) */
static bool host_mounts(void)
{
	struct stat self, init;

	if (stat("/proc/self/ns/mnt", &self) || stat("/proc/1/ns/mnt", &init))
		return true;
	return self.st_ino == init.st_ino && self.st_dev == init.st_dev;
}

#define QS_OWN_MOUNTS_HINT                                                                  \
	"quickack seems to run in a mount namespace of its own (ip netns exec gives one, with " \
	"a /sys of its own), where a pin would go with it: run it from the host's, with --netns NS"

/* the first cgroup2 mount in /proc/self/mountinfo (field 5 its mount
 * point, the fields after " - " its type), into out; false when none, and
 * *any_cgroup whether a cgroup of either version is mounted at all */
static bool cgroup2_mount(char *out, size_t len, bool *any_cgroup)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], point[PATH_MAX], type[64];
	bool found = false;

	*any_cgroup = false;
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		const char *dash = strstr(line, " - ");

		if (!dash || sscanf(dash, " - %63s", type) != 1 || strncmp(type, "cgroup", 6))
			continue;
		*any_cgroup = true;
		if (!strcmp(type, "cgroup2") && sscanf(line, "%*s %*s %*s %*s %4095s", point) == 1) {
			snprintf(out, len, "%s", point);
			found = true;
		}
	}
	fclose(f);
	return found;
}

int qs_cgroup_root(char *out, size_t len, char *msg, size_t msglen)
{
	struct statfs fs;
	bool any;

	if (!statfs(QS_CGROUP_ROOT, &fs) && fs.f_type == CGROUP2_SUPER_MAGIC) {
		snprintf(out, len, "%s", QS_CGROUP_ROOT);
		return 0;
	}
	if (cgroup2_mount(out, len, &any))
		return 0;
	/* no cgroup at all: a /sys of its own, as ip netns exec mounts */
	if (!host_mounts() || !any)
		log_fmt(msg, msglen, "no cgroup hierarchy is mounted here: %s", QS_OWN_MOUNTS_HINT);
	else
		log_fmt(msg, msglen, "no cgroup v2 hierarchy is mounted: a socket scope attaches to a cgroup v2 (mount -t cgroup2 none %s, or boot with systemd.unified_cgroup_hierarchy=1)",
			QS_CGROUP_ROOT);
	return TK_EXIT_NOTSUP;
}

int qs_cgroup_check(const char *path, uint64_t *id, char *msg, size_t len)
{
	struct statfs fs;
	struct stat st;

	if (stat(path, &st) || !S_ISDIR(st.st_mode)) {
		log_fmt(msg, len, "--cgroup %s: %s", path,
			errno == ENOENT || !S_ISDIR(st.st_mode) ? "no such cgroup directory" : strerror(errno));
		return TK_EXIT_DATA;
	}
	if (statfs(path, &fs) || fs.f_type != CGROUP2_SUPER_MAGIC) {
		char root[PATH_MAX];

		if (qs_cgroup_root(root, sizeof(root), msg, len))
			return TK_EXIT_NOTSUP;
		log_fmt(msg, len, "--cgroup %s: not a cgroup v2 directory (they are under %s)", path, root);
		return TK_EXIT_DATA;
	}
	*id = st.st_ino;
	return 0;
}

/* bpffs at QS_BPFFS, mounted there when it is not (as bpftool does): a
 * scope is pinned there to outlive quickack. Not in a mount namespace of
 * quickack's own: a bpffs mounted there, and the pin in it, would go when
 * quickack exits, and the scope with them. */
static int check_bpffs(char *msg, size_t len)
{
	struct statfs fs;

	if (!statfs(QS_BPFFS, &fs) && fs.f_type == BPF_FS_MAGIC)
		return 0;
	if (!host_mounts()) {
		log_fmt(msg, len, "no BPF filesystem at %s: %s", QS_BPFFS, QS_OWN_MOUNTS_HINT);
		return TK_EXIT_NOTSUP;
	}
	if (!mount("bpf", QS_BPFFS, "bpf", 0, "mode=0700")) {
		vlog("mounted the BPF filesystem at %s, where a socket scope is pinned", QS_BPFFS);
		return 0;
	}
	log_fmt(msg, len, "no BPF filesystem at %s, where a socket scope is pinned to outlive quickack, and it could not be mounted: %s (mount -t bpf bpf %s)",
		QS_BPFFS, strerror(errno), QS_BPFFS);
	return TK_EXIT_NOTSUP;
}

/* mkdir -p of QS_PIN_ROOT, then pin_dir itself (which must not exist) */
static int make_pin_dir(const char *pin_dir, char *msg, size_t len)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s", QS_PIN_ROOT);
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) && errno != EEXIST)
			goto bad;
		*p = '/';
	}
	if (mkdir(path, 0700) && errno != EEXIST)
		goto bad;
	snprintf(path, sizeof(path), "%s", pin_dir);
	if (!mkdir(path, 0700))
		return 0;
	if (errno == EEXIST) {
		log_fmt(msg, len, "%s exists already: a scope pinned by a quickack whose journal is gone? (rm -r %s detaches it)",
			path, path);
		return TK_EXIT_FAIL;
	}
bad:
	log_fmt(msg, len, "cannot make %s in bpffs: %s", path, strerror(errno));
	return TK_EXIT_FAIL;
}

static void pin_path(char *out, size_t len, const char *pin_dir, const char *name)
{
	snprintf(out, len, "%s/%s", pin_dir, name);
}

static int load(struct quickack_sock_bpf **skp, const struct qs_scope *s, char *msg, size_t len)
{
	struct quickack_sock_bpf *sk = quickack_sock_bpf__open();
	char ebuf[128];
	int err;

	if (!sk) {
		log_fmt(msg, len, "cannot open the socket scope's BPF object: %s", bpfu_strerror(-errno, ebuf, sizeof(ebuf)));
		return TK_EXIT_FAIL;
	}
	sk->rodata->targ_side = (uint8_t)s->side;
	for (unsigned int i = 0; i < s->nports; i++)
		sk->rodata->targ_ports[i] = s->ports[i];
	sk->rodata->targ_nports = s->nports;
	sk->rodata->targ_netns_cookie = s->netns_cookie;
	sk->rodata->targ_cgroup_id = s->cgroup_id;
	err = quickack_sock_bpf__load(sk);
	if (err) {
		log_fmt(msg, len, "this kernel refused the socket scope's programs (cgroup sock_ops with bpf_setsockopt, and a TCP socket iterator: Linux 5.15 and later): %s; run with -v for the verifier's words",
			bpfu_strerror(err, ebuf, sizeof(ebuf)));
		quickack_sock_bpf__destroy(sk);
		return err == -EPERM ? TK_EXIT_NOPERM : TK_EXIT_NOTSUP;
	}
	*skp = sk;
	return 0;
}

/* the link to the cgroup, pinned with the counters; 0 or an exit code */
static int attach_pinned(struct quickack_sock_bpf *sk, const struct qs_scope *s, const char *pin_dir, char *msg,
			 size_t len)
{
	char path[PATH_MAX], ebuf[128];
	int cg = open(s->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err, rc;
	struct bpf_link *link;

	if (cg < 0) {
		log_fmt(msg, len, "cannot open the cgroup %s: %s", s->cgroup, strerror(errno));
		return TK_EXIT_DATA;
	}
	link = bpf_program__attach_cgroup(sk->progs.qs_sockops, cg);
	err = -errno;
	close(cg);
	if (!link) {
		log_fmt(msg, len, "cannot attach the socket scope to the cgroup %s: %s", s->cgroup,
			bpfu_strerror(err, ebuf, sizeof(ebuf)));
		return err == -EPERM ? TK_EXIT_NOPERM : TK_EXIT_NOTSUP;
	}
	if ((rc = make_pin_dir(pin_dir, msg, len)))
		goto out;
	pin_path(path, sizeof(path), pin_dir, "counters");
	if ((err = bpf_map__pin(sk->maps.counters, path)))
		goto fail;
	pin_path(path, sizeof(path), pin_dir, "link");
	if (!(err = bpf_link__pin(link, path)))
		goto out; /* in force now, beyond this process */
	bpf_map__unpin(sk->maps.counters, NULL);
fail:
	log_fmt(msg, len, "cannot pin %s: %s", path, bpfu_strerror(err, ebuf, sizeof(ebuf)));
	rmdir(pin_dir);
	rc = TK_EXIT_FAIL;
out:
	bpf_link__destroy(link); /* the pin, when made, holds it */
	return rc;
}

/* the connections that existed before: set, and each passed to fn; 0 or -errno */
static int run_iter(struct quickack_sock_bpf *sk, qs_conn_fn fn, void *arg)
{
	struct bpf_link *link = bpf_program__attach_iter(sk->progs.qs_iter, NULL);
	struct qs_conn conn;
	size_t have = 0;
	ssize_t n;
	int fd, err = 0;

	if (!link)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	while ((n = read(fd, (char *)&conn + have, sizeof(conn) - have)) > 0) {
		have += (size_t)n;
		if (have < sizeof(conn))
			continue;
		fn(&conn, arg);
		have = 0;
	}
	if (n < 0)
		err = -errno;
	close(fd);
out:
	bpf_link__destroy(link);
	return err;
}

int qs_attach(const struct qs_scope *s, const char *pin_dir, qs_conn_fn fn, void *arg, bool *iter_failed,
	      char *msg, size_t len)
{
	struct quickack_sock_bpf *sk = NULL;
	char ebuf[128];
	int rc, err;

	*iter_failed = false;
	if ((rc = check_bpffs(msg, len)) || (rc = load(&sk, s, msg, len)))
		return rc;
	rc = attach_pinned(sk, s, pin_dir, msg, len);
	if (!rc && (err = run_iter(sk, fn, arg))) {
		*iter_failed = true;
		log_fmt(msg, len, "the connections that existed before were not set: the TCP socket iterator failed: %s",
			bpfu_strerror(err, ebuf, sizeof(ebuf)));
	}
	quickack_sock_bpf__destroy(sk);
	return rc;
}

bool qs_in_force(const char *pin_dir, struct qs_counts *counts)
{
	char path[PATH_MAX];
	uint64_t v[QS_CNT_MAX] = { 0 };
	int fd;

	memset(counts, 0, sizeof(*counts));
	pin_path(path, sizeof(path), pin_dir, "counters");
	fd = bpf_obj_get(path);
	if (fd >= 0) {
		for (uint32_t k = 0; k < QS_CNT_MAX; k++)
			bpf_map_lookup_elem(fd, &k, &v[k]);
		close(fd);
	}
	counts->set_new = v[QS_CNT_NEW];
	counts->set_existing = v[QS_CNT_EXISTING];
	counts->failed = v[QS_CNT_FAILED];
	counts->delack_us = v[QS_CNT_DELACK_US];
	pin_path(path, sizeof(path), pin_dir, "link");
	fd = bpf_obj_get(path);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

int qs_detach(const char *pin_dir, char *msg, size_t len)
{
	static const char *const names[] = { "link", "counters" };
	char path[PATH_MAX];

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		pin_path(path, sizeof(path), pin_dir, names[i]);
		if (unlink(path) && errno != ENOENT)
			goto bad;
	}
	if (!rmdir(pin_dir) || errno == ENOENT)
		return 0;
	snprintf(path, sizeof(path), "%s", pin_dir);
bad:
	log_fmt(msg, len, "cannot unpin %s: %s", path, strerror(errno));
	return -1;
}
