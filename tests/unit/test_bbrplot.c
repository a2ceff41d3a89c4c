// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbrplot's data preparation: what each gnuplot template is given, from
 * small traces written here in bbrtrace's JSON-lines format and from the real
 * sweep CSVs in tests/fixtures.
 */
#include <ftw.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "tk_assert.h"

#include "plots/plotdata.h"

static char dir[64];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_bbrplot.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static void write_file(const char *name, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* the whole of DIR/NAME */
static char *slurp(const char *name)
{
	static char buf[8192];
	char path[128];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static const char *path_of(const char *name)
{
	static char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

#define SAMPLE(cookie, sport, wall, una, bw, rcv, snd)                                                         \
	"{\"type\":\"sample\",\"t_ns\":" #wall ",\"wall_ns\":" #wall ",\"cookie\":" #cookie                    \
	",\"saddr\":\"10.0.0.1\",\"daddr\":\"10.0.0.2\",\"sport\":" #sport ",\"dport\":5000,\"snd_una\":" #una \
	",\"pacing_rate_bps\":null,\"rcv_interval_us\":" #rcv ",\"snd_interval_us\":" #snd                      \
	",\"is_app_limited\":true,\"bw_bps\":" #bw "}\n"

static const char trace[] =
	"{\"type\":\"hello\"}\n"
	SAMPLE(7, 1111, 1000000000, 1, 100000000, 50, 20)
	SAMPLE(9, 2222, 1500000000, 1, 200000000, 0, 30)
	SAMPLE(9, 2222, 2000000000, 2, 300000000, 40000, 100)
	"{\"type\":\"collapse\",\"wall_ns\":2000000000,\"t_ns\":2000000000,\"cookie\":9,\"saddr\":\"10.0.0.1\","
	"\"daddr\":\"10.0.0.2\",\"sport\":2222,\"dport\":5000,\"snd_una\":2,\"bw_prev_bps\":212000000,"
	"\"bw_bps\":3100000,\"cause\":\"delayed_ack\"}\n"
	SAMPLE(9, 2222, 2500000000, 3, 300000000, 10, 10)
	"{\"type\":\"summary\",\"samples\":4}\n";

/* by default the flow with the most samples; time 0 is the trace's first sample */
static void test_dip_trace_default_flow(void **state)
{
	struct pd_flow_sel sel = { 0 };
	struct pd_dip_info info;
	char err[256];
	(void)state;

	write_file("t.jsonl", trace);
	assert_int_equal(pd_dip_trace(path_of("t.jsonl"), &sel, dir, &info, err, sizeof(err)), 0);
	assert_int_equal(info.cookie, 9);
	assert_int_equal(info.flows, 2);
	assert_int_equal(info.samples, 3);
	assert_int_equal(info.sport, 2222);
	assert_string_equal(info.saddr, "10.0.0.1");
	assert_true(info.wall);
	tk_assert_cmp(info.origin_s, ==, 1.0);
	tk_assert_near(info.last_s, 1.5, 1e-9);
	assert_int_equal(info.collapses[BT_CAUSE_DELAYED_ACK], 1);
	assert_false(info.have_offset);
	/* a zero interval is drawn at the log axis' floor (PD_INTERVAL_FLOOR_US);
	 * a null pacing rate is not drawn */
	assert_non_null(strstr(slurp("samples.dat"), "\n0.500000000 200 NaN 1 30 1\n1.000000000 300 NaN 40000 100 1\n"));
}

static void test_dip_trace_collapse_blocks(void **state)
{
	struct pd_flow_sel sel = { 0 };
	struct pd_dip_info info;
	char err[256];
	const char *c;
	(void)state;

	write_file("t.jsonl", trace);
	assert_int_equal(pd_dip_trace(path_of("t.jsonl"), &sel, dir, &info, err, sizeof(err)), 0);
	c = slurp("collapses.dat");
	/* block 0 (delayed_ack) holds it, after its NaN row, not throttling (a
	 * trace without impacts); the others hold a NaN row only */
	assert_non_null(strstr(c, "# delayed_ack\nNaN NaN NaN 0\n1.000000000 3.1 212 0\n"));
	assert_non_null(strstr(c, "# rate_drop\nNaN NaN NaN 0\n\n\n"));
	assert_non_null(strstr(c, "# other\nNaN NaN NaN 0\n\n\n"));
	/* no need_bps: no need drawn; no stall records: a NaN row per stall cause */
	assert_string_equal(slurp("need.dat"), "# t_s need_mbps demand_mbps: at each collapse (bbrtrace's need_bps, demand_bps)\n");
	assert_int_equal(info.need_rows, 0);
	assert_non_null(strstr(slurp("stalls.dat"), "# nagle\nNaN NaN\n\n\n"));
}

static void test_dip_trace_chosen_flow(void **state)
{
	struct pd_flow_sel by_cookie = { .have_cookie = true, .cookie = 7 };
	struct pd_flow_sel by_sender = { .sender = "10.0.0.1:1111" };
	struct pd_flow_sel missing = { .sender = "10.0.0.1:3333" };
	struct pd_dip_info info;
	char err[256];
	(void)state;

	write_file("t.jsonl", trace);
	assert_int_equal(pd_dip_trace(path_of("t.jsonl"), &by_cookie, dir, &info, err, sizeof(err)), 0);
	assert_int_equal(info.samples, 1);
	assert_int_equal(info.sport, 1111);
	assert_int_equal(pd_dip_trace(path_of("t.jsonl"), &by_sender, dir, &info, err, sizeof(err)), 0);
	assert_int_equal(info.cookie, 7);
	assert_int_equal(pd_dip_trace(path_of("t.jsonl"), &missing, dir, &info, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "t.jsonl: no samples of a socket at 10.0.0.1:3333"));
}

static void test_dip_trace_errors(void **state)
{
	struct pd_flow_sel sel = { 0 };
	struct pd_dip_info info;
	char err[256];
	(void)state;

	write_file("none.jsonl", "{\"type\":\"summary\"}\n");
	assert_int_equal(pd_dip_trace(path_of("none.jsonl"), &sel, dir, &info, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "none.jsonl: no \"sample\" records: nothing to draw"));
	write_file("bad.jsonl", SAMPLE(1, 1, 1, 1, 1, 1, 1) "{\"type\":\n");
	assert_int_equal(pd_dip_trace(path_of("bad.jsonl"), &sel, dir, &info, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "bad.jsonl:2: not a JSON record:"));
}

/* a trace still being written: its last line, cut short, is left out and
 * the lines before it drawn as they would be alone; a last line that lacks
 * only its '\n' is drawn */
static void test_dip_trace_cut_last_line(void **state)
{
	struct pd_flow_sel sel = { 0 };
	struct pd_dip_info info;
	char err[256], whole[4096], text[8192];
	const char *cut = SAMPLE(9, 2222, 3000000000, 4, 300000000, 10, 10);
	(void)state;

	write_file("t.jsonl", trace);
	assert_int_equal(pd_dip_trace(path_of("t.jsonl"), &sel, dir, &info, err, sizeof(err)), 0);
	snprintf(whole, sizeof(whole), "%s", slurp("samples.dat"));
	snprintf(text, sizeof(text), "%s%.60s", trace, cut);
	write_file("cut.jsonl", text);
	assert_int_equal(pd_dip_trace(path_of("cut.jsonl"), &sel, dir, &info, err, sizeof(err)), 0);
	assert_int_equal(info.samples, 3);
	assert_int_equal(info.collapses[BT_CAUSE_DELAYED_ACK], 1);
	assert_string_equal(slurp("samples.dat"), whole);
	/* the same sample whole but for its '\n' is drawn: a fourth */
	snprintf(text, sizeof(text), "%s%.*s", trace, (int)strlen(cut) - 1, cut);
	write_file("nonl.jsonl", text);
	assert_int_equal(pd_dip_trace(path_of("nonl.jsonl"), &sel, dir, &info, err, sizeof(err)), 0);
	assert_int_equal(info.samples, 4);
}

/* a capture given as the trace is named as one, with where a capture goes */
static void test_dip_trace_capture(void **state)
{
	struct pd_flow_sel sel = { 0 };
	struct pd_dip_info info;
	char err[256];
	(void)state;

	write_file("c.pcap", "\xd4\xc3\xb2\xa1\x02");
	assert_int_equal(pd_dip_trace(path_of("c.pcap"), &sel, dir, &info, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "c.pcap looks like a packet capture (pcap), not a bbrtrace trace: give it with --pcap"));
	write_file("c.pcapng", "\n\r\r\n\x1c");
	assert_int_equal(pd_dip_trace(path_of("c.pcapng"), &sel, dir, &info, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "c.pcapng looks like a packet capture (pcapng)"));
}

/* a joined trace's frame times give the capture's clock offset (the median) */
static void test_dip_trace_offset_from_join(void **state)
{
	struct pd_flow_sel sel = { 0 };
	struct pd_dip_info info;
	char err[256];
	(void)state;

	write_file("j.jsonl",
		   "{\"type\":\"sample\",\"wall_ns\":1000000000,\"cookie\":1,\"saddr\":\"a\",\"sport\":1,\"frame_time_ns\":1000002000}\n"
		   "{\"type\":\"sample\",\"wall_ns\":2000000000,\"cookie\":1,\"saddr\":\"a\",\"sport\":1,\"frame_time_ns\":2000003000}\n"
		   "{\"type\":\"sample\",\"wall_ns\":3000000000,\"cookie\":1,\"saddr\":\"a\",\"sport\":1,\"frame_time_ns\":3000900000}\n");
	assert_int_equal(pd_dip_trace(path_of("j.jsonl"), &sel, dir, &info, err, sizeof(err)), 0);
	assert_true(info.have_offset);
	tk_assert_near(info.offset_s, 3e-6, 1e-9);
}

/* the sender's direction of bbrpcap's CSV, on the trace's clock, floored */
static void test_dip_tput(void **state)
{
	struct pd_dip_info info = { .sport = 2222, .origin_s = 100.0 };
	char err[256];
	double first = 0;
	FILE *csv;
	(void)state;

	strcpy(info.saddr, "10.0.0.1");
	write_file("tp.csv", "flow,src,dst,t_s,epoch_s,frames,data_bps,acked_bps,dip\n"
			     "1,10.0.0.1:2222,10.0.0.2:5000,0.0,100.5,3,8000000,4000000,0\n"
			     "1,10.0.0.1:2222,10.0.0.2:5000,0.1,100.6,0,0,0,1\n"
			     "1,10.0.0.2:5000,10.0.0.1:2222,0.0,100.5,3,999,999,0\n");
	csv = fopen(path_of("tp.csv"), "r");
	assert_non_null(csv);
	assert_int_equal(pd_dip_tput(csv, &info, 0.25, dir, &first, err, sizeof(err)), 2);
	fclose(csv);
	assert_string_equal(slurp("tput.dat"), "# t_s sent_mbps acked_mbps dip\nNaN NaN NaN 0\n"
					     "0.250000000 8 4 0\n0.350000000 0.01 0.01 1\n");
	tk_assert_near(first, 0.25, 1e-9);
	tk_assert_near(info.last_s, 0.35, 1e-9);
}

/* a capture that started before the trace: every data file moves so that
 * time 0 is the capture's first frame, none starts before 0 */
static void test_dip_shift(void **state)
{
	struct pd_dip_info info = { .origin_s = 100, .last_s = 2 };
	char err[256];
	(void)state;

	write_file("samples.dat", "# t_s bw\n0.5 10\n2 20\n");
	write_file("collapses.dat", "# header\n# delayed_ack\nNaN NaN NaN\n1.5 0.2 10\n\n\n");
	write_file("tput.dat", "# t_s sent\nNaN NaN NaN 0\n-0.25 8 4 0\n0.75 8 4 0\n");
	write_file("need.dat", "# t_s need\n1.5 5 4\n2 5 4\n");
	write_file("stalls.dat", "# t_s duration_s\n# nagle\nNaN NaN\n1.25 0.04\n\n\n");
	write_file("demand.dat", "# t_s demand need window_s app\n0 NaN NaN 0 0\n0.5 4 5 0.5 1\n");
	write_file("gaps.dat", "# t_s duration_s\n# idle\nNaN NaN\n0.5 0.12\n\n\n# in_flight\nNaN NaN\n\n\n");
	assert_int_equal(pd_dip_shift(dir, &info, -0.25, err, sizeof(err)), 0);
	assert_string_equal(slurp("need.dat"), "# t_s need\n1.750000000 5 4\n2.250000000 5 4\n");
	/* a stall's duration is no time: only its start moves */
	assert_string_equal(slurp("stalls.dat"), "# t_s duration_s\n# nagle\nNaN NaN\n1.500000000 0.04\n\n\n");
	/* the demand's window likewise */
	assert_string_equal(slurp("demand.dat"),
			    "# t_s demand need window_s app\n0.250000000 NaN NaN 0 0\n0.750000000 4 5 0.5 1\n");
	/* a silence likewise */
	assert_string_equal(slurp("gaps.dat"),
			    "# t_s duration_s\n# idle\nNaN NaN\n0.750000000 0.12\n\n\n# in_flight\nNaN NaN\n\n\n");
	assert_string_equal(slurp("samples.dat"), "# t_s bw\n0.750000000 10\n2.250000000 20\n");
	assert_string_equal(slurp("collapses.dat"), "# header\n# delayed_ack\nNaN NaN NaN\n1.750000000 0.2 10\n\n\n");
	assert_string_equal(slurp("tput.dat"), "# t_s sent\nNaN NaN NaN 0\n0.000000000 8 4 0\n1.000000000 8 4 0\n");
	tk_assert_cmp(info.origin_s, ==, 99.75);
	tk_assert_cmp(info.last_s, ==, 2.25);
	/* a capture that starts after the trace moves nothing */
	assert_int_equal(pd_dip_shift(dir, &info, 0.5, err, sizeof(err)), 0);
	assert_string_equal(slurp("tput.dat"), "# t_s sent\nNaN NaN NaN 0\n0.000000000 8 4 0\n1.000000000 8 4 0\n");
}

/* bbrpcap found no frame of the flow: no CSV at all is no bins, not an error */
static void test_dip_tput_empty(void **state)
{
	struct pd_dip_info info = { .sport = 2222 };
	char err[256];
	double first = 0;
	FILE *csv;
	(void)state;

	write_file("empty.csv", "");
	csv = fopen(path_of("empty.csv"), "r");
	assert_non_null(csv);
	assert_int_equal(pd_dip_tput(csv, &info, 0, dir, &first, err, sizeof(err)), 0);
	fclose(csv);
	assert_string_equal(slurp("tput.dat"), "# t_s sent_mbps acked_mbps dip\nNaN NaN NaN 0\n");
}

/* a missing input is the input's fault (exit 5); data files that cannot be
 * written are the system's (exit 1) */
static void test_input_or_system(void **state)
{
	struct pd_flow_sel sel = { 0 };
	struct pd_dip_info info;
	char err[256], labels[64];
	double floor_cycles;
	(void)state;

	assert_int_equal(pd_dip_trace(path_of("missing.jsonl"), &sel, dir, &info, err, sizeof(err)), PD_ERR_INPUT);
	assert_non_null(strstr(err, "missing.jsonl: cannot open: No such file or directory"));
	assert_int_equal(pd_dwell(path_of("missing.jsonl"), dir, err, sizeof(err)), PD_ERR_INPUT);
	assert_int_equal(pd_upf(path_of("missing.csv"), dir, labels, sizeof(labels), &floor_cycles, err, sizeof(err)),
			 PD_ERR_INPUT);
	assert_int_equal(pd_sweep(path_of("missing.csv"), dir, err, sizeof(err)), PD_ERR_INPUT);

	write_file("t.jsonl", trace);
	assert_int_equal(pd_dip_trace(path_of("t.jsonl"), &sel, "/nonexistent", &info, err, sizeof(err)),
			 PD_ERR_SYSTEM);
	assert_non_null(strstr(err, "/nonexistent/samples.dat: cannot create:"));
	assert_int_equal(pd_sweep("tests/fixtures/plots/sweep.csv", "/nonexistent", err, sizeof(err)), PD_ERR_SYSTEM);
	assert_int_equal(pd_upf("tests/fixtures/upf/sweep-sample.csv", "/nonexistent", labels, sizeof(labels),
				&floor_cycles, err, sizeof(err)),
			 PD_ERR_SYSTEM);
	assert_int_equal(pd_dwell("tests/fixtures/plots/dwell.jsonl", "/nonexistent", err, sizeof(err)), PD_ERR_SYSTEM);
}

static void test_csv_split(void **state)
{
	char line[] = "a,\"b,c\",\"say \"\"hi\"\"\",,end\r\n";
	char bad[] = "a,\"open";
	char *f[8];
	(void)state;

	assert_int_equal(pd_csv_split(line, f, 8), 5);
	assert_string_equal(f[0], "a");
	assert_string_equal(f[1], "b,c");
	assert_string_equal(f[2], "say \"hi\"");
	assert_string_equal(f[3], "");
	assert_string_equal(f[4], "end");
	assert_int_equal(pd_csv_split(bad, f, 8), -1);
	/* no silent cap: a line wider than the reader takes is said to be */
	{
		char wide[] = "a,b,c,d,e,f,g,h,i";
		char exact[] = "a,b,c,d,e,f,g,h";

		assert_int_equal(pd_csv_split(wide, f, 8), PD_CSV_TOO_WIDE);
		assert_int_equal(pd_csv_split(exact, f, 8), 8);
	}
}

/* udpdwell's socket records, summed per socket over intervals, worst first */
static void test_dwell(void **state)
{
	char err[256];
	const char *d;
	(void)state;

	write_file("d.jsonl",
		   "{\"type\":\"interval\",\"packets\":3}\n"
		   "{\"type\":\"socket\",\"port\":1,\"addr\":\"10.0.0.9\",\"comm\":\"fast\",\"packets\":4,\"avg_us\":5,"
		   "\"p99_us\":9,\"max_us\":9,\"buckets\":[4,0,0,0,0,0,0,0,0],\"drops\":{},\"state\":\"OK\"}\n"
		   "{\"type\":\"socket\",\"port\":2,\"addr\":\"10.0.0.9\",\"comm\":\"slow\",\"packets\":2,\"avg_us\":30000,"
		   "\"p99_us\":40000,\"max_us\":40000,\"buckets\":[0,0,0,0,0,0,0,2,0],\"drops\":{\"SOCKET_RCVBUFF\":3},"
		   "\"state\":\"ALERT\"}\n"
		   "{\"type\":\"socket\",\"port\":1,\"addr\":\"10.0.0.9\",\"comm\":\"fast\",\"packets\":4,\"avg_us\":15,"
		   "\"p99_us\":20,\"max_us\":20,\"buckets\":[2,2,0,0,0,0,0,0,0],\"drops\":{},\"state\":\"OK\"}\n");
	assert_int_equal(pd_dwell(path_of("d.jsonl"), dir, err, sizeof(err)), 2);
	d = slurp("dwell.dat");
	assert_non_null(strstr(d, "\"bucket\" \"10.0.0.9:2 slow: ALERT, avg 30000 us, p99 40000 us, max 40000 us, 3 drops\" "
				  "\"10.0.0.9:1 fast: OK, avg 10 us, p99 20 us, max 20 us, 0 drops\"\n"));
	assert_non_null(strstr(d, "\"<=10us\" 0 75\n\"<=50us\" 0 25\n"));
	assert_non_null(strstr(d, "\"<=50ms\" 100 0\n\">50ms\" 0 0\n"));

	write_file("nob.jsonl", "{\"type\":\"socket\",\"port\":1,\"addr\":\"x\",\"buckets\":\"none\"}\n");
	assert_int_equal(pd_dwell(path_of("nob.jsonl"), dir, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "nob.jsonl:1: a socket record without its buckets array"));
}

/* udpdwell's records still being written: the socket whose record is cut
 * short is not drawn; a capture is named as one */
static void test_dwell_cut_and_capture(void **state)
{
	char err[256];
	(void)state;

	write_file("d.jsonl",
		   "{\"type\":\"interval\",\"packets\":3}\n"
		   "{\"type\":\"socket\",\"port\":1,\"addr\":\"10.0.0.9\",\"comm\":\"fast\",\"packets\":4,\"avg_us\":5,"
		   "\"p99_us\":9,\"max_us\":9,\"buckets\":[4,0,0,0,0,0,0,0,0],\"drops\":{},\"state\":\"OK\"}\n"
		   "{\"type\":\"socket\",\"port\":2,\"addr\":\"10.0.0.9\",\"comm\":\"slow\",\"packets\":2,\"avg_us\":30000,"
		   "\"p99_us\":40000,\"max_us\":40000,\"buckets\":[0,0,0,0,0,0,0,2,0],\"dr");
	assert_int_equal(pd_dwell(path_of("d.jsonl"), dir, err, sizeof(err)), 1);
	assert_null(strstr(slurp("dwell.dat"), "slow"));
	write_file("d.pcap", "\xa1\xb2\xc3\xd4\x01");
	assert_int_equal(pd_dwell(path_of("d.pcap"), dir, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "d.pcap looks like a packet capture (pcap), not udpdwell's records"));
}

/* upfbench's real sweep: a block per label, by sessions; the median floor */
static void test_upf_fixture(void **state)
{
	char err[256], labels[256];
	double floor_cycles;
	const char *u;
	(void)state;

	assert_int_equal(pd_upf("tests/fixtures/upf/sweep-sample.csv", dir, labels, sizeof(labels), &floor_cycles, err,
				sizeof(err)),
			 3);
	assert_string_equal(labels, "before batched best");
	tk_assert_near(floor_cycles, 17.26, 1e-9);
	u = slurp("upf.dat");
	assert_non_null(strstr(u, "# before: sessions cycles_per_pkt\n10000 818.6\n100000 1106.7\n\n\n"));
	assert_non_null(strstr(u, "# best: sessions cycles_per_pkt\n10000 153.3\n100000 366.4\n"));
}

static void test_upf_missing_column(void **state)
{
	char err[256], labels[64];
	double floor_cycles;
	(void)state;

	write_file("u.csv", "label,sessions\nx,1\n");
	assert_int_equal(pd_upf(path_of("u.csv"), dir, labels, sizeof(labels), &floor_cycles, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "u.csv: no column 'cycles_per_pkt' in the header"));
}

/* repro/sweep.sh's real CSV: one row per run, by cause, goodput in Mbit/s */
static void test_sweep_fixture(void **state)
{
	char err[256];
	const char *s;
	(void)state;

	assert_int_equal(pd_sweep("tests/fixtures/plots/sweep.csv", dir, err, sizeof(err)), 2);
	s = slurp("sweep.dat");
	/* the fixture predates burst_max: its column reads as none */
	assert_non_null(strstr(s, "\"native, quickack off\" 113.808801 0 0 0 0 0 0 0 0 4.00325\n"));
	assert_non_null(strstr(s, "\"native, quickack on\" 0 0 0 0 0 0 0 0 0 4.091894\n"));
}

/* where netem is missing the row says what ran */
static void test_sweep_rtt_that_ran(void **state)
{
	char err[256];
	(void)state;

	write_file("s.csv", "rtt,rtt_effective,quickack,receiver,delayed_ack_per_min,rate_drop_per_min,"
			    "loss_policer_per_min,other_per_min,lone_segment_per_min,max_expired_per_min,"
			    "sender_limited_per_min,ack_jitter_per_min,goodput_bps\n"
			    "1ms,native,on,paced,0,1.5,0,0,0.5,0,0,0,2000000\n");
	assert_int_equal(pd_sweep(path_of("s.csv"), dir, err, sizeof(err)), 1);
	assert_non_null(strstr(slurp("sweep.dat"), "\"1ms (ran native), quickack on\" 0 1.5 0 0 0.5 0 0 0 0 2\n"));
	/* any other cause's column missing is an error */
	write_file("s.csv", "rtt,rtt_effective,quickack,receiver,delayed_ack_per_min,rate_drop_per_min,"
			    "loss_policer_per_min,other_per_min,lone_segment_per_min,max_expired_per_min,"
			    "sender_limited_per_min,goodput_bps\n"
			    "1ms,native,on,paced,0,1.5,0,0,0.5,0,0,2000000\n");
	tk_assert_cmp(pd_sweep(path_of("s.csv"), dir, err, sizeof(err)), <, 0);
	assert_non_null(strstr(err, "no column 'ack_jitter_per_min' in the header"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_dip_trace_default_flow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dip_trace_collapse_blocks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dip_trace_chosen_flow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dip_trace_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dip_trace_cut_last_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dip_trace_capture, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dip_trace_offset_from_join, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dip_shift, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dip_tput, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dip_tput_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_input_or_system, setup, teardown),
		cmocka_unit_test(test_csv_split),
		cmocka_unit_test_setup_teardown(test_dwell, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dwell_cut_and_capture, setup, teardown),
		cmocka_unit_test_setup_teardown(test_upf_fixture, setup, teardown),
		cmocka_unit_test_setup_teardown(test_upf_missing_column, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sweep_fixture, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sweep_rtt_that_ran, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
