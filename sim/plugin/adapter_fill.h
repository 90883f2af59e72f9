/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: the descriptor fill of one older profiler ABI, written once.
 *
 * adapters.c includes this file once per version after defining:
 *   AF_V          the version (1..4)
 *   AF_NUMERIC    1: func/datatype/algo/proto are v1's numeric codes
 *   AF_NAMEHASH   1: Coll/P2p carry name and commHash (v1..v3)
 *   AF_KCH_NET    1: KernelCh and NetPlugin events exist (v3+)
 *   AF_CHANNELS   1: Coll/P2p nChannels and KernelCh pTimer (v4)
 * and gets `static bool fillV<N>(const simFillIn*, ncclProfilerEventDescr_v<N>_t*)`,
 * false for a type the version does not have (NCCL withholds it).
 */
#define AF_CAT_(a, b) a##b
#define AF_CAT(a, b) AF_CAT_(a, b)
#define AF_DESCR AF_CAT(AF_CAT(ncclProfilerEventDescr_v, AF_V), _t)

#if AF_NUMERIC
#define AF_STR(kind, s) kind(s)
#else
#define AF_STR(kind, s) (s)
#endif

static bool AF_CAT(fillV, AF_V)(const simFillIn* in, AF_DESCR* e) {
  const ncclProfilerEventDescr_v6_t* d = in->d;
  memset(e, 0, sizeof *e);
  e->type = (uint8_t)d->type;
  e->parentObj = d->parentObj;
  e->rank = d->rank;
  switch (d->type) {
  case ncclProfileGroup:
  case ncclProfileProxyCtrl:
    return true;
  case ncclProfileColl:
    e->parentObj = d->coll.parentGroup;
#if AF_NAMEHASH
    e->coll.name = in->commName;
    e->coll.commHash = in->commHash;
#endif
    e->coll.seqNumber = d->coll.seqNumber;
    e->coll.func = AF_STR(v1Func, d->coll.func);
    e->coll.sendBuff = d->coll.sendBuff;
    e->coll.recvBuff = d->coll.recvBuff;
    e->coll.count = d->coll.count;
    e->coll.root = d->coll.root;
    e->coll.datatype = AF_STR(v1Dtype, d->coll.datatype);
#if AF_CHANNELS
    e->coll.nChannels = d->coll.nChannels;
#else
    e->coll.nMaxChannels = d->coll.nChannels;
#endif
    e->coll.nWarps = d->coll.nWarps;
    e->coll.algo = AF_STR(v1Algo, d->coll.algo);
    e->coll.proto = AF_STR(v1Proto, d->coll.proto);
    return true;
  case ncclProfileP2p:
    e->parentObj = d->p2p.parentGroup;
#if AF_NAMEHASH
    e->p2p.name = in->commName;
    e->p2p.commHash = in->commHash;
#endif
    e->p2p.func = AF_STR(v1Func, d->p2p.func);
    e->p2p.buff = d->p2p.buff;
    e->p2p.count = d->p2p.count;
    e->p2p.datatype = AF_STR(v1Dtype, d->p2p.datatype);
    e->p2p.peer = d->p2p.peer;
#if AF_CHANNELS
    /* NCCL 2.28+'s v4 shim never copies it: whatever its stack held */
    e->p2p.nChannels = in->garbageP2pChannels ? (uint8_t)0xA5 : d->p2p.nChannels;
#endif
    return true;
  case ncclProfileProxyOp:
    e->proxyOp.pid = d->proxyOp.pid;
    e->proxyOp.channelId = d->proxyOp.channelId;
    e->proxyOp.peer = d->proxyOp.peer;
    e->proxyOp.nSteps = d->proxyOp.nSteps;
    e->proxyOp.chunkSize = d->proxyOp.chunkSize;
    e->proxyOp.isSend = d->proxyOp.isSend;
    return true;
  case ncclProfileProxyStep:
    e->proxyStep.step = d->proxyStep.step;
    return true;
#if AF_KCH_NET
  case ncclProfileKernelCh:
    e->kernelCh.channelId = d->kernelCh.channelId;
#if AF_CHANNELS
    e->kernelCh.pTimer = d->kernelCh.pTimer;
#endif
    return true;
  case ncclProfileNetPlugin:
    e->netPlugin.id = d->netPlugin.id;
    e->netPlugin.data = d->netPlugin.data;
    return true;
#endif
  default:
    return false;
  }
}

#undef AF_V
#undef AF_NUMERIC
#undef AF_NAMEHASH
#undef AF_KCH_NET
#undef AF_CHANNELS
#undef AF_DESCR
#undef AF_STR
