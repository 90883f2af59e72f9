/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope plugin test: compares the traces a simulator run left in a dump
 * directory with the simulator's ground truth (--truth, docs/simulator.md).
 *
 * usage: sim_truth_check TRUTH DUMPDIR [--parents] [--states] [--types MASK]
 *                        [--version N] [--files N]
 *  - per-type START counts equal the starts the plugin accepted (non-NULL handle)
 *  - COUNTERS: dropped == 0; every file ends cleanly
 *  --parents: the k-th start of a thread in the truth is the k-th START of that
 *    thread in the trace; every parent id is the id of the truth's parent
 *    instance; PXN events are flagged with the truth's origin pid
 *  --states: STATE records per state id equal the states the plugin received
 *  --types MASK: these event types all appear
 *  --version N: every communicator was initialized through ncclProfiler_vN
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "truth_fields.h"
#include "trace_load.h"
#include "util/array.h"

/* The type named in the truth ("Coll"), -1 if unknown. */
static int type_of(const char* name) {
  for (unsigned t = 0; t < NS_EV_COUNT; t++)
    if (!strcmp(name, ns_event_short_name(t))) return (int)t;
  return -1;
}

typedef struct {
  long long pid, tid, serial, parent; /* parent -1: null */
  int type, pxn, handle_null;
  long long origin_pid;
  uint64_t trace_id;
  const tl_rec* rec;
} tstart;

static tstart* starts;
static size_t nstarts, capstarts;
static uint64_t truth_type_starts[NS_EV_COUNT];
static uint64_t truth_states[64];

static int load_truth(const char* path) {
  FILE* f = fopen(path, "r");
  if (!f) return -1;
  static char line[1 << 16];
  while (fgets(line, sizeof line, f)) {
    char kind[32] = "", tname[32] = "";
    jstr(line, "kind", kind, sizeof kind);
    if (!strcmp(kind, "start")) {
      if (nstarts == capstarts) {
        capstarts = capstarts ? capstarts * 2 : 4096;
        starts = realloc(starts, capstarts * sizeof *starts);
      }
      tstart* s = &starts[nstarts];
      memset(s, 0, sizeof *s);
      long long v;
      jint(line, "pid", &s->pid);
      jint(line, "tid", &s->tid);
      jint(line, "serial", &s->serial);
      s->parent = jint(line, "parent", &v) ? v : -1;
      jstr(line, "type", tname, sizeof tname);
      s->type = type_of(tname);
      s->pxn = jint(line, "pxn", &v) && v;
      s->handle_null = jint(line, "handle_null", &v) && v;
      jint(line, "origin_pid", &s->origin_pid);
      if (s->type < 0) continue;
      if (!s->handle_null) truth_type_starts[s->type]++;
      nstarts++;
    } else if (!strcmp(kind, "counts")) {
      const char* p = jfind(line, "states");
      if (!p || *p != '{') continue;
      p++;
      while (*p == '"') {
        int st = atoi(p + 1);
        const char* c = strchr(p, ':');
        if (!c) break;
        long long n = strtoll(c + 1, (char**)&p, 10);
        if (st >= 0 && st < 64) truth_states[st] += (uint64_t)n;
        if (*p == ',') p++;
      }
    }
  }
  fclose(f);
  return 0;
}

static int by_tid_serial(const void* a, const void* b) {
  const tstart *x = a, *y = b;
  if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
  if (x->serial != y->serial) return x->serial < y->serial ? -1 : 1;
  return 0;
}

typedef struct {
  long long pid, serial;
  uint64_t id;
} idmap;
static int by_pid_serial(const void* a, const void* b) {
  const idmap *x = a, *y = b;
  if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
  if (x->serial != y->serial) return x->serial < y->serial ? -1 : 1;
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s TRUTH DUMPDIR [--parents] [--states] [--types MASK] [--version N]\n", argv[0]);
    return 2;
  }
  int want_parents = 0, want_states = 0, want_version = 0, want_files = -1;
  unsigned long types = 0;
  for (int i = 3; i < argc; i++) {
    if (!strcmp(argv[i], "--parents")) want_parents = 1;
    else if (!strcmp(argv[i], "--states")) want_states = 1;
    else if (!strcmp(argv[i], "--types") && i + 1 < argc) types = strtoul(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--version") && i + 1 < argc) want_version = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--files") && i + 1 < argc) want_files = atoi(argv[++i]);
  }
  if (load_truth(argv[1]) != 0) {
    fprintf(stderr, "cannot read truth %s\n", argv[1]);
    return 2;
  }
  tl_trace t;
  memset(&t, 0, sizeof t);
  int files = tl_load_dir(&t, argv[2]);
  CHECK_TRUE(files >= 1);
  if (want_files >= 0) CHECK_U64(files, want_files);
  CHECK_TRUE(t.clean_end);
  CHECK_U64(t.bytes_cut, 0);
  CHECK_U64(t.seq_gaps, 0);

  /* per-type counts */
  uint64_t got[NS_EV_COUNT] = {0};
  uint64_t got_states[64] = {0};
  for (size_t i = 0; i < t.nrecs; i++) {
    const ns_record* r = &t.recs[i].r;
    if (r->kind == NS_REC_START) got[r->type]++;
    if (r->kind == NS_REC_STATE && r->state >= 0 && r->state < 64) got_states[r->state]++;
  }
  for (int ty = 0; ty < NS_EV_COUNT; ty++) {
    if (got[ty] != truth_type_starts[ty])
      fprintf(stderr, "type %s: trace %llu, truth %llu\n", ns_event_short_name(ty), (unsigned long long)got[ty],
              (unsigned long long)truth_type_starts[ty]);
    CHECK_U64(got[ty], truth_type_starts[ty]);
    if (types & (1ul << ty)) CHECK_TRUE(got[ty] > 0);
  }
  if (want_states)
    for (int s = 0; s < 64; s++) {
      if (got_states[s] != truth_states[s]) fprintf(stderr, "state %d: ", s);
      CHECK_U64(got_states[s], truth_states[s]);
    }
  if (want_version)
    for (int i = 0; i < t.ncomms; i++) CHECK_U64(t.comms[i].abi_version, want_version);
  tl_free(&t);

  /* Parents: per file (one process, one session), per thread, in order. */
  if (want_parents) {
    /* Truth starts by (tid, serial): serials grow in call order in a process,
     * and tids are unique on the host while the threads live. */
    qsort(starts, nstarts, sizeof *starts, by_tid_serial);
    size_t* cursor = calloc(nstarts + 1, sizeof *cursor);
    tl_trace ft;
    memset(&ft, 0, sizeof ft);
    tl_load_dir(&ft, argv[2]);
    size_t matched = 0, parents_checked = 0, pxn_checked = 0;
    /* The k-th trace START of a thread is its k-th accepted truth start. */
    for (size_t i = 0; i < ft.nrecs; i++) {
      const ns_record* r = &ft.recs[i].r;
      if (r->kind != NS_REC_START) continue;
      size_t lo;
      NS_LOWER_BOUND(lo, nstarts, j, starts[j].tid < (long long)r->tid);
      size_t k = lo + cursor[lo];
      while (k < nstarts && starts[k].tid == (long long)r->tid && starts[k].handle_null) k++;
      if (k >= nstarts || starts[k].tid != (long long)r->tid) {
        fprintf(stderr, "trace START id 0x%llx (tid %u, type %u) has no truth start\n", (unsigned long long)r->id,
                r->tid, r->type);
        check_failures++;
        continue;
      }
      cursor[lo] = k + 1 - lo;
      tstart* s = &starts[k];
      if (s->type != r->type) {
        fprintf(stderr, "tid %u: truth serial %lld is %s, trace has %s\n", r->tid, s->serial, ns_event_short_name(s->type),
                ns_event_short_name(r->type));
        check_failures++;
      }
      s->rec = &ft.recs[i];
      s->trace_id = r->id;
      matched++;
    }
    idmap* map = calloc(nstarts + 1, sizeof *map);
    size_t nmap = 0;
    for (size_t k = 0; k < nstarts; k++)
      if (starts[k].rec) map[nmap++] = (idmap){starts[k].pid, starts[k].serial, starts[k].trace_id};
    qsort(map, nmap, sizeof *map, by_pid_serial);
    for (size_t k = 0; k < nstarts; k++) {
      tstart* s = &starts[k];
      if (!s->rec) {
        if (!s->handle_null) {
          fprintf(stderr, "truth serial %lld (pid %lld tid %lld %s) missing from the trace\n", s->serial, s->pid,
                  s->tid, ns_event_short_name(s->type));
          check_failures++;
        }
        continue;
      }
      const ns_record* r = &s->rec->r;
      if (s->pxn) {
        pxn_checked++;
        CHECK_TRUE(r->flags & NS_RF_PXN);
        CHECK_U64(r->origin_pid, (uint64_t)s->origin_pid);
        if (s->type == NS_EV_PROXY_OP) continue; /* parent is a raw foreign pointer */
      } else {
        CHECK_TRUE(!(r->flags & NS_RF_PXN));
      }
      uint64_t want = 0;
      if (s->parent >= 0) {
        idmap key = {s->pid, s->parent, 0};
        idmap* m = bsearch(&key, map, nmap, sizeof *map, by_pid_serial);
        if (m) want = m->id;
      }
      if (r->parent != want) {
        fprintf(stderr, "serial %lld (%s, tid %lld): parent id 0x%llx, truth parent serial %lld = id 0x%llx\n",
                s->serial, ns_event_short_name(s->type), s->tid, (unsigned long long)r->parent, s->parent,
                (unsigned long long)want);
        check_failures++;
      }
      parents_checked++;
    }
    printf("matched %zu starts, %zu parents, %zu PXN\n", matched, parents_checked, pxn_checked);
    tl_free(&ft);
    free(map);
    free(cursor);
  }
  free(starts);
  CHECK_DONE();
}
