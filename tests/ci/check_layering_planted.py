#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
""".ci/check_layering.py fails on what it is there to catch, and passes on the tree.

usage: check_layering_planted.py REPO
Copies what the checker reads (docs/design.md and the checked trees) into a
temporary directory and runs the checker there: on the copy as it is (it
must pass), then on a copy with one planted violation each (it must exit 1
and name that violation, and nothing else):
 - a header-owner violation: src/trace includes include/ncclscope/analysis.h,
   the analysis' public header (src/trace may not include src/analysis);
 - a link-library violation: src/events links ncclscope_analysis in its
   CMakeLists.txt (src/events may not link src/analysis).
Prints the checker's output for each; exits 1 on any mismatch."""
import os
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.abspath(sys.argv[1])
CHECKER = os.path.join(REPO, ".ci", "check_layering.py")
TREES = ("src", "include", "tools", "sim", "bench")


def copy_tree(dst):
    os.makedirs(os.path.join(dst, "docs"))
    shutil.copy(os.path.join(REPO, "docs", "design.md"), os.path.join(dst, "docs", "design.md"))
    for t in TREES:
        shutil.copytree(os.path.join(REPO, t), os.path.join(dst, t),
                        ignore=shutil.ignore_patterns("node_modules", "build*", "__pycache__"))


def run(tree):
    p = subprocess.run([sys.executable, CHECKER, tree], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def append(path, text):
    with open(path, "a") as fh:
        fh.write(text)


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        clean = os.path.join(tmp, "clean")
        copy_tree(clean)
        rc, out = run(clean)
        print("== the tree as it is (rc %d)\n%s" % (rc, out))
        if rc != 0:
            failures.append("the unchanged tree fails the check")

        plants = [
            ("header owner", "src/trace/codec.c", '#include "ncclscope/analysis.h"\n',
             'src/trace/codec.c:%d: #include "ncclscope/analysis.h": src/trace may not include src/analysis (its owner)'),
            ("link library", "src/events/CMakeLists.txt", "target_link_libraries(ncclscope_events PUBLIC ncclscope_analysis)\n",
             "src/events/CMakeLists.txt:%d: target_link_libraries(ncclscope_events ... ncclscope_analysis): "
             "src/events may not link src/analysis"),
        ]
        for n, (what, rel, text, expect) in enumerate(plants):
            tree = os.path.join(tmp, "planted%d" % n)
            copy_tree(tree)
            path = os.path.join(tree, rel)
            with open(path) as fh:
                line = sum(1 for _ in fh) + 1
            append(path, text)
            rc, out = run(tree)
            print("== planted %s violation in %s:%d (rc %d)\n%s" % (what, rel, line, rc, out))
            errors = [l for l in out.splitlines() if not l.startswith("layering: ")]
            if rc != 1:
                failures.append("%s violation: exit %d, not 1" % (what, rc))
            if not (len(errors) == 1 and errors[0].startswith(expect % line)):
                failures.append("%s violation: expected one line starting %r, got %r" % (what, expect % line, errors))
            if "FAILED" not in out:
                failures.append("%s violation: no FAILED verdict" % what)
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
