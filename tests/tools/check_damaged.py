#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Damaged traces through the CLI: a block damaged mid-file costs that block
only (the export reads on from the next valid block and names the byte range
and block sequence numbers lost), a duplicated block is exported once
wherever the copy is, an EVENTS block whose record count is wrong is read
whole and named, `report` puts events lost in damaged blocks under that
name, a file that yields nothing makes the exit status 4 (1 when no file
yields anything), for `export` and `report` alike.

Usage: check_damaged.py NCCLSCOPE GEN_TRACE WORK_DIR
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import zlib

CLI, GEN, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
FAILS = []
HDR = struct.Struct("<IHHIIQ")  # magic, kind, reserved, payload size, crc, seq
EVENTS = 5


def check(cond, what, got=None, want=None):
    if not cond:
        FAILS.append("FAIL %s: got %r want %r" % (what, got, want))
        print(FAILS[-1])


def blocks(data):
    out, at = [], 32
    while at + HDR.size <= len(data):
        magic, kind, _, size, _, seq = HDR.unpack_from(data, at)
        out.append((at, HDR.size + size, kind, seq))
        at += HDR.size + size
    return out


def varint(v):
    out = bytearray()
    while True:
        out.append((v & 0x7F) | (0x80 if v >> 7 else 0))
        v >>= 7
        if not v:
            return bytes(out)


def recount(data, block, count):
    """data with the EVENTS block `block` (from blocks()) stating `count` records: the count re-encoded,
    the size and the CRC made right, so only the count is wrong."""
    at, size, kind, seq = block
    p = data[at + HDR.size:at + size]
    i = 0
    for _ in range(4):  # tid, ring, base_ts, base_id
        while p[i] & 0x80:
            i += 1
        i += 1
    payload = p[:i] + varint(count) + p[i + 5:]  # the writer's count takes 5 bytes
    hdr = HDR.pack(0x3142534E, kind, 0, len(payload), zlib.crc32(payload) & 0xFFFFFFFF, seq)
    return data[:at] + hdr + payload + data[at + size:]


def loss(d):
    p = run("report", d, "-q", "--json", "-")
    check(p.returncode == 0, "report %s: exit 0" % d, (p.returncode, p.stderr[-300:]), 0)
    return json.loads(p.stdout)["loss"] if p.returncode == 0 else {}


def fresh_case(name, case):
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    subprocess.run([GEN, "--case", case, d], check=True)
    return d, sorted(os.path.join(d, n) for n in os.listdir(d) if n.endswith(".nstrace"))


def run(*args):
    return subprocess.run([CLI] + list(args), capture_output=True, text=True, timeout=60)


def fresh_dump(name):
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    subprocess.run([GEN, d, "2"], check=True)
    files = sorted(os.path.join(d, n) for n in os.listdir(d) if n.endswith(".nstrace"))
    return d, files


def lines(path):
    with open(path) as f:
        return f.read().splitlines()


def main():
    os.makedirs(WORK, exist_ok=True)
    ref_dir, ref_files = fresh_dump("ref")
    p = run("export", ref_dir, "-o", os.path.join(WORK, "ref.jsonl"))
    check(p.returncode == 0, "reference export", p.returncode, 0)
    ref = lines(os.path.join(WORK, "ref.jsonl"))

    # 1. one flipped byte inside an EVENTS block in the middle of the first file
    d, files = fresh_dump("flip")
    data = bytearray(open(files[0], "rb").read())
    evs = [b for b in blocks(data) if b[2] == EVENTS]
    check(len(evs) >= 3, "the synthetic trace has several EVENTS blocks", len(evs), ">= 3")
    at, size, _, seq = evs[len(evs) // 2]
    data[at + HDR.size + size // 2 - HDR.size // 2] ^= 0x10
    open(files[0], "wb").write(bytes(data))
    out = os.path.join(WORK, "flip.jsonl")
    p = run("export", d, "-o", out)
    check(p.returncode == 0, "export of a damaged file: exit 0", p.returncode, 0)
    want = "bytes %d..%d (%d) damaged (CRC mismatch): lost blocks seq %d..%d (1)" % (at, at + size, size, seq, seq)
    check(want in p.stderr, "names the range and the block lost", p.stderr[-600:], want)
    got = lines(out)
    after = [b for b in blocks(data) if b[0] > at]
    check(len(got) < len(ref) and len(got) > len(ref) * 0.6, "only the damaged block's events are lost",
          (len(got), len(ref)), "a little fewer")
    # every record whose block came after the damage is there: the last lines of the file's export
    ref_last = [l for l in ref if '"myPid":4001' in l and '"ProfilerFinalize"' in l]
    got_last = [l for l in got if '"myPid":4001' in l and '"ProfilerFinalize"' in l]
    check(ref_last and ref_last == got_last, "the finalize after the damage is exported", len(got_last),
          len(ref_last))
    check(len(after) > 1, "blocks after the damage", len(after), "> 1")
    p = run("report", d, "-q")
    check(p.returncode == 0 and want in p.stderr, "report: exit 0, names the range", (p.returncode, p.stderr[-300:]),
          want)

    # 2. a duplicated block: exported once, output identical to the undamaged one
    d, files = fresh_dump("dup")
    data = open(files[0], "rb").read()
    at, size, _, seq = [b for b in blocks(data) if b[2] == EVENTS][1]
    dup = data[:at + size] + data[at:at + size] + data[at + size:]
    open(files[0], "wb").write(dup)
    out = os.path.join(WORK, "dup.jsonl")
    p = run("export", d, "-o", out)
    check(p.returncode == 0, "export with a duplicate: exit 0", p.returncode, 0)
    check("1 duplicate block(s) (%d bytes) dropped" % size in p.stderr, "says the duplicate was dropped",
          p.stderr[-300:], "duplicate dropped")
    check("missing" not in p.stderr, "no block reported missing", p.stderr[-300:], "no 'missing'")
    check(lines(out) == ref, "the export equals the undamaged one", len(lines(out)), len(ref))

    # 2b. a block copied far away (1,100 blocks later): exported once, said so, exit 0
    d, files = fresh_dump("fardup")
    data = open(files[0], "rb").read()
    at, size, _, seq = [b for b in blocks(data) if b[2] == EVENTS][1]
    copied = data[at:at + size]
    # 1,100 blocks of a kind no reader knows (skipped), numbered on from the copied block's seq; every
    # block after them renumbered accordingly, then the copy with its own old seq
    filler = [HDR.pack(0x3142534E, 77, 0, 0, 0, seq + 1 + i) for i in range(1100)]
    rest = b""
    for b_at, b_size, _, b_seq in [b for b in blocks(data) if b[0] > at]:
        blk = bytearray(data[b_at:b_at + b_size])
        struct.pack_into("<Q", blk, 16, b_seq + 1100)
        rest += bytes(blk)
    open(files[0], "wb").write(data[:at + size] + b"".join(filler) + copied + rest)
    out = os.path.join(WORK, "fardup.jsonl")
    p = run("export", d, "-o", out)
    check(p.returncode == 0, "export with a far duplicate: exit 0", p.returncode, 0)
    check("1 duplicate block(s) (%d bytes) dropped" % size in p.stderr, "says the far duplicate was dropped",
          p.stderr[-300:], "duplicate dropped")
    check("1 of 2 trace file(s) damaged" in p.stderr, "counts the file as damaged", p.stderr[-300:], "1 of 2 damaged")
    check(lines(out) == ref, "the export with a far duplicate equals the undamaged one", len(lines(out)), len(ref))

    # 2d. a block copied before its original (the copy of the last EVENTS block right after the first one):
    # read once, said once, no block claimed missing; every event once
    d, files = fresh_dump("dupbefore")
    data = open(files[0], "rb").read()
    evs = [b for b in blocks(data) if b[2] == EVENTS]
    first, last = evs[0], evs[-1]
    check(last[3] > first[3] + 1, "a block between the first and the copied one", (first[3], last[3]), "> 1 apart")
    cut = first[0] + first[1]
    open(files[0], "wb").write(data[:cut] + data[last[0]:last[0] + last[1]] + data[cut:])
    out = os.path.join(WORK, "dupbefore.jsonl")
    p = run("export", d, "-o", out)
    check(p.returncode == 0, "export with a copy before its original: exit 0", p.returncode, 0)
    check(p.stderr.count("duplicate block") == 1 and "1 duplicate block(s) (%d bytes) dropped" % last[1] in p.stderr,
          "the copy before its original is named once as a duplicate", p.stderr[-400:], "1 duplicate")
    check("missing" not in p.stderr, "a copy before its original: no block claimed missing", p.stderr[-400:],
          "no 'missing'")
    check(sorted(lines(out)) == sorted(ref), "a copy before its original: every event once", len(lines(out)), len(ref))
    p = run("report", d, "-q")
    check(p.returncode == 0 and "missing" not in p.stderr and p.stderr.count("duplicate block") == 1,
          "report with a copy before its original: one duplicate, nothing missing", (p.returncode, p.stderr[-400:]),
          "exit 0")
    got = loss(d).get("blocksMissing")
    check(got == 0, "report: blocksMissing 0", got, 0)

    # 2e. an EVENTS block whose record count (under a valid CRC) says 2^40: its records are all read, the
    # block is named by offset and seq, the export equals the undamaged one
    d, files = fresh_dump("count")
    data = open(files[0], "rb").read()
    blk = [b for b in blocks(data) if b[2] == EVENTS][1]
    data = recount(data, blk, 1 << 40)
    open(files[0], "wb").write(data)
    at, size = blk[0], [b for b in blocks(data) if b[0] == blk[0]][0][1]
    out = os.path.join(WORK, "count.jsonl")
    p = run("export", d, "-o", out)
    check(p.returncode == 0, "export with a wrong record count: exit 0", p.returncode, 0)
    want = "bytes %d..%d (%d) damaged (EVENTS record count %d for " % (at, at + size, size, 1 << 40)
    check(want in p.stderr and "block seq %d read all the same" % blk[3] in p.stderr,
          "the wrong count is named with its block", p.stderr[-400:], want)
    check(lines(out) == ref, "a wrong record count loses nothing", len(lines(out)), len(ref))

    # 2f. report's loss: a wrong count costs nothing; the events of a block lost to damage are not put
    # down to write errors the plugin never had
    d, files = fresh_case("counted", "counters")
    good = open(files[0], "rb").read()
    ev = [b for b in blocks(good) if b[2] == EVENTS]
    check(len(ev) == 1, "the counters case has one EVENTS block", len(ev), 1)
    open(files[0], "wb").write(recount(good, ev[0], 1 << 40))
    got = loss(d)
    check(got.get("eventsInTrace") == 4 and got.get("eventsLostToWriteErrors") == 0 and got.get("blocksDamaged") == 0,
          "report: a wrong record count loses no event", got, "4 in the trace, none lost")
    bad = bytearray(good)
    bad[ev[0][0] + HDR.size + 3] ^= 0x01
    open(files[0], "wb").write(bytes(bad))
    got = loss(d)
    check(got.get("eventsInTrace") == 0 and got.get("eventsLostToWriteErrors") == 0 and
          got.get("eventsLostInDamagedBlocks") == 4 and got.get("blocksDamaged") == 1 and
          got.get("eventsSeen") == 11 and got.get("complete") is False,
          "report: the events of a damaged block are lost in damaged blocks, not to write errors", got,
          "4 lost in damaged blocks, 0 to write errors")
    p = run("report", d)
    check("+ lost in damaged blocks 4" in p.stdout, "the text says where they were lost", p.stdout[:400],
          "lost in damaged blocks 4")

    # 2c. every bit of a file header flipped in turn: the export equals the undamaged one; a flip that makes the
    # header wrong (magic, major version, header size) is named, exit 0
    d, files = fresh_dump("header")
    good = open(files[0], "rb").read()
    out = os.path.join(WORK, "header.jsonl")
    named = 0
    for bit in range(32 * 8):
        data = bytearray(good)
        data[bit // 8] ^= 1 << (bit % 8)
        open(files[0], "wb").write(bytes(data))
        p = run("export", d, "-o", out)
        field = "minor" if 20 <= bit // 8 < 24 else "reserved" if bit // 8 >= 28 else "checked"
        if p.returncode != 0 or lines(out) != ref:
            check(False, "header bit %d (%s field) flipped: exit 0, the export unchanged" % (bit, field),
                  (p.returncode, p.stderr[-200:]), 0)
            continue
        said = "the file header is damaged" in p.stderr and "(file header: " in p.stderr
        check(said == (field == "checked"), "header bit %d (%s field): the damage named when the field is checked"
              % (bit, field), p.stderr[-200:], field == "checked")
        named += said
    check(named == 24 * 8, "flips named as header damage", named, 24 * 8)

    # 3. a file that yields nothing (a valid header, then garbage): exit 4, the other file exported
    d, files = fresh_dump("empty")
    data = open(files[0], "rb").read()
    open(files[0], "wb").write(data[:32] + b"\xAB" * 4000)
    for cmd in (["export", d, "-o", os.path.join(WORK, "empty.jsonl")], ["report", d, "-q"]):
        p = run(*cmd)
        check(p.returncode == 4, "%s: a file that yields nothing: exit 4" % cmd[0], (p.returncode, p.stderr[-300:]), 4)
        check("nothing recovered" in p.stderr, "%s: says so" % cmd[0], p.stderr[-300:], "nothing recovered")
    check(any('"myPid":4002' in l for l in lines(os.path.join(WORK, "empty.jsonl"))), "the good file is exported",
          None, "records of 4002")

    # 4. every file yields nothing: exit 1, no output left behind
    open(files[1], "wb").write(open(files[1], "rb").read()[:32] + b"\x00" * 100)
    out = os.path.join(WORK, "none.jsonl")
    for cmd in (["export", d, "-o", out], ["report", d, "-q"]):
        p = run(*cmd)
        check(p.returncode == 1, "%s: nothing at all: exit 1" % cmd[0], (p.returncode, p.stderr[-300:]), 1)
    check(not os.path.exists(out), "no output left behind", os.path.exists(out), False)

    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        sys.exit(1)
    print("ok")


main()
