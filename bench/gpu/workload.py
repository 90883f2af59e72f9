#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Real NCCL through torch.distributed, one process per rank: the workload of
the records in docs/validation/. Needs a Linux machine with an NVIDIA GPU and
PyTorch (which ships NCCL); nothing of the build or the tests uses it.

usage: bench/gpu/launch.sh NPROC TAG [options]   (launch.sh starts one process per rank)
  --mode mixed   every collective (all_reduce, all_gather, reduce_scatter,
                 broadcast, all_to_all), a send/recv ring, then an all_reduce
                 captured in a CUDA graph and replayed (default)
  --mode lat     all_reduce only
  --mode long    all_reduce until the process is killed
  --iters N      timed calls per operation and size [20], after 3 untimed
  --sizes LIST   bytes per rank, comma-separated [1024,65536,1048576,16777216]
  --profile FILE rank 0 also writes a PyTorch profiler (CUPTI) Chrome trace:
                 the GPU kernels' true times

Rank 0 prints one JSON line per measurement: {"op", "bytes", "us" (mean time
per call), "iters"}; with --profile first a "profile_wall_anchor" line (the
same instant in Unix and CLOCK_MONOTONIC microseconds, to put the CUPTI trace
on the plugin's clock); at the end {"op": "done"}. Environment: RANK,
WORLD_SIZE, MASTER_ADDR, MASTER_PORT (launch.sh sets them).
"""
import argparse
import json
import os
import time

import torch
import torch.distributed as dist

ap = argparse.ArgumentParser()
ap.add_argument("--mode", default="mixed", choices=("mixed", "lat", "long"))
ap.add_argument("--iters", type=int, default=20)
ap.add_argument("--sizes", default="1024,65536,1048576,16777216")
ap.add_argument("--profile", default="")
args = ap.parse_args()
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
dev = torch.device("cuda", 0)  # every rank on the machine's one GPU
torch.cuda.set_device(dev)
dist.init_process_group("nccl", rank=rank, world_size=world, device_id=dev)
sizes = [int(s) for s in args.sizes.split(",")]


def report(**fields):
    if rank == 0:
        print(json.dumps(fields), flush=True)


def timed(name, nbytes, call, iters):
    """Mean time of `iters` calls, after 3 warm-up calls and a barrier."""
    for _ in range(3):
        call()
    torch.cuda.synchronize()
    dist.barrier()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(iters):
        call()
    torch.cuda.synchronize()
    report(op=name, bytes=nbytes, us=(time.perf_counter() - t0) / iters * 1e6, iters=iters)


if args.mode == "long":
    x = torch.ones(65536, device=dev)
    while True:
        dist.all_reduce(x)
        torch.cuda.synchronize()

prof = None
if args.profile and rank == 0:
    prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                              torch.profiler.ProfilerActivity.CUDA])
    prof.__enter__()
    report(op="profile_wall_anchor", unix_us=time.time() * 1e6,
           mono_us=time.clock_gettime_ns(time.CLOCK_MONOTONIC) / 1e3)

for size in sizes:
    elems = max(size // 4, world)  # float32
    x = torch.ones(elems, device=dev)
    timed("all_reduce", elems * 4, lambda: dist.all_reduce(x), args.iters)
    if args.mode == "lat":
        continue
    gathered = torch.empty(elems * world, device=dev)
    timed("all_gather", elems * 4 * world, lambda: dist.all_gather_into_tensor(gathered, x), args.iters)
    timed("reduce_scatter", elems * 4 * world, lambda: dist.reduce_scatter_tensor(x, gathered), args.iters)
    timed("broadcast", elems * 4, lambda: dist.broadcast(x, 0), args.iters)
    exchanged = torch.empty_like(gathered)
    # with 2 ranks this includes a send/recv to the rank itself (device work without a profiler op)
    timed("all_to_all", elems * 4 * world, lambda: dist.all_to_all_single(exchanged, gathered), args.iters)
    received = torch.empty_like(x)

    def ring():
        ops = [dist.P2POp(dist.isend, x, (rank + 1) % world), dist.P2POp(dist.irecv, received, (rank - 1) % world)]
        for req in dist.batch_isend_irecv(ops):
            req.wait()

    timed("sendrecv_ring", elems * 4, ring, args.iters)

if args.mode == "mixed":
    try:
        x = torch.ones(65536, device=dev)
        side = torch.cuda.Stream()  # CUDA graph capture wants warm-up calls on a side stream
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                dist.all_reduce(x)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(10):
            graph.replay()
        torch.cuda.synchronize()
        report(op="graph_all_reduce", bytes=65536 * 4, us=(time.perf_counter() - t0) / 10 * 1e6, iters=10)
    except Exception as ex:  # NCCL in a CUDA graph is optional: the rest of the run still counts
        report(op="graph_all_reduce", error=repr(ex)[:300])

if prof is not None:
    prof.__exit__(None, None, None)
    prof.export_chrome_trace(args.profile)
dist.barrier()
torch.cuda.synchronize()
dist.destroy_process_group()
report(op="done")
