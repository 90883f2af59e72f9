/* SPDX-License-Identifier: Apache-2.0 */
/* LD_PRELOAD shim for faults.py pid_collision where PID namespaces cannot be
 * made (no root): getpid() answers NS_FIXED_PID, as two processes in two
 * containers may both see one pid. */
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

pid_t getpid(void) {
  const char* s = getenv("NS_FIXED_PID");
  return s && *s ? (pid_t)atoi(s) : (pid_t)syscall(SYS_getpid);
}
