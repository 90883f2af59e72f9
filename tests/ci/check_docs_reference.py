#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The repository speaks of itself: its docs, man pages, comments and test
names are a reference (what is, how to reproduce a figure), not a record of
how the work went. History belongs in git log.

Fails on the phrases a development diary leaves behind: issue numbers
("issue 13", "issues 12 and 13"; in prose also "#13"), numbered or relative work sessions
("session 12", "the session's start (e913f0a)"), seeds quoted as history
("seed 1234" outside a --seed option), and agents ("another helper", "the
lead merges"). The plugin's tracing session (it starts at the first init
and ends at the last finalize) is a term of the design and passes: "a
session", "the session's start", "once per session", "in this session" of
a ring in code. In prose (docs/, README.md, man/, CONTRIBUTING.md) a
session named relative to the work ("this session", "the previous
session", "another session's runs") fails too; name the plugin's session
so that it cannot be misread ("a reload starts a new session").

Also fails on a file of the repository that a doc or comment names but that
does not exist (a path from a top-level directory, `docs/flightrec.md`): a
reference must lead somewhere. Paths of other projects (NCCL's
`src/transport/profiler.cc`, a package's `build/src/...`) do not match.

usage: check_docs_reference.py REPO
Prints FILE:LINE: phrase for every hit; exits 1 on any; python3 stdlib only."""
import os
import re
import sys

REPO = sys.argv[1]
ROOTS = ("docs", "man", "src", "sim", "tools", "tests", "bench", "include", "deploy", "cmake", ".ci")
FILES = ("README.md", "CONTRIBUTING.md", "CMakeLists.txt")
PROSE = ("docs", "man", "README.md", "CONTRIBUTING.md")
SKIP_DIRS = {"node_modules", "__pycache__", ".git", "build"}
SELF = os.path.abspath(__file__)

# Everywhere: words that only a diary of the work uses.
EVERYWHERE = [
    re.compile(r"\bissues?\s*#?\d+", re.I),                       # issue 13, issues 12 and 13, issue #5
    re.compile(r"\bsessions?\s+\d+", re.I),                        # session 12
    re.compile(r"\bsession'?s?\s+(start|end|begin\w*)\s*\(\s*[0-9a-f]{7,}", re.I),  # session start (e913f0a)
    re.compile(r"(?<![-\w])seed\s+\d{3,}", re.I),                  # seed 1234 (not --seed 1234)
    re.compile(r"\b(another|other|sibling|each|every|one|a)\s+(helper|agent)s?\b(?!\s*(-\s*)?threads?\b)",
               re.I),                                              # another helper (not a helper thread)
    re.compile(r"(?<!user-)(?<!user )\bagents?\b", re.I),             # not an HTTP User-Agent
    re.compile(r"\bthe\s+lead\s+(merges|edits|asked|said|wants)\b", re.I),
    re.compile(r"\b([Ww]e|I)\s+(fixed|tried|changed|found|measured)\b"),
    re.compile(r"\b(previous|this|last|next)\s+(pass|round)\s+of\s+(work|review)\b", re.I),
    re.compile(r"\bworktrees?\b", re.I),
]
# A file of this repository, named from its top-level directory (not inside another path: no / . @ - before it).
REPO_PATH = re.compile(r"(?<![\w/.@-])((?:src|tools|sim|tests|bench|docs|include|deploy|man|cmake|\.ci)/[\w./-]*\w"
                       r"\.(?:c|h|md|py|sh|js|sql|json|txt|cmake|proto|in|yaml|yml))\b")
# Prose only: a session named relative to the work.
PROSE_ONLY = [
    re.compile(r"(?<![\w&/#`\\\[])#\d{1,5}\b"),                # #13 (GitHub style)
    re.compile(r"\b(this|that|previous|next|last|earlier|later|same|another|other|one)\s+session('s)?\b", re.I),
    re.compile(r"\bsessions?\s+(of\s+work|ago)\b", re.I),
    re.compile(r"\b(previous|this)\s+(pass|round)\b", re.I),
    re.compile(r"\bused\s+to\s+be\b", re.I),
]


def candidates():
    for name in FILES:
        path = os.path.join(REPO, name)
        if os.path.isfile(path):
            yield path
    for root in ROOTS:
        for dirpath, dirs, files in os.walk(os.path.join(REPO, root)):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
            for f in sorted(files):
                yield os.path.join(dirpath, f)


def text_of(path):
    with open(path, "rb") as fh:
        data = fh.read()
    if b"\0" in data:
        return None  # an image or other binary file
    return data.decode("utf-8", errors="replace")


def main():
    hits = 0
    checked = 0
    for path in candidates():
        if os.path.abspath(path) == SELF or not os.path.isfile(path):
            continue
        text = text_of(path)
        if text is None:
            continue
        checked += 1
        rel = os.path.relpath(path, REPO)
        prose = rel.split(os.sep)[0] in PROSE
        patterns = EVERYWHERE + (PROSE_ONLY if prose else [])
        for n, line in enumerate(text.splitlines(), 1):
            for m in REPO_PATH.finditer(line):
                if not os.path.exists(os.path.join(REPO, m.group(1))):
                    print("%s:%d: %r names no file of the repository: %s" % (rel, n, m.group(1), line.strip()[:160]))
                    hits += 1
        flat = re.sub(r"\n[ \t#*/-]*", " ", text)
        if not any(pat.search(flat) for pat in patterns):
            continue  # the usual case: one pass over the file per pattern
        lines = text.splitlines()
        for n, line in enumerate(lines, 1):
            # a phrase may wrap: read on into the next line, but report a hit where it starts
            reach = line + " " + (lines[n].lstrip(" \t#*/-") if n < len(lines) else "")
            for pat in patterns:
                m = next((m for m in pat.finditer(reach) if m.start() < len(line)), None)
                if m:
                    print("%s:%d: %r: %s" % (rel, n, m.group(0), line.strip()[:160]))
                    hits += 1
                    break
    if hits:
        print("FAIL %d line(s) read as a diary of the work or name a file that is not there; state what is "
              "(and how to reproduce it), history belongs in git log" % hits)
        sys.exit(1)
    print("ok: %d files read as a reference" % checked)


main()
