#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What a failing OTLP endpoint costs the traced process (the plugin must never block NCCL).

usage: bench/otlp_endpoints.py cadence [--build DIR] [--rounds N] [--reps R] [--gaps 10,100] [--window S]
       bench/otlp_endpoints.py rss [--build DIR] [--minutes M] [--mode hang]

cadence  ncclscope-sim --bench-cadence (events in bursts at NCCL's cadence, one
         collective per GAP us, the writer thread busy on another core) with
         metric windows of 0.1 s, for each endpoint mode: none (no OTLP), ok (a
         receiver answering 200), down (nothing listens), hang (accepts, never
         answers), 503, reset (closes the connection on every request). The modes
         are interleaved round by round; per mode the median over the rounds of
         the plugin's added ns per event, and the events it dropped (its own
         count, from the trace) out of all, and the OTLP requests ok/failed.
         Rings of 4 MiB (NCCLSCOPE_RING_KB overrides) so that no export drops
         nothing and any drop is the endpoint's doing.
rss      one long simulated run (default scenario, real time, windows of 0.1 s)
         against an endpoint in MODE, VmRSS of the process sampled every 10 s.

Numbers are printed, never asserted (docs/performance.md). Stdlib only."""
import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

MODES = ["none", "ok", "down", "hang", "503", "reset"]
# 4 MiB rings: with the default 1 MiB, one collective per 10 us on one thread (3 M
# records/s) drops 1-2 % with no export at all (docs/performance.md), and a figure
# with drops measures the drop path. NCCLSCOPE_RING_KB in the environment wins.
RING_KB = "4096"


class Endpoint:
    """A minimal HTTP/1.1 endpoint on 127.0.0.1 in one of the modes (reads each request
    whole, then answers 200 or 503, resets the connection, or keeps it open unanswered)."""

    def __init__(self, mode):
        self.mode = mode
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.held = []
        if mode == "down":
            self.sock.close()  # the port is free: connections are refused
            return
        self.sock.listen(64)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c):
        buf = b""
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    d = c.recv(65536)
                    if not d:
                        return
                    buf += d
                head, _, body = buf.partition(b"\r\n\r\n")
                n = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        n = int(line.split(b":")[1])
                while len(body) < n:
                    d = c.recv(65536)
                    if not d:
                        return
                    body += d
                buf = body[n:]
                if self.mode == "hang":
                    self.held.append(c)
                    return
                if self.mode == "reset":
                    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                    c.close()
                    return
                status = b"200 OK" if self.mode == "ok" else b"503 Service Unavailable"
                c.sendall(b"HTTP/1.1 " + status + b"\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n")
        except OSError:
            pass

    def url(self):
        return "http://127.0.0.1:%d/v1/metrics" % self.port


def env_for(mode, dump, endpoint, window_sec="0.1"):
    env = {k: v for k, v in os.environ.items()
           if not (k.startswith("OTEL_") or k in ("NCCLSCOPE_OTLP", "http_proxy", "HTTP_PROXY"))}
    env.update(NCCLSCOPE_DUMP_DIR=dump, NCCLSCOPE_NO_CUDA="1", NCCLSCOPE_WINDOW_SEC=window_sec, NCCL_DEBUG="WARN")
    env.setdefault("NCCLSCOPE_RING_KB", RING_KB)
    if endpoint:
        env["OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"] = endpoint.url()
    return env


def trace_counters(cli, dump):
    """(events, dropped, otlp ok, otlp failed) from the run's trace and its windows."""
    subprocess.run([cli, "report", dump, "-q"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    with open(os.path.join(dump, "summary.json")) as f:
        pc = json.load(f).get("processCounters", [])
    events = sum(p.get("events", 0) for p in pc)
    dropped = sum(p.get("dropped", 0) for p in pc)
    ok = failed = 0
    for name in os.listdir(dump):
        if name.startswith("windows-") and name.endswith(".jsonl"):
            with open(os.path.join(dump, name)) as f:
                lines = f.read().splitlines()
            for m in json.loads(lines[-1])["metrics"] if lines else []:
                if m["name"] == "ncclscope_otlp_requests_total":
                    for p in m["points"]:
                        if p["labels"].get("result") == "ok":
                            ok += p["value"]
                        elif p["labels"].get("result") == "failed":
                            failed += p["value"]
    return events, dropped, ok, failed


def cadence(a):
    sim, cli, plugin = (os.path.join(a.build, n) for n in ("ncclscope-sim", "ncclscope", "libnccl-profiler-ncclscope.so"))
    gaps = [int(g) for g in a.gaps.split(",")]
    per = {}  # (mode, gap, seq) -> [added ns/event]; (mode, gap) -> [events, dropped, ok, failed, wall]
    work = tempfile.mkdtemp(prefix="ncclscope-otlp-bench.")
    for rnd in range(a.rounds):
        for gap in gaps:
            for mode in MODES:
                ep = None if mode == "none" else Endpoint(mode)
                dump = os.path.join(work, "r%d-g%d-%s" % (rnd, gap, mode))
                t0 = time.time()
                r = subprocess.run([sim, "--plugin", plugin, "--bench-cadence", "--bench-gaps", str(gap),
                                    "--bench-reps", str(a.reps)], env=env_for(mode, dump, ep, a.window),
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
                wall = time.time() - t0
                out = r.stdout.decode(errors="replace")
                line = [l for l in out.splitlines() if l.startswith("BENCH_CADENCE ")]
                if r.returncode != 0 or not line:
                    sys.exit("ncclscope-sim failed (%s, gap %d):\n%s" % (mode, gap, out[-2000:]))
                for row in json.loads(line[0][len("BENCH_CADENCE "):])["rows"]:
                    per.setdefault((mode, gap, row["seq"]), []).append(row["added_per_event_ns"])
                c = per.setdefault((mode, gap), [0, 0, 0, 0, []])
                ev, dr, ok, failed = trace_counters(cli, dump)
                c[0] += ev
                c[1] += dr
                c[2] += ok
                c[3] += failed
                c[4].append(wall)
    seqs = sorted({k[2] for k in per if len(k) == 3})
    print("| gap us | endpoint | " + " | ".join("%s ns/event" % s for s in seqs) +
          " | ratio to none | dropped of events | OTLP requests ok / failed | run s (median) |")
    print("|---|---|" + "---|" * len(seqs) + "---|---|---|---|")
    for gap in gaps:
        base = statistics.median(statistics.median(per[("none", gap, s)]) for s in seqs)
        for mode in MODES:
            med = [statistics.median(per[(mode, gap, s)]) for s in seqs]
            ev, dr, ok, failed, walls = per[(mode, gap)]
            print("| %d | %s | %s | %.2fx | %d of %d | %d / %d | %.2f |" % (
                gap, mode, " | ".join("%.1f" % m for m in med), statistics.median(med) / base, dr, ev + dr, ok, failed,
                statistics.median(walls)))
    print("(%d rounds, %d reps per run, windows of %s s; work files in %s)" % (a.rounds, a.reps, a.window, work))


def vm_rss_kib(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def rss(a):
    sim, plugin = os.path.join(a.build, "ncclscope-sim"), os.path.join(a.build, "libnccl-profiler-ncclscope.so")
    ep = None if a.mode == "none" else Endpoint(a.mode)
    dump = tempfile.mkdtemp(prefix="ncclscope-otlp-rss.")
    p = subprocess.Popen([sim, "--plugin", plugin, "--nccl", "ideal", "--iters", "100000000"],
                         env=env_for(a.mode, dump, ep), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t0 = time.time()
    samples = []
    print("| minute | VmRSS MiB |")
    print("|---|---|")
    while time.time() - t0 < a.minutes * 60 and p.poll() is None:
        time.sleep(10)
        kib = vm_rss_kib(p.pid)
        if kib is not None:
            samples.append((time.time() - t0, kib))
            print("| %.1f | %.1f |" % (samples[-1][0] / 60, kib / 1024), flush=True)
    p.send_signal(signal.SIGTERM)
    p.wait(60)
    if len(samples) >= 4:
        half = [kib for t, kib in samples if t >= samples[-1][0] / 2]
        print("endpoint %s: VmRSS %.1f MiB at %.1f min, %.1f MiB at the end; over the second half %.1f .. %.1f MiB"
              % (a.mode, samples[0][1] / 1024, samples[0][0] / 60, samples[-1][1] / 1024, min(half) / 1024,
                 max(half) / 1024))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("cadence")
    c.add_argument("--build", default="build")
    c.add_argument("--rounds", type=int, default=5)
    c.add_argument("--reps", type=int, default=20)
    c.add_argument("--gaps", default="10,100")
    r = sub.add_parser("rss")
    r.add_argument("--build", default="build")
    r.add_argument("--minutes", type=float, default=10)
    r.add_argument("--mode", default="hang", choices=MODES)
    c.add_argument("--window", default="0.1", help="NCCLSCOPE_WINDOW_SEC (0.1: 100 payloads a second's worth)")
    a = ap.parse_args()
    {"cadence": cadence, "rss": rss}[a.cmd](a)


if __name__ == "__main__":
    main()
