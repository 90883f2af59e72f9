/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope plugin tests: load traces through the reader. */
#include "trace_load.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tl_load_file(tl_trace* t, const char* path) {
  char err[256];
  ns_reader* r = ns_reader_open(path, err, sizeof err);
  if (!r) {
    fprintf(stderr, "cannot read %s: %s\n", path, err);
    return -1;
  }
  if (t->files == 0) t->clean_end = 1;
  t->files++;
  ns_item it;
  while (ns_reader_next(r, &it) == 1) {
    switch (it.kind) {
      case NS_ITEM_PROCESS: t->process = *it.process; break;
      case NS_ITEM_THREAD:
        if (t->nthreads < 512) t->threads[t->nthreads++] = *it.thread;
        break;
      case NS_ITEM_COMM_INIT:
        if (t->ncomms < 64) t->comms[t->ncomms++] = *it.comm;
        break;
      case NS_ITEM_COMM_FINI:
        if (t->nfinis < 64) t->finis[t->nfinis++] = *it.props;
        break;
      case NS_ITEM_COUNTERS:
        t->counters = *it.props;
        t->have_counters = 1;
        break;
      case NS_ITEM_RECORD: {
        if (t->nrecs == t->cap) {
          t->cap = t->cap ? t->cap * 2 : 1024;
          t->recs = realloc(t->recs, t->cap * sizeof *t->recs);
        }
        tl_rec* x = &t->recs[t->nrecs++];
        memset(x, 0, sizeof *x);
        x->r = *it.record;
        for (int i = 0; i < NS_REC_STRS; i++) {
          const char* s = x->r.str[i] ? ns_reader_string(r, x->r.str[i]) : NULL;
          x->has_str[i] = s != NULL;
          snprintf(x->str[i], sizeof x->str[i], "%s", s ? s : "");
        }
        break;
      }
      default: break;
    }
  }
  ns_reader_stats st;
  ns_reader_get_stats(r, &st);
  if (!st.clean_end) t->clean_end = 0;
  t->bytes_cut += st.bytes_cut;
  t->seq_gaps += st.seq_gaps;
  if (st.stop_reason[0]) fprintf(stderr, "%s: %s\n", path, st.stop_reason);
  ns_reader_close(r);
  return 0;
}

int tl_load_dir(tl_trace* t, const char* dir) {
  DIR* d = opendir(dir);
  if (!d) return -1;
  struct dirent* e;
  int n = 0;
  while ((e = readdir(d))) {
    size_t l = strlen(e->d_name);
    if (l < 8 || strcmp(e->d_name + l - 8, ".nstrace")) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (tl_load_file(t, path) == 0) n++;
  }
  closedir(d);
  return n;
}

void tl_free(tl_trace* t) {
  free(t->recs);
  memset(t, 0, sizeof *t);
}

const tl_rec* tl_find_start(const tl_trace* t, uint64_t id) {
  for (size_t i = 0; i < t->nrecs; i++)
    if (t->recs[i].r.kind == NS_REC_START && t->recs[i].r.id == id) return &t->recs[i];
  return NULL;
}

size_t tl_count(const tl_trace* t, int kind, int type) {
  size_t n = 0;
  for (size_t i = 0; i < t->nrecs; i++)
    if (t->recs[i].r.kind == kind && (type < 0 || t->recs[i].r.type == type)) n++;
  return n;
}

const ns_comm_info* tl_comm(const tl_trace* t, uint32_t serial) {
  for (int i = 0; i < t->ncomms; i++)
    if (t->comms[i].comm == serial) return &t->comms[i];
  return NULL;
}
