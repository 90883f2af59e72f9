/* ncclscope CLI: `details` per event type (num[]/str[] layout: ncclscope/record.h). */
#include "event_details.h"

#include <stdio.h>

static void kstr_id(ns_json* j, const ns_wfile* f, const char* key, uint32_t id) {
  nsj_kstr(j, key, ns_wfile_string(f, id));
}

/* Coll/P2p parentGroup: the legacy Group's eventAddr, or null. */
static void kaddr(ns_json* j, const ns_wfile* f, const char* key, uint64_t id) {
  nsj_key(j, key);
  if (!id) {
    nsj_null(j);
    return;
  }
  char a[NS_EVENT_ADDR_MAX];
  size_t n = ns_event_addr(a, sizeof a, f->index, id);
  nsj_strn(j, a, n);
}

const char* ns_event_func(const ns_wfile* f, const ns_xevent* ev, int* has) {
  *has = 1;
  switch (ev->start.type) {
    case NS_EV_COLL:
    case NS_EV_P2P:
    case NS_EV_COLL_API:
    case NS_EV_P2P_API:
    case NS_EV_CE_COLL:
      return ns_wfile_string(f, ev->start.str[0]);
    default:
      *has = 0;
      return NULL;
  }
}

const char* ns_state_label(int state, char* buf, size_t n) {
  const char* s = ns_state_name(state);
  if (s) return s;
  snprintf(buf, n, "State%d", state);
  return buf;
}

void ns_write_state_arg(ns_json* j, uint8_t type, const ns_record* st) {
  if (!(st->flags & NS_RF_HAS_ARG)) return;
  switch (type) {
    case NS_EV_PROXY_STEP: nsj_ku64(j, "transSize", st->arg); break;
    case NS_EV_PROXY_CTRL: nsj_ku64(j, "appendedProxyOps", st->arg); break;
    case NS_EV_KERNEL_CH: nsj_ku64(j, "pTimer", st->arg); break;
    case NS_EV_NET_PLUGIN: nsj_khex(j, "data", st->arg); break;
    default: nsj_ku64(j, "arg", st->arg); break;
  }
}

/* Counter names of COMM_FINI / COUNTERS props, in output order. */
static const struct {
  uint32_t key;
  const char* name;
} counter_names[] = {
    {NS_P_DROPPED_RING, "droppedRing"},   {NS_P_DROPPED_HANDLES, "droppedHandles"},
    {NS_P_BAD_HANDLES, "badHandles"},     {NS_P_PXN_EVENTS, "pxnEvents"},
    {NS_P_BYTES_WRITTEN, "bytesWritten"}, {NS_P_WRITE_ERRORS, "writeErrors"},
    {NS_P_PARENT_LOST, "parentLost"},
};

static void per_type(ns_json* j, const char* key, const ns_props_info* p, uint32_t base) {
  int any = 0;
  for (unsigned t = 0; t < NS_EV_COUNT; t++) any |= p->has[base + t];
  if (!any) return;
  nsj_key(j, key);
  nsj_obj_begin(j);
  for (unsigned t = 0; t < NS_EV_COUNT; t++)
    if (p->has[base + t]) nsj_ku64(j, ns_event_type_name(t), p->u[base + t]);
  nsj_obj_end(j);
}

void ns_write_counter_fields(ns_json* j, const ns_props_info* p) {
  nsj_ku64(j, "events", p->u[NS_P_EVENTS]);
  nsj_ku64(j, "dropped", p->u[NS_P_DROPPED]);
  for (size_t i = 0; i < sizeof counter_names / sizeof counter_names[0]; i++)
    if (p->has[counter_names[i].key]) nsj_ku64(j, counter_names[i].name, p->u[counter_names[i].key]);
  per_type(j, "eventsByType", p, NS_P_TYPE_EVENTS_BASE);
  per_type(j, "droppedByType", p, NS_P_TYPE_DROPPED_BASE);
}

static void net_plugin(ns_json* j, const uint64_t* n) {
  nsj_ku64(j, "id", n[0]);
  nsj_khex(j, "data", n[1]);
  if (n[2] == 1) {
    nsj_kstr(j, "netType", "ib");
    nsj_ki64(j, "device", (int64_t)n[3]);
    nsj_ku64(j, "wr_id", n[4]);
    nsj_ki64(j, "opcode", (int64_t)n[5]);
    nsj_ki64(j, "qpNum", (int64_t)n[6]);
    nsj_ku64(j, "length", n[7]);
  } else if (n[2] == 2) {
    nsj_kstr(j, "netType", "socket");
    nsj_ki64(j, "fd", (int64_t)n[3]);
    nsj_ki64(j, "op", (int64_t)n[4]);
    nsj_ku64(j, "length", n[5]);
  }
}

void ns_write_details(ns_walk* w, ns_wfile* f, const ns_xevent* ev, ns_json* j) {
  const ns_record* r = &ev->start;
  const uint64_t* n = r->num;
  const uint32_t* s = r->str;
  switch (r->type) {
    case NS_EV_GROUP_API:
      nsj_ki64(j, "depth", (int64_t)n[0]);
      nsj_kbool(j, "graphCaptured", n[1] != 0);
      break;
    case NS_EV_COLL_API:
      kstr_id(j, f, "func", s[0]);
      nsj_ku64(j, "count", n[0]);
      kstr_id(j, f, "dtype", s[1]);
      nsj_ki64(j, "root", (int64_t)n[1]);
      nsj_khex(j, "stream", n[2]);
      nsj_kbool(j, "graphCaptured", n[3] != 0);
      break;
    case NS_EV_P2P_API:
      kstr_id(j, f, "func", s[0]);
      nsj_ku64(j, "count", n[0]);
      kstr_id(j, f, "dtype", s[1]);
      nsj_khex(j, "stream", n[1]);
      nsj_kbool(j, "graphCaptured", n[2] != 0);
      break;
    case NS_EV_KERNEL_LAUNCH:
      nsj_khex(j, "stream", n[0]);
      break;
    case NS_EV_COLL:
      kstr_id(j, f, "func", s[0]);
      nsj_ku64(j, "seq", n[0]);
      kstr_id(j, f, "algo", s[2]);
      kstr_id(j, f, "proto", s[3]);
      nsj_ku64(j, "channels", n[5]);
      nsj_ku64(j, "warps", n[6]);
      nsj_ku64(j, "count", n[1]);
      nsj_ki64(j, "root", (int64_t)n[2]);
      kstr_id(j, f, "dtype", s[1]);
      nsj_khex(j, "sendBuff", n[3]);
      nsj_khex(j, "recvBuff", n[4]);
      kaddr(j, f, "parentGroup", n[7]);
      if (ev->has_exec_stop) nsj_kus(j, "execStop", (int64_t)ev->exec_stop);
      break;
    case NS_EV_P2P:
      kstr_id(j, f, "func", s[0]);
      nsj_ki64(j, "peer", (int64_t)n[0]);
      nsj_ku64(j, "channels", n[3]);
      nsj_ku64(j, "count", n[1]);
      kstr_id(j, f, "dtype", s[1]);
      nsj_khex(j, "buff", n[2]);
      kaddr(j, f, "parentGroup", n[4]);
      if (ev->has_exec_stop) nsj_kus(j, "execStop", (int64_t)ev->exec_stop);
      break;
    case NS_EV_PROXY_OP:
      nsj_ki64(j, "channel", (int64_t)n[0]);
      nsj_ki64(j, "peer", (int64_t)n[1]);
      nsj_ku64(j, "steps", n[2]);
      nsj_ku64(j, "chunkSize", n[3]);
      nsj_ki64(j, "isSend", (int64_t)n[4]);
      nsj_ku64(j, "eventPid", n[5]);
      break;
    case NS_EV_PROXY_STEP:
      nsj_ku64(j, "step", n[0]);
      if (ev->has_trans_size) nsj_ku64(j, "transSize", ev->trans_size);
      break;
    case NS_EV_KERNEL_CH:
      nsj_ki64(j, "channel", (int64_t)n[0]);
      nsj_ku64(j, "pTimer", n[1]);
      if (ev->has_ptimer_stop) nsj_ku64(j, "pTimerStop", ev->ptimer_stop);
      break;
    case NS_EV_NET_PLUGIN:
      net_plugin(j, n);
      break;
    case NS_EV_CE_COLL:
      kstr_id(j, f, "func", s[0]);
      nsj_ku64(j, "seq", n[0]);
      nsj_ku64(j, "count", n[1]);
      kstr_id(j, f, "dtype", s[1]);
      nsj_ki64(j, "root", (int64_t)n[2]);
      kstr_id(j, f, "syncStrategy", s[2]);
      nsj_khex(j, "stream", n[3]);
      nsj_khex(j, "sendBuff", n[4]);
      nsj_khex(j, "recvBuff", n[5]);
      nsj_ku64(j, "intraBatchSync", n[6]);
      nsj_ku64(j, "batchSize", n[7]);
      nsj_ku64(j, "numBatches", n[8]);
      nsj_ku64(j, "ceSeqNum", n[9]);
      break;
    case NS_EV_CE_SYNC:
      nsj_kbool(j, "isComplete", n[0] != 0);
      nsj_ku64(j, "nRanks", n[1]);
      break;
    case NS_EV_CE_BATCH:
      nsj_ku64(j, "numOps", n[0]);
      nsj_ku64(j, "totalBytes", n[1]);
      nsj_kbool(j, "useIntraSync", n[2] != 0);
      break;
    default: /* Group, ProxyCtrl: no fields */
      break;
  }
  ns_walk_event_details(w, f, ev, j);
}
