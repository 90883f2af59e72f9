/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope flight recorder: the JSON dump (README.md, "A job that hangs"). One object:
 * the process and why it was written, the episodes, and per communicator its
 * last operations, oldest first, with per-channel progress for those not
 * done. Times are ns on the trace clock (CLOCK_MONOTONIC of the host);
 * realtimeOffsetNs turns them into Unix-epoch ns. */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "util/json_writer.h"

static const char* type_name(uint8_t type) {
  return type == NS_EV_COLL ? "Coll" : type == NS_EV_P2P ? "P2p" : "unknown";
}

static void dump_dir(ns_json* j, const char* key, const ns_fr_dir* d) {
  nsj_key(j, key);
  nsj_obj_begin(j);
  nsj_ki64(j, "peer", d->peer);
  nsj_ku64(j, "proxyOps", d->ops);
  nsj_ku64(j, "proxyOpsDone", d->ops_done);
  nsj_ku64(j, "proxyOpsClosed", d->ops_closed);
  nsj_ku64(j, "steps", d->steps);
  nsj_ku64(j, "stepsDone", d->steps_done);
  nsj_ki64(j, "lastStep", d->last_step);
  nsj_kstr(j, "lastState", d->last_state >= 0 ? ns_state_name(d->last_state) : NULL);
  nsj_ku64(j, "lastNs", d->last_ts);
  nsj_obj_end(j);
}

static void dump_channel(ns_json* j, const ns_fr_chan* ch) {
  const char* k = (ch->kch & NS_FR_KCH_STOPPED)   ? "stopped"
                  : (ch->kch & NS_FR_KCH_CLOSED)  ? "closed"
                  : (ch->kch & NS_FR_KCH_STARTED) ? "started"
                                                  : "none";
  nsj_obj_begin(j);
  nsj_ki64(j, "channel", ch->channel);
  nsj_kstr(j, "kernel", k);
  nsj_ku64(j, "kernelNs", ch->kch_ts);
  if (ch->dir[1].ops) dump_dir(j, "send", &ch->dir[1]);
  if (ch->dir[0].ops) dump_dir(j, "recv", &ch->dir[0]);
  nsj_obj_end(j);
}

static void dump_op(const ns_fr* fr, const ns_fr_op* op, ns_json* j) {
  nsj_obj_begin(j);
  nsj_ku64(j, "id", op->id);
  nsj_kstr(j, "type", type_name(op->type));
  nsj_kstr(j, "func", fr_str(fr, op->func_str));
  nsj_ku64(j, "seq", op->seq);
  nsj_ku64(j, "count", op->count);
  nsj_ku64(j, "bytes", op->bytes);
  nsj_kstr(j, "dtype", fr_str(fr, op->dtype_str));
  nsj_kstr(j, "algo", fr_str(fr, op->algo_str));
  nsj_kstr(j, "proto", fr_str(fr, op->proto_str));
  nsj_ki64(j, op->type == NS_EV_P2P ? "peer" : "root", op->peer_or_root);
  nsj_ku64(j, "nChannels", op->nchannels);
  nsj_kstr(j, "state", op->started ? ns_fr_stage_name(op->stage) : "unstarted");
  nsj_kstr(j, "doneBy", op->done == 1 ? "itself" : op->done == 2 ? "laterOp" : NULL);
  nsj_ku64(j, "startNs", op->t_start);
  nsj_ku64(j, "stopNs", op->t_stop);
  nsj_ku64(j, "proxyNs", op->t_proxy);
  nsj_ku64(j, "gpuNs", op->t_gpu);
  nsj_ku64(j, "doneNs", op->t_done);
  nsj_ku64(j, "lastNs", op->t_last);
  nsj_ku64(j, "proxyOps", op->proxy_ops);
  nsj_ku64(j, "proxyOpsDone", op->proxy_ops_done);
  nsj_ku64(j, "kernelCh", op->kch);
  nsj_ku64(j, "kernelChDone", op->kch_done);
  nsj_ku64(j, "closedChildren", op->closed_children);
  if (op->nch) {
    nsj_key(j, "channels");
    nsj_arr_begin(j);
    for (uint32_t i = 0; i < op->nch; i++) dump_channel(j, &op->ch[i]);
    nsj_arr_end(j);
  }
  nsj_obj_end(j);
}

/* The members that name a communicator rank, episodes and communicators alike. */
static void comm_rank(ns_json* j, uint32_t comm, uint64_t comm_id, const char* name, int rank, uint32_t nranks) {
  nsj_ku64(j, "comm", comm);
  nsj_key(j, "commId");
  nsj_hexw(j, comm_id, 16);
  nsj_kstr(j, "name", name);
  nsj_ki64(j, "rank", rank);
  nsj_ku64(j, "nranks", nranks);
}

static void dump_episode(const ns_fr_stuck* s, ns_json* j) {
  nsj_obj_begin(j);
  comm_rank(j, s->comm, s->comm_id, s->comm_name, s->rank, s->nranks);
  nsj_kstr(j, "func", s->func);
  nsj_kstr(j, "type", type_name(s->op.type));
  nsj_ku64(j, "seq", s->op.seq);
  nsj_ku64(j, "opId", s->op.id);
  nsj_kstr(j, "state", s->op.started ? ns_fr_stage_name(s->op.stage) : "unstarted");
  nsj_ku64(j, "startNs", s->op.t_start);
  nsj_ku64(j, "detectNs", s->detect_ns);
  nsj_ksec(j, "waitedSec", (int64_t)s->waited_ns);
  nsj_kbool(j, "cleared", s->cleared);
  nsj_kstr(j, "waitsFor", s->waits_for);
  nsj_obj_end(j);
}

static void dump_comm(const ns_fr* fr, const fr_comm* c, ns_json* j) {
  uint64_t from_pos = c->head > fr->cfg.entries ? c->head - fr->cfg.entries : 0;
  nsj_obj_begin(j);
  comm_rank(j, c->comm, c->comm_id, c->name, c->rank, c->nranks);
  nsj_ku64(j, "opsRecorded", c->head);
  nsj_ku64(j, "opsKept", c->head - from_pos);
  nsj_ku64(j, "inFlight", c->head - c->first_open);
  nsj_key(j, "ops");
  nsj_arr_begin(j);
  for (uint64_t p = from_pos; p < c->head; p++) {
    nsj_value_on_new_line(j); /* one operation per line: the file stays greppable */
    dump_op(fr, fr_at(fr, c, p), j);
  }
  nsj_arr_end(j);
  nsj_obj_end(j);
}

int ns_fr_dump_json(const ns_fr* fr, const ns_fr_dump_info* in, FILE* f) {
  ns_json* j = nsj_new(f);
  if (!j) return -1;
  nsj_obj_begin(j);
  nsj_kstr(j, "format", "ncclscope-flightrec");
  nsj_ku64(j, "version", 1);
  nsj_kstr(j, "host", in->host);
  nsj_ku64(j, "pid", in->pid);
  nsj_kstr(j, "reason", in->reason);
  nsj_ku64(j, "nowNs", in->now_ns);
  nsj_ki64(j, "realtimeOffsetNs", in->realtime_offset_ns);
  nsj_ksec(j, "hangTimeoutSec", (int64_t)(in->timeout_sec * 1e9 + 0.5)); /* never negative */
  nsj_key(j, "episodes");
  nsj_arr_begin(j);
  uint64_t n = fr->st.episodes, from = n > FR_EPISODES ? n - FR_EPISODES : 0;
  for (uint64_t e = from; e < n; e++) dump_episode(&fr->episodes[e % FR_EPISODES], j);
  nsj_arr_end(j);
  nsj_key(j, "communicators");
  nsj_arr_begin(j);
  for (size_t i = 0; i < fr->ncomms; i++)
    if (fr->comms[i].comm) dump_comm(fr, &fr->comms[i], j);
  nsj_arr_end(j);
  nsj_obj_end(j);
  nsj_line_end(j);
  int rc = nsj_free(j);
  return rc || ferror(f) ? -1 : 0;
}
