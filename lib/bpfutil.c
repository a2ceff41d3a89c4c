// SPDX-License-Identifier: GPL-2.0-only
/*
 * The helpers around libbpf: its messages routed through our log levels,
 * privilege and kernel feature probes that say what is missing, BTF lookups
 * of kernel functions and types, and run-time statistics of programs and maps.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/capability.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpfutil.h"
#include "log.h"

/* each message whole: a verifier's log runs to many kilobytes, and its
 * last lines say why a program was refused */
static int libbpf_print(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	int need = lvl == LIBBPF_DEBUG ? LOG_DEBUG : LOG_VERBOSE;
	char *msg;
	int n;

	if (log_get_level() < need)
		return 0;
	if (vasprintf(&msg, fmt, ap) < 0)
		return 0;
	/* libbpf blames RLIMIT_MEMLOCK for every EPERM; since 5.11 memory is
	 * charged to the memory cgroup, so the hint only misleads.
	 * libbpf's own lines already start with "libbpf: " */
	n = strstr(msg, "ulimit -l") ? 0 : fprintf(stderr, "%s: %s", log_prog(), msg);
	free(msg);
	return n;
}

void bpfu_setup_libbpf(void)
{
	libbpf_set_strict_mode(LIBBPF_STRICT_ALL);
	libbpf_set_print(libbpf_print);
}

static int has_cap(int cap)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data))
		return 0;
	return !!(data[cap / 32].effective & (1U << (cap % 32)));
}

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

int bpfu_check_privileges(bool net_admin, char *why, size_t len)
{
	if (geteuid() == 0 || has_cap(CAP_SYS_ADMIN))
		return 0;
	if (has_cap(CAP_BPF) && has_cap(CAP_PERFMON) && (!net_admin || has_cap(CAP_NET_ADMIN)))
		return 0;
	snprintf(why, len, "loading BPF programs needs root (or %s); run with sudo",
		 net_admin ? "CAP_BPF, CAP_PERFMON and CAP_NET_ADMIN" : "CAP_BPF and CAP_PERFMON");
	return -1;
}

bool bpfu_full_root(void)
{
	return geteuid() == 0 || has_cap(CAP_SYS_ADMIN);
}

int bpfu_perf_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int v = INT_MIN;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = INT_MIN;
		fclose(f);
	}
	return v;
}

const char *bpfu_vmlinux_btf_path(void)
{
	const char *env = getenv("TK_VMLINUX_BTF");

	return env && *env ? env : "/sys/kernel/btf/vmlinux";
}

const char *bpfu_btf_missing(void)
{
	static char msg[256];

	if (access(bpfu_vmlinux_btf_path(), R_OK) == 0)
		return NULL;
	snprintf(msg, sizeof(msg), "this kernel has no BTF (%s is missing; it needs "
		 "CONFIG_DEBUG_INFO_BTF=y)", bpfu_vmlinux_btf_path());
	return msg;
}

const char *bpfu_kprobe_missing(void)
{
	static const char *const events[] = {
		"/sys/kernel/tracing/kprobe_events",
		"/sys/kernel/debug/tracing/kprobe_events",
	};
	bool pmu = access("/sys/bus/event_source/devices/kprobe/type", R_OK) == 0;
	bool legacy = false;

	for (size_t i = 0; i < ARRAY_SIZE(events); i++)
		legacy |= access(events[i], W_OK) == 0;
	if (pmu || legacy)
		return NULL;
	/* the kprobe PMU exists whenever the kernel has kprobe events (4.17+) */
	return "this kernel has no kprobe support (no kprobe PMU, no kprobe_events)";
}

struct btf *bpfu_vmlinux_btf(void)
{
	static struct btf *btf;
	static bool tried;

	if (!tried) {
		tried = true;
		btf = btf__parse(bpfu_vmlinux_btf_path(), NULL);
	}
	return btf;
}

static int nargs_in(const struct btf *btf, const char *func)
{
	int id = btf__find_by_name_kind(btf, func, BTF_KIND_FUNC);
	const struct btf_type *t;

	if (id < 0)
		return -ENOENT;
	t = btf__type_by_id(btf, btf__type_by_id(btf, id)->type);
	if (!t || !btf_is_func_proto(t))
		return -ENOENT;
	return btf_vlen(t);
}

int bpfu_func_nargs(const char *func, char *module, size_t len)
{
	struct btf *base = bpfu_vmlinux_btf();
	struct dirent *de;
	DIR *dir;
	int n;

	if (!base)
		return -ENODATA;
	n = nargs_in(base, func);
	if (n >= 0) {
		snprintf(module, len, "vmlinux");
		return n;
	}
	dir = opendir("/sys/kernel/btf");
	if (!dir)
		return -ENOENT;
	n = -ENOENT;
	while ((de = readdir(dir))) {
		char path[300];
		struct btf *mod;

		if (de->d_name[0] == '.' || !strcmp(de->d_name, "vmlinux"))
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/btf/%s", de->d_name);
		mod = btf__parse_split(path, base);
		if (!mod)
			continue;
		n = nargs_in(mod, func);
		btf__free(mod);
		if (n >= 0) {
			snprintf(module, len, "%s", de->d_name);
			break;
		}
	}
	closedir(dir);
	return n;
}

bool bpfu_btf_has_type(const char *name, int kind)
{
	struct btf *base = bpfu_vmlinux_btf();

	return base && btf__find_by_name_kind(base, name, kind) > 0;
}

int bpfu_enable_stats(void)
{
	int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);

	return fd < 0 ? -errno : fd;
}

int bpfu_prog_stats(int prog_fd, uint64_t *run_time_ns, uint64_t *run_cnt)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -errno;
	*run_time_ns = info.run_time_ns;
	*run_cnt = info.run_cnt;
	return 0;
}

uint64_t bpfu_percpu_sum(int map_fd, uint32_t key)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t sum = 0;
	uint64_t *vals;

	if (ncpu <= 0)
		return 0;
	vals = calloc((size_t)ncpu, sizeof(*vals));
	if (!vals)
		return 0;
	if (bpf_map_lookup_elem(map_fd, &key, vals) == 0)
		for (int i = 0; i < ncpu; i++)
			sum += vals[i];
	free(vals);
	return sum;
}

const char *bpfu_strerror(int err, char *buf, size_t len)
{
	if (err < 0)
		err = -err;
	if (libbpf_strerror(err, buf, len))
		snprintf(buf, len, "%s", strerror(err));
	return buf;
}
