# SPDX-License-Identifier: Apache-2.0
"""What the metric outputs must say, from the simulator's truth (stdlib only).

The ops and bytes counters of a communicator rank are cumulative: after the
last window they hold every operation NCCL emitted a Coll/P2p event for. Bytes
follow nccl-tests (what the plugin sees): the simulator's tasks have
count = bytes // 4 floats, and AllGather/ReduceScatter count every rank's
part."""
import collections
import json
import re

PER_RANK_FUNCS = ("AllGather", "ReduceScatter", "AlltoAll", "Gather", "Scatter")


def load_truth(path):
    truth = collections.defaultdict(list)
    with open(path) as f:
        for line in f:
            o = json.loads(line)
            truth[o["kind"]].append(o)
    return truth


def expected_ops(truth):
    """{(comm hex, rank, func): (ops, bytes)} of emitted Coll/P2p."""
    nranks = {(c["comm"], c["rank"]): c["nranks"] for c in truth["comm"]}
    exp = collections.defaultdict(lambda: [0, 0])
    for t in truth["coll"]:
        if not t.get("emitted", True) or t.get("ce"):
            continue
        k = (t["comm"], t["rank"], t["func"])
        b = (t["bytes"] // 4) * 4
        if t["func"] in PER_RANK_FUNCS:
            b *= nranks[(t["comm"], t["rank"])]
        exp[k][0] += 1
        exp[k][1] += b
    return {k: tuple(v) for k, v in exp.items()}


SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_prom(text):
    """[(name, {labels}, value)] of every sample line."""
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if not m:
            raise ValueError("not a sample line: %r" % line)
        labels = dict(LABEL.findall(m.group(3) or ""))
        out.append((m.group(1), labels, float(m.group(4))))
    return out


def prom_ops(samples):
    """{(comm, rank, func): (ops, bytes)} from ncclscope_ops_total / ncclscope_bytes_total."""
    got = collections.defaultdict(lambda: [0, 0])
    for name, lab, v in samples:
        if name in ("ncclscope_ops_total", "ncclscope_bytes_total"):
            k = (lab["comm"], int(lab["rank"]), lab["func"])
            got[k][0 if name == "ncclscope_ops_total" else 1] = int(v)
    return {k: tuple(v) for k, v in got.items()}
