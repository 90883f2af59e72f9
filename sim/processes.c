/* ncclscope-sim: running the simulated processes.
 *
 * Runs on the main thread. The first process is this one; the others are
 * forked after every shared area exists, so all of them see the same
 * mappings. Each process writes its part of the truth; the parent merges
 * the parts into the one --truth file after waiting for every child.
 */
#include <sys/wait.h>
#include <unistd.h>

#include "sim.h"

int simRunProcesses(int n, int (*run)(int procIndex)) {
  pid_t kids[SIM_MAX_RANKS];
  int nk = 0;
  if (n > SIM_MAX_RANKS) n = SIM_MAX_RANKS;
  for (int i = 1; i < n; i++) {
    pid_t k = fork();
    if (k < 0) {
      SIM_ERR("fork failed");
      return 2;
    }
    if (k == 0) {
      simTruthForkChild();
      int rc = run(i);
      simTruthf("\"kind\":\"process\",\"proc\":%d,\"plugin_loads\":%d,\"plugin_errors\":%d,\"rc\":%d", i,
                simPluginLoads(), simPluginErrors(), rc);
      simTruthWrite(simOpt.truthPath, true);
      fflush(NULL);
      _exit(rc ? rc : simPluginErrors() ? 1 : 0);
    }
    kids[nk++] = k;
  }
  int rc = run(0);
  simTruthf("\"kind\":\"process\",\"proc\":0,\"plugin_loads\":%d,\"plugin_errors\":%d,\"rc\":%d", simPluginLoads(),
            simPluginErrors(), rc);
  if (simPluginErrors()) rc = 1;
  for (int i = 0; i < nk; i++) {
    int st = 0;
    waitpid(kids[i], &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      SIM_ERR("process %d (pid %d) failed: %s %d", i + 1, (int)kids[i], WIFEXITED(st) ? "exit" : "signal",
              WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
      rc = 1;
    }
  }
  if (simOpt.truthPath) {
    simTruthWrite(simOpt.truthPath, false);
    simTruthMerge(simOpt.truthPath, kids, nk);
  }
  return rc;
}
