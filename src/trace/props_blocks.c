/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the props blocks' contents decoded (props_blocks.h).
 *
 * A block's info is zeroed (and given its defaults) by its decoder, then
 * takes each prop of the block through its kind's take function; keys a
 * take function does not know are skipped. */
#include "trace/props_blocks.h"

#include <string.h>

#include "trace/codec.h"

typedef void (*prop_take_fn)(void* info, const ns_prop* pr);

/* Every prop of [p, end) through take: 0 at the end, -1 when malformed. */
static int each_prop(const uint8_t* p, const uint8_t* end, void* info, prop_take_fn take) {
  ns_prop pr;
  int rc;
  while ((rc = ns_props_next(&p, end, &pr)) == 1) take(info, &pr);
  return rc;
}

/* A string prop into dst (cap bytes, truncated, NUL-terminated): 1, or 0
 * when the prop is not a string (dst untouched). */
static int str_prop(char* dst, size_t cap, const ns_prop* p) {
  if (p->ptype != NS_PT_STR) return 0;
  size_t n = p->slen < cap - 1 ? p->slen : cap - 1;
  memcpy(dst, p->s, n);
  dst[n] = '\0';
  return 1;
}

static void take_process(void* info, const ns_prop* pr) {
  ns_process_info* pi = info;
  switch (pr->key) {
    case NS_P_PID: pi->pid = (uint32_t)pr->u; break;
    case NS_P_HOSTNAME: str_prop(pi->hostname, sizeof pi->hostname, pr); break;
    case NS_P_START_MONO_NS: pi->start_mono_ns = pr->u; break;
    case NS_P_REALTIME_OFFSET_NS: pi->realtime_offset_ns = (int64_t)pr->u; break;
    case NS_P_CLOCK_SOURCE: str_prop(pi->clock_source, sizeof pi->clock_source, pr); break;
    case NS_P_TSC_HZ: pi->tsc_hz = pr->ptype == NS_PT_F64 ? pr->f : (double)pr->u; break;
    case NS_P_PLUGIN_VERSION: str_prop(pi->version, sizeof pi->version, pr); break;
    case NS_P_SLURM_JOB: str_prop(pi->slurm_job, sizeof pi->slurm_job, pr); break;
    default: break;
  }
}

int ns_props_process(const uint8_t* p, const uint8_t* end, ns_process_info* out) {
  memset(out, 0, sizeof *out);
  return each_prop(p, end, out, take_process);
}

static void take_thread(void* info, const ns_prop* pr) {
  ns_thread_info* t = info;
  if (pr->key == NS_P_TID) t->tid = (uint32_t)pr->u;
  else if (pr->key == NS_P_RING) t->ring = (uint32_t)pr->u;
  else if (pr->key == NS_P_NAME) str_prop(t->name, sizeof t->name, pr);
}

int ns_props_thread(const uint8_t* p, const uint8_t* end, ns_thread_info* out) {
  memset(out, 0, sizeof *out);
  return each_prop(p, end, out, take_thread);
}

static void take_comm_init(void* info, const ns_prop* pr) {
  ns_comm_info* c = info;
  switch (pr->key) {
    case NS_P_COMM: c->comm = (uint32_t)pr->u; break;
    case NS_P_COMM_ID: c->comm_id = pr->u; break;
    case NS_P_RANK: c->rank = (int32_t)(int64_t)pr->u; break;
    case NS_P_NRANKS: c->nranks = (uint32_t)pr->u; break;
    case NS_P_NNODES: c->nnodes = (uint32_t)pr->u; break;
    case NS_P_COMM_NAME:
      if (str_prop(c->comm_name, sizeof c->comm_name, pr)) c->has_name = 1;
      break;
    case NS_P_ABI_VERSION: c->abi_version = (uint32_t)pr->u; break;
    case NS_P_EVENT_MASK: c->event_mask = pr->u; break;
    case NS_P_GPU_UUID: str_prop(c->gpu_uuid, sizeof c->gpu_uuid, pr); break;
    case NS_P_TS: c->ts = pr->u; break;
    case NS_P_TID: c->tid = (uint32_t)pr->u; break;
    case NS_P_CTX_ADDR: c->ctx_addr = pr->u; break;
    default: break;
  }
}

int ns_props_comm_init(const uint8_t* p, const uint8_t* end, ns_comm_info* out) {
  memset(out, 0, sizeof *out);
  out->rank = -1;
  return each_prop(p, end, out, take_comm_init);
}

/* COMM_FINI, COUNTERS, CLOCKFIT: every numeric prop by key; strings are ignored. */
static void take_numeric(void* info, const ns_prop* pr) {
  ns_props_info* pi = info;
  if (pr->key == NS_P_COMM) pi->comm = (uint32_t)pr->u;
  if (pr->key == NS_P_TS) pi->ts = pr->u;
  if (pr->key == NS_P_TID) pi->tid = (uint32_t)pr->u;
  if (pr->key >= NS_MAX_PROP_KEY || pr->ptype == NS_PT_STR) return;
  pi->has[pr->key] = 1;
  if (pr->ptype == NS_PT_F64) {
    pi->f[pr->key] = pr->f;
    pi->u[pr->key] = pr->f > 0 ? (pr->f < 0x1p64 ? (uint64_t)pr->f : UINT64_MAX) : 0; /* saturate; NaN: 0 */
  } else {
    pi->u[pr->key] = pr->u;
    pi->f[pr->key] = pr->ptype == NS_PT_I64 ? (double)(int64_t)pr->u : (double)pr->u;
  }
}

int ns_props_numeric(const uint8_t* p, const uint8_t* end, ns_props_info* out) {
  memset(out, 0, sizeof *out);
  return each_prop(p, end, out, take_numeric);
}
