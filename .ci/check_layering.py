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
 - an include in angle brackets that names a project header (the build
   would find it; this check would not have read it as the project's), an
   include through a macro (`#include NAME`: its target cannot be read
   here) and an include of a `.inc` file (project includes are headers and
   the one X-macro table, config_vars.def); `.inc` files are read too;
 - every `target_link_libraries` in a CMakeLists.txt of the checked trees
   (src/, tools/, sim/, bench/), its `${VARIABLES}` expanded from the
   `set()`s of those files: a target belongs to the layer of the directory
   that defines it, and each library of a layer that it links must be its
   own layer's or one that the layer's row names.
The build holds the same line (CMakeLists.txt: each layer's headers under a
root of their own, each library linked alone with --no-undefined); this
check names the row a violation breaks.
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
ANGLE_RE = re.compile(r"^\s*#\s*include\s*<([^>]+)>")
MACRO_INCLUDE_RE = re.compile(r"^\s*#\s*include\s+([A-Za-z_]\w*)")
SOURCE_EXTS = (".c", ".h", ".inc")
CODE_RE = re.compile(r"`([^`]+)`")
TARGET_RE = re.compile(r"\b(?:ns_library|ns_layer_headers|add_library|add_executable)\(\s*([\w.-]+)")
LINK_RE = re.compile(r"\btarget_link_libraries\(([^)]*)\)", re.S)
SET_RE = re.compile(r"\bset\(\s*(\w+)([^)]*)\)", re.S)
VAR_RE = re.compile(r"\$\{(\w+)\}")
LINK_KEYWORDS = {"PUBLIC", "PRIVATE", "INTERFACE", "CACHE", "INTERNAL", "STRING", "PARENT_SCOPE"}


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


def cmake_files(repo):
    """The CMakeLists.txt of the checked trees (tests/ may link anything)."""
    for root in CHECKED_ROOTS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(repo, root)):
            dirnames[:] = sorted(d for d in dirnames if d != "node_modules")
            if "CMakeLists.txt" in filenames:
                yield os.path.relpath(os.path.join(dirpath, "CMakeLists.txt"), repo)


def expand(words, variables, depth=0):
    """words with each ${VAR} replaced by the words some set() gave it (all of them: any may be the one)."""
    out = []
    for w in words:
        m = VAR_RE.fullmatch(w)
        if m and depth < 8:
            out.extend(expand(variables.get(m.group(1), []), variables, depth + 1))
        elif VAR_RE.search(w) and depth < 8:
            for name in VAR_RE.findall(w):
                out.extend(expand(variables.get(name, []), variables, depth + 1))
        else:
            out.append(w)
    return out


def check_links(repo, rows, errors):
    """Every target_link_libraries of the checked trees against the row of the linking target's layer."""
    texts, target_layer, variables, calls = {}, {}, {}, []
    for rel in cmake_files(repo):
        with open(os.path.join(repo, rel)) as fh:
            texts[rel] = re.sub(r"#[^\n]*", "", fh.read())
    for rel, text in texts.items():
        layer = owner(rows, os.path.dirname(rel))
        for m in TARGET_RE.finditer(text):
            target_layer.setdefault(m.group(1), layer)
        for m in SET_RE.finditer(text):
            variables.setdefault(m.group(1), []).extend(w for w in m.group(2).split() if w not in LINK_KEYWORDS)
    for rel, text in texts.items():
        for m in LINK_RE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            words = m.group(1).split()
            calls.append((rel, line, words[0], words[1:]))
    checked = 0
    for rel, line, target, libs in calls:
        mine = target_layer.get(target) or owner(rows, os.path.dirname(rel))
        if mine is None:
            continue  # a directory outside the table: said by the include check
        for lib in expand(libs, variables):
            theirs = target_layer.get(lib)
            if theirs is None:
                continue  # PUBLIC/PRIVATE, link options, system and third-party libraries
            checked += 1
            if theirs == mine or theirs in rows.get(mine, ()):
                continue
            errors.append("%s:%d: target_link_libraries(%s ... %s): %s may not link %s (docs/design.md, Layers: "
                          "%s may include %s)" % (rel, line, target, lib, mine, theirs, mine,
                                                  ", ".join(sorted(rows.get(mine, ()))) or "nothing"))
    return checked


# Components whose files include each other by their path from the
# component's root (its CMakeLists.txt makes that root an include directory).
COMPONENT_ROOTS = ("tools", "sim")


def resolve(repo, including_dir, name):
    top = including_dir.split("/")[0]
    for base in (including_dir,) + ((top,) if top in COMPONENT_ROOTS else ()) + ("include", "src"):
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
            dirnames[:] = [d for d in dirnames if d != "node_modules"]
            sources = sorted(f for f in filenames if f.endswith(SOURCE_EXTS))
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
                        angle = ANGLE_RE.match(line)
                        macro = MACRO_INCLUDE_RE.match(line)
                        if angle and resolve(repo, rel_dir, angle.group(1)):
                            errors.append("%s:%d: #include <%s> names a project header: write it in quotes, as "
                                          "the layering reads them" % (rel, lineno, angle.group(1)))
                        if macro:
                            errors.append("%s:%d: #include %s: an include through a macro, whose file this check "
                                          "cannot read: name the header" % (rel, lineno, macro.group(1)))
                        if not m:
                            continue
                        includes += 1
                        if m.group(1).endswith(".inc"):
                            errors.append('%s:%d: #include "%s": a .inc file; project includes are headers (.h) and '
                                          "the X-macro table config_vars.def" % (rel, lineno, m.group(1)))
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
