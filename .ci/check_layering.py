#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The layering of ncclscope, checked against docs/design.md.

usage: .ci/check_layering.py [REPO]

Reads the "Layers" table of docs/design.md (directory | owns | may include)
and its "Public headers" table (header | owning layer), then:
 - every C source and header under the directories the tables cover (src/,
   include/, tools/, sim/, bench/; tests/ may include anything). Each
   `#include "..."` is resolved the way the build resolves it: next to the
   including file, else under include/, else under src/. A header of
   include/ncclscope belongs to its owning layer, both as the target of an
   include and as an including file. An include is allowed when it stays in
   the including file's layer or reaches a layer that the layer's row names;
 - every `target_link_libraries` of a library that a CMakeLists.txt under
   src/ defines (ns_library): each ncclscope library it links must be its own
   directory's or one that the directory's row names.
Also fails when the table itself has a cycle (then it is no layering), names
a directory or header that does not exist, when a checked tree holds a
directory the table does not list, or a header of include/ncclscope has no
owner. Prints every violation (FILE:LINE, and what the table allows) and
exits 1 on any; python3 stdlib only."""
import os
import re
import sys

CHECKED_ROOTS = ("src", "include", "tools", "sim", "bench")
PUBLIC = "include/ncclscope"
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
CODE_RE = re.compile(r"`([^`]+)`")
NS_LIBRARY_RE = re.compile(r"\bns_library\(\s*(\w+)")
LINK_RE = re.compile(r"\btarget_link_libraries\(([^)]*)\)", re.S)


def read_tables(design):
    """({directory: set of directories it may include}, {public header: owning directory})."""
    rows, owners, section = {}, {}, None
    with open(design) as fh:
        for line in fh:
            if line.startswith("## "):
                section = line.strip()[3:]
                continue
            if section not in ("Layers", "Public headers") or not line.startswith("|"):
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 2 or not cells[0].startswith("`"):
                continue  # the header and the separator
            (first,) = CODE_RE.findall(cells[0])
            if section == "Layers" and len(cells) >= 3:
                rows[first.rstrip("/")] = {d.rstrip("/") for d in CODE_RE.findall(cells[2])}
            elif section == "Public headers":
                owner_cell = CODE_RE.findall(cells[1])
                owners[first] = owner_cell[0].rstrip("/") if owner_cell else None
    return rows, owners


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


def layer_of(rows, owners, path):
    """The layer a repo-relative file belongs to: its owner for a public header, else its directory's row."""
    if os.path.dirname(path) == PUBLIC:
        return owners.get(path)
    return owner(rows, os.path.dirname(path))


def check_links(repo, rows, errors):
    """Each src library's target_link_libraries against its directory's row."""
    lib_dir, calls = {}, []
    src = os.path.join(repo, "src")
    for d in sorted(os.listdir(src)):
        cm = os.path.join(src, d, "CMakeLists.txt")
        if not os.path.isfile(cm):
            continue
        with open(cm) as fh:
            text = fh.read()
        rel = os.path.relpath(cm, repo)
        for m in NS_LIBRARY_RE.finditer(text):
            lib_dir[m.group(1)] = "src/" + d
        for m in LINK_RE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            words = [w for w in re.sub(r"#[^\n]*", "", m.group(1)).split()]
            calls.append((rel, line, words[0], words[1:]))
    checked = 0
    for rel, line, target, libs in calls:
        mine = lib_dir.get(target)
        if mine is None:
            continue  # not a layer's library (the plugin itself, an interface bundle)
        for lib in libs:
            theirs = lib_dir.get(lib)
            if theirs is None:
                continue  # PUBLIC/PRIVATE, system and third-party libraries
            checked += 1
            if theirs == mine or theirs in rows.get(mine, ()):
                continue
            errors.append("%s:%d: target_link_libraries(%s ... %s): %s may not link %s (docs/design.md, Layers: "
                          "%s may include %s)" % (rel, line, target, lib, mine, theirs, mine,
                                                  ", ".join(sorted(rows.get(mine, ()))) or "nothing"))
    return checked


def resolve(repo, including_dir, name):
    for base in (including_dir, "include", "src"):
        cand = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(repo, cand)):
            return cand
    return None


def main():
    repo = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    rows, owners = read_tables(os.path.join(repo, "docs", "design.md"))
    errors = []
    if not rows:
        errors.append("docs/design.md: no Layers table found")
    for header, layer in sorted(owners.items()):
        if not os.path.isfile(os.path.join(repo, header)):
            errors.append("docs/design.md: Public headers table names %s, which does not exist" % header)
        if layer not in rows:
            errors.append("docs/design.md: Public headers table gives %s the owner %s, which is no row of Layers" %
                          (header, layer))
    public_dir = os.path.join(repo, PUBLIC)
    for f in sorted(os.listdir(public_dir)) if os.path.isdir(public_dir) else ():
        if f.endswith(".h") and os.path.join(PUBLIC, f) not in owners:
            errors.append("%s/%s: no owning layer in the Public headers table of docs/design.md" % (PUBLIC, f))
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
            if rel_dir != PUBLIC and owner(rows, rel_dir) is None:
                errors.append("%s/: not in the Layers table of docs/design.md" % rel_dir)
                continue
            for f in sources:
                rel = os.path.join(rel_dir, f)
                mine = layer_of(rows, owners, rel)
                if mine not in rows:
                    continue  # a public header without an owner: said above
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
                        theirs = layer_of(rows, owners, target)
                        if theirs == mine or theirs in rows[mine]:
                            continue
                        via = " (its owner)" if os.path.dirname(target) == PUBLIC else ""
                        errors.append('%s:%d: #include "%s": %s may not include %s%s (docs/design.md, Layers: '
                                      '%s may include %s)' %
                                      (rel, lineno, m.group(1), mine, theirs or os.path.dirname(target), via, mine,
                                       ", ".join(sorted(rows[mine])) or "nothing"))
    links = check_links(repo, rows, errors)
    for e in errors:
        print(e)
    print("layering: %d files, %d includes, %d links, %d directories and %d public headers in the tables: %s" %
          (checked, includes, links, len(rows), len(owners), "FAILED" if errors else "ok"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
