/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: `export --format otf2`, an OTF2 archive (Score-P's trace
 * format; Vampir opens DIR/traces.otf2) written through libotf2.
 *
 * Definitions (docs/cli.md, "OTF2 for Score-P / Vampir users"; collected
 * and written by otf2_defs.c): a system tree node per
 * host, a location group per process (trace file), and in it
 *  - per recorded thread one location: the events that stay on their
 *    thread (API calls, Group, KernelLaunch, ProxyCtrl, CE sync/batch);
 *  - per (thread, communicator) a location "... ops" with its Coll, P2p and
 *    CeColl events, the member of the communicator's OTF2 group;
 *  - per (thread, type) a location for ProxyOp, ProxyStep, KernelCh and
 *    NetPlugin events;
 * and a location group per GPU (an accelerator group created by the
 * process) with the GPU kernel intervals of each rank, converted to CPU
 * time by the GPU clock fit, on ACCELERATOR_STREAM locations.
 *
 * Events: Enter/Leave of a region per event type and function, with the
 * attributes eventId, parentId, bytes, channel, peer, seq, incomplete and
 * gpuErrorUs where the event has them. OTF2 wants Enter/Leave properly
 * nested per location and in time order, and NCCL's events overlap without
 * nesting (steps in flight, the collectives of a group): an event that does
 * not nest goes to the first further lane of its location ("... #2") where
 * it does. So each file's events are kept until its end, sorted, and placed
 * (otf2_nesting.c).
 * Collectives whose NCCL function has an exact MPI counterpart get an
 * MpiCollectiveBegin/End inside their region on the rank's member location
 * (where its first collective went); those that land elsewhere (they
 * overlap another of the rank, or the communicator id is initialized again
 * on another thread) get the region only.
 *
 * Time: OTF2 ticks are nanoseconds of CLOCK_REALTIME: each file's
 * CLOCK_MONOTONIC timestamps plus its realtime offset (the PROCESS block's,
 * the `realtimeOffsetUs` of the JSON Lines export), so hosts line up as
 * well as their NTP. ClockProperties: resolution 1 GHz, the global offset
 * the first time, the trace length to the last.
 *
 * Memory: the events of one file (120 bytes each) and the
 * definitions. Single-threaded. */
#include <inttypes.h>
#include <math.h>
#include <otf2/otf2.h>
#include <stdlib.h>
#include <string.h>

#include "export/event_details.h"
#include "export/export.h"
#include "otf2/otf2_archive.h"
#include "otf2/otf2_defs.h"
#include "otf2/otf2_nesting.h"
#include "otf2/otf2_state.h"
#include "traces/trace_analysis.h"
#include "util/idmap.h"

#define NONE NS_OTF2_NONE

enum { TRACK_THREAD, TRACK_OPS, TRACK_LANES, TRACK_GPU_OPS, TRACK_GPU_CH, TRACK_GPU_PHASE };

/* ---- the file's tracks ---- */

static const char* host_of(const ns_wfile* f) { return f->has_process ? f->process.hostname : "?"; }
static uint32_t file_pid(const ns_wfile* f) { return f->has_process ? f->process.pid : 0; }

static void comm_label(const ns_wfile* f, uint32_t serial, char* out, size_t n) {
  const ns_wcomm* c = ns_wfile_comm(f, serial);
  if (!c) snprintf(out, n, "no communicator");
  else if (c->info.has_name && c->info.comm_name[0]) snprintf(out, n, "rank %d comm %.60s", c->info.rank, c->info.comm_name);
  else snprintf(out, n, "rank %d comm 0x%" PRIx64, c->info.rank, c->info.comm_id);
}

/* The accelerator location group of the GPU of communicator `serial`. */
static uint64_t gpu_group(ns_otf2_state* s, const ns_wfile* f, uint32_t serial) {
  const ns_wcomm* c = ns_wfile_comm(f, serial);
  const char* uuid = c && c->info.gpu_uuid[0] ? c->info.gpu_uuid : "?";
  uint64_t h = 1469598103934665603ull;
  for (const char* p = uuid; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
  int ins;
  uint64_t* v = ns_idmap_put(&s->gpu_groups, h | 1ull << 63, &ins);
  if (v && !ins) return *v - 1;
  char name[256];
  snprintf(name, sizeof name, "%.160s GPU %.64s", s->d.strings[s->d.groups[s->pgroup].name], uuid);
  uint64_t g =
      ns_otf2_add_group(&s->d, name, OTF2_LOCATION_GROUP_TYPE_ACCELERATOR, s->d.groups[s->pgroup].node, s->pgroup);
  if (v) *v = g + 1;
  return g;
}

static uint32_t track_of(ns_otf2_state* s, const ns_wfile* f, int kind, uint32_t tid, uint32_t serial, int64_t ch,
                         uint8_t type) {
  uint64_t key = (uint64_t)kind << 60 ^ (uint64_t)(serial & 0xFFFFF) << 40 ^ (uint64_t)(ch & 0xFF) << 32 ^
                 (uint64_t)type << 52 ^ tid;
  key |= 1ull << 63;
  int ins;
  uint64_t* v = ns_idmap_put(&s->track_index, key, &ins);
  if (!v) {
    s->d.failed = 1;
    return 0;
  }
  if (!ins) return (uint32_t)(*v - 1);
  ns_otf2_track* nt = realloc(s->tracks, (s->ntracks + 1) * sizeof *nt);
  if (!nt) {
    s->d.failed = 1;
    return 0;
  }
  s->tracks = nt;
  ns_otf2_track* t = &nt[s->ntracks];
  memset(t, 0, sizeof *t);
  t->kind = kind;
  t->group = s->pgroup;
  t->type = OTF2_LOCATION_TYPE_CPU_THREAD;
  char thread[100], comm[100];
  const char* tn = ns_wfile_thread_name(f, tid);
  if (tn && tn[0]) snprintf(thread, sizeof thread, "%.60s (tid %u)", tn, tid);
  else snprintf(thread, sizeof thread, "thread %u", tid);
  comm_label(f, serial, comm, sizeof comm);
  switch (kind) {
    case TRACK_THREAD: snprintf(t->name, sizeof t->name, "%s", thread); break;
    case TRACK_OPS: snprintf(t->name, sizeof t->name, "%.70s %.70s ops", thread, comm); break;
    case TRACK_LANES: snprintf(t->name, sizeof t->name, "%s %s", thread, ns_event_short_name(type)); break;
    case TRACK_GPU_OPS:
    case TRACK_GPU_CH:
    case TRACK_GPU_PHASE: /* a location of its own: a phase need not nest in its KernelCh's interval */
      t->group = gpu_group(s, f, serial);
      t->type = OTF2_LOCATION_TYPE_ACCELERATOR_STREAM;
      if (kind == TRACK_GPU_OPS) snprintf(t->name, sizeof t->name, "%s kernels", comm);
      else
        snprintf(t->name, sizeof t->name, "%s kernel ch %" PRId64 "%s", comm, ch,
                 kind == TRACK_GPU_PHASE ? " phases" : "");
      break;
  }
  *v = ++s->ntracks;
  return (uint32_t)(s->ntracks - 1);
}

/* ---- events in ---- */

static uint64_t ticks(const ns_otf2_state* s, uint64_t ts) { return (uint64_t)((int64_t)ts + s->offset); }

static ns_otf2_iv* add_iv(ns_otf2_state* s, uint32_t track, uint32_t region, uint64_t start, uint64_t stop) {
  if (s->nivs == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 4096;
    ns_otf2_iv* n = realloc(s->ivs, cap * sizeof *n);
    if (!n) {
      s->d.failed = 1;
      return NULL;
    }
    s->ivs = n;
    s->cap = cap;
  }
  ns_otf2_iv* v = &s->ivs[s->nivs];
  memset(v, 0, sizeof *v);
  v->order = s->nivs++;
  v->track = track;
  v->region = region;
  v->s = start;
  v->e = stop > start ? stop : start;
  v->rank = -1;
  return v;
}

/* NCCL functions whose MPI counterpart is exact, and this rank's buffer
 * sizes as MPI counts them (count is NCCL's per-rank count). */
static int collective_op(int func, uint64_t elem_bytes, uint32_t nranks, int is_root, uint64_t* sent, uint64_t* recv) {
  uint64_t n = nranks ? nranks : 1;
  if (elem_bytes > UINT64_MAX / n) return -1; /* sizes that do not fit: no record rather than a wrong one */
  switch (func) {
    case NS_FUNC_ALLREDUCE: *sent = *recv = elem_bytes; return OTF2_COLLECTIVE_OP_ALLREDUCE;
    case NS_FUNC_BROADCAST: *sent = is_root ? elem_bytes : 0; *recv = is_root ? 0 : elem_bytes; return OTF2_COLLECTIVE_OP_BCAST;
    case NS_FUNC_REDUCE: *sent = elem_bytes; *recv = is_root ? elem_bytes : 0; return OTF2_COLLECTIVE_OP_REDUCE;
    case NS_FUNC_ALLGATHER: *sent = elem_bytes; *recv = elem_bytes * n; return OTF2_COLLECTIVE_OP_ALLGATHER;
    case NS_FUNC_REDUCESCATTER: *sent = elem_bytes * n; *recv = elem_bytes; return OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK;
    case NS_FUNC_ALLTOALL: *sent = *recv = elem_bytes * n; return OTF2_COLLECTIVE_OP_ALLTOALL;
    default: return -1;
  }
}

static void op_fields(ns_otf2_state* s, const ns_wfile* f, const ns_event* ev, ns_otf2_iv* v) {
  const ns_record* r = &ev->start;
  const ns_wcomm* c = ns_wfile_comm(f, r->comm);
  int coll = r->type == NS_EV_COLL;
  int func = ns_func_code(ns_wfile_string(f, r->str[coll ? NS_COLL_FUNC : NS_P2P_FUNC]));
  unsigned tsize = ns_dtype_size(ns_wfile_string(f, r->str[coll ? NS_COLL_DTYPE : NS_P2P_DTYPE]));
  uint64_t count = r->num[coll ? NS_COLL_COUNT : NS_P2P_COUNT];
  uint32_t nranks = c ? c->info.nranks : 0;
  if (tsize) {
    v->bytes = ns_coll_bytes(func, count, tsize, nranks);
    v->has |= NS_OTF2_HAS(A_BYTES);
  }
  if (coll) {
    v->seq = r->num[NS_COLL_SEQ];
    v->has |= NS_OTF2_HAS(A_SEQ);
  } else {
    v->peer = (int64_t)r->num[NS_P2P_PEER];
    v->has |= NS_OTF2_HAS(A_PEER);
  }
  if (!coll || !tsize || !c || (r->flags & NS_RF_PXN)) return;
  int root = (int)(int64_t)r->num[NS_COLL_ROOT];
  uint64_t elem_bytes;
  if (__builtin_mul_overflow(count, (uint64_t)tsize, &elem_bytes)) return;
  int op = collective_op(func, elem_bytes, nranks, root == c->info.rank, &v->sent, &v->recv);
  ns_otf2_comm* m = op >= 0 && c->info.rank >= 0 && (uint32_t)c->info.rank < nranks
                        ? ns_otf2_comm_of(&s->d, c->info.comm_id, nranks, c->info.has_name ? c->info.comm_name : NULL)
                        : NULL;
  if (!m || m->nranks != nranks) return;
  v->coll_op = (uint8_t)(op + 1);
  v->comm = (uint32_t)(m - s->d.comms);
  v->rank = c->info.rank;
  v->root = func == NS_FUNC_BROADCAST || func == NS_FUNC_REDUCE ? root : -1;
}

/* The GPU interval of a Coll/P2p (its kernels' pTimers), a KernelCh or a KernelPhase, converted as the JSON Lines
 * export's gpuStart/gpuStop. */
static void gpu_interval(ns_otf2_state* s, const ns_wfile* f, const ns_event* ev, uint32_t region,
                         const ns_otf2_iv* cpu) {
  const ns_record* r = &ev->start;
  if (!s->a || (r->flags & NS_RF_PXN)) return;
  uint64_t p0, p1, t0, t1, owner;
  int kch = r->type == NS_EV_KERNEL_CH, phase = r->type == NS_EV_KERNEL_PHASE;
  if (kch || phase) {
    p0 = r->num[phase ? NS_KERNEL_PHASE_PTIMER : NS_KERNEL_CH_PTIMER];
    p1 = ev->ptimer_stop;
    if (!p0 || !ev->has_ptimer_stop || p1 < p0) return;
    owner = ev->op;
  } else {
    if (!ev->has_ptimer_min || !ev->has_ptimer_max || ev->ptimer_max < ev->ptimer_min) return;
    p0 = ev->ptimer_min;
    p1 = ev->ptimer_max;
    owner = ev->id;
  }
  double e0 = INFINITY, e1 = INFINITY;
  if (!ns_analysis_gpu_to_cpu(s->a, r->comm, p0, &t0, &e0) || !ns_analysis_gpu_to_cpu(s->a, r->comm, p1, &t1, &e1))
    return;
  double err = ns_analysis_ptimers_own(s->a, r->comm, owner) ? fmax(e0, e1) : INFINITY;
  uint32_t track = kch || phase ? track_of(s, f, kch ? TRACK_GPU_CH : TRACK_GPU_PHASE, 0, r->comm, ev->channel, 0)
                                : track_of(s, f, TRACK_GPU_OPS, 0, r->comm, 0, 0);
  ns_otf2_iv* v = add_iv(s, track, region, ticks(s, t0), ticks(s, t1));
  if (!v) return;
  v->event_id = cpu->event_id;
  v->has = NS_OTF2_HAS(A_EVENT_ID) |
           (cpu->has & (NS_OTF2_HAS(A_BYTES) | NS_OTF2_HAS(A_CHANNEL) | NS_OTF2_HAS(A_SEQ) | NS_OTF2_HAS(A_PEER)));
  v->bytes = cpu->bytes;
  v->channel = cpu->channel;
  v->seq = cpu->seq;
  v->peer = cpu->peer;
  if (isfinite(err)) {
    v->err_us = err / 1000.0;
    v->has |= NS_OTF2_HAS(A_GPU_ERROR_US);
  }
}

static void file_setup(ns_otf2_state* s, ns_wfile* f);

static void otf2_event(void* self, ns_wfile* f, ns_event* ev) {
  ns_otf2_state* s = self;
  file_setup(s, f);
  const ns_record* r = &ev->start;
  uint8_t type = r->type;
  int has_func;
  const char* func = ns_event_func(f, ev, &has_func);
  const char* short_name = ns_event_short_name(type);
  char name[160];
  if (type == NS_EV_COLL || type == NS_EV_P2P) snprintf(name, sizeof name, "%s", has_func && func ? func : short_name);
  else if (has_func && func) snprintf(name, sizeof name, "%s %s", short_name, func);
  else snprintf(name, sizeof name, "%s", short_name);
  uint32_t serial = (r->flags & NS_RF_PXN) ? 0 : r->comm;
  uint32_t track;
  switch (type) {
    case NS_EV_COLL:
    case NS_EV_P2P:
    case NS_EV_CE_COLL: track = track_of(s, f, TRACK_OPS, r->tid, serial, 0, 0); break;
    case NS_EV_PROXY_OP:
    case NS_EV_PROXY_STEP:
    case NS_EV_KERNEL_CH:
    case NS_EV_KERNEL_PHASE:
    case NS_EV_NET_PLUGIN: track = track_of(s, f, TRACK_LANES, r->tid, 0, 0, type); break;
    default: track = track_of(s, f, TRACK_THREAD, r->tid, 0, 0, 0); break;
  }
  /* an event that never stopped lasts to the end of the file: its stop is set at file_end (e = NONE) */
  ns_otf2_iv* v =
      add_iv(s, track, ns_otf2_region(&s->d, name, 0), ticks(s, r->ts), ev->stopped ? ticks(s, ev->stop_ts) : NONE);
  if (!v) return;
  v->event_id = ev->id;
  v->has = NS_OTF2_HAS(A_EVENT_ID);
  if (r->parent && !(r->flags & NS_RF_PARENT_RAW)) {
    v->parent_id = r->parent;
    v->has |= NS_OTF2_HAS(A_PARENT_ID);
  }
  if (!ev->stopped) v->has |= NS_OTF2_HAS(A_INCOMPLETE);
  if (type == NS_EV_PROXY_OP || type == NS_EV_KERNEL_CH || type == NS_EV_KERNEL_PHASE || type == NS_EV_PROXY_STEP ||
      type == NS_EV_NET_PLUGIN) {
    if (ev->channel >= 0) {
      v->channel = ev->channel;
      v->has |= NS_OTF2_HAS(A_CHANNEL);
    }
  }
  if (type == NS_EV_PROXY_OP) {
    v->peer = (int64_t)r->num[NS_PROXY_OP_PEER];
    v->has |= NS_OTF2_HAS(A_PEER);
  }
  if (type == NS_EV_PROXY_STEP && ev->has_trans_size) {
    v->bytes = ev->trans_size;
    v->has |= NS_OTF2_HAS(A_BYTES);
  }
  if (type == NS_EV_COLL || type == NS_EV_P2P) op_fields(s, f, ev, v);
  if (type == NS_EV_COLL || type == NS_EV_P2P || type == NS_EV_KERNEL_CH || type == NS_EV_KERNEL_PHASE) {
    char gname[176];
    const char* phase = type == NS_EV_KERNEL_PHASE ? ns_wfile_string(f, r->str[NS_KERNEL_PHASE_NAME]) : NULL;
    if (type == NS_EV_KERNEL_PHASE) /* "KernelPhase compute kernel" */
      snprintf(gname, sizeof gname, "KernelPhase %.60s kernel", phase && phase[0] ? phase : "?");
    else
      snprintf(gname, sizeof gname, "%s kernel", type == NS_EV_KERNEL_CH ? "KernelCh" : name);
    ns_otf2_iv copy = *v; /* add_iv may move v */
    gpu_interval(s, f, ev, ns_otf2_region(&s->d, gname, 1), &copy);
  }
}

/* ---- per file: its setup, and its intervals written at its end ---- */

static void otf2_file_begin(void* self, ns_wfile* f) {
  ns_otf2_state* s = self;
  (void)f;
  s->nivs = 0;
  s->offset = 0;
  s->ready = 0;
}

/* The file's process group, clock offset and GPU clock fit, at its first
 * event (its PROCESS block, which comes first, has been read then). */
static void file_setup(ns_otf2_state* s, ns_wfile* f) {
  if (s->ready) return;
  s->ready = 1;
  s->offset = f->has_process ? f->process.realtime_offset_ns : 0;
  if (!f->has_process)
    fprintf(stderr, "ncclscope: warning: %s: no PROCESS block: its times are CLOCK_MONOTONIC, not on the common clock\n",
            f->path);
  char name[320];
  snprintf(name, sizeof name, "%s:%u", host_of(f), file_pid(f));
  uint64_t base = ns_otf2_intern(&s->d, name);
  unsigned again = 1; /* another file of that process (a plugin loaded again): "host:pid #2" */
  for (size_t i = 0; i < s->d.ngroups; i++)
    if (s->d.groups[i].type == OTF2_LOCATION_GROUP_TYPE_PROCESS && s->d.groups[i].file_of_process >= again &&
        s->d.groups[i].base_name == base)
      again = s->d.groups[i].file_of_process + 1;
  if (again > 1) snprintf(name + strlen(name), sizeof name - strlen(name), " #%u", again);
  s->pgroup = ns_otf2_add_group(&s->d, name, OTF2_LOCATION_GROUP_TYPE_PROCESS, ns_otf2_host_node(&s->d, host_of(f)),
                                OTF2_UNDEFINED_LOCATION_GROUP);
  if (!s->d.failed) {
    s->d.groups[s->pgroup].base_name = base;
    s->d.groups[s->pgroup].file_of_process = again;
  }
  char err[1024];
  ns_analysis_config cfg;
  ns_analysis_config_default(&cfg);
  ns_analysis_config_offline(&cfg);
  cfg.window_sec = 0;
  s->a = ns_analyze_file(f->path, &cfg, NULL, err, sizeof err);
  if (!s->a) fprintf(stderr, "ncclscope: warning: no GPU kernel intervals for %s\n", err);
}

static void otf2_file_end(void* self, ns_wfile* f) {
  ns_otf2_state* s = self;
  if (s->nivs) ns_otf2_write_nested(s, ticks(s, f->max_ts));
  for (size_t t = 0; t < s->ntracks; t++) {
    for (uint32_t k = 0; k < s->tracks[t].nlanes; k++) free(s->tracks[t].lanes[k].stack);
    free(s->tracks[t].lanes);
  }
  free(s->tracks);
  s->tracks = NULL;
  s->ntracks = 0;
  ns_idmap_free(&s->track_index);
  ns_idmap_free(&s->gpu_groups);
  ns_analysis_destroy(s->a);
  s->a = NULL;
  s->nivs = 0;
}

/* ---- the archive ---- */

static OTF2_FlushType pre_flush(void* user, OTF2_FileType type, OTF2_LocationRef loc, void* data, bool final) {
  (void)user, (void)type, (void)loc, (void)data, (void)final;
  return OTF2_FLUSH;
}

static OTF2_TimeStamp post_flush(void* user, OTF2_FileType type, OTF2_LocationRef loc) {
  (void)user, (void)type, (void)loc;
  return 0;
}

static const OTF2_FlushCallbacks flush_callbacks = {.otf2_pre_flush = pre_flush, .otf2_post_flush = post_flush};

static void* otf2_make(const char* tmp, ns_sink* sink) {
  ns_otf2_state* s = calloc(1, sizeof *s);
  if (!s) {
    fprintf(stderr, "ncclscope: out of memory\n");
    return NULL;
  }
  s->t_min = UINT64_MAX;
  /* The smallest chunks libotf2 allows: each location's writer holds one chunk, and a job's
   * hundreds of locations (a thread per rank and channel) cost 1 MiB each at the default,
   * touched page by page: 7x the whole export's time on the simulator's default run. */
  s->archive = OTF2_Archive_Open(tmp, NS_OTF2_ANCHOR_NAME, OTF2_FILEMODE_WRITE, OTF2_CHUNK_SIZE_MIN,
                                 OTF2_CHUNK_SIZE_MIN, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  s->attrs = OTF2_AttributeList_New();
  if (!s->archive || !s->attrs || OTF2_Archive_SetFlushCallbacks(s->archive, &flush_callbacks, NULL) != OTF2_SUCCESS ||
      OTF2_Archive_SetSerialCollectiveCallbacks(s->archive) != OTF2_SUCCESS ||
      OTF2_Archive_OpenEvtFiles(s->archive) != OTF2_SUCCESS) {
    fprintf(stderr, "ncclscope: cannot create the OTF2 archive in %s%s\n", tmp,
            s->attrs ? " (libotf2's messages above say why)" : ": out of memory");
    if (s->archive) OTF2_Archive_Close(s->archive);
    if (s->attrs) OTF2_AttributeList_Delete(s->attrs);
    free(s);
    return NULL;
  }
  ns_otf2_intern(&s->d, ""); /* string 0 */
  *sink = (ns_sink){.self = s, .file_begin = otf2_file_begin, .event_done = otf2_event, .file_end = otf2_file_end};
  return s;
}

static int otf2_finish(void* state) {
  ns_otf2_state* s = state;
  int rc = s->d.failed ? -1 : 0;
  if (s->d.failed) fprintf(stderr, "ncclscope: out of memory writing the OTF2 archive\n");
  for (size_t i = 0; i < s->d.nlocs; i++)
    if (OTF2_Archive_CloseEvtWriter(s->archive, s->d.locs[i].w) != OTF2_SUCCESS) rc = -1;
  if (OTF2_Archive_CloseEvtFiles(s->archive) != OTF2_SUCCESS) rc = -1;
  /* every location gets its (empty) local definitions, as readers expect */
  if (!rc && OTF2_Archive_OpenDefFiles(s->archive) == OTF2_SUCCESS) {
    for (size_t i = 0; i < s->d.nlocs; i++) {
      OTF2_DefWriter* d = OTF2_Archive_GetDefWriter(s->archive, i);
      if (!d || OTF2_Archive_CloseDefWriter(s->archive, d) != OTF2_SUCCESS) rc = -1;
    }
    if (OTF2_Archive_CloseDefFiles(s->archive) != OTF2_SUCCESS) rc = -1;
  } else {
    rc = -1;
  }
  if (!rc && ns_otf2_write_definitions(&s->d, s->archive, s->t_min, s->t_max) != 0) rc = -1;
  if (OTF2_Archive_Close(s->archive) != OTF2_SUCCESS) rc = -1;
  if (s->colls_regions_only)
    fprintf(stderr,
            "ncclscope: note: %" PRIu64 " collectives are not on their rank's member location (they overlap another "
            "of that rank, or the communicator id was initialized again on another thread): written as regions "
            "without an OTF2 collective record (%" PRIu64 " have one)\n",
            s->colls_regions_only, s->colls_recorded);
  OTF2_AttributeList_Delete(s->attrs);
  ns_otf2_defs_free(&s->d);
  free(s->ivs);
  free(s);
  return rc;
}

const ns_dir_output ns_otf2_dir = {ns_archive_reserve, otf2_make, ns_archive_commit, ns_archive_discard};
const ns_format ns_format_otf2 = {"otf2", NULL, otf2_finish};
