/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bbrtrace's kernel backends behind one interface. Each backend is a small
 * object with a fixed lifecycle: bt_backend_open() probes, loads and attaches
 * (or explains in one phrase why it cannot), bt_backend_poll() delivers
 * events, bt_backend_close() detaches everything.
 */
#ifndef BBRTRACE_BACKEND_H
#define BBRTRACE_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bbrtrace/reorder.h"
#include "bpf/contract/bbrtrace.h"

enum bt_backend_kind { BT_AUTO = 0, BT_FENTRY, BT_KPROBE, BT_STRUCT_OPS };
extern const char *const bt_backend_names[]; /* NULL-terminated, indexed by kind */

struct bt_filter {
	bool has_saddr, has_daddr;
	uint8_t saddr[16], daddr[16]; /* IPv4 as ::ffff:a.b.c.d */
	uint16_t sport, dport;        /* 0: any */
	uint64_t cookie;              /* 0: any */
};

struct bt_guard;

struct bt_config {
	struct bt_filter filter;
	struct bt_guard *guard;       /* undoes a link-less struct_ops registration if we die */
	uint32_t ringbuf_bytes;       /* power of two */
	uint32_t wakeup_bytes;
	bool tap;                     /* false: struct_ops runs BBR without the tap (bench reference) */
	bool load_only;               /* load (verify) the programs, do not attach */
	bool writes;                  /* also trace the flows' writes (the write tap, for stalls) */
	bool closes;                  /* also send each traced flow's close (the detector's) */
};

typedef int (*bt_event_fn)(void *ctx, const struct bt_event *e);

struct bt_backend;

/*
 * Opens one backend (not BT_AUTO). On failure returns NULL, puts the reason in
 * `why` (a phrase without the backend name, e.g. "this kernel has no kprobe
 * support (...)") and a TK_EXIT_* code in *code.
 */
struct bt_backend *bt_backend_open(enum bt_backend_kind kind, const struct bt_config *cfg,
				   bt_event_fn fn, void *ctx, char *why, size_t len, int *code);
/* the consumer's hints for the events handed on soon, ahead(ctx, ...)
 * (bbrtrace/reorder.h), or NULL for none */
void bt_backend_set_ahead(struct bt_backend *b, bt_reorder_ahead_fn ahead, void *ctx);
/* events consumed, 0 on timeout, -EINTR when interrupted, other -errno on error */
int bt_backend_poll(struct bt_backend *b, int timeout_ms);
/* consume what the ring buffer still holds */
int bt_backend_drain(struct bt_backend *b);
uint64_t bt_backend_counter(struct bt_backend *b, enum bt_counter c);
/* ACKs whose sample never reached user space: the ring buffer was full, or
 * the kprobe/fentry exit found no entry to pair with. The one count of lost
 * samples that the summary, the metrics and the live line report */
uint64_t bt_backend_samples_lost(struct bt_backend *b);
/* the hook of the write tap ("tp_btf/sock_send_length", "fexit/tcp_sendmsg"), or
 * NULL with why it is off in *why (not asked, or what the kernel lacks) */
const char *bt_backend_write_hook(const struct bt_backend *b, const char **why);
enum bt_backend_kind bt_backend_kind(const struct bt_backend *b);
/* the loaded programs, for bpf_stats; returns how many were filled */
int bt_backend_progs(struct bt_backend *b, int *fds, const char **names, int max);
void bt_backend_close(struct bt_backend *b);

/*
 * struct_ops housekeeping. A bbr_traced registered without a BPF link (by
 * libbpf < 1.3, bpftool struct_ops register, or kernels before 6.4) stays
 * after its process dies. bt_stale_check() returns 0 when no bbr_traced is
 * registered, else -1 with a sentence in `why`; bt_stale_cleanup() removes
 * registrations that no live process holds.
 */
int bt_stale_check(char *why, size_t len);
int bt_stale_cleanup(int *removed, char *why, size_t len);

#endif
