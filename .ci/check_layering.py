#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The include layering of ncclscope, checked against docs/design.md.

usage: .ci/check_layering.py [REPO]

Reads the "Layers" table of docs/design.md (directory | owns | may include)
and every C source and header under the directories it lists (src/, include/,
tools/, sim/, bench/; tests/ may include anything). Each `#include "..."` is
resolved the way the build resolves it: next to the including file, else
under include/, else under src/. An include is allowed when it stays in the
including file's directory or reaches a directory that the including
directory's row names. Also fails when the table itself has a cycle (then it
is no layering), names a directory that does not exist, or when a checked
tree holds a directory the table does not list. Prints every violation as
FILE:LINE and exits 1 on any; python3 stdlib only."""
import os
import re
import sys

CHECKED_ROOTS = ("src", "include", "tools", "sim", "bench")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
CODE_RE = re.compile(r"`([^`]+)`")


def read_table(design):
    """{directory: set of directories it may include} from the Layers table."""
    rows, in_layers = {}, False
    with open(design) as fh:
        for line in fh:
            if line.startswith("## "):
                in_layers = line.strip() == "## Layers"
                continue
            if not in_layers or not line.startswith("|"):
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 3 or not cells[0].startswith("`"):
                continue  # the header and the separator
            (directory,) = CODE_RE.findall(cells[0])
            rows[directory.rstrip("/")] = {d.rstrip("/") for d in CODE_RE.findall(cells[2])}
    return rows


def find_cycle(rows):
    state = {}

    def visit(node, path):
        state[node] = 1
        for nxt in sorted(rows.get(node, ())):
            if state.get(nxt) == 1:
                return path + [node, nxt]
            if nxt not in state:
                cycle = visit(nxt, path + [node])
                if cycle:
                    return cycle
        state[node] = 2
        return None

    for node in sorted(rows):
        if node not in state:
            cycle = visit(node, [])
            if cycle:
                return cycle
    return None


def owner(rows, path):
    """The table directory a repo-relative path belongs to (the longest match)."""
    best = None
    for d in rows:
        if path == d or path.startswith(d + "/"):
            if best is None or len(d) > len(best):
                best = d
    return best


def resolve(repo, including_dir, name):
    for base in (including_dir, "include", "src"):
        cand = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(repo, cand)):
            return cand
    return None


def main():
    repo = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    rows = read_table(os.path.join(repo, "docs", "design.md"))
    errors = []
    if not rows:
        errors.append("docs/design.md: no Layers table found")
    for d, allowed in sorted(rows.items()):
        for x in sorted({d} | allowed):
            if not os.path.isdir(os.path.join(repo, x)):
                errors.append("docs/design.md: Layers table names %s, which does not exist" % x)
    cycle = find_cycle(rows)
    if cycle:
        errors.append("docs/design.md: the Layers table has a cycle: %s" % " -> ".join(cycle))
    checked = includes = 0
    for root in CHECKED_ROOTS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(repo, root)):
            dirnames.sort()
            rel_dir = os.path.relpath(dirpath, repo)
            sources = sorted(f for f in filenames if f.endswith((".c", ".h")))
            if not sources:
                continue
            mine = owner(rows, rel_dir)
            if mine is None:
                errors.append("%s/: not in the Layers table of docs/design.md" % rel_dir)
                continue
            for f in sources:
                rel = os.path.join(rel_dir, f)
                checked += 1
                with open(os.path.join(repo, rel), errors="replace") as fh:
                    for lineno, line in enumerate(fh, 1):
                        m = INCLUDE_RE.match(line)
                        if not m:
                            continue
                        includes += 1
                        target = resolve(repo, rel_dir, m.group(1))
                        if target is None:
                            errors.append('%s:%d: #include "%s" resolves to no file' % (rel, lineno, m.group(1)))
                            continue
                        theirs = owner(rows, os.path.dirname(target))
                        if theirs == mine or theirs in rows[mine]:
                            continue
                        errors.append('%s:%d: #include "%s": %s may not include %s (docs/design.md, Layers)' %
                                      (rel, lineno, m.group(1), mine, theirs or os.path.dirname(target)))
    for e in errors:
        print(e)
    print("layering: %d files, %d includes, %d directories in the table: %s" %
          (checked, includes, len(rows), "FAILED" if errors else "ok"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
