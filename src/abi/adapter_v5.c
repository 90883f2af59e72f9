/* ncclscope: ncclProfiler_v5 adapter (NCCL 2.28: uint64_t type, API events, new init argument order). NCCL's v5 descriptor -> ns_start_args. */
#include "abi/adapter.h"

static ncclResult_t init_v5(void** context, uint64_t commId, int* eActivationMask, const char* commName,
                            int nNodes, int nranks, int rank, ncclDebugLogger_t logfn) {
  ns_init_args a = {5, eActivationMask, commId, commName, nNodes, nranks, rank, logfn};
  return ns_runtime_init(context, &a);
}

static ncclResult_t start_v5(void* context, void** eHandle, ncclProfilerEventDescr_v5_t* d) {
  *eHandle = NULL;
  ns_start_args a;
  ns_args_clear(&a, d->type, d->parentObj);
  switch (d->type) {
    case ncclProfileGroupApi:
      a.num[0] = ns_i(d->groupApi.groupDepth);
      a.num[1] = d->groupApi.graphCaptured;
      break;
    case ncclProfileCollApi:
      a.num[0] = d->collApi.count;
      a.num[1] = ns_i(d->collApi.root);
      a.num[2] = ns_u(d->collApi.stream);
      a.num[3] = d->collApi.graphCaptured;
      a.str[0] = d->collApi.func;
      a.str[1] = d->collApi.datatype;
      break;
    case ncclProfileP2pApi:
      a.num[0] = d->p2pApi.count;
      a.num[1] = ns_u(d->p2pApi.stream);
      a.num[2] = d->p2pApi.graphCaptured;
      a.str[0] = d->p2pApi.func;
      a.str[1] = d->p2pApi.datatype;
      break;
    case ncclProfileKernelLaunch:
      a.num[0] = ns_u(d->kernelLaunch.stream);
      break;
    case ncclProfileColl:
      a.num[0] = d->coll.seqNumber;
      a.num[1] = d->coll.count;
      a.num[2] = ns_i(d->coll.root);
      a.num[3] = ns_u(d->coll.sendBuff);
      a.num[4] = ns_u(d->coll.recvBuff);
      a.num[5] = d->coll.nChannels;
      a.num[6] = d->coll.nWarps;
      a.group = d->coll.parentGroup;
      a.group_num = 7;
      a.str[0] = d->coll.func;
      a.str[1] = d->coll.datatype;
      a.str[2] = d->coll.algo;
      a.str[3] = d->coll.proto;
      a.expect = d->coll.nChannels;
      break;
    case ncclProfileP2p:
      a.num[0] = ns_i(d->p2p.peer);
      a.num[1] = d->p2p.count;
      a.num[2] = ns_u(d->p2p.buff);
      a.num[3] = d->p2p.nChannels;
      a.group = d->p2p.parentGroup;
      a.group_num = 4;
      a.str[0] = d->p2p.func;
      a.str[1] = d->p2p.datatype;
      a.expect = d->p2p.nChannels;
      break;
    case ncclProfileProxyOp:
      a.pid = d->proxyOp.pid;
      a.num[0] = d->proxyOp.channelId;
      a.num[1] = ns_i(d->proxyOp.peer);
      a.num[2] = ns_i(d->proxyOp.nSteps);
      a.num[3] = ns_i(d->proxyOp.chunkSize);
      a.num[4] = ns_i(d->proxyOp.isSend);
      a.num[5] = ns_i(d->proxyOp.pid);
      break;
    case ncclProfileProxyStep:
      a.num[0] = ns_i(d->proxyStep.step);
      break;
    case ncclProfileKernelCh:
      a.num[0] = d->kernelCh.channelId;
      a.num[1] = d->kernelCh.pTimer;
      break;
    case ncclProfileNetPlugin:
      ns_args_net_plugin(&a, d->netPlugin.id, d->netPlugin.data);
      break;
    default:
      break; /* Group, ProxyCtrl: no fields */
  }
  *eHandle = ns_capture_start(context, &a);
  return ncclSuccess;
}

static ncclResult_t stop_v5(void* eHandle) {
  ns_capture_stop(eHandle);
  return ncclSuccess;
}

static ncclResult_t state_v5(void* eHandle, ncclProfilerEventState_t eState,
                             ncclProfilerEventStateArgs_v5_t* eStateArgs) {
  uint64_t arg = 0;
  int has = ns_state_arg_v4((int)eState, eStateArgs, &arg);
  ns_capture_state(eHandle, (int)eState, has, arg);
  return ncclSuccess;
}

static ncclResult_t finalize_v5(void* context) { return ns_runtime_finalize(context); }

NS_EXPORT ncclProfiler_v5_t ncclProfiler_v5 = {
    NS_PLUGIN_NAME, init_v5, start_v5, stop_v5, state_v5, finalize_v5,
};
