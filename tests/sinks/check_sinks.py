#!/usr/bin/env python3
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

Runs ncclscope-sim (--nccl ideal, default scenario, real time) with windows of
0.1 s. Exit 0 pass, 1 fail, 77 skip (a tool is not installed: CI installs them,
.ci/deps.sh --ci). Stdlib only."""
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from metrics_truth import expected_ops, load_truth, parse_prom, prom_ops  # noqa: E402

SKIP = 77


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


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


def simulate(work, iters=100, env_extra=None, watch_prom=False):
    """Runs the simulator with the plugin; returns (truth, prom dir, dump dir, prom versions)."""
    if os.path.isdir(work):
        shutil.rmtree(work)
    dump, prom = os.path.join(work, "dump"), os.path.join(work, "prom")
    os.makedirs(prom)
    truth_path = os.path.join(work, "truth.jsonl")
    env = dict(os.environ, NCCLSCOPE_DUMP_DIR=dump, NCCLSCOPE_PROM_DIR=prom, NCCLSCOPE_WINDOW_SEC="0.1")
    for k in [k for k in env if k.startswith("OTEL_") or k in ("NCCLSCOPE_OTLP", "http_proxy", "HTTP_PROXY")]:
        del env[k]
    env.update(env_extra or {})
    versions, stop = [], threading.Event()

    def watcher():  # every version of the .prom file: each window renames a new one into place
        seen = set()
        while True:
            done = stop.is_set()
            for name in os.listdir(prom):
                if not name.endswith(".prom"):
                    continue
                try:
                    with open(os.path.join(prom, name), "rb") as f:
                        key = os.fstat(f.fileno()).st_ino
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
    r = subprocess.run([os.environ["SIM"], "--plugin", os.environ["PLUGIN"], "--nccl", "ideal", "--iters", str(iters),
                        "--truth", truth_path], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    stop.set()
    if watch_prom:
        t.join()
    log = r.stdout.decode(errors="replace")
    with open(os.path.join(work, "sim.log"), "w") as f:
        f.write(log)
    check(r.returncode == 0, "ncclscope-sim exited %d:\n%s" % (r.returncode, log[-3000:]))
    return load_truth(truth_path), prom, dump, versions, log


def compare_ops(got, exp, where):
    check(got, "%s: no ncclscope_ops_total series" % where)
    for k in sorted(set(exp) | set(got)):
        check(got.get(k) == exp.get(k), "%s: %s (ops, bytes) = %s, truth %s" % (where, k, got.get(k), exp.get(k)))


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
    compare_ops(prom_ops(samples), expected_ops(truth), "the .prom file")

    # the series budget: counted, reported, kept
    series = [v for n, _, v in samples if n == "ncclscope_series"]
    check(series == [len(samples)], "ncclscope_series %s != %d sample lines" % (series, len(samples)))
    check(len(samples) <= 300, "%d series > the default budget of 300" % len(samples))
    for n, lab, _ in samples:
        for k, v in lab.items():
            check(k in ("pid", "comm", "rank", "type", "func", "size", "peer", "channel", "reason", "result", "le"),
                  "unexpected label %s=%s on %s" % (k, v, n))
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
    from_prom = {(n, tuple(sorted(l.items()))): v for n, l, v in samples if not n.startswith("ncclscope_op_duration")}
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
    exp = expected_ops(truth)
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


CHECKS = {"prom": check_prom, "scrape": check_scrape}


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in CHECKS:
        print(__doc__)
        return 2
    try:
        CHECKS[sys.argv[1]](sys.argv[2])
    except Fail as e:
        print("FAIL %s: %s" % (sys.argv[1], e))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
