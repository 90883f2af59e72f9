#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every NCCLSCOPE_* variable the code reads is in the one list of known
names (src/config/names.c), or setting it would draw an "unknown variable"
warning; and every name in the list is read somewhere (no stale entry).

usage: check_config_names.py REPO"""
import os
import re
import sys

REPO = sys.argv[1]
NAME = re.compile(r'"(NCCLSCOPE_[A-Z0-9_]+)"')
TABLE = os.path.join(REPO, "src", "config", "names.c")


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
                    for n in NAME.findall(fh.read()):
                        found.setdefault(n, os.path.relpath(path, root))
    return found


def main():
    with open(TABLE) as fh:
        table = set(NAME.findall(fh.read()))
    used = literals(REPO)
    missing = sorted(set(used) - table)
    stale = sorted(table - set(used))
    for n in missing:
        print("FAIL %s (read in %s) is not in src/config/names.c: setting it would warn 'not a variable ncclscope "
              "knows'" % (n, used[n]))
    for n in stale:
        print("FAIL %s is in src/config/names.c but nothing reads it" % n)
    if missing or stale:
        sys.exit(1)
    print("ok: %d variables, all in the list" % len(table))


main()
