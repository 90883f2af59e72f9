#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks JSON Lines exports against docs/jsonl-contract.md, whose field
lists are read from the page itself: lines of the form
  - **NAME**: always `a`, `b`; optional `c`
NAME is `event`, `state` or `lifecycle` (fields of the record), an event
type (`ncclProfileColl`: fields of `details`), or `ProfilerInit` /
`ProfilerFinalize` (lifecycle `details`). Every *always* field must be on
every matching line, and no field outside the two lists may appear.

usage: check_contract.py CONTRACT.md FILE.jsonl... [--require-types]
--require-types: every event type and both lifecycle kinds must occur
across the files. Exit status 1 with up to 40 violations printed."""
import json
import re
import sys

LINE = re.compile(r"^- \*\*(\w+)\*\*: always (.*?)(?:; optional (.*))?$")


def load_contract(path):
    spec = {}
    for line in open(path, encoding="utf-8"):
        m = LINE.match(line.strip())
        if not m:
            continue
        always = re.findall(r"`([^`]+)`", m.group(2))
        optional = re.findall(r"`([^`]+)`", m.group(3) or "")
        spec[m.group(1)] = (set(always), set(always) | set(optional))
    return spec


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    require = "--require-types" in sys.argv
    spec = load_contract(args[0])
    types = [k for k in spec if k.startswith("ncclProfile")]
    for k in ("event", "state", "lifecycle", "ProfilerInit", "ProfilerFinalize"):
        if k not in spec:
            print("contract: no field list for %s" % k)
            return 1
    if len(types) != 15:
        print("contract: %d event types listed, want 15" % len(types))
        return 1
    errors, seen, lines = [], set(), 0

    def fields(obj, key, where):
        if key not in spec:
            errors.append("%s: %s is not in the contract" % (where, key))
            return
        always, allowed = spec[key]
        keys = set(obj)
        for f in sorted(always - keys):
            errors.append("%s: %s lacks %r" % (where, key, f))
        for f in sorted(keys - allowed):
            errors.append("%s: %s has %r, which the contract does not name" % (where, key, f))

    for path in args[1:]:
        for n, text in enumerate(open(path, encoding="utf-8"), 1):
            lines += 1
            where = "%s:%d" % (path, n)
            r = json.loads(text)
            kind = r.get("recordType")
            fields(r, kind, where)
            if kind == "event":
                seen.add(r.get("type"))
                fields(r.get("details", {}), r.get("type"), where)
            elif kind == "lifecycle":
                seen.add(r.get("func"))
                fields(r.get("details", {}), r.get("func"), where)
            if len(errors) > 40:
                break
    if require:
        for t in types + ["ProfilerInit", "ProfilerFinalize"]:
            if t not in seen:
                errors.append("no %s record in the exports (the check would not cover it)" % t)
    for e in errors[:40]:
        print(e)
    print("%d lines checked against %d field lists: %s" % (lines, len(spec), "FAILED" if errors else "ok"))
    return 1 if errors else 0


sys.exit(main())
