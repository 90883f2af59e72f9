#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`export --merge-kineto` given Kineto traces an adversary would write.

usage: check_kineto_inputs.py NCCLSCOPE DUMP TRUTH PID CHECK_KINETO

1. Long values: a top-level member and an event argument of 1 MiB each (and
   strings with every escape JSON has). The Chrome merge, aligned and not,
   holds every member and event of the trace unchanged (check_kineto.py
   check) and loads as JSON; the Perfetto merge is written, the two
   arguments too long for its annotations named on stderr.
2. Memory: a 2 MiB gzip that inflates to 2 GiB is refused once it passes the
   limit (1024 MiB by default; --merge-max-mb, NCCLSCOPE_MERGE_MAX_MB), the
   limit named with how to raise it, and the process's peak resident memory
   (wait4's ru_maxrss) stays within the limit plus BASE_MIB (not checked in
   a sanitizer build, whose allocator holds freed memory); a plain file
   over the limit is refused before it is read; a trace of small events
   whose index would pass the limit is refused. Bad limits are usage errors
   (flag) or a warning and the default (variable).
3. Strings and values that are not JSON (a raw control byte, NUL, bytes that
   are not UTF-8, a \\u escape without 4 hex digits, an unknown escape, a
   bad literal): refused (exit 1) with the line and column of the fault and
   what it is, and nothing written.
Exits 1 with the first problem."""
import gzip
import json
import os
import subprocess
import sys
import time
import zlib

NCCLSCOPE, DUMP, TRUTH, PID, CHECK_KINETO = sys.argv[1:6]
BASE_MIB = 48  # ncclscope itself beside the trace (its code, the recording's reader, the output buffers), and
# this script as the child shared it when it forked
MIB = 1 << 20


def sanitized():
    """A sanitizer build's allocator keeps freed memory in quarantine and adds shadow memory: its peak RSS
    says nothing of the limit, which the messages still show."""
    try:
        out = subprocess.run(["ldd", NCCLSCOPE], capture_output=True, text=True).stdout
    except OSError:
        return False
    return "libasan" in out or "libtsan" in out


SANITIZED = sanitized()


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(args, env_extra=None):
    """(exit status, stderr, peak RSS in MiB) of ncclscope ARGS."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NCCLSCOPE_")}
    env.update(env_extra or {})
    with open("stderr.txt", "wb") as err:
        p = subprocess.Popen([NCCLSCOPE] + args, stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    with open("stderr.txt", errors="replace") as f:
        text = f.read()
    return p.returncode, text, usage.ru_maxrss / 1024.0


def expect(args, rc, needles, env_extra=None, out=None):
    got, err, rss = run(args, env_extra)
    if got != rc:
        fail("%s exited %d, want %d:\n%s" % (" ".join(args), got, rc, err))
    for n in needles:
        if n not in err:
            fail("%s: no %r on stderr:\n%s" % (" ".join(args), n, err))
    if out and rc != 0 and os.path.exists(out):
        fail("%s: refused, but %s was written" % (" ".join(args), out))
    return err, rss


def make(out, *extra):
    subprocess.run([sys.executable, CHECK_KINETO, "make", "--truth", TRUTH, "--pid", PID, "--out", out] + list(extra),
                   check=True)


def long_values():
    make("long.json", "--long-bytes", str(MIB))
    make("long-other-run.json", "--long-bytes", str(MIB), "--shift-s", "86400")
    expect(["export", DUMP, "--format", "chrome", "-o", "plain.json"], 0, [])
    for trace, flags in (("long.json", []), ("long-other-run.json", ["--merge-unaligned"])):
        expect(["export", DUMP, "--format", "chrome", "--merge-kineto", trace, "-o", "long-merged.json"] + flags, 0, [])
        with open("long-merged.json") as f:
            json.load(f)
        subprocess.run([sys.executable, CHECK_KINETO, "check", "--truth", TRUTH, "--pid", PID, "--kineto", trace,
                        "--merged", "long-merged.json"] + (["--unaligned"] if flags else ["--plain", "plain.json"]), check=True)
        for fmt in ("perfetto", "perfetto --no-compress"):
            expect(["export", DUMP, "--format"] + fmt.split() + ["--merge-kineto", trace, "-o", "long.pftrace"] + flags,
                   0, ["2 event(s) drawn without their arguments (over 64 KiB as JSON; --format chrome keeps them)"])
            if os.path.getsize("long.pftrace") < 10000:
                fail("%s: a perfetto merge of %d bytes" % (trace, os.path.getsize("long.pftrace")))
    # the same trace through a pipe (no size known up front): the same merge
    with open("long.json", "rb") as f:
        p = subprocess.run([NCCLSCOPE, "export", DUMP, "--format", "chrome", "--merge-kineto", "/dev/stdin", "-o",
                            "long-piped.json"], stdin=f, capture_output=True, text=True)
    if p.returncode != 0:
        fail("a trace through a pipe: exit %d\n%s" % (p.returncode, p.stderr))
    with open("long-piped.json") as f:
        piped = json.load(f)
    subprocess.run([NCCLSCOPE, "export", DUMP, "--format", "chrome", "--merge-kineto", "long.json", "-o",
                    "long-file.json"], check=True, capture_output=True)
    with open("long-file.json") as f:
        from_file = json.load(f)
    piped["ncclscopeMerge"].pop("kinetoTrace", None), from_file["ncclscopeMerge"].pop("kinetoTrace", None)
    if piped != from_file:
        fail("the merge through a pipe differs from the merge of the file")
    print("long values: a member and an argument of 1 MiB merged unchanged (chrome, aligned and not, from a file "
          "and through a pipe), perfetto written and the two named")


def gzip_bomb(path, inflated_mib):
    """A gzip of members (each a valid gzip stream, as zlib reads them one after another): the JSON's head,
    then 1 MiB of blanks inflated_mib times, then its tail; about 1 KiB a MiB."""
    blank = gzip.compress(b" " * MIB, compresslevel=9)
    with open(path, "wb") as f:
        f.write(gzip.compress(b'{"traceEvents":['))
        for _ in range(inflated_mib):
            f.write(blank)
        f.write(gzip.compress(b"]}"))


def memory():
    gzip_bomb("bomb.json.gz", 2048)
    size = os.path.getsize("bomb.json.gz")
    raise_it = "raise it with --merge-max-mb N or NCCLSCOPE_MERGE_MAX_MB=N"
    cases = [(1024, [], None), (64, ["--merge-max-mb", "64"], None), (64, [], {"NCCLSCOPE_MERGE_MAX_MB": "64"})]
    if SANITIZED:  # the default limit's GiB of inflating is a minute there, and no peak is checked: the small ones
        cases = cases[1:]
    for limit, flags, env in cases:
        t0 = time.time()
        _, rss = expect(["export", DUMP, "--format", "chrome", "--merge-kineto", "bomb.json.gz", "-o", "b.json"] + flags,
                        1, ["inflates (or reads) to more than the merge's memory limit of %d MiB" % limit, raise_it],
                        env, "b.json")
        if rss > limit + BASE_MIB and not SANITIZED:
            fail("the bomb under a %d MiB limit took %.0f MiB" % (limit, rss))
        print("gzip bomb (%d KiB, 2 GiB inflated), limit %d MiB%s: refused after %.1f s, peak RSS %.0f MiB" %
              (size >> 10, limit, " (variable)" if env else "", time.time() - t0, rss))
    # a plain file over the limit: refused before it is read (sparse: no disk)
    with open("big.json", "wb") as f:
        f.write(b'{"traceEvents":[')
        f.truncate(1100 * MIB)
    _, rss = expect(["export", DUMP, "--format", "chrome", "--merge-kineto", "big.json", "-o", "b.json"], 1,
                    ["1100.0 MiB of JSON is over the merge's memory limit of 1024 MiB", raise_it], None, "b.json")
    if rss > BASE_MIB and not SANITIZED:
        fail("a plain file refused by its size took %.0f MiB" % rss)
    plain_rss = rss
    # 600,000 small events: 9 MiB of JSON, an index of about 120 MiB
    with open("many.json", "w") as f:
        f.write('{"traceEvents":[' + ",".join(['{"ph":"i"}'] * 600000) + "]}")
    _, rss = expect(["export", DUMP, "--format", "chrome", "--merge-kineto", "many.json", "-o", "b.json",
                     "--merge-max-mb", "32"], 1,
                    ["the index of its events", "pass the merge's memory limit of 32 MiB", raise_it], None, "b.json")
    if rss > 32 + BASE_MIB and not SANITIZED:
        fail("the index refused under 32 MiB took %.0f MiB" % rss)
    print("plain file over the limit refused unread (peak RSS %.0f MiB); an index past 32 MiB refused (%.0f MiB)" %
          (plain_rss, rss))
    for bad in ("0", "15", "1048577", "lots", ""):
        expect(["export", DUMP, "--format", "chrome", "--merge-kineto", "many.json", "--merge-max-mb", bad], 2,
               ["--merge-max-mb wants a number of MiB in [16, 1048576], not '%s'" % bad])
    expect(["export", DUMP, "--merge-max-mb", "64"], 2, ["--merge-max-mb goes with --merge-kineto TRACE"])
    expect(["export", DUMP, "--format", "chrome", "--merge-kineto", "bomb.json.gz", "-o", "b.json"], 1,
           ['NCCLSCOPE_MERGE_MAX_MB="lots" is not a number in [16, 1048576] (decimal, or hex with 0x); using the '
            "default 1024", "memory limit of 1024 MiB"], {"NCCLSCOPE_MERGE_MAX_MB": "lots"}, "b.json")


def malformed():
    head = b'{"schemaVersion": 1,\n "traceEvents": [\n  {"ph": "X", "name": "ok", "ts": 1, "dur": 2},\n  '
    cases = [  # (the event, where in it the fault is, what stderr says)
        (b'{"ph": "X", "name": "a\x01b"}', b"\x01", "a control character not escaped in a string (byte 0x01)"),
        (b'{"ph": "X", "name": "a\x00b"}', b"\x00", "a NUL byte in a string (byte 0x00)"),
        (b'{"ph": "X", "name": "caf\xe9"}', b"\xe9", "bytes that are not UTF-8 in a string (byte 0xe9)"),
        (b'{"ph": "X", "name": "\xed\xa0\x80"}', b"\xed", "bytes that are not UTF-8 in a string (byte 0xed)"),
        (b'{"ph": "X", "name": "x\\uZZZZ"}', b"\\u", "a \\u escape without 4 hex digits"),
        (b'{"ph": "X", "name": "x\\q"}', b"\\q", "an escape JSON does not have"),
        (b'{"ph": "X", "ts": 01}', b"1}", "no ',' or '}' after a member (byte 0x31)"),
        (b'{"ph": "X", "ts": tru}', b"tru", "no JSON value here (byte 0x74)"),
    ]
    for body, where, what in cases:
        with open("bad.json", "wb") as f:
            f.write(head + body + b"\n ]\n}\n")
        col = 3 + body.index(where)  # the line starts with two blanks; columns count from 1
        expect(["export", DUMP, "--format", "chrome", "--merge-kineto", "bad.json", "-o", "bad-out.json"], 1,
               ["bad.json: malformed JSON at line 4, column %d " % col, what], None, "bad-out.json")
    print("malformed: %d kinds refused with line, column and fault" % len(cases))


# memory first: wait4's peak of a child counts the pages it shared with this process when it forked, so this
# process must still be small then (long_values loads merges of several MiB)
memory()
malformed()
long_values()
print("ok")
