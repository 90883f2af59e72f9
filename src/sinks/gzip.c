/* ncclscope sinks: gzip through zlib, loaded at run time (dl.h). OTLP
 * sender thread only. zlib's z_stream layout and deflateInit2_ are its
 * stable ABI (zlib.h, 1.2+); windowBits 15 + 16 asks for a gzip wrapper. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sinks/dl.h"

typedef struct {
  const uint8_t* next_in;
  unsigned avail_in;
  unsigned long total_in;
  uint8_t* next_out;
  unsigned avail_out;
  unsigned long total_out;
  const char* msg;
  void* state;
  void* zalloc;
  void* zfree;
  void* opaque;
  int data_type;
  unsigned long adler, reserved;
} z_stream_abi;

enum { Z_OK_ = 0, Z_STREAM_END_ = 1, Z_FINISH_ = 4, Z_DEFLATED_ = 8, Z_DEFAULT_STRATEGY_ = 0 };

struct ns_gzip {
  void* lib;
  const char* (*version)(void);
  int (*init2)(z_stream_abi*, int, int, int, int, int, const char*, int);
  int (*deflate)(z_stream_abi*, int);
  int (*end)(z_stream_abi*);
  unsigned long (*bound)(z_stream_abi*, unsigned long);
};

ns_gzip* ns_gzip_open(char* why, size_t whylen) {
  void* lib = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(why, whylen, "libz.so.1 cannot be loaded (%s)", dlerror());
    return NULL;
  }
  ns_gzip* z = calloc(1, sizeof *z);
  if (!z) {
    dlclose(lib);
    snprintf(why, whylen, "out of memory");
    return NULL;
  }
  z->lib = lib;
  *(void**)&z->version = dlsym(lib, "zlibVersion");
  *(void**)&z->init2 = dlsym(lib, "deflateInit2_");
  *(void**)&z->deflate = dlsym(lib, "deflate");
  *(void**)&z->end = dlsym(lib, "deflateEnd");
  *(void**)&z->bound = dlsym(lib, "deflateBound");
  if (!z->version || !z->init2 || !z->deflate || !z->end || !z->bound) {
    snprintf(why, whylen, "libz.so.1 lacks deflateInit2_, deflate, deflateEnd or deflateBound");
    ns_gzip_close(z);
    return NULL;
  }
  return z;
}

void ns_gzip_close(ns_gzip* z) {
  if (!z) return;
  dlclose(z->lib);
  free(z);
}

int ns_gzip_compress(ns_gzip* z, const uint8_t* in, size_t len, ns_sbuf* out) {
  z_stream_abi s;
  memset(&s, 0, sizeof s);
  ns_sbuf_reset(out);
  if (len > 0xFFFFFFFFu) return -1;
  if (z->init2(&s, 6, Z_DEFLATED_, 15 + 16, 8, Z_DEFAULT_STRATEGY_, z->version(), (int)sizeof s) != Z_OK_) return -1;
  unsigned long cap = z->bound(&s, (unsigned long)len) + 32; /* + the gzip header and trailer */
  if (ns_sbuf_reserve(out, cap) != 0) {
    z->end(&s);
    return -1;
  }
  s.next_in = in;
  s.avail_in = (unsigned)len;
  s.next_out = out->data;
  s.avail_out = (unsigned)cap;
  int rc = z->deflate(&s, Z_FINISH_);
  out->len = rc == Z_STREAM_END_ ? (size_t)s.total_out : 0;
  z->end(&s);
  return rc == Z_STREAM_END_ ? 0 : -1;
}
