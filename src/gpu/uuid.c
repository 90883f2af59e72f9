/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: GPU UUID through the CUDA driver API, looked up at run time. */
#include "gpu/uuid.h"

#include <dlfcn.h>
#include <stdio.h>

typedef int (*cu_ctx_get_device_fn)(int* dev);
typedef int (*cu_device_get_uuid_fn)(unsigned char uuid[16], int dev);

void ns_gpu_uuid(char* out, size_t len) {
  if (len) out[0] = 0;
  if (len < 41) return;
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD | RTLD_LOCAL);
  if (!h) return;
  cu_ctx_get_device_fn get_dev = (cu_ctx_get_device_fn)dlsym(h, "cuCtxGetDevice");
  cu_device_get_uuid_fn get_uuid = (cu_device_get_uuid_fn)dlsym(h, "cuDeviceGetUuid_v2");
  if (!get_uuid) get_uuid = (cu_device_get_uuid_fn)dlsym(h, "cuDeviceGetUuid");
  int dev = 0;
  unsigned char u[16];
  if (get_dev && get_uuid && get_dev(&dev) == 0 && get_uuid(u, dev) == 0) {
    snprintf(out, len, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
             u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  }
  dlclose(h);
}
