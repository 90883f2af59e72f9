#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ncclscope bench: turn bench/run.sh's raw outputs into tables and one JSON file.

report.py RAW_DIR OUT_JSON

Reads micro.jsonl, macro.jsonl, rate.json, rate_trace.json, rss.json,
rss_trace.json, scenario.jsonl and export.jsonl from RAW_DIR, prints the
tables of docs/performance.md with the targets next to them, and
writes everything (raw and summarised) plus the machine description to
OUT_JSON. Medians of medians: each process already reports medians over its
interleaved repetitions.
"""
import json
import os
import platform
import statistics
import subprocess
import sys

TARGET_PAIR_NS = 50.0
TARGET_BYTES = 32.0
TARGET_EXPORT = 2e6


def load_lines(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def load(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def machine():
    info = {"kernel": platform.release(), "cores": os.cpu_count()}
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            k, _, v = line.partition(":")
            if k.strip() in ("Model name", "Hypervisor vendor", "L2 cache", "L3 cache"):
                info[k.strip()] = v.strip()
    except OSError:
        pass
    return info


def med(values):
    return statistics.median(values) if values else 0.0


def micro_table(rows):
    print("\n== micro: ns per call sequence, tight loop, one clock read per batch (medians) ==")
    print("%-8s %-7s | %-27s | %-27s | %-27s" % ("threads", "comm", "ProxyStep start+stop", "ProxyStep +3 states",
                                               "Coll start+stop"))
    print("%-8s %-7s | %8s %8s %9s | %8s %8s %9s | %8s %8s %9s" % ("", "", "empty", "nsc", "added", "empty", "nsc",
                                                                "added", "empty", "nsc", "added"))
    out = []
    for r in rows:
        cells = []
        for seq in ("step_pair", "step_3states", "coll_pair"):
            s = r["seqs"][seq]
            cells += [s["empty_ns"], s["plugin_ns"], s["added_ns"]]
        print("%-8d %-7s | %8.1f %8.1f %9.1f | %8.1f %8.1f %9.1f | %8.1f %8.1f %9.1f" %
              tuple([r["threads"], "shared" if r["shared_comm"] else "own"] + cells))
        if r.get("null_handles"):
            print("         warning: %d NULL handles (drop path measured)" % r["null_handles"])
        out.append({"threads": r["threads"], "shared_comm": r["shared_comm"], "seqs": r["seqs"],
                    "null_handles": r.get("null_handles", 0)})
    one = [r for r in rows if r["threads"] == 1 and not r["shared_comm"]]
    sixteen = [r for r in rows if r["threads"] == 16]
    if one:
        a1 = one[0]["seqs"]["step_pair"]["added_ns"]
        print("target: <= %.0f ns added per start+stop pair on one thread: %.1f ns -> %s" %
              (TARGET_PAIR_NS, a1, "met" if a1 <= TARGET_PAIR_NS else "NOT met"))
        for r in sixteen:
            a16 = r["seqs"]["step_pair"]["added_ns"]
            print("target: <= 2x that at 16 threads (%s comm): %.1f ns = %.2fx of 1 thread -> %s" %
                  ("shared" if r["shared_comm"] else "own", a16, a16 / a1 if a1 > 0 else 0,
                   "met" if a16 <= 2 * max(a1, 0) else "NOT met"))
    return out


def macro_table(rows):
    print("\n== macro: simulator --fast workload, ns per call incl. one clock pair (medians) ==")
    out = {}
    for ranks in sorted({r["bench"]["threads"] for r in rows}):
        sel = [r for r in rows if r["bench"]["threads"] == ranks]
        cfg = {}
        for r in sel:
            for c in r["bench"]["configs"]:
                name = c["name"] if c["name"] != "plugin" else "nsc_" + r["mask"]
                cfg.setdefault(name, []).append(c)
        clock = med([r["bench"]["clock_pair_ns"] for r in sel])
        names = [n for n in ("none", "empty", "nsc_default", "nsc_all") if n in cfg]
        print("ranks=%d (app+proxy+net thread per rank; clock pair %.1f ns)" % (ranks, clock))
        print("  %-14s" % "call" + "".join("%12s" % n for n in names) + "%12s%12s" % ("dflt/empty", "all/empty"))
        table = {}
        for role in ("app", "proxy", "net"):
            for kind in ("start", "stop", "record"):
                vals = {}
                for n in names:
                    v = [c["roles"][role][kind + "_ns"] for c in cfg[n]
                         if role in c["roles"] and c["roles"][role][kind + "s"] > 0]
                    if v:
                        vals[n] = med(v)
                if not any(k.startswith("nsc") for k in vals):
                    continue
                table["%s.%s" % (role, kind)] = vals
        vals = {n: med([c["coll_ns"] for c in cfg[n]]) for n in names}
        table["per_collective"] = vals
        for k, vals in table.items():
            e = vals.get("empty")
            line = "  %-14s" % k + "".join("%12s" % ("%.1f" % vals[n] if n in vals else "-") for n in names)
            for n in ("nsc_default", "nsc_all"):
                line += "%12s" % ("%.2f" % (vals[n] / e) if e and n in vals else "-")
            print(line)
        out[str(ranks)] = {"clock_pair_ns": clock, "calls": table}
    print("  (empty returns NULL handles, so it gets no stop/record calls: '-'; per collective is dominated by")
    print("   thread hand-offs between app, proxy and net threads on 2 cores: compare, do not read as cost)")
    return out


def main():
    raw, out_path = sys.argv[1], sys.argv[2]
    result = {"machine": machine()}
    print("machine: %s, %s cores, kernel %s" % (result["machine"].get("Model name", "?"), result["machine"]["cores"],
                                                 result["machine"]["kernel"]))
    result["micro"] = micro_table(load_lines(os.path.join(raw, "micro.jsonl")))
    result["macro"] = macro_table(load_lines(os.path.join(raw, "macro.jsonl")))

    rate, rt = load(os.path.join(raw, "rate.json")), load(os.path.join(raw, "rate_trace.json"))
    print("\n== writer thread, ProxyStep flood (start, 3 states, stop), 1 producer ==")
    if rate and rt:
        bpr = rt["file_size"] / max(rt["records"], 1)
        bpe = rt["file_size"] / max(rt["starts"], 1)
        print("achieved %.2f M records/s for %.1f s: plugin threads %d, CPU %.2f%% of one core" %
              (rate["achieved_rate"] / 1e6, rate["wall_s"], rate["plugin_threads"], rate["plugin_cpu_pct"]))
        print("trace %d bytes, %d records (%d dropped): %.2f bytes/record, %.2f bytes/event (start..stop + 3 states)"
              % (rt["file_size"], rt["records"], rt["dropped"], bpr, bpe))
        result["rate"] = {"run": rate, "trace": rt, "bytes_per_record": bpr, "bytes_per_event": bpe}

    rss, rsst = load(os.path.join(raw, "rss.json")), load(os.path.join(raw, "rss_trace.json"))
    print("\n== memory over run length (paced 2 M records/s) ==")
    if rss:
        for m in rss["milestones"]:
            print("after %12d records (%6.1f s): VmRSS %7d kB" % (m["records"], m["t_s"], m["vmrss_kb"]))
        print("VmHWM %d kB at the end; writer CPU %.1f%%; dropped %s" %
              (rss["vmhwm_kb"], rss["plugin_cpu_pct"], rsst["dropped"] if rsst else "?"))
        result["rss"] = {"run": rss, "trace": rsst}

    print("\n== bytes on disk, simulator default scenario (--fast --iters 20) ==")
    result["scenario"] = []
    for s in load_lines(os.path.join(raw, "scenario.jsonl")):
        st = s["stats"]
        bpr = st["file_size"] / max(st["records"], 1)
        bpe = st["file_size"] / max(st["starts"], 1)
        print("mask %-8s %9d bytes, %8d records, %7d events: %.2f bytes/record, %.2f bytes/event -> %s" %
              (s["mask"], st["file_size"], st["records"], st["starts"], bpr, bpe,
               "met" if bpe <= TARGET_BYTES else "NOT met (target %.0f per event)" % TARGET_BYTES))
        result["scenario"].append({"mask": s["mask"], "bytes_per_record": bpr, "bytes_per_event": bpe, "stats": st})

    print("\n== ncclscope export on the 1 M/s trace ==")
    result["export"] = []
    recs = rt["records"] if rt else 0
    for e in load_lines(os.path.join(raw, "export.jsonl")):
        s = e["us"] / 1e6
        r = recs / s if s > 0 else 0
        print("%-6s %.2f s for %d records: %.2f M records/s, %.0f MB out -> %s" %
              (e["format"], s, recs, r / 1e6, e["out_bytes"] / 1e6,
               "met" if r >= TARGET_EXPORT else "NOT met (target 2 M/s)"))
        result["export"].append(dict(e, records=recs, records_per_s=r))

    with open(out_path, "w") as f:
        json.dump(result, f, indent=1)
    print("\nwritten: %s" % out_path)


if __name__ == "__main__":
    main()
