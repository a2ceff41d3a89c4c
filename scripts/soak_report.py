#!/usr/bin/python3
"""The soak's start-vs-end table and its invariants (scripts/soak.sh).

  soak_report.py DIR

DIR holds what scripts/soak.sh gathered: params.json (what the run was asked
to do), the readings of scripts/soak_sample.py for bbrtrace (bt.*) and
udpdwell (ud.*) at the start (after the warm-up), at the end (still under
load) and once the load stopped and the counters settled (final), the two
load generators' figures (tcp.json, udp.json), bbrtrace's summary record
(bt.summary.json) and its count of sample lines (bt.sample_lines),
udpdwell's last interval record (ud.last.json), the tools' exit statuses
(bt.rc, ud.rc) and promtool's verdict on every scrape (promtool.txt).
Prints the table, the verdict ("stable", or which figure grew past its bound)
and each invariant with ok or FAIL; exit 1 when one fails.
"""
import json
import os
import sys
from datetime import datetime

# the /metrics names the tools serve (bbrtrace/metrics.c, dwell/udpdwell_metrics.c)
BT_SAMPLES = "bbrtrace_samples_total"
BT_LOST = "bbrtrace_lost_events_total"
BT_UNTRACKED = "bbrtrace_untracked_samples_total"
BT_FLOWS = "bbrtrace_flows"
UD_EVICTED = "udpdwell_sockets_evicted_total"
UD_UNATTRIBUTED = "udpdwell_unattributed_reads_total"
BT_PER_ACK_PROG = "bt_main"  # the struct_ops program run on every ACK (bpf/bbr_traced.bpf.c)
KIB = 1024
# how many more samples a /metrics page may hold at the end than at the start:
# its per-flow and per-socket series are bounded by --max-flows and
# --max-sockets, and both tables are full at the start reading
SERIES_SLACK = 0


def ud_counter_index(name):
    """an enum ud_counter value, read from bpf/contract/udpdwell.h"""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "../bpf/contract/udpdwell.h")) as f:
        text = f.read()
    body = text[text.index("enum ud_counter {"):].split("}", 1)[0].split("{", 1)[1]
    names = [ln.split("/*")[0].strip().rstrip(",").split("=")[0].strip()
             for ln in body.splitlines()]
    return [n for n in names if n].index(name)


class Run:
    def __init__(self, d):
        self.d = d
        self.p = self.json("params.json")
        self.failed = 0
        self._intervals = None

    def json(self, name, default=None):
        try:
            with open(os.path.join(self.d, name)) as f:
                return json.load(f)
        except (OSError, ValueError):
            return default

    def text(self, name, default=""):
        try:
            with open(os.path.join(self.d, name)) as f:
                return f.read().strip()
        except OSError:
            return default

    def intervals(self):
        """udpdwell's interval records, each with its wall time in seconds"""
        if self._intervals is not None:
            return self._intervals
        out = self._intervals = []
        try:
            with open(os.path.join(self.d, "dwell.jsonl")) as f:
                for line in f:
                    if line.startswith('{"type":"interval"'):
                        r = json.loads(line)
                        r["wall"] = datetime.fromisoformat(r["time"].replace("Z", "+00:00")).timestamp()
                        out.append(r)
        except (OSError, ValueError):
            pass
        return out

    def ud_packets(self, after, until, key="packets"):
        return sum(r.get(key, 0) for r in self.intervals() if after < r["wall"] <= until)

    def reading(self, tool, phase):
        return self.json(f"{tool}.{phase}.json", {})

    def check(self, ok, what):
        print(f"  {'ok  ' if ok else 'FAIL'}  {what}")
        if not ok:
            self.failed += 1


def mib(kib):
    return f"{kib / KIB:.1f} MiB" if kib is not None else "?"


def row(name, start, end, change="", ratio="", note=""):
    print(f"  {name:<38} {start:>12} {end:>12} {change:>12} {ratio:>8}  {note}")


def ratio(a, b):
    """the growth ratio end / start"""
    return f"x{b / a:.3f}" if a and b is not None else ""


def delta(a, b, key):
    return b.get(key, 0) - a.get(key, 0)


def metric(r, name):
    v = r.get("metrics", {}).get(name)
    return int(v) if v is not None else None


def prog_window(s, e, names=None):
    """(runs, ns) of the programs named (all when None) between two readings"""
    runs = ns = 0
    for n, p in e.get("progs", {}).items():
        if names is not None and n not in names:
            continue
        q = s.get("progs", {}).get(n, {})
        runs += p["run_cnt"] - q.get("run_cnt", 0)
        ns += p["run_time_ns"] - q.get("run_time_ns", 0)
    return runs, ns


def memory_rows(s, e):
    for name, key in (("RSS (VmRSS)", "rss_kib"), ("RSS, anonymous (RssAnon)", "rss_anon_kib")):
        row(name, mib(s.get(key)), mib(e.get(key)), f"{delta(s, e, key):+d} KiB",
            ratio(s.get(key), e.get(key)))
    row(f"BPF map memory ({len(e.get('maps', {}))} maps, memlock)",
        f"{s.get('map_bytes', 0) / KIB:.1f} KiB", f"{e.get('map_bytes', 0) / KIB:.1f} KiB",
        f"{delta(s, e, 'map_bytes'):+d} B", ratio(s.get("map_bytes"), e.get("map_bytes")))
    a, b = s.get("metrics", {}).get("series"), e.get("metrics", {}).get("series")
    row("/metrics samples (series)", f"{a}", f"{b}", f"{(b or 0) - (a or 0):+d}", ratio(a, b))


def counter_row(name, s, e, key, per_s=False):
    a, b = metric(s, key), metric(e, key)
    if a is None or b is None:
        row(name, str(a), str(b))
        return
    dt = e["t"] - s["t"]
    row(name, f"{a:,}", f"{b:,}", f"{b - a:+,}", "", f"{(b - a) / dt:,.0f}/s" if per_s else "")


def per_event_rows(name, early, late, unit_ns=1000.0, unit="us"):
    """a per-event figure over the early window (start column) and the late one (end column)"""
    a, b = early, late
    fa = f"{a / unit_ns:.2f} {unit}" if a is not None else "-"
    fb = f"{b / unit_ns:.2f} {unit}" if b is not None else "-"
    row(name, fa, fb, "", ratio(a, b))


def window(run, tool, p0, p1, events):
    """(CPU ns per event, BPF ns per event, events, seconds) between readings p0 and p1"""
    s, e = run.reading(tool, p0), run.reading(tool, p1)
    n = events(s, e)
    if not s or not e or not n:
        return None, None, n, 0
    _, ns = prog_window(s, e)
    return delta(s, e, "cpu_s") * 1e9 / n, ns / n, n, e["t"] - s["t"]


def cpu_rows(run, tool, what, events):
    s, e = run.reading(tool, "start"), run.reading(tool, "end")
    cpu = delta(s, e, "cpu_s")
    row("CPU, user+sys", f"{s.get('cpu_s', 0):.2f} s", f"{e.get('cpu_s', 0):.2f} s", f"{cpu:+.2f} s",
        "", f"{cpu / (e['t'] - s['t']) * 100:.1f}% of a CPU from start to end")
    c0, b0, n0, t0 = window(run, tool, "warmup", "start", events)
    c1, b1, n1, t1 = window(run, tool, "late", "end", events)
    per_event_rows(f"CPU per {what}, user+sys", c0, c1)
    per_event_rows(f"BPF programs per {what} (bpf_stats)", b0, b1, 1.0, "ns")
    row(f"  ({what}s in the two {t1:.0f} s windows)", f"{n0 or 0:,}", f"{n1 or 0:,}", "", "",
        "start: warm-up reading to start; end: late reading to end")


def bt_acks(s, e):
    return delta(s.get("metrics", {}), e.get("metrics", {}), BT_SAMPLES)


def bbrtrace_table(run):
    s, e = run.reading("bt", "start"), run.reading("bt", "end")
    print(f"bbrtrace (backend {run.p['backend']}, --max-flows {run.p['max_flows']})")
    memory_rows(s, e)
    counter_row("ACKs traced (samples)", s, e, BT_SAMPLES, per_s=True)
    counter_row("lost events", s, e, BT_LOST)
    counter_row("samples of untracked flows", s, e, BT_UNTRACKED)
    row("flows tracked (open)", metric(s, BT_FLOWS), metric(e, BT_FLOWS), "", "", "")
    cpu_rows(run, "bt", "ACK", bt_acks)


def udpdwell_table(run):
    s, e = run.reading("ud", "start"), run.reading("ud", "end")
    print(f"udpdwell (--max-sockets {run.p['max_sockets']}, ports {run.p['udp_ports']})")
    memory_rows(s, e)
    counter_row("sockets evicted", s, e, UD_EVICTED, per_s=True)
    dgrams = run.ud_packets(s.get("wall", 0), e.get("wall", 0))
    row("datagrams timed (interval records)", "", "", f"{dgrams:,}", "",
        f"{dgrams / (e['t'] - s['t']):,.0f}/s")
    cpu_rows(run, "ud", "datagram", lambda a, b: run.ud_packets(a.get("wall", 0), b.get("wall", 0)))


def load_table(run):
    t, u = run.json("tcp.json", {}), run.json("udp.json", {})
    print("load (tests/tools/soakload.py)")
    row("TCP flows open at once", "", "",
        f"{t.get('min_established_after_ramp')}..{t.get('max_established')}", "",
        f"asked {run.p['flows']}; min once ramped up; time-weighted mean "
        f"{t.get('mean_established_after_ramp')}")
    row("TCP flows opened and closed", "", "", f"{t.get('closed', 0):,}", "",
        f"{t.get('connect_failed')} connects failed; connect took {t.get('connect_s_mean')} s "
        f"on average, {t.get('connect_s_max')} s at most")
    row("UDP sockets opened and closed", "", "", f"{u.get('closed', 0):,}", "",
        f"{u.get('received', 0):,} datagrams read of {u.get('sent', 0):,} sent")


def table_full(run, tool):
    """whether the load can fill TOOL's table (then its /metrics series stop growing)"""
    if tool == "bt":  # flows leave when they close: its table fills only past --max-flows
        return run.p["flows"] > run.p["max_flows"]
    return run.p["udp_sockets"] > run.p["max_sockets"]


def growth(run, tool, name):
    """the figures of TOOL that grew past their bound between start and end"""
    s, e, f = (run.reading(tool, p) for p in ("start", "end", "final"))
    slack, out = run.p["rss_slack_kib"], []
    grew = delta(s, e, "rss_kib")
    if grew > slack:
        out.append(f"{name} RSS +{grew} KiB (bound {slack} KiB)")
    if not (s.get("maps") and s.get("maps") == e.get("maps") == f.get("maps")):
        out.append(f"{name} BPF maps {s.get('map_bytes')} B -> {e.get('map_bytes')} B "
                   f"-> {f.get('map_bytes')} B ({len(s.get('maps', {}))} -> {len(f.get('maps', {}))} maps)")
    a, b = s.get("metrics", {}).get("series"), e.get("metrics", {}).get("series")
    if table_full(run, tool) and (a is None or b is None or b - a > SERIES_SLACK):
        out.append(f"{name} /metrics series {a} -> {b} (bound +{SERIES_SLACK})")
    return out


def memory_checks(run, tool, name):
    s, e, f = (run.reading(tool, p) for p in ("start", "end", "final"))
    slack = run.p["rss_slack_kib"]
    grew = delta(s, e, "rss_kib")
    run.check(grew <= slack, f"{name}: RSS grew {grew} KiB once warm (bound {slack} KiB)")
    same = s.get("maps") == e.get("maps") == f.get("maps") and s.get("maps")
    run.check(bool(same), f"{name}: BPF map memory unchanged: {len(e.get('maps', {}))} maps, "
              f"{s.get('map_bytes')} B at the start, {e.get('map_bytes')} B at the end, "
              f"{f.get('map_bytes')} B once the load stopped")
    a, b = s.get("metrics", {}).get("series"), e.get("metrics", {}).get("series")
    if not table_full(run, tool):
        print(f"  --    {name}: /metrics samples not judged: its table cannot fill with this load")
        return
    run.check(a is not None and b is not None and b - a <= SERIES_SLACK,
              f"{name}: /metrics holds {a} samples at the start, {b} at the end "
              f"(bound +{SERIES_SLACK}: its tables were full at the start)")


def bbrtrace_checks(run):
    memory_checks(run, "bt", "bbrtrace")
    f, summ = run.reading("bt", "final"), run.json("bt.summary.json", {})
    lines = int(run.text("bt.sample_lines", "-1"))
    run.check(metric(f, BT_SAMPLES) == summ.get("samples") == lines,
              f"bbrtrace: samples: /metrics {metric(f, BT_SAMPLES)}, summary {summ.get('samples')}, "
              f"sample records in the trace {lines}")
    grew = delta(run.reading("bt", "start").get("metrics", {}),
                 run.reading("bt", "end").get("metrics", {}), BT_SAMPLES)
    run.check(grew > 0, f"bbrtrace: traced {grew} ACKs between the start and the end")
    if run.p["backend"] == "struct_ops":
        runs = f.get("progs", {}).get(BT_PER_ACK_PROG, {}).get("run_cnt")
        seen = (metric(f, BT_SAMPLES) or 0) + (metric(f, BT_LOST) or 0)
        run.check(runs == seen and runs > 0,
                  f"bbrtrace: events the kernel made ({BT_PER_ACK_PROG} ran {runs} times, bpf_stats) = "
                  f"samples + lost it reports ({seen}): no event lost uncounted")
    run.check(metric(f, BT_LOST) == summ.get("lost"),
              f"bbrtrace: lost events counted: /metrics {metric(f, BT_LOST)}, "
              f"summary {summ.get('lost')}")
    un = metric(f, BT_UNTRACKED)
    must = run.p["flows"] > run.p["max_flows"]
    run.check(un == summ.get("samples_untracked") and (un > 0 if must else un == 0),
              f"bbrtrace: samples of untracked flows: /metrics {un}, summary {summ.get('samples_untracked')}"
              + (f" (> 0: {run.p['flows']} flows > --max-flows {run.p['max_flows']})" if must
                 else f" (0: {run.p['flows']} flows within --max-flows {run.p['max_flows']})"))
    live, bound = metric(run.reading("bt", "end"), BT_FLOWS), run.p["flows"] + run.p["flows"] // 10
    run.check(live is not None and 0 < live <= bound,
              f"bbrtrace: {live} flows tracked at the end, at most the {run.p['flows']} the load keeps "
              f"open and a tenth (closes forget flows: none is kept once its socket closed)")
    run.check(run.text("bt.rc") == "0", f"bbrtrace: exit status {run.text('bt.rc', '?')} on SIGINT")


def unreported_ports(run, u):
    """{port: datagrams} of the load's sockets that no socket record of udpdwell names"""
    seen = set()
    try:
        with open(os.path.join(run.d, "dwell.jsonl")) as f:
            for line in f:
                if line.startswith('{"type":"socket"'):
                    seen.add(json.loads(line)["port"])
    except (OSError, ValueError):
        return None
    first, per = u.get("first_port", 0), u.get("received", 0) // max(1, u.get("opened", 1))
    return {p: per for p in range(first, first + u.get("opened", 0)) if p not in seen}


def datagram_checks(run, u):
    """every datagram the load read was timed by udpdwell, or is a read it counts as unattributed"""
    got, timed = u.get("received"), run.ud_packets(0, float("inf"))
    unm, full = run.ud_packets(0, float("inf"), "unmatched"), run.ud_packets(0, float("inf"), "ring_full")
    lost = run.ud_packets(0, float("inf"), "unattributed")
    missing = unreported_ports(run, u) or {}
    ok = got is not None and got > 0 and timed + unm + lost == got
    run.check(ok, f"udpdwell: datagrams the load read {got} = timed {timed} + unmatched {unm} + "
              f"unattributed {lost} (interval records; ring_full {full}; sockets never "
              f"reported: {len(missing)}, {sorted(missing)[:5]})")
    run.check(lost >= sum(missing.values()),
              f"udpdwell: the sockets never reported read {sum(missing.values())} datagrams, "
              f"within the unattributed {lost}")
    mlost = metric(run.reading("ud", "final"), UD_UNATTRIBUTED)
    run.check(mlost == lost, f"udpdwell: unattributed reads: /metrics {mlost}, interval records {lost}")


def udpdwell_checks(run):
    memory_checks(run, "ud", "udpdwell")
    f, last, u = run.reading("ud", "final"), run.json("ud.last.json", {}), run.json("udp.json", {})
    n, m = u.get("opened", 0), run.p["max_sockets"]
    want = max(0, n - m)
    ev = metric(f, UD_EVICTED)
    run.check(u.get("closed_undrained") == 0 and n == run.p["udp_sockets"] == u.get("closed"),
              f"udpdwell: the load opened {n} sockets (asked {run.p['udp_sockets']}), each closed "
              f"with its queue read ({u.get('closed_undrained')} not)")
    run.check(ev == last.get("evicted") == want,
              f"udpdwell: evictions = sockets - table = {n} - {m} = {want}: /metrics {ev}, "
              f"last interval record {last.get('evicted')}")
    datagram_checks(run, u)
    cnt = f.get("counters", {})
    ins = cnt.get(str(ud_counter_index("UD_CNT_INSERTS")))
    bev = cnt.get(str(ud_counter_index("UD_CNT_EVICTED")))
    run.check(ins == n and bev == ev,
              f"udpdwell: its BPF counters: {ins} slots given (one per socket: {n}), {bev} evicted")
    run.check(run.text("ud.rc") == "0", f"udpdwell: exit status {run.text('ud.rc', '?')} on SIGINT")


def warm_checks(run):
    """the tables were full at the start reading: what follows is steady state"""
    bt, ud = run.reading("bt", "start"), run.reading("ud", "start")
    n = metric(bt, BT_FLOWS)
    run.check(n is not None and n >= min(run.p["flows"], run.p["max_flows"]) // 2,
              f"warm at the start: bbrtrace tracks {n} flows (the load keeps {run.p['flows']} open)")
    if run.p["udp_sockets"] > run.p["max_sockets"]:
        n = metric(ud, UD_EVICTED)
        run.check(n is not None and n > 0,
                  f"warm at the start: udpdwell's socket table full ({n} sockets evicted)")


def load_checks(run):
    t = run.json("tcp.json", {})
    run.check(t.get("max_established") == run.p["flows"] and t.get("servers_left_open") == 0,
              f"load: {t.get('max_established')} TCP flows open at once (asked {run.p['flows']}), "
              f"{t.get('servers_left_open')} left open at the end")
    bad = [ln for ln in run.text("promtool.txt").splitlines() if not ln.endswith(" ok")]
    n = len(run.text("promtool.txt").splitlines())
    run.check(n > 0 and not bad, f"promtool check metrics: {n - len(bad)} of {n} scrapes pass"
              + (": " + "; ".join(bad) if bad else ""))


def report(d):
    run = Run(d)
    p = run.p
    print(f"soak: {p['seconds']} s of load: {p['flows']} TCP flows ({p['cc']}), "
          f"{p['udp_sockets']} UDP sockets; start after {p['warmup']} s of warm-up, "
          f"end {p['end_margin']} s before the load stops")
    print(f"  {'':<38} {'start':>12} {'end':>12} {'change':>12} {'end/start':>8}")
    bbrtrace_table(run)
    udpdwell_table(run)
    load_table(run)
    grew = growth(run, "bt", "bbrtrace") + growth(run, "ud", "udpdwell")
    print(f"verdict: {'stable' if not grew else 'grew: ' + '; '.join(grew)}")
    print("invariants")
    warm_checks(run)
    bbrtrace_checks(run)
    udpdwell_checks(run)
    load_checks(run)
    print(f"soak: {'all invariants hold' if not run.failed else f'{run.failed} invariant(s) failed'}")
    return 1 if run.failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: soak_report.py DIR")
    sys.exit(report(sys.argv[1]))
