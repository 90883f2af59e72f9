#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks an `ncclscope export --format jsonl` file against
docs/jsonl-contract.md (python3 stdlib only).

usage: check_jsonl.py FILE [--all-types] [--processes N] [--allow-dangling]
                          [--no-incomplete] [--max-dropped N]
Prints every violation (up to 50) and exits 1 if there is any."""
import argparse
import decimal
import json
import re
import sys

TYPES = ["ncclProfileGroupApi", "ncclProfileCollApi", "ncclProfileP2pApi", "ncclProfileKernelLaunch",
         "ncclProfileGroup", "ncclProfileColl", "ncclProfileP2p", "ncclProfileProxyOp", "ncclProfileProxyStep",
         "ncclProfileProxyCtrl", "ncclProfileKernelCh", "ncclProfileNetPlugin", "ncclProfileCeColl",
         "ncclProfileCeSync", "ncclProfileCeBatch"]

DETAILS = {
    "ncclProfileGroupApi": ["depth", "graphCaptured"],
    "ncclProfileCollApi": ["func", "count", "dtype", "root", "stream", "graphCaptured"],
    "ncclProfileP2pApi": ["func", "count", "dtype", "stream", "graphCaptured"],
    "ncclProfileKernelLaunch": ["stream"],
    "ncclProfileGroup": [],
    "ncclProfileColl": ["func", "seq", "algo", "proto", "channels", "warps", "count", "root", "dtype",
                        "sendBuff", "recvBuff", "parentGroup"],
    "ncclProfileP2p": ["func", "peer", "channels", "count", "dtype", "buff", "parentGroup"],
    "ncclProfileProxyOp": ["channel", "peer", "steps", "chunkSize", "isSend", "eventPid"],
    "ncclProfileProxyStep": ["step"],
    "ncclProfileKernelCh": ["channel", "pTimer"],
    "ncclProfileNetPlugin": ["id", "data"],
    "ncclProfileProxyCtrl": [],
    "ncclProfileCeColl": ["func", "seq", "count", "dtype", "root", "syncStrategy", "stream"],
    "ncclProfileCeSync": ["isComplete", "nRanks"],
    "ncclProfileCeBatch": ["numOps", "totalBytes", "useIntraSync"],
}
STRING_OR_NULL = {"func", "dtype", "algo", "proto", "syncStrategy", "parentGroup"}
HEX_FIELDS = {"stream", "sendBuff", "recvBuff", "buff", "data"}

STATES = {
    0: "ProxyOpSendPosted", 1: "ProxyOpSendRemFifoWait", 2: "ProxyOpSendTransmitted", 3: "ProxyOpSendDone",
    4: "ProxyOpRecvPosted", 5: "ProxyOpRecvReceived", 6: "ProxyOpRecvTransmitted", 7: "ProxyOpRecvDone",
    8: "ProxyStepSendGPUWait", 9: "ProxyStepSendWait", 10: "ProxyStepRecvWait", 11: "ProxyStepRecvFlushWait",
    12: "ProxyStepRecvGPUWait", 13: "ProxyCtrlIdle", 14: "ProxyCtrlActive", 15: "ProxyCtrlSleep",
    16: "ProxyCtrlWakeup", 17: "ProxyCtrlAppend", 18: "ProxyCtrlAppendEnd", 19: "ProxyOpInProgress",
    20: "ProxyStepSendPeerWait", 21: "NetPluginUpdate", 22: "KernelChStop", 23: "GroupStartApiStop",
    24: "GroupEndApiStart", 25: "CeCollStart", 26: "CeCollComplete", 27: "CeSyncStart", 28: "CeSyncComplete",
    29: "CeBatchStart", 30: "CeBatchComplete",
}
HEX = re.compile(r"^0x[0-9a-f]+$")
UUID = re.compile(r"^(GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})?$")


class Checker:
    def __init__(self):
        self.errors = []
        self.lineno = 0

    def err(self, msg):
        self.errors.append("line %d: %s" % (self.lineno, msg))

    def need(self, obj, key, kinds, where):
        if key not in obj:
            self.err("%s: missing %r" % (where, key))
            return None
        v = obj[key]
        if not isinstance(v, kinds) or (isinstance(v, bool) and bool not in _tuple(kinds)):
            self.err("%s: %r has type %s" % (where, key, type(v).__name__))
        return v

    def ts(self, v, where):
        if not isinstance(v, decimal.Decimal) or v.as_tuple().exponent > -3:
            self.err("%s: time %r is not a number with >= 3 decimals" % (where, v))

    def point(self, obj, key, where):
        p = self.need(obj, key, dict, where)
        if isinstance(p, dict):
            self.ts(p.get("ts"), "%s.%s.ts" % (where, key))
            for k in ("pid", "tid"):
                self.need(p, k, int, "%s.%s" % (where, key))
        return p


def _tuple(k):
    return k if isinstance(k, tuple) else (k,)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--all-types", action="store_true", help="every one of the 15 event types must appear")
    ap.add_argument("--processes", type=int, default=0, help="exact number of distinct myPid values")
    ap.add_argument("--allow-dangling", action="store_true", help="parents/events may be missing (damaged traces)")
    ap.add_argument("--no-incomplete", action="store_true", help="no event may be incomplete")
    ap.add_argument("--max-dropped", type=int, default=-1)
    args = ap.parse_args()

    c = Checker()
    num = (int, decimal.Decimal)
    addrs = {}
    parents = []  # (lineno, parentObj, isPxn)
    state_addrs = []
    types_seen = set()
    pids = set()
    counts = {"event": 0, "state": 0, "lifecycle": 0}
    with open(args.file, "rb") as fh:
        for raw in fh:
            c.lineno += 1
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                c.err("not UTF-8: %s" % e)
                continue
            if not line.endswith("\n"):
                c.err("line not terminated by a newline")
            try:
                rec = json.loads(line, parse_float=decimal.Decimal)
            except ValueError as e:
                c.err("not JSON: %s" % e)
                continue
            if not isinstance(rec, dict):
                c.err("not an object")
                continue
            rt = rec.get("recordType")
            if rt not in counts:
                c.err("recordType %r" % rt)
                continue
            counts[rt] += 1
            if rt == "event":
                check_event(c, rec, num, addrs, parents, types_seen, pids, args)
            elif rt == "state":
                check_state(c, rec, state_addrs)
            else:
                check_lifecycle(c, rec, num, args)

    for ln, p, pxn in parents:
        if p is None or p in addrs:
            continue
        if pxn or args.allow_dangling:
            continue
        c.errors.append("line %d: parentObj %s resolves to no eventAddr" % (ln, p))
    if not args.allow_dangling:
        for ln, a in state_addrs:
            if a not in addrs:
                c.errors.append("line %d: state of unknown eventAddr %s" % (ln, a))
    if args.all_types:
        missing = [t for t in TYPES if t not in types_seen]
        if missing:
            c.errors.append("event types never seen: %s" % ", ".join(missing))
    if args.processes and len(pids) != args.processes:
        c.errors.append("%d processes (myPid) seen, expected %d" % (len(pids), args.processes))
    if counts["event"] == 0:
        c.errors.append("no event records")
    for e in c.errors[:50]:
        print(e)
    if len(c.errors) > 50:
        print("... %d more" % (len(c.errors) - 50))
    print("%s: %d events, %d states, %d lifecycle records, %d types, %d processes: %s" %
          (args.file, counts["event"], counts["state"], counts["lifecycle"], len(types_seen), len(pids),
           "FAIL" if c.errors else "ok"))
    return 1 if c.errors else 0


def check_event(c, rec, num, addrs, parents, types_seen, pids, args):
    t = c.need(rec, "type", str, "event")
    where = "event %s" % t
    if t not in DETAILS:
        c.err("unknown type %r" % t)
        return
    types_seen.add(t)
    a = c.need(rec, "eventAddr", str, where)
    if isinstance(a, str):
        if not HEX.match(a):
            c.err("%s: eventAddr %r is not 0x-hex" % (where, a))
        if a in addrs:
            c.err("%s: eventAddr %s not unique (also line %d)" % (where, a, addrs[a]))
        addrs[a] = c.lineno
    if "parentObj" not in rec:
        c.err("%s: missing parentObj" % where)
    p = rec.get("parentObj")
    if p is not None and (not isinstance(p, str) or not HEX.match(p)):
        c.err("%s: parentObj %r" % (where, p))
    pxn = rec.get("isPxn", False)
    if "isPxn" in rec:
        if pxn is not True:
            c.err("%s: isPxn present but not true" % where)
        c.need(rec, "originPid", int, where)
    elif "originPid" in rec:
        c.err("%s: originPid without isPxn" % where)
    parents.append((c.lineno, p, pxn))
    c.need(rec, "commId", int, where)
    rank = c.need(rec, "rank", int, where)
    uuid = c.need(rec, "gpuUuid", str, where)
    if isinstance(uuid, str) and not UUID.match(uuid):
        c.err("%s: gpuUuid %r" % (where, uuid))
    if pxn and (rec.get("commId") != 0 or rank != -1):
        c.err("%s: PXN event with commId/rank %r/%r (want 0/-1)" % (where, rec.get("commId"), rank))
    start = c.point(rec, "start", where)
    incomplete = rec.get("incomplete", False)
    if "incomplete" in rec and incomplete is not True:
        c.err("%s: incomplete present but not true" % where)
    if incomplete:
        if args.no_incomplete:
            c.err("%s: incomplete event" % where)
        if "stop" in rec:
            c.err("%s: incomplete event with a stop" % where)
    else:
        stop = c.point(rec, "stop", where)
        d = c.need(rec, "duration", num, where)
        c.ts(d, where + ".duration")
        if isinstance(start, dict) and isinstance(stop, dict) and isinstance(d, decimal.Decimal):
            try:
                if abs((stop["ts"] - start["ts"]) - d) > decimal.Decimal("0.0015"):
                    c.err("%s: duration %s != stop - start" % (where, d))
            except (TypeError, KeyError, decimal.InvalidOperation):
                pass
    if isinstance(start, dict):
        pids.add(rec.get("myPid", start.get("pid")))
    det = c.need(rec, "details", dict, where)
    if isinstance(det, dict):
        for k in DETAILS[t]:
            if k not in det:
                c.err("%s: details missing %r" % (where, k))
                continue
            v = det[k]
            if k in STRING_OR_NULL:
                if v is not None and not isinstance(v, str):
                    c.err("%s: details.%s %r" % (where, k, v))
            elif k in HEX_FIELDS:
                if not isinstance(v, str) or not HEX.match(v):
                    c.err("%s: details.%s %r is not 0x-hex" % (where, k, v))
            elif not isinstance(v, (int, bool)):
                c.err("%s: details.%s %r is not a number/bool" % (where, k, v))
        for k in ("execStop", "gpuStart", "gpuStop"):
            if k in det:
                c.ts(det[k], "%s.details.%s" % (where, k))
        if "execStop" in det and isinstance(start, dict) and det["execStop"] < start["ts"]:
            c.err("%s: execStop before start" % where)


def check_state(c, rec, state_addrs):
    a = c.need(rec, "eventAddr", str, "state")
    if isinstance(a, str):
        if not HEX.match(a):
            c.err("state: eventAddr %r" % a)
        state_addrs.append((c.lineno, a))
    c.ts(rec.get("ts"), "state.ts")
    sid = c.need(rec, "id", int, "state")
    name = c.need(rec, "name", str, "state")
    if sid in STATES and name != STATES[sid]:
        c.err("state %r has name %r, want %r" % (sid, name, STATES[sid]))
    if sid not in STATES:
        c.err("state id %r unknown" % sid)
    c.need(rec, "pid", int, "state")
    c.need(rec, "tid", int, "state")


def check_lifecycle(c, rec, num, args):
    where = "lifecycle"
    if rec.get("type") != "ProfilerLifecycle":
        c.err("lifecycle type %r" % rec.get("type"))
    func = rec.get("func")
    if func not in ("ProfilerInit", "ProfilerFinalize"):
        c.err("lifecycle func %r" % func)
    c.need(rec, "commId", int, where)
    c.need(rec, "rank", int, where)
    c.need(rec, "gpuUuid", str, where)
    c.point(rec, "start", where)
    c.point(rec, "stop", where)
    c.need(rec, "duration", num, where)
    det = c.need(rec, "details", dict, where)
    if not isinstance(det, dict):
        return
    if func == "ProfilerInit":
        for k in ("nranks", "nNodes", "eventMask", "pluginVersion"):
            c.need(det, k, int, where + " details")
        if "commName" not in det or not (det["commName"] is None or isinstance(det["commName"], str)):
            c.err("ProfilerInit: commName missing or not a string/null")
        if det.get("clock") != "monotonic":
            c.err("ProfilerInit: clock %r" % det.get("clock"))
        c.ts(det.get("realtimeOffsetUs"), "ProfilerInit.realtimeOffsetUs")
    elif func == "ProfilerFinalize":
        c.need(det, "events", int, where + " details")
        d = c.need(det, "dropped", int, where + " details")
        if args.max_dropped >= 0 and isinstance(d, int) and d > args.max_dropped:
            c.err("ProfilerFinalize: dropped %d > %d" % (d, args.max_dropped))
        for k in ("gpuClockOffsetUs", "gpuClockDriftPpm", "gpuClockErrorUs"):
            if k in det and not isinstance(det[k], num):
                c.err("ProfilerFinalize: %s %r" % (k, det[k]))
        pc = det.get("processCounters")
        if pc is not None:
            if not isinstance(pc, dict) or not isinstance(pc.get("events"), int) or \
                    not isinstance(pc.get("dropped"), int):
                c.err("ProfilerFinalize: processCounters %r" % (pc,))
            else:
                for k, v in pc.items():
                    vals = v.values() if isinstance(v, dict) else [v]
                    if not all(isinstance(x, int) and not isinstance(x, bool) for x in vals):
                        c.err("ProfilerFinalize: processCounters.%s %r" % (k, v))


if __name__ == "__main__":
    sys.exit(main())
