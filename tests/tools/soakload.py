#!/usr/bin/python3
"""Churning load between two network namespaces, for the soak (scripts/soak.sh).

Run it inside the receiving namespace (ip netns exec NS-b ...); it makes the
sending sockets in --peer-netns (setns around socket()), so one process with
one event loop holds both ends and knows every figure exactly.

  soakload.py tcp --peer-netns NS-a --addr A --port P --flows N --seconds S
                  [--cc NAME] [--life LO-HI] [--every-ms MS] [--chunk BYTES]
      keeps N TCP flows open at once from NS-a to a sink on A:P (in this
      namespace): each lives a random LO..HI seconds, sending CHUNK bytes
      about every MS ms (one ACK each, so one sample each for bbrtrace), then
      closes and is replaced at once by a new one.
  soakload.py udp --peer-netns NS-a --addr A --ports LO-HI --sockets N
                  --table M --seconds S [--live L] [--datagrams K]
      opens N UDP sockets in this namespace, one every S/N seconds, in order,
      on ports LO, LO+1, ...; each lives L/2 such periods (L: at most open at
      once, default 8), receives K datagrams (default 3) from NS-a spread
      over its life, and is closed once it has read them all (nothing is
      left queued behind it). Socket k opens only once socket
      k - M/UD_CLOCK_SCAN is closed, M being udpdwell's --max-sockets: then
      udpdwell's CLOCK hand cannot come round to an open socket's slot (see
      UdpLoad), and it must count exactly N - M evictions.

Every loop is bounded (a deadline, a select timeout, a connect timeout);
SIGTERM and SIGINT end the run early. At the end one JSON line on stdout
gives the figures (flows or sockets opened, concurrency reached, bytes or
datagrams sent and received); exit 0, or 1 with a line on stderr.
"""
import argparse
import ctypes
import errno
import heapq
import itertools
import json
import os
import random
import selectors
import signal
import socket
import sys
import time

CLONE_NEWNET = 0x40000000
CONNECT_TIMEOUT_S = 5.0    # a SYN left unanswered this long: counted as failed, replaced
DRAIN_TIMEOUT_S = 2.0      # a socket's last datagrams (or a flow's FIN) awaited this long
SELECT_MAX_S = 0.05        # the loop looks at the clock at least this often
ACCEPT_BATCH = 64          # connections accepted per readable listener, at most
RECV_BATCH = 64            # datagrams read per readable UDP socket, at most
DRAIN_POLL_S = 0.005       # a closing UDP socket looks for its last datagrams this often
LISTEN_BACKLOG = 4096

stop = False


def on_signal(_sig, _frm):
    global stop
    stop = True


class Netns:
    """sockets made in another network namespace: setns there, socket(), back"""

    def __init__(self, name):
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.home = os.open("/proc/self/ns/net", os.O_RDONLY)
        self.peer = os.open(f"/run/netns/{name}", os.O_RDONLY)

    def _setns(self, fd):
        if self.libc.setns(fd, CLONE_NEWNET) != 0:
            e = ctypes.get_errno()
            raise OSError(e, f"setns: {os.strerror(e)}")

    def socket(self, fam, kind):
        self._setns(self.peer)
        try:
            return socket.socket(fam, kind)
        finally:
            self._setns(self.home)


class Timers:
    """a heap of (when, seq, callback, generation); stale generations are skipped"""

    def __init__(self):
        self.heap = []
        self.seq = itertools.count()

    def at(self, when, fn, *args):
        heapq.heappush(self.heap, (when, next(self.seq), fn, args))

    def next_in(self, now):
        return self.heap[0][0] - now if self.heap else SELECT_MAX_S

    def run_due(self, now):
        while self.heap and self.heap[0][0] <= now:
            _, _, fn, args = heapq.heappop(self.heap)
            fn(*args)


def jitter(ms):
    return ms / 1000.0 * random.uniform(0.5, 1.5)


# --- TCP ---------------------------------------------------------------------------


class TcpLoad:
    def __init__(self, a, ns):
        self.a, self.ns = a, ns
        self.sel = selectors.DefaultSelector()
        self.t = Timers()
        self.flows = {}          # client socket fd -> flow dict
        self.servers = set()     # accepted sockets
        self.buf = b"x" * a.chunk
        lo, hi = a.life.split("-")
        self.life = (float(lo), float(hi))
        self.fig = dict(type="tcp", flows=a.flows, cc=a.cc, opened=0, established=0,
                        closed=0, connect_failed=0, send_eagain=0, bytes_sent=0,
                        bytes_received=0, accepted=0, max_established=0,
                        min_established_after_ramp=None)
        self.n_established = 0
        self.ramp_end = 0.0
        self.last_watch, self.flow_seconds = None, 0.0
        self.connect_s_sum = 0.0
        self.fig["connect_s_max"] = 0.0

    def listen(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((self.a.addr, self.a.port))
        s.listen(LISTEN_BACKLOG)
        s.setblocking(False)
        self.sel.register(s, selectors.EVENT_READ, ("listen", s))

    def open_flow(self, now, first=False):
        s = self.ns.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        if self.a.cc:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, self.a.cc.encode())
        err = s.connect_ex((self.a.addr, self.a.port))
        if err not in (0, errno.EINPROGRESS):
            s.close()
            raise OSError(err, f"connect: {os.strerror(err)}")
        # the first flows' lives are spread over 0..HI so that they do not end together
        life = random.uniform(0 if first else self.life[0], self.life[1])
        f = dict(s=s, up=False, reg=True, end=now + life, t_open=now)
        self.flows[s.fileno()] = f
        self.sel.register(s, selectors.EVENT_WRITE, ("client", f))
        self.fig["opened"] += 1
        self.t.at(now + CONNECT_TIMEOUT_S, self.connect_timeout, f)

    def close_flow(self, f, now, replace=True):
        if f["s"] is None:
            return
        s, f["s"] = f["s"], None
        if f["reg"]:
            self.sel.unregister(s)
        if f["up"]:
            self.n_established -= 1
        del self.flows[s.fileno()]
        s.close()
        self.fig["closed"] += 1
        if replace and not stop and now < self.deadline:
            self.open_flow(now)

    def end_flow(self, f):
        self.close_flow(f, time.monotonic())

    def connect_timeout(self, f):
        if f["s"] is not None and not f["up"]:
            self.fig["connect_failed"] += 1
            self.close_flow(f, time.monotonic())

    def connected(self, f, now):
        err = f["s"].getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        self.sel.unregister(f["s"])
        f["reg"] = False
        if err:
            self.fig["connect_failed"] += 1
            self.close_flow(f, now)
            return
        f["up"] = True
        took = max(0.0, time.monotonic() - f["t_open"])  # now is the select's start
        self.connect_s_sum += took
        self.fig["connect_s_max"] = round(max(self.fig["connect_s_max"], took), 3)
        self.n_established += 1
        self.fig["established"] += 1
        self.fig["max_established"] = max(self.fig["max_established"], self.n_established)
        self.t.at(now + jitter(self.a.every_ms), self.send, f)
        self.t.at(max(f["end"], now), self.end_flow, f)

    def send(self, f):
        if f["s"] is None:
            return
        try:
            self.fig["bytes_sent"] += f["s"].send(self.buf)
        except BlockingIOError:
            self.fig["send_eagain"] += 1
        except OSError:
            self.close_flow(f, time.monotonic())
            return
        self.t.at(time.monotonic() + jitter(self.a.every_ms), self.send, f)

    def accept(self, ls):
        for _ in range(ACCEPT_BATCH):
            try:
                c, _ = ls.accept()
            except BlockingIOError:
                return
            c.setblocking(False)
            self.servers.add(c)
            self.sel.register(c, selectors.EVENT_READ, ("server", c))
            self.fig["accepted"] += 1

    def server_read(self, c):
        try:
            d = c.recv(1 << 16)
        except BlockingIOError:
            return
        except OSError:
            d = b""
        if d:
            self.fig["bytes_received"] += len(d)
            return
        self.sel.unregister(c)
        self.servers.discard(c)
        c.close()

    def dispatch(self, now):
        for key, _ in self.sel.select(max(0.0, min(self.t.next_in(now), SELECT_MAX_S))):
            kind, obj = key.data
            if kind == "listen":
                self.accept(obj)
            elif kind == "server":
                self.server_read(obj)
            elif obj["s"] is not None:
                self.connected(obj, now)

    def watch_concurrency(self, now):
        """the least and the time-weighted mean of the flows established once ramped up"""
        if now >= self.ramp_end:
            m = self.fig["min_established_after_ramp"]
            if m is None or self.n_established < m:
                self.fig["min_established_after_ramp"] = self.n_established
            last = self.last_watch or now
            self.flow_seconds += self.n_established * (now - last)
            self.last_watch = now
            span = now - self.ramp_end
            if span > 0:
                self.fig["mean_established_after_ramp"] = round(self.flow_seconds / span, 1)

    def run(self):
        now = time.monotonic()
        self.deadline = now + self.a.seconds
        # concurrency is judged once every first flow had time to connect
        self.ramp_end = now + min(CONNECT_TIMEOUT_S, self.a.seconds / 4)
        self.listen()
        for _ in range(self.a.flows):
            self.open_flow(now, first=True)
        while not stop and now < self.deadline:
            self.dispatch(now)
            now = time.monotonic()
            self.t.run_due(now)
            self.watch_concurrency(now)
        for f in list(self.flows.values()):
            self.close_flow(f, now, replace=False)
        # the sink reads to every flow's end, for a bounded while
        end = time.monotonic() + DRAIN_TIMEOUT_S
        while self.servers and time.monotonic() < end:
            self.dispatch(time.monotonic())
        self.fig["servers_left_open"] = len(self.servers)
        self.fig["connect_s_mean"] = round(self.connect_s_sum / max(1, self.fig["established"]), 4)
        return self.fig


# --- UDP ---------------------------------------------------------------------------


def clock_scan():
    """UD_CLOCK_SCAN, the slots udpdwell's CLOCK hand may pass per new socket"""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "../../bpf/contract/udpdwell.h")) as f:
        for line in f:
            w = line.split()
            if len(w) >= 3 and w[:2] == ["#define", "UD_CLOCK_SCAN"]:
                return int(w[2])
    raise ValueError("UD_CLOCK_SCAN not found in bpf/contract/udpdwell.h")


class UdpLoad:
    """
    Socket k opens at k * S/N seconds (or as soon after as the rules allow),
    lives L/2 such periods, receiving --datagrams datagrams spread over its
    life, and closes once it has read them all. Socket k is not opened before
    socket k - window is closed, window = table // UD_CLOCK_SCAN: udpdwell's
    hand passes at most UD_CLOCK_SCAN slots per new socket, so it needs window
    new sockets to come round to a slot again. No socket can then lose its
    slot while it is open, each claims exactly one, and udpdwell must count
    exactly N - table evictions.
    """

    def __init__(self, a, ns):
        self.a, self.ns = a, ns
        self.sel = selectors.DefaultSelector()
        self.t = Timers()
        lo, hi = (int(x) for x in a.ports.split("-"))
        if hi - lo + 1 < a.sockets:
            raise ValueError(f"--ports {a.ports} holds fewer than {a.sockets} ports")
        self.window = a.table // clock_scan()
        if a.live >= self.window:
            raise ValueError(f"--live {a.live} must be below {self.window} (--table / UD_CLOCK_SCAN)")
        self.port_lo = lo
        self.period = a.seconds / a.sockets
        self.life = self.period * a.live / 2
        self.tx = ns.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.tx.setblocking(False)
        self.payload = b"d" * 160  # an RTP-sized datagram
        self.open = {}             # open index -> socket record
        self.fig = dict(type="udp", sockets=a.sockets, live=a.live, window=self.window,
                        life_s=round(self.life, 3), opened=0, closed=0, closed_undrained=0,
                        sent=0, received=0, send_failed=0, first_port=lo, last_port=None,
                        max_live=0, late_opens=0)

    def can_open(self, now):
        k = self.fig["opened"]
        if stop or k >= self.a.sockets or now < self.t0 + k * self.period:
            return False
        if len(self.open) >= self.a.live or (self.open and k - min(self.open) >= self.window):
            return False
        return True

    def open_due(self, now):
        while self.can_open(now):
            k = self.fig["opened"]
            if now - (self.t0 + k * self.period) > self.period + SELECT_MAX_S:
                self.fig["late_opens"] += 1
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind((self.a.addr, self.port_lo + k))
            s.setblocking(False)
            r = dict(s=s, k=k, port=self.port_lo + k, tries=0, sent=0, got=0)
            self.open[k] = r
            self.fig["opened"] += 1
            self.fig["last_port"] = r["port"]
            self.fig["max_live"] = max(self.fig["max_live"], len(self.open))
            self.sel.register(s, selectors.EVENT_READ, r)
            self.send(r)

    def send(self, r):
        now = time.monotonic()
        r["tries"] += 1
        try:
            self.tx.sendto(self.payload, (self.a.addr, r["port"]))
            r["sent"] += 1
            self.fig["sent"] += 1
        except OSError:
            self.fig["send_failed"] += 1
        if r["tries"] >= self.a.datagrams:
            self.finish(r, now + DRAIN_TIMEOUT_S)
        else:
            self.t.at(now + self.life / self.a.datagrams, self.send, r)

    def finish(self, r, give_up_at):
        """closes r once it has read every datagram sent to it"""
        now = time.monotonic()
        if r["got"] < r["sent"] and now < give_up_at:
            self.t.at(now + DRAIN_POLL_S, self.finish, r, give_up_at)
            return
        if r["got"] < r["sent"]:
            self.fig["closed_undrained"] += 1
        self.sel.unregister(r["s"])
        r["s"].close()
        del self.open[r["k"]]
        self.fig["closed"] += 1

    def read(self, r):
        for _ in range(RECV_BATCH):
            try:
                r["s"].recv(2048)
            except BlockingIOError:
                return
            r["got"] += 1
            self.fig["received"] += 1

    def run(self):
        now = self.t0 = time.monotonic()
        deadline = now + self.a.seconds + 10 * DRAIN_TIMEOUT_S
        while not stop and now < deadline and (self.open or self.fig["opened"] < self.a.sockets):
            self.open_due(now)
            wait = min(self.t.next_in(now), self.t0 + self.fig["opened"] * self.period - now)
            for key, _ in self.sel.select(max(0.0, min(wait, SELECT_MAX_S))):
                self.read(key.data)
            now = time.monotonic()
            self.t.run_due(now)
        self.fig["left_open"] = len(self.open)
        return self.fig


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("tcp")
    t.add_argument("--peer-netns", required=True)
    t.add_argument("--addr", required=True)
    t.add_argument("--port", type=int, required=True)
    t.add_argument("--flows", type=int, required=True)
    t.add_argument("--seconds", type=float, required=True)
    t.add_argument("--cc")
    t.add_argument("--life", default="1-8")
    t.add_argument("--every-ms", type=float, default=250)
    t.add_argument("--chunk", type=int, default=1000)
    u = sub.add_parser("udp")
    u.add_argument("--peer-netns", required=True)
    u.add_argument("--addr", required=True)
    u.add_argument("--ports", required=True)
    u.add_argument("--sockets", type=int, required=True)
    u.add_argument("--live", type=int, default=8)
    u.add_argument("--table", type=int, required=True)
    u.add_argument("--seconds", type=float, required=True)
    u.add_argument("--datagrams", type=int, default=3)
    a = p.parse_args()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    t0 = time.monotonic()
    try:
        ns = Netns(a.peer_netns)
        fig = (TcpLoad(a, ns) if a.cmd == "tcp" else UdpLoad(a, ns)).run()
    except (OSError, ValueError) as e:
        print(f"soakload: {a.cmd}: {e}", file=sys.stderr)
        return 1
    fig["elapsed_s"] = round(time.monotonic() - t0, 3)
    fig["stopped_early"] = stop
    print(json.dumps(fig), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
