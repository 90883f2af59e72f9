/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope plugin tests: what every test that drives the real .so does
 * first: a fresh dump directory, and the plugin dlopened as NCCL opens it
 * with every ncclProfiler_vN it exports. NS_PLUGIN_PATH comes from CMake. */
#ifndef NCCLSCOPE_TEST_PLUGIN_OPEN_H
#define NCCLSCOPE_TEST_PLUGIN_OPEN_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "abi/nccl_profiler.h"

/* /tmp/ncclscope-<name>-XXXXXX made and set as NCCLSCOPE_DUMP_DIR, with
 * NCCLSCOPE_NO_CUDA=1. 0, or -1 when the directory cannot be made. */
static inline int tp_dump_dir(char* dir, size_t n, const char* name) {
  snprintf(dir, n, "/tmp/ncclscope-%s-XXXXXX", name);
  if (!mkdtemp(dir)) return -1;
  setenv("NCCLSCOPE_DUMP_DIR", dir, 1);
  setenv("NCCLSCOPE_NO_CUDA", "1", 1);
  return 0;
}

typedef struct {
  void* so;
  ncclProfiler_v1_t* v1;
  ncclProfiler_v2_t* v2;
  ncclProfiler_v3_t* v3;
  ncclProfiler_v4_t* v4;
  ncclProfiler_v5_t* v5;
  ncclProfiler_v6_t* v6;
} tp_plugin;

/* dlopen(RTLD_NOW | RTLD_LOCAL) and every version's symbol. 0, or -1 with a message. */
static inline int tp_open(tp_plugin* p) {
  p->so = dlopen(NS_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
  if (!p->so) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return -1;
  }
  p->v1 = dlsym(p->so, "ncclProfiler_v1");
  p->v2 = dlsym(p->so, "ncclProfiler_v2");
  p->v3 = dlsym(p->so, "ncclProfiler_v3");
  p->v4 = dlsym(p->so, "ncclProfiler_v4");
  p->v5 = dlsym(p->so, "ncclProfiler_v5");
  p->v6 = dlsym(p->so, "ncclProfiler_v6");
  if (p->v1 && p->v2 && p->v3 && p->v4 && p->v5 && p->v6) return 0;
  fprintf(stderr, "%s: an ncclProfiler_vN symbol is missing\n", NS_PLUGIN_PATH);
  return -1;
}

/* What most tests do first: tp_dump_dir, every event type recorded
 * (NCCLSCOPE_EVENT_MASK=all), then tp_open. The plugin reads its environment
 * at the first init, so a test may still set more after this. 0, or -1. */
static inline int tp_start(tp_plugin* p, char* dir, size_t n, const char* name) {
  if (tp_dump_dir(dir, n, name)) return -1;
  setenv("NCCLSCOPE_EVENT_MASK", "all", 1);
  return tp_open(p);
}

/* rm -rf of a dump directory tp_dump_dir made. 0, or -1 with a message. */
static inline int tp_remove_dir(const char* dir) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) == 0) return 0;
  fprintf(stderr, "could not remove %s\n", dir);
  return -1;
}

/* A v6 communicator (rank 0 of nranks on 1 node): its context, or NULL when
 * init did not succeed (a message on stderr). */
static inline void* tp_init_v6(tp_plugin* pl, const char* name, uint64_t comm_id, int nranks) {
  int mask = 0;
  void* ctx = NULL;
  if (pl->v6->init(&ctx, comm_id, &mask, name, 1, nranks, 0, NULL) != ncclSuccess || !ctx) {
    fprintf(stderr, "init of communicator %s failed\n", name);
    return NULL;
  }
  return ctx;
}

/* tp_start, then the plugin settings `settings` (NAME, VALUE, ..., NULL),
 * then a v6 communicator as tp_init_v6 makes it: its context, or NULL (a
 * message on stderr). */
static inline void* tp_start_v6(tp_plugin* pl, char* dir, size_t n, const char* name, const char* const* settings,
                                uint64_t comm_id, int nranks) {
  if (tp_start(pl, dir, n, name)) return NULL;
  for (size_t i = 0; settings && settings[i] && settings[i + 1]; i += 2) setenv(settings[i], settings[i + 1], 1);
  return tp_init_v6(pl, name, comm_id, nranks);
}

#endif
