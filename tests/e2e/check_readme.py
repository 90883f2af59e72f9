#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The README's commands, as printed.

usage: check_readme.py README.md WORKDIR
  env: NCCLSCOPE (the built ncclscope; its directory is the build directory)

Every fenced block whose info string is `sh test` is run with `bash -e` in a
fresh directory that holds `build`, a link to the build directory, as the
repository root does after the build (the README's commands say
./build/...). When the next fenced block is `text expect`, the command's
output (stdout and stderr) must show its lines:
  - consecutive expected lines match consecutive output lines; a line `...`
    alone skips any number of output lines (the first line may match anywhere);
  - within a line, runs of spaces match any run of spaces, `...` matches any
    text, and a decimal number with a fraction (12.34) any such number: times
    and bandwidths vary from run to run; everything else, integers included,
    must be as printed.
A block that needs what the machine does not give (namespaces for simulated
hosts) is skipped, and the test exits 77 with the reason. Exit 0 pass, 1 fail.
"""
import os
import re
import subprocess
import sys
import tempfile

NO_NAMESPACES = ("cannot create simulated hosts", "unshare(CLONE_NEWTIME)", "cannot set the offsets")


def blocks(path):
    """[(info, text, line number)] of every fenced block."""
    out, cur, info, start = [], None, None, 0
    for n, line in enumerate(open(path), 1):
        if cur is None and line.startswith("```"):
            cur, info, start = [], line[3:].strip(), n
        elif cur is not None and line.rstrip() == "```":
            out.append((info, "".join(cur), start))
            cur = None
        elif cur is not None:
            cur.append(line)
    return out


def line_pattern(line):
    parts = []
    for tok in line.strip().split():
        if re.fullmatch(r"\d+\.\d+", tok):
            parts.append(r"\d+\.\d+")
        else:
            parts.append(".*".join(re.escape(p) for p in tok.split("...")))
    return re.compile(r"\s*" + r"\s+".join(parts) + r"\s*")


def matches(expect, output):
    """None when output shows expect, else what is missing."""
    out = [l.rstrip() for l in output.splitlines()]
    exp = expect.splitlines()
    # groups of consecutive lines, separated by `...` lines
    groups, cur = [], []
    for l in exp:
        if l.strip() == "...":
            if cur:
                groups.append(cur)
            cur = []
        else:
            cur.append(l)
    if cur:
        groups.append(cur)
    at = 0
    for g in groups:
        pats = [line_pattern(l) for l in g]
        found = None
        for i in range(at, len(out) - len(g) + 1):
            if all(p.fullmatch(out[i + k]) for k, p in enumerate(pats)):
                found = i
                break
        if found is None:
            # say which line of the group is the first that no output line after `at` matches in place
            best = 0
            for i in range(at, len(out)):
                k = 0
                while k < len(g) and i + k < len(out) and pats[k].fullmatch(out[i + k]):
                    k += 1
                best = max(best, k)
            return "expected, in order after output line %d:\n  %s\n(first %d line(s) of this group matched; the " \
                   "next did not)" % (at, "\n  ".join(g), best)
        at = found + len(g)
    return None


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    readme, work = sys.argv[1], sys.argv[2]
    build = os.path.dirname(os.path.abspath(os.environ["NCCLSCOPE"]))
    os.makedirs(work, exist_ok=True)
    bl = blocks(readme)
    failures, skipped, ran = [], [], 0
    for i, (info, text, line) in enumerate(bl):
        if info != "sh test":
            continue
        d = tempfile.mkdtemp(prefix="readme-", dir=work)
        os.symlink(build, os.path.join(d, "build"))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("NCCLSCOPE", "NCCL_"))}
        p = subprocess.run(["bash", "-e", "-c", text], cwd=d, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=600)
        out = p.stdout.decode(errors="replace")
        with open(os.path.join(d, "output.txt"), "w") as f:
            f.write(out)
        ran += 1
        where = "README.md:%d" % line
        if p.returncode != 0 and any(w in out for w in NO_NAMESPACES):
            skipped.append("%s: the machine gives no namespaces for simulated hosts" % where)
            continue
        if p.returncode != 0:
            failures.append("%s: exit status %d:\n%s" % (where, p.returncode, out[-2000:]))
            continue
        nxt = bl[i + 1] if i + 1 < len(bl) else None
        if nxt and nxt[0] == "text expect":
            why = matches(nxt[1], out)
            if why:
                failures.append("%s: the output (%s) does not show README.md:%d's:\n%s"
                                % (where, os.path.join(d, "output.txt"), nxt[2], why))
                continue
        print("PASS %s (%d lines of output%s)" % (where, len(out.splitlines()),
                                                  ", compared" if nxt and nxt[0] == "text expect" else ""))
    if not ran:
        failures.append("no `sh test` block in %s" % readme)
    for f in failures:
        print("FAIL " + f)
    if failures:
        return 1
    if skipped:
        print("SKIP " + "; ".join(skipped))
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
