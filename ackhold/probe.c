// SPDX-License-Identifier: GPL-2.0-only
/*
 * ackhold's BPF side: the kernel's checks, the programs configured, loaded
 * and attached, the ring buffer, the counters and the open flows.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpfutil.h"
#include "common.h"
#include "log.h"
#include "progstats.h"

#include "ackhold/probe.h"
#include "ackhold.skel.h"

/* the tracepoints the programs attach to, in the kernel's BTF as btf_trace_NAME */
static const char *const tracepoints[] = { "tcp_probe",          "net_dev_start_xmit", "net_dev_queue",
					   "timer_expire_entry", "timer_expire_exit",  "tcp_destroy_sock" };

/* the address of tcp_delack_timer, the delayed-ACK timer's function; 0 when
 * /proc/kallsyms does not show it (kptr_restrict hides addresses from all
 * but CAP_SYSLOG: all zero) */
static uint64_t delack_timer_addr(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[256], name[128], type;
	uint64_t addr = 0, a;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%" SCNx64 " %c %127s", &a, &type, name) == 3 && !strcmp(name, "tcp_delack_timer")) {
			addr = a;
			break;
		}
	fclose(f);
	return addr;
}

/* privileges, BTF and the tracepoints: TK_EXIT_OK or the code, said */
static int check_kernel(void)
{
	const char *nobtf;
	char why[512];

	if (bpfu_check_privileges(false, why, sizeof(why))) {
		elog("%s", why);
		return TK_EXIT_NOPERM;
	}
	if ((nobtf = bpfu_btf_missing())) {
		elog("%s", nobtf);
		return TK_EXIT_NOTSUP;
	}
	for (size_t i = 0; i < ARRAY_SIZE(tracepoints); i++) {
		char type[64];

		snprintf(type, sizeof(type), "btf_trace_%s", tracepoints[i]);
		if (!bpfu_btf_has_type(type, BTF_KIND_TYPEDEF)) {
			elog("this kernel has no tracepoint %s (not in its BTF as %s)", tracepoints[i], type);
			return TK_EXIT_NOTSUP;
		}
	}
	return TK_EXIT_OK;
}

static int on_record(void *ctx, void *data, size_t len)
{
	struct ah_probe *p = ctx;

	if (len < sizeof(struct ah_rec))
		return 0;
	return p->fn(p->ctx, data);
}

/* rodata and map sizes from the options */
static int configure(struct ah_probe *p, const struct options *o)
{
	struct ackhold_bpf *s = p->skel;
	uint64_t fn = delack_timer_addr();

	if (!fn) {
		elog("cannot read tcp_delack_timer's address in /proc/kallsyms (kernel.kptr_restrict "
		     "hides addresses without CAP_SYSLOG): run as root, or add CAP_SYSLOG");
		return TK_EXIT_NOPERM;
	}
	for (uint32_t i = 0; i < o->nports; i++)
		s->rodata->ah_ports[i] = o->ports[i];
	s->rodata->ah_nports = o->nports;
	s->rodata->ah_min_hold_ns = (uint64_t)(o->min_hold_ms * TK_NSEC_PER_MSEC_F);
	s->rodata->ah_delack_fn = fn;
	if (bpf_map__set_max_entries(s->maps.ah_flows, o->max_flows)) {
		elog("cannot size the flows map");
		return TK_EXIT_FAIL;
	}
	vlog("tcp_delack_timer at 0x%" PRIx64 "; %u port(s); holds reported from %g ms", fn, o->nports,
	     o->min_hold_ms);
	return TK_EXIT_OK;
}

int ah_probe_open(struct ah_probe *p, const struct options *o, ah_rec_fn fn, void *ctx)
{
	char buf[256];
	int code = check_kernel(), err;

	p->fn = fn;
	p->ctx = ctx;
	if (code != TK_EXIT_OK)
		return code;
	p->skel = ackhold_bpf__open();
	if (!p->skel) {
		elog("cannot open the BPF object: %s", bpfu_strerror(-errno, buf, sizeof(buf)));
		return TK_EXIT_FAIL;
	}
	code = configure(p, o);
	if (code != TK_EXIT_OK)
		return code;
	err = ackhold_bpf__load(p->skel);
	if (err) {
		elog("the kernel refused ackhold's programs: %s (-v shows the verifier's log)",
		     bpfu_strerror(err, buf, sizeof(buf)));
		return err == -EPERM ? TK_EXIT_NOPERM : TK_EXIT_NOTSUP;
	}
	err = ackhold_bpf__attach(p->skel);
	if (err) {
		elog("cannot attach to the tracepoints: %s", bpfu_strerror(err, buf, sizeof(buf)));
		return TK_EXIT_NOTSUP;
	}
	p->rb = ring_buffer__new(bpf_map__fd(p->skel->maps.ah_records), on_record, p, NULL);
	if (!p->rb) {
		elog("cannot read the ring buffer: %s", strerror(errno));
		return TK_EXIT_FAIL;
	}
	return TK_EXIT_OK;
}

int ah_probe_poll(struct ah_probe *p, int timeout_ms)
{
	int n = ring_buffer__poll(p->rb, timeout_ms);

	return n == -EINTR ? 0 : n;
}

void ah_probe_stop(struct ah_probe *p)
{
	if (!p->skel)
		return;
	ackhold_bpf__detach(p->skel);
	if (p->rb)
		ring_buffer__consume(p->rb);
}

void ah_probe_counters(const struct ah_probe *p, uint64_t out[AH_CNT_MAX])
{
	int fd = bpf_map__fd(p->skel->maps.ah_counters);

	for (uint32_t i = 0; i < AH_CNT_MAX; i++)
		out[i] = bpfu_percpu_sum(fd, i);
}

void ah_probe_open_flows(struct ah_probe *p)
{
	int fd = bpf_map__fd(p->skel->maps.ah_flows);
	uint64_t key, next;
	struct ah_flow f;
	struct ah_rec r;
	bool first = true;

	/* bounded by the map's size: a key deleted meanwhile restarts the walk at most once per flow */
	for (uint32_t n = 0; n < 2 * bpf_map__max_entries(p->skel->maps.ah_flows); n++) {
		if (bpf_map_get_next_key(fd, first ? NULL : &key, &next))
			break;
		first = false;
		key = next;
		if (bpf_map_lookup_elem(fd, &key, &f))
			continue;
		memset(&r, 0, sizeof(r));
		r.id = f.id;
		if (f.pend_valid) {
			r.kind = AH_REC_HOLD;
			r.hold = f.pend;
			p->fn(p->ctx, &r);
		}
		memset(&r.totals, 0, sizeof(r.totals));
		r.kind = AH_REC_CLOSE;
		r.totals = f.totals;
		p->fn(p->ctx, &r);
	}
}

void ah_probe_close(struct ah_probe *p)
{
	ring_buffer__free(p->rb);
	ackhold_bpf__destroy(p->skel);
	p->rb = NULL;
	p->skel = NULL;
}

int ah_probe_stats(const struct ah_probe *p, struct rec_writer *w, struct rec_writer *err_w)
{
	struct bpf_program *prog;
	int rc = 0;

	bpf_object__for_each_program(prog, p->skel->obj)
		rc |= tk_prog_stats_write(w, err_w, bpf_program__name(prog), bpf_program__fd(prog));
	return rc;
}

uint64_t ah_probe_misses(const struct ah_probe *p)
{
	struct bpf_program *prog;
	uint64_t n = 0;

	bpf_object__for_each_program(prog, p->skel->obj) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);

		if (!bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
			n += info.recursion_misses;
	}
	return n;
}
