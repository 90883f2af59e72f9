/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope flight recorder: the JSON dump (README.md, "A job that hangs"). One object:
 * the process and why it was written, the episodes, and per communicator its
 * last operations, oldest first, with per-channel progress for those not
 * done. Times are ns on the trace clock (CLOCK_MONOTONIC of the host);
 * realtimeOffsetNs turns them into Unix-epoch ns. */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "util/json_escape.h"

static const char* type_name(uint8_t type) {
  return type == NS_EV_COLL ? "Coll" : type == NS_EV_P2P ? "P2p" : "unknown";
}

static void dump_dir(FILE* f, const char* key, const ns_fr_dir* d) {
  fprintf(f, ",\"%s\":{\"peer\":%d,\"proxyOps\":%u,\"proxyOpsDone\":%u,\"proxyOpsClosed\":%u,\"steps\":%u,"
          "\"stepsDone\":%u,\"lastStep\":%lld,\"lastState\":",
          key, d->peer, d->ops, d->ops_done, d->ops_closed, d->steps, d->steps_done, (long long)d->last_step);
  const char* st = d->last_state >= 0 ? ns_state_name(d->last_state) : NULL;
  if (st) ns_json_write_str(f, st, 0);
  else fputs("null", f);
  fprintf(f, ",\"lastNs\":%llu}", (unsigned long long)d->last_ts);
}

static void dump_op(const ns_fr* fr, const ns_fr_op* op, FILE* f) {
  fprintf(f, "{\"id\":%llu,\"type\":\"%s\",\"func\":", (unsigned long long)op->id, type_name(op->type));
  ns_json_write_str(f, fr_str(fr, op->func_str), 0);
  fprintf(f, ",\"seq\":%llu,\"count\":%llu,\"bytes\":%llu,\"dtype\":", (unsigned long long)op->seq,
          (unsigned long long)op->count, (unsigned long long)op->bytes);
  ns_json_write_str(f, fr_str(fr, op->dtype_str), 0);
  fputs(",\"algo\":", f);
  ns_json_write_str(f, fr_str(fr, op->algo_str), 0);
  fputs(",\"proto\":", f);
  ns_json_write_str(f, fr_str(fr, op->proto_str), 0);
  fprintf(f, ",\"%s\":%lld,\"nChannels\":%u,\"state\":\"%s\",\"doneBy\":%s", op->type == NS_EV_P2P ? "peer" : "root",
          (long long)op->peer_or_root, op->nchannels, op->started ? ns_fr_stage_name(op->stage) : "unstarted",
          op->done == 1 ? "\"itself\"" : op->done == 2 ? "\"laterOp\"" : "null");
  fprintf(f, ",\"startNs\":%llu,\"stopNs\":%llu,\"proxyNs\":%llu,\"gpuNs\":%llu,\"doneNs\":%llu,\"lastNs\":%llu",
          (unsigned long long)op->t_start, (unsigned long long)op->t_stop, (unsigned long long)op->t_proxy,
          (unsigned long long)op->t_gpu, (unsigned long long)op->t_done, (unsigned long long)op->t_last);
  fprintf(f, ",\"proxyOps\":%u,\"proxyOpsDone\":%u,\"kernelCh\":%u,\"kernelChDone\":%u,\"closedChildren\":%u",
          op->proxy_ops, op->proxy_ops_done, op->kch, op->kch_done, op->closed_children);
  if (op->nch) {
    fputs(",\"channels\":[", f);
    for (uint32_t i = 0; i < op->nch; i++) {
      const ns_fr_chan* ch = &op->ch[i];
      const char* k = (ch->kch & NS_FR_KCH_STOPPED)   ? "stopped"
                       : (ch->kch & NS_FR_KCH_CLOSED)  ? "closed"
                       : (ch->kch & NS_FR_KCH_STARTED) ? "started"
                                                       : "none";
      fprintf(f, "%s{\"channel\":%d,\"kernel\":\"%s\",\"kernelNs\":%llu", i ? "," : "", ch->channel, k,
              (unsigned long long)ch->kch_ts);
      if (ch->dir[1].ops) dump_dir(f, "send", &ch->dir[1]);
      if (ch->dir[0].ops) dump_dir(f, "recv", &ch->dir[0]);
      fputc('}', f);
    }
    fputc(']', f);
  }
  fputc('}', f);
}

static void dump_episode(const ns_fr_stuck* s, FILE* f) {
  fprintf(f, "{\"comm\":%u,\"commId\":\"0x%016llx\",\"name\":", s->comm, (unsigned long long)s->comm_id);
  ns_json_write_str(f, s->comm_name, 0);
  fprintf(f, ",\"rank\":%d,\"nranks\":%u,\"func\":", s->rank, s->nranks);
  ns_json_write_str(f, s->func, 0);
  fprintf(f, ",\"type\":\"%s\",\"seq\":%llu,\"opId\":%llu,\"state\":\"%s\",\"startNs\":%llu,\"detectNs\":%llu,"
          "\"waitedSec\":%.3f,\"cleared\":%s,\"waitsFor\":",
          type_name(s->op.type), (unsigned long long)s->op.seq, (unsigned long long)s->op.id,
          s->op.started ? ns_fr_stage_name(s->op.stage) : "unstarted", (unsigned long long)s->op.t_start,
          (unsigned long long)s->detect_ns, (double)s->waited_ns / 1e9, s->cleared ? "true" : "false");
  ns_json_write_str(f, s->waits_for, 0);
  fputc('}', f);
}

int ns_fr_dump_json(const ns_fr* fr, const ns_fr_dump_info* in, FILE* f) {
  fputs("{\"format\":\"ncclscope-flightrec\",\"version\":1,\"host\":", f);
  ns_json_write_str(f, in->host, 0);
  fprintf(f, ",\"pid\":%u,\"reason\":", in->pid);
  ns_json_write_str(f, in->reason, 0);
  fprintf(f, ",\"nowNs\":%llu,\"realtimeOffsetNs\":%lld,\"hangTimeoutSec\":%.3f", (unsigned long long)in->now_ns,
          (long long)in->realtime_offset_ns, in->timeout_sec);
  fputs(",\"episodes\":[", f);
  uint64_t n = fr->st.episodes, from = n > FR_EPISODES ? n - FR_EPISODES : 0;
  for (uint64_t e = from; e < n; e++) {
    if (e > from) fputc(',', f);
    dump_episode(&fr->episodes[e % FR_EPISODES], f);
  }
  fputs("],\"communicators\":[", f);
  int firstc = 1;
  for (size_t i = 0; i < fr->ncomms; i++) {
    const fr_comm* c = &fr->comms[i];
    if (!c->comm) continue;
    fprintf(f, "%s{\"comm\":%u,\"commId\":\"0x%016llx\",\"name\":", firstc ? "" : ",", c->comm,
            (unsigned long long)c->comm_id);
    ns_json_write_str(f, c->name, 0);
    uint64_t from_pos = c->head > fr->cfg.entries ? c->head - fr->cfg.entries : 0;
    fprintf(f, ",\"rank\":%d,\"nranks\":%u,\"opsRecorded\":%llu,\"opsKept\":%llu,\"inFlight\":%llu,\"ops\":[", c->rank,
            c->nranks, (unsigned long long)c->head, (unsigned long long)(c->head - from_pos),
            (unsigned long long)(c->head - c->first_open));
    for (uint64_t p = from_pos; p < c->head; p++) {
      if (p > from_pos) fputc(',', f);
      fputc('\n', f); /* one operation per line: the file stays greppable */
      dump_op(fr, fr_at(fr, c, p), f);
    }
    fputs("]}", f);
    firstc = 0;
  }
  fputs("]}\n", f);
  return ferror(f) ? -1 : 0;
}
