/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim --replay: an event's descriptor from its recorded `details`
 * (the inverse of the exporter's details; the per-process JSONL recorders use
 * the same names).
 */
#include <stdlib.h>
#include <string.h>

#include "replay/replay_load.h"

/* The NetPlugin descriptor from its decoded fields (the contract exports them, not the bytes). */
static rpNetData* netData(json_object* det) {
  const char* t = json_object_get_string(rpGet(det, "netType"));
  if (!t) return NULL;
  rpNetData* n = calloc(1, sizeof *n);
  if (!strcmp(t, "ib")) {
    n->ib.type = ncclProfileQp;
    n->ib.qp.device = rpGetInt(det, "device", 0);
    uint64_t x = 0;
    rpGetU64(det, "wr_id", &x), n->ib.qp.wr_id = x;
    n->ib.qp.opcode = rpGetInt(det, "opcode", 0);
    n->ib.qp.qpNum = rpGetInt(det, "qpNum", 0);
    x = 0, rpGetU64(det, "length", &x), n->ib.qp.length = (size_t)x;
  } else if (!strcmp(t, "socket")) {
    n->sock.type = ncclProfileSocket;
    n->sock.sock.fd = rpGetInt(det, "fd", 0);
    n->sock.sock.op = rpGetInt(det, "op", 0);
    uint64_t x = 0;
    rpGetU64(det, "length", &x), n->sock.sock.length = (size_t)x;
  } else {
    free(n);
    return NULL;
  }
  return n;
}

/* The descriptor fields of one event from its `details` (inverse of the exporter's details). */
void rpFillDescr(rpLoader* L, rpEvent* e, json_object* det, char** group) {
  ncclProfilerEventDescr_v6_t* d = &e->d;
  d->type = 1ull << e->type;
  d->rank = e->rank;
  uint64_t u = 0;
  switch (e->type) {
  case 8: /* GroupApi */
    d->groupApi.groupDepth = rpGetInt(det, "depth", 0);
    d->groupApi.graphCaptured = rpGetBool(det, "graphCaptured");
    break;
  case 9: /* CollApi */
    d->collApi.func = rpGetStr(L, det, "func");
    rpGetU64(det, "count", &u), d->collApi.count = (size_t)u;
    d->collApi.datatype = rpGetStr(L, det, "dtype");
    d->collApi.root = rpGetInt(det, "root", 0);
    d->collApi.stream = rpGetPtr(det, "stream");
    d->collApi.graphCaptured = rpGetBool(det, "graphCaptured");
    break;
  case 10: /* P2pApi */
    d->p2pApi.func = rpGetStr(L, det, "func");
    rpGetU64(det, "count", &u), d->p2pApi.count = (size_t)u;
    d->p2pApi.datatype = rpGetStr(L, det, "dtype");
    d->p2pApi.stream = rpGetPtr(det, "stream");
    d->p2pApi.graphCaptured = rpGetBool(det, "graphCaptured");
    break;
  case 11: /* KernelLaunch */ d->kernelLaunch.stream = rpGetPtr(det, "stream"); break;
  case 1: /* Coll */
    rpGetU64(det, "seq", &d->coll.seqNumber);
    d->coll.func = rpGetStr(L, det, "func");
    d->coll.sendBuff = rpGetPtr(det, "sendBuff");
    d->coll.recvBuff = rpGetPtr(det, "recvBuff");
    u = 0, rpGetU64(det, "count", &u), d->coll.count = (size_t)u;
    d->coll.root = rpGetInt(det, "root", 0);
    d->coll.datatype = rpGetStr(L, det, "dtype");
    d->coll.nChannels = (uint8_t)rpGetInt(det, "channels", 0);
    d->coll.nWarps = (uint8_t)rpGetInt(det, "warps", 0);
    d->coll.algo = rpGetStr(L, det, "algo");
    d->coll.proto = rpGetStr(L, det, "proto");
    *group = (char*)json_object_get_string(rpGet(det, "parentGroup"));
    break;
  case 2: /* P2p */
    d->p2p.func = rpGetStr(L, det, "func");
    d->p2p.buff = rpGetPtr(det, "buff");
    d->p2p.datatype = rpGetStr(L, det, "dtype");
    u = 0, rpGetU64(det, "count", &u), d->p2p.count = (size_t)u;
    d->p2p.peer = rpGetInt(det, "peer", 0);
    d->p2p.nChannels = (uint8_t)rpGetInt(det, "channels", 0);
    *group = (char*)json_object_get_string(rpGet(det, "parentGroup"));
    break;
  case 3: /* ProxyOp */
    d->proxyOp.channelId = (uint8_t)rpGetInt(det, "channel", 0);
    d->proxyOp.peer = rpGetInt(det, "peer", 0);
    d->proxyOp.nSteps = rpGetInt(det, "steps", 0);
    d->proxyOp.chunkSize = rpGetInt(det, "chunkSize", 0);
    d->proxyOp.isSend = rpGetInt(det, "isSend", 0);
    d->proxyOp.pid = rpGetInt(det, "eventPid", e->pid);
    break;
  case 4: /* ProxyStep */ d->proxyStep.step = rpGetInt(det, "step", 0); break;
  case 6: /* KernelCh */
    d->kernelCh.channelId = (uint8_t)rpGetInt(det, "channel", 0);
    rpGetU64(det, "pTimer", &d->kernelCh.pTimer);
    break;
  case 7: /* NetPlugin */
    rpGetI64(det, "id", &d->netPlugin.id);
    e->net = netData(det);
    break;
  case 12: /* CeColl */
    rpGetU64(det, "seq", &d->ceColl.seqNumber);
    d->ceColl.func = rpGetStr(L, det, "func");
    u = 0, rpGetU64(det, "count", &u), d->ceColl.count = (size_t)u;
    d->ceColl.datatype = rpGetStr(L, det, "dtype");
    d->ceColl.root = rpGetInt(det, "root", 0);
    d->ceColl.syncStrategy = rpGetStr(L, det, "syncStrategy");
    d->ceColl.stream = rpGetPtr(det, "stream");
    d->ceColl.sendBuff = rpGetPtr(det, "sendBuff");
    d->ceColl.recvBuff = rpGetPtr(det, "recvBuff");
    d->ceColl.intraBatchSync = rpGetBool(det, "intraBatchSync");
    d->ceColl.batchSize = (uint32_t)rpGetInt(det, "batchSize", 0);
    d->ceColl.numBatches = (uint32_t)rpGetInt(det, "numBatches", 0);
    d->ceColl.ceSeqNum = (uint32_t)rpGetInt(det, "ceSeqNum", 0);
    break;
  case 13: /* CeSync */
    d->ceCollSync.isComplete = rpGetBool(det, "isComplete");
    d->ceCollSync.nRanks = rpGetInt(det, "nRanks", 0);
    break;
  case 14: /* CeBatch */
    d->ceCollBatch.numOps = rpGetInt(det, "numOps", 0);
    u = 0, rpGetU64(det, "totalBytes", &u), d->ceCollBatch.totalBytes = (size_t)u;
    d->ceCollBatch.useIntraSync = rpGetBool(det, "useIntraSync");
    break;
  default: /* Group, ProxyCtrl */ break;
  }
}
