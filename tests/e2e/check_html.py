#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""report.html in a real headless Chromium.

usage: check_html.py CHECK WORKDIR [SCREENSHOT.png]
  CHECK: ranks8     two simulated jobs in one dump directory: the `default`
                    scenario (message sizes, links; on this machine's host)
                    and the `hang` scenario (seed 3: a stuck AllReduce; on 2
                    simulated hosts where namespaces allow it), 8 ranks in 2
                    processes each (ncclscope-sim with the plugin)
         ranks1024  a synthetic job of 1,024 ranks on 16 hosts (gen_html_job:
                    the simulator stops at 64 ranks), three communicators
                    (world, dp0, dp1), a straggler and a slow link
         v7         NCCL 2.31 (--fast): the `mismatch_count` scenario with userTags:
                    the mismatch table and tile, the kernel phases and the tags
                    table (its numbers equal to summary.json's)
         names      hostile names: a synthetic job of 16 ranks whose host and
                    communicator names hold "<!--<script>", "</script>", '&',
                    U+2028 and U+2029, and (as root, with unshare) the
                    simulator under the host name "<!--<script>x"
  env: NCCLSCOPE SIM PLUGIN GEN_HTML_JOB (paths of the built binaries)

`ncclscope report` writes report.html beside summary.json. Then, in Debian's
chromium (headless, --dump-dom, console on stderr):
  - the page loads with no console message at all (errors, CSP refusals: the
    page fetches nothing, so any message is a bug) and names nothing to load;
  - the data embedded in the page parses to summary.json's object, and holds
    no '<', '>', '&', U+2028 or U+2029 (they are escaped);
  - the nccl-tests style table has exactly summary.json's collective rows,
    each number cell with summary.json's value (data-v equal, its text that
    value to the digits shown), under a heading with the communicator's name
    and size;
  - the link matrix has one cell per (rank, peer) with a fitted send link of
    summary.json (blocks of ranks beyond 64 ranks), each with the slowest of
    those links' bandwidths, equal to summary.json's, and rank labels on both
    axes; nothing else (receive waits, links without a fit) is drawn;
  - every chart drew the marks summary.json implies (body[data-marks]) and
    the uPlot charts (canvas) and SVG charts exist;
  - ranks8, ranks1024: a screenshot (WORKDIR/report.png, or SCREENSHOT.png).
No chromium: skipped (exit 77) saying so; .ci/deps.sh installs it.
A binary built without its chart library (no npm): fails, saying so.
Exit 0 pass, 1 fail, 77 skip. Stdlib only.
"""
import html.parser
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checklib import check, outcome  # noqa: E402

MATRIX_MAX = 64  # report.js: beyond this many ranks the matrix shows blocks of ranks
HANG_ROWS = 64   # report.js: ranks drawn per stuck collective
HOSTILE = "<!--<script>x"


def browser():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


def run(cmd, env=None, timeout=120):
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def simulate(dump, args, hosts, watchdog=False, prefix=()):
    env = dict(os.environ, NCCLSCOPE_DUMP_DIR=dump, NCCLSCOPE_EVENT_MASK="all")
    # the default job: a starved process (a loaded machine) must not add a flight record of its own
    env["NCCLSCOPE_HANG_TIMEOUT_SEC"] = "1.5" if watchdog else "600"
    base = [os.environ["SIM"], "--plugin", os.environ["PLUGIN"], "--nccl", "ideal", "--procs", "2",
            "--ranks-per-proc", "4", "--nodes", "2"]
    host = ["--host-ns", "--host-offset-s", "3"] if hosts else []
    cmd = list(prefix) + base + host + args
    rc, out, err = run(cmd, env)
    if rc == 3 and hosts and "cannot create simulated hosts" in out + err:
        return False
    check(rc == 0, "%s exited %d:\n%s" % (" ".join(cmd), rc, (out + err)[-2000:]))
    return True


class Page(html.parser.HTMLParser):
    """What the page drew, from the DOM chromium dumped."""

    def __init__(self):
        super().__init__()
        self.marks = None
        self.canvases = self.svgs = self.scripts = 0
        self.loads = []
        self.rows = []       # nccl-tests table rows: (tr attrs, [(td attrs, text)])
        self.links = []      # link matrix cells: rect attrs
        self.matrices = []   # svg attrs of the link matrices, with their text labels
        self.headings = []   # (data-comm, text) of the per-communicator headings
        self.comm_cells = []  # the communicator table's name cells
        self.loss = None     # the header's loss line: (data-loss, text)
        self.tiles = []      # the header's tiles' text
        self.other_rows = {"tags": [], "mismatches": []}  # those tables' rows: (tr attrs, [(td attrs, text)])
        self.text = []
        self._table = []
        self._row = None
        self._cell = None
        self._svg = None
        self._h3 = None
        self._label = None
        self._comm_row = None
        self._loss = None
        self._tile = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body" and "data-marks" in a:
            self.marks = json.loads(a["data-marks"])
        self.canvases += tag == "canvas"
        self.scripts += tag == "script"
        for k in ("src", "href"):
            if a.get(k) and not a[k].startswith(("#", "data:", "url(#")):
                self.loads.append((tag, k, a[k]))
        if tag == "table":
            self._table.append(a.get("data-table"))
        elif tag == "tr" and self._table and self._table[-1] == "collectives" and "data-func" in a:
            self._row = (a, [])
        elif tag == "tr" and self._table and self._table[-1] in self.other_rows and "data-comm" in a:
            self._row = (a, [], self._table[-1])
        elif tag == "tr" and self._table and self._table[-1] == "comms" and "data-comm" in a:
            self._comm_row = [a["data-comm"], None]
        elif tag == "td" and (self._row is not None or self._comm_row is not None):
            self._cell = [a, ""]
        elif tag == "svg":
            self.svgs += 1
            if a.get("data-chart") == "links":
                self._svg = dict(a, labels=[])
        elif tag == "rect" and a.get("class") == "link":
            self.links.append(a)
        elif tag == "text" and self._svg is not None:
            self._label = ""
        elif tag == "h3" and "data-comm" in a:
            self._h3 = [a["data-comm"], ""]
        elif tag == "p" and "data-loss" in a:
            self._loss = [a["data-loss"], ""]
        elif tag == "div" and (a.get("class") or "").startswith("tile "):
            self._tile = [0, ""]
        if tag == "div" and self._tile is not None:
            self._tile[0] += 1

    def handle_endtag(self, tag):
        if tag == "table" and self._table:
            self._table.pop()
        elif tag == "td" and self._cell is not None:
            if self._row is not None:
                self._row[1].append(tuple(self._cell))
            elif self._comm_row is not None and self._comm_row[1] is None:
                self._comm_row[1] = self._cell[1]
                self.comm_cells.append(tuple(self._comm_row))
            self._cell = None
        elif tag == "tr":
            if self._row is not None and len(self._row) == 3:
                self.other_rows[self._row[2]].append(self._row[:2])
            elif self._row is not None:
                self.rows.append(self._row)
            self._row = None
            self._comm_row = None
        elif tag == "svg" and self._svg is not None:
            self.matrices.append(self._svg)
            self._svg = None
        elif tag == "text" and self._label is not None and self._svg is not None:
            self._svg["labels"].append(self._label)
            self._label = None
        elif tag == "h3" and self._h3 is not None:
            self.headings.append(tuple(self._h3))
            self._h3 = None
        elif tag == "p" and self._loss is not None:
            self.loss = tuple(self._loss)
            self._loss = None
        elif tag == "div" and self._tile is not None:
            self._tile[0] -= 1
            if self._tile[0] == 0:
                self.tiles.append(self._tile[1])
                self._tile = None

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell[1] += data
        if self._label is not None:
            self._label += data
        if self._h3 is not None:
            self._h3[1] += data
        if self._loss is not None:
            self._loss[1] += data
        if self._tile is not None:
            self._tile[1] += " " + data


def embedded(text):
    """The page's embedded data: the JSON text of its ncclscope-summary element."""
    m = re.search(r'<script type="application/json" id="ncclscope-summary">(.*?)</script>', text, re.S)
    check(m, "the page embeds no <script type=application/json id=ncclscope-summary>")
    return m.group(1)


def shown_equals(text, value):
    """Whether a cell's text is value to the digits it shows."""
    if value is None:
        return text == ""
    try:
        t = float(text)
    except ValueError:
        return False
    if "e" in text.lower():
        return abs(t - value) <= 0.05 * abs(value)
    decimals = len(text.split(".")[1]) if "." in text else 0
    return abs(t - value) <= 0.5 * 10 ** -decimals * (1 + 1e-9) + 1e-12


def fitted(summary):
    return [l for l in summary["slowestLinks"]
            if l.get("isSend") and (l.get("min") or {}).get("ok") and l["min"].get("bandwidthGBs", 0) > 0
            and l.get("peer") is not None and l["peer"] >= 0 and l.get("rank") is not None and l["rank"] >= 0]


def comm_sizes(summary):
    n = {}
    for r in summary["collectives"]:
        n[r["commId"]] = max(n.get(r["commId"], 0), r.get("nranks") or 0)
    for c in summary["lateness"] + summary["crossRank"]:
        n[c["commId"]] = max(n.get(c["commId"], 0), c.get("nranks") or 0)
    return n


def check_table(p, summary):
    """The nccl-tests table: summary.json's rows, each number equal."""
    def key(commid, func, nbytes, algo, proto):
        return (commid, func, int(nbytes), algo or "", proto or "")

    want = {}
    for r in summary["collectives"]:
        want.setdefault(key(r["commId"], r["func"], r["bytes"], r["algo"], r["proto"]), []).append(r)
    check(len(p.rows) == len(summary["collectives"]),
          "the table has %d collective rows, summary.json %d" % (len(p.rows), len(summary["collectives"])))
    compared = 0
    for attrs, cells in p.rows:
        k = key(attrs["data-comm"], attrs["data-func"], attrs["data-bytes"], attrs.get("data-algo"), attrs.get("data-proto"))
        check(k in want and want[k], "a table row summary.json does not have (or has fewer times): %s" % (k,))
        r = want[k].pop(0)
        numbers = [(a, t) for a, t in cells if "data-key" in a]
        check(len(numbers) >= 8, "row %s: %d number cells" % (k, len(numbers)))
        for a, text in numbers:
            v = r.get(a["data-key"])
            check(v is not None and float(a["data-v"]) == v,
                  "row %s: %s is %s on the page, %s in summary.json" % (k, a["data-key"], a["data-v"], v))
            check(shown_equals(text.strip(), v), "row %s: %s shows %r for %r" % (k, a["data-key"], text, v))
            compared += 1
    sizes = comm_sizes(summary)
    names = {c["commId"]: c.get("name") or "" for c in summary["lateness"] + summary["hangs"]}
    for commid in {r["commId"] for r in summary["collectives"]}:
        heads = [t for c, t in p.headings if c == commid]
        check(len(heads) == 1, "communicator %s: %d table headings" % (commid, len(heads)))
        check("%d ranks" % sizes[commid] in heads[0] and (names.get(commid) or commid) in heads[0],
              "communicator %s: heading %r lacks its name %r or %d ranks" % (commid, heads[0], names.get(commid), sizes[commid]))
    return compared


def check_links(p, summary):
    """The link matrix: one cell per (rank, peer) block with fitted send links, the slowest one's bandwidth."""
    sizes = comm_sizes(summary)
    by_comm = {}
    for l in fitted(summary):
        by_comm.setdefault(l["commId"], []).append(l)
    check(len(p.matrices) == len(by_comm), "%d link matrices for %d communicators with fitted send links" %
          (len(p.matrices), len(by_comm)))
    blocks = {}
    for m in p.matrices:
        n = int(m["data-n"])
        block = int(m["data-block"])
        want_block = 1 if n <= MATRIX_MAX else 2 ** math.ceil(math.log2(n / MATRIX_MAX))
        check(block == want_block, "matrix of %d ranks in blocks of %d, want %d" % (n, block, want_block))
        # rank labels on both axes: every label from 0 in steps, twice (peers above, ranks left)
        nums = [int(t) for t in m["labels"] if t.strip().isdigit()]
        check(nums.count(0) == 2 and len(nums) >= 4, "matrix labels are not ranks on both axes: %s" % m["labels"][:20])
    for commid, ls in by_comm.items():
        n = max([sizes.get(commid, 0)] + [max(l["rank"], l["peer"]) + 1 for l in ls])
        block = 1 if n <= MATRIX_MAX else 2 ** math.ceil(math.log2(n / MATRIX_MAX))
        blocks[commid] = block
        want = {}
        for l in ls:
            k = (l["rank"] // block, l["peer"] // block)
            cur = want.get(k)
            want[k] = (min(cur[0], l["min"]["bandwidthGBs"]) if cur else l["min"]["bandwidthGBs"], (cur[1] if cur else 0) + 1)
        got = {}
        for c in p.links:
            if c["data-comm"] != commid:
                continue
            r, q = int(c["data-rank"]), int(c["data-peer"])
            k = (r // block, q // block)
            check(k not in got, "communicator %s: two cells for %s" % (commid, k))
            got[k] = (float(c["data-gbs"]), int(c["data-links"]))
            if block > 1:
                check(int(c["data-rank-block"]) == k[0] * block and int(c["data-peer-block"]) == k[1] * block,
                      "a cell's block is not its slowest link's: %s" % c)
        check(got == want, "communicator %s: link cells (block, peer block) -> (GB/s, links) differ from summary.json's "
              "fitted send links:\npage %s\nsummary.json %s" % (commid, sorted(got.items())[:8], sorted(want.items())[:8]))
    check(len(p.links) == sum(1 for c in p.links if c["data-comm"] in by_comm), "cells of communicators without links")
    return blocks


def expected_marks(summary):
    e = {}
    e["collectives"] = len(summary["collectives"])
    best = {}
    for r in summary["collectives"]:
        if not r.get("timedCalls") or not r.get("bytes"):
            continue
        k = (r["func"], r["commId"], r["bytes"])
        if k not in best or r["timedCalls"] > best[k]["timedCalls"]:
            best[k] = r
    e["busbw"] = sum(1 for r in best.values() if (r.get("busbwGBs") or 0) > 0)
    e["time"] = sum((1 if (r.get("p50Us") or 0) > 0 else 0) + (1 if (r.get("p99Us") or 0) > 0 else 0) for r in best.values())
    e["lateness"] = sum(len(c["ranks"]) for c in summary["lateness"])
    e["hang"] = sum(min(HANG_ROWS, len(h["ranks"])) for h in summary["hangs"])
    e["hosts"] = len(summary["hosts"])
    e["mismatch"] = sum(len(c["ranks"]) for c in summary.get("mismatches", []))
    e["phases"] = sum(min(HANG_ROWS, len(c["ranks"])) for c in summary.get("kernelPhases", []))
    e["tags"] = len(summary.get("tags", []))
    comms = {r["commId"] for r in summary["collectives"]}
    comms |= {c["commId"] for c in summary["lateness"] + summary["hangs"] + summary["crossRank"]}
    e["comms"] = len(comms)
    e["uplots"] = 2 * len({k[0] for k in best}) + sum(1 for c in summary["lateness"] if c["ranks"])
    return e


def load(chrome, work, page):
    flags = [chrome, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--enable-logging=stderr", "--v=0", "--user-data-dir=" + tempfile.mkdtemp(dir=work)]
    url = "file://" + os.path.abspath(page)
    rc, dom, log = run(flags + ["--window-size=1300,2000", "--virtual-time-budget=5000", "--dump-dom", url])
    check(rc == 0, "chromium --dump-dom exited %d:\n%s" % (rc, log[-2000:]))
    console = [l for l in log.splitlines() if ":CONSOLE" in l]
    check(not console, "console messages:\n" + "\n".join(console[:20]))
    p = Page()
    p.feed(dom)
    check(p.marks is not None, "the page's script did not finish (no body[data-marks]); chromium said:\n" + log[-2000:])
    check(not p.loads, "the page names resources to load: %s" % p.loads[:5])
    return p, flags, url


def screenshot(flags, url, shot, height):
    if os.path.exists(shot):
        os.unlink(shot)
    rc, _, log = run(flags + ["--hide-scrollbars", "--window-size=1300,%d" % height, "--virtual-time-budget=5000",
                              "--screenshot=" + os.path.abspath(shot), url])
    check(rc == 0 and os.path.exists(shot) and os.path.getsize(shot) > 20000, "no screenshot (%d):\n%s" % (rc, log[-2000:]))
    with open(shot, "rb") as f:
        check(f.read(8) == b"\x89PNG\r\n\x1a\n", "the screenshot is not a PNG")
    print("screenshot: %s (%d bytes)" % (shot, os.path.getsize(shot)))


def report_and_load(chrome, work, dump):
    rc, out, err = run([os.environ["NCCLSCOPE"], "report", dump, "-q", "--links", "100000"])
    with open(os.path.join(dump, "summary.json")) as f:
        summary = json.load(f)
    want = 3 if summary.get("hangs") or summary.get("mismatches") else 0  # 3: a hang or a mismatch found
    check(rc == want, "report exited %d, want %d: %s" % (rc, want, err[-2000:]))
    with open(os.path.join(dump, "report.html"), encoding="utf-8") as f:
        text = f.read()
    check("var uPlot=" in text,
          "report.html has no chart library: ncclscope was built without npm (tools/report/html/package.json)")
    # first what a reader sees: the page's script ran and drew its charts
    p, flags, url = load(chrome, work, os.path.join(dump, "report.html"))
    check(p.svgs >= 1 and p.canvases >= 1, "%d svg, %d canvas: the charts were not drawn" % (p.svgs, p.canvases))
    check(p.scripts == 3, "the page has %d <script> elements, want 3 (data, uPlot, report.js)" % p.scripts)
    data = embedded(text)
    for c in ("<", ">", "&", "\u2028", "\u2029"):
        check(c not in data, "the embedded data holds a raw %r" % c)
    check(json.loads(data) == summary, "the page's embedded data is not summary.json's object")
    want = expected_marks(summary)
    print("marks drawn: %s" % json.dumps(p.marks, sort_keys=True))
    print("marks due:   %s" % json.dumps(want, sort_keys=True))
    bad = {k: (p.marks.get(k), v) for k, v in want.items() if k != "uplots" and p.marks.get(k) != v}
    check(not bad, "charts drew other mark counts than summary.json implies (drawn, due): %s" % bad)
    check(p.canvases == want["uplots"], "%d uPlot charts (canvas), want %d" % (p.canvases, want["uplots"]))
    compared = check_table(p, summary)
    blocks = check_links(p, summary)
    check(p.marks.get("links") == len(p.links), "marks say %s link cells, the DOM has %d" % (p.marks.get("links"), len(p.links)))
    print("table: %d rows, %d numbers equal to summary.json's; link cells: %d (%s)" %
          (len(p.rows), compared, len(p.links), ", ".join("%s in blocks of %d" % kv for kv in blocks.items())))
    return summary, p, flags, url


# summary.json's loss object (written by `ncclscope report` from the traces' own counters; older
# versions have none): the header shows every figure of it
LOSS = {"eventsSeen": 1000, "eventsInTrace": 900, "eventsDropped": 60, "eventsLostToWriteErrors": 40,
        "stepsNotAnalysed": 5, "bytesLostToWriteErrors": 4096, "blocksDamaged": 2, "blocksMissing": 1,
        "processesWithoutEnd": 3, "complete": False}
LOSS_SHOWN = ["events seen 1,000", "in the trace 900", "lost 100 (dropped 60, to write errors 40)",
              "bytes lost to write errors 4,096", "blocks damaged 2, missing 1", "processes without an end marker 3",
              "ProxySteps not analysed 5"]


def check_loss(chrome, work, dump, summary, p):
    """The header's loss line: from summary.json's loss object when it has one, else the processes' counters."""
    if "loss" not in summary:
        check(p.loss and p.loss[0] == "processCounters" and "no loss figures" in p.loss[1],
              "without a loss object the header does not say where its figures come from: %s" % (p.loss,))
    page = os.path.join(dump, "report.html")
    with open(page, encoding="utf-8") as f:
        text = f.read()
    data = json.dumps(dict(summary, loss=LOSS)).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    at = text.index('id="ncclscope-summary">') + len('id="ncclscope-summary">')
    end = text.index("</script>", at)
    lossy = os.path.join(dump, "report-loss.html")
    with open(lossy, "w", encoding="utf-8") as f:
        f.write(text[:at] + data + text[end:])
    q, _, _ = load(chrome, work, lossy)
    check(q.loss and q.loss[0] == "loss", "with a loss object the header does not show it: %s" % (q.loss,))
    missing = [w for w in LOSS_SHOWN if w not in q.loss[1]]
    check(not missing, "the header's loss line lacks %s: %r" % (missing, q.loss[1]))
    check(any("10.0 % lost" in t for t in q.tiles), "no tile says 10.0 %% lost: %s" % q.tiles)
    print("loss line: %s" % q.loss[1])


def check_ranks8(chrome, work, shot):
    dump = os.path.join(work, "dump")
    shutil.rmtree(dump, ignore_errors=True)
    os.makedirs(dump)
    # the default job on this machine's own host, the hang on two simulated hosts (their own names: a
    # simulated host's clock offset comes from the seed, and one host name must mean one clock)
    simulate(dump, ["--scenario", "default", "--iters", "2", "--seed", "1"], False)
    hang = ["--scenario", "hang", "--seed", "3", "--hang-timeout-ms", "5000"]
    if not simulate(dump, hang, True, True):
        print("note: no namespaces for simulated hosts here: the hang runs on this host too")
        simulate(dump, hang, False, True)
    summary, p, flags, url = report_and_load(chrome, work, dump)
    m = p.marks
    check(m["hang"] == 8 and m["links"] > 0 and m["time"] > 4 and m["lateness"] >= 8,
          "the dump lacks what the page must show (hang 8 ranks, links, sizes, lateness): %s" % m)
    check(all(int(mx["data-block"]) == 1 for mx in p.matrices), "8 ranks drawn in blocks")
    check(any(t.strip() == "world" for _, t in p.comm_cells), "the communicator table does not name 'world': %s" % p.comm_cells)
    screenshot(flags, url, shot, 3600)


def check_ranks1024(chrome, work, shot):
    dump = os.path.join(work, "dump")
    shutil.rmtree(dump, ignore_errors=True)
    os.makedirs(dump)
    rc, out, err = run([os.environ["GEN_HTML_JOB"], dump, "1024"])
    check(rc == 0, "gen_html_job exited %d: %s" % (rc, err))
    summary, p, flags, url = report_and_load(chrome, work, dump)
    world = [c for c in summary["lateness"] if c["nranks"] == 1024]
    check(world and world[0]["outliers"] == [341] and p.marks["lateness.stragglers"] == 1,
          "the straggler (rank 341) is not named: %s" % [c["outliers"] for c in summary["lateness"]])
    slow = [c for c in p.links if float(c["data-gbs"]) < 7]
    check(len(slow) == 1 and (slow[0]["data-rank"], slow[0]["data-peer"]) == ("511", "512"),
          "the slow link 511 -> 512 is not the one slow cell: %s" % slow)
    check(all(int(mx["data-block"]) == 16 for mx in p.matrices), "1,024 ranks not drawn in blocks of 16")
    # three "AllReduce 1024" rows, one per communicator, under three headings
    ar = [a for a, _ in p.rows if a["data-func"] == "AllReduce" and a["data-bytes"] == "1024"]
    check(len({a["data-comm"] for a in ar}) == 3, "AllReduce 1024 rows: %s" % ar)
    heads = " | ".join(t for _, t in p.headings)
    for name, n in (("world", 1024), ("dp0", 512), ("dp1", 512)):
        check("%s · %d ranks" % (name, n) in heads, "no heading '%s · %d ranks': %s" % (name, n, heads))
    check_loss(chrome, work, dump, summary, p)
    screenshot(flags, url, shot, 3600)


def check_names(chrome, work, shot):
    del shot
    # a synthetic job: hostile host and communicator names
    dump = os.path.join(work, "dump")
    shutil.rmtree(dump, ignore_errors=True)
    os.makedirs(dump)
    rc, out, err = run([os.environ["GEN_HTML_JOB"], dump, "16", "hostile"])
    check(rc == 0, "gen_html_job exited %d: %s" % (rc, err))
    summary, p, _, _ = report_and_load(chrome, work, dump)
    names = {c["commId"]: c["name"] for c in summary["lateness"]}
    check(any(HOSTILE in n for n in names.values()) and any(HOSTILE in h["host"] for h in summary["hosts"]),
          "the hostile names are not in summary.json: %s %s" % (names, [h["host"] for h in summary["hosts"]]))
    shown = {c: t for c, t in p.comm_cells}
    for commid, name in names.items():
        check(shown.get(commid) == name, "communicator %s shown as %r, named %r" % (commid, shown.get(commid), name))
    check(p.svgs >= 1 and p.canvases >= 3, "%d svg, %d canvas: the charts were not drawn" % (p.svgs, p.canvases))
    print("hostile names (synthetic): %d svg, %d canvas, names shown as text" % (p.svgs, p.canvases))
    # the simulator with the plugin under a hostile host name (a UTS namespace: root only)
    if os.geteuid() != 0 or not shutil.which("unshare"):
        print("note: not root or no unshare: the simulator run under a hostile host name is left out")
        return
    dump2 = os.path.join(work, "dump-sim")
    shutil.rmtree(dump2, ignore_errors=True)
    os.makedirs(dump2)
    rc, _, err = run(["unshare", "-u", "true"])
    if rc != 0:
        print("note: unshare -u failed (%s): the simulator run under a hostile host name is left out" % err.strip())
        return
    # the name travels in the environment, the simulator's arguments after it
    os.environ["HOSTILE_NAME"] = HOSTILE
    sh = 'printf "%s" "$HOSTILE_NAME" >/proc/sys/kernel/hostname && exec "$@"'
    simulate(dump2, ["--scenario", "default", "--iters", "2", "--seed", "1"], False,
             prefix=("unshare", "-u", "sh", "-c", sh, "sh"))
    summary, p, _, _ = report_and_load(chrome, work, dump2)
    check([h["host"] for h in summary["hosts"]] == [HOSTILE], "the simulated job's hosts: %s" % summary["hosts"])
    check(p.svgs >= 1 and p.canvases >= 3, "%d svg, %d canvas: the charts were not drawn" % (p.svgs, p.canvases))
    print("hostile host name (simulator, unshare -u): %d svg, %d canvas" % (p.svgs, p.canvases))


def check_v7(chrome, work, shot):
    """NCCL 2.31: a rank posting another count (a mismatch), kernel phases and userTags, each drawn."""
    dump = os.path.join(work, "dump")
    shutil.rmtree(dump, ignore_errors=True)
    os.makedirs(dump)
    simulate(dump, ["--nccl", "2.31", "--user-tags", "3", "--scenario", "mismatch_count", "--seed", "1",
                    "--hang-timeout-ms", "500", "--fast"], False)
    summary, p, flags, url = report_and_load(chrome, work, dump)
    odd = [(c["commId"], r["rank"]) for c in summary["mismatches"] for r in c["ranks"]]
    check(odd and summary["kernelPhases"] and summary["tags"],
          "the run lacks a mismatch, kernel phases or tags: %s %d %d" % (odd, len(summary["kernelPhases"]), len(summary["tags"])))
    shown = [(r[0]["data-comm"], int(r[0]["data-rank"])) for r in p.other_rows["mismatches"] if "data-rank" in r[0]]
    check(shown == odd, "the mismatch table names %s, summary.json %s" % (shown, odd))
    tile = next((t for t in p.tiles if "Mismatches" in t), "")
    check(all(("rank %d" % r) in tile for _, r in odd), "the Mismatches tile does not name rank(s) %s: %r" % (odd, tile))
    rows = {(r[0]["data-comm"], r[0]["data-tag"]): {c[0]["data-key"]: c[0]["data-v"] for c in r[1] if "data-key" in c[0]}
            for r in p.other_rows["tags"]}
    want = {(t["commId"], t["tag"]): {k: str(t[k]) for k in ("ranks", "ops", "bytes", "timedOps")} for t in summary["tags"]}
    got = {k: {kk: vv for kk, vv in v.items() if kk != "totalTimeUs"} for k, v in rows.items()}
    check(got == want, "the tags table differs from summary.json's tags:\npage %s\nsummary.json %s" %
          (sorted(got.items())[:4], sorted(want.items())[:4]))
    for t in summary["tags"]:
        v = float(rows[(t["commId"], t["tag"])]["totalTimeUs"])
        check(abs(v - t["totalTimeUs"]) <= 1e-9 * max(1.0, abs(v)), "tag %s: time %s, summary.json %s" % (t["tag"], v, t["totalTimeUs"]))
    print("v7: mismatch rank(s) %s in the tile and the table; %d phase rows; %d tag rows equal to summary.json's" %
          (odd, p.marks["phases"], len(rows)))
    screenshot(flags, url, shot, 3000)


CHECKS = {"ranks8": check_ranks8, "ranks1024": check_ranks1024, "names": check_names, "v7": check_v7}


def main():
    if len(sys.argv) not in (3, 4) or sys.argv[1] not in CHECKS:
        print(__doc__)
        return 2
    work = os.path.abspath(sys.argv[2])
    os.makedirs(work, exist_ok=True)
    shot = sys.argv[3] if len(sys.argv) == 4 else os.path.join(work, "report.png")
    chrome = browser()
    if not chrome:
        print("SKIP: no chromium on PATH (Debian's chromium package; .ci/deps.sh installs it)")
        return 77
    return outcome(CHECKS[sys.argv[1]], chrome, work, shot)


if __name__ == "__main__":
    sys.exit(main())
