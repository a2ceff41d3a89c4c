// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbrtrace's three kernel backends (struct_ops, fentry, kprobe): each probes
 * BTF for what it needs, loads and attaches its object, and hands events on
 * in time order after every CPU's batch is flushed; and the check for, and
 * removal of, a stale bbr_traced that no process holds.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bbrtrace/backend.h"
#include "bbrtrace/guard.h"
#include "bbrtrace/reorder.h"
#include "bpfutil.h"
#include "chooser.h"
#include "common.h"
#include "log.h"

#include "bbr_traced.skel.h"
#include "bbr_traced_pre610.skel.h"
#include "bbrtrace_fentry.skel.h"
#include "bbrtrace_kprobe.skel.h"

/* Debian 12's UAPI headers (6.1) predate struct_ops links (6.4) */
#ifndef BPF_F_LINK
#define BPF_F_LINK (1U << 13)
#endif
#define BT_ATTACH_STRUCT_OPS 44 /* enum bpf_attach_type BPF_STRUCT_OPS, 6.4+ */
/* the kernel's internal "operation not supported" (include/linux/errno.h),
 * which struct_ops maps return to user space; no UAPI header names it */
#define ENOTSUPP 524

const char *const bt_backend_names[] = { "auto", "fentry", "kprobe", "struct_ops", NULL };

/* the per-CPU batches are flushed at most this often (and each poll that
 * times out): events reach the reorder buffer, and the detector, within it */
#define BT_FLUSH_EVERY_NS (50 * TK_NSEC_PER_MSEC)

struct bt_backend {
	enum bt_backend_kind kind;
	struct bbr_traced_bpf *so4;
	struct bbr_traced_pre610_bpf *so2;
	struct bbrtrace_fentry_bpf *fe;
	struct bbrtrace_kprobe_bpf *kp;
	struct bpf_object *obj;
	struct bpf_map *counters;
	struct ring_buffer *rb;
	int so_link_fd;            /* struct_ops BPF link; -1 when none */
	struct bpf_link *so_plain; /* struct_ops registered without a link (old kernels) */
	struct bpf_link *cookie_link; /* struct_ops: tp_btf that assigns socket cookies */
	struct bpf_link *write_link;  /* struct_ops: the write tap */
	const char *write_hook;       /* the write tap's hook, or NULL ... */
	const char *write_why;        /* ... and why */
	struct bpf_program *flush;    /* bt_flush: empties one CPU's batch */
	struct bt_reorder reorder;
	uint64_t flushed_ns;          /* the last flush of every CPU's batch */
	int ncpus;
	bt_event_fn fn;
	void *ctx;
};

/* the rodata every backend shares, set before load */
#define BT_SET_RODATA(skel, cfg)                                                         \
	do {                                                                             \
		memcpy((void *)(skel)->rodata->targ_saddr, (cfg)->filter.saddr, 16);     \
		memcpy((void *)(skel)->rodata->targ_daddr, (cfg)->filter.daddr, 16);     \
		(skel)->rodata->targ_has_saddr = (cfg)->filter.has_saddr;                \
		(skel)->rodata->targ_has_daddr = (cfg)->filter.has_daddr;                \
		(skel)->rodata->targ_sport = (cfg)->filter.sport;                        \
		(skel)->rodata->targ_dport = (cfg)->filter.dport;                        \
		(skel)->rodata->targ_cookie = (cfg)->filter.cookie;                      \
		(skel)->rodata->targ_wakeup_shift = wakeup_shift((cfg)->wakeup_bytes);   \
		(skel)->rodata->targ_close_events = (cfg)->closes;                       \
		bpf_program__set_autoattach((skel)->progs.bt_flush, false);              \
	} while (0)

static unsigned int wakeup_shift(uint32_t bytes)
{
	unsigned int shift = 12;

	while (shift < 31 && (1U << (shift + 1)) <= bytes)
		shift++;
	return shift;
}

/*
 * The write tap's hook on this kernel for this backend: the sock_send_length
 * tracepoint (6.3+, commit 6e6eda44b939 "net: sock: add tracepoints for recv
 * and send length"), else fexit on tcp_sendmsg where fentry works.
 */
static void choose_write_hook(struct bt_backend *b, const struct bt_config *cfg)
{
	b->write_hook = NULL;
	if (!cfg->writes)
		b->write_why = "not asked (--detect traces writes)";
	else if (bpfu_btf_has_type("btf_trace_sock_send_length", BTF_KIND_TYPEDEF))
		b->write_hook = "tp_btf/sock_send_length";
	else if (b->kind == BT_FENTRY)
		b->write_hook = "fexit/tcp_sendmsg";
	else
		b->write_why = "this kernel has no sock_send_length tracepoint (6.3+) and the "
			       "fentry backend is not in use: the fentry backend, where it runs, "
			       "traces writes through fexit on tcp_sendmsg";
}

/* the write tap's programs: the chosen one loads, the other does not */
#define BT_SET_WRITES(skel, b)                                                           \
	do {                                                                             \
		bool tp_ = (b)->write_hook && !strcmp((b)->write_hook, "tp_btf/sock_send_length"); \
		bool fx_ = (b)->write_hook && !tp_;                                      \
		bpf_program__set_autoload((skel)->progs.bt_write_tp, tp_);               \
		bpf_program__set_autoload((skel)->progs.bt_write_fexit, fx_);            \
		(skel)->rodata->targ_ca_bbr_traced = (b)->kind == BT_STRUCT_OPS;         \
	} while (0)

/* a record holds one event, or a batch of them from one CPU */
static int on_ringbuf(void *ctx, void *data, size_t size)
{
	struct bt_backend *b = ctx;
	const struct bt_event *e = data;

	for (size_t i = 0; i < size / sizeof(*e); i++)
		if (bt_reorder_push(&b->reorder, &e[i]))
			return -ENOMEM;
	return 0;
}

/* runs bt_flush on every CPU; returns the time before which every event has
 * reached the ring buffer (t_ns may lead an event's staging by
 * BT_TSTAMP_LEAD_NS) */
static uint64_t flush_cpus(struct bt_backend *b)
{
	uint64_t now = tk_mono_ns();

	now = now > BT_TSTAMP_LEAD_NS ? now - BT_TSTAMP_LEAD_NS : 0;
	int fd = bpf_program__fd(b->flush);

	for (int cpu = 0; cpu < b->ncpus; cpu++) {
		for (int try = 0; try < 10; try++) {
			LIBBPF_OPTS(bpf_test_run_opts, opts, .flags = BPF_F_TEST_RUN_ON_CPU,
				    .cpu = (__u32)cpu);

			/* an offline CPU (ENXIO) holds no batch */
			if (bpf_prog_test_run_opts(fd, &opts) || opts.retval == 0)
				break;
			/* retval 1: the CPU was filling its batch; it is done in microseconds */
		}
	}
	return now;
}

/* bbr_main's parameter count from BTF, or -1 with the reason */
static int bbr_main_nargs(char *why, size_t len, int *code)
{
	char module[64];
	int n = bpfu_func_nargs("bbr_main", module, sizeof(module));

	if (n == -ENODATA) {
		snprintf(why, len, "%s", bpfu_btf_missing() ?: "the kernel's BTF cannot be read");
		*code = TK_EXIT_NOTSUP;
		return -1;
	}
	if (n < 0) {
		snprintf(why, len, "bbr_main is not in the kernel's BTF: BBR is neither built in "
				   "nor loaded (try: modprobe tcp_bbr)");
		*code = TK_EXIT_NOTSUP;
		return -1;
	}
	if (n != 2 && n != 4) {
		snprintf(why, len, "bbr_main has %d parameters in this kernel; bbrtrace knows the "
				   "(sk, rs) and (sk, ack, flag, rs) forms", n);
		*code = TK_EXIT_NOTSUP;
		return -1;
	}
	vlog("bbr_main(%s) found in %s BTF", n == 4 ? "sk, ack, flag, rs" : "sk, rs", module);
	return n;
}

static int finish_open(struct bt_backend *b, struct bpf_map *events, char *why, size_t len)
{
	b->rb = ring_buffer__new(bpf_map__fd(events), on_ringbuf, b, NULL);
	if (!b->rb) {
		snprintf(why, len, "cannot open the ring buffer: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* --- struct_ops ------------------------------------------------------------------ */

/* the struct_ops maps named bbr_traced that exist in the kernel */
static int list_bbr_traced_maps(__u32 *ids, __u32 *flags, int max)
{
	__u32 id = 0;
	int n = 0;

	while (n < max && bpf_map_get_next_id(id, &id) == 0) {
		struct bpf_map_info info = {};
		__u32 ilen = sizeof(info);
		int fd = bpf_map_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &ilen) &&
		    info.type == BPF_MAP_TYPE_STRUCT_OPS && !strcmp(info.name, "bbr_traced")) {
			ids[n] = id;
			flags[n] = info.map_flags;
			n++;
		}
		close(fd);
	}
	return n;
}

/* the first process other than us holding an fd on map `id` (map or link fd) */
static int map_holder(__u32 id, char *comm, size_t len)
{
	DIR *proc = opendir("/proc");
	struct dirent *pe;
	char want[32];
	int found = 0;

	if (!proc)
		return 0;
	snprintf(want, sizeof(want), "map_id:\t%u\n", id);
	while (!found && (pe = readdir(proc))) {
		int pid = atoi(pe->d_name);
		char path[300];
		struct dirent *fe;
		DIR *fds;

		if (pid <= 0 || pid == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fdinfo", pid);
		fds = opendir(path);
		if (!fds)
			continue;
		while (!found && (fe = readdir(fds))) {
			char info[1024] = "";
			FILE *f;
			size_t n;

			if (fe->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", pid, fe->d_name);
			f = fopen(path, "r");
			if (!f)
				continue;
			n = fread(info, 1, sizeof(info) - 1, f);
			info[n] = '\0';
			fclose(f);
			if (strstr(info, want))
				found = pid;
		}
		closedir(fds);
	}
	closedir(proc);
	if (found) {
		char path[64];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/comm", found);
		comm[0] = '\0';
		f = fopen(path, "r");
		if (f) {
			if (fgets(comm, (int)len, f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
	}
	return found;
}

static bool cc_available(const char *name)
{
	char buf[512] = "", *tok, *save = NULL;
	FILE *f = fopen("/proc/sys/net/ipv4/tcp_available_congestion_control", "r");

	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	for (tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
		if (!strcmp(tok, name))
			return true;
	return false;
}

int bt_stale_check(char *why, size_t len)
{
	__u32 ids[8], flags[8];
	char comm[32];
	int n, pid;

	if (!cc_available("bbr_traced"))
		return 0;
	n = list_bbr_traced_maps(ids, flags, 8);
	for (int i = 0; i < n; i++) {
		pid = map_holder(ids[i], comm, sizeof(comm));
		if (pid) {
			snprintf(why, len, "bbr_traced is already registered by pid %d (%s); one "
					   "struct_ops tracer runs at a time", pid, comm);
			return -1;
		}
	}
	if (n) {
		snprintf(why, len, "a stale bbr_traced is registered (struct_ops map id %u, held by no "
				   "process: left by an older run or by 'bpftool struct_ops register'); "
				   "remove it with: bbrtrace --cleanup", ids[0]);
		return -1;
	}
	snprintf(why, len, "a congestion control named bbr_traced exists but is not a BPF "
			   "struct_ops map (a kernel module?); bbrtrace cannot use that name");
	return -1;
}

int bt_stale_cleanup(int *removed, char *why, size_t len)
{
	__u32 ids[8], flags[8], zero = 0;
	char comm[32];
	int n = list_bbr_traced_maps(ids, flags, 8);

	*removed = 0;
	for (int i = 0; i < n; i++) {
		int pid = map_holder(ids[i], comm, sizeof(comm));
		int fd;

		if (pid) {
			snprintf(why, len, "bbr_traced (map id %u) belongs to running pid %d (%s); stop "
					   "that process instead", ids[i], pid, comm);
			return -1;
		}
		fd = bpf_map_get_fd_by_id(ids[i]);
		if (fd < 0)
			continue;
		/* unregisters a struct_ops map registered without a link */
		if (bpf_map_delete_elem(fd, &zero) == 0) {
			ilog("removed stale bbr_traced (struct_ops map id %u)", ids[i]);
			(*removed)++;
		} else if (errno != ENOTSUPP && errno != EINVAL && errno != ENOENT) {
			snprintf(why, len, "cannot unregister bbr_traced (map id %u): %s", ids[i],
				 strerror(errno));
			close(fd);
			return -1;
		}
		close(fd);
	}
	return 0;
}

static int register_struct_ops(struct bt_backend *b, struct bpf_map *map, bool use_link,
			       struct bt_guard *guard, char *why, size_t len)
{
	struct bpf_link *l;
	int fd, err;

	/* without a link nothing unregisters bbr_traced when we die: the
	 * guardian must know of it before it exists */
	if (!use_link && (err = guard ? bt_guard_watch_struct_ops(guard, bpf_map__fd(map)) : -ENOSYS)) {
		snprintf(why, len, "cannot start the guardian process that would unregister "
				   "bbr_traced if bbrtrace were killed: %s", strerror(-err));
		return -1;
	}
	l = bpf_map__attach_struct_ops(map);
	if (!l) {
		int err = errno;

		snprintf(why, len, "registering bbr_traced failed: %s",
			 err == EEXIST ? "a congestion control of that name exists" : strerror(err));
		return -1;
	}
	if (!use_link) {
		b->so_plain = l;
		return 0;
	}
	/*
	 * With BPF_F_LINK, the map update above only validated the ops. libbpf
	 * 1.1 has no struct_ops links, so create the link here: the kernel
	 * unregisters bbr_traced when its last fd closes, even after SIGKILL.
	 */
	bpf_link__disconnect(l);
	bpf_link__destroy(l);
	fd = bpf_link_create(bpf_map__fd(map), 0, BT_ATTACH_STRUCT_OPS, NULL);
	if (fd < 0) {
		int err = errno;

		snprintf(why, len, "registering bbr_traced failed: %s",
			 err == EEXIST ? "a congestion control of that name exists" : strerror(err));
		return -1;
	}
	b->so_link_fd = fd;
	return 0;
}

#define BT_OPEN_STRUCT_OPS(skname, field, struct_map)                                      \
	do {                                                                             \
		b->field = skname##__open();                                             \
		if (!b->field) {                                                         \
			*code = tk_load_refusal(-errno, "struct_ops object", why, len);          \
			return -1;                                                       \
		}                                                                        \
		BT_SET_RODATA(b->field, cfg);                                            \
		BT_SET_WRITES(b->field, b);                                              \
		b->field->rodata->targ_tap = cfg->tap;                                   \
		bpf_map__set_max_entries(b->field->maps.events, cfg->ringbuf_bytes);      \
		if (use_link)                                                            \
			bpf_map__set_map_flags(b->field->maps.struct_map,                \
					       bpf_map__map_flags(b->field->maps.struct_map) | \
						       BPF_F_LINK);                      \
		err = skname##__load(b->field);                                          \
		if (err) {                                                               \
			*code = tk_load_refusal(err, "struct_ops congestion control", why, len); \
			return -1;                                                       \
		}                                                                        \
		b->obj = b->field->obj;                                                  \
		b->counters = b->field->maps.counters;                                   \
		events = b->field->maps.events;                                          \
		ops = b->field->maps.struct_map;                                         \
		cookie_prog = b->field->progs.bt_sock_state;                          \
		write_prog = b->write_hook ? (b->write_hook[0] == 't' ? b->field->progs.bt_write_tp \
								      : b->field->progs.bt_write_fexit) \
					   : NULL;                                       \
		b->flush = b->field->progs.bt_flush;                                     \
	} while (0)

static int open_struct_ops(struct bt_backend *b, const struct bt_config *cfg, char *why, size_t len,
			   int *code)
{
	struct bpf_program *cookie_prog, *write_prog;
	struct bpf_map *events, *ops;
	bool use_link;
	int nargs, err;

	nargs = bbr_main_nargs(why, len, code);
	if (nargs < 0)
		return -1;
	if (!bpfu_btf_has_type("bpf_struct_ops_tcp_congestion_ops", BTF_KIND_STRUCT)) {
		snprintf(why, len, "this kernel cannot register BPF congestion controls (no "
				   "struct_ops for tcp_congestion_ops; needs 5.6+)");
		*code = TK_EXIT_NOTSUP;
		return -1;
	}
	if (!cfg->load_only && bt_stale_check(why, len)) {
		*code = TK_EXIT_FAIL;
		return -1;
	}
	/* struct_ops links arrived in 6.4 (commit 68b04864ca42 "bpf: Create links
	 * for BPF struct_ops maps") */
	use_link = bpfu_btf_has_type("bpf_struct_ops_link", BTF_KIND_STRUCT);
	if (!use_link)
		vlog("this kernel has no struct_ops links: a guardian process unregisters "
		     "bbr_traced if bbrtrace is killed");
	choose_write_hook(b, cfg);
	if (nargs == 4)
		BT_OPEN_STRUCT_OPS(bbr_traced_bpf, so4, bbr_traced);
	else
		BT_OPEN_STRUCT_OPS(bbr_traced_pre610_bpf, so2, bbr_traced);
	if (cfg->load_only)
		return 0;
	b->cookie_link = bpf_program__attach(cookie_prog);
	if (!b->cookie_link) {
		snprintf(why, len, "attaching tp_btf/inet_sock_set_state failed: %s", strerror(errno));
		*code = TK_EXIT_NOTSUP;
		return -1;
	}
	if (write_prog) {
		b->write_link = bpf_program__attach(write_prog);
		if (!b->write_link) {
			snprintf(why, len, "attaching the write tap (%s) failed: %s", b->write_hook,
				 strerror(errno));
			*code = TK_EXIT_NOTSUP;
			return -1;
		}
	}
	if (register_struct_ops(b, ops, use_link, cfg->guard, why, len)) {
		*code = TK_EXIT_FAIL;
		return -1;
	}
	return finish_open(b, events, why, len);
}

/* --- fentry and kprobe ---------------------------------------------------------------- */

/* what the two passive backends share once their object is loaded */
static int tap_attach(struct bt_backend *b, struct bpf_object *obj, struct bpf_object_skeleton *skel,
		      const struct bt_config *cfg, const char *what, char *why, size_t len,
		      int *code)
{
	int err;

	b->obj = obj;
	b->counters = bpf_object__find_map_by_name(obj, "counters");
	b->flush = bpf_object__find_program_by_name(obj, "bt_flush");
	if (cfg->load_only)
		return 0;
	err = bpf_object__attach_skeleton(skel);
	if (err) {
		snprintf(why, len, "attaching %s to bbr_main failed: %s", what, strerror(-err));
		*code = TK_EXIT_NOTSUP;
		return -1;
	}
	return finish_open(b, bpf_object__find_map_by_name(obj, "events"), why, len);
}

static int open_fentry(struct bt_backend *b, const struct bt_config *cfg, char *why, size_t len,
		       int *code)
{
	struct bbrtrace_fentry_bpf *s;
	int nargs, err;

	nargs = bbr_main_nargs(why, len, code);
	if (nargs < 0)
		return -1;
	s = b->fe = bbrtrace_fentry_bpf__open();
	if (!s) {
		*code = tk_load_refusal(-errno, "fentry object", why, len);
		return -1;
	}
	bpf_program__set_autoload(s->progs.bt_fentry4, nargs == 4);
	bpf_program__set_autoload(s->progs.bt_fexit4, nargs == 4);
	bpf_program__set_autoload(s->progs.bt_fentry2, nargs == 2);
	bpf_program__set_autoload(s->progs.bt_fexit2, nargs == 2);
	BT_SET_RODATA(s, cfg);
	choose_write_hook(b, cfg);
	BT_SET_WRITES(s, b);
	bpf_map__set_max_entries(s->maps.events, cfg->ringbuf_bytes);
	err = bbrtrace_fentry_bpf__load(s);
	if (err) {
		*code = tk_load_refusal(err, "fentry/fexit programs", why, len);
		return -1;
	}
	return tap_attach(b, s->obj, s->skeleton, cfg, "fentry/fexit", why, len, code);
}

/* --- kprobe ------------------------------------------------------------------------ */

static int open_kprobe(struct bt_backend *b, const struct bt_config *cfg, char *why, size_t len,
		       int *code)
{
	struct bbrtrace_kprobe_bpf *s;
	const char *missing;
	int nargs, err;

	missing = bpfu_kprobe_missing();
	if (missing && !cfg->load_only) {
		snprintf(why, len, "%s", missing);
		*code = TK_EXIT_NOTSUP;
		return -1;
	}
	nargs = bbr_main_nargs(why, len, code);
	if (nargs < 0)
		return -1;
	s = b->kp = bbrtrace_kprobe_bpf__open();
	if (!s) {
		*code = tk_load_refusal(-errno, "kprobe object", why, len);
		return -1;
	}
	BT_SET_RODATA(s, cfg);
	choose_write_hook(b, cfg);
	BT_SET_WRITES(s, b);
	s->rodata->targ_rs_arg = nargs == 2 ? 2 : 4;
	bpf_map__set_max_entries(s->maps.events, cfg->ringbuf_bytes);
	err = bbrtrace_kprobe_bpf__load(s);
	if (err) {
		*code = tk_load_refusal(err, "kprobe programs", why, len);
		return -1;
	}
	return tap_attach(b, s->obj, s->skeleton, cfg, "kprobes", why, len, code);
}

/* --- common ------------------------------------------------------------------------ */

struct bt_backend *bt_backend_open(enum bt_backend_kind kind, const struct bt_config *cfg,
				   bt_event_fn fn, void *ctx, char *why, size_t len, int *code)
{
	struct bt_backend *b = calloc(1, sizeof(*b));
	int err = -1;

	if (!b) {
		snprintf(why, len, "out of memory");
		*code = TK_EXIT_FAIL;
		return NULL;
	}
	b->kind = kind;
	b->so_link_fd = -1;
	b->ncpus = libbpf_num_possible_cpus();
	b->fn = fn;
	b->ctx = ctx;
	*code = TK_EXIT_FAIL;
	switch (kind) {
	case BT_STRUCT_OPS: err = open_struct_ops(b, cfg, why, len, code); break;
	case BT_FENTRY: err = open_fentry(b, cfg, why, len, code); break;
	case BT_KPROBE: err = open_kprobe(b, cfg, why, len, code); break;
	case BT_AUTO: snprintf(why, len, "internal error: auto is not a backend"); break;
	}
	if (err) {
		bt_backend_close(b);
		return NULL;
	}
	*code = TK_EXIT_OK;
	return b;
}

void bt_backend_set_ahead(struct bt_backend *b, bt_reorder_ahead_fn ahead, void *ctx)
{
	bt_reorder_set_ahead(&b->reorder, ahead, ctx);
}

/*
 * Waits for data or the timeout, then empties every CPU's batch and hands
 * on, in time order, all events older than the moment the flush began.
 */
int bt_backend_poll(struct bt_backend *b, int timeout_ms)
{
	uint64_t before;
	int err;

	err = ring_buffer__poll(b->rb, timeout_ms);
	if (err < 0)
		return err;
	/* flushing every CPU's batch is an IPI to each: at most every
	 * BT_FLUSH_EVERY_NS, however often the ring wakes the reader; between
	 * flushes the events wait here, in order (a busy reader woke 20 to 40
	 * times a second, and the IPIs took 15% of its CPU) */
	if (err > 0 && tk_mono_ns() - b->flushed_ns < BT_FLUSH_EVERY_NS)
		return 0;
	before = flush_cpus(b);
	b->flushed_ns = tk_mono_ns();
	err = ring_buffer__consume(b->rb);
	if (err < 0)
		return err;
	return (int)bt_reorder_release(&b->reorder, before, b->fn, b->ctx);
}

int bt_backend_drain(struct bt_backend *b)
{
	int err;

	if (!b->rb)
		return 0;
	flush_cpus(b);
	err = ring_buffer__consume(b->rb);
	bt_reorder_release(&b->reorder, UINT64_MAX, b->fn, b->ctx);
	return err < 0 ? err : 0;
}

uint64_t bt_backend_counter(struct bt_backend *b, enum bt_counter c)
{
	return b->counters ? bpfu_percpu_sum(bpf_map__fd(b->counters), c) : 0;
}

uint64_t bt_backend_samples_lost(struct bt_backend *b)
{
	return bt_backend_counter(b, BT_CNT_LOST) + bt_backend_counter(b, BT_CNT_STACK);
}

enum bt_backend_kind bt_backend_kind(const struct bt_backend *b) { return b->kind; }

const char *bt_backend_write_hook(const struct bt_backend *b, const char **why)
{
	*why = b->write_why;
	return b->write_hook;
}

int bt_backend_progs(struct bt_backend *b, int *fds, const char **names, int max)
{
	struct bpf_program *p;
	int n = 0;

	if (!b->obj)
		return 0;
	bpf_object__for_each_program(p, b->obj) {
		if (n >= max)
			break;
		if (bpf_program__fd(p) < 0)
			continue;
		fds[n] = bpf_program__fd(p);
		names[n] = bpf_program__name(p);
		n++;
	}
	return n;
}

void bt_backend_close(struct bt_backend *b)
{
	if (!b)
		return;
	ring_buffer__free(b->rb);
	bt_reorder_free(&b->reorder);
	if (b->so_link_fd >= 0)
		close(b->so_link_fd); /* unregisters bbr_traced */
	bpf_link__destroy(b->so_plain);
	bpf_link__destroy(b->cookie_link);
	bpf_link__destroy(b->write_link);
	bbr_traced_bpf__destroy(b->so4);
	bbr_traced_pre610_bpf__destroy(b->so2);
	bbrtrace_fentry_bpf__destroy(b->fe);
	bbrtrace_kprobe_bpf__destroy(b->kp);
	free(b);
}
