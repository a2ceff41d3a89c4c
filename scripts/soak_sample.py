#!/usr/bin/python3
"""What scripts/soak.sh measures of a running tool (scripts/soak_report.py
compares the readings).

  soak_sample.py sample --pid PID --metrics URL --out FILE.json [--counters MAP]
      one reading of the process: time (monotonic and wall), VmRSS and RssAnon, user+system CPU,
      the BPF programs it holds (/proc/PID/fdinfo prog_id) with their run
      counts and run time (bpftool; counted while BPF statistics are on), the
      maps those programs use and the maps it holds (bpftool's bytes_memlock
      for each), and its /metrics page (kept beside FILE as FILE.prom). With
      --counters MAP, the per-CPU array MAP summed over the CPUs, per index.
Exit 0, or 1 with a line on stderr (the process gone, /metrics unanswered).
"""
import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request

CLK_TCK = os.sysconf("SC_CLK_TCK")
SCRAPE_TIMEOUT_S = 10


def bpftool(*args):
    out = subprocess.run(["bpftool", "-j", *args], capture_output=True, text=True, timeout=30)
    return json.loads(out.stdout) if out.returncode == 0 and out.stdout.strip() else None


def status_kib(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return None


def cpu_seconds(pid):
    """utime + stime of the whole process (every thread), in seconds"""
    with open(f"/proc/{pid}/stat") as f:
        rest = f.read().rsplit(")", 1)[1].split()
    return (int(rest[11]) + int(rest[12])) / CLK_TCK  # fields 14 and 15


def bpf_fds(pid):
    """the ids of the BPF programs and maps the process holds descriptors of"""
    progs, maps = set(), set()
    fd_dir = f"/proc/{pid}/fd"
    for fd in os.listdir(fd_dir):
        try:
            link = os.readlink(f"{fd_dir}/{fd}")
            if link not in ("anon_inode:bpf-prog", "anon_inode:bpf-map"):
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                for line in f:
                    k, _, v = line.partition(":")
                    if k == "prog_id":
                        progs.add(int(v))
                    elif k == "map_id":
                        maps.add(int(v))
        except OSError:
            continue  # a descriptor closed while we looked
    return progs, maps


def percpu_sums(map_id):
    """a per-CPU array of u64 summed over the CPUs: {index: sum}"""
    sums = {}
    for e in bpftool("map", "dump", "id", str(map_id)) or []:
        key = int.from_bytes(bytes(int(b, 16) for b in e["key"]), "little")
        sums[key] = sum(int.from_bytes(bytes(int(b, 16) for b in v["value"]), "little")
                        for v in e["values"])
    return sums


def metrics(url, prom_file):
    """the page, saved; every sample without labels as {name: value}"""
    with urllib.request.urlopen(url, timeout=SCRAPE_TIMEOUT_S) as r:
        page = r.read().decode()
    with open(prom_file, "w") as f:
        f.write(page)
    out = {"series": sum(1 for ln in page.splitlines() if ln and not ln.startswith("#"))}
    for line in page.splitlines():
        w = line.split()
        if len(w) == 2 and not line.startswith("#") and "{" not in w[0]:
            v = float(w[1])
            out[w[0]] = int(v) if v.is_integer() else v
    return out


def sample(a):
    progs, held = bpf_fds(a.pid)
    s = dict(t=time.monotonic(), wall=time.time(), rss_kib=status_kib(a.pid, "VmRSS"),
             rss_anon_kib=status_kib(a.pid, "RssAnon"), cpu_s=cpu_seconds(a.pid),
             progs={}, maps={})
    used = set(held)
    for pid_ in sorted(progs):
        p = bpftool("prog", "show", "id", str(pid_))
        if not p:
            continue
        s["progs"][p["name"]] = dict(id=p["id"], run_cnt=p.get("run_cnt", 0),
                                     run_time_ns=p.get("run_time_ns", 0))
        used.update(p.get("map_ids", []))
    for mid in sorted(used):
        m = bpftool("map", "show", "id", str(mid))
        if m:
            s["maps"][str(mid)] = dict(name=m.get("name", ""), type=m["type"],
                                       bytes=m["bytes_memlock"])
            if a.counters and m.get("name") == a.counters:
                s["counters"] = percpu_sums(mid)
    s["map_bytes"] = sum(m["bytes"] for m in s["maps"].values())
    s["metrics"] = metrics(a.metrics, a.out + ".prom")
    with open(a.out, "w") as f:
        json.dump(s, f)
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample")
    s.add_argument("--pid", type=int, required=True)
    s.add_argument("--metrics", required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--counters")
    a = p.parse_args()
    try:
        return sample(a)
    except (OSError, ValueError, subprocess.SubprocessError) as e:
        print(f"soak_sample: pid {a.pid}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
