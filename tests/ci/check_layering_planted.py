#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The layering holds against planted violations: each fails .ci/check_layering.py, the build, or both.

usage: check_layering_planted.py REPO BUILD
Copies what the checker reads (docs/design.md and the checked trees) into a
temporary directory and runs the checker there: on the copy as it is (it
must pass), then on a copy with one planted violation each (it must exit 1
and name exactly the lines expected):
 - a header-owner violation: src/trace includes include/ncclscope/analysis.h;
 - a link-library violation: src/events links ncclscope_analysis;
 - `#include <writer/writer.h>` in src/analysis/tags.c (angle brackets);
 - a hand-written prototype: src/analysis/tags.c declares and calls the
   writer's ns_writer_request_dump (no include at all: for the build);
 - a link added in tools/CMakeLists.txt: the ncclscope command links
   ncclscope_writer;
 - a link through a variable: src/events sets a variable to
   ncclscope_analysis and links ${it};
 - `#include NAME` with NAME defined as "writer/writer.h";
 - a `.inc` file holding `#include "writer/writer.h"`, included by tags.c.
The plants in C also go through BUILD's compiler as the build runs it: the
planted tags.c compiled with its compile_commands.json command (the layer
roots: writer/writer.h is not found), and for the prototype, the object
linked into src/analysis's link check (a shared object of that library and
what it links, --no-undefined: the writer's function is undefined). Prints
each step's output; exits 1 on any mismatch."""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.abspath(sys.argv[1])
BUILD = os.path.abspath(sys.argv[2])
CHECKER = os.path.join(REPO, ".ci", "check_layering.py")
TREES = ("src", "include", "tools", "sim", "bench")
TAGS = "src/analysis/tags.c"
failures = []


def copy_tree(dst):
    os.makedirs(os.path.join(dst, "docs"))
    shutil.copy(os.path.join(REPO, "docs", "design.md"), os.path.join(dst, "docs", "design.md"))
    for t in TREES:
        shutil.copytree(os.path.join(REPO, t), os.path.join(dst, t),
                        ignore=shutil.ignore_patterns("node_modules", "build*", "__pycache__"))


def run_checker(tree):
    p = subprocess.run([sys.executable, CHECKER, tree], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def lines_of(path):
    with open(path) as fh:
        return sum(1 for _ in fh)


# Each plant: (what, {file: text appended}, [expected checker lines, "%(FILE)d" = the first appended line's number],
#              build: None, "compile" (tags.c must not compile) or "link" (it compiles; the link check fails))
WRITER = "#include \"writer/writer.h\"\n"
PLANTS = [
    ("header owner", {"src/trace/codec.c": '#include "ncclscope/analysis.h"\n'},
     ['src/trace/codec.c:%(src/trace/codec.c)d: #include "ncclscope/analysis.h": src/trace may not include '
      'src/analysis (its owner)'], None),
    ("link library", {"src/events/CMakeLists.txt": "target_link_libraries(ncclscope_events PUBLIC ncclscope_analysis)\n"},
     ["src/events/CMakeLists.txt:%(src/events/CMakeLists.txt)d: target_link_libraries(ncclscope_events ... "
      "ncclscope_analysis): src/events may not link src/analysis"], None),
    ("angle-bracket include", {TAGS: "#include <writer/writer.h>\n"},
     ["src/analysis/tags.c:%(src/analysis/tags.c)d: #include <writer/writer.h> names a project header"], "compile"),
    ("hand-written prototype", {TAGS: "void ns_writer_request_dump(void);\nvoid ns_planted_call(void);\n"
                                      "void ns_planted_call(void) { ns_writer_request_dump(); }\n"},
     [], "link"),
    ("link in tools/CMakeLists.txt", {"tools/CMakeLists.txt": "target_link_libraries(ncclscope PRIVATE ncclscope_writer)\n"},
     ["tools/CMakeLists.txt:%(tools/CMakeLists.txt)d: target_link_libraries(ncclscope ... ncclscope_writer): tools "
      "may not link src/writer"], None),
    ("link through a variable", {"src/events/CMakeLists.txt": "set(NS_PLANTED_LIBS ncclscope_util ncclscope_analysis)\n"
                                                              "target_link_libraries(ncclscope_events PUBLIC "
                                                              "${NS_PLANTED_LIBS})\n"},
     ["src/events/CMakeLists.txt:%(src/events/CMakeLists.txt+1)d: target_link_libraries(ncclscope_events ... "
      "ncclscope_analysis): src/events may not link src/analysis"], None),
    ("include through a macro", {TAGS: "#define NS_PLANTED_HEADER \"writer/writer.h\"\n#include NS_PLANTED_HEADER\n"},
     ["src/analysis/tags.c:%(src/analysis/tags.c+1)d: #include NS_PLANTED_HEADER: an include through a macro"],
     "compile"),
    (".inc file", {"src/analysis/planted.inc": WRITER, TAGS: '#include "planted.inc"\n'},
     ['src/analysis/planted.inc:1: #include "writer/writer.h": src/analysis may not include src/writer',
      'src/analysis/tags.c:%(src/analysis/tags.c)d: #include "planted.inc": a .inc file'], "compile"),
]


def plant(tree, files):
    """Appends each text; returns {file: the number of its first appended line} (and file+1)."""
    at = {}
    for rel, text in files.items():
        path = os.path.join(tree, rel)
        first = (lines_of(path) if os.path.exists(path) else 0) + 1
        at[rel], at[rel + "+1"] = first, first + 1
        with open(path, "a") as fh:
            fh.write(text)
    return at


def compile_command(src_copy, obj):
    """BUILD's command for tags.c, on the planted copy (its directory's other headers still found)."""
    with open(os.path.join(BUILD, "compile_commands.json")) as fh:
        entry = next(e for e in json.load(fh) if os.path.realpath(e["file"]) == os.path.join(REPO, TAGS))
    argv = shlex.split(entry["command"])
    out = argv.index("-o")
    argv[out + 1] = obj
    argv[argv.index(entry["file"])] = src_copy
    return argv[:1] + ["-iquote", os.path.join(REPO, "src", "analysis")] + argv[1:], entry["directory"]


def build_check(what, tree, kind, tmp):
    src_copy = os.path.join(tree, TAGS)
    obj = os.path.join(tmp, "tags.c.o")  # the archive member's name
    argv, cwd = compile_command(src_copy, obj)
    p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    print("-- compiled with the build's command: rc %d\n%s" % (p.returncode, p.stderr.strip()[-600:]))
    if kind == "compile":
        if p.returncode == 0 or "writer/writer.h: No such file" not in p.stderr:
            failures.append("%s: tags.c compiled (or failed otherwise) with the build's layer roots" % what)
        return
    if p.returncode != 0:
        failures.append("%s: tags.c did not compile: %s" % (what, p.stderr[-300:]))
        return
    lib_dir = os.path.join(BUILD, "src", "analysis")
    with open(os.path.join(lib_dir, "CMakeFiles", "ncclscope_analysis_link_check.dir", "link.txt")) as fh:
        argv = shlex.split(fh.read())
    archive = os.path.join(tmp, "libncclscope_analysis.a")
    shutil.copy(os.path.join(lib_dir, "libncclscope_analysis.a"), archive)
    subprocess.run(["ar", "r", archive, obj], check=True)
    argv = [archive if a == "libncclscope_analysis.a" else a for a in argv]
    argv[argv.index("-o") + 1] = os.path.join(tmp, "link_check.so")
    p = subprocess.run(argv, cwd=lib_dir, capture_output=True, text=True)
    print("-- linked into src/analysis's link check: rc %d\n%s" % (p.returncode, p.stderr.strip()[-600:]))
    if p.returncode == 0 or "undefined reference to `ns_writer_request_dump'" not in p.stderr:
        failures.append("%s: the link check linked (or failed otherwise)" % what)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        clean = os.path.join(tmp, "clean")
        copy_tree(clean)
        rc, out = run_checker(clean)
        print("== the tree as it is (rc %d)\n%s" % (rc, out))
        if rc != 0:
            failures.append("the unchanged tree fails the check")
        for n, (what, files, expect, build) in enumerate(PLANTS):
            tree = os.path.join(tmp, "planted%d" % n)
            copy_tree(tree)
            at = plant(tree, files)
            rc, out = run_checker(tree)
            print("== planted: %s (checker rc %d)\n%s" % (what, rc, out))
            errors = sorted(l for l in out.splitlines() if not l.startswith("layering: "))
            want = sorted(e % at for e in expect)
            if len(errors) != len(want) or not all(g.startswith(w) for g, w in zip(errors, want)):
                failures.append("%s: checker said %r, want lines starting %r" % (what, errors, want))
            if want and (rc != 1 or "FAILED" not in out):
                failures.append("%s: checker exit %d, not 1 with FAILED" % (what, rc))
            if build:
                build_check(what, tree, build, tmp)
    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print("ok: %d plants, each failed the checker, the build or both" % len(PLANTS))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
