#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ncclscope's metric windows against real tools and the simulator's truth.

usage: check_sinks.py CHECK WORKDIR
  env: SIM PLUGIN (built binaries); NODE (node, for otlp_*)

  prom     windows.jsonl and the Prometheus textfile: `promtool check metrics` on
           every version of the .prom file the run wrote (each window replaces it),
           ops/bytes counters equal the truth, the last windows.jsonl line says what
           the file says, the series budget holds and is reported
  scrape   node_exporter's textfile collector serves the file over HTTP on
           127.0.0.1, a Prometheus server scrapes node_exporter, and PromQL sums
           equal the truth
  otlp_proto, otlp_proto_gzip, otlp_json
           OTLP/HTTP to otlp_receiver.js on 127.0.0.1, which decodes every payload
           with the decoder generated from opentelemetry-proto: names, units,
           temporality, histogram buckets, resource attributes (OTEL_SERVICE_NAME,
           OTEL_RESOURCE_ATTRIBUTES, SLURM job, local rank, communicator), headers
           (OTEL_EXPORTER_OTLP_HEADERS) and counters against the truth
  otlp_secrets
           no credential reaches NCCL's log (NCCL_DEBUG=INFO): header values, valid
           or not, and the user-info of an endpoint (http://user:password@host), valid
           or not; a bad headers value names the pair and its key only
  otlp_down, otlp_hang, otlp_503, otlp_reset
           an endpoint that is down, never answers, answers 503, resets: the run ends
           on time, counters = truth, failures counted, one warning
  live_hang        the `hang` scenario: the oldest operation in flight rising past the hang
                   timeout while no window closes, the episode, the stuck operation's func
                   and seq (truth, flight record); the clean end removes the file
  prom_end         finalize, exit and SIGTERM remove the .prom file
  prom_killed      SIGKILL: the file stays, its update time stops; node_exporter's mtime
  prom_escape      job and host names the text format escapes: promtool, node_exporter
  prom_unwritable  NCCLSCOPE_PROM_DIR that cannot be made or written: one warning

Runs ncclscope-sim (--nccl ideal, default scenario, real time) with windows of
0.1 s. Exit 0 pass, 1 fail, 77 skip (a tool is not installed: CI installs them,
.ci/deps.sh --ci). Stdlib only."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from metrics_truth import expected_ops, load_truth, parse_prom, prom_ops  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checklib import SKIP, Fail, check, run_named  # noqa: E402



DEFAULT_MAX_SERIES = 4000  # NCCLSCOPE_MAX_SERIES's default (docs/metrics.md)
LIVE = ("ncclscope_last_update_timestamp_seconds", "ncclscope_oldest_inflight_seconds", "ncclscope_hang_episodes_total",
        "ncclscope_stuck_op_info")


def need(tool):
    path = shutil.which(tool)
    if not path:
        print("SKIP: %s is not installed (.ci/deps.sh --ci installs it)" % tool)
        sys.exit(SKIP)
    return path


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def simulate(work, iters=100, env_extra=None, watch_prom=False, args=("--nccl", "ideal"), keep=True, wrap=(),
             ok_rc=(0,)):
    """Runs the simulator with the plugin; returns (truth, prom dir, dump dir, prom versions, log).
    keep: NCCLSCOPE_PROM_KEEP=1, the final .prom file stays to be compared with the truth;
    wrap: a command line the simulator runs under."""
    if os.path.isdir(work):
        shutil.rmtree(work)
    dump, prom = os.path.join(work, "dump"), os.path.join(work, "prom")
    os.makedirs(prom)
    truth_path = os.path.join(work, "truth.jsonl")
    env = dict(os.environ, NCCLSCOPE_DUMP_DIR=dump, NCCLSCOPE_PROM_DIR=prom, NCCLSCOPE_WINDOW_SEC="0.1",
               NCCLSCOPE_PROM_KEEP="1" if keep else "0")
    for k in ("NCCLSCOPE_JOB_NAME", "SLURM_JOB_ID", "TORCHELASTIC_RUN_ID", "KUBERNETES_SERVICE_HOST"):
        env.pop(k, None)
    for k in [k for k in env if k.startswith("OTEL_") or k in ("NCCLSCOPE_OTLP", "http_proxy", "HTTP_PROXY")]:
        del env[k]
    env.update(env_extra or {})
    versions, stop = [], threading.Event()

    def watcher():  # every version of the .prom file: each write renames a new one into place
        seen = set()  # (inode, mtime): a freed inode is reused by a later version
        while True:
            done = stop.is_set()
            for name in os.listdir(prom):
                if not name.endswith(".prom"):
                    continue
                try:
                    with open(os.path.join(prom, name), "rb") as f:
                        st = os.fstat(f.fileno())
                        key = (st.st_ino, st.st_mtime_ns, st.st_size)
                        if key not in seen:
                            seen.add(key)
                            versions.append(f.read())
                except FileNotFoundError:
                    pass
            if done:
                return
            time.sleep(0.005)

    t = threading.Thread(target=watcher)
    if watch_prom:
        t.start()
    r = subprocess.run(list(wrap) + [os.environ["SIM"], "--plugin", os.environ["PLUGIN"]] + list(args) +
                       ["--iters", str(iters), "--truth", truth_path],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    stop.set()
    if watch_prom:
        t.join()
    log = r.stdout.decode(errors="replace")
    with open(os.path.join(work, "sim.log"), "w") as f:
        f.write(log)
    check(r.returncode in ok_rc, "ncclscope-sim exited %d:\n%s" % (r.returncode, log[-3000:]))
    return load_truth(truth_path) if os.path.exists(truth_path) else None, prom, dump, versions, log


def ring_drops(prom):
    """The process's ncclscope_events_dropped_total{reason="ring"} of the run's final .prom file
    (the per-communicator series, with a comm label, count a subset of it)."""
    with open(os.path.join(prom, [n for n in os.listdir(prom) if n.endswith(".prom")][0])) as f:
        return sum(v for n, l, v in parse_prom(f.read())
                   if n == "ncclscope_events_dropped_total" and l["reason"] == "ring" and "comm" not in l)


def compare_ops(got, exp, where, dropped=0):
    """Equal to the truth; when the plugin counted events lost in full rings (a
    starved writer thread on a loaded machine), no more than the truth."""
    check(got, "%s: no ncclscope_ops_total series" % where)
    for k in sorted(set(exp) | set(got)):
        g, e = got.get(k), exp.get(k)
        ok = g == e or (dropped > 0 and g and e and g[0] <= e[0] and g[1] <= e[1])
        check(ok, "%s: %s (ops, bytes) = %s, truth %s (%d events dropped)" % (where, k, g, e, dropped))
    if dropped:
        print("note: %d events were dropped (full rings: the machine is loaded); counters checked as <= truth" % dropped)


def check_prom(work):
    promtool = need("promtool")
    truth, prom, dump, versions, _ = simulate(work, watch_prom=True)
    names = [n for n in os.listdir(prom) if n.endswith(".prom")]
    check(len(names) == 1, "one .prom file per process, found %s" % names)
    check(not [n for n in os.listdir(prom) if not n.endswith(".prom")], "temporary files left: %s" % os.listdir(prom))
    with open(os.path.join(prom, names[0]), "rb") as f:
        final = f.read()
    if not versions or versions[-1] != final:
        versions.append(final)
    check(len(versions) >= 3, "only %d versions of the .prom file seen (windows of 0.1 s)" % len(versions))
    for i, text in enumerate(versions):
        r = subprocess.run([promtool, "check", "metrics"], input=text, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        check(r.returncode == 0 and not r.stdout.strip(),
              "promtool check metrics on version %d:\n%s" % (i, r.stdout.decode(errors="replace")))
    samples = parse_prom(final.decode())
    compare_ops(prom_ops(samples), expected_ops(truth), "the .prom file", ring_drops(prom))

    # the series budget: counted, reported, kept; the default scenario fits it with nothing
    # refused (docs/metrics.md, "Series budget"), in every window
    series = [v for n, _, v in samples if n == "ncclscope_series"]
    check(series == [len(samples)], "ncclscope_series %s != %d sample lines" % (series, len(samples)))
    check(len(samples) <= DEFAULT_MAX_SERIES, "%d series > the default budget of %d" % (len(samples),
                                                                                       DEFAULT_MAX_SERIES))
    for i, text in enumerate(versions):
        refused = [v for n, _, v in parse_prom(text.decode()) if n == "ncclscope_series_refused"]
        check(refused == [0], "version %d of the .prom file: ncclscope_series_refused %s, the docs say 0" % (i, refused))
    host = socket.gethostname()
    for n, lab, _ in samples:
        for k, v in lab.items():
            check(k in ("pid", "comm", "rank", "type", "func", "size", "timing", "peer", "channel", "reason", "result",
                        "le", "level", "host", "comm_name"), "unexpected label %s=%s on %s" % (k, v, n))
        check(lab.get("host") == host, "%s: host label %s, the host is %s" % (n, lab.get("host"), host))
        check("job_id" not in lab, "%s: a job_id label with no job in the environment" % n)
        check("comm_name" not in lab or "comm" in lab, "%s: comm_name on a process series: %s" % (n, lab))
    # NCCL's commName where the simulator gives one (its world communicators; split ones have none)
    names = {}
    for n, lab, _ in samples:
        if "comm" in lab:
            names.setdefault((lab["comm"], lab["rank"]), set()).add(lab.get("comm_name"))
    check(all(len(v) == 1 for v in names.values()), "one comm_name per communicator rank: %s" % names)
    check({"world", None} == set().union(*names.values()), "comm_name values %s" % names)
    # every histogram's buckets add up, +Inf equals _count
    hist = {}
    for n, lab, v in samples:
        if n == "ncclscope_op_duration_seconds_bucket" and lab["le"] == "+Inf":
            hist[(lab["comm"], lab["rank"], lab["func"])] = v
    counts = {(l["comm"], l["rank"], l["func"]): v for n, l, v in samples if n == "ncclscope_op_duration_seconds_count"}
    check(hist and hist == counts, "histogram +Inf buckets %s != counts %s" % (hist, counts))

    # windows.jsonl: one line per window, the last one says what the file says
    jl = [n for n in os.listdir(dump) if n.startswith("windows-") and n.endswith(".jsonl")]
    check(len(jl) == 1, "one windows-*.jsonl per process, found %s" % jl)
    with open(os.path.join(dump, jl[0])) as f:
        lines = [json.loads(line) for line in f]
    windows = [v for n, _, v in samples if n == "ncclscope_windows_total"]
    check(windows == [len(lines)], "ncclscope_windows_total %s, windows.jsonl has %d lines" % (windows, len(lines)))
    check([o["window"] for o in lines] == sorted(o["window"] for o in lines), "windows out of order")
    last = lines[-1]
    from_jsonl = {}
    for m in last["metrics"]:
        for p in m["points"]:
            if m["type"] == "histogram":
                continue
            from_jsonl[(m["name"], tuple(sorted(p["labels"].items())))] = p["value"]
    # the live series are set between windows too (the update time at every write)
    from_prom = {(n, tuple(sorted(l.items()))): v for n, l, v in samples
                 if not n.startswith("ncclscope_op_duration") and n not in LIVE}
    from_jsonl = {k: v for k, v in from_jsonl.items() if k[0] not in LIVE}
    check(from_jsonl == from_prom, "the last windows.jsonl line and the .prom file differ: %s" %
          (set(from_jsonl.items()) ^ set(from_prom.items())))
    check(last["series"] == len(samples), "windows.jsonl series %d != %d" % (last["series"], len(samples)))
    print("prom: %d versions checked by promtool, %d series (%d refused), %d windows, %d (comm, rank, func) match"
          % (len(versions), len(samples), last["refused"], len(lines), len(expected_ops(truth))))


def http_get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def wait_http(url, proc, what, secs=30):
    end = time.time() + secs
    while time.time() < end:
        check(proc.poll() is None, "%s exited %s" % (what, proc.returncode))
        try:
            return http_get(url, timeout=1)
        except OSError:
            time.sleep(0.1)
    raise Fail("%s did not answer on %s in %d s" % (what, url, secs))


def check_scrape(work):
    ne_bin = need("prometheus-node-exporter")
    prom_bin = need("prometheus")
    truth, prom, dump, _, _ = simulate(work)
    exp, dropped = expected_ops(truth), ring_drops(prom)
    if dropped:  # a loaded machine: Prometheus must then say what the file says
        with open(os.path.join(prom, os.listdir(prom)[0])) as f:
            exp = prom_ops(parse_prom(f.read()))
        print("note: %d events were dropped (full rings: the machine is loaded); checking against the file" % dropped)
    procs = []
    try:
        ne_port, prom_port = free_port(), free_port()
        ne = subprocess.Popen([ne_bin, "--web.listen-address=127.0.0.1:%d" % ne_port, "--collector.disable-defaults",
                               "--collector.textfile", "--collector.textfile.directory=" + prom],
                              stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "node_exporter.log"), "w"))
        procs.append(ne)
        text = wait_http("http://127.0.0.1:%d/metrics" % ne_port, ne, "node_exporter")
        check("node_textfile_scrape_error 0" in text, "node_exporter's textfile collector failed:\n%s" %
              "\n".join(l for l in text.splitlines() if "textfile" in l))
        compare_ops(prom_ops(parse_prom("\n".join(l for l in text.splitlines() if l.startswith("ncclscope_")))), exp,
                    "node_exporter /metrics")
        cfg = os.path.join(work, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: node\n    static_configs:\n"
                    "      - targets: ['127.0.0.1:%d']\n" % ne_port)
        pr = subprocess.Popen([prom_bin, "--config.file=" + cfg, "--storage.tsdb.path=" + os.path.join(work, "tsdb"),
                               "--web.listen-address=127.0.0.1:%d" % prom_port],
                              stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "prometheus.log"), "w"))
        procs.append(pr)
        base = "http://127.0.0.1:%d" % prom_port
        wait_http(base + "/-/ready", pr, "prometheus", secs=60)
        want_ops = sum(v[0] for k, v in exp.items() if k[2] == "AllReduce")
        want_bytes = sum(v[1] for v in exp.values())
        queries = {'sum(ncclscope_ops_total{func="AllReduce"})': want_ops, "sum(ncclscope_bytes_total)": want_bytes}
        got, end = {}, time.time() + 60
        while time.time() < end and got != queries:
            for q in queries:
                r = json.loads(http_get(base + "/api/v1/query?" + urllib.parse.urlencode({"query": q})))
                res = r["data"]["result"]
                if res:
                    got[q] = int(float(res[0]["value"][1]))
            if got != queries:
                time.sleep(0.5)
        check(got == queries, "PromQL answers %s, truth %s" % (got, queries))
        print("scrape: node_exporter served %d ncclscope series; Prometheus answered %s" %
              (sum(1 for l in text.splitlines() if l.startswith("ncclscope_")), got))
    finally:
        for p in procs:
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


class Receiver:
    """tests/sinks/otlp_receiver.js on 127.0.0.1 (mode: ok, status:N, hang, reset)."""

    def __init__(self, work, mode="ok"):
        node = need("node")
        here = os.path.dirname(os.path.abspath(__file__))
        gen = os.path.join(here, "node_modules/@opentelemetry/otlp-transformer/build/src/generated/root.js")
        if not os.path.exists(gen):
            print("SKIP: the OTLP decoder is not installed (cd tests/sinks && npm ci; .ci/deps.sh --ci does it)")
            sys.exit(SKIP)
        self.out = os.path.join(work, "requests-%s.jsonl" % mode.replace(":", ""))
        self.p = subprocess.Popen([node, os.path.join(here, "otlp_receiver.js"), "--out", self.out, "--mode", mode],
                                  stdout=subprocess.PIPE)
        self.port = json.loads(self.p.stdout.readline())["port"]

    def requests(self):
        if not os.path.exists(self.out):
            return []
        with open(self.out) as f:
            return [json.loads(line) for line in f]

    def close(self):
        self.p.terminate()
        self.p.wait(10)


def attrs(kvs):
    out = {}
    for kv in kvs or []:
        v = kv["value"]
        out[kv["key"]] = int(v["intValue"]) if "intValue" in v else v.get("stringValue")
    return out


def otlp_ops(req):
    """{(comm, rank, func): (ops, bytes)} and the metrics by name of one decoded request."""
    got, metrics = {}, {}
    for rm in req["resourceMetrics"]:
        ra = attrs(rm["resource"].get("attributes"))
        for sm in rm["scopeMetrics"]:
            for m in sm["metrics"]:
                metrics.setdefault(m["name"], []).append((ra, m))
                if m["name"] not in ("ncclscope.ops", "ncclscope.bytes"):
                    continue
                for dp in m["sum"]["dataPoints"]:
                    k = (ra["nccl.comm.hash"], ra["nccl.rank"], attrs(dp.get("attributes"))["nccl.func"])
                    v = got.get(k, (0, 0))
                    got[k] = (int(dp["asInt"]), v[1]) if m["name"] == "ncclscope.ops" else (v[0], int(dp["asInt"]))
    return got, metrics


def check_otlp(work, protocol, gzip):
    os.makedirs(work, exist_ok=True)
    rx = Receiver(work)
    try:
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:%d/" % rx.port, "OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
               "OTEL_SERVICE_NAME": "trainer", "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=ci,team=hpc%20ml",
               "OTEL_EXPORTER_OTLP_HEADERS": "x-scope-orgid=tenant%201,authorization=Bearer t0ken",
               "SLURM_JOB_ID": "4242", "LOCAL_RANK": "3"}
        if gzip:
            env["OTEL_EXPORTER_OTLP_COMPRESSION"] = "gzip"
        truth, prom, dump, _, log = simulate(os.path.join(work, "run"), env_extra=env)
    finally:
        rx.close()
    reqs = rx.requests()
    check(len(reqs) >= 3, "%d requests (windows of 0.1 s)" % len(reqs))
    ctype = "application/x-protobuf" if protocol == "http/protobuf" else "application/json"
    for r in reqs:
        check(r["path"] == "/v1/metrics" and r["method"] == "POST", "request %s %s" % (r["method"], r["path"]))
        check(not r.get("error"), "the official decoder refused a payload: %s" % r.get("error"))
        h = r["headers"]
        check(h.get("content-type") == ctype, "Content-Type %s" % h.get("content-type"))
        check(h.get("content-encoding") == ("gzip" if gzip else None), "Content-Encoding %s" % h.get("content-encoding"))
        check(h.get("x-scope-orgid") == "tenant 1" and h.get("authorization") == "Bearer t0ken",
              "OTEL_EXPORTER_OTLP_HEADERS not sent: %s" % h)
    last = reqs[-1]["decoded"]
    got, metrics = otlp_ops(last)
    compare_ops(got, expected_ops(truth), "the last OTLP request", ring_drops(prom))
    units = {"ncclscope.ops": "{op}", "ncclscope.bytes": "By", "ncclscope.op.duration": "s",
             "ncclscope.gpu.clock.error": "s", "ncclscope.algbw": "By/s", "ncclscope.oldest_inflight": "s",
             "ncclscope.hang.episodes": "{episode}", "ncclscope.last_update.timestamp": "s"}
    live = ("ncclscope.oldest_inflight", "ncclscope.hang.episodes", "ncclscope.last_update.timestamp")
    # Counters and histograms are cumulative: the last request has them all. Gauges
    # (bandwidth by size, clock error) are the window's own and only when it measured
    # them: a last window that closed with few ops may have none, so any request counts.
    seen = {}
    for r in reqs:
        for name, ms in otlp_ops(r["decoded"])[1].items():
            seen.setdefault(name, []).extend(ms)
    for name, unit in units.items():
        cumulative = name in ("ncclscope.ops", "ncclscope.bytes", "ncclscope.op.duration") + live
        where = metrics if cumulative else seen
        check(name in where, "no %s in the %s (%s)" % (name, "last request" if cumulative else "requests",
                                                       sorted(where)))
        for ra, m in where[name]:
            check(m["unit"] == unit and m.get("description"), "%s unit %r" % (name, m["unit"]))
    for ra, m in metrics["ncclscope.ops"]:
        check(m["sum"]["aggregationTemporality"] == 2 and m["sum"]["isMonotonic"], "ops: cumulative monotonic sum")
        for dp in m["sum"]["dataPoints"]:
            check(int(dp["startTimeUnixNano"]) < int(dp["timeUnixNano"]), "start before time")
    # the live series: every communicator rank's age of its oldest operation in flight, the process's update time
    inflight = {(ra["nccl.comm.hash"], ra["nccl.rank"]) for ra, m in metrics["ncclscope.oldest_inflight"]}
    check(inflight == {(c["comm"], c["rank"]) for c in truth["comm"]}, "oldest_inflight resources %s" % inflight)
    for ra, m in metrics["ncclscope.last_update.timestamp"]:
        t = m["gauge"]["dataPoints"][0]
        check(abs(t["asDouble"] * 1e9 - int(t["timeUnixNano"])) < 1e6, "last_update %s" % t)
    for ra, m in metrics["ncclscope.op.duration"]:
        check(m["histogram"]["aggregationTemporality"] == 2, "histogram: cumulative")
        for dp in m["histogram"]["dataPoints"]:
            check(sum(int(c) for c in dp["bucketCounts"]) == int(dp["count"]), "bucket counts add up to count")
            check(len(dp["explicitBounds"]) + 1 == len(dp["bucketCounts"]), "bounds and buckets")
            check(abs(dp["explicitBounds"][0] - 8e-6) < 1e-12, "first bound 8 us: %s" % dp["explicitBounds"][:2])
    comms = {(c["comm"], c["rank"]): c for c in truth["comm"]}
    seen = set()
    host = socket.gethostname()
    for rm in last["resourceMetrics"]:
        ra = attrs(rm["resource"]["attributes"])
        check(ra.get("service.name") == "trainer" and ra.get("host.name") == host and ra.get("process.pid"),
              "resource %s" % ra)
        check(ra.get("process.executable.name") == os.path.basename(os.environ["SIM"]), "executable: %s" % ra)
        # the identity labels on every data point, named as in the textfile (SLURM_JOB_ID is the job)
        for sm in rm["scopeMetrics"]:
            for m in sm["metrics"]:
                for dp in m.get("sum", m.get("gauge", m.get("histogram", {}))).get("dataPoints", []):
                    pa = attrs(dp.get("attributes"))
                    check(pa.get("job_id") == "4242" and pa.get("host") == host, "%s point %s" % (m["name"], pa))
                    check(pa.get("comm_name") in ((None, "world") if "nccl.comm.hash" in ra else (None,)),
                          "%s: comm_name %s" % (m["name"], pa))
        check(ra.get("slurm.job.id") == "4242" and ra.get("nccl.local_rank") == 3, "job and local rank: %s" % ra)
        check(ra.get("deployment.environment") == "ci" and ra.get("team") == "hpc ml", "OTEL_RESOURCE_ATTRIBUTES: %s" % ra)
        if "nccl.comm.hash" in ra:
            k = (ra["nccl.comm.hash"], ra["nccl.rank"])
            check(k in comms and comms[k]["nranks"] == ra["nccl.comm.nranks"], "resource %s not in the truth" % (k,))
            seen.add(k)
    check(seen == set(comms), "resources %s, truth communicators %s" % (sorted(seen), sorted(comms)))
    # the same numbers as the Prometheus file of the same run
    with open(os.path.join(prom, os.listdir(prom)[0])) as f:
        check(prom_ops(parse_prom(f.read())) == got, "the .prom file and the last OTLP request differ")
    print("otlp %s%s: %d requests decoded by the official schema, last %d bytes on the wire (%s decoded), %d "
          "(comm, rank, func) match" % (protocol, " gzip" if gzip else "", len(reqs), reqs[-1]["bytes"],
                                         reqs[-1].get("decodedBytes"), len(got)))


def check_failing(work, mode):
    """An endpoint that is down, hangs, answers 503 or resets: the run, the trace, the
    other outputs are unaffected; failures are counted; one warning per episode; the
    last finalize is not held by the endpoint."""
    os.makedirs(work, exist_ok=True)
    rx = None
    if mode == "down":
        port = free_port()  # nothing listens there
    else:
        rx = Receiver(work, {"hang": "hang", "503": "status:503", "reset": "reset"}[mode])
        port = rx.port
    # A request may take 60 s (OTEL_EXPORTER_OTLP_TIMEOUT, ms): a last finalize that waited
    # for a hanging endpoint would take that long, far beyond what a loaded machine adds.
    env = {"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://127.0.0.1:%d/v1/metrics" % port, "NCCL_DEBUG": "WARN",
           "OTEL_EXPORTER_OTLP_TIMEOUT": "60000"}
    t0 = time.time()
    try:
        truth, prom, dump, _, log = simulate(os.path.join(work, "run"), env_extra=env)
    finally:
        if rx:
            rx.close()
    wall = time.time() - t0
    check(wall < 40, "the run took %.1f s with the endpoint %s (a request may take 60 s)" % (wall, mode))
    with open(os.path.join(prom, os.listdir(prom)[0])) as f:
        samples = parse_prom(f.read())
    # Full rings happen on this 2-core machine when other work starves the writer, with or
    # without OTLP (the same run with no endpoint dropped 0-900 events of ~200,000): counted,
    # and then the counters are checked as <= truth. The drop count with the endpoint down or
    # hanging against none is measured by the benchmark (docs/performance.md).
    compare_ops(prom_ops(samples), expected_ops(truth), "the .prom file with the endpoint %s" % mode, ring_drops(prom))
    failed = [v for n, l, v in samples if n == "ncclscope_otlp_requests_total" and l["result"] == "failed"]
    ok = [v for n, l, v in samples if n == "ncclscope_otlp_requests_total" and l["result"] == "ok"]
    if mode != "hang":
        check(failed and failed[0] > 0 and ok == [0], "requests ok %s failed %s" % (ok, failed))
    warns = [l for l in log.splitlines() if "WARN" in l and "OTLP export to" in l]
    check(len(warns) == 1, "one warning for the episode, got %d: %s" % (len(warns), warns[:3]))
    if rx:
        check(rx.requests(), "the receiver saw no request")
    print("otlp endpoint %s: run %.2f s, ops and bytes = truth, events dropped %s, requests failed %s, one warning: %s"
          % (mode, wall, ring_drops(prom), failed, warns[0][:160]))


def check_secrets(work):
    """Credentials in OTEL_EXPORTER_OTLP_HEADERS and in the endpoint's user-info and query string
    never reach NCCL's log, at INFO or WARN, whether the values are valid or not; the query's keys
    stay, and /v1/metrics goes after the general endpoint's path, before its query."""
    os.makedirs(work, exist_ok=True)
    port = free_port()  # nothing listens: the export fails and says so, naming the endpoint
    runs = [
        ("valid", {"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT":
                   "http://user:S3CRET-url@127.0.0.1:%d/v1/metrics?token=S3CRET-query&S3CRET-bare" % port,
                   "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20S3CRET-hdr,x-tenant=S3CRET-tenant"},
         ["OTLP metrics to http://***@127.0.0.1:%d/v1/metrics?token=***&*** " % port,
          "OTLP export to http://***@127.0.0.1:%d/v1/metrics?token=***&*** failed" % port]),
        ("general", {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://user:S3CRET-url@127.0.0.1:%d/?token=S3CRET-query" % port},
         ["OTLP metrics to http://***@127.0.0.1:%d/v1/metrics?token=*** " % port,
          "OTLP export to http://***@127.0.0.1:%d/v1/metrics?token=*** failed" % port]),
        ("no '='", {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://user:S3CRET-url@host with a space?token=S3CRET-query",
                    "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer S3CRET-hdr,Bearer S3CRET-bare"},
         ['OTEL_EXPORTER_OTLP_ENDPOINT="http://***@host with a space?token=***" is not an http:// or https:// URL',
          "OTEL_EXPORTER_OTLP_HEADERS is not a list", "pair 2 has no '=' (not shown)"]),
        ("bad key", {"OTEL_EXPORTER_OTLP_METRICS_HEADERS": "x-ok=S3CRET-hdr,bad key=S3CRET-value"},
         ['OTEL_EXPORTER_OTLP_METRICS_HEADERS is not a list', 'pair 2: key "bad key" is not a token']),
    ]
    for name, env, want in runs:
        env = dict(env, NCCL_DEBUG="INFO", NCCLSCOPE_OTLP="1")
        _, _, _, _, log = simulate(os.path.join(work, name.replace(" ", "-").replace("'", "")), iters=5,
                                   env_extra=env)
        ours = [l for l in log.splitlines() if "NCCLSCOPE" in l]
        leaked = [l for l in log.splitlines() if "S3CRET" in l or "user:" in l]
        check(not leaked, "%s: a credential in the log: %s" % (name, leaked[:3]))
        for w in want:
            check(any(w in l for l in ours), "%s: no line says %r in:\n%s" % (name, w, "\n".join(ours)[-1500:]))
        print("%s: %d plugin log lines, no credential; e.g. %s" % (name, len(ours), [l for l in ours if want[-1] in l][0]))



def unescape(v):
    """A label value as the text format escapes it (\\, \", \n), unescaped."""
    return re.sub(r'\\(.)', lambda m: "\n" if m.group(1) == "n" else m.group(1), v)


def promtool_all(promtool, versions, what):
    for i, text in enumerate(versions):
        r = subprocess.run([promtool, "check", "metrics"], input=text, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        check(r.returncode == 0 and not r.stdout.strip(),
              "%s: promtool check metrics on version %d:\n%s" % (what, i, r.stdout.decode(errors="replace")))


def check_live_hang(work):
    """The `hang` scenario: one rank never posts an AllReduce, the others wait in it for 3 s.
    The live series come from the writer thread: the stuck rank's oldest operation in flight
    keeps rising past the hang timeout while no window closes, the watchdog's episode is
    counted, the stuck operation's function and seq are those of the truth and the flight
    record; the clean end removes the file. (The budget's priority for these series:
    tests/sinks/test_metrics_budget.c.)"""
    promtool = need("promtool")
    timeout, window = 0.3, 0.2
    env = {"NCCLSCOPE_HANG_TIMEOUT_SEC": str(timeout), "NCCLSCOPE_WINDOW_SEC": str(window),
           "NCCL_DEBUG": "WARN"}
    truth, prom, dump, versions, log = simulate(work, iters=2, env_extra=env, watch_prom=True, keep=False,
                                                args=("--scenario", "hang", "--hang-timeout-ms", "3000"))
    check(os.listdir(prom) == [], "the clean end left %s in the textfile directory" % os.listdir(prom))
    promtool_all(promtool, versions, "hang")
    hang = truth["hang"][0]
    with open(os.path.join(dump, [n for n in os.listdir(dump) if n.startswith("flightrec-")][0])) as f:
        episodes = [e for e in json.load(f)["episodes"] if e["commId"] == hang["comm"]]
    # on a loaded machine an earlier operation may also pass the 0.3 s (an episode that clears): not this one
    this = [e for e in episodes if e["func"] == hang["func"] and e["seq"] == hang["seq"]]
    check(this, "no episode of %s seq %s in the flight record: %s" % (hang["func"], hang["seq"], episodes))
    ep = this[0]
    key = (hang["comm"], str(ep["rank"]))
    rows = []  # per version: (last update, oldest, episodes, stuck series, windows closed)
    for text in versions:
        smp = parse_prom(text.decode())
        one = lambda name: [v for n, l, v in smp if n == name and (l.get("comm"), l.get("rank")) == key]
        proc = lambda name: [v for n, l, v in smp if n == name and "pid" in l]
        stuck = [l for n, l, v in smp if n == "ncclscope_stuck_op_info" and v == 1]
        check(len(stuck) <= 1, "one stuck-operation series at most (one stuck communicator rank): %s" % stuck)
        if stuck and stuck[0]["seq"] != str(hang["seq"]):
            check(int(stuck[0]["seq"]) < hang["seq"], "a stuck operation after the hung one: %s" % stuck[0])
            stuck = []  # an earlier operation late on a loaded machine, cleared since (the flight record says so)
        rows.append((proc("ncclscope_last_update_timestamp_seconds"), one("ncclscope_oldest_inflight_seconds"),
                     one("ncclscope_hang_episodes_total"), stuck, proc("ncclscope_windows_total")))
    stuck_rows = [r for r in rows if r[3]]
    check(len(stuck_rows) >= 5, "%d versions of the file show a stuck operation (a 3 s hang, windows of %.1f s)"
          % (len(stuck_rows), window))
    for r in stuck_rows:
        lab = r[3][0]
        check((lab["comm"], lab["rank"]) == key and lab["func"] == hang["func"] and lab["seq"] == str(hang["seq"]),
              "stuck series %s; truth %s, flight record rank %s" % (lab, hang, ep["rank"]))
        check(r[2] and r[2][0] >= 1, "ncclscope_hang_episodes_total %s while stuck" % r[2])
        check(r[1] and r[1][0] > timeout, "oldest in flight %s while stuck (timeout %.1f s)" % (r[1], timeout))
    oldest = [r[1][0] for r in stuck_rows]
    updates = [r[0][0] for r in stuck_rows]
    check(oldest == sorted(oldest) and len(set(oldest)) == len(oldest), "oldest in flight not rising: %s" % oldest)
    check(oldest[-1] >= 2.0, "oldest in flight reached only %.2f s in a 3 s hang" % oldest[-1])
    check(updates == sorted(updates) and len(set(updates)) == len(updates), "update times %s" % updates)
    gaps = [b - a for a, b in zip(updates, updates[1:])]
    # at least every window (1 s of slack for a writer thread starved on a loaded 2-core machine)
    check(max(gaps) < window + 1.0, "the file was not rewritten for %.2f s (window %.1f s)" % (max(gaps), window))
    # no window closed meanwhile (the stuck operation holds its window open): the writes are the live path's
    closed = [r[4][0] if r[4] else 0 for r in stuck_rows]  # no series before the first window closes
    check(len(set(closed)) == 1,
          "windows closed while the application made no progress: %s" % closed)
    # written at once on the watchdog's verdict: the age then is the timeout and a poll period (and load)
    check(oldest[0] < timeout + 1.0, "first stuck version shows %.2f s (timeout %.1f s)" % (oldest[0], timeout))
    print("live hang: %d versions checked by promtool; %s seq %s stuck on comm %s rank %s, oldest in flight %.2f -> "
          "%.2f s over %d writes with %d windows closed, episodes %d"
          % (len(versions), hang["func"], hang["seq"], key[0], key[1], oldest[0], oldest[-1], len(stuck_rows),
             closed[0], stuck_rows[-1][2][0]))


def check_prom_end(work):
    """A clean end removes the process's .prom file: the last finalize, exit() with the
    communicators alive, SIGTERM (the plugin's handler, then the default action)."""
    for mode in ("finalize", "exit", "sigterm"):
        w = os.path.join(work, mode)
        _, prom, dump, versions, log = simulate(w, iters=20, watch_prom=True, keep=False, ok_rc=(0, -15),
                                                args=("--nccl", "ideal", "--exit", mode))
        check(versions, "%s: no .prom file was written during the run" % mode)
        check(os.listdir(prom) == [], "%s: left %s in the textfile directory" % (mode, os.listdir(prom)))
        print("end by %s: %d versions written, the file is gone" % (mode, len(versions)))


def wait_for(cond, secs, what):
    end = time.time() + secs
    while time.time() < end:
        v = cond()
        if v:
            return v
        time.sleep(0.02)
    raise Fail("%s: not within %d s" % (what, secs))


def textfile_scrape(ne_bin, prom, work):
    """One scrape of a node_exporter started on the textfile directory prom alone."""
    ne_port = free_port()
    ne = subprocess.Popen([ne_bin, "--web.listen-address=127.0.0.1:%d" % ne_port, "--collector.disable-defaults",
                           "--collector.textfile", "--collector.textfile.directory=" + prom],
                          stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "node_exporter.log"), "w"))
    try:
        return wait_http("http://127.0.0.1:%d/metrics" % ne_port, ne, "node_exporter")
    finally:
        ne.terminate()
        ne.wait(10)


def check_prom_killed(work):
    """A SIGKILLed process leaves its file; it is recognisable as stale: its
    ncclscope_last_update_timestamp_seconds stops moving while time() goes on, and
    node_exporter serves the file's mtime (node_textfile_mtime_seconds) beside it."""
    ne_bin = need("prometheus-node-exporter")
    if os.path.isdir(work):
        shutil.rmtree(work)
    dump, prom = os.path.join(work, "dump"), os.path.join(work, "prom")
    os.makedirs(prom)
    window = 0.2
    env = dict(os.environ, NCCLSCOPE_DUMP_DIR=dump, NCCLSCOPE_PROM_DIR=prom, NCCLSCOPE_WINDOW_SEC=str(window))
    # a run long enough to be killed in the middle
    p = subprocess.Popen([os.environ["SIM"], "--plugin", os.environ["PLUGIN"], "--nccl", "ideal", "--iters", "100000"],
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        path = wait_for(lambda: [os.path.join(prom, n) for n in os.listdir(prom) if n.endswith(".prom")], 30,
                        "the .prom file")[0]

        def stamp():
            try:
                with open(path) as f:
                    v = [v for n, _, v in parse_prom(f.read()) if n == "ncclscope_last_update_timestamp_seconds"]
                return v[0] if v else None
            except FileNotFoundError:
                return None
        first = wait_for(stamp, 10, "the update time")
        # the writer thread publishes a window after its drain and its trace write: a disk busy with other
        # writes (the kernel throttling dirty pages) holds that write, and the update time, for seconds
        wait_for(lambda: (stamp() or 0) > first + window, 30, "the update time moving")
        alive = stamp()
        check(abs(alive - time.time()) < 2, "a live process's update time %.3f is not now (%.3f)" % (alive, time.time()))
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    killed_at = time.time()
    with open(path, "rb") as f:
        text = f.read()
    last = stamp()
    time.sleep(4 * window)
    check(os.path.exists(path), "the killed process's file is gone")
    with open(path, "rb") as f:
        check(f.read() == text, "the file changed after the process was killed")
    check(last <= killed_at, "update time %.3f after the kill %.3f" % (last, killed_at))
    age = time.time() - last
    check(age > 3 * window, "stale by %.2f s only" % age)
    text = textfile_scrape(ne_bin, prom, work)
    smp = parse_prom("\n".join(l for l in text.splitlines() if l.startswith(("node_textfile", "ncclscope_last"))))
    mtime = [v for n, l, v in smp if n == "node_textfile_mtime_seconds" and unescape(l["file"]).endswith(
        os.path.basename(path))]
    served = [v for n, _, v in smp if n == "ncclscope_last_update_timestamp_seconds"]
    check(mtime and abs(mtime[0] - os.stat(path).st_mtime) < 1.01, "node_textfile_mtime_seconds %s" % mtime)
    check(served == [last], "node_exporter serves the update time %s, the file says %s" % (served, last))
    check(mtime[0] < time.time() - 3 * window, "mtime %.1f is not stale" % mtime[0])
    print("killed: the file stays; update time %.3f stopped (%.2f s old), node_textfile_mtime_seconds %.0f"
          % (last, age, mtime[0]))


def check_prom_escape(work):
    """A job name and a host name with characters the text format escapes (\\ \" newline) or
    does not take (invalid UTF-8): every version of the file passes promtool, node_exporter's
    textfile collector takes it, and the labels say the names back."""
    promtool = need("promtool")
    ne_bin = need("prometheus-node-exporter")
    job = 'train "7b"\\ run\nB\udcff'  # \udcff: the byte 0xff in the environment (surrogateescape)
    want_job = 'train "7b"\\ run\nB?'
    wrap, want_host = (), socket.gethostname()
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "--uts", "true"], stderr=subprocess.DEVNULL).returncode == 0:
        # a UTS namespace of its own (root, not in a container without CAP_SYS_ADMIN), with an odd host name
        want_host = 'node"7\\a'
        wrap = (unshare, "--uts", sys.executable, "-c",
                "import os, socket, sys; socket.sethostname(sys.argv[1]); os.execv(sys.argv[2], sys.argv[2:])",
                want_host)
    else:
        print("note: no UTS namespace here: the host name stays %s (the job name is checked)" % want_host)
    _, prom, dump, versions, log = simulate(work, iters=20, watch_prom=True, env_extra={"NCCLSCOPE_JOB_NAME": job},
                                            wrap=wrap)
    check(versions, "no .prom file written")
    promtool_all(promtool, versions, "odd names")
    smp = parse_prom(versions[-1].decode())
    for n, l, _ in smp:
        check(unescape(l.get("job_id", "")) == want_job and unescape(l.get("host", "")) == want_host,
              "%s: job_id %r host %r" % (n, l.get("job_id"), l.get("host")))
    text = textfile_scrape(ne_bin, prom, work)
    check("node_textfile_scrape_error 0" in text, "node_exporter refused the file:\n%s" %
          "\n".join(l for l in text.splitlines() if "textfile" in l))
    served = parse_prom("\n".join(l for l in text.splitlines() if l.startswith("ncclscope_")))
    check(served and all(unescape(l["job_id"]) == want_job for _, l, _ in served), "node_exporter's job_id labels")
    print("odd names: %d versions pass promtool; node_exporter serves %d series with job_id %r host %r"
          % (len(versions), len(served), want_job, want_host))


def check_prom_unwritable(work):
    """NCCLSCOPE_PROM_DIR that cannot be made (a file in its path) or written (sysfs, even for
    root): one warning, and tracing goes on: the run, the trace and windows.jsonl are whole."""
    os.makedirs(work, exist_ok=True)
    blocker = os.path.join(work, "a-file")
    with open(blocker, "w") as f:
        f.write("not a directory\n")
    for what, d in (("cannot be made", os.path.join(blocker, "prom")), ("cannot be written", "/sys/kernel")):
        w = os.path.join(work, what.split()[1])
        truth, _, dump, _, log = simulate(w, iters=30, env_extra={"NCCLSCOPE_PROM_DIR": d, "NCCL_DEBUG": "WARN"})
        warns = [l for l in log.splitlines() if "WARN" in l and "NCCLSCOPE" in l]
        check(len(warns) == 1 and "NCCLSCOPE_PROM_DIR=" + d in warns[0], "%s: warnings %s" % (what, warns))
        check([n for n in os.listdir(dump) if n.endswith(".nstrace")], "%s: no trace in %s" % (what, os.listdir(dump)))
        jl = [n for n in os.listdir(dump) if n.startswith("windows-")]
        with open(os.path.join(dump, jl[0])) as f:
            lines = [json.loads(l) for l in f]
        got = {}
        for m in lines[-1]["metrics"]:
            if m["name"] in ("ncclscope_ops_total", "ncclscope_bytes_total"):
                for p in m["points"]:
                    k = (p["labels"]["comm"], int(p["labels"]["rank"]), p["labels"]["func"])
                    v = got.get(k, (0, 0))
                    got[k] = (int(p["value"]), v[1]) if m["name"] == "ncclscope_ops_total" else (v[0], int(p["value"]))
        compare_ops(got, expected_ops(truth), "windows.jsonl with NCCLSCOPE_PROM_DIR=%s" % d)
        print("NCCLSCOPE_PROM_DIR %s: one warning (%s); windows.jsonl = truth" % (what, warns[0][:140]))


CHECKS = {"prom": check_prom, "scrape": check_scrape, "live_hang": check_live_hang, "prom_end": check_prom_end,
          "prom_killed": check_prom_killed, "prom_escape": check_prom_escape, "prom_unwritable": check_prom_unwritable,
          "otlp_proto": lambda w: check_otlp(w, "http/protobuf", False),
          "otlp_proto_gzip": lambda w: check_otlp(w, "http/protobuf", True),
          "otlp_json": lambda w: check_otlp(w, "http/json", False),
          "otlp_down": lambda w: check_failing(w, "down"), "otlp_hang": lambda w: check_failing(w, "hang"),
          "otlp_503": lambda w: check_failing(w, "503"), "otlp_reset": lambda w: check_failing(w, "reset"),
          "otlp_secrets": check_secrets}


def main():
    return run_named(CHECKS, __doc__, sys.argv)


if __name__ == "__main__":
    sys.exit(main())
