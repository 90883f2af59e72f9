/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: command line, process fan-out and the run summary.
 *
 * Runs on the main thread of the parent process. With --procs P it forks
 * P-1 children after creating the shared area; each process (parent included)
 * loads the plugin itself, runs the scenario for its ranks and writes its
 * part of the truth; the parent merges the parts into the one --truth file.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim.h"

simOptions simOpt = {
    .scenario = "default",
    .seed = 1,
    .iters = 2,
    .procs = 1,
    .ranksPerProc = 2,
    .nodes = 2,
    .netLatUs = 5.0,
    .netGbps = 100.0,
    .benchThreads = 1,
    .benchReps = 1,
    .benchBatch = 64,
    .benchBatches = 16,
    .benchSettleMs = 20,
    .benchSeqMask = 7,
    .channels = 4,
    .timerGranNs = 2048,
    .hangTimeoutMs = 0, /* 0: the scenario's default (simScenarioPresets) */
    .stragglerUs = 3000,
    .replaySpeed = 1.0,
    .profConnectUs = 25,
    .gpuDriftPpm = 5.0,
    .gpuOffsetS = 40.0,
    .ncclCost = true,
};
int simProcIndex;

static void usage(FILE* f) {
  fprintf(f,
          "usage: ncclscope-sim [options]\n"
          "Drives an NCCL profiler plugin (ncclProfiler_v1..v7) as a chosen NCCL release does, without GPU or NCCL.\n"
          "\n"
          "NCCL release (docs/simulator.md, \"NCCL personalities\"):\n"
          "  --nccl VERSION        2.23 .. 2.32 (or e.g. 2.31.2), or ideal (2.30 without its quirks) [2.30]\n"
          "                        2.31, 2.32: ncclProfiler_v7 first, KernelPhase, the profiler thread\n"
          "  --quirk [+|-]NAME,..  turn single behaviours of the release on or off (an unknown name lists them)\n"
          "\n"
          "Timing and configuration:\n"
          "  --connect-ms MS       a communicator's first launch waits MS for connection setup [0]\n"
          "  --profiler-connect-us US  each of the 128 profiler proxy connections (KernelCh on, 2.26+) [25]\n"
          "  --nonblocking         nonblocking communicators: launch on an async thread, GroupApi stops first\n"
          "  --async-depth N       groups in flight before the app waits for the oldest (0: wait each) [0]\n"
          "  --kch-lag-ms MAX      the proxy sees GPU ring writes after a log-uniform lag, 2 us .. MAX\n"
          "                        (2.31+: NCCL's profiler thread sees them after 1 .. 10 us)\n"
          "  --user-tags N         collective call i of a communicator carries user tag 1 + i %% N (v7) [0: none]\n"
          "  --gpu-offset-s S      each GPU clock is off realtime by up to +-S [40]\n"
          "  --gpu-drift-ppm P     each GPU clock drifts by up to +-P ppm [5]\n"
          "  --timeslice-us US     a process's ranks share one GPU (one clock), kernels delayed up to US\n"
          "  --copy-proxy          intra-node peers through a copy proxy (ProxyOps without steps)\n"
          "  --socket-threads      the socket net plugin uses helper threads\n"
          "  --peer-wait-us N      senders wait up to N more proxy passes for their receivers\n"
          "  --exit MODE           finalize (default), exit (no destroy), sigterm, abort (ncclCommAbort)\n"
          "\n"
          "Plugin selection (NCCL's rules):\n"
          "  NCCL_PROFILER_PLUGIN unset      dlopen(\"libnccl-profiler.so\")\n"
          "  NCCL_PROFILER_PLUGIN=none       no plugin (case-insensitive)\n"
          "  NCCL_PROFILER_PLUGIN=X          dlopen(\"X\"), then dlopen(\"libnccl-profiler-X.so\") (2.26+; 2.28+ only\n"
          "                                  where X has no '/' and is not a lib*.so name); empty: as unset\n"
          "  --plugin PATH                   shortcut that takes precedence over the variable\n"
          "  The first of ncclProfiler_v6..v1 found is used, through NCCL's version adapters.\n"
          "  The library is dlclosed when the last communicator of the process is finalized; a plugin\n"
          "  that leaves threads or file descriptors behind is reported and the exit status is 1.\n"
          "\n"
          "Topology and model:\n"
          "  --procs P             processes (fork; each loads the plugin) [1]\n"
          "  --ranks-per-proc R    ranks per process, one app + proxy + net thread each [2]\n"
          "  --nodes N             nodes; ranks on other nodes talk through the network [2]\n"
          "  --host-ns             each node's processes on a simulated host of their own: a UTS namespace\n"
          "                        (host name <name>-n<node>); needs root or user namespaces\n"
          "  --host-offset-s S     and on nodes >= 1 a time namespace: CLOCK_MONOTONIC off by S/2..S seconds\n"
          "  --host-drift-ppm P    and on nodes >= 1 CLOCK_MONOTONIC running fast or slow by P/2..P ppm\n"
          "                        (CLOCK_REALTIME stays true); needs LD_PRELOAD=libncclscope-simclock.so\n"
          "  --host-drift-realtime and their CLOCK_REALTIME drifting with it (a host without NTP)\n"
          "  --net-lat-us US       per-link latency [5]\n"
          "  --net-gbps G          per-link bandwidth in Gbit/s [100]\n"
          "  --channels C          max channels per collective (<= 64) [4]\n"
          "  --timer-gran-ns NS    GPU globaltimer granularity of pTimer values [2048]\n"
          "  --straggler-us US     delay of the late rank in `straggler` [3000]\n"
          "  --hang-timeout-ms MS  how long ranks wait for the others before giving a collective up\n"
          "                        [5000 in `hang`, 3000 in `skip`, 30000 elsewhere: a loaded machine is no hang]\n"
          "  --fast                no waiting: durations are not real (for overhead measurements)\n"
          "  --nccl-cost on|off    charge the app and proxy threads NCCL's own work for the enabled event bits\n"
          "                        (profiler proxy ops, timestamps, per step/request/proxy-loop calls); the\n"
          "                        modelled time is reported either way (truth nccl_cost*, stderr) [on]\n"
          "\n"
          "Scenarios (--scenario NAME, --seed N, --iters K):\n"
          "  default    AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, AllToAll (as P2ps), Send/Recv\n"
          "             over a 1 KiB..4 MiB sweep, plus a split communicator sharing the proxy thread\n"
          "  pxn        a proxy thread sends on behalf of a rank of another process (foreign context,\n"
          "             parent and pid); with --procs 1 the foreign values are unmapped addresses\n"
          "  graph      graph capture: API events once, Coll/ProxyOp/KernelCh at every replay\n"
          "  ce         v6 copy-engine collectives: CeColl (parent CollApi) with CeSync/CeBatch\n"
          "  churn      K communicator init/finalize cycles (dlclose/reopen each cycle)\n"
          "  straggler  the last rank starts every collective late (--straggler-us)\n"
          "  waiter     every rank but one (from the seed) starts every collective late: that one waits\n"
          "  hang       one rank (from the seed) never posts AllReduce #k (1..6, from the seed) and waits;\n"
          "             the others give up after --hang-timeout-ms\n"
          "  reuse      many short events; reports plugins that hand out a live handle twice\n"
          "  threads    4 app threads per rank, one communicator each, all at once\n"
          "  nasty      NULL strings and commName, huge counts, channels 0..63, unknown states, NULL stops\n"
          "  batch      grouped same-size AllReduces and all-to-alls (coalesced kernel batches)\n"
          "  nocoll     symmetric, AllGatherV Broadcast, CE and self send/recv operations between AllReduces\n"
          "  overrun    small AllReduces back to back, the app never waits (the GPU runs ahead of the proxy)\n"
          "  leaks      copy-proxy peers, receive step restarts, waiting senders (use --ranks-per-proc 4)\n"
          "  split      a split communicator outlives the world communicator that created the proxy\n"
          "  mismatch_func, mismatch_count, mismatch_dtype, skip\n"
          "             one rank (from the seed) at AllReduce #k (1..6) posts AllGather instead, a quarter\n"
          "             of the count, bf16 instead of f32, or nothing (it then runs one behind: a hang)\n"
          "\n"
          "Replay (instead of a scenario):\n"
          "  --replay FILE|DIR     drive the plugin with a recording in the JSON Lines export contract\n"
          "                        (ncclscope export --format jsonl; a directory: every *.jsonl in it): one\n"
          "                        process per recorded pid, one thread per recorded thread, recorded handles\n"
          "                        mapped to the plugin's, states, pTimers and sizes as recorded\n"
          "  --speed X             recorded time / replay time [1], 0.001 to 1e6; 0: no pacing (as fast as possible)\n"
          "\n"
          "Output:\n"
          "  --truth FILE          ground truth as JSON Lines (see docs/simulator.md)\n"
          "  --bench               time the plugin calls against no plugin and the empty plugin (implies --fast)\n"
          "  --bench-threads N     producer threads in --bench [1]\n"
          "  --bench-reps R        run the configurations R times, interleaved; print medians [1]\n"
          "  --bench-micro         tight loops of identical calls (ProxyStep pairs, 3 states, Coll pairs),\n"
          "                        one clock read per batch, empty plugin vs --plugin, per thread\n"
          "  --bench-shared-comm   --bench-micro: all threads share one communicator (default: one each)\n"
          "  --bench-batch N       --bench-micro: sequences per timed batch [64]\n"
          "  --bench-batches N     --bench-micro: batches per sequence kind and repetition [16]\n"
          "  --bench-settle-ms MS  --bench-micro: untimed pause between repetitions [20]\n"
          "  --bench-seq NAME      --bench-micro: only step_pair, step_3states or coll_pair [all]\n"
          "  --bench-cadence       NCCL's sequences (networked and single-node collectives, a P2P pair), one per\n"
          "                        collective, with cache-evicting work between them: ns inside the plugin calls\n"
          "  --bench-gaps LIST     --bench-cadence: gaps between collectives, us [1,10,100,1000]\n"
          "  --bench-baseline PATH --bench-micro, --bench-cadence: another build of the plugin, timed side by side\n"
          "                        (interleaved) with --plugin's, e.g. the previous commit's\n"
          "  --bench-nccl WORKLOAD one workload (coll-1node, coll-net, p2p-1node) with --plugin or none: the\n"
          "                        plugin's call time and NCCL's modelled time per operation (BENCHNCCL {json})\n"
          "  -v, --verbose         progress on stderr\n"
          "  --version             the version (the ncclscope project's)\n"
          "  -h, --help            this text\n");
}

/* Strict numbers: the whole argument must be a number in range, or the run
 * stops with a reason (a typo must not silently become 0). */
static void badNumber(const char* opt, const char* arg, const char* what) {
  SIM_ERR("--%s: '%s' is not %s", opt, arg, what);
  exit(2);
}
static int intArg(const char* opt, const char* arg, long lo, long hi) {
  char* end;
  errno = 0;
  long v = strtol(arg, &end, 0);
  char what[96];
  snprintf(what, sizeof what, "a whole number from %ld to %ld", lo, hi);
  if (errno || end == arg || *end || v < lo || v > hi) badNumber(opt, arg, what);
  return (int)v;
}
static uint64_t u64Arg(const char* opt, const char* arg) {
  char* end;
  errno = 0;
  unsigned long long v = strtoull(arg, &end, 0);
  if (errno || end == arg || *end || *arg == '-') badNumber(opt, arg, "a non-negative whole number");
  return v;
}
static double realArg(const char* opt, const char* arg, double lo, double hi) {
  char* end;
  errno = 0;
  double v = strtod(arg, &end);
  char what[96];
  snprintf(what, sizeof what, "a number from %g to %g", lo, hi);
  if (errno || end == arg || *end || !(v >= lo && v <= hi)) badNumber(opt, arg, what);
  return v;
}

/* --speed: 0 (no pacing), or from a thousand times slower to a million times
 * faster; NaN, infinities, negatives and speeds near 0 (a recording's
 * microsecond stretched past any clock) are refused. */
static double speedArg(const char* arg) {
  char* end;
  errno = 0;
  double v = strtod(arg, &end);
  if (errno || end == arg || *end || !(v == 0 || (v >= 1e-3 && v <= 1e6)))
    badNumber("speed", arg, "0 (no pacing) or a number from 0.001 to 1e+06");
  return v;
}

static int scenarioProcess(int procIndex) {
  simProcIndex = procIndex;
  return simRunScenario(simOpt.scenario);
}

int main(int argc, char** argv) {
  static const struct option opts[] = {{"plugin", required_argument, 0, 'p'},
                                       {"scenario", required_argument, 0, 's'},
                                       {"seed", required_argument, 0, 'S'},
                                       {"iters", required_argument, 0, 'i'},
                                       {"procs", required_argument, 0, 'P'},
                                       {"ranks-per-proc", required_argument, 0, 'R'},
                                       {"nodes", required_argument, 0, 'N'},
                                       {"net-lat-us", required_argument, 0, 'l'},
                                       {"net-gbps", required_argument, 0, 'g'},
                                       {"fast", no_argument, 0, 'f'},
                                       {"truth", required_argument, 0, 't'},
                                       {"bench", no_argument, 0, 'b'},
                                       {"bench-threads", required_argument, 0, 'B'},
                                       {"channels", required_argument, 0, 'c'},
                                       {"timer-gran-ns", required_argument, 0, 'G'},
                                       {"hang-timeout-ms", required_argument, 0, 'H'},
                                       {"straggler-us", required_argument, 0, 'D'},
                                       {"verbose", no_argument, 0, 'v'},
                                       {"bench-reps", required_argument, 0, 'r'},
                                       {"bench-micro", no_argument, 0, 'm'},
                                       {"bench-shared-comm", no_argument, 0, 'C'},
                                       {"bench-batch", required_argument, 0, 'n'},
                                       {"bench-batches", required_argument, 0, 'k'},
                                       {"bench-settle-ms", required_argument, 0, 'z'},
                                       {"bench-seq", required_argument, 0, 'q'},
                                       {"replay", required_argument, 0, 'y'},
                                       {"speed", required_argument, 0, 'Y'},
                                       {"nccl", required_argument, 0, 1000},
                                       {"quirk", required_argument, 0, 1001},
                                       {"connect-ms", required_argument, 0, 1002},
                                       {"profiler-connect-us", required_argument, 0, 1003},
                                       {"nonblocking", no_argument, 0, 1004},
                                       {"async-depth", required_argument, 0, 1005},
                                       {"kch-lag-ms", required_argument, 0, 1006},
                                       {"gpu-drift-ppm", required_argument, 0, 1007},
                                       {"gpu-offset-s", required_argument, 0, 1008},
                                       {"timeslice-us", required_argument, 0, 1009},
                                       {"copy-proxy", no_argument, 0, 1010},
                                       {"socket-threads", no_argument, 0, 1011},
                                       {"peer-wait-us", required_argument, 0, 1012},
                                       {"exit", required_argument, 0, 1013},
                                       {"bench-cadence", no_argument, 0, 1014},
                                       {"bench-gaps", required_argument, 0, 1015},
                                       {"bench-baseline", required_argument, 0, 1016},
                                       {"host-ns", no_argument, 0, 1017},
                                       {"host-offset-s", required_argument, 0, 1018},
                                       {"host-drift-ppm", required_argument, 0, 1019},
                                       {"host-drift-realtime", no_argument, 0, 1020},
                                       {"version", no_argument, 0, 1021},
                                       {"nccl-cost", required_argument, 0, 1022},
                                       {"bench-nccl", required_argument, 0, 1023},
                                       {"user-tags", required_argument, 0, 1024},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  int o;
  const char* quirkSpec = NULL;
  simNcclSelect("2.30"); /* the newest release, unless --nccl says otherwise */
  while ((o = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
    switch (o) {
    case 'p': simOpt.plugin = optarg; break;
    case 's': simOpt.scenario = optarg; break;
    case 'S': simOpt.seed = u64Arg("seed", optarg); break;
    case 'i': simOpt.iters = intArg("iters", optarg, 0, 100000000); break;
    case 'P': simOpt.procs = intArg("procs", optarg, 1, SIM_MAX_RANKS / 4); break;
    case 'R': simOpt.ranksPerProc = intArg("ranks-per-proc", optarg, 1, SIM_MAX_RANKS / 4); break;
    case 'N': simOpt.nodes = intArg("nodes", optarg, 1, SIM_MAX_RANKS); break;
    case 'l': simOpt.netLatUs = realArg("net-lat-us", optarg, 0, 1e6); break;
    case 'g': simOpt.netGbps = realArg("net-gbps", optarg, 1e-3, 1e6); break;
    case 'f': simOpt.fast = true; break;
    case 't': simOpt.truthPath = optarg; break;
    case 'b': simOpt.bench = true; break;
    case 'B': simOpt.benchThreads = intArg("bench-threads", optarg, 1, 256); break;
    case 'c': simOpt.channels = intArg("channels", optarg, 1, 64); break;
    case 'G': simOpt.timerGranNs = intArg("timer-gran-ns", optarg, 1, 1000000000); break;
    case 'H': simOpt.hangTimeoutMs = intArg("hang-timeout-ms", optarg, 1, 3600000); break;
    case 'D': simOpt.stragglerUs = intArg("straggler-us", optarg, 0, 60000000); break;
    case 'r': simOpt.benchReps = intArg("bench-reps", optarg, 1, 10000); break;
    case 'm': simOpt.benchMicro = simOpt.bench = true; break;
    case 'C': simOpt.benchShared = true; break;
    case 'n': simOpt.benchBatch = intArg("bench-batch", optarg, 1, 1000000); break;
    case 'k': simOpt.benchBatches = intArg("bench-batches", optarg, 1, 1000000); break;
    case 'z': simOpt.benchSettleMs = intArg("bench-settle-ms", optarg, 0, 600000); break;
    case 'q':
      simOpt.benchSeqMask = simBenchSeqMask(optarg);
      if (!simOpt.benchSeqMask) {
        SIM_ERR("--bench-seq: unknown sequence %s", optarg);
        return 2;
      }
      break;
    case 'y': simOpt.replayPath = optarg; break;
    case 'Y': simOpt.replaySpeed = speedArg(optarg); break;
    case 1000:
      if (!simNcclSelect(optarg)) return 2;
      break;
    case 1001: quirkSpec = optarg; break;
    case 1002: simOpt.connectMs = intArg("connect-ms", optarg, 0, 600000); break;
    case 1003: simOpt.profConnectUs = intArg("profiler-connect-us", optarg, 0, 1000000); break;
    case 1004: simOpt.nonblocking = true; break;
    case 1005: simOpt.asyncDepth = intArg("async-depth", optarg, 0, 100000); break;
    case 1006: simOpt.kchLagMs = realArg("kch-lag-ms", optarg, 0, 600000); break;
    case 1007: simOpt.gpuDriftPpm = realArg("gpu-drift-ppm", optarg, 0, 1000); break;
    case 1008: simOpt.gpuOffsetS = realArg("gpu-offset-s", optarg, 0, 1e6); break;
    case 1009: simOpt.timesliceUs = intArg("timeslice-us", optarg, 0, 10000000); break;
    case 1010: simOpt.copyProxy = true; break;
    case 1011: simOpt.socketThreads = true; break;
    case 1012: simOpt.peerWaitUs = intArg("peer-wait-us", optarg, 0, 10000000); break;
    case 1013:
      if (strcmp(optarg, "finalize") && strcmp(optarg, "exit") && strcmp(optarg, "sigterm") && strcmp(optarg, "abort")) {
        SIM_ERR("--exit: '%s' is not one of finalize, exit, sigterm, abort", optarg);
        return 2;
      }
      simOpt.exitMode = optarg;
      break;
    case 1014: simOpt.benchCadence = simOpt.bench = true; break;
    case 1015: simOpt.benchGaps = optarg; break;
    case 1016: simOpt.benchBaseline = optarg; break;
    case 1017: simOpt.hostNs = true; break;
    case 1018: simOpt.hostOffsetS = realArg("host-offset-s", optarg, 0, 1e6), simOpt.hostNs = true; break;
    case 1019: simOpt.hostDriftPpm = realArg("host-drift-ppm", optarg, 0, 10000), simOpt.hostNs = true; break;
    case 1020: simOpt.hostDriftRealtime = true; break;
    case 'v': simOpt.verbose++; break;
    case 'h': usage(stdout); return 0;
    case 1021: printf("ncclscope-sim %s\n", NCCLSCOPE_VERSION); return 0;
    case 1022:
      if (strcmp(optarg, "on") && strcmp(optarg, "off")) {
        SIM_ERR("--nccl-cost: '%s' is not one of on, off", optarg);
        return 2;
      }
      simOpt.ncclCost = !strcmp(optarg, "on");
      break;
    case 1023: simOpt.benchNccl = optarg, simOpt.bench = true; break;
    case 1024: simOpt.userTags = atoi(optarg); break;
    default: usage(stderr); return 2;
    }
  }
  if (simOpt.procs < 1 || simOpt.ranksPerProc < 1 || simOpt.nodes < 1 || simOpt.iters < 0 ||
      simOpt.procs * simOpt.ranksPerProc > SIM_MAX_RANKS / 4 || simOpt.channels < 1 || simOpt.channels > 64 ||
      simOpt.benchReps < 1 || simOpt.benchBatch < 1 || simOpt.benchBatches < 1 || simOpt.benchSettleMs < 0 ||
      simOpt.benchThreads > 256) {
    SIM_ERR("bad topology: need procs, ranks-per-proc, nodes >= 1, total ranks <= %d, 1 <= channels <= 64; "
            "bench counts >= 1, --bench-threads <= 256",
            SIM_MAX_RANKS / 4);
    return 2;
  }
  if (quirkSpec && !simNcclQuirks(quirkSpec)) return 2;
  simScenarioPresets(simOpt.scenario);
  if (simOpt.nodes > simOpt.procs * simOpt.ranksPerProc) simOpt.nodes = simOpt.procs * simOpt.ranksPerProc;
  if (simOpt.bench) {
    simOpt.fast = true;
    return simRunBench();
  }
  if (simOpt.truthPath) {
    FILE* f = fopen(simOpt.truthPath, "w");
    if (!f) {
      SIM_ERR("cannot create %s", simOpt.truthPath);
      return 2;
    }
    fclose(f);
  }
  int hrc = simHostsInit();
  if (hrc) return hrc;
  simTruthInit();
  simSharedInit(simOpt.procs);
  simTruthThreadBegin("main");
  char quirkList[1024];
  size_t ql = 0;
  quirkList[0] = 0;
  for (int q = 0; q < Q_COUNT; q++)
    if (simQuirk(q)) ql += (size_t)snprintf(quirkList + ql, sizeof quirkList - ql, "%s\"%s\"", ql ? "," : "", simQuirkName(q));
  simTruthf("\"kind\":\"run\",\"scenario\":\"%s\",\"seed\":%llu,\"iters\":%d,\"procs\":%d,\"ranks_per_proc\":%d,"
            "\"nodes\":%d,\"fast\":%s,\"channels\":%d,\"hang_timeout_ms\":%d,\"t0\":%llu,\"nccl\":\"%s\","
            "\"native_abi\":%d,\"quirks\":[%s],\"connect_ms\":%d,\"kch_lag_ms\":%.3f,\"async_depth\":%d,"
            "\"nonblocking\":%s,\"exit\":\"%s\",\"nccl_cost\":%s",
            simOpt.scenario, (unsigned long long)simOpt.seed, simOpt.iters, simOpt.procs, simOpt.ranksPerProc,
            simOpt.nodes, simOpt.fast ? "true" : "false", simOpt.channels, simOpt.hangTimeoutMs,
            (unsigned long long)simNowNs(), simNcclCur.name, simNcclCur.nativeAbi, quirkList, simOpt.connectMs,
            simOpt.kchLagMs, simOpt.asyncDepth, simOpt.nonblocking ? "true" : "false",
            simOpt.exitMode ? simOpt.exitMode : "finalize", simOpt.ncclCost ? "true" : "false");
  simTruthf("\"kind\":\"link\",\"lat_us\":%.3f,\"gbps\":%.3f,\"model\":\"step_ns = lat_us*1000 + bytes*8/gbps\"",
            simOpt.netLatUs, simOpt.netGbps);
  fflush(NULL);
  if (simOpt.replayPath) return simRunReplay(simOpt.replayPath);
  return simRunProcesses(simOpt.procs, scenarioProcess);
}
