/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the OpenTelemetry exporter's standard environment variables
 * (OTLP/HTTP, metrics only), read with the rest of the configuration.
 * Every value is validated like NCCLSCOPE_*: one warning naming the
 * variable, the value (escaped) and what is used instead. */
#ifndef NCCLSCOPE_CONFIG_OTEL_H
#define NCCLSCOPE_CONFIG_OTEL_H

#include <stdint.h>

#define NS_OTEL_URL_MAX 1024
#define NS_OTEL_HEADERS_MAX 16
#define NS_OTEL_ATTRS_MAX 16

enum { NS_OTLP_PROTOBUF = 0, NS_OTLP_JSON = 1 };

typedef struct {
  int enabled;                 /* NCCLSCOPE_OTLP=1, or an endpoint set (NCCLSCOPE_OTLP=0 wins) */
  char url[NS_OTEL_URL_MAX];   /* the metrics endpoint, /v1/metrics included */
  char url_shown[NS_OTEL_URL_MAX]; /* url for logs (util/url_redact.h): user-info, query values as "***" */
  int protocol;                /* NS_OTLP_* */
  int gzip;                    /* OTEL_EXPORTER_OTLP_COMPRESSION=gzip */
  uint32_t timeout_ms;         /* per request */
  unsigned nheaders;
  char header[NS_OTEL_HEADERS_MAX][256]; /* "Key: value", decoded */
  char service_name[128];
  unsigned nattrs;
  char attr_key[NS_OTEL_ATTRS_MAX][64];
  char attr_val[NS_OTEL_ATTRS_MAX][128];
  int local_rank; /* the resource's nccl.local_rank: LOCAL_RANK / SLURM_LOCALID / OMPI_COMM_WORLD_LOCAL_RANK /
                   * MPI_LOCALRANKID, the first set to a number; -1: none */
} ns_otel_config;

typedef void (*ns_otel_warn_fn)(const char* line);

/* Reads OTEL_EXPORTER_OTLP_{,METRICS_}{ENDPOINT,PROTOCOL,HEADERS,TIMEOUT,
 * COMPRESSION}, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES and
 * NCCLSCOPE_OTLP (the metrics-specific variable wins over the general one),
 * then the launcher's local rank. */
void ns_otel_config_load(ns_otel_config* c, ns_otel_warn_fn warn);

#endif
