// SPDX-License-Identifier: GPL-2.0-only
/*
 * upfbench's command lines: each command's options land where they should,
 * with the command's defaults; lists where the command takes them. (A bad
 * command line exits 2: tests/bats/upfbench.bats checks those lines.)
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tk_assert.h"

#include "log.h"
#include "upf/args.h"
#include "upf/table_rte.h"

static struct up_args a;

/* parse a command line given as one string (words split on spaces) */
static void parse(const char *line)
{
	static char buf[512];
	char *argv[32];
	int argc = 0;

	snprintf(buf, sizeof(buf), "upfbench %s", line);
	for (char *t = strtok(buf, " "); t && argc < 31; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	up_args_parse(&a, argc, argv);
}

static void test_run_defaults(void **state)
{
	(void)state;
	parse("");
	assert_int_equal(a.cmd, UP_CMD_RUN);
	assert_int_equal(a.run.design, UP_STEERED);
	assert_int_equal(a.run.layout, UP_LAYOUT_SPLIT);
	assert_int_equal(a.run.batch, 32);
	assert_true(a.run.prefetch);
	assert_false(a.run.huge);
	assert_int_equal(a.gen.sessions, 100000);
	tk_assert_cmp(a.floor_mib, ==, UP_FLOOR_DEFAULT);
	assert_false(a.fmt_set);
	assert_null(a.output);
	assert_int_equal(up_default_packets(100), 1000000);
	assert_int_equal(up_default_packets(2200000), 8800000);
	assert_true(a.run.teid_check);
	assert_int_equal(a.gen.bad_every, 0);
}

/* the new designs by name and by knob; what cannot run is said, not run */
static void test_one_line_designs(void **state)
{
	const char *names[] = { "inline", "slot", "slot-unchecked" };
	const char *labels[] = { "steered/inline/b8p/own/thp", "steered/split/b8p/slot/thp",
				 "steered/split/b8p/slot-unchecked/thp" };
	struct up_run_cfg c;
	char buf[64];

	(void)state;
	for (int i = 0; i < 3; i++) {
		char line[64];

		snprintf(line, sizeof(line), "run --preset %s --bad-every 9", names[i]);
		parse(line);
		assert_null(up_cfg_refused(&a.run));
		up_label(&a.run, buf, sizeof(buf));
		assert_string_equal(buf, labels[i]);
		assert_int_equal(a.gen.bad_every, 9);
	}
	parse("sweep --table own,slot --layout split,inline --teid-check on,off");
	assert_int_equal(a.knob[UP_K_TEID_CHECK].n, 2);
	assert_false(a.knob[UP_K_TEID_CHECK].v[1]);
	c = a.run;
	c.table = UP_TABLE_SLOT;
	c.layout = UP_LAYOUT_INLINE;
	assert_non_null(up_cfg_refused(&c));
	c.layout = UP_LAYOUT_FAT;
	assert_non_null(up_cfg_refused(&c));
	c.table = UP_TABLE_RTE;
	c.layout = UP_LAYOUT_INLINE;
	assert_non_null(up_cfg_refused(&c));
	c.table = UP_TABLE_OWN;
	assert_null(up_cfg_refused(&c));
	assert_int_equal(up_run_teids(&c), UP_TEIDS_HASHED);
	c.table = UP_TABLE_SLOT;
	assert_int_equal(up_run_teids(&c), UP_TEIDS_SLOT);
}

/* a preset where it is given: later options override it, earlier ones do not */
static void test_run_preset_order(void **state)
{
	(void)state;
	parse("run --batch 16 --preset best --workers 3 --no-prefetch --hugepages off -f csv -o x.csv");
	assert_string_equal(a.preset, "best");
	assert_int_equal(a.run.batch, 8);
	assert_int_equal(a.run.workers, 3);
	assert_false(a.run.prefetch);
	assert_false(a.run.huge);
	assert_int_equal(a.fmt, REC_CSV);
	assert_true(a.fmt_set);
	assert_string_equal(a.output, "x.csv");
	parse("--hugepages --sessions 2.2M --packets 1G --mbr-bps 10M --pkt-size 576 --outer ipv6");
	assert_true(a.run.huge);
	assert_int_equal(a.gen.sessions, 2200000);
	assert_true(a.sessions_set && a.packets_set);
	assert_int_equal(a.run.packets, 1000000000ull);
	assert_int_equal(a.gen.mbr_bps, 10000000);
	assert_int_equal(a.gen.pkt_size, 576);
	assert_int_equal(a.gen.outer_family, 6);
}

static void test_sweep_lists(void **state)
{
	(void)state;
	parse("sweep --sessions 10k,2.2M --design global,steered --hugepages on,off --prefetch --batch 1,8,32");
	assert_int_equal(a.cmd, UP_CMD_SWEEP);
	assert_int_equal(a.sessions.n, 2);
	assert_int_equal(a.sessions.v[1], 2200000);
	assert_int_equal(a.knob[UP_K_DESIGN].n, 2);
	assert_int_equal(a.knob[UP_K_DESIGN].v[0], UP_GLOBAL);
	assert_int_equal(a.knob[UP_K_DESIGN].v[1], UP_STEERED);
	assert_int_equal(a.knob[UP_K_HUGE].n, 2);
	assert_int_equal(a.knob[UP_K_HUGE].v[0], 1);
	assert_int_equal(a.knob[UP_K_HUGE].v[1], 0);
	assert_int_equal(a.knob[UP_K_PREFETCH].n, 1);
	assert_int_equal(a.knob[UP_K_PREFETCH].v[0], 1);
	assert_int_equal(a.knob[UP_K_BATCH].n, 3);
	assert_int_equal(a.knob[UP_K_BATCH].v[2], 32);
	/* lists of knobs: no presets */
	assert_int_equal(a.presets.n, 0);
}

static void test_sweep_defaults(void **state)
{
	unsigned int swept = 0;

	(void)state;
	parse("sweep --presets before,rte,best");
	assert_int_equal(a.presets.n, 3);
	assert_string_equal(up_presets[a.presets.v[1]].name, "rte");
	assert_int_equal(a.sessions.n, 3);
	assert_int_equal(a.sessions.v[0], 10000);
	parse("sweep");
	for (unsigned int i = 0; i < up_npresets; i++)
		swept += up_presets[i].swept && !(up_presets[i].table == UP_TABLE_RTE && upt_rte_missing());
	assert_int_equal(a.presets.n, swept);
	tk_assert_cmp(swept, >=, 6);
}

static void test_lookup_defaults(void **state)
{
	(void)state;
	parse("lookup --sessions 1k");
	assert_int_equal(a.knob[UP_K_TABLE].n, upt_rte_missing() ? 1 : 2);
	assert_int_equal(a.knob[UP_K_TABLE].v[0], UP_TABLE_OWN);
	assert_int_equal(a.knob[UP_K_BATCH].n, 1);
	assert_int_equal(a.knob[UP_K_BATCH].v[0], 32);
	assert_int_equal(up_default_lookups(a.gen.sessions), 4000000);
	parse("lookup --tables own --batch 1,32 --lookups 10k --hugepages=on");
	assert_int_equal(a.knob[UP_K_TABLE].n, 1);
	assert_int_equal(a.knob[UP_K_BATCH].n, 2);
	assert_int_equal(a.lookups, 10000);
	assert_true(a.run.huge);
}

static void test_other_commands(void **state)
{
	(void)state;
	parse("floor --floor-mib 32 -f json");
	assert_int_equal(a.cmd, UP_CMD_FLOOR);
	assert_int_equal(a.floor_mib, 32);
	assert_int_equal(a.fmt, REC_JSON);
	parse("decode --pcap-in n3.pcap");
	assert_int_equal(a.cmd, UP_CMD_DECODE);
	assert_string_equal(a.pcap_in, "n3.pcap");
	parse("check-identity --mpps 8 --cycles 6000 --workers 16 --ghz 3");
	assert_int_equal(a.cmd, UP_CMD_IDENTITY);
	tk_assert_cmp(a.id_mpps, ==, 8);
	tk_assert_cmp(a.id_cycles, ==, 6000);
	tk_assert_cmp(a.id_ghz, ==, 3);
	assert_int_equal(a.id_workers, 16);
}

static void test_label(void **state)
{
	struct up_run_cfg c = { 0 };
	char buf[64];

	(void)state;
	up_preset_apply(&c, &up_presets[0]);
	up_label(&c, buf, sizeof(buf));
	assert_string_equal(buf, "global/fat/b1/own/4k");
	up_knob_set(&c, UP_K_PREFETCH, 1);
	up_knob_set(&c, UP_K_HUGE, 1);
	up_knob_set(&c, UP_K_BATCH, 8);
	up_knob_set(&c, UP_K_TABLE, UP_TABLE_RTE);
	up_label(&c, buf, sizeof(buf));
	assert_string_equal(buf, "global/fat/b8p/rte_hash/thp");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_defaults),
		cmocka_unit_test(test_one_line_designs),
		cmocka_unit_test(test_run_preset_order),
		cmocka_unit_test(test_sweep_lists),
		cmocka_unit_test(test_sweep_defaults),
		cmocka_unit_test(test_lookup_defaults),
		cmocka_unit_test(test_other_commands),
		cmocka_unit_test(test_label),
	};

	log_init("test_upf_args");
	log_set_level(LOG_QUIET - 1); /* sweep's and lookup's notes when rte_hash is missing */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
