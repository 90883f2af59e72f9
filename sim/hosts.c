/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: simulated hosts (--host-ns, --host-offset-s, --host-drift-ppm).
 *
 * With --host-ns the processes of each simulated node run as if on a host of
 * their own: a UTS namespace gives them a host name of their own
 * (`<hostname>-n<k>`), and with --host-offset-s a time namespace shifts
 * their CLOCK_MONOTONIC by a constant (node 0 keeps the real clocks). The
 * plugin sees a different host and clock through the system itself, with no
 * hook of any kind; CLOCK_REALTIME is not namespaced, so it stays the
 * machine's. The simulator's own time (simNowNs) takes the offset back out:
 * every process models one timeline, node 0's, which is what the truth
 * records; the `host` truth line gives each process's node, name and offset.
 *
 * Namespaces need CAP_SYS_ADMIN: as root they are made directly; otherwise
 * the simulator first enters a user namespace of its own (where
 * unprivileged user namespaces are allowed) with itself mapped to root.
 * Runs on the main thread before any other thread exists (simHostsInit), in
 * the parent before each fork (simHostsBeforeFork), in each child right
 * after it and in the parent after the last fork (simHostsEnter).
 *
 * With --host-drift-ppm, node k >= 1's CLOCK_MONOTONIC also runs fast or slow
 * (clock_shim.c, LD_PRELOADed): from the simulator's start it reads
 * m + offset + drift * (m - pivot), m the modelled time; the `host` truth
 * line gives drift_ppm and drift_pivot_ns. With --host-drift-realtime its
 * CLOCK_REALTIME drifts the same way (drift_realtime). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sim.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

int64_t simHostOffsetNs;    /* this process's CLOCK_MONOTONIC - the modelled timeline */
static uint64_t driftPivotNs; /* --host-drift-ppm: the modelled time at which every host's clock agrees with its
                               * machine clock (the simulator's start) */
static void (*shimSet)(double, int64_t, int); /* clock_shim.c's simclock_set */
static int timeNsFor = -1;  /* the node whose time namespace the next fork enters */
static char baseName[200];  /* the machine's host name, before any namespace */

/* The node of process p (its ranks all on one node: checked by simHostsInit). */
int simHostNodeOf(int p) {
  int n = simOpt.procs * simOpt.ranksPerProc;
  int perNode = (n + simOpt.nodes - 1) / simOpt.nodes;
  return p * simOpt.ranksPerProc / perNode;
}

/* Node k's drift, ppm: none on node 0, else between half and all of --host-drift-ppm, the sign from the seed. */
static double driftOf(int node) {
  if (node == 0 || simOpt.hostDriftPpm <= 0) return 0;
  simRng r;
  simRngSeed(&r, simOpt.seed * 104729 + (uint64_t)node);
  double m = simOpt.hostDriftPpm * (0.5 + 0.5 * simRngUniform(&r));
  return simRngUniform(&r) < 0.5 ? -m : m;
}

/* Node k's offset: none on node 0, else between half and all of --host-offset-s, from the seed. */
static int64_t offsetOf(int node) {
  if (node == 0 || simOpt.hostOffsetS <= 0) return 0;
  simRng r;
  simRngSeed(&r, simOpt.seed * 7919 + (uint64_t)node);
  return (int64_t)(simOpt.hostOffsetS * 1e9 * (0.5 + 0.5 * simRngUniform(&r)));
}

static int writeFile(const char* path, const char* text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t k = write(fd, text, strlen(text));
  close(fd);
  return k == (ssize_t)strlen(text) ? 0 : -1;
}

int simHostsInit(void) {
  if (!simOpt.hostNs) return 0;
  if (simOpt.hostDriftPpm > 0) {
    /* the clock shim, LD_PRELOADed: the simulator reads the machine's clock through it */
    int (*raw)(clockid_t, struct timespec*) = (int (*)(clockid_t, struct timespec*))dlsym(RTLD_DEFAULT, "simclock_raw");
    shimSet = (void (*)(double, int64_t, int))dlsym(RTLD_DEFAULT, "simclock_set");
    if (!raw || !shimSet) {
      SIM_ERR("--host-drift-ppm: cannot make drifting host clocks: run with LD_PRELOAD=<build>/libncclscope-simclock.so");
      return 2;
    }
    simMachineClock = raw;
    driftPivotNs = simNowNs();
  }
  if (gethostname(baseName, sizeof baseName - 1) != 0) snprintf(baseName, sizeof baseName, "sim");
  int n = simOpt.procs * simOpt.ranksPerProc;
  int perNode = (n + simOpt.nodes - 1) / simOpt.nodes;
  if (perNode % simOpt.ranksPerProc) {
    SIM_ERR("--host-ns: a process's ranks must be on one node (ranks per node %d, ranks per process %d)", perNode,
            simOpt.ranksPerProc);
    return 2;
  }
  if (geteuid() != 0) {
    /* A user namespace of our own, where we are root (single-threaded here). */
    uid_t uid = geteuid();
    gid_t gid = getegid();
    char map[64];
    if (unshare(CLONE_NEWUSER) != 0) {
      SIM_ERR("--host-ns: cannot create simulated hosts: no user namespace (%s)", strerror(errno));
      return 3;
    }
    snprintf(map, sizeof map, "0 %u 1\n", (unsigned)uid);
    writeFile("/proc/self/setgroups", "deny");
    if (writeFile("/proc/self/uid_map", map) != 0) {
      SIM_ERR("--host-ns: cannot create simulated hosts: uid map (%s)", strerror(errno));
      return 3;
    }
    snprintf(map, sizeof map, "0 %u 1\n", (unsigned)gid);
    writeFile("/proc/self/gid_map", map);
  }
  /* Probe both kinds in a throwaway child, so a missing one is said at once. */
  pid_t k = fork();
  if (k == 0) _exit(unshare(CLONE_NEWUTS | (simOpt.hostOffsetS > 0 ? CLONE_NEWTIME : 0)) == 0 ? 0 : 1);
  int st = 0;
  if (k < 0 || waitpid(k, &st, 0) != k || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    SIM_ERR("--host-ns: cannot create simulated hosts: UTS or time namespaces are not allowed here");
    return 3;
  }
  return 0;
}

int simHostsBeforeFork(int proc) {
  if (!simOpt.hostNs || simOpt.hostOffsetS <= 0) return 0;
  int node = simHostNodeOf(proc);
  if (node == timeNsFor) return 0; /* the namespace made for this node's first process */
  timeNsFor = node;
  /* A new time namespace for the children forked from now on; this process stays in its own. */
  if (unshare(CLONE_NEWTIME) != 0) {
    SIM_ERR("--host-offset-s: unshare(CLONE_NEWTIME): %s", strerror(errno));
    return -1;
  }
  int64_t off = offsetOf(node);
  char text[96];
  snprintf(text, sizeof text, "%d %lld %lld\n%d 0 0\n", CLOCK_MONOTONIC, (long long)(off / 1000000000),
           (long long)(off % 1000000000), CLOCK_BOOTTIME);
  if (writeFile("/proc/self/timens_offsets", text) != 0) {
    SIM_ERR("--host-offset-s: cannot set the offsets of node %d: %s", node, strerror(errno));
    return -1;
  }
  return 0;
}

void simHostsEnter(int proc) {
  if (!simOpt.hostNs) return;
  int node = simHostNodeOf(proc);
  simHostOffsetNs = offsetOf(node);
  double drift = driftOf(node);
  /* this process's CLOCK_MONOTONIC (and the plugin's) from now: m + off + drift * (m - pivot), m the model time */
  if (drift != 0) shimSet(drift, (int64_t)driftPivotNs + simHostOffsetNs, simOpt.hostDriftRealtime);
  char name[256];
  snprintf(name, sizeof name, "%.200s-n%d", baseName, node);
  if (unshare(CLONE_NEWUTS) != 0 || sethostname(name, strlen(name)) != 0)
    SIM_ERR("--host-ns: process %d: cannot set the host name %s: %s", proc, name, strerror(errno));
  char now[256] = "";
  gethostname(now, sizeof now - 1);
  simTruthf("\"kind\":\"host\",\"proc\":%d,\"node\":%d,\"hostname\":\"%s\",\"mono_offset_ns\":%lld,"
            "\"drift_ppm\":%.6f,\"drift_pivot_ns\":%llu,\"drift_realtime\":%s,\"clock\":\"%s%s\"",
            proc, node, now, (long long)simHostOffsetNs, drift, (unsigned long long)driftPivotNs,
            drift != 0 && simOpt.hostDriftRealtime ? "true" : "false", simHostOffsetNs ? "time namespace" : "real",
            drift != 0 ? ", drifting (clock shim)" : "");
}
