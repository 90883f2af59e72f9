/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim --replay: an event's descriptor from its recorded `details`
 * (the inverse of the exporter's details; the per-process JSONL recorders use
 * the same names).
 */
#include <stdlib.h>
#include <string.h>

#include "replay/replay_load.h"

/* The NetPlugin descriptor from its decoded fields (the contract exports them, not the bytes). */
static simReplayNetData* netData(json_object* det) {
  const char* t = json_object_get_string(simReplayGet(det, "netType"));
  if (!t) return NULL;
  simReplayNetData* n = calloc(1, sizeof *n);
  if (!strcmp(t, "ib")) {
    n->ib.type = ncclProfileQp;
    n->ib.qp.device = simReplayGetInt(det, "device", 0);
    uint64_t x = 0;
    simReplayGetU64(det, "wr_id", &x), n->ib.qp.wr_id = x;
    n->ib.qp.opcode = simReplayGetInt(det, "opcode", 0);
    n->ib.qp.qpNum = simReplayGetInt(det, "qpNum", 0);
    x = 0, simReplayGetU64(det, "length", &x), n->ib.qp.length = (size_t)x;
  } else if (!strcmp(t, "socket")) {
    n->sock.type = ncclProfileSocket;
    n->sock.sock.fd = simReplayGetInt(det, "fd", 0);
    n->sock.sock.op = simReplayGetInt(det, "op", 0);
    uint64_t x = 0;
    simReplayGetU64(det, "length", &x), n->sock.sock.length = (size_t)x;
  } else {
    free(n);
    return NULL;
  }
  return n;
}

/* The descriptor fields of one event from its `details` (inverse of the exporter's details). */
void simReplayFillDescr(simReplayLoader* L, simReplayEvent* e, json_object* det, char** group) {
  ncclProfilerEventDescr_v6_t* d = &e->d;
  d->type = 1ull << e->type;
  d->rank = e->rank;
  uint64_t u = 0;
  switch (e->type) {
  case 8: /* GroupApi */
    d->groupApi.groupDepth = simReplayGetInt(det, "depth", 0);
    d->groupApi.graphCaptured = simReplayGetBool(det, "graphCaptured");
    break;
  case 9: /* CollApi */
    d->collApi.func = simReplayGetStr(L, det, "func");
    simReplayGetU64(det, "count", &u), d->collApi.count = (size_t)u;
    d->collApi.datatype = simReplayGetStr(L, det, "dtype");
    d->collApi.root = simReplayGetInt(det, "root", 0);
    d->collApi.stream = simReplayGetPtr(det, "stream");
    d->collApi.graphCaptured = simReplayGetBool(det, "graphCaptured");
    break;
  case 10: /* P2pApi */
    d->p2pApi.func = simReplayGetStr(L, det, "func");
    simReplayGetU64(det, "count", &u), d->p2pApi.count = (size_t)u;
    d->p2pApi.datatype = simReplayGetStr(L, det, "dtype");
    d->p2pApi.stream = simReplayGetPtr(det, "stream");
    d->p2pApi.graphCaptured = simReplayGetBool(det, "graphCaptured");
    break;
  case 11: /* KernelLaunch */ d->kernelLaunch.stream = simReplayGetPtr(det, "stream"); break;
  case 1: /* Coll */
    simReplayGetU64(det, "seq", &d->coll.seqNumber);
    d->coll.func = simReplayGetStr(L, det, "func");
    d->coll.sendBuff = simReplayGetPtr(det, "sendBuff");
    d->coll.recvBuff = simReplayGetPtr(det, "recvBuff");
    u = 0, simReplayGetU64(det, "count", &u), d->coll.count = (size_t)u;
    d->coll.root = simReplayGetInt(det, "root", 0);
    d->coll.datatype = simReplayGetStr(L, det, "dtype");
    d->coll.nChannels = (uint8_t)simReplayGetInt(det, "channels", 0);
    d->coll.nWarps = (uint8_t)simReplayGetInt(det, "warps", 0);
    d->coll.algo = simReplayGetStr(L, det, "algo");
    d->coll.proto = simReplayGetStr(L, det, "proto");
    *group = (char*)json_object_get_string(simReplayGet(det, "parentGroup"));
    break;
  case 2: /* P2p */
    d->p2p.func = simReplayGetStr(L, det, "func");
    d->p2p.buff = simReplayGetPtr(det, "buff");
    d->p2p.datatype = simReplayGetStr(L, det, "dtype");
    u = 0, simReplayGetU64(det, "count", &u), d->p2p.count = (size_t)u;
    d->p2p.peer = simReplayGetInt(det, "peer", 0);
    d->p2p.nChannels = (uint8_t)simReplayGetInt(det, "channels", 0);
    *group = (char*)json_object_get_string(simReplayGet(det, "parentGroup"));
    break;
  case 3: /* ProxyOp */
    d->proxyOp.channelId = (uint8_t)simReplayGetInt(det, "channel", 0);
    d->proxyOp.peer = simReplayGetInt(det, "peer", 0);
    d->proxyOp.nSteps = simReplayGetInt(det, "steps", 0);
    d->proxyOp.chunkSize = simReplayGetInt(det, "chunkSize", 0);
    d->proxyOp.isSend = simReplayGetInt(det, "isSend", 0);
    d->proxyOp.pid = simReplayGetInt(det, "eventPid", e->pid);
    break;
  case 4: /* ProxyStep */ d->proxyStep.step = simReplayGetInt(det, "step", 0); break;
  case 6: /* KernelCh */
    d->kernelCh.channelId = (uint8_t)simReplayGetInt(det, "channel", 0);
    simReplayGetU64(det, "pTimer", &d->kernelCh.pTimer);
    break;
  case 7: /* NetPlugin */
    simReplayGetI64(det, "id", &d->netPlugin.id);
    e->net = netData(det);
    break;
  case 12: /* CeColl */
    simReplayGetU64(det, "seq", &d->ceColl.seqNumber);
    d->ceColl.func = simReplayGetStr(L, det, "func");
    u = 0, simReplayGetU64(det, "count", &u), d->ceColl.count = (size_t)u;
    d->ceColl.datatype = simReplayGetStr(L, det, "dtype");
    d->ceColl.root = simReplayGetInt(det, "root", 0);
    d->ceColl.syncStrategy = simReplayGetStr(L, det, "syncStrategy");
    d->ceColl.stream = simReplayGetPtr(det, "stream");
    d->ceColl.sendBuff = simReplayGetPtr(det, "sendBuff");
    d->ceColl.recvBuff = simReplayGetPtr(det, "recvBuff");
    d->ceColl.intraBatchSync = simReplayGetBool(det, "intraBatchSync");
    d->ceColl.batchSize = (uint32_t)simReplayGetInt(det, "batchSize", 0);
    d->ceColl.numBatches = (uint32_t)simReplayGetInt(det, "numBatches", 0);
    d->ceColl.ceSeqNum = (uint32_t)simReplayGetInt(det, "ceSeqNum", 0);
    break;
  case 13: /* CeSync */
    d->ceCollSync.isComplete = simReplayGetBool(det, "isComplete");
    d->ceCollSync.nRanks = simReplayGetInt(det, "nRanks", 0);
    break;
  case 14: /* CeBatch */
    d->ceCollBatch.numOps = simReplayGetInt(det, "numOps", 0);
    u = 0, simReplayGetU64(det, "totalBytes", &u), d->ceCollBatch.totalBytes = (size_t)u;
    d->ceCollBatch.useIntraSync = simReplayGetBool(det, "useIntraSync");
    break;
  default: /* Group, ProxyCtrl */ break;
  }
}
