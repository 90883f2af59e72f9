/* ncclscope: ncclProfiler_v2 adapter (NCCL 2.24: strings for func/dtype/algo/proto). NCCL's v2 descriptor -> ns_start_args. */
#include "abi/adapter.h"

static ncclResult_t init_v2(void** context, int* eActivationMask) {
  ns_init_args a = {2, eActivationMask, 0, NULL, -1, -1, -1, NULL};
  return ns_runtime_init(context, &a);
}

static ncclResult_t start_v2(void* context, void** eHandle, ncclProfilerEventDescr_v2_t* d) {
  *eHandle = NULL;
  ns_start_args a;
  ns_args_clear(&a, d->type, d->parentObj);
  switch (d->type) {
    case ncclProfileColl:
      a.num[0] = d->coll.seqNumber;
      a.num[1] = d->coll.count;
      a.num[2] = ns_i(d->coll.root);
      a.num[3] = ns_u(d->coll.sendBuff);
      a.num[4] = ns_u(d->coll.recvBuff);
      a.num[5] = d->coll.nMaxChannels;
      a.num[6] = d->coll.nWarps;
      a.str[0] = d->coll.func;
      a.str[1] = d->coll.datatype;
      a.str[2] = d->coll.algo;
      a.str[3] = d->coll.proto;
      break;
    case ncclProfileP2p:
      a.num[0] = ns_i(d->p2p.peer);
      a.num[1] = d->p2p.count;
      a.num[2] = ns_u(d->p2p.buff);
      a.str[0] = d->p2p.func;
      a.str[1] = d->p2p.datatype;
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
    default:
      break;
  }
  *eHandle = ns_capture_start(context, &a);
  return ncclSuccess;
}

static ncclResult_t stop_v2(void* eHandle) {
  ns_capture_stop(eHandle);
  return ncclSuccess;
}

static ncclResult_t state_v2(void* eHandle, ncclProfilerEventState_t eState,
                             ncclProfilerEventStateArgs_v2_t* eStateArgs) {
  uint64_t arg = 0;
  int has = ns_state_arg_v1((int)eState, eStateArgs, &arg);
  ns_capture_state(eHandle, (int)eState, has, arg);
  return ncclSuccess;
}

static ncclResult_t finalize_v2(void* context) { return ns_runtime_finalize(context); }

NS_EXPORT ncclProfiler_v2_t ncclProfiler_v2 = {
    NS_PLUGIN_NAME, init_v2, start_v2, stop_v2, state_v2, finalize_v2,
};
