#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The shipped operations files (deploy/) against real tools and simulated runs.

usage: check_ops.py CHECK WORKDIR
  env: SIM PLUGIN (built binaries); node on PATH (dashboard, otlp_names)

  rules       promtool check rules and promtool test rules (tests/ops/ncclscope-rules.test.yml)
              on deploy/prometheus/ncclscope-rules.yml; promtool also parses every query of
              the dashboard (variables substituted)
  dashboard   check_dashboard.js: deploy/grafana/ncclscope.json against @grafana/schema and
              its structure
  live        node_exporter's textfile collector and a Prometheus server on 127.0.0.1 (scrape
              and rule evaluation every 1 s, the shipped rules with the hang thresholds
              lowered), ncclscope-sim with the plugin: the default scenario, then `hang`.
              Every query of every panel and every variable returns data, for "All" and for
              one job, host and communicator picked from the variables; every label a
              legend names is on the series; every metric a rule names exists; the process's
              series are gone within one scrape after its clean end; in `hang`, the stuck
              operation's table names the hung AllReduce and NcclscopeJobHang fires in
              ALERTS within its threshold and `for` + two intervals (+ one metrics window)
              of the hang's start (the simulator's truth); with the hang's 4 ranks in 2
              processes, the "Rank behind during a hang" table, the PromQL expression of
              the README and NcclscopeRankBehind in ALERTS name the rank that never posted
              (the truth's `hang` record) and no other; then `threads` with 8 ranks in one
              process (4 communicators, about 2,000 series): nothing refused, and every
              panel but those of a hang and of per-link fits has data for its job and
              largest communicator or all of them (a rate, where the run's counters did
              not move between scrapes: every series it reads); ncclscope_ops_total, the
              communicator variable's source, names the truth's 4 communicators
  otlp_names  the plugin's OTLP payloads over a default and a hang run (tests/sinks/
              otlp_receiver.js, the decoder generated from opentelemetry-proto): each
              metric's name, unit and type translated by the OpenTelemetry Collector's
              Prometheus naming rules (otel_names.py, checked first against the examples
              of the collector's documentation) is the name and type of a metric of the
              textfiles of the same runs, its data points labelled through the transform
              of docs/deploy.md's collector config carry the textfile's label names, and
              every metric the dashboard and the rules use arrives

Exit 0 pass, 1 fail, 77 skip (a tool is not installed: CI installs them, .ci/deps.sh
--ci). Stdlib only."""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
RULES = os.path.join(ROOT, "deploy", "prometheus", "ncclscope-rules.yml")
RULES_TEST = os.path.join(HERE, "ncclscope-rules.test.yml")
DASHBOARD = os.path.join(ROOT, "deploy", "grafana", "ncclscope.json")
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "sinks"))
from checklib import Fail, check, run_named  # noqa: E402
from check_sinks import Receiver, free_port, http_get, need, wait_http  # noqa: E402
from metrics_truth import load_truth, parse_prom  # noqa: E402
import otel_names  # noqa: E402

SCRAPE_S = 1.0      # scrape_interval and evaluation_interval of the test's Prometheus
WINDOW_S = 0.5      # NCCLSCOPE_WINDOW_SEC of the simulated runs
# NcclscopeJobHang with test thresholds: the shipped 300 s and 1m would make the test
# last minutes. Each replacement must match exactly once in the shipped file.
HANG_OVER_S, HANG_FOR_S = 3, 2
RULE_OVERRIDES = [
    ("expr: max by (job_id, comm) (ncclscope_oldest_inflight_seconds) > 300",
     "expr: max by (job_id, comm) (ncclscope_oldest_inflight_seconds) > %d" % HANG_OVER_S),
    ("for: 1m  # threshold\n        labels:\n          severity: critical",
     "for: %ds  # threshold\n        labels:\n          severity: critical" % HANG_FOR_S),
    ("for: 1m  # threshold: behind that long", "for: %ds  # threshold: behind that long" % HANG_FOR_S),
]
HANG_WAIT_MS = 15000  # the simulated ranks wait this long for the rank that never posts
JOBS = {"default": "e2e-default", "hang": "e2e-hang", "threads8": "e2e-threads8"}
# The hang run: 4 ranks in 2 processes, so that the rank that never posts and the ranks that wait for it
# are compared across processes (each process writes its own textfile).
HANG_LAYOUT = ["--procs", "2", "--ranks-per-proc", "2"]
# 8 ranks in one process, each in 4 communicators (`threads`): 32 communicator ranks, about 2,000 series,
# four times the old default budget of 500 that refused ncclscope_ops_total and emptied the dashboard.
THREADS8 = ["--scenario", "threads", "--procs", "1", "--ranks-per-proc", "8"]
OLD_DEFAULT_MAX_SERIES = 500
# Panels without data in that run by design: no hang, and per-link fits need 3 sizes seen 4 times in one window
# (the run is too short for that; the default run has them).
THREADS8_EXEMPT = {"Stuck operations", "Rank behind during a hang", "Slowest links",
                   "Slowest link bandwidth per communicator"}


def dashboard():
    with open(DASHBOARD) as f:
        return json.load(f)


def targets(dash):
    """[(panel title, target)] of every panel."""
    return [(p["title"], t) for p in dash["panels"] for t in p["targets"]]


def variables(dash):
    """{name: label_values query} of the query variables."""
    out = {}
    for v in dash["templating"]["list"]:
        if v["type"] == "query":
            out[v["name"]] = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
    return out


def substitute(expr, values, range_s=3600, rate_interval_s=4):
    """Grafana's substitution of the dashboard variables (values as put into a =~
    matcher), of $__range and of $__rate_interval (Grafana: the larger of 4 scrape
    intervals and the query step + one scrape interval: 4 s at 1 s scrapes and steps)."""
    expr = expr.replace("$__rate_interval", "%ds" % rate_interval_s).replace("$__range", "%ds" % range_s)
    for name, value in values.items():
        expr = re.sub(r"\$\{?%s\b\}?" % name, lambda _: value, expr)
    check("$" not in expr, "a variable left in %s" % expr)
    return expr


ALL = {"job_id": ".*", "host": ".*", "comm": ".*"}


def check_rules(work):
    promtool = need("promtool")
    os.makedirs(work, exist_ok=True)
    r = subprocess.run([promtool, "check", "rules", RULES], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = r.stdout.decode(errors="replace")
    check(r.returncode == 0 and "SUCCESS" in out, "promtool check rules:\n%s" % out)
    print(out.strip())
    r = subprocess.run([promtool, "test", "rules", RULES_TEST], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = r.stdout.decode(errors="replace")
    check(r.returncode == 0 and "SUCCESS" in out, "promtool test rules:\n%s" % out)
    print(out.strip())
    # every alert of the shipped file has a unit test
    with open(RULES) as f:
        alerts = re.findall(r"^\s*- alert: (\w+)", f.read(), re.M)
    with open(RULES_TEST) as f:
        tested = set(re.findall(r"alertname: (\w+)", f.read()))
    check(alerts and set(alerts) <= tested, "alerts without a promtool test: %s" % sorted(set(alerts) - tested))
    # promtool parses every dashboard query (as a recording rule)
    dash = dashboard()
    exprs = [substitute(t["expr"], ALL) for _, t in targets(dash)]
    exprs += [re.sub(r"^label_values\((.*), \w+\)$", r"\1", substitute(q, ALL)) for q in variables(dash).values()]
    path = os.path.join(work, "dashboard-queries.yml")
    with open(path, "w") as f:
        f.write("groups:\n  - name: dashboard\n    rules:\n")
        for i, e in enumerate(exprs):
            f.write("      - record: dashboard:query%d\n        expr: %s\n" % (i, json.dumps(e)))
    r = subprocess.run([promtool, "check", "rules", path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    check(r.returncode == 0, "promtool does not parse a dashboard query:\n%s" % r.stdout.decode(errors="replace"))
    print("rules: %d alerts, each unit-tested; promtool parsed the dashboard's %d queries" % (len(alerts), len(exprs)))


def check_dashboard_schema(work):
    node = need("node")
    r = subprocess.run([node, os.path.join(HERE, "check_dashboard.js"), DASHBOARD], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=240)
    out = r.stdout.decode(errors="replace")
    print(out.strip())
    if r.returncode == 77:
        sys.exit(77)
    check(r.returncode == 0, "check_dashboard.js failed")


class Stack:
    """node_exporter (textfile collector on DIR) and Prometheus (scraping it, the rules
    file loaded) on 127.0.0.1, random free ports."""

    def __init__(self, work, textfiles, rules):
        self.procs = []
        ne_bin, prom_bin = need("prometheus-node-exporter"), need("prometheus")
        self.ne_port, self.prom_port = free_port(), free_port()
        ne = subprocess.Popen([ne_bin, "--web.listen-address=127.0.0.1:%d" % self.ne_port,
                               "--collector.disable-defaults", "--collector.textfile",
                               "--collector.textfile.directory=" + textfiles],
                              stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "node_exporter.log"), "w"))
        self.procs.append(ne)
        wait_http("http://127.0.0.1:%d/metrics" % self.ne_port, ne, "node_exporter")
        cfg = os.path.join(work, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: %gs\n  evaluation_interval: %gs\nrule_files:\n  - %s\n"
                    "scrape_configs:\n  - job_name: node\n    static_configs:\n      - targets: ['127.0.0.1:%d']\n"
                    % (SCRAPE_S, SCRAPE_S, json.dumps(rules), self.ne_port))
        pr = subprocess.Popen([prom_bin, "--config.file=" + cfg, "--storage.tsdb.path=" + os.path.join(work, "tsdb"),
                               "--web.listen-address=127.0.0.1:%d" % self.prom_port],
                              stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "prometheus.log"), "w"))
        self.procs.append(pr)
        self.base = "http://127.0.0.1:%d" % self.prom_port
        wait_http(self.base + "/-/ready", pr, "prometheus", secs=60)
        end = time.time() + 30
        while time.time() < end and not self.query('up{job="node"} == 1'):
            time.sleep(0.2)
        check(self.query('up{job="node"} == 1'), "Prometheus does not scrape node_exporter")
        rules_loaded = json.loads(http_get(self.base + "/api/v1/rules"))["data"]["groups"]
        check(rules_loaded and rules_loaded[0]["rules"], "Prometheus loaded no rules: %s" % rules_loaded)

    def api(self, path, **params):
        r = json.loads(http_get(self.base + path + "?" + urllib.parse.urlencode(params, doseq=True), timeout=10))
        check(r["status"] == "success", "%s %s: %s" % (path, params, r))
        return r["data"]

    def query(self, expr, at=None):
        params = {"query": expr}
        if at is not None:
            params["time"] = "%.3f" % at
        return self.api("/api/v1/query", **params)["result"]

    def query_range(self, expr, start, end, step=SCRAPE_S):
        return self.api("/api/v1/query_range", query=expr, start="%.3f" % start, end="%.3f" % end,
                        step="%g" % step)["result"]

    def close(self):
        for p in self.procs:
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def sim_env(textfiles, dump, job):
    env = dict(os.environ, NCCLSCOPE_DUMP_DIR=dump, NCCLSCOPE_PROM_DIR=textfiles, NCCLSCOPE_WINDOW_SEC=str(WINDOW_S),
               NCCLSCOPE_JOB_NAME=job, NCCLSCOPE_HANG_TIMEOUT_SEC="1")
    for k in [k for k in env if k.startswith("OTEL_") or k.startswith("SLURM_") or k == "NCCLSCOPE_OTLP"]:
        del env[k]
    return env


def has_data(result):
    """A query result with at least one number (a range query's values, an instant query's value)."""
    for s in result:
        vals = s.get("values") or ([s["value"]] if "value" in s else [])
        if any(v[1] not in ("NaN", "+Inf", "-Inf") for v in vals):
            return True
    return False


def summary(result):
    """Series count and the largest value of a query result, for the log."""
    vals = [float(v[1]) for s in result for v in (s.get("values") or [s["value"]])
            if v[1] not in ("NaN", "+Inf", "-Inf")]
    return "%d results, max %.4g" % (len(result), max(vals)) if vals else "no data"


def legend_labels(target):
    return set(re.findall(r"\{\{\s*(\w+)\s*\}\}", target.get("legendFormat") or ""))


PROBLEMS = []


def expect(cond, msg):
    """A check of the live run that lets the others run too; check_live fails with all of them."""
    if not cond:
        PROBLEMS.append(msg)
    return cond


def check_live(work):
    if os.path.isdir(work):
        shutil.rmtree(work)
    textfiles, dump = os.path.join(work, "textfiles"), os.path.join(work, "dump")
    os.makedirs(textfiles)
    os.makedirs(dump)
    with open(RULES) as f:
        rules_text = f.read()
    for old, new in RULE_OVERRIDES:
        check(rules_text.count(old) == 1, "the test's threshold override no longer matches the rules file: %r" % old)
        rules_text = rules_text.replace(old, new)
    rules = os.path.join(work, "rules-test-thresholds.yml")
    with open(rules, "w") as f:
        f.write(rules_text)
    dash = dashboard()
    stack = Stack(work, textfiles, rules)
    try:
        live_runs(work, stack, textfiles, dump, dash)
    finally:
        stack.close()
    check(not PROBLEMS, "\n  ".join(["%d of the live checks failed:" % len(PROBLEMS)] + PROBLEMS))


def watch_run(cmd, env, textfiles, log, during=None, on_removed=None):
    """Runs the simulator; returns (start, exit time, .prom file names seen, exit status).
    during(now) is called every 0.25 s while it runs; on_removed(t), once, as soon as
    the .prom files seen are all gone (t: the last time one was seen, 0.01 s before)."""
    seen, last_seen, last_during = set(), None, 0
    start = time.time()
    p = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    while p.poll() is None:
        now = time.time()
        present = {n for n in os.listdir(textfiles) if n.endswith(".prom")}
        if present:
            seen |= present
            last_seen = now
        elif last_seen is not None and on_removed:
            on_removed(last_seen)
            on_removed = None
        if during and now - last_during >= 0.25:
            during(now)
            last_during = now
        time.sleep(0.01)
    if on_removed and last_seen is not None and not any(n.endswith(".prom") for n in os.listdir(textfiles)):
        on_removed(last_seen)
    return start, time.time(), seen, p.returncode


def wait_gone(stack, since, what, limit):
    """Seconds from `since` until the instant query `what` has no result (limit + 5 s at most)."""
    while time.time() < since + limit + 5:
        if not stack.query(what):
            return time.time() - since
        time.sleep(0.05)
    return None


def live_runs(work, stack, textfiles, dump, dash):
    sim, plugin = os.environ["SIM"], os.environ["PLUGIN"]
    # 1. the default scenario: 600 iterations keep the counters moving over several scrapes (300
    # ended their growth within one scrape on an idle machine: no rate, no quantile).
    # A clean end removes the process's file; the first scrape after that must drop
    # its series (Prometheus marks them stale), whatever the machine's load: judged at
    # the scrapes' own timestamps (the samples of `up`), not by the test's clock.
    removed = {}

    def on_removed(last_seen):
        removed["at"] = last_seen + 0.01  # the file was there at last_seen, gone 0.01 s later
        removed["gone"] = wait_gone(stack, last_seen, '{__name__=~"ncclscope_.+"}', 3 * SCRAPE_S)

    with open(os.path.join(work, "sim-default.log"), "w") as log:
        d_start, d_end, d_files, rc = watch_run(
            [sim, "--plugin", plugin, "--nccl", "ideal", "--iters", "600"],
            sim_env(textfiles, dump, JOBS["default"]), textfiles, log, on_removed=on_removed)
    check(rc == 0, "ncclscope-sim (default) exited %d: %s/sim-default.log" % (rc, work))
    check(len(d_files) == 1, "one .prom file per process, saw %s" % sorted(d_files))
    print("default run: %.1f s, %s" % (d_end - d_start, sorted(d_files)))
    left = [n for n in os.listdir(textfiles) if n.endswith(".prom")]
    expect(not left, "the process's .prom file is still there after its clean end: %s" % left)
    if expect(removed.get("gone") is not None, "the process's series are still served %g s after its .prom file "
              "went" % (3 * SCRAPE_S + 5)):
        time.sleep(SCRAPE_S)
        scrapes = sorted(float(t) for t, _ in stack.query('up{job="node"}[%ds]' % (10 + 2 * SCRAPE_S))[0]["values"])
        before = [t for t in scrapes if t < removed["at"] - 0.01]
        after = [t for t in scrapes if t >= removed["at"]]
        series = lambda at: stack.query('count({__name__=~"ncclscope_.+"})', at)  # noqa: E731
        if expect(before and after, "no scrapes around the removal at %.2f: %s" % (removed["at"], scrapes)):
            expect(series(before[-1]), "no ncclscope series at the last scrape before the removal")
            expect(not series(after[0]), "ncclscope series still served at the first scrape after the removal "
                   "(%.2f s later)" % (after[0] - removed["at"]))
            print("clean end: .prom file removed; the scrape %.2f s later dropped its series (scrape interval %g s; "
                  "seen gone by the test %.2f s after the removal)" % (after[0] - removed["at"], SCRAPE_S,
                                                                      removed["gone"]))
    for name in os.listdir(textfiles):  # what a failed check above left, out of the next run's way
        os.unlink(os.path.join(textfiles, name))
    # Rates need a counter that moved between scrapes. A window is published once its
    # operations are final, and on a loaded machine (2 cores shared by other tests)
    # windows can stay held back for a whole short run: then the job runs again, a
    # new process on the same series (a counter reset, which rate() handles), at most
    # twice more, each time longer (more scrapes while it runs), until Prometheus saw a
    # process's window counter move twice.
    moved = 'max(changes(ncclscope_windows_total{job_id="%s"}[1h])) >= 2' % JOBS["default"]
    for again in (1, 2):
        if stack.query(moved):
            break
        with open(os.path.join(work, "sim-default-%d.log" % again), "w") as log:
            t0, t1, _, rc = watch_run([sim, "--plugin", plugin, "--nccl", "ideal", "--iters", str(600 * (1 + again))],
                                      sim_env(textfiles, dump, JOBS["default"]), textfiles, log)
        check(rc == 0, "ncclscope-sim (default, again) exited %d: %s/sim-default-%d.log" % (rc, work, again))
        print("default run again (the windows did not move over two scrapes): %.1f s" % (t1 - t0))
    expect(stack.query(moved), "over 3 default runs, Prometheus never saw a process's ncclscope_windows_total move "
           "twice: the windows were held back for the whole run")

    # 2. the hang scenario: one rank never posts an AllReduce, the others wait HANG_WAIT_MS
    truth_hang = os.path.join(work, "truth-hang.jsonl")
    stuck_rows, behind_rows = [], []
    instant = [(title, t) for title, t in targets(dash) if t.get("instant")]

    def during(now):
        for title, t in instant:
            if "ncclscope_last_posted_seq" in t["expr"]:
                behind_rows.extend(stack.query(substitute(t["expr"], ALL)))
            elif "ncclscope_stuck_op_info" in t["expr"]:
                stuck_rows.extend(stack.query(substitute(t["expr"], ALL)))

    mono_to_wall = time.time() - time.monotonic()  # the truth's times are CLOCK_MONOTONIC
    with open(os.path.join(work, "sim-hang.log"), "w") as log:
        h_start, h_end, _, rc = watch_run(
            [sim, "--plugin", plugin, "--nccl", "ideal", "--scenario", "hang", "--hang-timeout-ms", str(HANG_WAIT_MS),
             "--truth", truth_hang] + HANG_LAYOUT, sim_env(textfiles, dump, JOBS["hang"]), textfiles, log, during)
    check(rc == 0, "ncclscope-sim (hang) exited %d: %s/sim-hang.log" % (rc, work))
    truth = load_truth(truth_hang)
    hung = [c for c in truth["coll"] if c["aborted"]]
    check(hung and truth["hang"], "the hang scenario's truth names no hung collective")
    hang_start = min(c["t_start"] for c in hung) / 1e9 + mono_to_wall
    hang_checks(stack, h_start, h_end, hang_start, truth["hang"][0], stuck_rows)
    culprit_checks(stack, h_start, truth["hang"][0], behind_rows)

    # 3. 8 ranks in one process, 4 communicators: everything the dashboard needs fits the default budget. The file
    # stays after the end (NCCLSCOPE_PROM_KEEP) until Prometheus scraped it: on a loaded machine the windows are
    # held back until the process ends, and its last values would otherwise never be scraped.
    t_start = time.time()
    env8 = dict(sim_env(textfiles, dump, JOBS["threads8"]), NCCLSCOPE_PROM_KEEP="1")
    truth_threads8 = os.path.join(work, "truth-threads8.jsonl")
    with open(os.path.join(work, "sim-threads8.log"), "w") as log:
        t0, t1, t_files, rc = watch_run([sim, "--plugin", plugin, "--nccl", "ideal", "--truth", truth_threads8] +
                                        THREADS8, env8, textfiles, log)
    check(rc == 0, "ncclscope-sim (threads, 8 ranks) exited %d: %s/sim-threads8.log" % (rc, work))
    print("threads, 8 ranks in 1 process: %.1f s, %s" % (t1 - t0, sorted(t_files)))
    time.sleep(2 * SCRAPE_S + 0.5)
    for name in prom_files(textfiles):
        os.unlink(os.path.join(textfiles, name))
    time.sleep(SCRAPE_S)
    job8 = '{job_id="%s"}' % JOBS["threads8"]
    series8 = stack.query_range("max(ncclscope_series%s)" % job8, t_start, time.time())
    refused8 = stack.query_range("max(ncclscope_series_refused%s)" % job8, t_start, time.time())
    most = max((float(v[1]) for r in series8 for v in r["values"]), default=0)
    refused = max((float(v[1]) for r in refused8 for v in r["values"]), default=-1)
    expect(most > OLD_DEFAULT_MAX_SERIES, "threads with 8 ranks exported at most %d series: not the layout that the "
           "old budget of %d could not hold" % (most, OLD_DEFAULT_MAX_SERIES))
    expect(refused == 0, "threads with 8 ranks: ncclscope_series_refused reached %g (the default budget must hold "
           "the layout)" % refused)
    # the dashboard's communicator variable lists every communicator of the truth
    comms8 = {c["comm"] for c in load_truth(truth_threads8)["comm"]}
    listed = {x.get("comm") for x in stack.api("/api/v1/series", **{
        "match[]": 'ncclscope_ops_total{job_id="%s"}' % JOBS["threads8"], "start": "%.3f" % t_start,
        "end": "%.3f" % time.time()})}
    expect(len(comms8) == 4 and listed == comms8, "threads with 8 ranks: ncclscope_ops_total names communicators %s, "
           "the truth's are %s" % (sorted(listed), sorted(comms8)))
    print("threads, 8 ranks: up to %d series in one process, %g refused; ncclscope_ops_total of all %d communicators"
          % (most, refused, len(listed)))

    # 4. every panel's queries and every variable over the runs
    start, end = d_start, time.time()
    range_s = int(end - start) + 1
    names = set(stack.api("/api/v1/label/__name__/values", start="%.3f" % start, end="%.3f" % end))
    # "All", then each job with its host and its largest communicator as one would
    # pick them: every query has data for All and for one of the jobs (the stuck
    # operations only in the hang job), and every label its legend names.
    picked = [pick_variables(stack, dash, start, end, job) for job in (JOBS["default"], JOBS["hang"], JOBS["threads8"])]
    failures, report = [], []
    threads8 = grafana_regex_escape(JOBS["threads8"])
    for title, t in targets(dash):
        data, hang_view = {}, "-"
        for values in [ALL] + [p for p in picked if p]:
            expr = substitute(t["expr"], values, range_s)
            if t.get("instant"):
                results = [r for at in frange(start, end, SCRAPE_S) for r in stack.query(expr, at)]
            else:
                results = stack.query_range(expr, start, end)
            data[values.get("job_id")] = has_data(results)
            if values.get("job_id") == grafana_regex_escape(JOBS["hang"]):
                hang_view = summary(results)
            missing = {lab for lab in legend_labels(t) for r in results if lab not in r["metric"]}
            if missing:
                failures.append("panel %r: legend labels %s not on its series (%s)" % (title, missing, expr))
        if not data[".*"] or not any(v for k, v in data.items() if k != ".*"):
            failures.append("panel %r query %s returns no data: %s" % (title, t["expr"], data))
        if title not in THREADS8_EXEMPT and not data.get(threads8) and not threads8_data(stack, t, picked[2], start,
                                                                                         end, range_s):
            failures.append("panel %r query %s returns no data for threads with 8 ranks (job %s, its largest "
                            "communicator or all of them)" % (title, t["expr"], JOBS["threads8"]))
        report.append((title, t["refId"], sorted(k for k, v in data.items() if v), hang_view))
    for title, t in targets(dash):
        for metric in set(re.findall(r"\b(ncclscope_\w+|node_textfile_\w+)", t["expr"])):
            base = re.sub(r"_(bucket|sum|count)$", "", metric) if metric.endswith("_bucket") else metric
            if metric not in names and base not in names:
                failures.append("panel %r names %s, which Prometheus never had" % (title, metric))
    with open(RULES) as f:
        for metric in sorted(set(re.findall(r"\b(ncclscope_\w+|node_textfile_\w+)", f.read()))):
            if metric not in names:
                failures.append("the rules name %s, which Prometheus never had" % metric)
    for f in failures:
        expect(False, f)
    for title, ref, jobs, hang_view in report:
        print("  panel %r %s: data for %s; in the hang job: %s" % (title, ref, ", ".join(jobs), hang_view))
    if not failures:
        print("dashboard: each of the %d panel queries returned data for All and for a picked job, host and "
              "communicator; every legend label present; every metric of the panels and rules exists (%d ncclscope "
              "metric names)" % (len(report), len([n for n in names if n.startswith("ncclscope_")])))


def hang_checks(stack, h_start, h_end, hang_start, hang, stuck_rows):
    fired = stack.query_range('ALERTS{alertname="NcclscopeJobHang",alertstate="firing"}', h_start, time.time(), 0.25)
    if not expect(fired, "NcclscopeJobHang never fired in ALERTS during the %d s hang" % (HANG_WAIT_MS // 1000)):
        return
    first = min(float(v[0]) for s in fired for v in s["values"])
    alert_labels = fired[0]["metric"]
    expect(alert_labels.get("comm") == hang["comm"], "the alert names comm %s, the hung one is %s"
           % (alert_labels.get("comm"), hang["comm"]))
    expect(alert_labels.get("job_id") == JOBS["hang"], "the alert names job_id %s" % alert_labels.get("job_id"))
    # The rule holds once the age passes HANG_OVER_S, fires HANG_FOR_S later; the age
    # reaches Prometheus within one metrics window plus one scrape, the rule sees it at
    # its next evaluation (every scrape interval here).
    budget = HANG_OVER_S + HANG_FOR_S + 2 * SCRAPE_S + WINDOW_S
    latency = first - hang_start
    expect(latency <= budget, "NcclscopeJobHang fired %.2f s after the hang began (threshold %d s + for %d s: "
           "at most %.2f s)" % (latency, HANG_OVER_S, HANG_FOR_S, budget))
    expect(latency >= HANG_OVER_S + HANG_FOR_S - SCRAPE_S, "NcclscopeJobHang fired %.2f s after the hang began: "
           "before its threshold %d s + for %d s" % (latency, HANG_OVER_S, HANG_FOR_S))
    rows = {(r["metric"].get("comm"), r["metric"].get("func"), r["metric"].get("seq")) for r in stuck_rows}
    expect((hang["comm"], "AllReduce", str(hang["seq"])) in rows,
           "the stuck operations table never showed comm %s AllReduce seq %d: %s" % (hang["comm"], hang["seq"], rows))
    print("hang: AllReduce seq %d of %s hung at +%.2f s of the run; NcclscopeJobHang firing in ALERTS %.2f s later "
           "(threshold %d s + for %d s, budget %.2f s); stuck operations table: %s"
           % (hang["seq"], hang["comm"], hang_start - h_start, latency, HANG_OVER_S, HANG_FOR_S, budget, sorted(rows)))
    gone = wait_gone(stack, h_end, 'ALERTS{alertname="NcclscopeJobHang",alertstate="firing"}', 3 * SCRAPE_S)
    if expect(gone is not None, "NcclscopeJobHang still firing after the job ended"):
        print("hang: the alert cleared %.2f s after the process's clean end" % gone)


def threads8_data(stack, target, values, start, end, range_s):
    """A panel of the 8-rank run without data for its largest communicator: data for all of its communicators (a
    window's gauge, such as the largest lateness, exists only for the ranks that window measured, and the scrapes
    may have seen none of the picked communicator's), or for a rate, every series it reads."""
    if not values:
        return False
    for vals in (values, dict(values, comm=".*")):
        expr = substitute(target["expr"], vals, range_s)
        if target.get("instant"):
            results = [r for at in frange(start, end, SCRAPE_S) for r in stack.query(expr, at)]
        else:
            results = stack.query_range(expr, start, end)
        if has_data(results) or series_of_rates(stack, target["expr"], vals, start, end):
            return True
    return False


def series_of_rates(stack, expr, values, start, end):
    """For a query of rates: whether every series selector in it has data for the variables' values. A rate needs
    its counter to move between two scrapes, and the windows of a short run on a loaded machine may all close at
    its end; the budget's part, the series being there, is what this checks then."""
    if not values or not re.search(r"\b(rate|increase)\(", expr):
        return False
    selectors = re.findall(r"\bncclscope_\w+\{[^}]*\}", substitute(expr, values))
    return bool(selectors) and all(has_data(stack.query_range(sel, start, end)) for sel in selectors)


def culprit_checks(stack, h_start, hang, behind_rows):
    """The rank that never posted (the truth's `hang` record), and no waiting rank, named by the dashboard's
    table, by the README's expression and by NcclscopeRankBehind, over the hang's 2 processes."""
    want = (hang["comm"], str(hang["rank"]))
    rows = {(r["metric"].get("comm"), r["metric"].get("rank")) for r in behind_rows}
    expect(rows == {want}, "the \"Rank behind during a hang\" table named %s, the rank that never posted is rank %s "
           "of %s" % (sorted(rows), want[1], want[0]))
    fired = stack.query_range('ALERTS{alertname="NcclscopeRankBehind",alertstate="firing"}', h_start, time.time(),
                              0.25)
    if not expect(fired, "NcclscopeRankBehind never fired in ALERTS during the %d s hang" % (HANG_WAIT_MS // 1000)):
        return
    named = {(s["metric"].get("comm"), s["metric"].get("rank"), s["metric"].get("job_id")) for s in fired}
    expect(named == {want + (JOBS["hang"],)}, "NcclscopeRankBehind named %s, the rank that never posted is rank %s "
           "of %s" % (sorted(named), want[1], want[0]))
    first = min(float(v[0]) for s in fired for v in s["values"])
    readme = ("max by (job_id, comm) (ncclscope_last_posted_seq) - on (job_id, comm) group_right "
              "ncclscope_last_posted_seq > 0")
    at_first = {(r["metric"].get("comm"), r["metric"].get("rank")) for r in stack.query(readme, first)}
    expect(at_first == {want}, "the README's expression named %s when the alert fired, the rank that never posted "
           "is rank %s of %s" % (sorted(at_first), want[1], want[0]))
    print("hang: rank %s of %s never posted AllReduce seq %d; the rank-behind table named %s, NcclscopeRankBehind "
          "fired naming %s at +%.2f s of the run, the README's expression then named %s"
          % (want[1], want[0], hang["seq"], sorted(rows), sorted(named), first - h_start, sorted(at_first)))


def frange(a, b, step):
    while a <= b:
        yield a
        a += step


def grafana_regex_escape(value):
    """A variable's value as Grafana's Prometheus data source puts it into a =~ matcher:
    regex metacharacters escaped with two backslashes (a PromQL string's escape, then
    the regex's)."""
    return re.sub(r"([$^*{}\[\]'+?.()|\\])", r"\\\\\1", value)


def pick_variables(stack, dash, start, end, job):
    """Evaluates the variables as Grafana does (label_values(selector, label): the
    label's values on the series of the selector) in their order, each after the ones
    it depends on; picks the job, this host and the job's largest communicator
    (None when a variable has no values)."""
    want = {"job_id": job, "host": socket.gethostname()}
    values = {}
    for name, q in variables(dash).items():
        m = re.match(r"^label_values\((.*), (\w+)\)$", q)
        check(m and m.group(2) == name, "variable %s: %s" % (name, q))
        selector = substitute(m.group(1), dict(ALL, **values))
        series = stack.api("/api/v1/series", **{"match[]": selector, "start": "%.3f" % start, "end": "%.3f" % end})
        got = sorted({s[name] for s in series if s.get(name)})
        if not expect(got, "variable %s (%s) has no values" % (name, selector)):
            return None
        if name in want:
            if not expect(want[name] in got, "variable %s: %s not among %s" % (name, want[name], got)):
                return None
            values[name] = grafana_regex_escape(want[name])
        else:
            # the communicator with the most series (the world communicator)
            values[name] = max(got, key=lambda c: sum(1 for s in series if s.get(name) == c))
        print("variable %s = %s of %s" % (name, values[name], got))
    return values


# The collector documentation's own examples of its naming rules (pkg/translator/prometheus,
# "Full normalization"): otel_names.py must give these before it judges ncclscope's names.
COLLECTOR_EXAMPLES = [
    ("(lambda).function.executions(#)", "", "gauge", False, "lambda_function_executions"),
    ("system.filesystem.usage", "By", "gauge", False, "system_filesystem_usage_bytes"),
    ("system.network.dropped", "{packets}", "gauge", False, "system_network_dropped"),
    ("system.network.dropped", "packets", "gauge", False, "system_network_dropped_packets"),
    ("system.memory.utilization", "1", "gauge", False, "system_memory_utilization_ratio"),
    ("storage.filesystem.utilization", "%", "gauge", False, "storage_filesystem_utilization_percent"),
    ("astro.light.speed", "m/s", "gauge", False, "astro_light_speed_meters_per_second"),
    ("system.processes.created", "", "sum", True, "system_processes_created_total"),
]
COLLECTOR_LABEL_EXAMPLES = [("name", "name"), ("host.name", "host_name"), ("host_name", "host_name"),
                            ("name (of the host)", "name__of_the_host_"), ("2 cents", "key_2_cents")]
DEPLOY_DOC = os.path.join(ROOT, "docs", "deploy.md")


def doc_transform():
    """The transform processor's statements of docs/deploy.md's collector config, as
    (target key, source ('resource'|'point', key), condition or None) and the
    delete_matching_keys patterns. Only the forms the doc uses are understood; any
    other statement there fails the check."""
    with open(DEPLOY_DOC) as f:
        text = f.read()
    block = text[text.index("transform/ncclscope:"):text.index("exporters:", text.index("transform/ncclscope:"))]
    ref = r'(resource\.)?attributes\["([^"]+)"\]'
    sets, deletes = [], []
    for line in re.findall(r"^\s*- (\w+\(.*)$", block, re.M):
        m = re.fullmatch(r'set\(attributes\["([^"]+)"\], %s\)(?: where %s (==|!=) nil)?' % (ref, ref), line)
        d = re.fullmatch(r'delete_matching_keys\(attributes, "(.*)"\)', line)
        if m:
            cond = ((m.group(4) and "resource" or "point", m.group(5), m.group(6)) if m.group(6) else None)
            sets.append((m.group(1), (m.group(2) and "resource" or "point", m.group(3)), cond))
        elif d:
            deletes.append(d.group(1).replace("\\\\", "\\"))
        else:
            raise Fail("docs/deploy.md: a transform statement this check does not understand: %s" % line)
    check(sets and deletes, "docs/deploy.md: no transform/ncclscope statements found")
    return sets, deletes


def collector_labels(point_attrs, resource_attrs, transform):
    """The labels the collector gives a data point: the doc's transform, then the
    attribute-to-label rule (resource attributes only through the transform)."""
    sets, deletes = transform
    attrs = dict(point_attrs)
    for target, (where, key), cond in sets:
        if cond:
            cwhere, ckey, op = cond
            present = ckey in (resource_attrs if cwhere == "resource" else attrs)
            if present != (op == "!="):
                continue
        value = (resource_attrs if where == "resource" else attrs).get(key)
        if value is not None:
            attrs[target] = value
    attrs = {k: v for k, v in attrs.items() if not any(re.search(p, k) for p in deletes)}
    return {otel_names.prometheus_label(k): str(v) for k, v in attrs.items()}


def otlp_attrs(kvs):
    out = {}
    for kv in kvs or []:
        v = kv["value"]
        out[kv["key"]] = next((v[k] for k in ("stringValue", "intValue", "boolValue", "doubleValue") if k in v), None)
    return out


def prom_files(textfiles):
    """The textfiles node_exporter reads (*.prom): the plugin's temporary files (".NAME.RANDOM.tmp", renamed
    over NAME once complete) are skipped, as node_exporter skips them."""
    return [n for n in os.listdir(textfiles) if n.endswith(".prom") and not n.startswith(".")]


def check_otlp_names(work):
    """The plugin's OTLP metrics, named and labelled as the collector does, are the
    textfile's metrics."""
    for name, unit, kind, mono, want in COLLECTOR_EXAMPLES:
        got = otel_names.prometheus_name(name, unit, kind, mono)
        check(got == want, "otel_names: %s [%s] -> %s, the collector's documentation says %s" % (name, unit, got, want))
    for key, want in COLLECTOR_LABEL_EXAMPLES:
        check(otel_names.prometheus_label(key) == want, "otel_names: attribute %r -> %r, documented %r"
              % (key, otel_names.prometheus_label(key), want))
    transform = doc_transform()
    if os.path.isdir(work):
        shutil.rmtree(work)
    os.makedirs(work)
    textfiles, dump = os.path.join(work, "textfiles"), os.path.join(work, "dump")
    os.makedirs(textfiles)
    rx = Receiver(work)
    versions = []
    try:
        # the default scenario, and `hang` for the stuck operation's series (the watchdog at 1 s)
        for scenario, extra in (("default", ["--iters", "200"]), ("hang", ["--hang-timeout-ms", "2500"])):
            env = sim_env(textfiles, dump, "e2e-otlp-" + scenario)
            # the last window's file stays (NCCLSCOPE_PROM_KEEP): a series first exported at
            # the end is in the last OTLP request and in that file only
            env.update({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:%d/" % rx.port,
                        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "NCCLSCOPE_PROM_KEEP": "1"})
            with open(os.path.join(work, "sim-%s.log" % scenario), "w") as log:
                p = subprocess.Popen([os.environ["SIM"], "--plugin", os.environ["PLUGIN"], "--nccl", "ideal",
                                      "--scenario", scenario] + extra, env=env, stdout=log, stderr=subprocess.STDOUT)
                while p.poll() is None:  # every version of the .prom file (a clean end removes it)
                    for n in prom_files(textfiles):  # not the plugin's temporary file, written meanwhile
                        try:
                            with open(os.path.join(textfiles, n)) as f:
                                versions.append(f.read())
                        except FileNotFoundError:
                            pass
                    time.sleep(0.05)
            check(p.returncode == 0, "ncclscope-sim (%s) exited %d: %s/sim-%s.log" % (scenario, p.returncode, work,
                                                                                      scenario))
            for n in prom_files(textfiles):
                with open(os.path.join(textfiles, n)) as f:
                    versions.append(f.read())
            for n in os.listdir(textfiles):
                os.unlink(os.path.join(textfiles, n))
    finally:
        rx.close()
    reqs = rx.requests()
    check(reqs, "no OTLP request reached the receiver")
    prom_type, prom_keys = {}, {}  # textfile metric -> TYPE, {label name sets}
    for text in versions:
        for line in text.splitlines():
            m = re.match(r"# TYPE (\S+) (\S+)", line)
            if m:
                prom_type[m.group(1)] = m.group(2)
        for name, labels, _ in parse_prom(text):
            base = re.sub(r"_(bucket|sum|count)$", "", name) if prom_type.get(
                re.sub(r"_(bucket|sum|count)$", "", name)) == "histogram" else name
            prom_keys.setdefault(base, set()).add(frozenset(k for k in labels if k != "le"))
    otlp, otlp_keys = {}, {}  # OTLP name -> (unit, kind, monotonic); collector name -> {label name sets}
    for r in reqs:
        check(not r.get("error"), "the decoder refused a payload: %s" % r.get("error"))
        for rm in r["decoded"]["resourceMetrics"]:
            res = otlp_attrs(rm["resource"].get("attributes"))
            for sm in rm["scopeMetrics"]:
                for m in sm["metrics"]:
                    kind = next(k for k in ("sum", "gauge", "histogram", "exponentialHistogram", "summary") if k in m)
                    mono = bool(m[kind].get("isMonotonic"))
                    otlp[m["name"]] = (m.get("unit", ""), kind, mono)
                    name = otel_names.prometheus_name(m["name"], m.get("unit", ""), kind, mono)
                    for dp in m[kind].get("dataPoints", []):
                        labels = collector_labels(otlp_attrs(dp.get("attributes")), res, transform)
                        otlp_keys.setdefault(name, set()).add(frozenset(labels))
    failures, lines = [], []
    for name, (unit, kind, mono) in sorted(otlp.items()):
        translated = otel_names.prometheus_name(name, unit, kind, mono)
        ptype = {"sum": "counter" if mono else "gauge", "gauge": "gauge", "histogram": "histogram"}.get(kind)
        lines.append("%s [%s] %s -> %s" % (name, unit, kind, translated))
        if translated not in prom_type:
            near = sorted(n for n in prom_type if n.startswith("_".join(translated.split("_")[:2]) + "_"))
            failures.append("%s (unit %r, %s) becomes %s behind a collector: not a textfile metric (the textfile "
                            "has %s)" % (name, unit, kind, translated, ", ".join(near) or "nothing like it"))
        elif prom_type[translated] != ptype:
            failures.append("%s: %s in OTLP, %s in the textfile" % (name, ptype, prom_type[translated]))
        elif otlp_keys.get(translated, set()) != prom_keys.get(translated, set()):
            fmt = lambda sets: sorted(sorted(x) for x in sets)  # noqa: E731
            failures.append("%s: labels behind the collector %s, in the textfile %s"
                            % (translated, fmt(otlp_keys.get(translated, set())), fmt(prom_keys.get(translated, set()))))
    used = set()
    for _, t in targets(dashboard()):
        used.update(re.findall(r"\b(ncclscope_\w+)", t["expr"]))
    with open(RULES) as f:
        used.update(re.findall(r"\b(ncclscope_\w+)", f.read()))
    reachable = {otel_names.prometheus_name(n, *v) for n, v in otlp.items()}
    reachable |= {n + s for n in reachable for s in ("_bucket", "_sum", "_count")}
    for metric in sorted(used - reachable):
        failures.append("the dashboard or the rules use %s, which no OTLP metric becomes" % metric)
    print("\n".join(lines))
    check(not failures, "\n  ".join(["OTLP -> Prometheus names:"] + failures))
    print("otlp names: %d OTLP metrics from %d requests become their textfile names, with the textfile's label names "
          "through docs/deploy.md's transform; the %d metrics of the dashboard and rules all arrive through a collector"
          % (len(otlp), len(reqs), len(used)))


CHECKS = {"rules": check_rules, "dashboard": check_dashboard_schema, "live": check_live,
          "otlp_names": check_otlp_names}


def main():
    return run_named(CHECKS, __doc__, sys.argv)


if __name__ == "__main__":
    sys.exit(main())
