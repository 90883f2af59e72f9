/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: gzip through zlib, loaded at run time (dl.h). OTLP
 * sender thread only. zlib's z_stream layout and deflateInit2_ are its
 * stable ABI (zlib.h, 1.2+); windowBits 15 + 16 asks for a gzip wrapper. */
#include <stddef.h>
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
  void* lib; /* first: ns_dl_load */
  const char* (*version)(void);
  int (*init2)(z_stream_abi*, int, int, int, int, int, const char*, int);
  int (*deflate)(z_stream_abi*, int);
  int (*end)(z_stream_abi*);
  unsigned long (*bound)(z_stream_abi*, unsigned long);
};

ns_gzip* ns_gzip_open(char* why, size_t whylen) {
  static const ns_dl_sym syms[] = {{"zlibVersion", offsetof(ns_gzip, version)},
                                   {"deflateInit2_", offsetof(ns_gzip, init2)},
                                   {"deflate", offsetof(ns_gzip, deflate)},
                                   {"deflateEnd", offsetof(ns_gzip, end)},
                                   {"deflateBound", offsetof(ns_gzip, bound)}};
  return ns_dl_load("libz.so.1", sizeof(ns_gzip), syms, sizeof syms / sizeof syms[0], why, whylen);
}

void ns_gzip_close(ns_gzip* z) { ns_dl_unload(z); }

int ns_gzip_compress(ns_gzip* z, const uint8_t* in, size_t len, ns_buf* out) {
  z_stream_abi s;
  memset(&s, 0, sizeof s);
  ns_buf_reset(out);
  if (len > 0xFFFFFFFFu) return -1;
  if (z->init2(&s, 6, Z_DEFLATED_, 15 + 16, 8, Z_DEFAULT_STRATEGY_, z->version(), (int)sizeof s) != Z_OK_) return -1;
  unsigned long cap = z->bound(&s, (unsigned long)len) + 32; /* + the gzip header and trailer */
  if (ns_buf_reserve(out, cap) != 0) {
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
