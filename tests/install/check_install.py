#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What `cmake --install` and the packages deliver, used the way a user would.

usage: check_install.py CHECK WORKDIR
  env: BUILD (the build directory), SOURCE (the source tree), CMAKE, CPACK,
       VERSION (project(VERSION)), LIBDIR (CMAKE_INSTALL_LIBDIR)

  prefix   cmake --install into WORKDIR/prefix: the layout (the plugin only as
           libnccl-profiler-ncclscope.so, no bare libnccl-profiler.so), no RPATH
           into the build or source tree, `--version` of both programs, the man
           pages rendered by man/groff without a warning, ncclscope(7) naming every
           NCCLSCOPE_* variable of src/; then the installed
           ncclscope-sim finds the plugin by name only (NCCL_PROFILER_PLUGIN=ncclscope,
           LD_LIBRARY_PATH=PREFIX/LIBDIR) as NCCL 2.26+ does (and not as 2.25 does),
           its trace read by the installed `ncclscope export` holds every event the
           simulator's truth says the plugin accepted, with the version in its
           header; and the installed `ncclscope demo` runs.
  package  cpack DEB and TGZ (and RPM where rpmbuild is installed): the .deb's
           metadata (Depends from dpkg-shlibdeps, Recommends libcurl and zlib),
           its files, its ldconfig call; the archive's files; the RPM's. As root with
           CI=true or NCCLSCOPE_TEST_DPKG=1 (it changes the system): dpkg -i of the
           .deb, ldconfig's cache names the plugin, the installed simulator finds
           it by name with no LD_LIBRARY_PATH and the installed export reads the
           trace, then dpkg -r and every file of the package is gone. The package
           is removed again whatever happens in between (also on SIGTERM, ctest's
           timeout). Skipped, saying why, where not allowed to install.

Exit 0 pass, 1 fail, 77 skip. Stdlib only.
"""
import collections
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tarfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checklib import Fail, Skip, check, run_named, fresh_dump  # noqa: E402

PLUGIN = "libnccl-profiler-ncclscope.so"
# installed when the source tree has them (install(FILES ... OPTIONAL)): source, path under share/
DEPLOY_FILES = (("deploy/grafana/ncclscope.json", "ncclscope/grafana/ncclscope.json"),
                ("deploy/prometheus/ncclscope-rules.yml", "ncclscope/prometheus/ncclscope-rules.yml"))


def run(cmd, env=None, timeout=120, expect=0):
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    out, err = r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")
    if expect is not None and r.returncode != expect:
        raise Fail("%s exited %d (expected %d):\n%s%s" % (" ".join(cmd), r.returncode, expect, out[-2000:], err[-2000:]))
    return out, err, r.returncode


def clean_env(**extra):
    """The test's environment without the loader's or the plugin's variables, plus extra."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD", "NCCL_PROFILER_PLUGIN") and not k.startswith("NCCLSCOPE_")}
    env.update(extra)
    return env


def check_versions(bindir):
    version = os.environ["VERSION"]
    for prog in ("ncclscope", "ncclscope-sim"):
        out, _, _ = run([os.path.join(bindir, prog), "--version"])
        check(out == "%s %s\n" % (prog, version), "%s --version printed %r, not '%s %s'" % (prog, out, prog, version))


def check_no_build_rpath(paths):
    """No RPATH/RUNPATH of an installed ELF file points into the build or source tree."""
    trees = [os.path.realpath(os.environ["BUILD"]), os.path.realpath(os.environ["SOURCE"])]
    for p in paths:
        out, _, _ = run(["readelf", "-d", p])
        for line in out.splitlines():
            if "(RPATH)" in line or "(RUNPATH)" in line:
                entries = line.split("[", 1)[1].rstrip("]").split(":")
                for e in entries:
                    check(not any(e.startswith(t) for t in trees) and (e.startswith("$ORIGIN") or e.startswith("/usr")),
                          "%s has %s: it depends on where it was built" % (p, line.strip()))


def check_man_pages(mandir):
    pages = [os.path.join(mandir, "man1", "ncclscope.1"), os.path.join(mandir, "man1", "ncclscope-sim.1"),
             os.path.join(mandir, "man7", "ncclscope.7")]
    version = os.environ["VERSION"]
    man, groff = shutil.which("man"), shutil.which("groff")
    check(groff is not None, "groff is not installed (.ci/deps.sh installs groff-base): cannot render the man pages")
    for page in pages:
        check(os.path.isfile(page), "%s is not installed" % page)
        with open(page) as f:
            src = f.read()
        check("@" not in src.split("\n", 2)[1], "%s: .TH line not configured: %s" % (page, src.split("\n", 2)[1]))
        check(("ncclscope %s" % version) in src.split("\n", 2)[1], "%s: .TH does not name version %s" % (page, version))
        # groff's own warnings (all of them: -ww), then man(1) as a user runs it
        _, err, _ = run([groff, "-man", "-Tutf8", "-ww", "-z", page], env=dict(os.environ, LC_ALL="C.UTF-8"))
        check(err == "", "groff warns on %s:\n%s" % (page, err))
        if man:
            out, err, _ = run([man, "--warnings", "-l", page], env=dict(os.environ, MANWIDTH="80", MAN_DISABLE_SECCOMP="1",
                                                                       LC_ALL="C.UTF-8"))
            check(err == "", "man --warnings -l %s:\n%s" % (page, err))
            check("NAME" in out and "ncclscope" in out and "SEE ALSO" in out, "man -l %s rendered:\n%s" % (page, out[:500]))
    if not man:
        print("note: man(1) is not installed; the pages were rendered with groff only")
    # ncclscope(7) names every variable the plugin reads
    with open(pages[2]) as f:
        page7 = f.read().replace("\\-", "-")
    read = set()
    for d, _, files in os.walk(os.path.join(os.environ["SOURCE"], "src")):
        for name in files:
            if name.endswith(".c"):
                with open(os.path.join(d, name)) as f:
                    read.update(re.findall(r'"(NCCLSCOPE_[A-Z0-9_]+)"', f.read()))
    with open(os.path.join(os.environ["SOURCE"], "include", "ncclscope", "config_vars.def")) as f:
        read.update(re.findall(r"^NS_CONFIG_(?:NUM|OWN)\((NCCLSCOPE_[A-Z0-9_]+)", f.read(), re.M))
    check(len(read) > 10, "found only %s in src/" % sorted(read))
    missing = sorted(v for v in read if not re.search(r"\b%s\b" % v, page7))
    check(not missing, "ncclscope(7) does not describe %s (man/ncclscope.7.in)" % ", ".join(missing))


def simulate_by_name(bindir, work, env, nccl="2.30", expect=0):
    """Runs the installed simulator with NCCL_PROFILER_PLUGIN=ncclscope; returns (dump dir, truth path, output)."""
    dump = fresh_dump(work)
    truth = os.path.join(work, "truth.jsonl")
    env = dict(env, NCCL_PROFILER_PLUGIN="ncclscope", NCCLSCOPE_DUMP_DIR=dump, NCCLSCOPE_EVENT_MASK="all")
    out, err, rc = run([os.path.join(bindir, "ncclscope-sim"), "--nccl", nccl, "--procs", "2", "--truth", truth],
                       env=env, expect=expect)
    return dump, truth, out + err


def check_trace_against_truth(bindir, work, dump, truth_path):
    """The installed export reads the trace: per type, one event for every start the truth says got a handle."""
    traces = [n for n in os.listdir(dump) if n.endswith(".nstrace")]
    check(len(traces) == 2, "expected 2 traces (--procs 2) in %s, found %s" % (dump, sorted(os.listdir(dump))))
    jsonl = os.path.join(work, "export.jsonl")
    run([os.path.join(bindir, "ncclscope"), "export", dump, "--format", "jsonl", "-o", jsonl])
    want, got = collections.Counter(), collections.Counter()
    with open(truth_path) as f:
        for line in f:
            t = json.loads(line)
            if t["kind"] == "start" and not t["handle_null"]:
                want["ncclProfile" + t["type"]] += 1
    versions = set()
    with open(jsonl) as f:
        for line in f:
            r = json.loads(line)
            if r["recordType"] == "event":
                got[r["type"]] += 1
            elif r["recordType"] == "lifecycle" and r["func"] == "ProfilerInit":
                versions.add(r["details"].get("ncclscopeVersion"))
    check(sum(want.values()) > 1000, "the truth lists only %d accepted starts" % sum(want.values()))
    check(got == want, "exported events by type %s != the truth's accepted starts %s" % (dict(got), dict(want)))
    check(versions == {os.environ["VERSION"]}, "the plugin's version in the traces: %s, not %s" % (versions, os.environ["VERSION"]))
    print("trace: %d events of %d types, as the truth says; plugin version %s" % (sum(got.values()), len(got), os.environ["VERSION"]))


def check_prefix(work):
    prefix = os.path.join(work, "prefix")
    shutil.rmtree(prefix, ignore_errors=True)
    os.makedirs(work, exist_ok=True)
    run([os.environ["CMAKE"], "--install", os.environ["BUILD"], "--prefix", prefix])
    bindir, libdir = os.path.join(prefix, "bin"), os.path.join(prefix, os.environ["LIBDIR"])
    share = os.path.join(prefix, "share")
    for p in [os.path.join(bindir, "ncclscope"), os.path.join(bindir, "ncclscope-sim"), os.path.join(libdir, PLUGIN),
              os.path.join(share, "doc", "ncclscope", "README.md"), os.path.join(share, "doc", "ncclscope", "LICENSE"),
              os.path.join(share, "doc", "ncclscope", "docs", "cli.md")]:
        check(os.path.isfile(p), "%s is not installed" % p)
    for d, _, files in os.walk(prefix):
        check("libnccl-profiler.so" not in files, "%s/libnccl-profiler.so is installed: NCCL would load it for every job"
              % d)
    for src, dst in DEPLOY_FILES:
        s, d = os.path.join(os.environ["SOURCE"], src), os.path.join(share, dst)
        if os.path.isfile(s):
            check(os.path.isfile(d), "%s is not installed as %s" % (src, d))
            with open(s, "rb") as a, open(d, "rb") as b:
                check(a.read() == b.read(), "%s differs from %s" % (d, s))
        else:
            check(not os.path.exists(d), "%s installed without %s" % (d, s))
            print("note: %s is not in the source tree: share/%s not installed" % (src, dst))
    check_no_build_rpath([os.path.join(bindir, "ncclscope"), os.path.join(bindir, "ncclscope-sim"),
                          os.path.join(libdir, PLUGIN)])
    check_versions(bindir)
    check_man_pages(os.path.join(share, "man"))

    # by name, as NCCL 2.26+ resolves it: libnccl-profiler-ncclscope.so through LD_LIBRARY_PATH
    env = clean_env(LD_LIBRARY_PATH=libdir)
    dump, truth, _ = simulate_by_name(bindir, work, env)
    check_trace_against_truth(bindir, work, dump, truth)
    # NCCL 2.25 dlopens the value as given ("ncclscope"): no plugin, as with a real 2.25
    _, _, log = simulate_by_name(bindir, work, env, nccl="2.25", expect=1)
    check("cannot load profiler plugin 'ncclscope'" in log, "NCCL 2.25 by name:\n%s" % log)
    # without the library directory on the search path the name resolves to nothing (unless a
    # package put the plugin in a system directory)
    out, _, _ = run(["/sbin/ldconfig", "-p"]) if os.path.exists("/sbin/ldconfig") else ("", "", 0)
    if PLUGIN in out:
        print("note: %s is in ld.so.cache: the negative check without LD_LIBRARY_PATH is left out" % PLUGIN)
    else:
        _, _, log = simulate_by_name(bindir, work, clean_env(), expect=1)
        check("cannot load profiler plugin 'ncclscope'" in log, "without LD_LIBRARY_PATH:\n%s" % log)

    # the README's first command, from the installed tree: the plugin is found in PREFIX/LIBDIR
    demo = os.path.join(work, "demo")
    shutil.rmtree(demo, ignore_errors=True)
    run([os.path.join(bindir, "ncclscope"), "demo", "--out", demo], env=clean_env(), timeout=120)
    check(os.path.getsize(os.path.join(demo, "ncclscope.jsonl")) > 0, "the installed demo wrote no export")


def deb_field(info, name):
    for line in info.splitlines():
        if line.startswith(" %s:" % name):
            return line.split(":", 1)[1].strip()
    return None


def build_packages(work):
    """cpack into WORKDIR/pkg; returns {generator: path}."""
    pkg = os.path.join(work, "pkg")
    shutil.rmtree(pkg, ignore_errors=True)
    os.makedirs(pkg)
    gens = ["DEB", "TGZ"]
    if shutil.which("rpmbuild"):
        gens.append("RPM")
    else:
        print("note: rpmbuild is not installed (Debian: rpm): the RPM is not built")
    run([os.environ["CPACK"], "-G", ";".join(gens), "--config", os.path.join(os.environ["BUILD"], "CPackConfig.cmake"),
         "-B", pkg], timeout=200)
    files = {}
    for name in os.listdir(pkg):
        for gen, ext in (("DEB", ".deb"), ("TGZ", ".tar.gz"), ("RPM", ".rpm")):
            if name.endswith(ext):
                check(gen not in files, "two %s packages: %s, %s" % (gen, files.get(gen), name))
                files[gen] = os.path.join(pkg, name)
    for gen in gens:
        check(gen in files, "cpack wrote no %s package: %s" % (gen, os.listdir(pkg)))
    return files


def check_deb_metadata(deb):
    version, libdir = os.environ["VERSION"], os.environ["LIBDIR"]
    info, _, _ = run(["dpkg-deb", "-I", deb])
    arch, _, _ = run(["dpkg", "--print-architecture"])
    check(deb_field(info, "Package") == "ncclscope", info)
    check(deb_field(info, "Version") == version, "Version is not %s:\n%s" % (version, info))
    check(deb_field(info, "Architecture") == arch.strip(), "Architecture is not %s:\n%s" % (arch.strip(), info))
    depends = [d.strip() for d in (deb_field(info, "Depends") or "").split(",")]
    names = {d.split()[0] for d in depends if d}
    # linked: libc (all three ELF files), json-c (ncclscope-sim), zlib (ncclscope)
    for lib in ("libc6", "zlib1g"):
        check(lib in names, "Depends lacks %s: %s" % (lib, depends))
    check(any(n.startswith("libjson-c") for n in names), "Depends lacks json-c: %s" % depends)
    check(not any("curl" in n for n in names), "Depends names libcurl, which the plugin only dlopens: %s" % depends)
    recommends = deb_field(info, "Recommends") or ""
    check("libcurl4" in recommends and "zlib1g" in recommends, "Recommends is %r, not libcurl4 and zlib1g" % recommends)
    # ldconfig at install and removal: CPack's maintainer scripts, or dpkg's trigger
    postinst, _, _ = run(["dpkg-deb", "-I", deb, "postinst"], expect=None)
    triggers, _, _ = run(["dpkg-deb", "-I", deb, "triggers"], expect=None)
    check("ldconfig" in postinst or "activate-noawait ldconfig" in triggers,
          "the .deb runs no ldconfig: postinst %r, triggers %r" % (postinst, triggers))
    listing, _, _ = run(["dpkg-deb", "-c", deb])
    paths = {line.split()[-1] for line in listing.splitlines() if line.strip()}
    want = ["./usr/bin/ncclscope", "./usr/bin/ncclscope-sim", "./usr/%s/%s" % (libdir, PLUGIN),
            "./usr/share/man/man1/ncclscope.1", "./usr/share/man/man1/ncclscope-sim.1", "./usr/share/man/man7/ncclscope.7",
            "./usr/share/doc/ncclscope/LICENSE", "./usr/share/doc/ncclscope/README.md"]
    for src, dst in DEPLOY_FILES:
        if os.path.isfile(os.path.join(os.environ["SOURCE"], src)):
            want.append("./usr/share/" + dst)
    for p in want:
        check(p in paths, "%s is not in the .deb:\n%s" % (p, listing))
    check(not any(p.endswith("/libnccl-profiler.so") for p in paths), "the .deb ships libnccl-profiler.so")
    print("deb: Depends: %s; Recommends: %s" % (", ".join(depends), recommends))
    return [p[1:] for p in paths if not p.endswith("/")]


def check_tgz(tgz):
    top = os.path.basename(tgz)[:-len(".tar.gz")]
    with tarfile.open(tgz) as t:
        names = set(t.getnames())
    for p in ["bin/ncclscope", "bin/ncclscope-sim", "%s/%s" % (os.environ["LIBDIR"], PLUGIN),
              "share/man/man7/ncclscope.7", "share/doc/ncclscope/LICENSE"]:
        check("%s/%s" % (top, p) in names, "%s/%s is not in %s" % (top, p, tgz))


def check_rpm(rpm):
    out, _, _ = run(["rpm", "-qp", "--queryformat", "%{NAME} %{VERSION} %{LICENSE}\\n", rpm])
    check(out.split() == ["ncclscope", os.environ["VERSION"], "Apache-2.0"], "rpm name/version/license: %s" % out)
    files, _, _ = run(["rpm", "-qpl", rpm])
    check("/usr/%s/%s" % (os.environ["LIBDIR"], PLUGIN) in files.split(), "the RPM lacks the plugin:\n%s" % files)
    reqs, _, _ = run(["rpm", "-qpR", rpm])
    check("libc.so.6()(64bit)" in reqs.split("\n") or any(r.startswith("libc.so.6") for r in reqs.split("\n")),
          "the RPM does not require libc:\n%s" % reqs)
    print("rpm: requires %s" % ", ".join(r for r in reqs.split("\n") if r and not r.startswith("rpmlib")))


def dpkg_status(pkg):
    """dpkg's status of pkg ("install ok installed", "deinstall ok config-files", ...); "" when unknown."""
    r = subprocess.run(["dpkg-query", "-W", "-f", "${Status}", pkg], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    status = r.stdout.decode().strip() if r.returncode == 0 else ""
    return "" if status.endswith("not-installed") else status


def check_dpkg(deb, work, deb_files):
    if os.geteuid() != 0:
        raise Skip("dpkg -i needs root (CI runs as root); the packages were built and checked")
    if dpkg_status("ncclscope") not in ("", "deinstall ok config-files"):
        raise Skip("a package ncclscope is installed here (%s): a test neither replaces nor removes it"
                   % dpkg_status("ncclscope"))

    def on_signal(signum, frame):
        raise Fail("signal %d" % signum)  # unwinds to the finally below, which removes the package

    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGALRM):
        signal.signal(s, on_signal)
    # ctest's TIMEOUT ends a test with SIGKILL, which nothing can catch: give up before it
    signal.alarm(int(os.environ.get("DPKG_DEADLINE_S", "300")))
    try:
        run(["dpkg", "-i", deb], timeout=120)
        ldcache, _, _ = run(["/sbin/ldconfig", "-p"])
        check(PLUGIN in ldcache, "after dpkg -i, ld.so.cache does not list %s" % PLUGIN)
        # a job with NCCL_PROFILER_PLUGIN=ncclscope and nothing else finds the plugin
        dump, truth, _ = simulate_by_name("/usr/bin", work, clean_env())
        check_trace_against_truth("/usr/bin", work, dump, truth)
        check_versions("/usr/bin")
        run(["dpkg", "-r", "ncclscope"], timeout=120)
        left = [p for p in deb_files if os.path.lexists(p)]
        check(not left, "dpkg -r left %s" % left)
        check(dpkg_status("ncclscope") in ("", "deinstall ok config-files"),
              "after dpkg -r, ncclscope's status is %s" % dpkg_status("ncclscope"))
        ldcache, _, _ = run(["/sbin/ldconfig", "-p"])
        check(PLUGIN not in ldcache, "after dpkg -r, ld.so.cache still lists %s" % PLUGIN)
        print("dpkg: installed, found by name with no LD_LIBRARY_PATH, removed (%d files gone)" % len(deb_files))
    finally:
        signal.alarm(0)
        if dpkg_status("ncclscope"):
            subprocess.run(["dpkg", "-P", "ncclscope"], timeout=60)


def check_package(work):
    os.makedirs(work, exist_ok=True)
    check(shutil.which("dpkg-deb") is not None, "dpkg-deb is not installed")
    files = build_packages(work)
    deb_files = check_deb_metadata(files["DEB"])
    check_tgz(files["TGZ"])
    if "RPM" in files:
        check_rpm(files["RPM"])
    if not (os.environ.get("CI") == "true" or os.environ.get("NCCLSCOPE_TEST_DPKG") == "1"):
        raise Skip("dpkg -i changes the system: only with CI=true or NCCLSCOPE_TEST_DPKG=1 (as root); "
                   "the packages were built and checked")
    check(platform.system() == "Linux", "not Linux")
    check_dpkg(files["DEB"], work, deb_files)


CHECKS = {"prefix": check_prefix, "package": check_package}

if __name__ == "__main__":
    sys.exit(run_named(CHECKS, __doc__, sys.argv))
