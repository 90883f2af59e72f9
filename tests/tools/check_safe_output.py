#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Planted files and odd outputs: `ncclscope export -o` and `ncclscope report`
never follow a planted link, never hang on a planted FIFO, never replace what
is not a regular file, never read one trace twice through a second name of
it, and create files with explicit modes.

Usage: check_safe_output.py NCCLSCOPE DUMP_DIR WORK_DIR (DUMP_DIR holds traces).
Every case prints what it saw; any failure makes the exit status 1.
"""
import os
import stat
import subprocess
import sys
import threading
import time

CLI, DUMP, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
FAILS = []


def check(cond, what, got=None, want=None):
    if not cond:
        FAILS.append("FAIL %s: got %r want %r" % (what, got, want))
        print(FAILS[-1])


def run(args, timeout=30, env=None, umask=None):
    e = dict(os.environ)
    e.update(env or {})
    pre = (lambda: os.umask(umask)) if umask is not None else None
    try:
        return subprocess.run([CLI] + args, capture_output=True, text=True, timeout=timeout, env=e, preexec_fn=pre)
    except subprocess.TimeoutExpired:
        return None


def fresh(name):
    d = os.path.join(WORK, name)
    os.makedirs(d)
    return d


def victim(d):
    v = os.path.join(d, "victim")
    with open(v, "w") as f:
        f.write("precious\n")
    return v


def t_tmp_symlink():
    """A symlink planted at OUT.tmp (the old temporary name) is never followed."""
    d = fresh("tmp_symlink")
    v = victim(d)
    out = os.path.join(d, "out.jsonl")
    os.symlink(v, out + ".tmp")
    p = run(["export", DUMP, "-o", out])
    check(p is not None and p.returncode == 0, "export succeeds", p and p.returncode, 0)
    check(open(v).read() == "precious\n", "the link's target is untouched", open(v).read()[:40], "precious")
    check(os.path.isfile(out) and not os.path.islink(out) and os.path.getsize(out) > 0, "OUT written", out, "a file")
    check(not [n for n in os.listdir(d) if n.startswith(".out.jsonl")], "no temporary file left", os.listdir(d), "none")


def t_tmp_fifo():
    """A FIFO planted at OUT.tmp does not hang the export."""
    d = fresh("tmp_fifo")
    out = os.path.join(d, "out.jsonl")
    os.mkfifo(out + ".tmp")
    p = run(["export", DUMP, "-o", out], timeout=20)
    check(p is not None, "export finishes (no hang on the planted FIFO)", None if p is None else "finished", "finished")
    check(p is not None and p.returncode == 0, "export succeeds", p and p.returncode, 0)
    check(os.path.isfile(out), "OUT written", os.listdir(d), "out.jsonl")


def t_out_symlink():
    """-o naming a symlink to a regular file replaces the file, keeps the link."""
    d = fresh("out_symlink")
    real = victim(d)
    link = os.path.join(d, "link.jsonl")
    os.symlink("victim", link)
    p = run(["export", DUMP, "-o", link])
    check(p is not None and p.returncode == 0, "export succeeds", p and (p.returncode, p.stderr[-200:]), 0)
    check(os.path.islink(link), "the link is still a link", os.path.islink(link), True)
    check(open(real).read() != "precious\n" and os.path.getsize(real) > 100, "the target holds the export",
          os.path.getsize(real), "> 100")


def t_out_fifo_reader():
    """-o naming a FIFO with a reader writes into it, in place."""
    d = fresh("out_fifo")
    fifo = os.path.join(d, "pipe")
    os.mkfifo(fifo)
    got = []
    # The read end is open before the export starts (a reader thread still on its way to open() would make the
    # export see no reader, under load): opened without blocking, then read blocking; a read of 0 bytes means
    # no writer yet, or the export is over.
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    os.set_blocking(fd, True)
    over = threading.Event()

    def reader():
        chunks = []
        while True:
            b = os.read(fd, 1 << 16)
            if b:
                chunks.append(b)
            elif over.is_set():
                break
            else:
                time.sleep(0.01)
        got.append(b"".join(chunks))

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    p = run(["export", DUMP, "-o", fifo], timeout=30)
    over.set()
    t.join(30)
    os.close(fd)
    check(p is not None and p.returncode == 0, "export into a FIFO succeeds", p and (p.returncode, p.stderr[-200:]), 0)
    check(got and len(got[0]) > 100, "the reader got the export", got and len(got[0]), "> 100 bytes")
    check(stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO is still a FIFO", oct(os.lstat(fifo).st_mode), "FIFO")


def t_out_fifo_no_reader():
    """-o naming a FIFO nobody reads fails at once instead of hanging."""
    d = fresh("out_fifo_noreader")
    fifo = os.path.join(d, "pipe")
    os.mkfifo(fifo)
    p = run(["export", DUMP, "-o", fifo], timeout=20)
    check(p is not None, "export finishes", None if p is None else "finished", "finished")
    check(p is not None and p.returncode == 1, "exit status 1", p and p.returncode, 1)
    check(p is not None and "FIFO" in p.stderr, "says why", p and p.stderr[-200:], "FIFO")
    check(stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO is still a FIFO", oct(os.lstat(fifo).st_mode), "FIFO")


def t_out_device():
    """-o naming a link to /dev/null writes to the device; neither link nor device is replaced."""
    d = fresh("out_device")
    link = os.path.join(d, "null")
    os.symlink("/dev/null", link)
    before = os.stat("/dev/null")
    p = run(["export", DUMP, "-o", link])
    check(p is not None and p.returncode == 0, "export succeeds", p and (p.returncode, p.stderr[-200:]), 0)
    check(os.path.islink(link), "the link is still a link", os.path.islink(link), True)
    after = os.stat("/dev/null")
    check(stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino, "/dev/null untouched", oct(after.st_mode),
          "the same character device")
    p = run(["export", DUMP, "-o", "-"])
    check(p is not None and p.returncode == 0 and len(p.stdout) > 100, "-o - writes standard output",
          p and len(p.stdout), "> 100")
    check(not os.path.exists(os.path.join(os.getcwd(), "-")), "no file named '-'", os.getcwd(), "none")


def t_report_planted():
    """report: links planted at DIR/summary.txt and DIR/summary.json.tmp are replaced or ignored, never followed."""
    d = fresh("report_planted")
    dump = os.path.join(d, "dump")
    os.makedirs(dump)
    for n in os.listdir(DUMP):
        if n.endswith(".nstrace"):
            with open(os.path.join(DUMP, n), "rb") as a, open(os.path.join(dump, n), "wb") as b:
                b.write(a.read())
    v = victim(d)
    os.symlink(v, os.path.join(dump, "summary.txt"))
    os.symlink(v, os.path.join(dump, "summary.json.tmp"))
    os.mkfifo(os.path.join(dump, "summary.txt.tmp"))
    p = run(["report", dump, "-q"], timeout=30)
    check(p is not None and p.returncode == 0, "report succeeds", p and (p.returncode, p.stderr[-200:]), 0)
    check(open(v).read() == "precious\n", "the links' target is untouched", open(v).read()[:40], "precious")
    s = os.path.join(dump, "summary.txt")
    check(os.path.isfile(s) and not os.path.islink(s), "summary.txt is now a file", os.path.islink(s), False)
    # `--text -`: the text on standard output, no file named '-'.
    cwd = fresh("report_stdout")
    p = subprocess.run([CLI, "report", dump, "--text", "-", "--json", os.path.join(cwd, "s.json")], cwd=cwd,
                       capture_output=True, text=True, timeout=30)
    check(p.returncode == 0 and "ncclscope summary" in p.stdout, "--text - prints the text", p.stdout[:80],
          "the summary")
    check(p.stdout.count("# ncclscope summary: collectives") == 1, "printed once",
          p.stdout.count("# ncclscope summary: collectives"), 1)
    check(not os.path.exists(os.path.join(cwd, "-")), "no file named '-'", os.listdir(cwd), "no '-'")


def t_dir_links():
    """A symbolic link to a trace of the same directory and a hard link to another: each named and skipped,
    the report goes on (not two runs), the export equals the directory's without them; a link to a trace
    elsewhere is read."""
    d = fresh("dir_links")
    dump = os.path.join(d, "dump")
    os.makedirs(dump)
    names = sorted(n for n in os.listdir(DUMP) if n.endswith(".nstrace"))
    check(len(names) >= 2, "the dump has two traces", names, ">= 2")
    for n in names:
        with open(os.path.join(DUMP, n), "rb") as a, open(os.path.join(dump, n), "wb") as b:
            b.write(a.read())
    ref = os.path.join(d, "ref.jsonl")
    p = run(["export", dump, "-o", ref])
    check(p is not None and p.returncode == 0, "export of the plain copy", p and p.returncode, 0)
    os.symlink(names[0], os.path.join(dump, "zz-link.nstrace"))
    os.link(os.path.join(dump, names[1]), os.path.join(dump, "zz-hard.nstrace"))  # the first name is kept
    p = run(["report", dump, "-q"])
    check(p is not None and p.returncode == 0 and "two runs" not in p.stderr, "report: exit 0, not two runs",
          p and (p.returncode, p.stderr[-300:]), 0)
    link_said = "%s/zz-link.nstrace is a symbolic link to %s/%s, which the directory holds: skipped" % (dump, dump,
                                                                                                    names[0])
    hard_said = "%s/zz-hard.nstrace is another name (a hard link) of %s/%s" % (dump, dump, names[1])
    for cmd in ("report", "export"):
        p = run([cmd, dump, "-q"] if cmd == "report" else [cmd, dump, "-o", os.path.join(d, "links.jsonl")])
        check(p is not None and p.stderr.count(link_said) == 1 and p.stderr.count(hard_said) == 1,
              "%s names each second name once" % cmd, p and p.stderr[-400:], link_said)
    with open(ref) as a, open(os.path.join(d, "links.jsonl")) as b:
        check(a.read() == b.read(), "the export with the links equals the one without", None, "equal")
    # a link to a trace in another directory is the only name of that trace here: read
    other = os.path.join(d, "other")
    os.makedirs(other)
    os.symlink(os.path.join(dump, names[0]), os.path.join(other, names[0]))
    p = run(["export", other, "-o", os.path.join(d, "other.jsonl")])
    check(p is not None and p.returncode == 0 and "skipped" not in p.stderr, "a link to a trace elsewhere is read",
          p and p.stderr[-300:], "no skip")


def t_modes():
    """Modes are explicit: umask 000 still gives 0640; NCCLSCOPE_FILE_MODE chooses; a replaced file keeps its own."""
    d = fresh("modes")
    out = os.path.join(d, "a.jsonl")
    p = run(["export", DUMP, "-o", out], umask=0)
    check(p is not None and p.returncode == 0, "export succeeds", p and p.returncode, 0)
    m = stat.S_IMODE(os.stat(out).st_mode)
    check(m == 0o640, "umask 000: mode 0640", oct(m), "0o640")
    out2 = os.path.join(d, "b.jsonl")
    p = run(["export", DUMP, "-o", out2], env={"NCCLSCOPE_FILE_MODE": "0600"}, umask=0)
    m = stat.S_IMODE(os.stat(out2).st_mode)
    check(m == 0o600, "NCCLSCOPE_FILE_MODE=0600", oct(m), "0o600")
    out3 = os.path.join(d, "c.jsonl")
    p = run(["export", DUMP, "-o", out3], env={"NCCLSCOPE_FILE_MODE": "0777\n"}, umask=0)
    m = stat.S_IMODE(os.stat(out3).st_mode)
    check(m == 0o640 and "NCCLSCOPE_FILE_MODE" in p.stderr, "a bad NCCLSCOPE_FILE_MODE warns, uses 0640",
          (oct(m), p.stderr[-200:]), "0o640 and a warning")
    os.chmod(out, 0o604)
    p = run(["export", DUMP, "-o", out], umask=0o077)
    m = stat.S_IMODE(os.stat(out).st_mode)
    check(m == 0o604 or m == 0o600, "a replaced file keeps its mode (the umask may narrow it)", oct(m), "0o604")


CASES = [t_tmp_symlink, t_tmp_fifo, t_out_symlink, t_out_fifo_reader, t_out_fifo_no_reader, t_out_device,
         t_report_planted, t_dir_links, t_modes]

if __name__ == "__main__":
    for c in CASES:
        print("case", c.__name__[2:])
        c()
    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        sys.exit(1)
    print("ok: %d cases" % len(CASES))
