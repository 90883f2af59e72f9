/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: loading a library and its symbols at run time (dl.h).
 * OTLP sender thread only. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sinks/dl.h"

void* ns_dl_load(const char* soname, size_t size, const ns_dl_sym* syms, size_t nsyms, char* why, size_t whylen) {
  void* lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(why, whylen, "%s cannot be loaded (%s)", soname, dlerror());
    return NULL;
  }
  char* h = calloc(1, size);
  if (!h) {
    snprintf(why, whylen, "out of memory");
    goto close_lib;
  }
  memcpy(h, &lib, sizeof lib);
  for (size_t i = 0; i < nsyms; i++) {
    void* f = dlsym(lib, syms[i].name);
    if (!f) {
      snprintf(why, whylen, "%s lacks %s", soname, syms[i].name);
      goto free_handle;
    }
    /* POSIX: a void* from dlsym converts to a function pointer of the same size */
    memcpy(h + syms[i].offset, &f, sizeof f);
  }
  return h;
free_handle:
  free(h);
close_lib:
  dlclose(lib);
  return NULL;
}

void ns_dl_unload(void* handle) {
  if (!handle) return;
  void* lib;
  memcpy(&lib, handle, sizeof lib);
  dlclose(lib);
  free(handle);
}
