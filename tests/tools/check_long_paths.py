#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A dump directory whose path is 4,088 characters long (DIR/NAME then
exceeds PATH_MAX): the plugin writes its trace there through the simulator,
and `export` and `report` find and read it as they do in a short directory.
An entry of the directory that cannot be examined (a dangling link named
*.nstrace) is named on stderr, not skipped silently.

Usage: check_long_paths.py NCCLSCOPE SIM PLUGIN WORK_DIR
"""
import os
import shutil
import subprocess
import sys

CLI, SIM, PLUGIN, WORK = sys.argv[1:5]
FAILS = []


def check(cond, what, got=None, want=None):
    if not cond:
        FAILS.append("FAIL %s: got %r want %r" % (what, got, want))
        print(FAILS[-1])


def deep_dir(base, length):
    """Creates base/ddd.../ddd... of exactly `length` characters, one component at a time (mkdir -p cannot)."""
    os.makedirs(base)
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    path = base
    while len(path) < length:
        left = length - len(path)  # each component takes "/" + its name; never leave 1 (a "/" alone)
        k = min(200, left - 1)
        if left - (k + 1) == 1:
            k -= 1
        name = "d" * k
        os.mkdir(name, dir_fd=fd)
        sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = sub
        path += "/" + name
    return path, fd


def sim(dump):
    env = dict(os.environ, NCCLSCOPE_DUMP_DIR=dump)
    p = subprocess.run([SIM, "--plugin", PLUGIN, "--nccl", "ideal", "--procs", "2", "--iters", "2"], env=env,
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, "simulator into %d-character directory" % len(dump), (p.returncode, p.stderr[-300:]), 0)


def run(*args):
    return subprocess.run([CLI] + list(args), capture_output=True, text=True, timeout=120)


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    short = os.path.join(WORK, "short")
    os.makedirs(short)
    sim(short)
    deep, fd = deep_dir(os.path.join(WORK, "deep"), 4088)
    check(len(deep) == 4088, "the deep directory's length", len(deep), 4088)
    sim(deep)
    traces = [n for n in os.listdir(fd) if n.endswith(".nstrace")]
    check(len(traces) == 2, "the plugin wrote its traces in the deep directory", traces, "2 traces")

    counts = {}
    for name, d in (("short", short), ("deep", deep)):
        out = os.path.join(WORK, name + ".jsonl")
        p = run("export", d, "-o", out)
        check(p.returncode == 0, "export %s: exit 0" % name, (p.returncode, p.stderr[-300:]), 0)
        counts[name] = sum(1 for _ in open(out)) if os.path.exists(out) else 0
        p = run("report", d, "-q")
        check(p.returncode == 0, "report %s: exit 0" % name, (p.returncode, p.stderr[-300:]), 0)
    check({"summary.txt", "summary.json", "report.html"} <= set(os.listdir(fd)), "the report's files in the deep "
          "directory", sorted(os.listdir(fd)), "summary.txt, summary.json, report.html")
    check(counts["short"] > 0 and counts["deep"] == counts["short"],
          "the deep directory's export has every event", counts, "equal, > 0")

    # an entry that cannot be examined: named, the rest read
    os.symlink("nowhere.nstrace", "dangling.nstrace", dir_fd=fd)
    p = run("export", deep, "-o", os.path.join(WORK, "deep2.jsonl"))
    check(p.returncode == 0, "export with a dangling entry: exit 0", (p.returncode, p.stderr[-300:]), 0)
    check("dangling.nstrace (No such file or directory)" in p.stderr and "cannot examine" in p.stderr,
          "the dangling entry is named", p.stderr[-300:], "cannot examine .../dangling.nstrace")
    os.close(fd)

    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        sys.exit(1)
    print("ok: %d events from a %d-character directory, as from a short one" % (counts["deep"], len(deep)))


main()
