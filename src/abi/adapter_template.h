/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the body of every ABI adapter, written once.
 *
 * Each adapter_vN.c defines NS_V, its version number (1..7), then includes
 * this file, which defines init_vN, start_vN, state_vN and exports
 * ncclProfiler_vN. What each version has follows from NS_V, here alone:
 *
 *   NS_V_NUMERIC_STRS  1: func/dtype/algo/proto are v1's numeric codes (v1)
 *   NS_V_KCH_NET       1: KernelCh and NetPlugin events (v3+)
 *   NS_V_CHANNELS      1: Coll/P2p nChannels, KernelCh pTimer, v4 state args (v4+)
 *   NS_V_API           1: GroupApi/CollApi/P2pApi/KernelLaunch events and
 *                      Coll/P2p parentGroup (v5+)
 *   NS_V_CE            1: copy-engine events (v6+)
 *   NS_V_V7            1: user tags, Coll's kernel variant and symmetric flag,
 *                      KernelPhase events (v7)
 *   NS_V_INIT          1: init(context, mask)            (v1..v3)
 *                      4: init(..., commName, commHash, nNodes, nranks, rank, logfn)  (v4)
 *                      5: init(..., commId, mask, commName, nNodes, nranks, rank, logfn) (v5+)
 *
 * Every event type goes through exactly one ns_fill_* (adapter_fill.h), so
 * every field capture reads is set without clearing the arguments.
 */
#if !defined(NS_V) || NS_V < 1 || NS_V > 7
#error "define NS_V (1..7) before including adapter_template.h"
#endif

#define NS_V_NUMERIC_STRS (NS_V == 1)
#define NS_V_KCH_NET (NS_V >= 3)
#define NS_V_CHANNELS (NS_V >= 4)
#define NS_V_API (NS_V >= 5)
#define NS_V_CE (NS_V >= 6)
#define NS_V_V7 (NS_V >= 7)
#define NS_V_INIT (NS_V <= 3 ? 1 : NS_V == 4 ? 4 : 5)

#include "abi/adapter.h"

#define NS_CAT_(a, b) a##b
#define NS_CAT(a, b) NS_CAT_(a, b)
#define NS_VNAME(x) NS_CAT(x, NS_V)                               /* x ## N */
#define NS_DESCR NS_CAT(NS_CAT(ncclProfilerEventDescr_v, NS_V), _t)
#define NS_STATE_ARGS NS_CAT(NS_CAT(ncclProfilerEventStateArgs_v, NS_V), _t)
#define NS_PROFILER NS_CAT(NS_CAT(ncclProfiler_v, NS_V), _t)

#if NS_V_NUMERIC_STRS
#define NS_FUNC(x) ns_v1_func_name(x)
#define NS_DTYPE(x) ns_v1_dtype_name(x)
#define NS_ALGO(x) ns_v1_algo_name(x)
#define NS_PROTO(x) ns_v1_proto_name(x)
#else
#define NS_FUNC(x) (x)
#define NS_DTYPE(x) (x)
#define NS_ALGO(x) (x)
#define NS_PROTO(x) (x)
#endif

#if NS_V_CHANNELS
#define NS_D_COLL_CHANNELS(d) ((d)->coll.nChannels)
#define NS_D_P2P_CHANNELS(d) ((d)->p2p.nChannels)
#define NS_D_KCH_PTIMER(d) ((d)->kernelCh.pTimer)
#define NS_STATE_ARG ns_state_arg_v4
#else
#define NS_D_COLL_CHANNELS(d) ((d)->coll.nMaxChannels)
#define NS_D_P2P_CHANNELS(d) 0u
#define NS_D_KCH_PTIMER(d) 0u
#define NS_STATE_ARG ns_state_arg_v1
#endif
/* KernelCh children a Coll/P2p announces: only versions with pTimer KernelCh. */

#if NS_V_API
#define NS_D_COLL_GROUP(d) ((d)->coll.parentGroup)
#define NS_D_P2P_GROUP(d) ((d)->p2p.parentGroup)
#else
#define NS_D_COLL_GROUP(d) NULL
#define NS_D_P2P_GROUP(d) NULL
#endif

#if NS_V_V7
#define NS_D_TAG(d, m) ((d)->m.userTag)
#define NS_D_COLL_VARIANT(d) ((d)->coll.kernelVariant)
#define NS_D_COLL_SYM(d) ((d)->coll.isSymColl)
#else
#define NS_D_TAG(d, m) 0u
#define NS_D_COLL_VARIANT(d) NULL
#define NS_D_COLL_SYM(d) 0
#endif

#if NS_V_INIT == 1
static ncclResult_t NS_VNAME(init_v)(void** context, int* eActivationMask) {
  /* No communicator information before v4. */
  ns_init_args a = {NS_V, eActivationMask, 0, NULL, -1, -1, -1, NULL};
  return ns_abi_init(context, &a);
}
#elif NS_V_INIT == 4
static ncclResult_t NS_VNAME(init_v)(void** context, int* eActivationMask, const char* commName, uint64_t commHash,
                                     int nNodes, int nranks, int rank, ncclDebugLogger_t logfn) {
  ns_init_args a = {NS_V, eActivationMask, commHash, commName, nNodes, nranks, rank, ns_abi_log_sink(logfn)};
  return ns_abi_init(context, &a);
}
#elif NS_V_INIT == 5
static ncclResult_t NS_VNAME(init_v)(void** context, uint64_t commId, int* eActivationMask, const char* commName,
                                     int nNodes, int nranks, int rank, ncclDebugLogger_t logfn) {
  ns_init_args a = {NS_V, eActivationMask, commId, commName, nNodes, nranks, rank, ns_abi_log_sink(logfn)};
  return ns_abi_init(context, &a);
}
#else
#error "NS_V_INIT must be 1, 4 or 5"
#endif

NS_HOT static ncclResult_t NS_VNAME(start_v)(void* context, void** eHandle, NS_DESCR* d) {
  ns_start_args a;
  ns_fill_head(&a, d->type, d->parentObj);
  switch (d->type) {
    case ncclProfileColl:
      ns_fill_coll(&a, d->coll.seqNumber, d->coll.count, d->coll.root, d->coll.sendBuff, d->coll.recvBuff,
                   NS_D_COLL_CHANNELS(d), d->coll.nWarps, NS_D_COLL_GROUP(d), NS_FUNC(d->coll.func),
                   NS_DTYPE(d->coll.datatype), NS_ALGO(d->coll.algo), NS_PROTO(d->coll.proto));
      ns_fill_coll_v7(&a, NS_D_COLL_VARIANT(d), NS_D_COLL_SYM(d), NS_D_TAG(d, coll));
      break;
    case ncclProfileP2p:
      ns_fill_p2p(&a, d->p2p.peer, d->p2p.count, d->p2p.buff, NS_D_P2P_CHANNELS(d), NS_D_P2P_GROUP(d),
                  NS_FUNC(d->p2p.func), NS_DTYPE(d->p2p.datatype));
      ns_set_P2P_USER_TAG(a.num, a.str, NS_D_TAG(d, p2p));
      break;
    case ncclProfileProxyOp:
      ns_fill_proxy_op(&a, d->proxyOp.pid, d->proxyOp.channelId, d->proxyOp.peer, d->proxyOp.nSteps,
                       d->proxyOp.chunkSize, d->proxyOp.isSend);
      break;
    case ncclProfileProxyStep:
      ns_fill_proxy_step(&a, d->proxyStep.step);
      break;
#if NS_V_KCH_NET
    case ncclProfileKernelCh:
      ns_fill_kernel_ch(&a, d->kernelCh.channelId, NS_D_KCH_PTIMER(d));
      break;
    case ncclProfileNetPlugin:
      ns_fill_net_plugin(&a, d->netPlugin.id, d->netPlugin.data);
      break;
#endif
#if NS_V_API
    case ncclProfileGroupApi:
      ns_fill_group_api(&a, d->groupApi.groupDepth, d->groupApi.graphCaptured);
      break;
    case ncclProfileCollApi:
      ns_fill_coll_api(&a, d->collApi.count, d->collApi.root, d->collApi.stream, d->collApi.graphCaptured,
                       d->collApi.func, d->collApi.datatype);
      ns_set_COLL_API_USER_TAG(a.num, a.str, NS_D_TAG(d, collApi));
      break;
    case ncclProfileP2pApi:
      ns_fill_p2p_api(&a, d->p2pApi.count, d->p2pApi.stream, d->p2pApi.graphCaptured, d->p2pApi.func,
                      d->p2pApi.datatype);
      ns_set_P2P_API_USER_TAG(a.num, a.str, NS_D_TAG(d, p2pApi));
      break;
    case ncclProfileKernelLaunch:
      ns_fill_kernel_launch(&a, d->kernelLaunch.stream);
      break;
#endif
#if NS_V_CE
    case ncclProfileCeColl:
      ns_fill_ce_coll(&a, d->ceColl.seqNumber, d->ceColl.count, d->ceColl.root, d->ceColl.stream,
                      d->ceColl.sendBuff, d->ceColl.recvBuff, d->ceColl.intraBatchSync, d->ceColl.batchSize,
                      d->ceColl.numBatches, d->ceColl.ceSeqNum, d->ceColl.func, d->ceColl.datatype,
                      d->ceColl.syncStrategy);
      ns_set_CE_COLL_USER_TAG(a.num, a.str, NS_D_TAG(d, ceColl));
      break;
    case ncclProfileCeSync:
      ns_fill_ce_sync(&a, d->ceCollSync.isComplete, d->ceCollSync.nRanks);
      break;
    case ncclProfileCeBatch:
      ns_fill_ce_batch(&a, d->ceCollBatch.numOps, d->ceCollBatch.totalBytes, d->ceCollBatch.useIntraSync);
      break;
#endif
#if NS_V_V7
    case ncclProfileKernelPhase:
      ns_fill_kernel_phase(&a, d->kernelPhase.channelId, d->kernelPhase.phaseId, d->kernelPhase.phaseName,
                           d->kernelPhase.pTimer);
      break;
#endif
    default:
      ns_fill_none(&a); /* Group, ProxyCtrl: no fields; other bits: not sent by this version's NCCL */
      break;
  }
  *eHandle = ns_capture_start(context, &a);
  return ncclSuccess;
}

NS_HOT static ncclResult_t NS_VNAME(state_v)(void* eHandle, ncclProfilerEventState_t eState,
                                             NS_STATE_ARGS* eStateArgs) {
  uint64_t arg = 0;
  int has = NS_STATE_ARG((int)eState, eStateArgs, &arg);
  ns_capture_state(eHandle, (int)eState, has, arg);
  return ncclSuccess;
}

NS_EXPORT NS_PROFILER NS_VNAME(ncclProfiler_v) = {
    NS_PLUGIN_NAME, NS_VNAME(init_v), NS_VNAME(start_v), ns_abi_stop, NS_VNAME(state_v), ns_abi_finalize,
};
