#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Reads every event of an `ncclscope export --format otf2` archive back
with the OTF2 library's Python bindings (Debian python3-otf2: run with
/usr/bin/python3) and compares it with the JSON Lines export of the same
traces: the same events (one region each, by eventId in its process), the
same times (CLOCK_REALTIME ns: the JSONL times plus the file's
realtimeOffsetUs, to the nanosecond), the same attributes, Enter/Leave
properly nested and in time order on every location, parents enclosing
their children where they share a location, the GPU kernel intervals as the
JSONL's gpuStart/gpuStop with their gpuErrorUs, the collective records
inside their region with the operation and sizes of the NCCL function, and
the definitions (clock properties, hosts, processes, communicators).

usage: check_otf2.py ARCHIVE/traces.otf2 EXPORT.jsonl [--min-events N] [--min-colls N] [--min-gpu N]
Prints one summary line; exit 1 with the first mismatches otherwise."""
import argparse
import decimal
import json
import sys

import otf2

EXACT = {  # NCCL function -> OTF2 collective operation (the only ones mapped)
    "AllReduce": "ALLREDUCE", "Broadcast": "BCAST", "Reduce": "REDUCE", "AllGather": "ALLGATHER",
    "ReduceScatter": "REDUCE_SCATTER_BLOCK", "AllToAll": "ALLTOALL",
}
DTYPE_BYTES = {"ncclInt8": 1, "ncclUint8": 1, "ncclInt32": 4, "ncclUint32": 4, "ncclInt64": 8, "ncclUint64": 8,
               "ncclFloat16": 2, "ncclFloat32": 4, "ncclFloat64": 8, "ncclBfloat16": 2, "ncclFloat8e4m3": 1,
               "ncclFloat8e5m2": 1}


def ns(us):
    """JSONL microseconds (read as exact decimals: realtime offsets need 19 digits) -> ns."""
    return int((decimal.Decimal(us) * 1000).to_integral_value())


def addr_key(addr):
    """eventAddr "0x" + 4+ hex (file + 1) + 16 hex id -> (file index, id)."""
    h = addr[2:]
    return int(h[:-16], 16) - 1, int(h[-16:], 16)


def short(t):
    return t[len("ncclProfile"):]


def clean(text):
    """As the archive writes NCCL's strings: control characters become U+FFFD
    (ill-formed bytes already are, in the JSONL)."""
    return "".join("\ufffd" if ord(c) < 0x20 or ord(c) == 0x7F else c for c in text) if text else text


def region_name(e):
    t = short(e["type"])
    func = clean(e.get("func"))
    if t in ("Coll", "P2p"):
        return func if func else t
    return "%s %s" % (t, func) if func else t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("archive")
    ap.add_argument("jsonl")
    ap.add_argument("--min-events", type=int, default=1)
    ap.add_argument("--min-colls", type=int, default=0)
    ap.add_argument("--min-gpu", type=int, default=0)
    ap.add_argument("--hosts-aligned-ms", type=float, default=None,
                    help="the median spread of a collective's end over its processes, on the archive's clock, "
                         "is below this (traces of several hosts)")
    a = ap.parse_args()
    errors = []

    def bad(msg):
        if len(errors) < 30:
            errors.append(msg)

    # ---- the JSON Lines export ----
    events = {}      # (pid, id) -> record
    file_pid = {}    # file index -> pid
    offset = {}      # file index -> realtime offset ns (its ProfilerInit records')
    pending = []
    host = {}        # pid -> hostname
    for line in open(a.jsonl):
        r = json.loads(line, parse_float=decimal.Decimal)
        if r["recordType"] == "lifecycle" and r["func"] == "ProfilerInit":
            d = r["details"]
            pending.append(ns(d["realtimeOffsetUs"]))  # lines come file by file: its file's events follow
            if "hostname" in d:
                host[r["myPid"]] = d["hostname"]
        if r["recordType"] != "event":
            continue
        f, i = addr_key(r["eventAddr"])
        if pending:  # the last ones: earlier ones may be of files without events
            offset[f] = pending[-1]
            pending = []
        if file_pid.setdefault(f, r["myPid"]) != r["myPid"]:
            bad("file %d has two pids" % f)
        if (f, i) in events:
            bad("two JSONL events %s" % r["eventAddr"])
        events[(f, i)] = r
    # A process's trace files, in export order, are its location groups
    # "host:pid", "host:pid #2", ...: (pid, k) -> file index.
    file_of = {}
    for f in sorted(file_pid):
        k = 1
        while (file_pid[f], k) in file_of:
            k += 1
        file_of[(file_pid[f], k)] = f

    # ---- the archive ----
    cpu, gpu = {}, {}   # (pid, eventId) -> interval
    colls = []          # (location, op, comm, root, sent, recv, enclosing interval)
    times = []
    with otf2.reader.open(a.archive) as tr:
        defs = tr.definitions
        cp = defs.clock_properties
        if cp.timer_resolution != 1000000000:
            bad("timer resolution %d, want 1e9 (ns)" % cp.timer_resolution)
        group_pid = {}
        for g in defs.location_groups:
            proc = g.creating_location_group if g.location_group_type == otf2.LocationGroupType.ACCELERATOR else g
            if proc is None:
                bad("accelerator group %s has no creating process" % g.name)
                continue
            hostname, pid = proc.name.rsplit(":", 1)
            pid, _, k = pid.partition(" #")
            pid = int(pid)
            group_pid[g.name] = file_of.get((pid, int(k or 1)), -1)
            node = g.system_tree_parent
            if node is None or node.name != hostname or node.class_name != "node":
                bad("group %s is not under the node of its host" % g.name)
            if pid in host and host[pid] != hostname:
                bad("group %s: host %s in the JSONL" % (g.name, host[pid]))
        stacks = {}
        last = {}
        nevents = {}
        for loc, ev in tr.events:
            t = ev.time
            times.append(t)
            nevents[loc] = nevents.get(loc, 0) + 1
            if t < last.get(loc, 0):
                bad("%s: time goes back at %d" % (loc.name, t))
            last[loc] = t
            st = stacks.setdefault(loc, [])
            if isinstance(ev, otf2.events.Enter):
                st.append({"enter": t, "region": ev.region.name, "attrs": {k.name: v for k, v in (ev.attributes or {}).items()},
                           "loc": loc, "depth": len(st), "colls": 0})
            elif isinstance(ev, otf2.events.Leave):
                if not st or st[-1]["region"] != ev.region.name:
                    bad("%s: Leave %s does not close the last Enter" % (loc.name, ev.region.name))
                    continue
                iv = st.pop()
                iv["leave"] = t
                pid = group_pid[loc.group.name]
                key = (pid, iv["attrs"].get("eventId"))
                gpu_loc = loc.type == otf2.LocationType.ACCELERATOR_STREAM
                table = gpu if gpu_loc else cpu
                if key in table:
                    bad("event %s twice on %s locations" % (key, "GPU" if gpu_loc else "CPU"))
                table[key] = iv
            elif isinstance(ev, otf2.events.MpiCollectiveBegin):
                if not st:
                    bad("%s: a collective record outside a region" % loc.name)
                else:
                    st[-1]["colls"] += 1
                    st[-1]["coll_begin"] = t
            elif isinstance(ev, otf2.events.MpiCollectiveEnd):
                if not st or "coll_begin" not in st[-1]:
                    bad("%s: MpiCollectiveEnd without its begin in the same region" % loc.name)
                    continue
                colls.append((loc, str(ev.collective_op).split(".")[-1], ev.communicator, ev.root, ev.size_sent, ev.size_received,
                              st[-1], st[-1]["coll_begin"], t))
            else:
                bad("unexpected record %s" % type(ev).__name__)
        for loc, st in stacks.items():
            if st:
                bad("%s: %d regions never left" % (loc.name, len(st)))
        for loc in defs.locations:
            if loc.number_of_events != nevents.get(loc, 0):
                bad("%s: %d events defined, %d read" % (loc.name, loc.number_of_events, nevents.get(loc, 0)))
        if times and (cp.global_offset != min(times) or cp.trace_length != max(times) - min(times)):
            bad("clock properties %d+%d, events %d..%d" % (cp.global_offset, cp.trace_length, min(times), max(times)))
        comm_members = {c.name: [m.name for m in c.group.members] for c in defs.comms}

    # ---- events: the same ones, the same times and attributes ----
    for key, e in events.items():
        iv = cpu.get(key)
        if iv is None:
            bad("JSONL event %s (%s) is not in the archive" % (e["eventAddr"], e["type"]))
            continue
        off = offset.get(key[0], 0)
        if iv["enter"] != ns(e["start"]["ts"]) + off:
            bad("%s: enter %d, JSONL start %d" % (e["eventAddr"], iv["enter"], ns(e["start"]["ts"]) + off))
        if "stop" in e:
            if iv["leave"] != ns(e["stop"]["ts"]) + off:
                bad("%s: leave %d, JSONL stop %d" % (e["eventAddr"], iv["leave"], ns(e["stop"]["ts"]) + off))
            if "incomplete" in iv["attrs"]:
                bad("%s stopped, marked incomplete" % e["eventAddr"])
        elif iv["attrs"].get("incomplete") != 1 or iv["leave"] < iv["enter"]:
            bad("%s never stopped: not marked incomplete" % e["eventAddr"])
        if iv["region"] != region_name(e):
            bad("%s: region %r, want %r" % (e["eventAddr"], iv["region"], region_name(e)))
        at, d = iv["attrs"], e["details"]
        p = e.get("parentObj")
        want_parent = addr_key(p)[1] if p and len(p) > 20 else None
        if at.get("parentId") != want_parent:
            bad("%s: parentId %s, JSONL parentObj %s" % (e["eventAddr"], at.get("parentId"), p))
        t = short(e["type"])
        want = {}
        if t in ("Coll", "P2p") and "bytes" in d:
            want["bytes"] = d["bytes"]
        if t == "Coll":
            want["seq"] = d.get("seq")
        if t == "P2p" or t == "ProxyOp":
            want["peer"] = d.get("peer")
        if t in ("ProxyOp", "KernelCh") and d.get("channel", -1) >= 0:
            want["channel"] = d["channel"]
        for k, v in want.items():
            if at.get(k) != v:
                bad("%s: attribute %s %s, JSONL %s" % (e["eventAddr"], k, at.get(k), v))
    for key in cpu:
        if key not in events:
            bad("archive event %s is not in the JSONL" % (key,))

    # ---- nesting: a parent encloses its children on a shared location ----
    shared = 0
    for key, iv in cpu.items():
        pid_ = iv["attrs"].get("parentId")
        par = cpu.get((key[0], pid_)) if pid_ else None
        if par is None or par["loc"] != iv["loc"]:
            continue
        shared += 1
        if not (par["enter"] <= iv["enter"] and iv["leave"] <= par["leave"] and par["depth"] < iv["depth"]):
            bad("%s is not inside its parent on %s" % (key, iv["loc"].name))

    # ---- GPU kernel intervals ----
    ngpu = 0
    for key, e in events.items():
        d = e["details"]
        if "gpuStart" not in d or "gpuStop" not in d:
            if key in gpu:
                bad("%s: a GPU interval the JSONL has not" % e["eventAddr"])
            continue
        ngpu += 1
        g = gpu.get(key)
        off = offset.get(key[0], 0)
        if g is None:
            bad("%s: GPU interval missing" % e["eventAddr"])
            continue
        if g["enter"] != ns(d["gpuStart"]) + off or g["leave"] != ns(d["gpuStop"]) + off:
            bad("%s: GPU %d..%d, JSONL %d..%d" % (e["eventAddr"], g["enter"], g["leave"], ns(d["gpuStart"]) + off,
                                                 ns(d["gpuStop"]) + off))
        err = d.get("gpuErrorUs")
        got = g["attrs"].get("gpuErrorUs")
        if (err is None) != (got is None) or (err is not None and abs(got - float(err)) > 1e-3):
            bad("%s: gpuErrorUs %s, JSONL %s" % (e["eventAddr"], got, err))
    for key in gpu:
        if key not in events:
            bad("GPU interval %s of no JSONL event" % (key,))

    # ---- collective records ----
    for loc, op, comm, root, sent, recv, iv, b, end in colls:
        e = events.get((group_pid[loc.group.name], iv["attrs"].get("eventId")))
        if e is None or short(e["type"]) != "Coll" or EXACT.get(e.get("func")) != op:
            bad("%s: collective %s in region %s" % (loc.name, op, iv["region"]))
            continue
        if b != iv["enter"] or end != iv["leave"]:
            bad("%s: collective record not at its region's bounds" % e["eventAddr"])
        d = e["details"]
        elem = d["count"] * DTYPE_BYTES.get(d.get("dtype"), 0)
        if elem and max(sent, recv) != d.get("bytes") and op not in ("BCAST", "REDUCE"):
            bad("%s: sizes %d/%d, JSONL bytes %s" % (e["eventAddr"], sent, recv, d.get("bytes")))
        if loc.name not in comm_members.get(comm.name, []):
            bad("%s: collective on %s, not a member of %s" % (e["eventAddr"], loc.name, comm.name))
        if op in ("BCAST", "REDUCE") and root != d["root"]:
            bad("%s: root %s, JSONL %s" % (e["eventAddr"], root, d["root"]))
        if e["rank"] >= 0 and "rank %d " % e["rank"] not in loc.name:
            bad("%s: rank %d's collective on %s" % (e["eventAddr"], e["rank"], loc.name))
    # ---- hosts on one clock: the ranks of a collective end together ----
    if a.hosts_aligned_ms is not None:
        ends = {}
        for key, e in events.items():
            if short(e["type"]) == "Coll" and "stop" in e and key in cpu:
                ends.setdefault((e["commId"], e["details"].get("seq")), {})[file_pid[key[0]]] = cpu[key]["leave"]
        spreads = sorted(max(v.values()) - min(v.values()) for v in ends.values() if len(v) > 1)
        if len(set(host.values())) < 2 or not spreads:
            bad("--hosts-aligned-ms: the traces are not of several hosts sharing collectives")
        else:
            med = spreads[len(spreads) // 2] / 1e6
            print("otf2: %d collectives over %d hosts end within %.3f ms of each other (median)"
                  % (len(spreads), len(set(host.values())), med))
            if med > a.hosts_aligned_ms:
                bad("hosts not aligned: median spread %.3f ms > %.3f" % (med, a.hosts_aligned_ms))
    exact = sum(1 for e in events.values() if short(e["type"]) == "Coll" and e.get("func") in EXACT)

    print("otf2: %d events round-tripped (%d parent/child pairs on one location), %d GPU kernel intervals, "
          "%d of %d exactly mapped collectives as collective records, %d locations, %d communicators"
          % (len(cpu), shared, ngpu, len(colls), exact, len(nevents), len(comm_members)))
    if len(cpu) < a.min_events:
        bad("%d events, want at least %d" % (len(cpu), a.min_events))
    if len(colls) < a.min_colls:
        bad("%d collective records, want at least %d" % (len(colls), a.min_colls))
    if ngpu < a.min_gpu:
        bad("%d GPU intervals, want at least %d" % (ngpu, a.min_gpu))
    for m in errors:
        print("FAIL:", m)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
