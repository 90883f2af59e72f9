#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""README.md's table of environment variables and man/ncclscope.7.in agree
with the table the build compiles (include/ncclscope/config_vars.def):
the same variables, the same defaults, and the ranges they state.

usage: check_config_docs.py PRINT_CONFIG_VARS REPO
PRINT_CONFIG_VARS prints the compiled table (print_config_vars.c)."""
import re
import subprocess
import sys

TOOL, REPO = sys.argv[1], sys.argv[2]
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL " + msg)


def number(text):
    return float(int(text, 16)) if text.lower().startswith("0x") else float(text)


def same_default(row, shown):
    """The default as documented (backticks gone) against the row's."""
    if row["kind"] == "own":
        return shown.startswith(row["def_text"])
    token = re.match(r"[0-9.x]+", shown)
    return bool(token) and number(token.group(0)) == row["def"]


def readme_rows():
    """{name: (default cell, meaning cell)} of README's "Environment variables" table."""
    rows, inside = {}, False
    with open(REPO + "/README.md") as fh:
        for line in fh:
            if line.startswith("## "):
                inside = line.strip() == "## Environment variables"
            m = re.match(r"^\| `(NCCLSCOPE_[A-Z0-9_]+)` \| (.*?) \| (.*) \|$", line.rstrip("\n")) if inside else None
            if m:
                rows[m.group(1)] = (m.group(2).replace("`", ""), m.group(3))
    return rows


def man_paragraphs():
    """{name: its .TP paragraph as plain text} of man/ncclscope.7.in's .B NCCLSCOPE_* entries."""
    paras, name = {}, None
    with open(REPO + "/man/ncclscope.7.in") as fh:
        for line in fh:
            line = line.rstrip("\n")
            if line.startswith((".TP", ".SS", ".SH", ".PP")):
                name = None
                continue
            m = re.match(r"^\.B (NCCLSCOPE_[A-Z0-9_]+)$", line)
            if m and name is None:
                name = m.group(1)
                paras[name] = ""
                continue
            if name:
                text = re.sub(r"^\.(B|BR|I|IR|RB)\s+", "", line).replace("\\-", "-").replace('"', "")
                paras[name] += " " + text
    return paras


def main():
    out = subprocess.run([TOOL], check=True, capture_output=True, text=True).stdout
    table = {}
    for line in out.splitlines():
        name, kind, d, lo, hi, def_text, cli = line.split("\t")
        table[name] = {"kind": kind, "def": float(d), "lo": float(lo), "hi": float(hi), "def_text": def_text,
                       "cli": cli == "1"}
    if len(table) < 30:
        fail("the compiled table has only %d rows" % len(table))

    readme = readme_rows()
    plugin = {n for n, r in table.items() if not r["cli"]}
    for n in sorted(plugin - set(readme)):
        fail("README.md: no row for %s" % n)
    for n in sorted(set(readme) - set(table)):
        fail("README.md: %s is documented but not in include/ncclscope/config_vars.def" % n)
    for n, (shown, meaning) in sorted(readme.items()):
        row = table.get(n)
        if not row:
            continue
        if not same_default(row, shown):
            fail("README.md: %s's default is '%s', the table's %s" % (n, shown, row["def_text"]))
        for lo, hi in re.findall(r"in \[([0-9.x]+), ([0-9.x]+)\]", meaning):
            if (number(lo), number(hi)) != (row["lo"], row["hi"]):
                fail("README.md: %s says [%s, %s], the table [%g, %g]" % (n, lo, hi, row["lo"], row["hi"]))
        for lo in re.findall(r"at least ([0-9.]+)", meaning):
            if row["kind"] != "own" and number(lo) != row["lo"]:
                fail("README.md: %s says at least %s, the table %g" % (n, lo, row["lo"]))

    man = man_paragraphs()
    for n in sorted(set(table) - set(man)):
        fail("man/ncclscope.7.in: no entry for %s" % n)
    for n in sorted(set(man) - set(table)):
        fail("man/ncclscope.7.in: %s is documented but not in include/ncclscope/config_vars.def" % n)
    for n, text in sorted(man.items()):
        row = table.get(n)
        for shown in re.findall(r"\bdefault\s+([^\s,;()]+)", text) if row else []:
            if not same_default(row, shown.rstrip(".")):
                fail("man/ncclscope.7.in: %s's default is '%s', the table's %s" % (n, shown, row["def_text"]))
    if failures:
        sys.exit(1)
    print("ok: %d variables; README.md (%d rows) and man/ncclscope.7.in (%d entries) agree with the table"
          % (len(table), len(readme), len(man)))


main()
