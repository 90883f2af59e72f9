/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: `details` per event type (num[]/str[] layout: ncclscope/record.h). */
#include "export/event_details.h"

#include <stdio.h>

static void kstr_id(ns_json* j, const ns_wfile* f, const char* key, uint32_t id) {
  nsj_kstr(j, key, ns_wfile_string(f, id));
}

void ns_write_event_ids(ns_json* j, const ns_wfile* f, const ns_event* ev) {
  const ns_record* r = &ev->start;
  char addr[NS_EVENT_ADDR_MAX];
  size_t alen = ns_event_addr(addr, sizeof addr, f->index, ev->id);
  nsj_key(j, "eventAddr");
  nsj_strn(j, addr, alen);
  nsj_key(j, "parentObj");
  if (r->flags & NS_RF_PARENT_RAW) {
    nsj_hex(j, r->parent);
  } else if (r->parent) {
    alen = ns_event_addr(addr, sizeof addr, f->index, r->parent);
    nsj_strn(j, addr, alen);
  } else {
    nsj_null(j);
  }
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

const char* ns_event_func(const ns_wfile* f, const ns_event* ev, int* has) {
  const ns_type_desc* d = ns_type_desc_of(ev->start.type);
  *has = d && d->func_str >= 0;
  return *has ? ns_wfile_string(f, ev->start.str[d->func_str]) : NULL;
}

const char* ns_state_label(int state, char* buf, size_t n) {
  const char* s = ns_state_name(state);
  if (s) return s;
  snprintf(buf, n, "State%d", state);
  return buf;
}

/* A value as its schema json kind says (NETKIND and the string kinds are
 * written by the caller). */
static void write_word(ns_json* j, const char* key, unsigned json, uint64_t v) {
  switch (json) {
    case NS_JSON_I64: nsj_ki64(j, key, (int64_t)v); break;
    case NS_JSON_HEX: nsj_khex(j, key, v); break;
    case NS_JSON_BOOL: nsj_kbool(j, key, v != 0); break;
    default: nsj_ku64(j, key, v); break;
  }
}

void ns_write_state_arg(ns_json* j, uint8_t type, const ns_record* st) {
  if (!(st->flags & NS_RF_HAS_ARG)) return;
  const ns_type_desc* d = ns_type_desc_of(type);
  write_word(j, d ? d->state_arg : "arg", d ? d->state_arg_json : NS_JSON_U64, st->arg);
}

void ns_write_incomplete(ns_json* j, const ns_event* ev) {
  if (ev->stopped) return;
  nsj_kbool(j, "incomplete", 1);
  const char* why = ev->close_reason ? ns_close_reason_name(ev->close_reason)
                    : (ev->flags & NS_EVF_EVICTED) ? "evicted"
                                                   : "traceEnded";
  nsj_kstr(j, "incompleteReason", why ? why : "closed");
}

ns_record ns_repeated_state(const ns_event* ev, const ns_record* st, uint64_t* n) {
  ns_record r = *st;
  r.state = ev->last_state;
  r.flags = ev->last_flags;
  r.arg = ev->last_arg;
  *n = st->arg;
  return r;
}

/* Counter names of COMM_FINI / COUNTERS props, in output order. */
static const struct {
  uint32_t key;
  const char* name;
} counter_names[] = {
    {NS_P_DROPPED_RING, "droppedRing"},   {NS_P_DROPPED_HANDLES, "droppedHandles"},
    {NS_P_BAD_HANDLES, "badHandles"},     {NS_P_PXN_EVENTS, "pxnEvents"},
    {NS_P_BYTES_WRITTEN, "bytesWritten"}, {NS_P_WRITE_ERRORS, "writeErrors"}, {NS_P_BYTES_LOST, "bytesLost"},
    {NS_P_PARENT_LOST, "parentLost"},     {NS_P_PARENTS_LATE, "parentsFoundLate"},
    {NS_P_STALE_HANDLES, "staleHandles"}, {NS_P_DOUBLE_STOPS, "doubleStops"},
    {NS_P_LATE_STATES, "lateStates"},     {NS_P_STATE_REPEATS, "stateRepeats"},
    {NS_P_STEPS_UNANALYSED, "stepsNotAnalysed"},
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
  int any = 0;
  for (unsigned r = 1; r < NS_CLOSE_REASONS; r++) any |= p->has[NS_P_CLOSED_BASE + r];
  if (any) {
    nsj_key(j, "closedByReason");
    nsj_obj_begin(j);
    for (unsigned r = 1; r < NS_CLOSE_REASONS; r++)
      if (p->has[NS_P_CLOSED_BASE + r]) nsj_ku64(j, ns_close_reason_name(r), p->u[NS_P_CLOSED_BASE + r]);
    nsj_obj_end(j);
  }
}

static const char* const net_kinds[] = {NULL, "ib", "socket"};

/* The schema's fields of the event's type, in schema order, then what the
 * walker derived for it and the extensions' fields. */
void ns_write_details(ns_walk* w, ns_wfile* f, const ns_event* ev, ns_json* j) {
  const ns_record* r = &ev->start;
  const ns_type_desc* d = ns_type_desc_of(r->type);
  uint64_t netkind = 0;
  for (unsigned i = 0; d && i < d->nfields; i++) {
    const ns_field_desc* fd = &d->fields[i];
    if (fd->when == NS_WHEN_NZ) {
      if (fd->slot == NS_SLOT_str ? r->str[fd->index] == 0 : r->num[fd->index] == 0) continue;
    } else if (fd->when && fd->when != netkind) {
      continue;
    }
    if (fd->slot == NS_SLOT_str) {
      kstr_id(j, f, fd->name, r->str[fd->index]);
      continue;
    }
    uint64_t v = r->num[fd->index];
    switch (fd->json) {
      case NS_JSON_ADDR: kaddr(j, f, fd->name, v); break;
      case NS_JSON_NETKIND:
        netkind = v;
        if (v > 0 && v < sizeof net_kinds / sizeof net_kinds[0]) nsj_kstr(j, fd->name, net_kinds[v]);
        break;
      default: write_word(j, fd->name, fd->json, v); break;
    }
  }
  switch (r->type) {
    case NS_EV_COLL:
    case NS_EV_P2P:
      if (ev->has_exec_stop) nsj_kus(j, "execStop", (int64_t)ev->exec_stop);
      break;
    case NS_EV_PROXY_STEP:
      if (ev->has_trans_size) nsj_ku64(j, "transSize", ev->trans_size);
      break;
    case NS_EV_KERNEL_CH:
    case NS_EV_KERNEL_PHASE:
      if (ev->has_ptimer_stop) nsj_ku64(j, "pTimerStop", ev->ptimer_stop);
      break;
    default:
      break;
  }
  ns_walk_event_details(w, f, ev, j);
}
