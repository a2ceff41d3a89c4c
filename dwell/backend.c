// SPDX-License-Identifier: GPL-2.0-only
/*
 * udpdwell's three backends (fentry, kprobe, tracepoint): each checks the
 * kernel's BTF for its hooks; then one path opens, configures, loads and
 * attaches its object and maps the socket states it shares with the
 * programs, with one cleanup. The chooser picks the backend.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpfutil.h"
#include "chooser.h"
#include "common.h"
#include "log.h"
#include "bpf/contract/udpdwell.h"
#include "backend.h"

#include "udpdwell_fentry.skel.h"
#include "udpdwell_kprobe.skel.h"
#include "udpdwell_tp.skel.h"

const char *const ud_backend_names[] = { "auto", "fentry", "kprobe", "tracepoint", NULL };

int ud_tp_nargs(const char *tp)
{
	struct btf *btf = bpfu_vmlinux_btf();
	const struct btf_type *t;
	char name[128];
	int id;

	if (!btf)
		return -1;
	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	id = btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF);
	if (id < 0)
		return -1;
	t = btf__type_by_id(btf, id);
	t = t ? btf__type_by_id(btf, t->type) : NULL; /* pointer */
	t = t ? btf__type_by_id(btf, t->type) : NULL; /* prototype */
	if (!t || !btf_is_func_proto(t))
		return -1;
	return btf_vlen(t) - 1; /* the first is the tracepoint's private data */
}

/* the state array, shared with the programs */
static int map_state(struct ud_bpf *b, struct bpf_map *m, char *why, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t n = bpf_map__max_entries(m);
	void *p;

	b->nslots = (uint32_t)n;
	b->state_len = (n * sizeof(struct ud_sock) + (size_t)page - 1) / (size_t)page * (size_t)page;
	p = mmap(NULL, b->state_len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(m), 0);
	if (p == MAP_FAILED) {
		snprintf(why, len, "cannot map the socket states: %s", strerror(errno));
		b->state = NULL;
		return -1;
	}
	b->state = p;
	return 0;
}

/* whether drops go through udp_fail_queue_rcv_skb; why is set when neither works */
static int drops_plan(const struct ud_bpf_opts *o, bool *legacy, char *why, size_t len)
{
	int kfree = ud_tp_nargs("kfree_skb");

	*legacy = o->legacy_drops || kfree < 4; /* skb, location, reason, rx_sk */
	if (*legacy && ud_tp_nargs("udp_fail_queue_rcv_skb") < 2) {
		snprintf(why, len, "the kernel has neither skb:kfree_skb with rx_sk nor "
				   "udp:udp_fail_queue_rcv_skb");
		return -1;
	}
	return 0;
}

/* index of flags in udp_recvmsg(); -1 with why set when it has no BTF */
static int recv_flags_arg(char *why, size_t len)
{
	char module[64];
	int n = bpfu_func_nargs("udp_recvmsg", module, sizeof(module));

	if (n == 4 || n == 5) /* sk, msg, len, flags[, addr_len] (5.19+; 6.18 has no addr_len) */
		return 3;
	if (n == 6) /* sk, msg, len, noblock, flags, addr_len */
		return 4;
	snprintf(why, len, "udp_recvmsg() is not in the kernel's BTF with a known signature");
	return -1;
}

static bool have_func(const char *f)
{
	char module[64];

	return bpfu_func_nargs(f, module, sizeof(module)) >= 0;
}

/* the kfunc that reads UDP's reader_queue from a socket pointer for free (6.2+) */
static bool have_rdonly_cast(void)
{
	if (have_func("bpf_rdonly_cast"))
		return true;
	vlog("no bpf_rdonly_cast kfunc (6.2+): reader_queue is read with bpf_probe_read_kernel");
	return false;
}

/*
 * What a backend's kernel must have, found before anything is loaded: how
 * drops are seen, where udp_recvmsg() keeps its flags, the kfunc that reads
 * reader_queue, IPv6's receive function.
 */
struct hooks {
	bool legacy;        /* drops from udp:udp_fail_queue_rcv_skb */
	int flags_arg;      /* udp_recvmsg()'s flags argument (fentry, kprobe) */
	bool rdonly_cast;   /* bpf_rdonly_cast (fentry, tracepoint) */
	bool have_v6;       /* udpv6_recvmsg() in BTF (fentry, kprobe) */
};

static int hooks_fentry(const struct ud_bpf_opts *o, struct hooks *h, char *why, size_t len)
{
	if (drops_plan(o, &h->legacy, why, len) || (h->flags_arg = recv_flags_arg(why, len)) < 0)
		return -1;
	if (!have_func("__udp_enqueue_schedule_skb")) {
		snprintf(why, len, "__udp_enqueue_schedule_skb() is not in the kernel's BTF");
		return -1;
	}
	h->rdonly_cast = have_rdonly_cast();
	h->have_v6 = have_func("udpv6_recvmsg");
	return 0;
}

static int hooks_kprobe(const struct ud_bpf_opts *o, struct hooks *h, char *why, size_t len)
{
	if (drops_plan(o, &h->legacy, why, len) || (h->flags_arg = recv_flags_arg(why, len)) < 0)
		return -1;
	h->have_v6 = have_func("udpv6_recvmsg");
	return 0;
}

static int hooks_tracepoint(const struct ud_bpf_opts *o, struct hooks *h, char *why, size_t len)
{
	static const char *const needed[] = { "sk_data_ready", "sock_recv_length" };

	for (size_t i = 0; i < ARRAY_SIZE(needed); i++) {
		if (ud_tp_nargs(needed[i]) < 1) {
			snprintf(why, len, "the kernel has no sock:%s tracepoint (6.3+)", needed[i]);
			return -1;
		}
	}
	if (drops_plan(o, &h->legacy, why, len))
		return -1;
	h->rdonly_cast = have_rdonly_cast();
	return 0;
}

/* the read-only settings every object has, then those of one object; each
 * skeleton lays out its own .rodata, so each is written through its type */
#define UD_RODATA(s, o)                                                                  \
	do {                                                                             \
		(s)->rodata->targ_port_lo = (o)->port_lo;                                \
		(s)->rodata->targ_port_hi = (o)->port_hi;                                \
		(s)->rodata->targ_reason_rcvbuff = (o)->reason_rcvbuff;                  \
		(s)->rodata->targ_reason_proto_mem = (o)->reason_proto_mem;              \
		(s)->rodata->targ_max_sockets = (o)->max_sockets;                        \
	} while (0)

static void rodata_fentry(void *p, const struct ud_bpf_opts *o, const struct hooks *h)
{
	struct udpdwell_fentry_bpf *s = p;

	UD_RODATA(s, o);
	s->rodata->targ_recv_flags_arg = (__u32)h->flags_arg;
	s->rodata->targ_rdonly_cast = h->rdonly_cast;
}

static void rodata_kprobe(void *p, const struct ud_bpf_opts *o, const struct hooks *h)
{
	struct udpdwell_kprobe_bpf *s = p;

	UD_RODATA(s, o);
	s->rodata->targ_recv_flags_arg = (__u32)h->flags_arg;
}

static void rodata_tracepoint(void *p, const struct ud_bpf_opts *o, const struct hooks *h)
{
	struct udpdwell_tp_bpf *s = p;

	UD_RODATA(s, o);
	s->rodata->targ_rdonly_cast = h->rdonly_cast;
}

/* a skeleton's type-bound calls, for the one path below */
#define UD_SKEL_CALLS(name)                                                              \
	static void *name##_open(void) { return name##_bpf__open(); }                    \
	static void name##_destroy(void *s) { name##_bpf__destroy(s); }                  \
	static struct bpf_object_skeleton *name##_skel(void *s)                          \
	{                                                                                \
		return ((struct name##_bpf *)s)->skeleton;                               \
	}                                                                                \
	static volatile __u64 *name##_epoch(void *s)                                     \
	{                                                                                \
		return &((struct name##_bpf *)s)->bss->ud_epoch;                         \
	}
UD_SKEL_CALLS(udpdwell_fentry)
UD_SKEL_CALLS(udpdwell_kprobe)
UD_SKEL_CALLS(udpdwell_tp)

/* one backend: its kernel's checks, its object, the programs it leaves out
 * without IPv6, whether its programs find a socket's slot through ud_index
 * (kprobe's: it has no socket storage, so it looks the slot up by the
 * socket's address), and what a failed attach may be missing */
struct backend {
	enum ud_backend kind;
	bool uses_index;
	int (*hooks)(const struct ud_bpf_opts *o, struct hooks *h, char *why, size_t len);
	void *(*open)(void);
	void (*rodata)(void *s, const struct ud_bpf_opts *o, const struct hooks *h);
	struct bpf_object_skeleton *(*skel)(void *s);
	volatile __u64 *(*epoch)(void *s);
	void (*destroy)(void *s);
	const char *v6_progs[2];
	const char *(*attach_missing)(void);
};

static const struct backend backends[] = {
	{ UD_BACKEND_FENTRY, false, hooks_fentry, udpdwell_fentry_open, rodata_fentry, udpdwell_fentry_skel,
	  udpdwell_fentry_epoch, udpdwell_fentry_destroy, { "ud_fexit_recvmsg6" }, NULL },
	{ UD_BACKEND_KPROBE, true, hooks_kprobe, udpdwell_kprobe_open, rodata_kprobe, udpdwell_kprobe_skel,
	  udpdwell_kprobe_epoch, udpdwell_kprobe_destroy, { "ud_kp_recvmsg6", "ud_krp_recvmsg6" },
	  bpfu_kprobe_missing },
	{ UD_BACKEND_TRACEPOINT, false, hooks_tracepoint, udpdwell_tp_open, rodata_tracepoint, udpdwell_tp_skel,
	  udpdwell_tp_epoch, udpdwell_tp_destroy, { NULL }, NULL },
};

/* a map or program the table names but the object lacks is a build that does
 * not match this file: refused with its name, before anything loads, rather
 * than loaded at the wrong size or with the wrong programs */
static int set_entries(struct bpf_object *obj, const char *map, uint32_t n, char *why, size_t len)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, map);
	int err;

	if (!m) {
		snprintf(why, len, "the BPF object has no map %s: rebuild (make)", map);
		return TK_EXIT_FAIL;
	}
	err = bpf_map__set_max_entries(m, n);
	return err ? tk_load_refusal(err, map, why, len) : 0;
}

static int set_autoload(struct bpf_object *obj, const char *prog, bool on, char *why, size_t len)
{
	struct bpf_program *p = bpf_object__find_program_by_name(obj, prog);
	int err;

	if (!p) {
		snprintf(why, len, "the BPF object has no program %s: rebuild (make)", prog);
		return TK_EXIT_FAIL;
	}
	err = bpf_program__set_autoload(p, on);
	return err ? tk_load_refusal(err, prog, why, len) : 0;
}

/* the sizes and the programs to load, alike for every object: the socket
 * table's maps, one drop program of the two, no IPv6 programs without IPv6 */
static int configure(const struct backend *d, struct bpf_object *obj, const struct ud_bpf_opts *o,
		     const struct hooks *h, char *why, size_t len)
{
	int err = set_entries(obj, "ud_state", o->max_sockets, why, len);

	err = err ?: set_entries(obj, "ud_stats", o->max_sockets, why, len);
	err = err ?: set_entries(obj, "ud_drops", 4 * o->max_sockets, why, len);
	if (d->uses_index)
		err = err ?: set_entries(obj, "ud_index", 2 * o->max_sockets, why, len);
	err = err ?: set_autoload(obj, "ud_kfree_skb", !h->legacy, why, len);
	err = err ?: set_autoload(obj, "ud_udp_fail_queue", h->legacy, why, len);
	for (size_t i = 0; i < ARRAY_SIZE(d->v6_progs) && d->v6_progs[i]; i++)
		err = err ?: set_autoload(obj, d->v6_progs[i], h->have_v6, why, len);
	return err;
}

static int count_loaded(struct bpf_object *obj)
{
	struct bpf_program *p;
	int n = 0;

	bpf_object__for_each_program(p, obj)
		n += bpf_program__fd(p) >= 0;
	return n;
}

/* the file descriptors and shared memory of a loaded object */
static void fill(struct ud_bpf *b, const struct backend *d, void *s, struct bpf_object *obj, bool legacy)
{
	b->kind = d->kind;
	b->skel = s;
	b->destroy = d->destroy;
	b->obj = obj;
	b->stats_fd = bpf_map__fd(bpf_object__find_map_by_name(obj, "ud_stats"));
	b->index_fd = d->uses_index ? bpf_map__fd(bpf_object__find_map_by_name(obj, "ud_index")) : -1;
	b->drops_fd = bpf_map__fd(bpf_object__find_map_by_name(obj, "ud_drops"));
	b->counters_fd = bpf_map__fd(bpf_object__find_map_by_name(obj, "ud_counters"));
	b->epoch = d->epoch(s);
	b->legacy_drops = legacy;
}

/* open, configure, load and attach backend d, and map its socket states;
 * on failure nothing stays loaded and why says what the kernel refused */
static int open_backend(const struct backend *d, const struct ud_bpf_opts *o, struct ud_bpf *b, char *why,
			size_t len)
{
	struct hooks h = { 0 };
	struct bpf_object *obj;
	const char *missing;
	void *s;
	int err, loaded;

	if (d->hooks(o, &h, why, len))
		return -1;
	if (!(s = d->open()))
		return tk_load_refusal(-errno, "BPF object", why, len);
	obj = *d->skel(s)->obj;
	d->rodata(s, o, &h);
	if ((err = configure(d, obj, o, &h, why, len)))
		goto fail;
	if ((err = bpf_object__load_skeleton(d->skel(s)))) {
		err = tk_load_refusal(err, "programs", why, len);
		goto fail;
	}
	loaded = count_loaded(obj);
	vlog("%s: the verifier accepted %d programs", ud_backend_names[d->kind], loaded);
	if ((err = bpf_object__attach_skeleton(d->skel(s)))) {
		missing = d->attach_missing ? d->attach_missing() : NULL;
		if (missing) {
			snprintf(why, len, "the %d programs loaded but cannot attach: %s", loaded, missing);
			err = TK_EXIT_NOTSUP;
		} else {
			err = tk_attach_refusal(err, "programs", why, len);
		}
		goto fail;
	}
	if ((err = map_state(b, bpf_object__find_map_by_name(obj, "ud_state"), why, len)))
		goto fail;
	fill(b, d, s, obj, h.legacy);
	return 0;
fail:
	d->destroy(s);
	return err;
}

struct open_ctx {
	const struct ud_bpf_opts *o;
	struct ud_bpf *b;
};

/* the chooser's way to open one of udpdwell's backends */
static int open_one(int kind, void *p, char *why, size_t len)
{
	struct open_ctx *c = p;
	int err;

	memset(c->b, 0, sizeof(*c->b));
	for (size_t i = 0; i < ARRAY_SIZE(backends); i++)
		if ((int)backends[i].kind == kind) {
			err = open_backend(&backends[i], c->o, c->b, why, len);
			return err < 0 ? TK_EXIT_NOTSUP : err;
		}
	snprintf(why, len, "no such backend");
	return TK_EXIT_NOTSUP;
}

int ud_bpf_open(enum ud_backend want, const struct ud_bpf_opts *o, struct ud_bpf *b)
{
	static const int order[] = { UD_BACKEND_FENTRY, UD_BACKEND_KPROBE, UD_BACKEND_TRACEPOINT };
	struct open_ctx c = { o, b };
	const struct tk_chooser ch = { ud_backend_names, order, ARRAY_SIZE(order), open_one, &c };
	struct tk_choice choice;

	tk_choose(&ch, want, &choice);
	if (choice.kind < 0) {
		snprintf(b->summary, sizeof(b->summary), "%s", choice.line);
		return choice.code;
	}
	if (b->legacy_drops && !o->legacy_drops)
		snprintf(b->summary, sizeof(b->summary), "%s; drops: full buffer and protocol memory "
			 "only (udp:udp_fail_queue_rcv_skb), this kernel's skb:kfree_skb names no socket",
			 choice.line);
	else
		snprintf(b->summary, sizeof(b->summary), "%s", choice.line);
	return TK_EXIT_OK;
}

bool ud_bpf_forget(struct ud_bpf *b, uint64_t key)
{
	uint32_t slot = (uint32_t)key, gen = (uint32_t)(key >> 32), next = gen + 1;
	struct ud_sock *st;
	uint64_t owner;

	if (!b->state || slot >= b->nslots)
		return false;
	st = &b->state[slot];
	owner = __atomic_load_n(&st->owner, __ATOMIC_ACQUIRE);
	/* a new generation first: the programs stop using the slot */
	if (!owner || !__atomic_compare_exchange_n(&st->gen, &gen, next, false, __ATOMIC_SEQ_CST,
						   __ATOMIC_SEQ_CST))
		return false;
	if (!__atomic_compare_exchange_n(&st->owner, &owner, 0, false, __ATOMIC_SEQ_CST,
					 __ATOMIC_SEQ_CST))
		return false;
	if (b->index_fd >= 0)
		bpf_map_delete_elem(b->index_fd, &owner);
	return true;
}

void ud_bpf_close(struct ud_bpf *b)
{
	if (b->state)
		munmap(b->state, b->state_len);
	b->state = NULL;
	if (b->skel && b->destroy)
		b->destroy(b->skel);
	b->skel = NULL;
}
