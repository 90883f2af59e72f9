#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""sinks.encoders_decoded: test_encoders' OTLP payloads (protobuf and JSON)
through the official schema's decoder (decode_otlp.js): both decode, say
the same thing, and hold the model's values as worked out by hand.

usage: check_encoders.py TEST_ENCODERS WORKDIR   (77: node or the decoder is not installed)"""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TEST, WORK = sys.argv[1], sys.argv[2]
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL " + msg)


def attrs(kvs):
    return {kv["key"]: next(iter(kv["value"].values())) for kv in kvs}


def main():
    node = shutil.which("node")
    decoder = os.path.join(HERE, "node_modules", "@opentelemetry", "otlp-transformer")
    if not node or not os.path.isdir(decoder):
        print("SKIP: node or the OTLP decoder is not installed (cd tests/sinks && npm ci; .ci/deps.sh --ci does it)")
        sys.exit(77)
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    subprocess.run([TEST, WORK], check=True)
    out = subprocess.run([node, os.path.join(HERE, "decode_otlp.js"), WORK + "/otlp.pb", WORK + "/otlp.json"],
                         check=True, capture_output=True, text=True).stdout
    both = json.loads(out)
    check(both["proto"] == both["json"], "the protobuf and the JSON payload decode differently")
    req = both["proto"]
    res = req["resourceMetrics"]
    check(len(res) == 2, "%d resources, not 2 (the process, one communicator rank)" % len(res))
    proc, rank = attrs(res[0]["resource"]["attributes"]), attrs(res[1]["resource"]["attributes"])
    check(proc == {"service.name": "ncclscope", "service.version": "0.1.0", "host.name": "h1", "process.pid": "7"},
          "process resource %s" % proc)
    check(rank.get("nccl.comm.hash") == "0x0000000000001111" and rank.get("nccl.rank") == "0"
          and rank.get("nccl.comm.nranks") == "2" and rank.get("gpu.uuid") == "GPU-a", "rank resource %s" % rank)
    metrics = {}
    for r in res:
        for sm in r["scopeMetrics"]:
            check(sm["scope"] == {"name": "ncclscope", "version": "0.1.0"}, "scope %s" % sm["scope"])
            for m in sm["metrics"]:
                metrics[m["name"]] = m
    check(sorted(metrics) == sorted([
        "ncclscope.series", "ncclscope.series.refused", "ncclscope.last_update.timestamp", "ncclscope.windows",
        "ncclscope.events.dropped", "ncclscope.oldest_inflight", "ncclscope.hang.episodes",
        "ncclscope.last_posted_seq", "ncclscope.last_completed_seq", "ncclscope.ops",
        "ncclscope.ops.gpu_timed", "ncclscope.bytes", "ncclscope.ops.incomplete", "ncclscope.op.duration"]),
        "metrics %s" % sorted(metrics))
    h = metrics["ncclscope.op.duration"]
    check(h["unit"] == "s" and h["histogram"]["aggregationTemporality"] == 2, "op.duration unit/temporality")
    p = h["histogram"]["dataPoints"][0]
    check(p["count"] == "3" and p["sum"] == 0.0025, "histogram count %s sum %s" % (p["count"], p["sum"]))
    check(p["bucketCounts"] == ["0", "2", "0", "0", "1", "0", "0", "0", "0", "0", "0"],
          "bucket counts %s" % p["bucketCounts"])
    check(p["explicitBounds"] == [8e-06, 3.2e-05, 0.000128, 0.000512, 0.002048, 0.008192, 0.032768, 0.131072,
                                  0.524288, 2.097152], "bounds %s" % p["explicitBounds"])
    check(p["startTimeUnixNano"] == "1700000000000000000" and p["timeUnixNano"] == "1700000000250000000",
          "histogram times")
    a = attrs(p["attributes"])
    check(a == {"job_id": "job-9", "host": "h1", "comm_name": 'w"o\\r\nld', "nccl.op.type": "coll",
                "nccl.func": "AllReduce"}, "histogram attributes %s" % a)
    g = metrics["ncclscope.oldest_inflight"]["gauge"]["dataPoints"][0]
    check(g["asDouble"] == 0.5, "oldest in flight %s" % g)
    b = metrics["ncclscope.bytes"]
    check(b["unit"] == "By" and b["sum"]["isMonotonic"] and b["sum"]["dataPoints"][0]["asInt"] == "3145728",
          "bytes %s" % b)
    check(metrics["ncclscope.series"]["gauge"]["dataPoints"][0]["asInt"] == "26", "series")
    posted = metrics["ncclscope.last_posted_seq"]
    check(posted["unit"] == "{op}" and posted["gauge"]["dataPoints"][0]["asInt"] == "5"
          and metrics["ncclscope.last_completed_seq"]["gauge"]["dataPoints"][0]["asInt"] == "4",
          "posted and completed %s" % posted)
    check(metrics["ncclscope.last_update.timestamp"]["gauge"]["dataPoints"][0]["asDouble"] == 1700000000.25,
          "last update")
    if failures:
        sys.exit(1)
    print("ok: both OTLP payloads decoded by the official schema, %d metrics as worked out" % len(metrics))


main()
