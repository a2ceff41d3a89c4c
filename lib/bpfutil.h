/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What every BPF tool of the project needs around libbpf: its messages routed
 * to our log, privilege and kernel feature probes that say in words what is
 * missing, BTF lookups of kernel functions, and bpf_stats readings.
 */
#ifndef TK_BPFUTIL_H
#define TK_BPFUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* libbpf warnings at -v, its debug output at -vv; nothing at normal level */
void bpfu_setup_libbpf(void);

/*
 * 0 when this process may load BPF programs: root, or CAP_BPF with
 * CAP_PERFMON (tracing), and CAP_NET_ADMIN when net_admin says the tool needs
 * it too (struct_ops congestion controls, a namespace's default). Otherwise
 * -1 and `why` names what is missing.
 */
int bpfu_check_privileges(bool net_admin, char *why, size_t len);
/* root, or CAP_SYS_ADMIN: more than the CAP_BPF and CAP_PERFMON that suffice on most kernels */
bool bpfu_full_root(void);
/* kernel.perf_event_paranoid, INT_MIN when unreadable */
int bpfu_perf_paranoid(void);

/*
 * Where the kernel's BTF is read from: /sys/kernel/btf/vmlinux, or the file
 * named by the TK_VMLINUX_BTF environment variable (tests use it to play a
 * kernel without BTF).
 */
const char *bpfu_vmlinux_btf_path(void);

struct btf;
/* the kernel's BTF, parsed once from bpfu_vmlinux_btf_path(); NULL when unreadable */
struct btf *bpfu_vmlinux_btf(void);

/* NULL when the kernel's BTF is readable, else a sentence why not */
const char *bpfu_btf_missing(void);

/*
 * NULL when kprobes can be attached here, else why not, e.g.
 * "this kernel has no kprobe support (no kprobe PMU, no kprobe_events)".
 */
const char *bpfu_kprobe_missing(void);

/*
 * The number of parameters of kernel function `func` according to BTF:
 * vmlinux first, then every module's BTF. Returns -ENOENT when no BTF
 * knows the function, -ENODATA when there is no kernel BTF at all.
 * `module` receives "vmlinux" or the module's name.
 */
int bpfu_func_nargs(const char *func, char *module, size_t len);

/* true when kernel BTF has a type of this kind and name (BTF_KIND_*) */
bool bpfu_btf_has_type(const char *name, int kind);

/*
 * Turns on run-time statistics for as long as the returned fd is open
 * (BPF_ENABLE_STATS; kernel.bpf_stats_enabled=1 also works). -errno on error.
 */
int bpfu_enable_stats(void);

/* run_time_ns and run_cnt of a loaded program */
int bpfu_prog_stats(int prog_fd, uint64_t *run_time_ns, uint64_t *run_cnt);

/* sum of a per-CPU array map's u64 values at `key` */
uint64_t bpfu_percpu_sum(int map_fd, uint32_t key);

/* libbpf's error text, or strerror */
const char *bpfu_strerror(int err, char *buf, size_t len);

#endif
