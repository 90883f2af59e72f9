/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: the area shared by all simulator processes (sim_shared.h).
 * An anonymous MAP_SHARED mapping created before fork, so every process sees
 * the same barrier counters (one per communicator slot) and PXN publications.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sim_shared.h"

simShared* simShm;

void simSharedInit(int procs) {
  (void)procs;
  simShm = mmap(NULL, sizeof(simShared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (simShm == MAP_FAILED) {
    SIM_ERR("mmap of the shared area failed");
    exit(2);
  }
  memset(simShm, 0, sizeof *simShm);
}
