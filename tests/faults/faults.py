#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ncclscope fault tests: the host misbehaves, the plugin must survive and say so.

Usage: faults.py BUILD_DIR CASE. Each ctest entry runs one CASE in its own
process (with a ctest TIMEOUT). NCCL is played by ncclscope-sim (or, for what
the simulator cannot do, by fault_driver); traces are read back with
ns-trace-stats and `ncclscope export`. Assertions print both sides. No
assertion is about time: "never blocked" means the run finishes.
"""
import glob
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checklib import temp_under_one_dir  # noqa: E402

temp_under_one_dir("nsfaults-")

BUILD = sys.argv[1]
CASE = sys.argv[2]
SIM = os.path.join(BUILD, "ncclscope-sim")
PLUGIN = os.path.join(BUILD, "libnccl-profiler-ncclscope.so")
STATS = os.path.join(BUILD, "ns-trace-stats")
CLI = os.path.join(BUILD, "ncclscope")
DRIVER = os.path.join(BUILD, "ns-fault-driver")
SKIP = 77
FAILS = []
TYPES = ["Group", "Coll", "P2p", "ProxyOp", "ProxyStep", "ProxyCtrl", "KernelCh", "NetPlugin", "GroupApi",
         "CollApi", "P2pApi", "KernelLaunch", "CeColl", "CeSync", "CeBatch"]


def check(cond, what, got=None, want=None):
    if not cond:
        FAILS.append("FAIL %s: got %r want %r" % (what, got, want))
        print(FAILS[-1])


def eq(got, want, what):
    check(got == want, what, got, want)


def env_with(**kw):
    e = dict(os.environ)
    e.pop("NCCL_PROFILER_PLUGIN", None)
    e["NCCLSCOPE_NO_CUDA"] = "1"
    e["NCCL_DEBUG"] = "WARN"
    e.update({k: str(v) for k, v in kw.items()})
    return e


def sim(args, preexec=None, with_truth=True, **env):
    tmp = tempfile.mkdtemp(prefix="nsfault")
    truth = os.path.join(tmp, "truth.jsonl")
    cmd = [SIM, "--plugin", PLUGIN, "--nccl", "ideal"] + (["--truth", truth] if with_truth else []) + args
    p = subprocess.run(cmd, env=env_with(**env), capture_output=True, text=True, timeout=240, preexec_fn=preexec)
    tr = [json.loads(l) for l in open(truth)] if os.path.exists(truth) else []
    return p, tr


def stats(path):
    p = subprocess.run([STATS, path], capture_output=True, text=True, timeout=120)
    return json.loads(p.stdout) if p.stdout.strip() else {}


def truth_calls_by_type(tr):
    """starts + stops + records the simulator made on the plugin, per type name."""
    calls = {}
    for l in tr:
        if l["kind"] != "counts":
            continue
        n = l["starts"] + l["stops"] + sum(l["states"].values())
        calls[l["type"]] = calls.get(l["type"], 0) + n
    return calls


def traces(d):
    return sorted(glob.glob(os.path.join(d, "*.nstrace")))


def one_trace(d):
    """The one trace file of d (checked: exactly one) and its stats; (None, None) when there is none."""
    f = traces(d)
    eq(len(f), 1, "one trace file")
    return (f[0], stats(f[0])) if f else (None, None)


# ---- dump directory cannot be created: init never fails ----
RELEASES = ["2.23", "2.26", "2.27", "2.28", "2.29", "2.30"]


def unwritable(dump, expect_in_warning=None):
    """Every NCCL release: init answers success with a context that records nothing (a failed
    init crashes 2.23-2.27 at teardown and makes 2.30 unload the library under live contexts);
    one warning names the cause; the run exits 0 with no 'would crash'."""
    for rel in RELEASES:
        tmp = tempfile.mkdtemp(prefix="nsfault")
        truth = os.path.join(tmp, "truth.jsonl")
        cmd = [SIM, "--plugin", PLUGIN, "--nccl", rel, "--truth", truth, "--fast", "--iters", "1"]
        p = subprocess.run(cmd, env=env_with(NCCLSCOPE_DUMP_DIR=dump), capture_output=True, text=True, timeout=240)
        tr = [json.loads(l) for l in open(truth)] if os.path.exists(truth) else []
        eq(p.returncode, 0, "%s: simulator exit status (stderr=%s)" % (rel, p.stderr[-300:]))
        check("would crash" not in p.stderr and "underflow" not in p.stderr, "%s: no crash foreseen" % rel,
              p.stderr[-300:], "none")
        inits = [l for l in tr if l["kind"] == "init"]
        check(len(inits) > 1, "%s: init calls" % rel, len(inits), "> 1")
        eq([l["result"] for l in inits if l["result"] != 0], [], "%s: every init succeeds" % rel)
        warns = [l for l in p.stderr.splitlines() if "NCCLSCOPE" in l and "WARN" in l]
        eq(len(warns), 1, "%s: one warning for the process (%s)" % (rel, warns))
        check(warns and (expect_in_warning or dump) in warns[0], "%s: the warning names the cause" % rel,
              warns[:1], expect_in_warning or dump)
        eq(len([l for l in tr if l["kind"] == "start"]), 0, "%s: NCCL offers no event (mask 0)" % rel)


def t_dir_unwritable():
    tmp = tempfile.mkdtemp(prefix="nsfault")
    blocker = os.path.join(tmp, "a-file")
    open(blocker, "w").close()
    unwritable(os.path.join(blocker, "dump"))  # a regular file in the path: ENOTDIR even for root


def t_dir_dev_full():
    unwritable("/dev/full")


def t_dir_symlink():
    """A symlink planted as the dump directory is refused, not followed."""
    tmp = tempfile.mkdtemp(prefix="nsfault")
    target = os.path.join(tmp, "elsewhere")
    os.mkdir(target)
    link = os.path.join(tmp, "dump")
    os.symlink(target, link)
    unwritable(link, "symbolic link")
    eq(os.listdir(target), [], "nothing written through the link")


def host_name():
    return socket.gethostname().replace("/", "_")[:64]


def plant(dump, make):
    """preexec for the simulator: plants files named after its own pid before it runs."""
    def pre():
        make(dump, host_name(), os.getpid())
    return pre


def t_summary_planted():
    """Links and FIFOs planted at the summary files' old temporary names: never followed, never waited on."""
    dump = tempfile.mkdtemp(prefix="nsfault")
    victim = os.path.join(tempfile.mkdtemp(prefix="nsfault"), "victim")
    with open(victim, "w") as f:
        f.write("precious\n")

    def make(d, host, pid):
        os.symlink(victim, os.path.join(d, "summary-%s-%d.txt.tmp" % (host, pid)))
        os.mkfifo(os.path.join(d, "summary-%s-%d.json.tmp" % (host, pid)))
        os.symlink(victim, os.path.join(d, "summary-%s-%d.txt" % (host, pid)))

    cmd = [SIM, "--plugin", PLUGIN, "--nccl", "ideal", "--fast", "--iters", "1"]
    try:
        p = subprocess.run(cmd, env=env_with(NCCLSCOPE_DUMP_DIR=dump), capture_output=True, text=True, timeout=60,
                           preexec_fn=plant(dump, make))
    except subprocess.TimeoutExpired:
        check(False, "the run finishes (no hang on the planted FIFO)", "timeout", "finished")
        return
    eq(p.returncode, 0, "simulator exit status (stderr=%s)" % p.stderr[-300:])
    eq(open(victim).read(), "precious\n", "the planted links' target is untouched")
    txt = [n for n in os.listdir(dump) if n.startswith("summary-") and n.endswith(".txt")
           and not os.path.islink(os.path.join(dump, n))]
    eq(len(txt), 1, "one text summary, a regular file beside the planted link (whose name is taken)")
    if txt:
        check(os.path.isfile(os.path.join(dump, txt[0])), "the summary is a regular file", txt[0], "a regular file")
    check(any(n.endswith(".json") for n in os.listdir(dump)), "the JSON summary is written", os.listdir(dump),
          "summary-*.json")


def t_modes():
    """umask 000: traces and summaries 0640, directories 0750; NCCLSCOPE_FILE_MODE chooses."""
    for env_mode, fmode, dmode in ((None, 0o640, 0o750), ("0600", 0o600, 0o700), ("0644", 0o644, 0o755)):
        root = tempfile.mkdtemp(prefix="nsfault")
        dump = os.path.join(root, "a", "b")
        env = {"NCCLSCOPE_DUMP_DIR": dump}
        if env_mode:
            env["NCCLSCOPE_FILE_MODE"] = env_mode
        p, tr = sim(["--fast", "--iters", "1"], preexec=lambda: os.umask(0), **env)
        eq(p.returncode, 0, "simulator exit status (stderr=%s)" % p.stderr[-300:])
        for d in (os.path.join(root, "a"), dump):
            eq(oct(os.stat(d).st_mode & 0o777), oct(dmode), "directory %s (FILE_MODE=%s)" % (d, env_mode))
        files = os.listdir(dump)
        check(len(files) >= 3, "trace and summaries", files, ">= 3 files")
        for n in files:
            eq(oct(os.stat(os.path.join(dump, n)).st_mode & 0o777), oct(fmode), "%s (FILE_MODE=%s)" % (n, env_mode))


def t_long_dump_dir():
    """A dump directory path of 964 characters (well under PATH_MAX) is used, not replaced by the default."""
    root = tempfile.mkdtemp(prefix="nsfault")
    dump = root
    while len(dump) < 964:
        dump = os.path.join(dump, "d" * min(200, 963 - len(dump)))
    dump = dump[:964]
    cwd = tempfile.mkdtemp(prefix="nsfault")
    cmd = [SIM, "--plugin", PLUGIN, "--nccl", "ideal", "--fast", "--iters", "1"]
    p = subprocess.run(cmd, env=env_with(NCCLSCOPE_DUMP_DIR=dump), capture_output=True, text=True, timeout=120,
                       cwd=cwd)
    eq(p.returncode, 0, "simulator exit status (stderr=%s)" % p.stderr[-300:])
    eq(len(dump), 964, "path length")
    eq(len(traces(dump)), 1, "the trace is in the long directory")
    eq(os.listdir(cwd), [], "nothing in the current directory")


def t_config_warnings():
    """Every variable validated; one warning per bad variable for the whole process (however many
    communicators), naming it, the value escaped and the value used; a newline cannot forge a line."""
    dump = tempfile.mkdtemp(prefix="nsfault")
    bad = {
        "NCCLSCOPE_WINDOW_SEC": ("abc", "using the default 10"),
        "NCCLSCOPE_TOP_LINKS": ("-3", "using the default 16"),
        "NCCLSCOPE_MAX_SERIES": ("5", "using the default 4000"),
        "NCCLSCOPE_PROM_KEEP": ("sometimes", "using the default 0"),
        "NCCLSCOPE_OTLP": ("sometimes", "using 0"),
        "OTEL_EXPORTER_OTLP_PROTOCOL": ("grpc", "using http/protobuf"),
        "OTEL_EXPORTER_OTLP_TIMEOUT": ("10s", "using 10000"),
        "OTEL_EXPORTER_OTLP_COMPRESSION": ("zstd", "using none"),
        "OTEL_EXPORTER_OTLP_HEADERS": ("novalue", "using no extra headers"),
        "OTEL_RESOURCE_ATTRIBUTES": ("a=%zz", "using none of them"),
        "NCCLSCOPE_ANALYSIS": ("2", "using the default 1"),
        "NCCLSCOPE_NO_CUDA": ("maybe", "using the default 0"),
        "NCCLSCOPE_EVENT_MASK": ("0x17FFF", "using 0x7fff"),
        "NCCLSCOPE_RING_KB": ("12\nNCCL WARN forged line", "using the default 4096"),
        "NCCLSCOPE_CLOCK": ("fast", "using the default auto"),
        "NCCLSCOPE_FILE_MODE": ("0400", "using the default 0640"),
        "NCCLSCOPE_FR_ENTRIES": ("-3", "using the default 2000"),
        "NCCLSCOPE_HANG_TIMEOUT_SEC": ("0.001", "using the default 60"),
        "NCCLSCOPE_DUMP_SIGNAL": ("SIGKILL", "using the default 10 (SIGUSR1)"),
    }
    env = {k: v for k, (v, _) in bad.items()}
    env["NCCLSCOPE_DUMP_DIR"] = dump
    # the default scenario's communicators come and go: sessions start and stop several times
    p, tr = sim(["--fast", "--iters", "2", "--procs", "1"], **env)
    eq(p.returncode, 0, "simulator exit status (stderr=%s)" % p.stderr[-300:])
    sessions = len([l for l in tr if l["kind"] == "init"])
    check(sessions > 1, "several communicators", sessions, "> 1")
    lines = p.stderr.splitlines()
    check(not any(l.startswith("NCCL WARN forged") for l in lines), "no forged log line", lines[-5:], "none")
    for name, (value, used) in bad.items():
        secret = name == "OTEL_EXPORTER_OTLP_HEADERS"  # header values are credentials: never quoted
        mine = [l for l in lines if (name + " " if secret else name + "=") in l]
        eq(len(mine), 1, "%s: one warning (%s)" % (name, mine))
        if mine:
            check(used in mine[0], "%s: names the value used" % name, mine[0], used)
            shown = value.replace("\n", "\\x0a")
            if secret:
                check(value not in mine[0], "%s: the value is not in the log" % name, mine[0], "no " + value)
            else:
                check('"%s"' % shown in mine[0], "%s: quotes the value, escaped" % name, mine[0], shown)
    # and they took effect as said: the default ring, the analysis on (a summary), monotonic
    check(any(n.startswith("summary-") for n in os.listdir(dump)), "NCCLSCOPE_ANALYSIS=2 -> on (summary written)",
          os.listdir(dump), "summary-*")
    # values that are valid are taken without a word
    p, tr = sim(["--fast", "--iters", "1"], NCCLSCOPE_DUMP_DIR=tempfile.mkdtemp(prefix="nsfault"),
                NCCLSCOPE_ANALYSIS="false", NCCLSCOPE_NO_CUDA="no", NCCLSCOPE_WINDOW_SEC="0.5",
                NCCLSCOPE_FR_ENTRIES="0", NCCLSCOPE_HANG_TIMEOUT_SEC="2.5", NCCLSCOPE_DUMP_SIGNAL="usr2")
    warns = [l for l in p.stderr.splitlines() if "NCCLSCOPE" in l and "WARN" in l]
    eq(warns, [], "valid values: no warning")


def t_config_values():
    """Numbers are decimal unless they start with 0x (a leading 0 is not octal); seconds are decimal
    (no hex float, inf or nan); a garbage LOCAL_RANK is warned about, naming what is used; every
    unknown NCCLSCOPE_* variable gets one warning naming the closest known one; with NCCL_DEBUG
    unset (NCCL then prints nothing) the warnings still reach stderr, once each."""
    base = [SIM, "--plugin", PLUGIN, "--nccl", "ideal", "--fast", "--iters", "2", "--procs", "1"]

    def run(nccl_debug, **kw):
        env = env_with(NCCLSCOPE_DUMP_DIR=tempfile.mkdtemp(prefix="nsfault"), **kw)
        if nccl_debug is None:
            env.pop("NCCL_DEBUG", None)
        else:
            env["NCCL_DEBUG"] = nccl_debug
        p = subprocess.run(base, env=env, capture_output=True, text=True, timeout=120)
        eq(p.returncode, 0, "simulator exit status (stderr=%s)" % p.stderr[-300:])
        return p.stderr.splitlines()

    # a leading zero: decimal; 0x: hex; taken without a word (the INFO line says what is used)
    lines = run("INFO", NCCLSCOPE_RING_KB="0100", NCCLSCOPE_MAX_THREADS="010", NCCLSCOPE_EVENT_MASK="010")
    info = [l for l in lines if "NCCLSCOPE tracing to" in l]
    check(info and "rings 10 x 100 KiB" in info[0], "RING_KB=0100, MAX_THREADS=010: decimal", info[:1],
          "rings 10 x 100 KiB")
    check(info and "event mask 0xa " in info[0], "EVENT_MASK=010: decimal 10", info[:1], "event mask 0xa")
    eq([l for l in lines if "WARN" in l and "NCCLSCOPE" in l], [], "decimal values: no warning")
    lines = run("INFO", NCCLSCOPE_EVENT_MASK="0x10", NCCLSCOPE_RING_KB="0x40")
    info = [l for l in lines if "NCCLSCOPE tracing to" in l]
    check(info and "event mask 0x10 " in info[0] and "x 64 KiB" in info[0], "0x: hex", info[:1], "0x10, 64 KiB")

    bad = {  # variable: (value, what the warning must say)
        "NCCLSCOPE_WINDOW_SEC": ("0x1p-3", "using the default 10"),
        "NCCLSCOPE_HANG_TIMEOUT_SEC": ("inf", "using the default 60"),
        "LOCAL_RANK": ("rank0", "using SLURM_LOCALID=3"),
        "NCCLSCOPE_RING_K": ("8", "the closest one is NCCLSCOPE_RING_KB"),
        "NCCLSCOPE_DUMPDIR": ("/tmp/x", "the closest one is NCCLSCOPE_DUMP_DIR"),
        "NCCLSCOPE_HANG_TIMEOUT": ("5", "the closest one is NCCLSCOPE_HANG_TIMEOUT_SEC"),
    }
    env = {k: v for k, (v, _) in bad.items()}
    env["SLURM_LOCALID"] = "3"
    for dbg, prefix in (("WARN", "NCCL WARN NCCLSCOPE "), (None, "NCCLSCOPE WARN ")):
        lines = run(dbg, **env)
        for name, (value, says) in bad.items():
            sep = " " if "closest" in says else "="  # an unknown name is shown without its value
            mine = [l for l in lines if l.startswith(prefix + name + sep)]
            eq(len(mine), 1, "NCCL_DEBUG=%s: %s: one warning, at WARN (%s)" % (dbg, name, lines[-8:]))
            if mine:
                check(says in mine[0], "NCCL_DEBUG=%s: %s: says %r" % (dbg, name, says), mine[0], says)
        dup = [l for l in lines if l.startswith("NCCLSCOPE WARN")] if dbg else []
        eq(dup, [], "NCCL_DEBUG=WARN: NCCL shows the warnings, they are not repeated on stderr")
    lines = run("WARN", LOCAL_RANK="-1")
    mine = [l for l in lines if "LOCAL_RANK=" in l]
    check(mine and "using no nccl.local_rank" in mine[0], "LOCAL_RANK alone and bad: says none is used", mine,
          "using no nccl.local_rank")


# ---- the disk fills up during the run ----
def full_disk_expectations(p, dump, limit):
    eq(p.returncode, 0, "simulator exit status stderr=%s" % p.stderr[-300:])
    warns = [l for l in p.stderr.splitlines() if "failed" in l and "NCCLSCOPE" in l and ".nstrace" in l]
    eq(len(warns), 1, "exactly one write-failure warning for the trace (%s)" % warns)
    wins = [l for l in p.stderr.splitlines() if "failed" in l and "NCCLSCOPE" in l and "windows-" in l]
    check(len(wins) <= 1, "at most one for windows.jsonl", wins, "<= 1")
    ends = [l for l in p.stderr.splitlines() if "NCCLSCOPE" in l and "is incomplete" in l]
    eq(len(ends), 1, "the last warning says the trace is incomplete (%s)" % ends)
    check("complete" not in " ".join(l.replace("incomplete", "") for l in p.stderr.splitlines()),
          "nothing says the trace is complete", p.stderr[-400:], "no 'complete'")
    path, s = one_trace(dump)
    if path:
        size = os.path.getsize(path)
        check(size <= limit, "trace size within the disk", size, "<= %d" % limit)
        eq(s.get("unreadable"), 0, "the trace is readable up to where the disk filled")
        check(s.get("records", 0) > 0, "records before the disk filled", s.get("records"), "> 0")
        eq(s.get("clean_end"), 0, "no clean end (END block could not be written)")


def t_disk_full_rlimit():
    """RLIMIT_FSIZE plays a full disk: writes past it fail with EFBIG (SIGXFSZ ignored, as a
    full disk sends no signal)."""
    dump = tempfile.mkdtemp(prefix="nsfault")
    limit = 64 * 1024

    def pre():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    # no truth file: the limit would cut it too
    p, tr = sim(["--fast", "--iters", "10"], preexec=pre, with_truth=False, NCCLSCOPE_DUMP_DIR=dump,
                NCCLSCOPE_FLUSH_MS=10)
    full_disk_expectations(p, dump, limit)


def t_disk_full_recovers():
    """The disk fills, then space returns (RLIMIT_FSIZE raised from outside with prlimit): the writer
    held what the file refused, writes it once it can, and the trace ends complete with every event."""
    dump = tempfile.mkdtemp(prefix="nsfault")
    limit = 96 * 1024

    def pre():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    tmp = tempfile.mkdtemp(prefix="nsfault")
    truth = os.path.join(tmp, "truth.jsonl")
    # long enough (about 2 s) that the limit is lifted while it runs; an outage of 0.15 s fits in what the
    # writer holds (NS_TRACE_HELD_MAX) at any speed of this machine
    cmd = [SIM, "--plugin", PLUGIN, "--nccl", "ideal", "--iters", "100"]
    # the truth file is written at the end, after the limit is lifted
    p = subprocess.Popen(cmd + ["--truth", truth], env=env_with(NCCLSCOPE_DUMP_DIR=dump, NCCLSCOPE_FLUSH_MS=10),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=pre)
    seen = []
    for line in p.stderr:
        seen.append(line)
        if "NCCLSCOPE" in line and "failed" in line:
            time.sleep(0.15)  # the disk stays full for a while
            resource.prlimit(p.pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
            break
    rest = p.communicate(timeout=200)[1]
    err = "".join(seen) + rest
    eq(p.returncode, 0, "simulator exit status (stderr=%s)" % err[-300:])
    check(any("failed" in l for l in seen), "the disk filled", err[-300:], "a write-failure warning")
    check("works again" in err, "the writer says writing works again", err[-400:], "works again")
    check("is incomplete" not in err, "no incomplete-trace warning", err[-400:], "none")
    path, s = one_trace(dump)
    if not path:
        return
    eq(s.get("clean_end"), 1, "the trace ends with its END block")
    eq(s.get("bytes_cut", 0) + s.get("bytes_skipped", 0), 0, "no damage in it")
    eq(s.get("seq_gaps"), 0, "no block missing")
    check(s.get("write_errors", 0) >= 1, "COUNTERS counts the write error", s.get("write_errors"), ">= 1")
    eq(s.get("bytes_lost"), 0, "nothing lost (the outage fit in the held buffer)")
    tr = [json.loads(l) for l in open(truth)] if os.path.exists(truth) else []
    calls = truth_calls_by_type(tr)
    for i, name in enumerate(TYPES):
        made = calls.get(name, 0)
        eq(s["records_by_type"][i] + s["type_dropped"][i], made, "%s: recorded + dropped = calls made" % name)


def t_disk_full_tmpfs():
    """A real 64 KiB tmpfs in a private mount namespace (skipped where mounting is not allowed)."""
    if not shutil.which("unshare"):
        sys.exit(SKIP)
    tmp = tempfile.mkdtemp(prefix="nsfault")
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs %s" % tmp],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        print("skip: cannot mount a tmpfs here (%s)" % probe.stderr.strip())
        sys.exit(SKIP)
    truth = os.path.join(tempfile.mkdtemp(prefix="nsfault"), "truth.jsonl")
    out = tempfile.mkdtemp(prefix="nsfault")
    script = ("mount -t tmpfs -o size=64k tmpfs {d} && {sim} --plugin {pl} --truth {t} --fast --iters 10; rc=$?; "
              "cp {d}/*.nstrace {o}/ 2>/dev/null; exit $rc").format(d=tmp, sim=SIM, pl=PLUGIN, t=truth, o=out)
    p = subprocess.run(["unshare", "-m", "sh", "-c", script], env=env_with(NCCLSCOPE_DUMP_DIR=tmp,
                       NCCLSCOPE_FLUSH_MS=10), capture_output=True, text=True, timeout=240)
    full_disk_expectations(p, out, 64 * 1024)


# ---- the trace file (or its directory) is deleted during the run ----
def deleted(remove_dir):
    dump = tempfile.mkdtemp(prefix="nsfault")
    tmp = tempfile.mkdtemp(prefix="nsfault")
    truth = os.path.join(tmp, "truth.jsonl")
    cmd = [SIM, "--plugin", PLUGIN, "--nccl", "ideal", "--truth", truth, "--iters", "15"]
    p = subprocess.Popen(cmd, env=env_with(NCCLSCOPE_DUMP_DIR=dump, NCCLSCOPE_FLUSH_MS=20),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while not traces(dump) and time.time() < deadline and p.poll() is None:
        time.sleep(0.01)
    found = traces(dump)
    check(found, "trace file appeared while running", found, "one file")
    if remove_dir:
        shutil.rmtree(dump, ignore_errors=True)
    else:
        for f in found:
            os.unlink(f)
    out, err = p.communicate(timeout=200)
    eq(p.returncode, 0, "simulator exit status after deletion (stderr=%s)" % err[-300:])
    check("Sanitizer" not in err, "no sanitizer report", err[-300:], "none")
    if not remove_dir:
        eq(traces(dump), [], "the plugin does not recreate a deleted trace")


def t_file_deleted():
    deleted(False)


def t_dir_deleted():
    deleted(True)


# ---- SIGKILL mid-run: readable up to the last flush, export says what was cut ----
def t_sigkill():
    dump = tempfile.mkdtemp(prefix="nsfault")
    cmd = [SIM, "--plugin", PLUGIN, "--nccl", "ideal", "--iters", "400"]
    p = subprocess.Popen(cmd, env=env_with(NCCLSCOPE_DUMP_DIR=dump, NCCLSCOPE_FLUSH_MS=20),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 60
    while time.time() < deadline and p.poll() is None:
        f = traces(dump)
        if f and os.path.getsize(f[0]) > 20000:
            break
        time.sleep(0.01)
    check(p.poll() is None, "the simulator was still running when killed", p.poll(), None)
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=30)
    path, s = one_trace(dump)
    if not path:
        return
    eq(s.get("unreadable"), 0, "the killed trace opens")
    eq(s.get("clean_end"), 0, "no END block")
    check(s.get("records", 0) > 0, "records up to the last flush", s.get("records"), "> 0")
    eq(s.get("bytes_ok", 0) + s.get("bytes_cut", 0), s.get("file_size"), "valid + cut bytes = file size")
    eq(s.get("seq_gaps"), 0, "no block lost before the cut")
    out = os.path.join(dump, "out.jsonl")
    e = subprocess.run([CLI, "export", dump, "-o", out], capture_output=True, text=True, timeout=120)
    eq(e.returncode, 0, "export of a killed trace succeeds (stderr=%s)" % e.stderr[-300:])
    if s.get("bytes_cut", 0) > 0:
        check(str(s["bytes_cut"]) in e.stderr, "export states the cut bytes", e.stderr[-300:], s["bytes_cut"])
    else:
        check(e.stderr.strip() != "", "export says the trace did not end cleanly", e.stderr, "a warning")
    lines = sum(1 for _ in open(out)) if os.path.exists(out) else 0
    check(lines > 0, "export wrote the recorded part", lines, "> 0")


# ---- rings overflow under a flood: drops are counted exactly ----
def t_flood():
    dump = tempfile.mkdtemp(prefix="nsfault")
    p, tr = sim(["--fast", "--iters", "3", "--scenario", "threads"], NCCLSCOPE_DUMP_DIR=dump,
                NCCLSCOPE_RING_KB=4, NCCLSCOPE_EVENT_MASK="0x7FFF", NCCLSCOPE_POLL_MS=50)
    eq(p.returncode, 0, "simulator exit status (stderr=%s)" % p.stderr[-300:])
    s = stats(dump)
    check(s.get("dropped", 0) > 0, "the flood overflowed the rings", s.get("dropped"), "> 0")
    eq(s.get("seq_gaps"), 0, "no block lost")
    calls = truth_calls_by_type(tr)
    for i, name in enumerate(TYPES):
        made = calls.get(name, 0)
        got = s["records_by_type"][i] + s["type_dropped"][i]
        eq(got, made, "%s: recorded %d + dropped %d = calls made" % (name, s["records_by_type"][i],
                                                                     s["type_dropped"][i]))
    starts = sum(1 for l in tr if l["kind"] == "start")
    null_handles = sum(1 for l in tr if l["kind"] == "start" and l["handle_null"])
    eq(s.get("starts", 0) + null_handles, starts, "recorded starts + NULL handles = starts made")


# ---- what `ncclscope report` says was lost: the figures add up, against the simulator's truth ----
def report_loss(dump):
    """`ncclscope report` on dump: (exit status, summary.json's "loss", summary.txt's first lines)."""
    p = subprocess.run([CLI, "report", dump, "-q"], capture_output=True, text=True, timeout=240)
    path = os.path.join(dump, "summary.json")
    if not os.path.exists(path):
        check(False, "report wrote summary.json (rc %d, stderr %s)" % (p.returncode, p.stderr[-300:]))
        return p.returncode, {}, ""
    loss = json.load(open(path)).get("loss", {})
    head = "".join(open(os.path.join(dump, "summary.txt")).readlines()[:4])
    print("report: %s\n%s" % (loss, head))
    eq(loss.get("eventsInTrace", 0) + loss.get("eventsDropped", 0) + loss.get("eventsLostToWriteErrors", 0),
       loss.get("eventsSeen"), "in the trace + dropped + lost to write errors = seen")
    return p.returncode, loss, head


def plugin_recording(dump):
    """The plugin's own summary: its JSON's "recording" and its text's first line."""
    js = glob.glob(os.path.join(dump, "summary-*.json"))
    txt = glob.glob(os.path.join(dump, "summary-*.txt"))
    check(len(js) == 1 and len(txt) == 1, "one plugin summary", (js, txt), "one .json, one .txt")
    if len(js) != 1 or len(txt) != 1:
        return {}, ""
    return json.load(open(js[0])).get("recording", {}), open(txt[0]).readline()


def truth_starts(tr):
    return sum(l["starts"] for l in tr if l["kind"] == "counts")


def t_report_loss_drops():
    """Rings overflow: the events the report counts as dropped plus those in the trace are the starts
    the simulator made."""
    dump = tempfile.mkdtemp(prefix="nsfault")
    p, tr = sim(["--fast", "--iters", "3", "--scenario", "threads"], NCCLSCOPE_DUMP_DIR=dump,
                NCCLSCOPE_RING_KB=4, NCCLSCOPE_EVENT_MASK="0x7FFF", NCCLSCOPE_POLL_MS=50)
    eq(p.returncode, 0, "simulator exit status (stderr=%s)" % p.stderr[-300:])
    rc, loss, head = report_loss(dump)
    eq(rc, 0, "report exit status")
    check(loss.get("eventsDropped", 0) > 0, "the flood dropped events", loss.get("eventsDropped"), "> 0")
    eq(loss.get("eventsSeen"), truth_starts(tr), "events seen = starts the simulator made")
    null_handles = sum(1 for l in tr if l["kind"] == "start" and l["handle_null"])
    eq(loss.get("eventsDropped"), null_handles, "events dropped = starts that got no handle")
    eq(loss.get("eventsLostToWriteErrors"), 0, "nothing lost to the disk")
    eq(loss.get("complete"), False, "not complete")
    check("INCOMPLETE" in head.splitlines()[0], "summary.txt's first line says so", head, "INCOMPLETE")
    rec, first = plugin_recording(dump)
    eq(rec.get("events"), loss.get("eventsInTrace"), "the plugin's summary: events recorded = in the trace")
    check(rec.get("recordsDropped", 0) >= loss.get("eventsDropped", 0) > 0, "the plugin's summary: records dropped",
          rec.get("recordsDropped"), ">= events dropped")
    check(first.startswith("# recording: INCOMPLETE"), "the plugin's summary.txt says so first", first, "INCOMPLETE")


def cpu_seconds(pid):
    """User + system CPU time of a process, all its threads (0 once it is gone)."""
    try:
        f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def t_report_loss_disk():
    """The disk is full for a while, longer than the writer's 4 MiB of held data last: what it could
    not write is lost, and the report says how many events: seen = in the trace + lost, where seen
    is what the same workload makes (the simulator's --fast default scenario makes the same starts
    every iteration: two truth runs give them)."""
    per_run = []
    for iters in (1, 2):
        p, tr = sim(["--fast", "--iters", str(iters)], NCCLSCOPE_DUMP_DIR=tempfile.mkdtemp(prefix="nsfault"))
        per_run.append(truth_starts(tr))
    iters = 1200
    want = per_run[0] + (iters - 1) * (per_run[1] - per_run[0])
    # how much trace this build makes per CPU second of the run (a sanitizer's build: a fraction of
    # the plain one's), so that the disk stays full while the run makes 3 x the writer's 4 MiB held
    cal = tempfile.mkdtemp(prefix="nsfault")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p, _ = sim(["--fast", "--iters", "200"], with_truth=False, NCCLSCOPE_DUMP_DIR=cal)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    eq(p.returncode, 0, "calibration run's exit status (stderr=%s)" % p.stderr[-300:])
    cal_cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    cal_bytes = sum(os.path.getsize(os.path.join(cal, n)) for n in os.listdir(cal) if n.endswith(".nstrace"))
    full_cpu_s = max(2.5, 3 * 4 * 2**20 * cal_cpu / max(cal_bytes, 1))
    print("this build: %.1f MB of trace per CPU second; the disk stays full for %.1f s of the run's CPU"
          % (cal_bytes / 1e6 / max(cal_cpu, 1e-3), full_cpu_s))
    dump = tempfile.mkdtemp(prefix="nsfault")
    limit = 96 * 1024

    def pre():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    cmd = [SIM, "--plugin", PLUGIN, "--nccl", "ideal", "--fast", "--iters", str(iters)]
    p = subprocess.Popen(cmd, env=env_with(NCCLSCOPE_DUMP_DIR=dump, NCCLSCOPE_FLUSH_MS=10),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=pre)
    seen = []
    for line in p.stderr:
        seen.append(line)
        if "NCCLSCOPE" in line and "failed" in line:
            # full until the run has made well over the held 4 MiB: measured in its CPU time, which a
            # loaded machine does not stretch as it does wall time
            cpu0 = cpu_seconds(p.pid)
            while p.poll() is None and cpu_seconds(p.pid) - cpu0 < full_cpu_s:
                time.sleep(0.05)
            resource.prlimit(p.pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
            break
    err = "".join(seen) + p.communicate(timeout=200)[1]
    eq(p.returncode, 0, "simulator exit status (stderr=%s)" % err[-300:])
    check("works again" in err, "the disk took data again before the end", err[-400:], "works again")
    rc, loss, head = report_loss(dump)
    check(rc in (0, 4), "report exit status", rc, "0 or 4")
    check(loss.get("bytesLostToWriteErrors", 0) > 0, "bytes lost to the full disk",
          loss.get("bytesLostToWriteErrors"), "> 0")
    check(loss.get("eventsLostToWriteErrors", 0) > 0, "events lost to the full disk",
          loss.get("eventsLostToWriteErrors"), "> 0")
    eq(loss.get("eventsSeen"), want, "events seen = starts of %d iterations" % iters)
    eq(loss.get("complete"), False, "not complete")
    check("INCOMPLETE" in head.splitlines()[0], "summary.txt's first line says so", head, "INCOMPLETE")
    rec, first = plugin_recording(dump)
    eq(rec.get("bytesLostToWriteErrors"), loss.get("bytesLostToWriteErrors"), "the plugin's summary: bytes lost")
    check(first.startswith("# recording: INCOMPLETE") and str(loss.get("bytesLostToWriteErrors")) in first + open(
          glob.glob(os.path.join(dump, "summary-*.txt"))[0]).read(300), "the plugin's summary.txt says so first",
          first, "INCOMPLETE, the bytes lost")


# ---- PXN pointers into unmapped memory ----
def t_pxn_unmapped():
    dump = tempfile.mkdtemp(prefix="nsfault")
    p, tr = sim(["--fast", "--iters", "2", "--scenario", "pxn", "--procs", "1"], NCCLSCOPE_DUMP_DIR=dump,
                NCCLSCOPE_EVENT_MASK="0x7FFF")
    eq(p.returncode, 0, "simulator exit status (stderr=%s)" % p.stderr[-300:])
    pxn_ops = sum(1 for l in tr if l["kind"] == "start" and l["type"] == "ProxyOp" and l["pxn"])
    check(pxn_ops > 0, "the scenario made PXN ProxyOps", pxn_ops, "> 0")
    s = stats(dump)
    eq(s["pxn_starts_by_type"][3], pxn_ops, "every PXN ProxyOp recorded, flagged PXN")
    check(s["pxn_starts_by_type"][4] > 0, "their ProxySteps inherit PXN", s["pxn_starts_by_type"][4], "> 0")
    eq(s.get("dropped"), 0, "nothing dropped")


# ---- what only a hand-written NCCL can do ----
def driver(case):
    dump = tempfile.mkdtemp(prefix="nsfault")
    p = subprocess.run([DRIVER, PLUGIN, case], env=env_with(NCCLSCOPE_DUMP_DIR=dump), capture_output=True, text=True,
                       timeout=240)
    sys.stdout.write(p.stdout)
    eq(p.returncode, 0, "fault_driver %s (stderr=%s)" % (case, p.stderr[-400:]))
    return dump


def t_many_comms():
    driver("many_comms")


def t_init_race():
    dump = driver("init_race")
    s = stats(dump)
    eq(s.get("comms"), 64, "64 COMM_INIT blocks")
    eq(s.get("finis"), 64, "64 COMM_FINI blocks")
    eq(s.get("dropped"), 0, "nothing dropped")


def t_finalize_race():
    driver("finalize_race")


def t_stale_handles():
    driver("stale_handles")


def t_garbage():
    driver("garbage")


def pid_namespaces():
    """True when `unshare -p -f --mount-proc` works here (root, or user namespaces)."""
    try:
        p = subprocess.run(["unshare", "-p", "-f", "--mount-proc", "true"], capture_output=True, timeout=30)
        return p.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def t_pid_collision():
    """Two jobs whose processes have the same pids (two PID namespaces, one host name, one dump
    directory) at the same time: every process keeps its own trace, windows file, summary and
    flight record (none overwrites another's), and `report` reads them all. The two jobs run other
    seeds, so their communicators differ (one rank of one communicator in two traces is a directory
    that mixes runs, which `report` refuses)."""
    dump = tempfile.mkdtemp(prefix="nsfault")
    args = [SIM, "--plugin", PLUGIN, "--nccl", "ideal", "--procs", "2", "--scenario", "hang", "--hang-timeout-ms",
            "1500", "--iters", "3"]
    env = env_with(NCCLSCOPE_DUMP_DIR=dump, NCCLSCOPE_HANG_TIMEOUT_SEC="0.3")
    jobs = [args + ["--seed", "1"], args + ["--seed", "2"]]
    if pid_namespaces():
        how = "PID namespaces"
        cmds = [["unshare", "-p", "-f", "--mount-proc"] + a for a in jobs]
        envs = [env, env]
    else:  # every process of both jobs sees pid 4242
        how = "getpid() fixed by LD_PRELOAD"
        cmds = jobs
        envs = [dict(env, LD_PRELOAD=os.path.join(BUILD, "libns-fixed-pid.so"), NS_FIXED_PID="4242")] * 2
    procs = [subprocess.Popen(c, env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for c, e in zip(cmds, envs)]
    for p in procs:
        out, _ = p.communicate(timeout=120)
        eq(p.returncode, 0, "simulator exit status (%s; output=%s)" % (how, out[-300:]))
    names = sorted(os.listdir(dump))
    regular = [n for n in names if os.path.isfile(os.path.join(dump, n))]

    def count(prefix, suffix):
        return len([n for n in regular if n.startswith(prefix) and n.endswith(suffix)])

    eq(count("ncclscope-", ".nstrace"), 4, "traces of the 4 processes (%s): %s" % (how, names))
    eq(count("windows-", ".jsonl"), 4, "windows files of the 4 processes")
    eq(count("summary-", ".txt"), 4, "text summaries of the 4 processes, none overwritten: %s" % names)
    eq(count("summary-", ".json"), 4, "JSON summaries of the 4 processes")
    eq(count("flightrec-", ".json"), 4, "flight records of the 4 processes, none overwritten")

    # one suffix per process: what follows <kind>- (<host>-<pid>[-<n>]) is the same set for every kind of file
    def stems(prefix, suffix):
        return sorted(n[len(prefix):-len(suffix)] for n in regular if n.startswith(prefix) and n.endswith(suffix))

    traces = stems("ncclscope-", ".nstrace")
    for prefix, suffix in (("windows-", ".jsonl"), ("summary-", ".txt"), ("summary-", ".json"), ("flightrec-", ".json")):
        eq(stems(prefix, suffix), traces, "%s*%s named as the traces are (one suffix per process)" % (prefix, suffix))

    for n in regular:
        if n.startswith(("summary-", "flightrec-")) and n.endswith(".json"):
            try:
                json.load(open(os.path.join(dump, n)))
            except ValueError as e:
                check(False, "%s is whole JSON" % n, str(e), "valid")
    p = subprocess.run([CLI, "report", dump, "--json", "-", "-q"], capture_output=True, text=True, timeout=120)
    eq(p.returncode, 3, "report exit status: 3, the hangs found (stderr=%s)" % p.stderr[-300:])
    try:
        rep = json.loads(p.stdout)
    except ValueError:
        rep = {}
    eq(len(rep.get("processCounters", [])), 4, "report: the 4 processes")
    eq(sum(h.get("files", 0) for h in rep.get("hosts", [])), 8, "report: 4 traces and 4 flight records read")


def as_json_shows(b):
    """The text a JSON output must hold for the bytes b: well-formed UTF-8 kept, each other byte
    U+FFFD (Python's decoder replaces a cut sequence once; the outputs replace each of its bytes)."""
    out, i = [], 0
    while i < len(b):
        for n in (1, 2, 3, 4):
            try:
                c = b[i:i + n].decode("utf-8")
            except UnicodeDecodeError:
                continue
            if len(c) == 1:
                out.append(c)
                i += n
                break
        else:
            out.append("\ufffd")
            i += 1
    return "".join(out)


def json_strings(v, out):
    """Every string (keys too) of a parsed JSON value, into the set out."""
    if isinstance(v, str):
        out.add(v)
    elif isinstance(v, dict):
        for k, x in v.items():
            out.add(k)
            json_strings(x, out)
    elif isinstance(v, list):
        for x in v:
            json_strings(x, out)
    return out


def t_hostile_names():
    """Communicators named with every byte 0x80-0xFF, every control character and "<!--<script>",
    overlong forms, a surrogate and cut sequences, with collectives as oddly named (fault_driver
    hostile_names): the flight record, the plugin's summary, its metric windows, `report`'s
    summary.json and `export`'s JSON Lines are each valid UTF-8 (strict: no surrogate) and valid
    JSON (no raw control character), and each shows every name as its well-formed UTF-8 with
    U+FFFD for each other byte."""
    dump = tempfile.mkdtemp(prefix="nsfault")
    p = subprocess.run([DRIVER, PLUGIN, "hostile_names"], env=env_with(NCCLSCOPE_DUMP_DIR=dump,
                       NCCLSCOPE_HANG_TIMEOUT_SEC="0.2"), capture_output=True, timeout=240)
    eq(p.returncode, 0, "fault_driver hostile_names (stderr=%r)" % p.stderr[-400:])
    names = {}
    for line in p.stdout.decode("ascii").splitlines():
        if line.startswith("name "):
            _, kind, hexed = line.split()
            names.setdefault(kind, []).append(as_json_shows(bytes.fromhex(hexed)))
    eq(len(names.get("comm", [])), 6, "hostile communicator names")
    comms = names.get("comm", [])
    ops = [names.get(k, [""])[0] for k in ("func", "dtype", "algo", "proto")]
    out = tempfile.mkdtemp(prefix="nsfault")
    exported = os.path.join(out, "export.jsonl")
    rc = subprocess.run([CLI, "export", dump, "-o", exported], capture_output=True, timeout=120).returncode
    eq(rc, 0, "export exit status")
    rc = subprocess.run([CLI, "report", dump, "-q"], capture_output=True, timeout=120).returncode
    eq(rc, 3, "report exit status: 3, the collective left in flight is a hang")

    def one(pattern):
        found = glob.glob(os.path.join(dump, pattern))
        eq(len(found), 1, "one %s" % pattern)
        return found[0] if found else None

    outputs = [("flight record", one("flightrec-*.json"), False, comms + ops),
               ("plugin summary", one("summary-*.json"), False, ops),
               ("metric windows", one("windows-*.jsonl"), True, comms),
               ("report summary.json", os.path.join(dump, "summary.json"), False, comms + ops),
               ("export JSON Lines", exported, True, comms + ops)]
    for what, path, lines, want in outputs:
        if not path or not os.path.exists(path):
            check(False, "%s written" % what, path, "a file")
            continue
        data = open(path, "rb").read()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            check(False, "%s is UTF-8 (%s)" % (what, os.path.basename(path)), str(e), "valid UTF-8")
            continue
        seen = set()
        try:
            for doc in (text.split("\n") if lines else [text]):  # not splitlines: it also splits at U+2028
                if doc:
                    json_strings(json.loads(doc), seen)
        except ValueError as e:
            check(False, "%s is JSON (%s)" % (what, os.path.basename(path)), str(e), "valid JSON")
            continue
        for name in want:
            check(name in seen, "%s shows the name as well-formed UTF-8 and U+FFFD" % what,
                  sorted(s for s in seen if s[:3] == name[:3]), name)
        print("%s: valid, %d names as expected" % (what, sum(n in seen for n in want)))


CASES = {n[2:]: f for n, f in globals().items() if n.startswith("t_")}

if __name__ == "__main__":
    if CASE not in CASES:
        print("unknown case %s; cases: %s" % (CASE, " ".join(sorted(CASES))))
        sys.exit(2)
    CASES[CASE]()
    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        sys.exit(1)
    print("ok")
