/* ncclscope CLI: finding the trace files of a dump directory. */
#ifndef NCCLSCOPE_TOOLS_TRACE_DIR_H
#define NCCLSCOPE_TOOLS_TRACE_DIR_H

#include <stddef.h>

typedef struct {
  char** paths; /* DIR/name, sorted by name */
  size_t n;
} ns_trace_list;

/* Lists DIR/\*.nstrace (regular files). 0 on success (possibly none found),
 * -1 if the directory cannot be read (message in err). */
int ns_trace_dir_list(const char* dir, ns_trace_list* out, char* err, size_t errlen);
void ns_trace_list_free(ns_trace_list* l);

#endif
