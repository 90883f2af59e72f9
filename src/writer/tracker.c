/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the writer's one event assembler (tracker.h). */
#include "writer/tracker.h"

#include <string.h>

#include "ncclscope/analysis.h"

/* The tracker's own part of an event, after the consumers' parts. */
typedef struct {
  uint8_t unanalysed; /* the event skips the analysis (set at its START) */
} tracker_area;

enum { FOLLOW_ANALYSIS, FOLLOW_FLIGHTREC, FOLLOW_OPEN, FOLLOWERS };

static struct {
  ns_asm* as;
  ns_asm_sink follow[FOLLOWERS]; /* user NULL and no callbacks: none */
  size_t area_fr, area_open, area_own;
  int feeding_analysed; /* the record being fed goes to the analysis */
} T;

static tracker_area* own(const ns_event* e) { return ns_event_area(e, T.area_own); }

/* Whether the analysis hears of e (NULL: an orphan state, the record's own say). */
static inline int analysis_hears(const ns_event* e) { return e ? !own(e)->unanalysed : T.feeding_analysed; }

/* Callback cb of each consumer that has one, in order, with the arguments
 * after user; the analysis only where it hears of event e. */
#define FAN_OUT(cb, e, ...)                                                                                         \
  do {                                                                                                              \
    const ns_asm_sink* f_ = T.follow;                                                                               \
    if (f_[FOLLOW_ANALYSIS].cb && analysis_hears(e)) f_[FOLLOW_ANALYSIS].cb(f_[FOLLOW_ANALYSIS].user, __VA_ARGS__); \
    if (f_[FOLLOW_FLIGHTREC].cb) f_[FOLLOW_FLIGHTREC].cb(f_[FOLLOW_FLIGHTREC].user, __VA_ARGS__);                   \
    if (f_[FOLLOW_OPEN].cb) f_[FOLLOW_OPEN].cb(f_[FOLLOW_OPEN].user, __VA_ARGS__);                                  \
  } while (0)

static void fan_created(void* user, ns_event* e) {
  (void)user;
  FAN_OUT(created, e, e);
}

static void fan_started(void* user, ns_event* e) {
  (void)user;
  own(e)->unanalysed = !T.feeding_analysed;
  FAN_OUT(started, e, e);
}

static void fan_state(void* user, ns_event* e, const ns_record* st) {
  (void)user;
  FAN_OUT(state, e, e, st);
}

static void fan_stopped(void* user, ns_event* e) {
  (void)user;
  FAN_OUT(stopped, e, e);
}

static void fan_done(void* user, ns_event* e) {
  (void)user;
  FAN_OUT(done, e, e);
}

int ns_tracker_open(size_t analysis_bytes, size_t flightrec_bytes, size_t open_bytes) {
  memset(&T, 0, sizeof T);
  ns_analysis_config acfg;
  ns_analysis_config_default(&acfg);
  ns_asm_config cfg;
  ns_analysis_assembler_config(&acfg, &cfg);
  cfg.max_age_ns = 0;        /* the writer closes running events by age itself (tracker.h) */
  cfg.no_release_counts = 1; /* the plugin publishes none of them */
  /* the analysis' part first (at ns_event_user), then the others' */
  T.area_fr = NS_EVENT_AREA(analysis_bytes);
  T.area_open = T.area_fr + NS_EVENT_AREA(flightrec_bytes);
  T.area_own = T.area_open + NS_EVENT_AREA(open_bytes);
  cfg.user_bytes = T.area_own + sizeof(tracker_area);
  T.feeding_analysed = 1;
  T.as = ns_asm_new(&cfg);
  return T.as ? 0 : -1;
}

void ns_tracker_close(void) {
  ns_asm_free(T.as);
  memset(&T, 0, sizeof T);
}

ns_asm* ns_tracker(void) { return T.as; }

size_t ns_tracker_area_flightrec(void) { return T.area_fr; }
size_t ns_tracker_area_open(void) { return T.area_open; }

/* Sets slot cb of the assembler's sink s: NULL when no consumer has the
 * callback; the consumer's own when only one has it, that is not the
 * analysis (whose events are filtered), and the sink's one user pointer is
 * unclaimed or already that consumer's (claimed: 1 once one is); else the
 * fan-out. */
#define COMPOSE(s, claimed, cb, fan)                                                         \
  do {                                                                                       \
    int n_ = 0, k_ = 0;                                                                      \
    for (int i_ = 0; i_ < FOLLOWERS; i_++)                                                   \
      if (T.follow[i_].cb) n_++, k_ = i_;                                                    \
    if (n_ == 1 && k_ != FOLLOW_ANALYSIS && (!(claimed) || (s).user == T.follow[k_].user)) { \
      (s).cb = T.follow[k_].cb;                                                              \
      (s).user = T.follow[k_].user;                                                          \
      (claimed) = 1;                                                                         \
    } else {                                                                                 \
      (s).cb = n_ ? (fan) : NULL;                                                            \
    }                                                                                        \
  } while (0)

/* The assembler calls a consumer directly where it is the only one to
 * hear of something: with the analysis off, the flight recorder hears of
 * every start, state and stop alone, and a fan-out call per record is saved. */
static void compose(void) {
  ns_asm_sink s = {0};
  int claimed = 0;
  COMPOSE(s, claimed, started, fan_started);
  COMPOSE(s, claimed, state, fan_state);
  COMPOSE(s, claimed, stopped, fan_stopped);
  COMPOSE(s, claimed, done, fan_done);
  COMPOSE(s, claimed, created, fan_created);
  ns_asm_set_sink(T.as, &s);
}

static void follow(int k, const ns_asm_sink* sink) {
  if (sink)
    T.follow[k] = *sink;
  else
    memset(&T.follow[k], 0, sizeof T.follow[k]);
  if (T.as) compose();
}

void ns_tracker_follow_analysis(const ns_asm_sink* sink) { follow(FOLLOW_ANALYSIS, sink); }
void ns_tracker_follow_flightrec(const ns_asm_sink* sink) { follow(FOLLOW_FLIGHTREC, sink); }
void ns_tracker_follow_open(const ns_asm_sink* sink) { follow(FOLLOW_OPEN, sink); }

void ns_tracker_comm(uint32_t comm, uint64_t event_mask, uint32_t abi_version, int64_t rank) {
  if (!T.as) return;
  ns_asm_comm(T.as, comm, event_mask, abi_version);
  ns_asm_comm_rank(T.as, comm, rank);
}

void ns_tracker_record(const ns_record* r, int analysed) {
  if (!T.as) return;
  /* read by this record's own callbacks alone: its START's mark, its STATE when no event has it */
  T.feeding_analysed = analysed;
  ns_asm_record(T.as, r);
}

void ns_tracker_advance(uint64_t now_ns) {
  if (T.as) ns_asm_advance(T.as, now_ns);
}
