/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: the outputs of the metrics model (metrics.h), each a
 * pure function of it into a byte buffer. Writer thread only. */
#ifndef NCCLSCOPE_SINKS_OUTPUTS_H
#define NCCLSCOPE_SINKS_OUTPUTS_H

#include <math.h>

#include "sinks/metrics.h"
#include "sinks/sink_buf.h"
#include "util/json_writer.h"

/* Process-wide facts every output names (resource attributes, labels). */
typedef struct {
  const char* host;
  uint32_t pid;
  const char* service_name; /* OTEL_SERVICE_NAME, else "ncclscope" */
  const char* job_id;       /* the job identity (src/config/identity.h), NULL when none */
  const char* slurm_job;    /* SLURM_JOB_ID, NULL when none */
  const char* executable;   /* the process's executable name, NULL when unknown */
  int local_rank;           /* LOCAL_RANK / SLURM_LOCALID / OMPI_COMM_WORLD_LOCAL_RANK, -1 when none */
  /* OTEL_RESOURCE_ATTRIBUTES, decoded and validated by src/config */
  unsigned nattrs;
  const char (*attr_key)[64];
  const char (*attr_val)[128];
  const char* version;        /* the plugin's */
} ns_mprocess;

/* identity.c: the identity labels of resource res, every output's (docs/
 * metrics.md, "Identity labels"): job_id (when known), host, and for a
 * communicator rank comm_name (when NCCL named it). Returns how many. */
#define NS_M_IDENT 3
unsigned ns_mident(const ns_metrics* m, const ns_mprocess* p, uint32_t res, const char* key[NS_M_IDENT],
                   const char* val[NS_M_IDENT]);

/* A double of the model in the JSON outputs: NaN and infinities as 0 (OTLP's
 * JSON has no null number). */
static inline void ns_sink_json_f64(ns_json* j, double v) { nsj_f64(j, isfinite(v) ? v : 0); }

/* prom.c: the Prometheus text exposition format 0.0.4 for node_exporter's
 * textfile collector (no timestamps: the collector refuses them). */
void ns_prom_write(const ns_metrics* m, const ns_mprocess* p, ns_buf* out);

/* jsonl.c: one windows.jsonl line (with its newline). */
void ns_jsonl_window(const ns_metrics* m, const ns_mprocess* p, ns_buf* out);

/* otlp_json.c / otlp_proto.c: an ExportMetricsServiceRequest (OTLP/HTTP
 * http/json, http/protobuf): one ResourceMetrics per resource. */
void ns_otlp_json(const ns_metrics* m, const ns_mprocess* p, ns_buf* out);
void ns_otlp_proto(const ns_metrics* m, const ns_mprocess* p, ns_buf* out);

/* otlp_resource.c: the resource attributes of resource i, in order, as
 * key / string or integer value (the encoders' common source). */
typedef struct {
  const char* key;
  int is_int;
  int64_t i;
  char s[128];
} ns_mattr;
#define NS_M_RES_ATTRS 24
size_t ns_otlp_resource(const ns_metrics* m, const ns_mprocess* p, size_t res, ns_mattr* out, size_t cap);
/* The OTLP attribute key of a point label ("func" -> "nccl.func") and whether its value is an integer. */
const char* ns_otlp_attr_key(const char* label, int* is_int);
/* Whether family fam has points of resource res. */
int ns_otlp_has_points(const ns_mfamily* fam, uint32_t res);

#endif
