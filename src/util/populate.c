/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: prefaulting memory off the hot path (see populate.h). */
#include "util/populate.h"

#include <stdint.h>
#include <sys/mman.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 uapi value; older kernels answer EINVAL */
#endif

int ns_populate_write(void* p, size_t len) {
  if (!len) return 0;
  uintptr_t a = (uintptr_t)p & ~(uintptr_t)4095;
  uintptr_t e = ((uintptr_t)p + len + 4095) & ~(uintptr_t)4095;
  return madvise((void*)a, e - a, MADV_POPULATE_WRITE) == 0 ? 0 : -1;
}
