/* ncclscope: ncclProfiler_v1 adapter (NCCL 2.23: numeric func/dtype/algo/proto, uint8_t type). NCCL's v1 descriptor -> ns_start_args. */
#include "abi/adapter.h"

static ncclResult_t init_v1(void** context, int* eActivationMask) {
  ns_init_args a = {1, eActivationMask, 0, NULL, -1, -1, -1, NULL};
  return ns_runtime_init(context, &a);
}

static ncclResult_t start_v1(void* context, void** eHandle, ncclProfilerEventDescr_v1_t* d) {
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
      a.str[0] = ns_v1_func_name(d->coll.func);
      a.str[1] = ns_v1_dtype_name(d->coll.datatype);
      a.str[2] = ns_v1_algo_name(d->coll.algo);
      a.str[3] = ns_v1_proto_name(d->coll.proto);
      break;
    case ncclProfileP2p:
      a.num[0] = ns_i(d->p2p.peer);
      a.num[1] = d->p2p.count;
      a.num[2] = ns_u(d->p2p.buff);
      a.str[0] = ns_v1_func_name(d->p2p.func);
      a.str[1] = ns_v1_dtype_name(d->p2p.datatype);
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
      break; /* Group, ProxyCtrl: no fields; other bits: not sent by a v1 NCCL */
  }
  *eHandle = ns_capture_start(context, &a);
  return ncclSuccess;
}

static ncclResult_t stop_v1(void* eHandle) {
  ns_capture_stop(eHandle);
  return ncclSuccess;
}

static ncclResult_t state_v1(void* eHandle, ncclProfilerEventState_t eState,
                             ncclProfilerEventStateArgs_v1_t* eStateArgs) {
  uint64_t arg = 0;
  int has = ns_state_arg_v1((int)eState, eStateArgs, &arg);
  ns_capture_state(eHandle, (int)eState, has, arg);
  return ncclSuccess;
}

static ncclResult_t finalize_v1(void* context) { return ns_runtime_finalize(context); }

NS_EXPORT ncclProfiler_v1_t ncclProfiler_v1 = {
    NS_PLUGIN_NAME, init_v1, start_v1, stop_v1, state_v1, finalize_v1,
};
