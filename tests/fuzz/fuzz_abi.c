/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope fuzz target: arbitrary descriptors and call sequences through
 * the ncclProfiler_v1..v7 ABI (the plugin's sources are linked in).
 *
 * One input = one NCCL-like session: the first byte picks the ABI version,
 * the second how many communicators to init (1..3); then each op byte is
 * start / stop / record / mask change / finalize-one, with operands taken
 * from the following bytes. What the fuzzer may vary is what NCCL may vary:
 * descriptor bytes (numbers, codes, type bits, channel ids, pid), parents,
 * handles and contexts chosen among those the plugin returned, NULL, and
 * garbage the plugin must reject without dereferencing (a PROT_NONE page,
 * small integers, misaligned slot addresses); state ids and state args.
 * Strings are valid C strings or NULL, and NetPlugin data points to a valid
 * buffer or is NULL, as NCCL guarantees. At the end every live handle is
 * stopped and every context finalized, so the session ends and the writer
 * thread is joined (LeakSanitizer then checks for leaks at exit). The
 * plugin's dump directory of the run goes at exit.
 * Single-threaded driver; the plugin's writer thread runs alongside.
 */
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "abi/nccl_profiler.h"

extern ncclProfiler_v1_t ncclProfiler_v1;
extern ncclProfiler_v2_t ncclProfiler_v2;
extern ncclProfiler_v3_t ncclProfiler_v3;
extern ncclProfiler_v4_t ncclProfiler_v4;
extern ncclProfiler_v5_t ncclProfiler_v5;
extern ncclProfiler_v6_t ncclProfiler_v6;
extern ncclProfiler_v7_t ncclProfiler_v7;

int LLVMFuzzerInitialize(int* argc, char*** argv);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

#define MAX_HANDLES 64
#define MAX_CTX 3

typedef struct {
  const uint8_t* p;
  size_t n;
} input;

static uint8_t take(input* in) {
  if (!in->n) return 0;
  in->n--;
  return *in->p++;
}

static void takeBytes(input* in, void* out, size_t len) {
  size_t k = len < in->n ? len : in->n;
  memcpy(out, in->p, k);
  memset((uint8_t*)out + k, 0, len - k);
  in->p += k, in->n -= k;
}

static uint8_t* noAccess; /* PROT_NONE page: garbage handles point here */
static uint8_t netData[256];
static const char* const strs[] = {"AllReduce",
                                   "ncclFloat32",
                                   "RING",
                                   "SIMPLE",
                                   "",
                                   "x",
                                   ("a string much longer than the sixty-three bytes a ring entry keeps for one "
                                    "string, so it must be truncated and flagged")};
static int mask;

typedef struct {
  int version;
  void* ctx[MAX_CTX];
  int nctx;
  void* h[MAX_HANDLES];
  int nh;
} session;

static const char* pickStr(input* in) {
  uint8_t b = take(in);
  return b % 8 == 7 ? NULL : strs[b % 7];
}

static void* pickPtr(input* in, const session* s) {
  uint8_t b = take(in);
  switch (b % 8) {
    case 0: return NULL;
    case 1: return noAccess + (take(in) * 64u) % 4096u;
    case 2: return (void*)(uintptr_t)take(in);
    case 3: return s->nh ? (uint8_t*)s->h[take(in) % s->nh] + 1 + take(in) % 63 : NULL; /* misaligned */
    default: return s->nh ? s->h[take(in) % s->nh] : NULL;
  }
}

static void* pickCtx(input* in, const session* s) {
  uint8_t b = take(in);
  if (b % 16 == 15) return noAccess;
  if (b % 16 == 14) return NULL;
  return s->nctx ? s->ctx[b % s->nctx] : NULL;
}

static uint64_t pickType(input* in) {
  uint8_t b = take(in);
  if (b >= 240) return (uint64_t)take(in) << (b % 57); /* anything, several bits, unknown bits */
  return 1ull << (b % 16);                             /* 1 << 15: KernelPhase (v7) */
}

/* One ABI version's calls behind one signature (fuzz_abi_version.h). */
typedef struct {
  void (*start)(session* s, input* in, void* ctx, void** out);
  void (*stop)(void* h);
  void (*record)(void* h, int state, void* args);
  ncclResult_t (*init)(void** ctx, uint64_t id, const char* name, int nranks, int rank);
  void (*finalize)(void* ctx);
} fuzz_api;

#define FV 1
#define FV_NAME 1
#define FV_STRS 0
#define FV_NET 0
#define FV_API 0
#define FV_CE 0
#define FV_INIT 1
#include "fuzz_abi_version.h"
#define FV 2
#define FV_NAME 1
#define FV_STRS 1
#define FV_NET 0
#define FV_API 0
#define FV_CE 0
#define FV_INIT 1
#include "fuzz_abi_version.h"
#define FV 3
#define FV_NAME 1
#define FV_STRS 1
#define FV_NET 1
#define FV_API 0
#define FV_CE 0
#define FV_INIT 1
#include "fuzz_abi_version.h"
#define FV 4
#define FV_NAME 0
#define FV_STRS 1
#define FV_NET 1
#define FV_API 0
#define FV_CE 0
#define FV_INIT 4
#include "fuzz_abi_version.h"
#define FV 5
#define FV_NAME 0
#define FV_STRS 1
#define FV_NET 1
#define FV_API 1
#define FV_CE 0
#define FV_INIT 5
#include "fuzz_abi_version.h"
#define FV 6
#define FV_NAME 0
#define FV_STRS 1
#define FV_NET 1
#define FV_API 1
#define FV_CE 1
#define FV_INIT 5
#include "fuzz_abi_version.h"
#define FV 7
#define FV_NAME 0
#define FV_STRS 1
#define FV_NET 1
#define FV_API 1
#define FV_CE 1
#define FV_V7 1
#define FV_INIT 5
#include "fuzz_abi_version.h"

static const fuzz_api* const apis[] = {NULL,         &fuzz_api_v1, &fuzz_api_v2, &fuzz_api_v3,
                                       &fuzz_api_v4, &fuzz_api_v5, &fuzz_api_v6, &fuzz_api_v7};

static void opStart(session* s, input* in) {
  void* ctx = pickCtx(in, s);
  void* h = NULL;
  apis[s->version]->start(s, in, ctx, &h);
  if (h) {
    if (s->nh < MAX_HANDLES) s->h[s->nh++] = h;
    else apis[s->version]->stop(h);
  }
}

static void opStop(session* s, input* in) {
  uint8_t b = take(in);
  if (b % 8 == 7 || !s->nh) {
    apis[s->version]->stop(pickPtr(in, s)); /* NULL or garbage, or (rarely) a second stop */
    return;
  }
  int i = b % s->nh;
  apis[s->version]->stop(s->h[i]);
  s->h[i] = s->h[--s->nh];
}

static void opRecord(session* s, input* in) {
  void* h = pickPtr(in, s);
  int state = take(in);
  if (state >= 64) state = (int)(int8_t)take(in) * 1000; /* unknown, negative */
  union {
    ncclProfilerEventStateArgs_v6_t v6;
    ncclProfilerEventStateArgs_v4_t v4;
    ncclProfilerEventStateArgs_v1_t v1;
    uint8_t raw[32];
  } a;
  takeBytes(in, &a, sizeof a);
  void* args = take(in) % 4 ? &a : NULL;
  apis[s->version]->record(h, state, args);
}

static ncclResult_t callInit(int v, void** ctx, uint64_t id, input* in) {
  const char* name = pickStr(in);
  int nranks = 1 + take(in) % 8, rank = take(in) % nranks;
  return apis[v]->init(ctx, id, name, nranks, rank);
}

static char dump_dir[64];

static int remove_entry(const char* path, const struct stat* st, int flag, struct FTW* at) {
  (void)st, (void)flag, (void)at;
  remove(path);
  return 0;
}

/* A minute of fuzzing leaves hundreds of MB of traces: they go with the
 * process (every session ended: no plugin thread writes there any more). */
static void remove_dump_dir(void) { nftw(dump_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc, (void)argv;
  snprintf(dump_dir, sizeof dump_dir, "/tmp/ncclscope-fuzz-%d", (int)getpid());
  setenv("NCCLSCOPE_DUMP_DIR", dump_dir, 1);
  atexit(remove_dump_dir);
  setenv("NCCLSCOPE_NO_CUDA", "1", 1);
  setenv("NCCLSCOPE_EVENT_MASK", "all", 1);
  setenv("NCCLSCOPE_RING_KB", "16", 1);
  setenv("NCCLSCOPE_SLAB_EVENTS", "64", 1);
  noAccess = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  for (size_t i = 0; i < sizeof netData; i++) netData[i] = (uint8_t)(i * 37);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  input in = {data, size};
  session s;
  memset(&s, 0, sizeof s);
  s.version = 1 + take(&in) % 7;
  int want = 1 + take(&in) % MAX_CTX;
  for (int i = 0; i < want; i++) {
    void* ctx = NULL;
    if (callInit(s.version, &ctx, 0xf000 + (uint64_t)i, &in) == ncclSuccess && ctx) s.ctx[s.nctx++] = ctx;
  }
  for (int ops = 0; in.n && ops < 512; ops++) {
    switch (take(&in) % 8) {
      case 0: case 1: case 2: opStart(&s, &in); break;
      case 3: case 4: opStop(&s, &in); break;
      case 5: case 6: opRecord(&s, &in); break;
      default: __atomic_store_n(&mask, (int)take(&in) << 8 | take(&in), __ATOMIC_RELAXED); break;
    }
  }
  /* NCCL stops everything before finalizing. */
  while (s.nh) apis[s.version]->stop(s.h[--s.nh]);
  for (int i = 0; i < s.nctx; i++) apis[s.version]->finalize(s.ctx[i]);
  return 0;
}
