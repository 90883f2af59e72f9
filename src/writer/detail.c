/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the detail level in force (detail.h). Writer thread only; the
 * decision itself is ns_detail_full (capture/context.h), which init and the
 * hot path read. */
#include "writer/detail.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "capture/context.h" /* ns_detail_full */
#include "config/config.h"
#include "log/log.h"
#include "flightrec/flightrec.h" /* NS_FR_UNDETAILED_GRACE_NS */

/* A window's busbw for one (comm, func, size, timing) against the same key's
 * recent level: an exponential average over the windows before it. */
#define BASE_SLOTS 256
#define BASE_ALPHA 0.25
#define BASE_MIN_WINDOWS 3  /* windows averaged before a drop may count */
#define BASE_MIN_OPS 8      /* operations in a window before its busbw counts */
#define BASE_DROP 0.5       /* a drop: under half the recent level */
/* A straggler: last in at least this share of a window's compared collectives ... */
#define STRAGGLER_LAST 0.6
#define STRAGGLER_MIN_COMPARED 8
/* ... and late by at least this much on average over them (a rank that is
 * last by scheduling jitter alone is a few microseconds late). */
#define STRAGGLER_MIN_NS 50000ull

typedef struct {
  uint32_t comm;
  int func, gpu;
  uint64_t size_bucket;
  double level_gbs;
  uint32_t windows;
} base_slot;

static struct {
  int level;
  uint64_t sample_ns, escalate_ns, suspect_ns;
  uint64_t origin_ns;       /* sampling periods start here, every second */
  int full;                 /* the decision last returned */
  int decided;              /* the first tick returned it */
  int escalated;
  int esc_new;              /* an escalation began since the last tick: its DETAIL block is due */
  int esc_why;
  uint64_t esc_until_ns, esc_since_ns;
  uint64_t full_since_ns;
  ns_detail_counts n;
  base_slot base[BASE_SLOTS];
} D;

static const char* const why_names[NS_DETAIL_WHY_COUNT] = NS_DETAIL_WHY_NAMES;

const char* ns_detail_why_name(int why) { return why >= 0 && why < NS_DETAIL_WHY_COUNT ? why_names[why] : "?"; }

void ns_detail_open(int level, uint32_t sample_ms, double escalate_sec, double hang_timeout_sec, uint64_t now_ns) {
  memset(&D, 0, sizeof D);
  D.level = level;
  D.sample_ns = (uint64_t)sample_ms * 1000000u;
  D.escalate_ns = (uint64_t)(escalate_sec * 1e9);
  /* An operation in flight a tenth of the hang timeout, and at most half
   * the flight recorder's grace for operations without detail (which it
   * then takes as done, flightrec.h), is suspect: full detail from then on
   * shows the next operations' channels well before the watchdog's verdict.
   * A long operation escalates too, at no cost worth counting: NCCL's extra
   * work is microseconds per operation. */
  double suspect = hang_timeout_sec > 0 ? hang_timeout_sec / 10 : 6.0;
  if (suspect * 1e9 > NS_FR_UNDETAILED_GRACE_NS / 2) suspect = (double)(NS_FR_UNDETAILED_GRACE_NS / 2) / 1e9;
  D.suspect_ns = (uint64_t)(suspect * 1e9);
  D.origin_ns = now_ns;
  D.full = level == NS_DETAIL_FULL || level == NS_DETAIL_SAMPLED; /* sampled begins with a period */
  D.full_since_ns = now_ns;
  atomic_store_explicit(&ns_detail_full, D.full, memory_order_relaxed);
}

int ns_detail_full_now(void) { return atomic_load_explicit(&ns_detail_full, memory_order_relaxed); }
int ns_detail_configured(void) { return D.level; }
int ns_detail_escalated(void) { return D.escalated; }

void ns_detail_escalate(int why, uint64_t now_ns, const char* what) {
  if (D.level == NS_DETAIL_FULL || !D.escalate_ns) return;
  D.n.triggers++;
  uint64_t until = now_ns + D.escalate_ns;
  if (until > D.esc_until_ns) D.esc_until_ns = until;
  if (D.escalated && why == D.esc_why) return;
  if (D.escalated) {
    /* another cause keeps it: recorded (a DETAIL block) and logged, not counted as a new escalation */
    D.esc_why = why;
    D.esc_new = 1;
    ns_log_info("full detail goes on (NCCLSCOPE_DETAIL=%s): %s%s%s", ns_detail_name(D.level), ns_detail_why_name(why),
                what && *what ? ": " : "", what ? what : "");
    return;
  }
  D.escalated = 1;
  D.esc_new = 1;
  D.esc_why = why;
  D.esc_since_ns = now_ns;
  D.n.escalations++;
  ns_log_info("full detail for at least %.1f s (NCCLSCOPE_DETAIL=%s): %s%s%s", (double)D.escalate_ns / 1e9,
              ns_detail_name(D.level), ns_detail_why_name(why), what && *what ? ": " : "", what ? what : "");
}

void ns_detail_inflight(uint64_t age_ns, uint32_t comm, uint64_t now_ns) {
  if (age_ns < D.suspect_ns) return;
  char what[96];
  snprintf(what, sizeof what, "communicator %u has had an operation in flight for %.2f s", comm,
           (double)age_ns / 1e9);
  ns_detail_escalate(NS_DETAIL_WHY_INFLIGHT, now_ns, D.escalated ? NULL : what);
}

static base_slot* base_for(const ns_bucket_stats* b) {
  uint64_t h = ((uint64_t)b->comm * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)(unsigned)b->func << 40) ^
               (b->size_bucket * 0xC2B2AE3D27D4EB4Full) ^ (uint64_t)b->gpu;
  for (unsigned k = 0; k < BASE_SLOTS; k++) {
    base_slot* s = &D.base[(h + k) % BASE_SLOTS];
    if (!s->windows) {
      s->comm = b->comm, s->func = b->func, s->gpu = b->gpu, s->size_bucket = b->size_bucket;
      return s;
    }
    if (s->comm == b->comm && s->func == b->func && s->gpu == b->gpu && s->size_bucket == b->size_bucket) return s;
  }
  return NULL; /* full: keys beyond BASE_SLOTS are not watched */
}

static int is_straggler(uint64_t compared, uint64_t last, uint64_t lateness_ns_sum) {
  return compared >= STRAGGLER_MIN_COMPARED && (double)last >= STRAGGLER_LAST * (double)compared &&
         lateness_ns_sum / compared >= STRAGGLER_MIN_NS;
}

void ns_detail_window(const ns_window* w, uint64_t now_ns) {
  if (!w) return;
  for (size_t i = 0; i < w->n_lateness; i++) {
    const ns_lateness_stats* l = &w->lateness[i];
    /* All the window's collectives, and those timed on every rank's GPU
     * alone: a rank whose kernels start late (its calls on time) is last in
     * those, which sampled detail makes a few among many CPU-timed ones. */
    int all = is_straggler(l->compared, l->last, l->lateness_ns_sum);
    if (!all && !is_straggler(l->gpu_compared, l->gpu_last, l->gpu_lateness_ns_sum)) continue;
    uint64_t n = all ? l->compared : l->gpu_compared, last = all ? l->last : l->gpu_last;
    uint64_t sum = all ? l->lateness_ns_sum : l->gpu_lateness_ns_sum;
    char what[192];
    snprintf(what, sizeof what,
             "rank %d of commId 0x%016llx (communicator %u) arrived last in %llu of %llu collectives%s, %.3f ms late "
             "on average",
             (int)l->rank, (unsigned long long)l->comm_id, l->comm, (unsigned long long)last, (unsigned long long)n,
             all ? "" : " timed by the GPU", (double)sum / (double)n / 1e6);
    ns_detail_escalate(NS_DETAIL_WHY_STRAGGLER, now_ns, what);
  }
  for (size_t i = 0; i < w->n_buckets; i++) {
    const ns_bucket_stats* b = &w->buckets[i];
    if (b->count < BASE_MIN_OPS || !(b->busbw_gbs > 0) || b->batch_ops) continue;
    base_slot* s = base_for(b);
    if (!s) continue;
    if (s->windows >= BASE_MIN_WINDOWS && b->busbw_gbs < BASE_DROP * s->level_gbs) {
      char what[160];
      snprintf(what, sizeof what, "%s of %llu B on communicator %u at %.2f GB/s busbw, %.2f GB/s before (%s timing)",
               b->func_name, (unsigned long long)b->size_bucket, b->comm, b->busbw_gbs, s->level_gbs,
               b->gpu ? "GPU" : "CPU");
      ns_detail_escalate(NS_DETAIL_WHY_BUSBW, now_ns, what);
    }
    s->level_gbs = s->windows ? (1 - BASE_ALPHA) * s->level_gbs + BASE_ALPHA * b->busbw_gbs : b->busbw_gbs;
    s->windows++;
  }
}

int ns_detail_tick(uint64_t now_ns, int* full, int* why, uint64_t* at_ns) {
  /* The first block records what ns_detail_open decided, at its time: the
   * writer's first pass may come long after (a loaded machine), and NCCL's
   * mask followed the flag from the first init on. */
  if (!D.decided) {
    D.decided = 1;
    *full = D.full;
    *why = NS_DETAIL_WHY_START;
    *at_ns = D.origin_ns;
    return 1;
  }
  *at_ns = now_ns;
  int reason = NS_DETAIL_WHY_START;
  if (D.escalated && now_ns >= D.esc_until_ns) {
    D.escalated = 0;
    ns_log_info("back to NCCLSCOPE_DETAIL=%s after %.1f s of full detail (%s)", ns_detail_name(D.level),
                (double)(now_ns - D.esc_since_ns) / 1e9, ns_detail_why_name(D.esc_why));
    reason = NS_DETAIL_WHY_CALM;
  }
  int sampling = D.level == NS_DETAIL_SAMPLED && now_ns >= D.origin_ns &&
                 (now_ns - D.origin_ns) % 1000000000u < D.sample_ns;
  int want = D.level == NS_DETAIL_FULL || D.escalated || sampling;
  int esc_new = D.esc_new;
  D.esc_new = 0;
  /* An escalation is recorded even when a sampling period already gave full detail. */
  if (want == D.full && !(esc_new && D.escalated)) return 0;
  if (want == D.full) {
    *full = want;
    *why = D.esc_why;
    return 1;
  }
  if (D.escalated && want) reason = D.esc_why;
  else if (reason != NS_DETAIL_WHY_CALM) reason = want ? NS_DETAIL_WHY_SAMPLE : NS_DETAIL_WHY_SAMPLE_END;
  D.n.switches++;
  if (D.full) D.n.full_ns += now_ns - D.full_since_ns;
  D.full_since_ns = now_ns;
  D.full = want;
  atomic_store_explicit(&ns_detail_full, want, memory_order_relaxed);
  *full = want;
  *why = reason;
  return 1;
}

void ns_detail_counts_get(ns_detail_counts* out, uint64_t now_ns) {
  *out = D.n;
  if (D.full && now_ns > D.full_since_ns) out->full_ns += now_ns - D.full_since_ns;
}
