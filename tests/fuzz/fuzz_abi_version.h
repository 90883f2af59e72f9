/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope fuzz: the per-version half of fuzz_abi.c, written once.
 *
 * fuzz_abi.c includes this once per ABI version, after defining FV (1..7)
 * and what that version's descriptors have, as src/abi/adapter_template.h
 * is instantiated:
 *   FV_NAME  Coll/P2p `name` strings (v1..v3)
 *   FV_STRS  Coll/P2p func/datatype/algo/proto strings (v2+; v1 has codes)
 *   FV_NET   NetPlugin events (v3+)
 *   FV_API   GroupApi/CollApi/P2pApi (graphCaptured) and Coll/P2p parentGroup (v5+)
 *   FV_CE    copy-engine events (v6+)
 *   FV_V7    Coll kernelVariant, KernelPhase phaseName (v7; its userTags are fuzzer bytes)
 *   FV_INIT  1: init(ctx, mask) (v1..v3); 4: v4's init; 5: v5's, v6's and v7's
 * and gets fuzz_api_vN: that version's calls behind one signature. The
 * descriptor is fuzzer bytes with what NCCL guarantees patched in: valid C
 * strings or NULL, bools 0 or 1, NetPlugin data a valid buffer or NULL. */
#ifndef FV
#error "define FV and the FV_* features before including fuzz_abi_version.h"
#endif

#define FV_CAT_(a, b) a##b
#define FV_CAT(a, b) FV_CAT_(a, b)
#define FV_FN(x) FV_CAT(x, FV)
#define FV_PROFILER FV_CAT(ncclProfiler_v, FV)
#define FV_DESCR FV_CAT(FV_CAT(ncclProfilerEventDescr_v, FV), _t)
#ifndef FV_V7
#define FV_V7 0
#endif

static void FV_FN(start_v)(session* s, input* in, void* ctx, void** out) {
  FV_DESCR d;
  takeBytes(in, &d, sizeof d);
  d.type = pickType(in); /* v1..v4: a uint8_t, so high bits are cut as NCCL would */
  d.parentObj = pickPtr(in, s);
  switch (d.type) {
#if FV_API
    case ncclProfileGroupApi: d.groupApi.graphCaptured = take(in) & 1; break;
    case ncclProfileCollApi:
      d.collApi.func = pickStr(in), d.collApi.datatype = pickStr(in), d.collApi.graphCaptured = take(in) & 1;
      break;
    case ncclProfileP2pApi:
      d.p2pApi.func = pickStr(in), d.p2pApi.datatype = pickStr(in), d.p2pApi.graphCaptured = take(in) & 1;
      break;
#endif
#if FV_CE
    case ncclProfileCeSync: d.ceCollSync.isComplete = take(in) & 1; break;
    case ncclProfileCeBatch: d.ceCollBatch.useIntraSync = take(in) & 1; break;
    case ncclProfileCeColl:
      d.ceColl.func = pickStr(in), d.ceColl.datatype = pickStr(in), d.ceColl.syncStrategy = pickStr(in);
      d.ceColl.intraBatchSync = take(in) & 1;
      break;
#endif
    case ncclProfileColl:
#if FV_NAME
      d.coll.name = pickStr(in);
#endif
#if FV_STRS
      d.coll.func = pickStr(in), d.coll.datatype = pickStr(in), d.coll.algo = pickStr(in), d.coll.proto = pickStr(in);
#endif
#if FV_API
      d.coll.parentGroup = pickPtr(in, s);
#endif
#if FV_V7
      d.coll.kernelVariant = pickStr(in), d.coll.isSymColl = take(in) & 1;
#endif
      break;
#if FV_V7
    case ncclProfileKernelPhase: d.kernelPhase.phaseName = pickStr(in); break;
#endif
    case ncclProfileP2p:
#if FV_NAME
      d.p2p.name = pickStr(in);
#endif
#if FV_STRS
      d.p2p.func = pickStr(in), d.p2p.datatype = pickStr(in);
#endif
#if FV_API
      d.p2p.parentGroup = pickPtr(in, s);
#endif
      break;
    case ncclProfileProxyOp:
      if (take(in) % 2) d.proxyOp.pid = getpid();
      break;
#if FV_NET
    case ncclProfileNetPlugin: d.netPlugin.data = take(in) % 4 ? netData : NULL; break;
#endif
    default: break;
  }
  FV_PROFILER.startEvent(ctx, out, &d);
}

static void FV_FN(stop_v)(void* h) { FV_PROFILER.stopEvent(h); }

static void FV_FN(record_v)(void* h, int state, void* args) {
  FV_PROFILER.recordEventState(h, (ncclProfilerEventState_t)state, args);
}

static ncclResult_t FV_FN(init_v)(void** ctx, uint64_t id, const char* name, int nranks, int rank) {
#if FV_INIT == 1
  (void)id, (void)name, (void)nranks, (void)rank;
  return FV_PROFILER.init(ctx, &mask);
#elif FV_INIT == 4
  return FV_PROFILER.init(ctx, &mask, name, id, 1, nranks, rank, NULL);
#else
  return FV_PROFILER.init(ctx, id, &mask, name, 1, nranks, rank, NULL);
#endif
}

static void FV_FN(finalize_v)(void* ctx) { FV_PROFILER.finalize(ctx); }

static const fuzz_api FV_FN(fuzz_api_v) = {FV_FN(start_v), FV_FN(stop_v), FV_FN(record_v), FV_FN(init_v),
                                           FV_FN(finalize_v)};

#undef FV_CAT_
#undef FV_CAT
#undef FV_FN
#undef FV_PROFILER
#undef FV_DESCR
#undef FV
#undef FV_NAME
#undef FV_STRS
#undef FV_NET
#undef FV_API
#undef FV_CE
#undef FV_V7
#undef FV_INIT
