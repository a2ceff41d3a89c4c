// SPDX-License-Identifier: GPL-2.0-only
/*
 * udpdwell's user-space arithmetic: quantiles from the 9 buckets, the state
 * thresholds, interval differences and rows, drop-reason names from a BTF
 * (built here with libbpf, with values unlike any kernel's, so nothing can be
 * hard-coded) and socket owners through a procfs tree.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "tk_assert.h"

#include <bpf/btf.h>

#include "dwell/owner.h"
#include "dwell/reasons.h"
#include "dwell/snapshot.h"
#include "dwell/stats.h"

#define NEAR(a, b) tk_assert_near((a), (b), 1e-6)

static void test_quantile_interpolates_inside_bucket(void **state)
{
	uint64_t b[UD_NBUCKETS] = { 0 };
	(void)state;

	/* 100 observations in (100, 500] us: p50 is half way, p99 near the top */
	b[3] = 100;
	NEAR(ud_quantile_us(b, 0.5, 1000), 300);
	NEAR(ud_quantile_us(b, 0.99, 1000), 100 + 400 * 0.99);
	/* ... but never above the observed maximum */
	NEAR(ud_quantile_us(b, 0.99, 250), 250);
	/* the first bucket starts at 0 */
	memset(b, 0, sizeof(b));
	b[0] = 10;
	NEAR(ud_quantile_us(b, 0.5, -1), 5);
}

static void test_quantile_spans_buckets(void **state)
{
	uint64_t b[UD_NBUCKETS] = { 50, 0, 0, 0, 0, 0, 0, 50, 0 };
	(void)state;

	/* rank 50 is the last of bucket 0: its upper edge */
	NEAR(ud_quantile_us(b, 0.5, 40000), 10);
	/* rank 99: 49/50 of the way through (10 ms, 50 ms], clamped to the max */
	NEAR(ud_quantile_us(b, 0.99, 60000), 10000 + 40000 * 49.0 / 50);
	NEAR(ud_quantile_us(b, 0.99, 30000), 30000);
}

static void test_quantile_open_last_bucket_ends_at_max(void **state)
{
	uint64_t b[UD_NBUCKETS] = { 0, 0, 0, 0, 0, 0, 0, 0, 4 };
	(void)state;

	NEAR(ud_quantile_us(b, 0.5, 150000), 50000 + 100000 * 0.5);
	/* no maximum known: the lower edge */
	NEAR(ud_quantile_us(b, 0.5, -1), 50000);
}

static void test_quantile_empty_is_nan(void **state)
{
	uint64_t b[UD_NBUCKETS] = { 0 };
	(void)state;

	assert_true(isnan(ud_quantile_us(b, 0.5, 10)));
	b[0] = 1;
	assert_true(isnan(ud_quantile_us(b, 0, 10)));
	assert_true(isnan(ud_quantile_us(b, 1.5, 10)));
}

static void test_le_edges_match_kernel_buckets(void **state)
{
	(void)state;
	/* user space's edges (us) are the BPF side's (ns) */
	for (int i = 0; i < UD_NBUCKETS - 1; i++) {
		uint64_t ns = (uint64_t)llround(ud_le_us[i] * 1000);

		assert_int_equal(ud_bucket(ns), i);
		assert_int_equal(ud_bucket(ns + 1), i + 1);
	}
	/* their labels: tests/unit/test_dwellrec.c */
}

static void test_state_thresholds(void **state)
{
	struct ud_thresholds t = { .warn_us = 5000, .alert_us = 20000, .on = UD_STATE_ON_P99 };
	(void)state;

	assert_int_equal(ud_state_of(&t, 4999.9, 100000, 0, 0), UD_OK);
	assert_int_equal(ud_state_of(&t, 5000, 5000, 0, 0), UD_WARN); /* >= warn */
	assert_int_equal(ud_state_of(&t, 19999, 19999, 0, 0), UD_WARN);
	assert_int_equal(ud_state_of(&t, 20000, 20000, 0, 0), UD_ALERT);
	assert_int_equal(ud_state_of(&t, NAN, NAN, 0, 0), UD_OK);
	/* a stuck reader: nothing read, but a datagram has waited 30 ms */
	assert_int_equal(ud_state_of(&t, NAN, NAN, 30000, 0), UD_ALERT);
	assert_int_equal(ud_state_of(&t, 100, 100, 6000, 0), UD_WARN);
	/* buffer drops are the server's own losses */
	assert_int_equal(ud_state_of(&t, 10, 10, 0, 1), UD_ALERT);
	t.on = UD_STATE_ON_MAX;
	assert_int_equal(ud_state_of(&t, 100, 25000, 0, 0), UD_ALERT);
	assert_int_equal(ud_state_of(&t, 100, 4000, 0, 0), UD_OK);
	/* the states' names: tests/unit/test_dwellrec.c */
}

static void test_cumul_delta(void **state)
{
	struct ud_cumul a = { .packets = 10, .sum_ns = 1000, .buckets = { 10 } };
	struct ud_cumul b = { .packets = 15, .sum_ns = 1600, .buckets = { 14, 1 } };
	struct ud_cumul d;
	(void)state;

	assert_false(ud_cumul_delta(&b, &a, &d));
	assert_int_equal(d.packets, 5);
	assert_int_equal(d.sum_ns, 600);
	assert_int_equal(d.buckets[0], 4);
	assert_int_equal(d.buckets[1], 1);
	/* the kernel's state was recreated: the interval is the new figures */
	assert_true(ud_cumul_delta(&a, &b, &d));
	assert_int_equal(d.packets, 10);
}

static void test_row_from_two_readings(void **state)
{
	struct ud_thresholds t = { 5000, 20000, UD_STATE_ON_P99 };
	struct ud_entry prev = { .key = 1, .port = 5004 }, cur;
	struct ud_row r;
	(void)state;

	prev.addr[10] = prev.addr[11] = 0xff;
	prev.addr[12] = 127;
	prev.addr[15] = 1;
	prev.cumul.packets = 100;
	prev.cumul.sum_ns = 100 * 20000;
	prev.cumul.buckets[1] = 100;
	prev.drops[0] = (struct ud_drop_count){ 6, 3 };
	prev.ndrops = 1;
	cur = prev;
	cur.tgid = 42;
	strcpy(cur.comm, "sfu");
	cur.cumul.packets = 110;
	cur.cumul.sum_ns = prev.cumul.sum_ns + 10 * 30000000ULL;
	cur.cumul.buckets[7] = 10;
	cur.interval_max_ns = 45000000;
	cur.drops[0].count = 5;
	cur.drops[1] = (struct ud_drop_count){ 11, 1 };
	cur.ndrops = 2;
	cur.last_event_ns = 2000;
	ud_row_build(&r, &cur, &prev, &t, 6, 20, 3000, 1000);
	assert_string_equal(r.addr, "127.0.0.1");
	assert_int_equal(r.pid, 42);
	assert_int_equal(r.d.packets, 10);
	NEAR(r.avg_us, 30000);
	NEAR(r.max_us, 45000);
	tk_assert_cmp(r.p99_us, >, 10000);
	tk_assert_cmp(r.p99_us, <=, 45000);
	assert_int_equal(r.ndrops, 2);
	assert_int_equal(r.drops[0].count, 2); /* reason 6: 5 - 3 */
	assert_int_equal(r.drops[1].count, 1); /* reason 11 is new */
	assert_int_equal(r.buffer_drops, 2);   /* 6 is the buffer reason here, 11 not */
	assert_int_equal(r.state, UD_ALERT);
	assert_true(r.active);

	/* nothing happened: no figures, OK, inactive */
	ud_row_build(&r, &cur, &cur, &t, 6, 20, 900000, 800000);
	assert_int_equal(r.d.packets, 0);
	assert_true(isnan(r.avg_us) && isnan(r.p50_us) && isnan(r.p99_us) && isnan(r.max_us));
	assert_int_equal(r.ndrops, 0);
	assert_int_equal(r.state, UD_OK);
	assert_false(r.active);
}

static void test_row_oldest_waiting_datagram(void **state)
{
	struct ud_thresholds t = { 5000, 20000, UD_STATE_ON_P99 };
	struct ud_entry e = { .key = 7, .port = 1, .queue_len = 3, .oldest_stamp_ns = 1000000 };
	struct ud_row r;
	(void)state;

	/* a reader stuck for 100 ms with 3 datagrams waiting and no event */
	e.last_event_ns = 1000000;
	ud_row_build(&r, &e, NULL, &t, 6, 20, 101000000, 50000000);
	NEAR(r.oldest_wait_us, 100000);
	NEAR(r.max_us, 100000);
	assert_int_equal(r.state, UD_ALERT);
	assert_true(r.idle_waiting);
	assert_true(r.active);
}

static void test_row_port_change_is_a_new_socket(void **state)
{
	struct ud_thresholds t = { 5000, 20000, UD_STATE_ON_P99 };
	struct ud_entry prev = { .key = 1, .port = 5004 }, cur = { .key = 1, .port = 6000 };
	struct ud_row r;
	(void)state;

	prev.cumul.packets = 5;
	cur.cumul.packets = 8;
	cur.cumul.buckets[0] = 8;
	ud_row_build(&r, &cur, &prev, &t, 6, 20, 10, 0);
	assert_int_equal(r.d.packets, 8);
}

static void test_entry_adds_up_the_cpus_of_its_generation(void **state)
{
	struct ud_sock *st = calloc(1, sizeof(*st));
	struct ud_sock_stats cpu[3] = { 0 };
	struct ud_entry e;
	(void)state;

	assert_non_null(st);
	st->owner = 0xffff888012345678ULL;
	st->gen = 7;
	st->port = 5004;
	st->head = 100;
	st->tail = 103;
	st->ring[100 & UD_RING_MASK] = 123456;
	st->resync_added = 2;
	/* CPU 0 and 2 read for this socket; CPU 1's figures are from the
	 * slot's previous socket (gen 6) and count for nothing */
	cpu[0] = (struct ud_sock_stats){ .gen = 7, .sum_ns = 1000, .buckets = { 2 }, .max_ns = 600,
					 .max_epoch_ns = { 600, 0 }, .max_epoch_tag = { 4, 0 } };
	cpu[1] = (struct ud_sock_stats){ .gen = 6, .sum_ns = 99999, .buckets = { 50 },
					 .max_ns = 99999, .unmatched = 9,
					 .max_epoch_ns = { 99999, 0 }, .max_epoch_tag = { 4, 0 } };
	/* CPU 2 read once in interval 4 and once after user space moved to 5 */
	cpu[2] = (struct ud_sock_stats){ .gen = 7, .sum_ns = 70000, .buckets = { 0, 1, 1 },
					 .max_ns = 40000, .unmatched = 1,
					 .max_epoch_ns = { 30000, 40000 }, .max_epoch_tag = { 4, 5 } };
	ud_entry_from(&e, 3, st, cpu, 3, 4);
	tk_assert_cmp(e.key, ==, ud_key(3, 7));
	assert_int_equal(e.port, 5004);
	assert_int_equal(e.cumul.packets, 4);
	assert_int_equal(e.cumul.sum_ns, 71000);
	assert_int_equal(e.cumul.unmatched, 1);
	assert_int_equal(e.cumul.buckets[0], 2);
	assert_int_equal(e.max_ns, 40000);
	assert_int_equal(e.interval_max_ns, 40000);
	assert_int_equal(e.queue_len, 3);
	assert_int_equal(e.oldest_stamp_ns, 123456);
	assert_int_equal(e.cumul.resync_added, 2);
	/* interval 3's maximum: nobody has one */
	ud_entry_from(&e, 3, st, cpu, 3, 2);
	assert_int_equal(e.interval_max_ns, 0);
	free(st);
}

/* one reading of one slot: its socket's generation, the slot's count of every read, and
 * the row built for it (its reads in the interval) */
static uint64_t settle_one(struct ud_ledger *l, uint32_t slot, uint32_t gen, uint32_t slot_reads,
			   uint64_t row_reads)
{
	struct ud_entry e = { .key = ud_key(slot, gen), .slot_reads = slot_reads, .reads_known = true };
	struct ud_snapshot s = { .e = &e, .n = 1 };
	struct ud_row r = { .key = e.key };

	r.d.packets = row_reads;
	return ud_ledger_settle(l, &s, &r);
}

static void test_ledger_counts_the_reads_of_an_evicted_socket(void **state)
{
	struct ud_ledger l;
	(void)state;

	assert_int_equal(ud_ledger_init(&l, 4), 0);
	/* slot 3's socket (gen 7) read 10 datagrams, all reported */
	assert_int_equal(settle_one(&l, 3, 7, 10, 10), 0);
	/* it read 3 more, was evicted, and the new socket (gen 8) read 4: the 3 are nobody's */
	assert_int_equal(settle_one(&l, 3, 8, 17, 4), 3);
	/* a copy that caught a read in the figures but not yet in the count: the row is one
	 * ahead, which is owed, not reported, and the next reading evens it out */
	assert_int_equal(settle_one(&l, 3, 8, 20, 4), 0);
	assert_int_equal(settle_one(&l, 3, 8, 25, 4), 0);
	assert_int_equal(l.total, 3);
	/* the count wraps at 2^32: 25 + (2^32 - 10) reads later it reads 15 */
	assert_int_equal(settle_one(&l, 3, 9, 15, 4294967286u - 3), 3);
	assert_int_equal(l.total, 6);
	/* figures that could not be read say nothing */
	{
		struct ud_entry e = { .key = ud_key(2, 1), .slot_reads = 0 };
		struct ud_snapshot s = { .e = &e, .n = 1 };
		struct ud_row r = { .key = e.key };

		assert_int_equal(ud_ledger_settle(&l, &s, &r), 0);
	}
	ud_ledger_free(&l);
}

static void test_rows_sort_worst_first(void **state)
{
	struct ud_row r[3] = { 0 };
	(void)state;

	r[0].port = 1, r[0].p99_us = 100, r[0].max_us = 200;
	r[1].port = 2, r[1].p99_us = NAN, r[1].max_us = NAN, r[1].oldest_wait_us = 900;
	r[2].port = 3, r[2].p99_us = 100, r[2].max_us = 300;
	qsort(r, 3, sizeof(r[0]), ud_row_cmp_worst);
	assert_int_equal(r[0].port, 2);
	assert_int_equal(r[1].port, 3);
	assert_int_equal(r[2].port, 1);
}

/* --- drop reasons -------------------------------------------------------------- */

static void test_reasons_from_btf(void **state)
{
	struct btf *btf = btf__new_empty();
	struct ud_reasons r;
	uint32_t v;
	char buf[32];
	int id;
	(void)state;

	assert_non_null(btf);
	id = btf__add_enum(btf, "skb_drop_reason", 4);
	tk_assert_cmp(id, >, 0);
	/* values deliberately unlike any kernel's */
	assert_int_equal(btf__add_enum_value(btf, "SKB_NOT_DROPPED_YET", 0), 0);
	assert_int_equal(btf__add_enum_value(btf, "SKB_DROP_REASON_PROTO_MEM", 77), 0);
	assert_int_equal(btf__add_enum_value(btf, "SKB_DROP_REASON_SOCKET_RCVBUFF", 1234), 0);
	assert_int_equal(btf__add_enum_value(btf, "SKB_DROP_REASON_UDP_CSUM", 9), 0);
	assert_int_equal(ud_reasons_load(&r, btf), 0);
	assert_true(r.from_btf);
	assert_int_equal(r.n, 4);
	assert_string_equal(ud_reason_name(&r, 1234, buf, sizeof(buf)), "SOCKET_RCVBUFF");
	assert_string_equal(ud_reason_name(&r, 77, buf, sizeof(buf)), "PROTO_MEM");
	assert_string_equal(ud_reason_name(&r, 9, buf, sizeof(buf)), "UDP_CSUM");
	assert_string_equal(ud_reason_name(&r, 0, buf, sizeof(buf)), "SKB_NOT_DROPPED_YET");
	assert_string_equal(ud_reason_name(&r, 6, buf, sizeof(buf)), "REASON_6");
	assert_true(ud_reason_value(&r, "SOCKET_RCVBUFF", &v));
	assert_int_equal(v, 1234);
	assert_false(ud_reason_value(&r, "NO_SUCH", &v));
	ud_reasons_free(&r);
	btf__free(btf);
}

static void test_reasons_without_enum(void **state)
{
	struct btf *btf = btf__new_empty();
	struct ud_reasons r;
	char buf[32];
	uint32_t v;
	(void)state;

	assert_int_equal(ud_reasons_load(&r, btf), 0);
	assert_false(r.from_btf);
	assert_string_equal(ud_reason_name(&r, UD_REASON_LEGACY_RCVBUFF, buf, sizeof(buf)),
			    "SOCKET_RCVBUFF");
	assert_true(ud_reason_value(&r, "PROTO_MEM", &v));
	assert_int_equal(v, UD_REASON_LEGACY_PROTO_MEM);
	ud_reasons_free(&r);
	btf__free(btf);
}

/* --- owners --------------------------------------------------------------------- */

static void test_owner_of_own_socket(void **state)
{
	struct ud_owner_query q[2] = { { 0 }, { .ino = 1 } };
	struct stat st;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	char comm[16];
	FILE *f;
	(void)state;

	tk_assert_cmp(fd, >=, 0);
	assert_int_equal(fstat(fd, &st), 0);
	q[0].ino = st.st_ino;
	assert_int_equal(ud_owner_resolve("/proc", q, 2), 1);
	assert_int_equal(q[0].pid, getpid());
	f = fopen("/proc/self/comm", "r");
	assert_non_null(f);
	assert_non_null(fgets(comm, sizeof(comm), f));
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	assert_string_equal(q[0].comm, comm);
	assert_int_equal(q[1].pid, 0);
	close(fd);
	/* closed: nobody holds it */
	assert_int_equal(ud_owner_resolve("/proc", q, 1), 0);
	assert_int_equal(q[0].pid, 0);
}

static void test_owner_in_a_proc_tree(void **state)
{
	char root[] = "/tmp/ud-proc-XXXXXX", path[256];
	struct ud_owner_query q = { .ino = 4242 };
	FILE *f;
	(void)state;

	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/77", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/77/fd", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/77/fd/3", root);
	assert_int_equal(symlink("socket:[4242]", path), 0);
	snprintf(path, sizeof(path), "%s/77/fd/4", root);
	assert_int_equal(symlink("socket:[42420]", path), 0);
	snprintf(path, sizeof(path), "%s/77/comm", root);
	f = fopen(path, "w");
	fputs("my-sfu\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/self", root); /* not a pid: skipped */
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(ud_owner_resolve(root, &q, 1), 1);
	assert_int_equal(q.pid, 77);
	assert_string_equal(q.comm, "my-sfu");
	assert_int_equal(ud_owner_resolve("/nonexistent-proc", &q, 1), -1);
	snprintf(path, sizeof(path), "rm -rf %s", root);
	assert_int_equal(system(path), 0);
}

/* more drop reasons on one socket than it has slots: the rest add up in OTHER_REASONS */
static void test_drops_fold_into_other_reasons(void **state)
{
	struct ud_drop_count v[UD_MAX_REASONS], w[UD_MAX_REASONS];
	unsigned int n = 0, m = 0;
	uint64_t total = 0, sum = 0, others = 0;
	struct ud_reasons r = { 0 };
	char buf[32];
	(void)state;

	for (uint32_t reason = 1; reason <= UD_MAX_REASONS + 6; reason++) {
		ud_drops_add(v, &n, reason, reason * 10);
		total += reason * 10;
	}
	ud_drops_add(v, &n, 2, 5); /* a reason with a slot keeps adding to it */
	total += 5;
	assert_int_equal(n, UD_MAX_REASONS);
	for (unsigned int i = 0; i < n; i++) {
		sum += v[i].count;
		if (v[i].reason == UD_REASON_OTHERS)
			others = v[i].count;
	}
	assert_int_equal(sum, total);
	/* reasons 1..23 kept their slots; 24..30 went to the last one */
	assert_int_equal(others, 10 * (24 + 25 + 26 + 27 + 28 + 29 + 30));
	assert_true(ud_drops_has(v, n, 2));
	tk_assert_cmp(v[1].count, ==, 25);
	assert_string_equal(ud_reason_name(&r, UD_REASON_OTHERS, buf, sizeof(buf)), "OTHER_REASONS");
	/* merging two full sets: still UD_MAX_REASONS slots, nothing lost */
	for (unsigned int i = 0; i < n; i++)
		ud_drops_add(w, &m, v[i].reason, v[i].count);
	for (unsigned int i = 0; i < n; i++)
		ud_drops_add(w, &m, v[i].reason, v[i].count);
	sum = 0;
	for (unsigned int i = 0; i < m; i++)
		sum += w[i].count;
	assert_int_equal(m, UD_MAX_REASONS);
	assert_int_equal(sum, 2 * total);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quantile_interpolates_inside_bucket),
		cmocka_unit_test(test_drops_fold_into_other_reasons),
		cmocka_unit_test(test_quantile_spans_buckets),
		cmocka_unit_test(test_quantile_open_last_bucket_ends_at_max),
		cmocka_unit_test(test_quantile_empty_is_nan),
		cmocka_unit_test(test_le_edges_match_kernel_buckets),
		cmocka_unit_test(test_state_thresholds),
		cmocka_unit_test(test_cumul_delta),
		cmocka_unit_test(test_row_from_two_readings),
		cmocka_unit_test(test_row_oldest_waiting_datagram),
		cmocka_unit_test(test_row_port_change_is_a_new_socket),
		cmocka_unit_test(test_entry_adds_up_the_cpus_of_its_generation),
		cmocka_unit_test(test_rows_sort_worst_first),
		cmocka_unit_test(test_reasons_from_btf),
		cmocka_unit_test(test_reasons_without_enum),
		cmocka_unit_test(test_owner_of_own_socket),
		cmocka_unit_test(test_owner_in_a_proc_tree),
		cmocka_unit_test(test_ledger_counts_the_reads_of_an_evicted_socket),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
