/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the current GPU's UUID, if CUDA is already in the process.
 * Cold (init). The plugin never links CUDA: libcuda is looked up with
 * RTLD_NOLOAD, so a process without CUDA never gets it loaded by us. */
#ifndef NCCLSCOPE_GPU_UUID_H
#define NCCLSCOPE_GPU_UUID_H
#include <stddef.h>
/* Writes "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" or "" into out (>= 41 bytes). */
void ns_gpu_uuid(char* out, size_t len);
#endif
