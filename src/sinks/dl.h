/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: libraries loaded at run time for the OTLP sender. The
 * plugin links only libc, pthread, libdl and libm: libcurl (libcurl.so.4)
 * and zlib (libz.so.1) are dlopen'ed by the sender thread when OTLP is on,
 * and closed when it stops. A missing library is the caller's one warning:
 * without libcurl there is no OTLP, without zlib no gzip. */
#ifndef NCCLSCOPE_SINKS_DL_H
#define NCCLSCOPE_SINKS_DL_H

#include <stddef.h>
#include <stdint.h>

#include "sinks/sink_buf.h"

/* ---- dl.c: loading a library and its symbols ---- */
typedef struct {
  const char* name;
  size_t offset; /* of the function pointer in the handle struct */
} ns_dl_sym;
/* dlopens soname, callocs a handle struct of `size` bytes whose first member
 * is the library (void*), and stores each symbol's address at its offset.
 * NULL (and why: the library missing, or the symbols it lacks) when it cannot;
 * nothing stays loaded then. ns_dl_unload undoes it. */
void* ns_dl_load(const char* soname, size_t size, const ns_dl_sym* syms, size_t nsyms, char* why, size_t whylen);
void ns_dl_unload(void* handle);

/* ---- http.c: one POST through libcurl ---- */
typedef struct ns_http ns_http;
/* Loads libcurl; NULL (and why) when it cannot. */
ns_http* ns_http_open(char* why, size_t whylen);
void ns_http_close(ns_http* h);
/* POSTs body to url with the headers ("Key: value"); gives up after timeout_ms
 * or soon after *abort becomes non-zero (libcurl's progress callback reads it,
 * relaxed, several times a second). Returns the HTTP status (>= 100), or -1
 * with the transport error in why. */
long ns_http_post(ns_http* h, const char* url, const char* const* headers, unsigned nheaders, const uint8_t* body,
                  size_t len, uint32_t timeout_ms, _Atomic int* abort, char* why, size_t whylen);

/* ---- gzip.c: zlib's deflate with a gzip wrapper ---- */
typedef struct ns_gzip ns_gzip;
ns_gzip* ns_gzip_open(char* why, size_t whylen);
void ns_gzip_close(ns_gzip* z);
/* in -> out (reset first) as a gzip member. 0, or -1. */
int ns_gzip_compress(ns_gzip* z, const uint8_t* in, size_t len, ns_buf* out);

#endif
