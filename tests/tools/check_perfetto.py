#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks `ncclscope export --format perfetto` against Perfetto's published
trace schema and against the JSONL and Chrome exports of the same trace.

usage: check_perfetto.py TRACE.pftrace --proto SUBSET.proto --jsonl RUN.jsonl --chrome RUN.json [--protoc PROTOC]

1. The file is a Trace: Trace.packet fields only; compressed_packets bundles
   are inflated (zlib, as trace_processor does) and their packets checked
   like the others.
2. `protoc --decode=perfetto.protos.Trace` (the schema subset written from
   Perfetto's protos with their field numbers) decodes every packet, with no
   field left unknown: every field number and wire type is the schema's.
3. Sequences: the first packet of each clears the incremental state and sets
   the defaults (track, incremental clock with its snapshot); every interned
   id used is defined earlier on its sequence; timestamps rebuilt from the
   deltas.
4. Tracks: every event's track is declared; each thread-level track has a
   process parent. Slices, sorted by time then file order as
   trace_processor sorts them, pair begin and end as written (no slice ends
   another's), so every track nests.
5. Against the other exports: one slice per JSONL event (by file, id), the
   type as category, the Chrome slice's name, start, duration and track name;
   one flow per Chrome flow, each joining a child to the parent its JSONL
   record names.
Prints counts; exits 1 with the first problems on failure. stdlib only."""
import argparse
import json
import os
import re
import subprocess
import sys
import zlib
from collections import Counter, defaultdict


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checklib import varint  # noqa: E402


def fields(b):
    """(field, wire type, value) of one message's bytes."""
    i, out = 0, []
    while i < len(b):
        key, i = varint(b, i)
        f, w = key >> 3, key & 7
        if w == 0:
            v, i = varint(b, i)
        elif w == 1:
            v, i = b[i:i + 8], i + 8
        elif w == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif w == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % w)
        out.append((f, w, v))
    return out


def flatten(data, problems):
    """The packets of the file with compressed bundles inflated, as a Trace's bytes."""
    out, bundles = bytearray(), 0
    for f, w, v in fields(data):
        if f != 1 or w != 2:
            problems.append("top-level field %d (wire %d) is not Trace.packet" % (f, w))
            continue
        inner = fields(v)
        comp = [x for x in inner if x[0] == 50]
        if comp:
            if len(inner) != 1:
                problems.append("a compressed_packets packet has other fields")
            if len(v) >= 512 * 1024:
                problems.append("a compressed bundle of %d bytes (Perfetto wants < 512 KiB)" % len(v))
            payload = zlib.decompress(comp[0][2])
            for f2, w2, v2 in fields(payload):
                if f2 != 1 or w2 != 2:
                    problems.append("a compressed bundle holds field %d" % f2)
            out += payload
            bundles += 1
        else:
            out += data_packet(v)
    return bytes(out), bundles


def data_packet(v):
    n = bytearray([0x0A])
    x = len(v)
    while x >= 0x80:
        n.append((x & 0x7F) | 0x80)
        x >>= 7
    n.append(x)
    return bytes(n) + v


TOKEN = re.compile(r'\s*(?:(\})|([A-Za-z_0-9]+)\s*(\{|:\s*("(?:[^"\\]|\\.)*"|[^\s]+)))')


def parse_text(text):
    """protoc's text format -> nested dicts of lists."""
    root, stack, pos = defaultdict(list), [], 0
    cur = root
    while True:
        m = TOKEN.match(text, pos)
        if not m:
            if text[pos:].strip():
                raise ValueError("cannot parse protoc output at %r" % text[pos:pos + 80])
            break
        pos = m.end()
        if m.group(1):
            cur = stack.pop()
        elif m.group(3) == "{":
            child = defaultdict(list)
            cur[m.group(2)].append(child)
            stack.append(cur)
            cur = child
        else:
            raw = m.group(4)
            if raw.startswith('"'):
                val = bytes(raw[1:-1], "utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8", "replace")
            elif raw in ("true", "false"):
                val = raw == "true"
            else:
                try:
                    val = int(raw)
                except ValueError:
                    try:
                        val = float(raw)
                    except ValueError:
                        val = raw  # an enum name
            cur[m.group(2)].append(val)
    return root


def one(d, key, default=None):
    v = d.get(key)
    return v[0] if v else default


def annotation_value(a, strings, names):
    """A debug annotation's value: dictionaries and arrays as Python's, None for an empty one (a JSON null)."""
    for k in ("bool_value", "uint_value", "int_value", "double_value", "pointer_value", "string_value"):
        if k in a:
            return a[k][0]
    if "string_value_iid" in a:
        return strings.get(a["string_value_iid"][0])
    if "dict_entries" in a:
        return {names.get(one(e, "name_iid")) if "name_iid" in e else one(e, "name"): annotation_value(e, strings, names)
                for e in a["dict_entries"]}
    if "array_values" in a:
        return [annotation_value(e, strings, names) for e in a["array_values"]]
    return None


def decode(path, proto, protoc, problems):
    """Checks 1-4 of the file at path (problems appended); its tracks (uuid -> descriptor), events (file
    order, timestamps rebuilt) and slices (each begin with its "end" event), or None if protoc fails."""
    data = open(path, "rb").read()
    flat, bundles = flatten(data, problems)
    res = subprocess.run([protoc, "--decode=perfetto.protos.Trace", "-I", os.path.dirname(os.path.abspath(proto)),
                          os.path.basename(proto)], input=flat, capture_output=True)
    if res.returncode != 0:
        problems.append("protoc could not decode the trace: %s" % res.stderr.decode()[:500])
        return None
    text = res.stdout.decode("utf-8", "replace")
    unknown = re.findall(r"^\s*(\d+)\s*[:{]", text, re.M)
    if unknown:
        problems.append("fields unknown to the schema: %s" % sorted(set(unknown))[:10])
    trace = parse_text(text)
    packets = trace.get("packet", [])

    # ---- sequences, tracks, events ----
    tracks = {}  # uuid -> descriptor
    seq_state = {}
    events = []  # (ts, order, track uuid, packet, te, interned tables)
    for order, p in enumerate(packets):
        seq = one(p, "trusted_packet_sequence_id", 0)
        if "track_descriptor" in p:
            d = p["track_descriptor"][0]
            tracks[one(d, "uuid")] = d
            continue
        st = seq_state.get(seq)
        if one(p, "sequence_flags", 0) & 1:
            defaults = one(p, "trace_packet_defaults")
            snap = one(p, "clock_snapshot")
            clocks = {one(c, "clock_id"): c for c in (snap or {}).get("clocks", [])}
            if not defaults or one(defaults, "timestamp_clock_id") != 64 or 64 not in clocks or 6 not in clocks:
                problems.append("sequence %d: cleared without defaults and clock snapshot" % seq)
                continue
            if not one(clocks[64], "is_incremental") or one(clocks[64], "timestamp") != one(clocks[6], "timestamp"):
                problems.append("sequence %d: the sequence clock is not incremental and 1:1" % seq)
            st = seq_state[seq] = {"last": one(clocks[64], "timestamp"), "track": one(one(defaults, "track_event_defaults"), "track_uuid"),
                                   "names": {}, "cats": {}, "ann": {}, "str": {}}
        if "track_event" not in p:
            continue
        if st is None:
            problems.append("packet %d: an event on sequence %d before it was cleared" % (order, seq))
            continue
        st["last"] = (st["last"] + one(p, "timestamp", 0)) & ((1 << 64) - 1)
        idata = one(p, "interned_data")
        if idata:
            for key, table in (("event_names", "names"), ("event_categories", "cats"), ("debug_annotation_names", "ann")):
                for e in idata.get(key, []):
                    st[table][one(e, "iid")] = one(e, "name")
            for e in idata.get("debug_annotation_string_values", []):
                st["str"][one(e, "iid")] = one(e, "str")
        te = p["track_event"][0]
        track = one(te, "track_uuid", st["track"])
        if track not in tracks:
            problems.append("packet %d: event on undeclared track %s" % (order, track))
        for k, table in (("name_iid", "names"), ("category_iids", "cats")):
            for iid in te.get(k, []):
                if iid not in st[table]:
                    problems.append("packet %d: %s %d not interned on sequence %d" % (order, k, iid, seq))
        anns = {}
        for a in te.get("debug_annotations", []):
            name = st["ann"].get(one(a, "name_iid")) if "name_iid" in a else one(a, "name")
            if name is None:
                problems.append("packet %d: annotation name iid %s not interned" % (order, one(a, "name_iid")))
            anns[name] = annotation_value(a, st["str"], st["ann"])
        events.append({"ts": st["last"], "order": order, "track": track, "type": one(te, "type"),
                       "name": st["names"].get(one(te, "name_iid")), "cat": st["cats"].get(one(te, "category_iids")),
                       "args": anns, "flows": te.get("flow_ids", []), "value": one(te, "counter_value")})

    def process_of(uuid):
        d = tracks.get(uuid)
        while d is not None and "process" not in d:
            d = tracks.get(one(d, "parent_uuid"))
        return d

    for uuid, d in tracks.items():
        if "process" not in d and "counter" not in d and process_of(uuid) is None:
            problems.append("track %s (%s) has no process" % (uuid, one(d, "name")))

    # ---- slices: written begin..end per track; sorted as trace_processor sorts ----
    slices, open_by_track = [], defaultdict(list)
    for e in events:  # file order
        if e["type"] == "TYPE_SLICE_BEGIN":
            s = dict(e, end=None)
            open_by_track[e["track"]].append(s)
            slices.append(s)
        elif e["type"] == "TYPE_SLICE_END":
            if not open_by_track[e["track"]]:
                problems.append("an end with no slice open on track %s" % e["track"])
                continue
            open_by_track[e["track"]].pop()["end"] = e
    if any(open_by_track.values()):
        problems.append("slices never ended")
    begin_of = {id(s): s for s in slices}
    stack, misnested = defaultdict(list), 0
    for e in sorted(events, key=lambda x: (x["ts"], x["order"])):
        if e["type"] == "TYPE_SLICE_BEGIN":
            stack[e["track"]].append(e["order"])
        elif e["type"] == "TYPE_SLICE_END":
            top = stack[e["track"]].pop() if stack[e["track"]] else None
            if top is None:
                misnested += 1
    pair_order = {s["end"]["order"]: s["order"] for s in slices if s["end"]}
    end_of = {s["order"]: s["end"]["ts"] for s in slices if s["end"]}
    stack = defaultdict(list)
    for e in sorted(events, key=lambda x: (x["ts"], x["order"])):
        if e["type"] == "TYPE_SLICE_BEGIN":
            stack[e["track"]].append(e["order"])
        elif e["type"] == "TYPE_SLICE_END" and stack[e["track"]]:
            top = stack[e["track"]].pop()
            # closing another slice that ends at this very time is harmless: the ends at one time close
            # the slices open on top, so each still gets its own end
            if top != pair_order.get(e["order"]) and end_of.get(top) != e["ts"]:
                misnested += 1
    if misnested:
        problems.append("%d slice ends that trace_processor would pair with another slice" % misnested)
    del begin_of
    return {"size": len(data), "bundles": bundles, "packets": packets, "tracks": tracks, "events": events,
            "slices": slices, "sequences": len(seq_state), "process_of": process_of}


def flow_holders(slices, events, instant_names=None):
    """Flow id -> the slices and instants (those named in instant_names; None: all) that carry it."""
    holders = defaultdict(list)
    for s in slices:
        for f in s["flows"]:
            holders[f].append(s)
    for e in events:
        if e["type"] == "TYPE_INSTANT" and (instant_names is None or e["name"] in instant_names):
            for f in e["flows"]:
                holders[f].append(e)
    return holders


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--proto", required=True)
    ap.add_argument("--jsonl", required=True)
    ap.add_argument("--chrome", required=True)
    ap.add_argument("--protoc", default="protoc")
    ap.add_argument("--min-flows", type=int, default=1)
    ap.add_argument("--same-details", default="",
                    help="comma-separated JSONL details each slice's arguments must hold alike (each seen at least once)")
    args = ap.parse_args()
    problems = []

    d = decode(args.trace, args.proto, args.protoc, problems)
    if d is None:
        print("FAIL: %s" % problems[-1])
        return 1
    data, bundles, packets, tracks = d["size"], d["bundles"], d["packets"], d["tracks"]
    events, slices, process_of = d["events"], d["slices"], d["process_of"]
    seq_state = range(d["sequences"])

    # ---- against the JSONL and Chrome exports ----
    pid_of_process = {}
    for uuid, d in tracks.items():
        if "process" in d:
            m = re.search(r"([A-Za-z0-9_.?-]+):(\d+)", one(one(d, "process"), "process_name", ""))
            pid_of_process[uuid] = int(m.group(2)) if m else None
    jsonl = {}
    jsonl_types = Counter()
    for line in open(args.jsonl):
        r = json.loads(line)
        if r.get("recordType") != "event":
            continue
        key = (r["myPid"], int(r["eventAddr"], 16) & ((1 << 64) - 1))
        jsonl[key] = r
        jsonl_types[r["type"][len("ncclProfile"):]] += 1
    chrome = json.load(open(args.chrome))["traceEvents"]
    chrome_threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in chrome if e.get("ph") == "M" and e["name"] == "thread_name"}
    chrome_slices = {}
    for e in chrome:
        if e.get("ph") in ("X", "b") and e.get("cat") not in ("state", "moved") and "eventAddr" in e.get("args", {}):
            chrome_slices[int(e["args"]["eventAddr"], 16)] = e
    chrome_flows = sum(1 for e in chrome if e.get("ph") == "s")

    pf_types, seen = Counter(), {}
    same_keys = [k for k in args.same_details.split(",") if k]
    same_seen = Counter()
    for s in slices:
        if s["cat"] in (None, "moved") or "eventAddr" not in s["args"]:
            continue
        pf_types[s["cat"]] += 1
        proc = process_of(s["track"])
        pid = pid_of_process.get(one(proc, "uuid")) if proc else None
        key = (pid, s["args"]["eventAddr"])
        if key in seen:
            problems.append("event %s drawn twice" % (key,))
        seen[key] = s
        r = jsonl.get(key)
        if r is None:
            problems.append("slice %s %s: no such JSONL event" % (s["name"], key))
            continue
        if r["type"] != "ncclProfile" + s["cat"]:
            problems.append("event %s: category %s, JSONL type %s" % (key, s["cat"], r["type"]))
        for k in same_keys:
            if k in r.get("details", {}):
                same_seen[k] += 1
                if s["args"].get(k) != r["details"][k]:
                    problems.append("event %s: %s %r, JSONL %r" % (key, k, s["args"].get(k), r["details"][k]))
        c = chrome_slices.get(int(r["eventAddr"], 16))
        if c is None:
            problems.append("event %s: not in the Chrome export" % (key,))
            continue
        dur = s["end"]["ts"] - s["ts"]
        if s["name"] != c["name"] or abs(s["ts"] / 1000 - c["ts"]) > 0.0015:
            problems.append("event %s: %s at %d, Chrome %s at %s" % (key, s["name"], s["ts"], c["name"], c["ts"]))
        if c["ph"] == "X" and abs(dur / 1000 - c["dur"]) > 0.0015:
            problems.append("event %s: duration %d ns, Chrome %s us" % (key, dur, c["dur"]))
        tname = one(tracks.get(s["track"], {}), "name")
        if c["ph"] == "X" and tname != chrome_threads.get((c["pid"], c["tid"])):
            problems.append("event %s: track %r, Chrome %r" % (key, tname, chrome_threads.get((c["pid"], c["tid"]))))
    for k in same_keys:
        if not same_seen[k]:
            problems.append("no JSONL event has a %s detail to compare" % k)
    if pf_types != jsonl_types:
        problems.append("events by type differ: perfetto %s, JSONL %s" % (dict(pf_types), dict(jsonl_types)))

    # ---- flows: a child and the parent its JSONL record names ----
    holders = flow_holders(slices, events, ("parent",))
    nflows = 0
    for f, hs in holders.items():
        if len(hs) != 2:
            problems.append("flow %d on %d events" % (f, len(hs)))
            continue
        nflows += 1
        first, second = sorted(hs, key=lambda x: (x["ts"], x["order"]))
        child = second if "eventAddr" in second["args"] else first
        parent = first if child is second else second
        proc = process_of(child["track"])
        r = jsonl.get((pid_of_process.get(one(proc, "uuid")), child["args"].get("eventAddr")))
        if r is None or not r.get("parentObj"):
            problems.append("flow %d: its child has no parent in the JSONL" % f)
            continue
        want = int(r["parentObj"], 16) & ((1 << 64) - 1)
        if parent["name"] == "parent":  # an anchor at the start of a parent already written
            pkey = (r["myPid"], want)
            ps = seen.get(pkey)
            if ps is None or ps["ts"] != parent["ts"] or ps["track"] != parent["track"]:
                problems.append("flow %d: the anchor is not at its parent's start" % f)
        elif parent["args"].get("eventAddr") != want:
            problems.append("flow %d: joins %s to %s, JSONL parent %s" % (f, child["args"].get("eventAddr"),
                                                                         parent["args"].get("eventAddr"), want))
    if nflows != chrome_flows:
        problems.append("%d flows, Chrome has %d" % (nflows, chrome_flows))
    if nflows < args.min_flows:
        problems.append("%d flows, want at least %d" % (nflows, args.min_flows))

    print("perfetto: %d bytes, %d compressed bundles, %d packets, %d tracks, %d slices (%d events), %d flows, "
          "%d sequences" % (data, bundles, len(packets), len(tracks), len(slices), sum(pf_types.values()), nflows,
                            len(seq_state)))
    if same_keys:
        print("perfetto: details alike: %s" % ", ".join("%s on %d events" % (k, same_seen[k]) for k in same_keys))
    if problems:
        for p in problems[:20]:
            print("FAIL:", p)
        print("(%d problems)" % len(problems))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
