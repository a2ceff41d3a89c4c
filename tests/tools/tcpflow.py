#!/usr/bin/python3
"""Small TCP endpoints for tests.

  tcpflow.py sink PORT [--addr ADDR] [--rcvbuf N] [--read-bps N]
      listen, read and discard everything, forever (kill it to stop); with
      --rcvbuf, a receive buffer of N bytes (SO_RCVBUF, before listen); with
      --read-bps, read at most N bytes a second (a slow application: the
      receiver's window fills and closes)
  tcpflow.py send ADDR PORT --bytes N [--cc NAME] [--chunk N] [--gap-ms MS] [--hold S]
      connect (optionally with congestion control NAME), write N bytes in
      chunks of --chunk with --gap-ms between them, then keep the connection
      open and idle for --hold seconds. Prints "lport PORT" once connected and
      "sent N" when all bytes are written (flushed, one line each).
"""
import argparse
import socket
import sys
import time


def sink(a):
    fam = socket.AF_INET6 if ":" in a.addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if a.rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, a.rcvbuf)
    s.bind((a.addr, a.port))
    s.listen(16)
    import threading

    def drain(c):
        # slow: a tenth of --read-bps every 100 ms
        piece = max(1, a.read_bps // 10) if a.read_bps else 1 << 20
        with c:
            while c.recv(piece):
                if a.read_bps:
                    time.sleep(0.1)

    while True:
        c, _ = s.accept()
        threading.Thread(target=drain, args=(c,), daemon=True).start()


def send(a):
    fam = socket.AF_INET6 if ":" in a.addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    if a.cc:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, a.cc.encode())
    s.settimeout(10)
    s.connect((a.addr, a.port))
    print("lport", s.getsockname()[1], flush=True)
    left = a.bytes
    buf = b"x" * a.chunk
    while left > 0:
        n = min(left, a.chunk)
        s.sendall(buf[:n])
        left -= n
        if a.gap_ms and left > 0:
            time.sleep(a.gap_ms / 1000.0)
    print("sent", a.bytes, flush=True)
    time.sleep(a.hold)
    s.close()


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    k = sub.add_parser("sink")
    k.add_argument("port", type=int)
    k.add_argument("--addr", default="0.0.0.0")
    k.add_argument("--rcvbuf", type=int, default=0)
    k.add_argument("--read-bps", type=int, default=0)
    d = sub.add_parser("send")
    d.add_argument("addr")
    d.add_argument("port", type=int)
    d.add_argument("--bytes", type=int, required=True)
    d.add_argument("--cc")
    d.add_argument("--chunk", type=int, default=65536)
    d.add_argument("--gap-ms", type=float, default=0)
    d.add_argument("--hold", type=float, default=0)
    a = p.parse_args()
    sink(a) if a.cmd == "sink" else send(a)


if __name__ == "__main__":
    sys.exit(main())
