/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * udpdwell's three kernel backends behind one handle: open, set the
 * options, load, attach; `auto` tries fentry, then kprobe, then tracepoint,
 * and keeps each refusal in words for the one line that says which backend
 * runs and why the others did not.
 */
#ifndef UD_BACKEND_H
#define UD_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

enum ud_backend { UD_BACKEND_AUTO, UD_BACKEND_FENTRY, UD_BACKEND_KPROBE, UD_BACKEND_TRACEPOINT };

/* "auto", "fentry", "kprobe", "tracepoint", NULL (the --backend choices) */
extern const char *const ud_backend_names[];

struct ud_bpf_opts {
	uint16_t port_lo, port_hi;
	uint32_t max_sockets;
	bool legacy_drops;        /* attribute drops through udp_fail_queue_rcv_skb */
	uint32_t reason_rcvbuff;  /* the kernel's SKB_DROP_REASON_* values */
	uint32_t reason_proto_mem;
};

struct bpf_object;
struct ud_sock;

struct ud_bpf {
	enum ud_backend kind;
	void *skel;
	void (*destroy)(void *skel); /* skel's own destroy */
	struct bpf_object *obj;
	struct ud_sock *state;     /* ud_state's slots, memory-mapped */
	size_t state_len;
	uint32_t nslots;
	int stats_fd;              /* ud_stats: per-CPU figures per slot */
	int index_fd;              /* ud_index (kprobe backend), else -1 */
	int drops_fd;
	int counters_fd;
	volatile __u64 *epoch;     /* the .bss variable ud_epoch, mmap'ed */
	bool legacy_drops;         /* drops come from udp:udp_fail_queue_rcv_skb */
	char summary[1792];        /* "backend tracepoint (fentry: ...; kprobe: ...)" */
};

/*
 * Opens, loads and attaches the backend asked for (or the best that works,
 * through lib/chooser). Returns TK_EXIT_OK with b->summary the line that says
 * which backend runs and why the others did not; else a TK_EXIT_* code, and
 * b->summary says why none can.
 */
int ud_bpf_open(enum ud_backend want, const struct ud_bpf_opts *o, struct ud_bpf *b);
void ud_bpf_close(struct ud_bpf *b);

/*
 * Gives back the slot of a socket found closed (key as in struct ud_entry),
 * unless the slot changed hands meanwhile. Returns true when it did.
 */
bool ud_bpf_forget(struct ud_bpf *b, uint64_t key);

/* number of arguments of tracepoint tp in the kernel's BTF, or -1 when absent */
int ud_tp_nargs(const char *tp);

#endif
