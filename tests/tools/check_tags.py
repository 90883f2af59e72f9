#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Operations by userTag (NCCL 2.31+, profiler v7) against the simulator's
truth: in `ncclscope report` (summary.json "tags", summary.txt's table), in
the plugin's own summaries, and in the live metrics with their bounded `tag`
label.

usage: check_tags.py NCCLSCOPE SIM PLUGIN WORKDIR

1. `--nccl 2.31 --user-tags 300`, two processes of two ranks: each
   communicator's calls carry 300 tags, past the 256 a table keeps. Every
   row of report's and each plugin summary's table must count the truth's
   tagged Collectives and P2ps of its (communicator, tag) exactly, the
   `other` row the rest; the metrics (NCCLSCOPE_TOP_TAGS=4) at most 5 tag
   series a communicator rank and family, summing to the truth's count.
2. 10,000 distinct tags in one rank (of 13,000: its calls are collectives, a fifth of the
   tags go to point-to-point calls it never makes): the series stay within the budget, the
   tag series within NCCLSCOPE_TOP_TAGS + 1, the report's rows within 257.
3. A budget of 60 series: the tag series are given up before
   ncclscope_ops_total (the dashboard's), which stays whole.
Exits 1 with the first problem."""
import collections
import glob
import json
import os
import re
import shutil
import subprocess
import sys

KEPT = 256  # NS_TAGS_MAX


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def run(cmd, env=None):
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=150)
    check(r.returncode == 0, "%s: exit %d\n%s" % (" ".join(cmd[:3]), r.returncode, r.stderr[-2000:]))
    return r


def simulate(a, name, args, env_extra=None):
    work = os.path.join(a["work"], name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "prom"))
    dump, truth = os.path.join(work, "dump"), os.path.join(work, "truth.jsonl")
    env = dict(os.environ, NCCLSCOPE_DUMP_DIR=dump, NCCLSCOPE_NO_CUDA="1", NCCLSCOPE_PROM_DIR=os.path.join(work, "prom"),
               NCCLSCOPE_PROM_KEEP="1", **(env_extra or {}))
    run([a["sim"], "--plugin", a["plugin"], "--nccl", "2.31", "--fast", "--truth", truth] + args, env=env)
    tagged = collections.Counter()  # (pid, comm, rank, tag) -> tagged calls
    with open(truth) as f:
        for line in f:
            t = json.loads(line)
            if t.get("kind") == "start" and t["type"] in ("Coll", "P2p") and not t["handle_null"] and t.get("tag"):
                tagged[(t["pid"], t["comm"], t["rank"], t["tag"])] += 1
    check(tagged, "%s: the truth has no tagged call" % name)
    return work, dump, tagged


def by(counter, keyfn):
    out = collections.Counter()
    for k, v in counter.items():
        out[keyfn(k)] += v
    return out


def check_table(rows, want, what):
    """rows: summary.json "tags"; want: (comm, tag) -> calls. Each kept row exact, other the rest."""
    per_comm = collections.defaultdict(list)
    for r in rows:
        per_comm[int(r["commId"], 16)].append(r)
    comms = {c for c, _ in want}
    check(set(per_comm) == comms, "%s: communicators %s, the truth's %s" % (what, sorted(per_comm), sorted(comms)))
    folded = 0
    for c, rs in per_comm.items():
        truth_tags = {t: n for (cc, t), n in want.items() if cc == c}
        kept = [r for r in rs if r["tag"] != "other"]
        other = [r for r in rs if r["tag"] == "other"]
        check(len(kept) == min(KEPT, len(truth_tags)) and len(other) == (len(truth_tags) > KEPT),
              "%s: comm %x has %d tag rows and %d other, the truth %d tags" % (what, c, len(kept), len(other),
                                                                             len(truth_tags)))
        for r in kept:
            check(r["ops"] == truth_tags.get(int(r["tag"])),
                  "%s: comm %x tag %s: %d ops, the truth %s" % (what, c, r["tag"], r["ops"], truth_tags.get(int(r["tag"]))))
            check(r["timedOps"] <= r["ops"] and (r["timedOps"] == 0) == (r["totalTimeUs"] == 0),
                  "%s: comm %x tag %s: %d timed of %d, %s us" % (what, c, r["tag"], r["timedOps"], r["ops"], r["totalTimeUs"]))
        rest = sum(truth_tags.values()) - sum(r["ops"] for r in kept)
        if other:
            check(other[0]["ops"] == rest, "%s: comm %x other: %d ops, the truth %d" % (what, c, other[0]["ops"], rest))
            folded += 1
    return folded


PROM_LINE = re.compile(r'^([a-z_]+)\{([^}]*)\} (\S+)$')


def prom_series(work):
    """(family, labels dict, value) of every textfile sample."""
    out = []
    for path in glob.glob(os.path.join(work, "prom", "*.prom")):
        with open(path) as f:
            for line in f:
                m = PROM_LINE.match(line.strip())
                if m:
                    labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2)))
                    out.append((m.group(1), labels, float(m.group(3))))
    check(out, "%s: no textfile samples" % work)
    return out


def check_metrics(series, tagged, top, what):
    want = by(tagged, lambda k: (int(k[1], 16), k[2]))  # (comm, rank) -> tagged calls
    got = collections.Counter()
    per_rank = collections.defaultdict(lambda: collections.defaultdict(set))
    for fam, labels, value in series:
        if fam in ("ncclscope_tag_ops_total", "ncclscope_tag_seconds_total"):
            key = (int(labels["comm"], 16), int(labels["rank"]))
            per_rank[key][fam].add(labels["tag"])
            if fam == "ncclscope_tag_ops_total":
                got[key] += value
                if labels["tag"] != "other":
                    truth = sum(n for (p, c, r, t), n in tagged.items()
                                if (int(c, 16), r) == key and t == int(labels["tag"]))
                    check(0 < value <= truth, "%s: %s tag %s counts %d, the truth %d" % (what, key, labels["tag"], value,
                                                                                        truth))
    check(got == want, "%s: ncclscope_tag_ops_total by (comm, rank) %s, the truth %s" % (what, dict(got), dict(want)))
    for key, fams in per_rank.items():
        for fam, tags in fams.items():
            check(len(tags) <= top + 1, "%s: %s has %d %s series (NCCLSCOPE_TOP_TAGS %d)" % (what, key, len(tags), fam, top))
    return max(len(t) for f in per_rank.values() for t in f.values())


def gauge(series, fam):
    return sum(v for f, _, v in series if f == fam)


def main():
    if len(sys.argv) != 5:
        fail(__doc__)
    a = dict(zip(("ncclscope", "sim", "plugin", "work"), sys.argv[1:]))

    # 1. 300 tags a communicator, two processes
    work, dump, tagged = simulate(a, "tags300", ["--user-tags", "300", "--iters", "20", "--procs", "2"],
                                  {"NCCLSCOPE_TOP_TAGS": "4"})
    run([a["ncclscope"], "report", dump, "-q"])
    with open(os.path.join(dump, "summary.json")) as f:
        rows = json.load(f)["tags"]
    folded = check_table(rows, by(tagged, lambda k: (int(k[1], 16), k[3])), "report")
    check(folded >= 1, "report: no communicator past %d tags (the run is too short to check the fold)" % KEPT)
    text = open(os.path.join(dump, "summary.txt")).read().splitlines()
    check(any(l.startswith("# operations by userTag") for l in text), "summary.txt has no userTag table")
    check(all(len(l) <= 120 for l in text), "summary.txt has lines over 120 columns")
    own = glob.glob(os.path.join(dump, "summary-*.json"))
    check(len(own) == 2, "%d plugin summaries, want 2" % len(own))
    for path in own:
        pid = int(re.search(r"-(\d+)\.json$", path).group(1))
        with open(path) as f:
            check_table(json.load(f)["tags"], by({k: v for k, v in tagged.items() if k[0] == pid},
                                                 lambda k: (int(k[1], 16), k[3])), "plugin summary of pid %d" % pid)
    widest = check_metrics(prom_series(work), tagged, 4, "metrics")
    print("300 tags: report and %d plugin summaries exact (%d communicator(s) folded past %d), metrics at most %d tag "
          "series a communicator rank" % (len(own), folded, KEPT, widest))

    # 2. 10,000 distinct tags
    work, dump, tagged = simulate(a, "tags10000", ["--user-tags", "13000", "--iters", "700", "--procs", "1",
                                                   "--ranks-per-proc", "1"])
    ntags = len({k[3] for k in tagged})
    check(ntags >= 10000, "the run has %d distinct tags, want 10,000" % ntags)
    series = prom_series(work)
    widest = check_metrics(series, tagged, 8, "10,000 tags")
    total, refused = gauge(series, "ncclscope_series"), gauge(series, "ncclscope_series_refused")
    check(total <= 4000 and refused == 0, "10,000 tags: %d series, %d refused (budget 4000)" % (total, refused))
    run([a["ncclscope"], "report", dump, "-q"])
    with open(os.path.join(dump, "summary.json")) as f:
        check_table(json.load(f)["tags"], by(tagged, lambda k: (int(k[1], 16), k[3])), "10,000 tags: report")
    print("10,000 tags: %d series in all, at most %d tag series a communicator rank and family" % (total, widest))

    # 3. a budget that cannot hold everything: the tag series go first
    work, dump, tagged = simulate(a, "budget", ["--user-tags", "5", "--iters", "10"], {"NCCLSCOPE_MAX_SERIES": "60"})
    series = prom_series(work)
    total, refused = gauge(series, "ncclscope_series"), gauge(series, "ncclscope_series_refused")
    fams = collections.Counter(f for f, _, _ in series)
    check(total <= 60 and refused > 0, "budget 60: %d series, %d refused" % (total, refused))
    check(fams["ncclscope_ops_total"] > 0 and not fams["ncclscope_tag_ops_total"] and not fams["ncclscope_tag_seconds_total"],
          "budget 60: ops_total %d series, tag series %d + %d (the tag series must go first)" %
          (fams["ncclscope_ops_total"], fams["ncclscope_tag_ops_total"], fams["ncclscope_tag_seconds_total"]))
    print("budget 60: %d series, %d refused; ncclscope_ops_total whole, no tag series" % (total, refused))


if __name__ == "__main__":
    main()
