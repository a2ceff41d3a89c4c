// SPDX-License-Identifier: GPL-2.0-only
/*
 * udpdwell's three backends (fentry, kprobe, tracepoint): each checks the
 * kernel's BTF for its hooks, loads and attaches its object and maps the
 * socket states it shares with the programs; the chooser picks one.
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

/* the settings every backend shares; s is any of the three skeletons */
#define UD_SETUP(s, o, legacy)                                                           \
	do {                                                                             \
		(s)->rodata->targ_port_lo = (o)->port_lo;                                \
		(s)->rodata->targ_port_hi = (o)->port_hi;                                \
		(s)->rodata->targ_reason_rcvbuff = (o)->reason_rcvbuff;                  \
		(s)->rodata->targ_reason_proto_mem = (o)->reason_proto_mem;              \
		(s)->rodata->targ_max_sockets = (o)->max_sockets;                        \
		bpf_map__set_max_entries((s)->maps.ud_state, (o)->max_sockets);          \
		bpf_map__set_max_entries((s)->maps.ud_stats, (o)->max_sockets);          \
		bpf_map__set_max_entries((s)->maps.ud_drops, 4 * (o)->max_sockets);      \
		bpf_program__set_autoload((s)->progs.ud_kfree_skb, !(legacy));           \
		bpf_program__set_autoload((s)->progs.ud_udp_fail_queue, (legacy));       \
	} while (0)

#define UD_FILL(b, s, k)                                                                 \
	do {                                                                             \
		(b)->kind = (k);                                                         \
		(b)->skel = (s);                                                         \
		(b)->obj = (s)->obj;                                                     \
		(b)->stats_fd = bpf_map__fd((s)->maps.ud_stats);                         \
		(b)->index_fd = -1;                                                      \
		(b)->drops_fd = bpf_map__fd((s)->maps.ud_drops);                         \
		(b)->counters_fd = bpf_map__fd((s)->maps.ud_counters);                   \
		(b)->epoch = &(s)->bss->ud_epoch;                                        \
	} while (0)

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

static int open_fentry(const struct ud_bpf_opts *o, struct ud_bpf *b, char *why, size_t len)
{
	struct udpdwell_fentry_bpf *s;
	bool legacy;
	int err, flags_arg;

	if (drops_plan(o, &legacy, why, len))
		return -1;
	if ((flags_arg = recv_flags_arg(why, len)) < 0)
		return -1;
	if (!have_func("__udp_enqueue_schedule_skb")) {
		snprintf(why, len, "__udp_enqueue_schedule_skb() is not in the kernel's BTF");
		return -1;
	}
	s = udpdwell_fentry_bpf__open();
	if (!s)
		return tk_load_refusal(-errno, "BPF object", why, len);
	UD_SETUP(s, o, legacy);
	s->rodata->targ_recv_flags_arg = (__u32)flags_arg;
	s->rodata->targ_rdonly_cast = have_rdonly_cast();
	if (!have_func("udpv6_recvmsg"))
		bpf_program__set_autoload(s->progs.ud_fexit_recvmsg6, false);
	err = udpdwell_fentry_bpf__load(s);
	if (err) {
		udpdwell_fentry_bpf__destroy(s);
		return tk_load_refusal(err, "programs", why, len);
	}
	err = udpdwell_fentry_bpf__attach(s);
	if (err) {
		udpdwell_fentry_bpf__destroy(s);
		return tk_attach_refusal(err, "programs", why, len);
	}
	if (map_state(b, s->maps.ud_state, why, len)) {
		udpdwell_fentry_bpf__destroy(s);
		return -1;
	}
	UD_FILL(b, s, UD_BACKEND_FENTRY);
	b->legacy_drops = legacy;
	return 0;
}

static int count_loaded(struct bpf_object *obj)
{
	struct bpf_program *p;
	int n = 0;

	bpf_object__for_each_program(p, obj)
		n += bpf_program__fd(p) >= 0;
	return n;
}

static int open_kprobe(const struct ud_bpf_opts *o, struct ud_bpf *b, char *why, size_t len)
{
	struct udpdwell_kprobe_bpf *s;
	const char *missing;
	bool legacy;
	int err, flags_arg;

	if (drops_plan(o, &legacy, why, len))
		return -1;
	if ((flags_arg = recv_flags_arg(why, len)) < 0)
		return -1;
	s = udpdwell_kprobe_bpf__open();
	if (!s)
		return tk_load_refusal(-errno, "BPF object", why, len);
	UD_SETUP(s, o, legacy);
	bpf_map__set_max_entries(s->maps.ud_index, 2 * o->max_sockets);
	s->rodata->targ_recv_flags_arg = (__u32)flags_arg;
	if (!have_func("udpv6_recvmsg")) {
		bpf_program__set_autoload(s->progs.ud_kp_recvmsg6, false);
		bpf_program__set_autoload(s->progs.ud_krp_recvmsg6, false);
	}
	err = udpdwell_kprobe_bpf__load(s);
	if (err) {
		udpdwell_kprobe_bpf__destroy(s);
		return tk_load_refusal(err, "programs", why, len);
	}
	vlog("kprobe: the verifier accepted %d programs", count_loaded(s->obj));
	err = udpdwell_kprobe_bpf__attach(s);
	if (err) {
		int n = count_loaded(s->obj);

		missing = bpfu_kprobe_missing();
		udpdwell_kprobe_bpf__destroy(s);
		if (missing) {
			snprintf(why, len, "the %d programs loaded but cannot attach: %s", n, missing);
			return TK_EXIT_NOTSUP;
		}
		return tk_attach_refusal(err, "programs", why, len);
	}
	if (map_state(b, s->maps.ud_state, why, len)) {
		udpdwell_kprobe_bpf__destroy(s);
		return -1;
	}
	UD_FILL(b, s, UD_BACKEND_KPROBE);
	b->index_fd = bpf_map__fd(s->maps.ud_index);
	b->legacy_drops = legacy;
	return 0;
}

static int open_tracepoint(const struct ud_bpf_opts *o, struct ud_bpf *b, char *why, size_t len)
{
	static const char *const needed[] = { "sk_data_ready", "sock_recv_length" };
	struct udpdwell_tp_bpf *s;
	bool legacy;
	int err;

	for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++) {
		if (ud_tp_nargs(needed[i]) < 1) {
			snprintf(why, len, "the kernel has no sock:%s tracepoint (6.3+)", needed[i]);
			return -1;
		}
	}
	if (drops_plan(o, &legacy, why, len))
		return -1;
	s = udpdwell_tp_bpf__open();
	if (!s)
		return tk_load_refusal(-errno, "BPF object", why, len);
	UD_SETUP(s, o, legacy);
	s->rodata->targ_rdonly_cast = have_rdonly_cast();
	err = udpdwell_tp_bpf__load(s);
	if (err) {
		udpdwell_tp_bpf__destroy(s);
		return tk_load_refusal(err, "programs", why, len);
	}
	err = udpdwell_tp_bpf__attach(s);
	if (err) {
		udpdwell_tp_bpf__destroy(s);
		return tk_attach_refusal(err, "programs", why, len);
	}
	if (map_state(b, s->maps.ud_state, why, len)) {
		udpdwell_tp_bpf__destroy(s);
		return -1;
	}
	UD_FILL(b, s, UD_BACKEND_TRACEPOINT);
	b->legacy_drops = legacy;
	return 0;
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
	if (kind == UD_BACKEND_FENTRY)
		err = open_fentry(c->o, c->b, why, len);
	else if (kind == UD_BACKEND_KPROBE)
		err = open_kprobe(c->o, c->b, why, len);
	else
		err = open_tracepoint(c->o, c->b, why, len);
	return err < 0 ? TK_EXIT_NOTSUP : err;
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
	if (!b->skel)
		return;
	switch (b->kind) {
	case UD_BACKEND_FENTRY: udpdwell_fentry_bpf__destroy(b->skel); break;
	case UD_BACKEND_KPROBE: udpdwell_kprobe_bpf__destroy(b->skel); break;
	case UD_BACKEND_TRACEPOINT: udpdwell_tp_bpf__destroy(b->skel); break;
	case UD_BACKEND_AUTO: break;
	}
	b->skel = NULL;
}
