#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""report.html in a real headless Chromium (issue 15).

usage: check_html.py WORKDIR [SCREENSHOT.png]
  env: NCCLSCOPE SIM PLUGIN (paths of the built binaries)

Two simulated jobs write into one dump directory: the `default` scenario
(message sizes, links; on this machine's host) and the `hang` scenario (seed
3: a stuck AllReduce; on 2 simulated hosts where namespaces allow it), 8
ranks in 2 processes each.
`ncclscope report` writes report.html beside summary.json. Then, in
Debian's chromium (headless):
  - the page loads with no console message at all (errors, CSP refusals:
    the page fetches nothing, so any refusal is a bug);
  - the page names no remote or local resource (no src=/href= to load);
  - every chart drew the marks summary.json implies (the page's own count,
    body[data-marks]): lateness bars = the ranks of the largest
    communicator, time = 4 per (function, size), bandwidth = 1 per
    (function, size), the table = the collective rows, link cells = the
    (rank, peer) pairs with a bandwidth, stuck-op timeline = the ranks of
    the hung communicator, hosts = the hosts; and 3 uPlot charts exist;
  - a screenshot is taken (WORKDIR/report.png, or SCREENSHOT.png).
No chromium: skipped (exit 77) saying so; .ci/deps.sh installs it.
A binary built without its chart library (no npm): fails, saying so.
Exit 0 pass, 1 fail, 77 skip. Stdlib only.
"""
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checklib import check, outcome  # noqa: E402


def browser():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


def run(cmd, env=None, timeout=120):
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def simulate(dump, work, args, hosts, watchdog=False):
    env = dict(os.environ, NCCLSCOPE_DUMP_DIR=dump, NCCLSCOPE_EVENT_MASK="all")
    if watchdog:
        env["NCCLSCOPE_HANG_TIMEOUT_SEC"] = "1.5"
    else:
        # the default job: a starved process (a loaded machine) must not add a flight record of its own
        env["NCCLSCOPE_HANG_TIMEOUT_SEC"] = "600"
    base = [os.environ["SIM"], "--plugin", os.environ["PLUGIN"], "--nccl", "ideal", "--procs", "2",
            "--ranks-per-proc", "4", "--nodes", "2"]
    host = ["--host-ns", "--host-offset-s", "3"] if hosts else []
    rc, out, err = run(base + host + args, env)
    if rc == 3 and hosts and "cannot create simulated hosts" in out + err:
        return False
    check(rc == 0, "%s exited %d:\n%s" % (" ".join(base + args), rc, (out + err)[-2000:]))
    return True


class Marks(html.parser.HTMLParser):
    """body[data-marks], the uPlot charts and any element that would load something."""

    def __init__(self):
        super().__init__()
        self.marks = None
        self.uplots = 0
        self.loads = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body" and "data-marks" in a:
            self.marks = json.loads(a["data-marks"])
        if "uplot" in (a.get("class") or "").split():
            self.uplots += 1
        for k in ("src", "href"):
            if a.get(k) and not a[k].startswith(("#", "data:", "url(#")):
                self.loads.append((tag, k, a[k]))


def expected(summary):
    e = {}
    comms = summary["lateness"]
    e["lateness"] = len(max(comms, key=lambda c: c["nranks"])["ranks"]) if comms else 0
    pairs = {(r["func"], r["bytes"]) for r in summary["collectives"] if r.get("timedCalls") and r.get("bytes")}
    e["time"] = 4 * len(pairs)
    e["busbw"] = len(pairs)
    e["busbw.table"] = len(summary["collectives"])
    links = set()
    for l in summary["slowestLinks"] + summary["otherLinks"]:
        fit = l.get("min") if l.get("min") and l["min"].get("bandwidthGBs", 0) > 0 else l.get("avg")
        if fit and fit.get("bandwidthGBs", 0) > 0 and l.get("peer") is not None and l["peer"] >= 0:
            links.add((l["rank"], l["peer"]))
    e["links"] = len(links)
    e["hang"] = sum(len(h["ranks"]) for h in summary["hangs"])
    e["hosts"] = len(summary["hosts"])
    return e


def check_page(work, shot, chrome):
    os.makedirs(work, exist_ok=True)
    dump = os.path.join(work, "dump")
    shutil.rmtree(dump, ignore_errors=True)
    os.makedirs(dump)
    # the default job on this machine's own host, the hang on two simulated hosts (their own names: a
    # simulated host's clock offset comes from the seed, and one host name must mean one clock)
    simulate(dump, work, ["--scenario", "default", "--iters", "2", "--seed", "1"], False)
    hosts = simulate(dump, work, ["--scenario", "hang", "--seed", "3", "--hang-timeout-ms", "5000"], True, True)
    if not hosts:
        print("note: no namespaces for simulated hosts here: the hang runs on this host too")
        simulate(dump, work, ["--scenario", "hang", "--seed", "3", "--hang-timeout-ms", "5000"], False, True)
    rc, out, err = run([os.environ["NCCLSCOPE"], "report", dump, "-q", "--links", "1000"])
    check(rc == 0, "report exited %d: %s" % (rc, err[-2000:]))
    page = os.path.join(dump, "report.html")
    with open(os.path.join(dump, "summary.json")) as f:
        summary = json.load(f)
    with open(page, encoding="utf-8") as f:
        text = f.read()
    check("uPlot" in text and "function" in text[:200000],
          "report.html has no chart library: ncclscope was built without npm (tools/html/package.json)")
    url = "file://" + os.path.abspath(page)
    flags = [chrome, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--enable-logging=stderr", "--v=0", "--user-data-dir=" + os.path.join(work, "profile")]
    rc, dom, log = run(flags + ["--virtual-time-budget=5000", "--dump-dom", url])
    check(rc == 0, "chromium --dump-dom exited %d:\n%s" % (rc, log[-2000:]))
    console = [l for l in log.splitlines() if ":CONSOLE" in l]
    check(not console, "console messages:\n" + "\n".join(console[:20]))
    p = Marks()
    p.feed(dom)
    check(p.marks is not None, "the page's script did not finish (no body[data-marks]); chromium said:\n" + log[-2000:])
    check(not p.loads, "the page names resources to load: %s" % p.loads[:5])
    want = expected(summary)
    print("marks drawn: %s" % json.dumps(p.marks, sort_keys=True))
    print("marks due:   %s" % json.dumps(want, sort_keys=True))
    bad = {k: (p.marks.get(k), v) for k, v in want.items() if p.marks.get(k) != v}
    check(not bad, "charts drew other mark counts than summary.json implies (drawn, due): %s" % bad)
    check(want["hang"] == 8 and want["links"] > 0 and want["time"] > 4 and want["lateness"] == 8,
          "the dump lacks what the page must show (hang 8 ranks, links, sizes, lateness): %s" % want)
    check(p.uplots == 3, "%d uPlot charts, want 3" % p.uplots)
    if os.path.exists(shot):
        os.unlink(shot)
    rc, _, log = run(flags + ["--hide-scrollbars", "--window-size=1100,3400", "--virtual-time-budget=5000",
                              "--screenshot=" + os.path.abspath(shot), url])
    check(rc == 0 and os.path.exists(shot) and os.path.getsize(shot) > 20000,
          "no screenshot (%d):\n%s" % (rc, log[-2000:]))
    with open(shot, "rb") as f:
        check(f.read(8) == b"\x89PNG\r\n\x1a\n", "the screenshot is not a PNG")
    print("screenshot: %s (%d bytes)" % (shot, os.path.getsize(shot)))


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__)
        return 2
    work = sys.argv[1]
    shot = sys.argv[2] if len(sys.argv) == 3 else os.path.join(work, "report.png")
    chrome = browser()
    if not chrome:
        print("SKIP: no chromium on PATH (Debian's chromium package; .ci/deps.sh installs it)")
        return 77
    return outcome(check_page, work, shot, chrome)


if __name__ == "__main__":
    sys.exit(main())
