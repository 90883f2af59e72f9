/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: the Prometheus text exposition (format 0.0.4) of the
 * metrics model, for node_exporter's textfile collector. Writer thread.
 *
 * Every family with points gets one # HELP and one # TYPE line; names
 * follow Prometheus' conventions (base units: _seconds, _bytes; counters end
 * in _total). Every series carries the identity labels (ns_mident: job_id,
 * host, comm_name); a communicator rank's carry comm (its hash) and rank,
 * the process's carry pid, so the files of several processes on one node
 * never name the same series (node_exporter fails a scrape that does). No
 * timestamps: the textfile collector refuses them. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sinks/outputs.h"
#include "util/json_writer.h"

static void value(ns_buf* b, double v) {
  if (isnan(v)) ns_buf_str(b, "NaN");
  else if (isinf(v)) ns_buf_str(b, v > 0 ? "+Inf" : "-Inf");
  else {
    char text[NSJ_F64_MAX];
    ns_buf_put(b, text, nsj_fmt_f64(text, v));
  }
}

/* A label value: backslash, double quote and newline escaped. */
static void label_value(ns_buf* b, const char* s) {
  for (; *s; s++) {
    if (*s == '\\') ns_buf_str(b, "\\\\");
    else if (*s == '"') ns_buf_str(b, "\\\"");
    else if (*s == '\n') ns_buf_str(b, "\\n");
    else ns_buf_put(b, s, 1);
  }
}

static void label(ns_buf* b, int* first, const char* k, const char* v) {
  ns_buf_str(b, *first ? "{" : ",");
  *first = 0;
  ns_buf_str(b, k);
  ns_buf_str(b, "=\"");
  label_value(b, v);
  ns_buf_str(b, "\"");
}

/* name{identity,pid|comm,rank,labels[,le="x"]} value */
static void sample(ns_buf* b, const ns_metrics* m, const ns_mprocess* proc, const char* name, const char* suffix,
                   const ns_mpoint* p, const char* le, double v) {
  ns_buf_str(b, name);
  ns_buf_str(b, suffix);
  int first = 1;
  const ns_mres* r = ns_metrics_res(m, p->res);
  const char *ik[NS_M_IDENT], *iv[NS_M_IDENT];
  unsigned ni = ns_mident(m, proc, p->res, ik, iv);
  for (unsigned k = 0; k < ni; k++) label(b, &first, ik[k], iv[k]);
  if (p->res == 0) {
    label(b, &first, "pid", r->rank_str);
  } else {
    label(b, &first, "comm", r->comm_hex);
    label(b, &first, "rank", r->rank_str);
  }
  for (unsigned k = 0; k < p->nlabels; k++) label(b, &first, p->labels[k].key, p->labels[k].val);
  if (le) label(b, &first, "le", le);
  if (!first) ns_buf_str(b, "}");
  ns_buf_str(b, " ");
  value(b, v);
  ns_buf_str(b, "\n");
}

void ns_prom_write(const ns_metrics* m, const ns_mprocess* proc, ns_buf* out) {
  static const char* const type[] = {"counter", "gauge", "histogram"};
  for (size_t f = 0; f < ns_metrics_nfamilies(m); f++) {
    const ns_mfamily* fam = ns_metrics_family(m, f);
    if (!fam->n) continue;
    ns_buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", fam->d->prom, fam->d->help, fam->d->prom,
                   type[fam->d->kind]);
    for (size_t i = 0; i < fam->n; i++) {
      const ns_mpoint* p = &fam->p[i];
      if (fam->d->kind != NS_MK_HISTOGRAM) {
        sample(out, m, proc, fam->d->prom, "", p, NULL, p->value);
        continue;
      }
      uint64_t cum = 0;
      for (unsigned k = 0; k <= NS_HIST_BOUNDS; k++) {
        char le[40];
        cum += p->buckets[k];
        if (k < NS_HIST_BOUNDS) {
          le[nsj_fmt_f64(le, ns_metrics_bound_s(k))] = '\0';
        } else {
          snprintf(le, sizeof le, "+Inf");
        }
        sample(out, m, proc, fam->d->prom, "_bucket", p, le, (double)cum);
      }
      sample(out, m, proc, fam->d->prom, "_sum", p, NULL, p->sum);
      sample(out, m, proc, fam->d->prom, "_count", p, NULL, (double)p->count);
    }
  }
}
