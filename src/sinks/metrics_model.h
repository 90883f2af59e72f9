/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: the metrics model's inside, shared by the model
 * (metrics.c: resources, points, the series budget, the live series) and
 * what each window adds to it (metrics_window.c). Writer thread only. */
#ifndef NCCLSCOPE_SINKS_METRICS_MODEL_H
#define NCCLSCOPE_SINKS_METRICS_MODEL_H

#include <stdint.h>

#include "sinks/metrics.h"

/* The families, in the order they are exported (ns_metrics_window admits them in the budget's order, metrics.h). */
enum {
  F_SERIES,
  F_REFUSED,
  F_UPDATED,
  F_OLDEST,
  F_HANGS,
  F_STUCK,
  F_POSTED,
  F_COMPLETED,
  F_WINDOWS,
  F_DROPPED,
  F_CLOSED,
  F_UNANALYSED,
  F_OTLP_REQ,
  F_OTLP_DROPPED,
  F_DETAIL_FULL,
  F_DETAIL_ESC,
  F_OPS,
  F_OPS_GPU,
  F_BYTES,
  F_INCOMPLETE,
  F_CLOCK,
  F_LATE_SUM,
  F_LATE_N,
  F_LATE_LAST,
  F_LATE_MAX,
  F_LINKS_FITTED,
  F_LINK_BW_MIN,
  F_LINK_LAT_MAX,
  F_DURATION,
  F_LINK_LAT,
  F_LINK_BW,
  F_ALGBW,
  F_BUSBW,
  F_TAG_OPS,
  F_TAG_SECONDS,
  F_COUNT
};

struct ns_metrics {
  ns_metrics_config cfg;
  ns_mfamily fam[F_COUNT];
  ns_mres* res;
  size_t nres, capres;
  uint32_t series, refused;
  uint32_t reserved; /* places held for stuck-operation series not there now */
  uint64_t windows, window_index;
  uint64_t start_unix_ns, win_start_unix_ns, end_unix_ns, time_unix_ns;
};

/* Whether family f is a live series (kept between windows, written between them too). */
int ns_mfamily_is_live(int f);
/* The resource of comm serial comm (added when unknown); UINT32_MAX when out of memory. */
uint32_t ns_mres_of(ns_metrics* m, uint32_t comm);
/* The point of family f for (resource, labels): found, else created when the
 * budget allows, making room by giving up points of families that go before
 * f's (metrics.h; else NULL, counted as refused), or in a place held for it
 * (!budgeted). A family the budget never refuses is always admitted. Labels:
 * key/value pairs. */
ns_mpoint* ns_mpoint_in(ns_metrics* m, int f, uint32_t res, unsigned nlabels, const char* const* kv, int budgeted);
ns_mpoint* ns_mpoint_at(ns_metrics* m, int f, uint32_t res, unsigned nlabels, const char* const* kv); /* budgeted */
/* The point's value set to v, or v added to it (nothing when the budget refuses it). */
void ns_mset(ns_metrics* m, int f, uint32_t res, unsigned nl, const char* const* kv, double v);
void ns_madd(ns_metrics* m, int f, uint32_t res, unsigned nl, const char* const* kv, double v);
/* The live series from the resources' live state, ahead of every window series. */
void ns_mlive_points(ns_metrics* m);
/* The budget gauges' values. */
void ns_mbudget_values(ns_metrics* m);

#endif
