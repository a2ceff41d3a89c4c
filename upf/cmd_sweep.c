// SPDX-License-Identifier: GPL-2.0-only
/*
 * upfbench sweep: session counts x designs (the presets, or the product of
 * the knobs' lists), one run and one record each.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "common.h"
#include "log.h"
#include "record.h"

#include "floor.h"
#include "path.h"
#include "traffic.h"
#include "cmd.h"

#define MAX_SWEEP_DESIGNS 512

/* the designs a sweep runs at each session count */
struct sweep {
	struct up_run_cfg cfgs[MAX_SWEEP_DESIGNS];
	const char *labels[MAX_SWEEP_DESIGNS]; /* a preset's name; NULL: up_label's */
	unsigned int n;
	struct rec_writer *w;
	const struct up_floor *floor;
	unsigned int done;
};

/* whether the sweep has this design already (the same label) */
static bool sweep_has(const struct sweep *s, const struct up_run_cfg *c)
{
	char label[48], other[48];

	up_label(c, label, sizeof(label));
	for (unsigned int i = 0; i < s->n; i++) {
		up_label(&s->cfgs[i], other, sizeof(other));
		if (!strcmp(label, other))
			return true;
	}
	return false;
}

/* the product of the knobs' lists, the last knob varying fastest */
static void sweep_product(const struct up_args *a, struct sweep *s)
{
	unsigned int total = 1;

	for (int k = 0; k < UP_NKNOBS; k++)
		if (a->knob[k].n && (total *= a->knob[k].n) > MAX_SWEEP_DESIGNS)
			cli_usage_die("sweep: more than %u designs", MAX_SWEEP_DESIGNS);
	for (unsigned int i = 0; i < total; i++) {
		struct up_run_cfg c = a->run;
		unsigned int rest = i;

		for (int k = UP_NKNOBS - 1; k >= 0; k--) {
			unsigned int n = a->knob[k].n;

			if (n) {
				up_knob_set(&c, (enum up_knob)k, a->knob[k].v[rest % n]);
				rest /= n;
			}
		}
		up_check_workers(&c);
		if (up_cfg_refused(&c)) {
			char label[48];

			up_label(&c, label, sizeof(label));
			wlog("sweep: leaving out %s: %s", label, up_cfg_refused(&c));
			continue;
		}
		/* --teid-check on,off makes the tables' designs twice: once is enough */
		if (sweep_has(s, &c))
			continue;
		s->labels[s->n] = NULL;
		s->cfgs[s->n++] = c;
	}
	if (!s->n)
		cli_usage_die("sweep: no design left to run (see the lines above)");
}

/* the presets (--presets, or sweep's default ones), or the product of the knobs' lists */
static void sweep_designs(const struct up_args *a, struct sweep *s)
{
	if (!a->presets.n) {
		sweep_product(a, s);
		return;
	}
	for (unsigned int i = 0; i < a->presets.n; i++) {
		const struct up_preset *p = &up_presets[a->presets.v[i]];

		s->cfgs[s->n] = a->run;
		up_preset_apply(&s->cfgs[s->n], p);
		s->labels[s->n++] = p->name;
	}
}

/* one design over one traffic: its record, and whether its counters were exact */
static int sweep_one(const struct up_args *a, struct sweep *s, unsigned int i,
		     const struct up_traffic *t, uint64_t packets)
{
	struct run_rec x = { .dist = up_dist_names[a->gen.dist], .floor = s->floor };
	struct up_run_cfg c = s->cfgs[i];
	char err[256];

	c.packets = packets;
	c.perf = true;
	if (s->labels[i])
		snprintf(x.label, sizeof(x.label), "%s", s->labels[i]);
	else
		up_label(&c, x.label, sizeof(x.label));
	if (up_run(t, &c, &x.r, NULL, err, sizeof(err))) {
		elog("%s at %u sessions: %s", x.label, t->n_sess, err);
		return TK_EXIT_FAIL;
	}
	s->done++;
	ilog("sweep %u/%u: %s at %u sessions: %.1f cycles/packet, %.3f Mpps%s", s->done,
	     s->n * a->sessions.n, x.label, t->n_sess, x.r.cycles_per_pkt, x.r.mpps,
	     c.verify ? (x.r.verify_ok ? ", counters exact" : ", COUNTERS NOT EXACT") : "");
	if (up_write_run(s->w, &x) || rec_writer_flush(s->w)) {
		elog("writing the record failed");
		return TK_EXIT_FAIL;
	}
	if (c.verify && !x.r.verify_ok) {
		elog("%s: counters are not exact: %s", x.label, x.r.verify_msg);
		return TK_EXIT_COUNTERS;
	}
	return 0;
}

/* every session count: its traffic generated once, then every design over it */
static int sweep_runs(const struct up_args *a, struct sweep *s)
{
	int rc = 0;

	for (unsigned int k = 0; k < a->sessions.n && !rc; k++) {
		uint32_t sessions = (uint32_t)a->sessions.v[k];
		uint64_t packets = a->packets_set ? a->run.packets : up_default_packets(sessions);
		struct up_traffic t;

		rc = up_load_traffic(a, sessions, packets, &t);
		if (rc)
			break;
		for (unsigned int i = 0; i < s->n && !rc; i++)
			rc = sweep_one(a, s, i, &t, packets);
		up_traffic_free(&t);
	}
	return rc;
}

/* DPDK's EAL for the largest table, when a design uses rte_hash */
static int sweep_check_rte(const struct up_args *a, const struct sweep *s)
{
	bool need_rte = false;
	uint64_t max_sess = 0;

	for (unsigned int i = 0; i < s->n; i++)
		need_rte |= s->cfgs[i].table == UP_TABLE_RTE;
	for (unsigned int k = 0; k < a->sessions.n; k++)
		if (a->sessions.v[k] > max_sess)
			max_sess = a->sessions.v[k];
	return up_check_rte((uint32_t)max_sess, need_rte, true);
}

int up_cmd_sweep(struct up_args *a)
{
	struct sweep s = { 0 };
	struct up_floor floor;
	FILE *out;
	int rc;

	sweep_designs(a, &s);
	rc = sweep_check_rte(a, &s);
	if (rc)
		return rc;
	out = up_output_open(a);
	if (!out)
		return TK_EXIT_FAIL;
	if (a->floor_mib != 0) {
		if (up_measure_floor(a, &floor)) {
			up_output_close(a, out);
			return TK_EXIT_FAIL;
		}
		s.floor = &floor;
		note("memory floor: %.1f cycles per DRAM access with one outstanding (%.1f ns), %.1f at %u chains (%zu MiB, %llu KiB on huge pages)",
		     floor.serial_cycles, floor.serial_ns, floor.mlp_cycles, floor.mlp_chains,
		     floor.bytes >> 20, (unsigned long long)floor.huge_kib);
	}
	s.w = up_writer_open(a, out);
	up_notes = stderr;
	rc = s.w ? sweep_runs(a, &s) : TK_EXIT_FAIL;
	if (rec_writer_free(s.w) && !rc)
		rc = TK_EXIT_FAIL;
	if (up_output_close(a, out) && !rc)
		rc = TK_EXIT_FAIL;
	return rc;
}
