#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every NCCLSCOPE_* variable the code reads by name is a row of the one
table (include/ncclscope/config_vars.def), or setting it would draw an
"unknown variable" warning; and every row that the plugin does not read
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
    if len(table) < 30:
        print("FAIL only %d rows found in %s" % (len(table), TABLE))
        sys.exit(1)
    if missing or stale:
        sys.exit(1)
    print("ok: %d variables, all in the list" % len(table))


main()
