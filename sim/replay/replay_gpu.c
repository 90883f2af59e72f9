/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim --replay: GPU ground truth of a recording.
 *
 * Two sources: CUPTI kernel records inside the recording (recordType
 * "cuptiActivity", type "KERNEL"), mapped onto the recording's clock through
 * the recording's own anchors (simReplayGpuFit in replay.h), and a Chrome trace from
 * CUPTI beside the recording (the PyTorch profiler's), kept as the trace has
 * it. Both become truth `gpu_kernel` lines; a mapped kernel is written on the
 * replay's clock too, so that a plugin's GPU times can be graded against it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/replay_load.h"

/* A time under key k: {"ts": us, ...} or a bare number of us. */
static bool timeOf(simReplayLoader* L, json_object* o, const char* k, int64_t* ns) {
  json_object* v = simReplayGet(o, k);
  if (v && json_object_get_type(v) == json_type_object) {
    char field[64];
    snprintf(field, sizeof field, "%s.ts", k);
    return simReplayGetTsNs(L, v, "ts", field, ns);
  }
  return simReplayGetTsNs(L, o, k, NULL, ns);
}

static void safeName(char* dst, size_t n, const char* s) {
  snprintf(dst, n, "%s", s ? s : "");
  for (char* q = dst; *q; q++)
    if (*q == '"' || *q == '\\' || (unsigned char)*q < 0x20) *q = '_'; /* a JSON string as is */
}

void simReplayCuptiRecord(simReplayLoader* L, json_object* o) {
  simReplayRecording* r = L->r;
  const char* type = json_object_get_string(simReplayGet(o, "type"));
  if (!type || strcmp(type, "KERNEL")) {
    r->skipped[SIM_REPLAY_SKIP_CUPTI_OTHER]++;
    return;
  }
  int64_t start, end;
  if (!timeOf(L, o, "start", &start) || !(timeOf(L, o, "stop", &end) || timeOf(L, o, "end", &end)) || end < start) {
    simReplaySkipMalformed(L);
    return;
  }
  r->kernels = simReplayGrow(r->kernels, &L->capKernels, r->nkernels + 1, sizeof *r->kernels);
  simReplayCuptiKernel* k = &r->kernels[r->nkernels++];
  safeName(k->name, sizeof k->name, json_object_get_string(simReplayGet(o, "name")));
  k->startNs = start, k->endNs = end;
  k->pid = simReplayGetInt(simReplayGet(o, "start"), "pid", simReplayGetInt(o, "pid", simReplayGetInt(o, "myPid", -1)));
  k->device = simReplayGetInt(o, "deviceId", simReplayGetInt(o, "device", -1));
  simReplayGetU64(o, "corrId", &k->corrId);
  simReplayGetU64(o, "extCorrId", &k->extCorrId);
  simReplayGetU64(o, "stream", &k->stream);
  static const char* dims[2][3] = {{"gridX", "gridY", "gridZ"}, {"blockX", "blockY", "blockZ"}};
  json_object* det = simReplayGet(o, "details");
  for (int d = 0; d < 3; d++) {
    k->grid[d] = simReplayGetInt(det, dims[0][d], simReplayGetInt(o, dims[0][d], 0));
    k->block[d] = simReplayGetInt(det, dims[1][d], simReplayGetInt(o, dims[1][d], 0));
  }
  k->launch = -1, k->fit = -1;
}

/* GPU ground truth next to a recording: a Chrome trace (the PyTorch
 * profiler's, from CUPTI) whose kernel events of NCCL kernels become truth
 * `gpu_kernel` lines, times as the trace has them. */
void simReplayChromeTraceFile(simReplayRecording* r, const char* path) {
  json_object* o = json_object_from_file(path);
  json_object* evs = o ? simReplayGet(o, "traceEvents") : NULL;
  if (!evs || json_object_get_type(evs) != json_type_array) {
    if (o) json_object_put(o);
    return;
  }
  size_t n = json_object_array_length(evs);
  for (size_t i = 0; i < n; i++) {
    json_object* e = json_object_array_get_idx(evs, i);
    const char* cat = json_object_get_string(simReplayGet(e, "cat"));
    const char* name = json_object_get_string(simReplayGet(e, "name"));
    if (!cat || !name || strcmp(cat, "kernel") || !strcasestr(name, "nccl")) continue;
    int64_t ts, dur;
    if (!simReplayGetTsNs(NULL, e, "ts", NULL, &ts) || !simReplayGetTsNs(NULL, e, "dur", NULL, &dur)) continue;
    json_object* args = simReplayGet(e, "args");
    r->gpuTruth = realloc(r->gpuTruth, (r->ngpuTruth + 1) * sizeof *r->gpuTruth);
    simReplayGpuKernel* k = &r->gpuTruth[r->ngpuTruth++];
    safeName(k->name, sizeof k->name, name);
    k->tsNs = ts, k->durNs = dur;
    k->device = simReplayGetInt(args, "device", -1);
    k->stream = simReplayGetInt(args, "stream", -1);
  }
  json_object_put(o);
}

static int byLaunchKey(const void* a, const void* b, void* arg) {
  const simReplayEvent* ev = arg;
  const simReplayEvent *x = &ev[*(const int*)a], *y = &ev[*(const int*)b];
  if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
  if (x->extCorrId != y->extCorrId) return x->extCorrId < y->extCorrId ? -1 : 1;
  return x->startTs < y->startTs ? -1 : x->startTs > y->startTs;
}

static int fitOf(simReplayRecording* r, int pid) {
  for (int i = 0; i < r->nfits; i++)
    if (r->gpuFits[i].pid == pid) return i;
  r->gpuFits = realloc(r->gpuFits, (size_t)(r->nfits + 1) * sizeof *r->gpuFits);
  if (!r->gpuFits) {
    SIM_ERR("replay: out of memory");
    exit(2);
  }
  r->gpuFits[r->nfits] = (simReplayGpuFit){.pid = pid, .lo = INT64_MIN, .hi = INT64_MAX, .errorNs = -1};
  return r->nfits++;
}

/* Kernels to their KernelLaunch: by the external correlation id the recorder
 * pushed at the launch; a process whose kernels carry none is matched in time
 * order, only when it has exactly as many launches as kernels. */
static void matchLaunches(simReplayRecording* r, const int* launches, int nl) {
  for (int i = 0; i < r->nkernels; i++) {
    simReplayCuptiKernel* k = &r->kernels[i];
    if (!k->extCorrId) continue;
    int lo = 0, hi = nl;
    while (lo < hi) {
      int mid = (lo + hi) / 2;
      const simReplayEvent* e = &r->events[launches[mid]];
      if (e->pid < k->pid || (e->pid == k->pid && e->extCorrId < k->extCorrId))
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo < nl && r->events[launches[lo]].pid == k->pid && r->events[launches[lo]].extCorrId == k->extCorrId)
      k->launch = launches[lo];
  }
  for (int f = 0; f < r->nfits; f++) {
    int pid = r->gpuFits[f].pid, nk = 0, nlp = 0;
    bool anyMatched = false;
    for (int i = 0; i < r->nkernels; i++)
      if (r->kernels[i].pid == pid) nk++, anyMatched = anyMatched || r->kernels[i].launch >= 0;
    for (int j = 0; j < nl; j++) nlp += r->events[launches[j]].pid == pid;
    if (anyMatched || nk != nlp || !nk) continue;
    /* both in time order: kernels by start, launches by start */
    int* ks = malloc((size_t)nk * sizeof *ks);
    int* ls = malloc((size_t)nk * sizeof *ls);
    int a = 0, b = 0;
    for (int i = 0; i < r->nkernels; i++)
      if (r->kernels[i].pid == pid) ks[a++] = i;
    for (int j = 0; j < nl; j++)
      if (r->events[launches[j]].pid == pid) ls[b++] = launches[j];
    for (int x = 1; x < nk; x++) /* insertion sorts: a process has few kernels per recording */
      for (int y = x; y > 0 && r->kernels[ks[y]].startNs < r->kernels[ks[y - 1]].startNs; y--) {
        int t = ks[y];
        ks[y] = ks[y - 1], ks[y - 1] = t;
      }
    for (int x = 1; x < nk; x++)
      for (int y = x; y > 0 && r->events[ls[y]].startTs < r->events[ls[y - 1]].startTs; y--) {
        int t = ls[y];
        ls[y] = ls[y - 1], ls[y - 1] = t;
      }
    for (int x = 0; x < nk; x++) r->kernels[ks[x]].launch = ls[x];
    free(ks);
    free(ls);
  }
}

static int groupApiOf(const simReplayRecording* r, int e) {
  for (int d = 0; e >= 0 && d < 6; d++, e = r->events[e].parent)
    if (r->events[e].type == 8) return e;
  return -1;
}

void simReplayFitGpuClock(simReplayRecording* r) {
  if (!r->nkernels) return;
  for (int i = 0; i < r->nkernels; i++) {
    r->kernels[i].fit = fitOf(r, r->kernels[i].pid);
    r->gpuFits[r->kernels[i].fit].kernels++;
  }
  int n = r->nevents;
  int* launches = malloc((size_t)(n ? n : 1) * sizeof *launches);
  int* firstLaunch = malloc((size_t)(n ? n : 1) * sizeof *firstLaunch); /* per GroupApi */
  int* nextLaunch = malloc((size_t)(n ? n : 1) * sizeof *nextLaunch);
  int64_t* firstKch = malloc((size_t)(n ? n : 1) * sizeof *firstKch);   /* per KernelLaunch */
  int* firstKernel = malloc((size_t)(n ? n : 1) * sizeof *firstKernel); /* per KernelLaunch */
  if (!launches || !firstLaunch || !nextLaunch || !firstKch || !firstKernel) {
    SIM_ERR("replay: out of memory");
    exit(2);
  }
  int nl = 0;
  for (int i = 0; i < n; i++) {
    firstLaunch[i] = nextLaunch[i] = firstKernel[i] = -1, firstKch[i] = INT64_MAX;
    if (r->events[i].type == 11) launches[nl++] = i;
  }
  if (nl) qsort_r(launches, (size_t)nl, sizeof *launches, byLaunchKey, r->events);
  matchLaunches(r, launches, nl);
  /* a launch call may have launched several kernels: only its first is bounded by the first KernelCh */
  for (int i = 0; i < r->nkernels; i++) {
    int l = r->kernels[i].launch;
    if (l >= 0 && (firstKernel[l] < 0 || r->kernels[i].startNs < r->kernels[firstKernel[l]].startNs))
      firstKernel[l] = i;
  }
  /* the first KernelCh reported for the operations of each launch: same GroupApi, same communicator */
  for (int j = 0; j < nl; j++) {
    int g = groupApiOf(r, launches[j]);
    if (g >= 0) nextLaunch[launches[j]] = firstLaunch[g], firstLaunch[g] = launches[j];
  }
  for (int i = 0; i < n; i++) {
    const simReplayEvent* e = &r->events[i];
    if (e->type != 6 || e->parent < 0) continue;
    int g = groupApiOf(r, e->parent);
    if (g < 0) continue;
    /* only where the group launched one kernel on this communicator: with several, which
     * kernel a channel belongs to is not recorded */
    int only = -1, count = 0;
    for (int l = firstLaunch[g]; l >= 0; l = nextLaunch[l])
      if (r->events[l].comm == r->events[e->parent].comm) only = l, count++;
    if (count == 1 && e->startTs < firstKch[only]) firstKch[only] = e->startTs;
  }
  for (int i = 0; i < r->nkernels; i++) {
    const simReplayCuptiKernel* k = &r->kernels[i];
    simReplayGpuFit* f = &r->gpuFits[k->fit];
    if (k->launch < 0) continue;
    f->matched++;
    /* offset >= launch start - kernel start: the kernel ran after its launch call began */
    int64_t lower = r->events[k->launch].startTs - k->startNs;
    if (lower > f->lo) f->lo = lower;
    f->lowers++;
    /* offset <= first KernelCh report - kernel start: a channel is reported after it started */
    if (firstKch[k->launch] != INT64_MAX && firstKernel[k->launch] == i) {
      int64_t upper = firstKch[k->launch] - k->startNs;
      if (upper < f->hi) f->hi = upper;
      f->uppers++;
    }
  }
  for (int i = 0; i < r->nfits; i++) {
    simReplayGpuFit* f = &r->gpuFits[i];
    f->consistent = !f->lowers || !f->uppers || f->lo <= f->hi;
    if (f->lowers && f->uppers) {
      f->offsetNs = f->lo + (f->hi - f->lo) / 2;
      f->errorNs = f->consistent ? (f->hi - f->lo + 1) / 2 : -1;
    } else if (f->lowers) { /* one side only: the recorder's own conversion if it agrees, no bound */
      f->offsetNs = f->lo > 0 ? f->lo : 0;
    } else if (f->uppers) {
      f->offsetNs = f->hi < 0 ? f->hi : 0;
    }
  }
  free(launches);
  free(firstLaunch);
  free(nextLaunch);
  free(firstKch);
  free(firstKernel);
}

static void nsOrNull(char* buf, size_t n, bool known, long long v) {
  if (known)
    snprintf(buf, n, "%lld", v);
  else
    snprintf(buf, n, "null");
}

/* base + ns / speed, or "null" when not known or when it would leave +-2^62
 * (a speed far below 1 over a long recording). speed > 0. */
static void scaledOrNull(char* buf, size_t n, bool known, int64_t ns, double speed, uint64_t base) {
  double v = (double)ns / speed;
  if (!known || !(fabs(v) < (double)(2 * SIM_REPLAY_TS_LIMIT_NS)) || base >= (uint64_t)2 * SIM_REPLAY_TS_LIMIT_NS)
    snprintf(buf, n, "null");
  else
    snprintf(buf, n, "%lld", (long long)base + (long long)v);
}

void simReplayWriteGpuTruth(const simReplayRecording* r, uint64_t startAt, double speed) {
  for (size_t i = 0; i < r->ngpuTruth; i++) {
    const simReplayGpuKernel* k = &r->gpuTruth[i];
    simTruthf(
        "\"kind\":\"gpu_kernel\",\"name\":\"%s\",\"ts_ns\":%lld,\"dur_ns\":%lld,\"device\":%d,\"stream\":%d,"
        "\"source\":\"cupti\",\"clock\":\"trace\"",
        k->name, (long long)k->tsNs, (long long)k->durNs, k->device, k->stream);
  }
  for (int i = 0; i < r->nfits; i++) {
    const simReplayGpuFit* f = &r->gpuFits[i];
    char lo[24], hi[24], err[24];
    nsOrNull(lo, sizeof lo, f->lowers > 0, (long long)f->lo);
    nsOrNull(hi, sizeof hi, f->uppers > 0, (long long)f->hi);
    nsOrNull(err, sizeof err, f->errorNs >= 0, (long long)f->errorNs);
    simTruthf(
        "\"kind\":\"gpu_kernel_clock\",\"rec_pid\":%d,\"kernels\":%d,\"matched\":%d,\"lower_anchors\":%d,"
        "\"upper_anchors\":%d,\"lo_ns\":%s,\"hi_ns\":%s,\"offset_ns\":%lld,\"error_ns\":%s,\"consistent\":%s",
        f->pid, f->kernels, f->matched, f->lowers, f->uppers, lo, hi, (long long)f->offsetNs, err,
        f->consistent ? "true" : "false");
  }
  for (int i = 0; i < r->nkernels; i++) {
    const simReplayCuptiKernel* k = &r->kernels[i];
    const simReplayGpuFit* f = &r->gpuFits[k->fit];
    const simReplayEvent* l = k->launch >= 0 ? &r->events[k->launch] : NULL;
    const simReplayComm* c = l && l->comm >= 0 ? &r->comms[l->comm] : NULL;
    int64_t recStart = k->startNs + f->offsetNs, recEnd = k->endNs + f->offsetNs;
    /* on the replay's clock only when paced (speed > 0: 0 is no pacing); durations and bounds as recorded then */
    bool paced = speed > 0;
    double scale = paced ? speed : 1.0;
    char ts[24], dur[24], err[24], comm[24];
    scaledOrNull(ts, sizeof ts, paced, recStart - r->t0, scale, startAt);
    scaledOrNull(dur, sizeof dur, true, recEnd - recStart, scale, 0);
    scaledOrNull(err, sizeof err, f->errorNs >= 0, paced ? f->errorNs : 0, scale, 0);
    if (c)
      snprintf(comm, sizeof comm, "\"0x%llx\"", (unsigned long long)c->commId);
    else
      snprintf(comm, sizeof comm, "null");
    simTruthf(
        "\"kind\":\"gpu_kernel\",\"name\":\"%s\",\"source\":\"recording\",\"clock\":\"replay\",\"ts_ns\":%s,"
        "\"dur_ns\":%s,\"error_ns\":%s,\"rec_pid\":%d,\"device\":%d,\"stream\":%llu,\"corr_id\":%llu,"
        "\"ext_corr_id\":%llu,\"grid\":[%d,%d,%d],\"block\":[%d,%d,%d],\"comm\":%s,\"rank\":%d,"
        "\"launch_rec\":%d,\"cupti_start_ns\":%lld,\"cupti_end_ns\":%lld,\"rec_start_ns\":%lld,\"rec_end_ns\":%lld",
        k->name, ts, dur, err, k->pid, k->device, (unsigned long long)k->stream, (unsigned long long)k->corrId,
        (unsigned long long)k->extCorrId, k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1], k->block[2],
        comm, c ? c->rank : -1, k->launch, (long long)k->startNs, (long long)k->endNs, (long long)recStart,
        (long long)recEnd);
  }
}
