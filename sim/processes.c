/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: running the simulated processes.
 *
 * Runs on the main thread. The first process is this one; the others are
 * forked after every shared area exists, so all of them see the same
 * mappings. Each process writes its part of the truth; the parent merges
 * the parts into the one --truth file after waiting for every child.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim.h"

/* After a process's run: NCCL would have crashed on calls into an unloaded plugin. */
static int afterRun(int rc) {
  int dead = simPluginDeadCalls();
  if (dead) {
    SIM_ERR("NCCL %s would have called into the unloaded plugin %d time(s) (a crash)", simNcclCur.name, dead);
    rc = rc ? rc : 1;
  }
  return rc;
}

/* --exit: how a process ends after its workload (scenarios leave their communicators alive for these). */
static void endProcess(int rc, bool child) {
  fflush(NULL);
  if (simOpt.exitMode && !strcmp(simOpt.exitMode, "sigterm")) {
    /* As a scheduler's kill: the handler in place runs (a plugin's, chained
     * to the default action), else the default action kills us. */
    raise(SIGTERM);
  }
  if (child) {
    /* exit() rather than _exit(): atexit handlers and library destructors run, as when a
     * Python process ends without destroying its communicators */
    if (simOpt.exitMode && !strcmp(simOpt.exitMode, "exit")) exit(rc ? rc : simPluginErrors() ? 1 : 0);
    _exit(rc ? rc : simPluginErrors() ? 1 : 0);
  }
}

int simRunProcesses(int n, int (*run)(int procIndex)) {
  pid_t kids[SIM_MAX_RANKS];
  int nk = 0;
  if (n > SIM_MAX_RANKS) n = SIM_MAX_RANKS;
  for (int i = 1; i < n; i++) {
    if (simHostsBeforeFork(i) != 0) return 2;
    pid_t k = fork();
    if (k < 0) {
      SIM_ERR("fork failed");
      return 2;
    }
    if (k == 0) {
      simTruthForkChild();
      simHostsEnter(i);
      int rc = afterRun(run(i));
      simTruthf("\"kind\":\"process\",\"proc\":%d,\"plugin_loads\":%d,\"plugin_errors\":%d,\"rc\":%d", i,
                simPluginLoads(), simPluginErrors(), rc);
      simTruthWrite(simOpt.truthPath, true);
      endProcess(rc, true);
    }
    kids[nk++] = k;
  }
  simHostsEnter(0);
  int rc = afterRun(run(0));
  simTruthf("\"kind\":\"process\",\"proc\":0,\"plugin_loads\":%d,\"plugin_errors\":%d,\"rc\":%d", simPluginLoads(),
            simPluginErrors(), rc);
  if (simPluginErrors()) rc = 1;
  for (int i = 0; i < nk; i++) {
    int st = 0;
    waitpid(kids[i], &st, 0);
    bool signalled = simOpt.exitMode && !strcmp(simOpt.exitMode, "sigterm") && WIFSIGNALED(st) &&
                     WTERMSIG(st) == SIGTERM;
    if (!signalled && (!WIFEXITED(st) || WEXITSTATUS(st) != 0)) {
      SIM_ERR("process %d (pid %d) failed: %s %d", i + 1, (int)kids[i], WIFEXITED(st) ? "exit" : "signal",
              WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
      rc = 1;
    }
  }
  simCostReport(); /* every process's part is in the shared area now */
  if (simOpt.truthPath) {
    simTruthWrite(simOpt.truthPath, false);
    simTruthMerge(simOpt.truthPath, kids, nk);
  }
  endProcess(rc, false);
  return rc;
}
