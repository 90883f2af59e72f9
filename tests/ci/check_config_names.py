#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every NCCLSCOPE_* variable the code reads by name is a row of the one
table (include/ncclscope/config_vars.def), or setting it would draw an
"unknown variable" warning; every NCCLSCOPE_* name the documents, man
pages, alert rules and dashboard tell users about is a row (or a build
option, or a variable of the test scripts); and every row that the plugin does not read
through the table (an NS_CONFIG_CLI row: the ncclscope command reads it) is
read somewhere (no stale row): by name, or by its NS_CFG_ index.

usage: check_config_names.py REPO"""
import os
import re
import sys

REPO = sys.argv[1]
NAME = re.compile(r'"(NCCLSCOPE_[A-Z0-9_]+)"|\bNS_CFG_(NCCLSCOPE_[A-Z0-9_]+)')
TABLE = os.path.join(REPO, "include", "ncclscope", "config_vars.def")
ROW = re.compile(r"^NS_CONFIG_(NUM|OWN|CLI)\((NCCLSCOPE_[A-Z0-9_]+), *(\w+)", re.M)


def literals(root):
    found = {}
    for d in ("src", "tools", "sim"):
        for dirpath, _, files in os.walk(os.path.join(root, d)):
            for f in files:
                if not f.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, f)
                if path == TABLE:
                    continue
                with open(path, errors="replace") as fh:
                    for quoted, index in NAME.findall(fh.read()):
                        found.setdefault(quoted or index, os.path.relpath(path, root))
    return found


MENTION = re.compile(r"NCCLSCOPE_[A-Z0-9_]+")
# Where users read variable names: a name there that is no row sends them to a variable nothing reads.
DOCUMENTS = ("README.md", "CONTRIBUTING.md", "docs", "man", "deploy", os.path.join("tests", "ops"))


def text_files(root, rel):
    path = os.path.join(root, rel)
    if os.path.isfile(path):
        yield path
    for dirpath, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if d != "node_modules"]
        for f in files:
            if f.endswith((".md", ".in", ".yml", ".yaml", ".json", ".txt")):
                yield os.path.join(dirpath, f)


def other_names(root):
    """NCCLSCOPE_* names that are not environment variables of ncclscope: the build's options (CMake) and what the
    test and CI scripts read."""
    names = set()
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in ("node_modules", ".git") and not d.startswith("build")]
        for f in files:
            if f == "CMakeLists.txt" or f.endswith(".cmake") or (dirpath.startswith(os.path.join(root, ".ci")) or
                                                                 (os.sep + "tests" in dirpath and f.endswith((".sh", ".py")))):
                with open(os.path.join(dirpath, f), errors="replace") as fh:
                    names.update(MENTION.findall(fh.read()))
    return names


def documented(root, table):
    """{name: file} of names the documents mention that are no row, nor a build option or test variable; a sentence
    that shows a misspelt name being refused ("... is not a variable") may name one."""
    allowed = other_names(root)
    found = {}
    for rel in DOCUMENTS:
        for path in text_files(root, rel):
            with open(path, errors="replace") as fh:
                text = fh.read()
            for m in MENTION.finditer(text):
                n = m.group(0)
                if n in table or n in allowed or text[m.end():m.end() + 20].startswith(" is not a variable"):
                    continue
                found.setdefault(n, os.path.relpath(path, root))
    return found


def main():
    with open(TABLE) as fh:
        rows = ROW.findall(fh.read())
    table = {name for _, name, _ in rows}
    by_name = {name for macro, name, _ in rows if macro == "CLI"}
    used = literals(REPO)
    missing = sorted(set(used) - table)
    stale = sorted(by_name - set(used))
    for n in missing:
        print("FAIL %s (read in %s) is not in include/ncclscope/config_vars.def: setting it would warn 'not a "
              "variable ncclscope knows'" % (n, used[n]))
    for n in stale:
        print("FAIL %s is a cli row of include/ncclscope/config_vars.def but nothing reads it" % n)
    unknown = documented(REPO, table)
    for n, where in sorted(unknown.items()):
        print("FAIL %s (in %s) is no variable of include/ncclscope/config_vars.def: nothing reads it" % (n, where))
    if len(table) < 30:
        print("FAIL only %d rows found in %s" % (len(table), TABLE))
        sys.exit(1)
    if missing or stale or unknown:
        sys.exit(1)
    print("ok: %d variables, all in the list" % len(table))


main()
