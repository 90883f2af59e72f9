/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: exporters and subcommands. */
#ifndef NCCLSCOPE_TOOLS_EXPORT_H
#define NCCLSCOPE_TOOLS_EXPORT_H

#include <stdint.h>
#include <stdio.h>

#include "export/export_walk.h"

/* An output format: make() fills *sink and returns its state (NULL on
 * failure); the state's first member is an `ns_walk*` that the caller sets
 * once the walker exists. finish() writes any trailer and frees the state
 * (0 on success). */
typedef struct ns_format ns_format;
typedef struct ns_dir_output ns_dir_output;
struct ns_format {
  const char* name;
  void* (*make)(FILE* out, ns_sink* sink);
  int (*finish)(void* state);
};

/* A format whose output is a directory (an OTF2 archive): its make is
 * NULL, and ns_export_dir uses its ns_dir_output instead. It is written
 * into a temporary directory next to the named one and renamed into place
 * at the end, as files are (a failed export leaves nothing behind).
 * reserve: checks the named path (one that exists is refused unless
 * force) and names the temporary directory; an NS_EXIT_* code, with a
 * message in err. make: NULL after saying why on stderr. commit: replaces
 * the named path by tmp; 0, or -1 with a message in err. discard: removes
 * tmp and what is in it. */
struct ns_dir_output {
  int (*reserve)(const char* path, int force, char* tmp, size_t tmplen, char* err, size_t errlen);
  void* (*make)(const char* tmp, ns_sink* sink);
  int (*commit)(const char* tmp, const char* path, int force, char* err, size_t errlen);
  void (*discard)(const char* tmp);
};

extern const ns_format ns_format_jsonl;
extern const ns_format ns_format_chrome;
extern const ns_format ns_format_perfetto;
extern const ns_format ns_format_perfetto_plain; /* perfetto without compression */
#ifdef NCCLSCOPE_HAVE_OTF2
extern const ns_format ns_format_otf2; /* an OTF2 archive directory (export_otf2.c) */
extern const ns_dir_output ns_otf2_dir;
#endif

/* Totals over the files of one export, for messages and the demo's summary. */
typedef struct {
  int files_found;
  int files_read; /* opened (possibly damaged) */
  int files_damaged;
  uint64_t events;
  uint64_t incomplete; /* written with "incomplete":true (never stopped, or evicted by the open cap) */
  uint64_t events_by_type[NS_EV_COUNT];
  uint64_t ranks; /* COMM_INIT records: one per (process, communicator) */
} ns_export_totals;

/* Export settings; zero means the default. */
typedef struct {
  size_t max_open; /* most events open at once per file (NS_OPEN_MAX) */
  ns_export_filter filter; /* what the output keeps (export_walk.h) */
  int force; /* directory outputs: replace one that exists */
} ns_export_options;

/* How a format that writes a directory writes it; NULL for file formats. */
const ns_dir_output* ns_format_dir_output(const ns_format* fmt);
/* Exports every *.nstrace of dir into out_path ("-" = stdout). Extra
 * observers (may be NULL) see every item and event; opts may be NULL.
 * Messages go to stderr. Returns 0 if at least one file was readable, 1
 * otherwise (export_dir.c). */
int ns_export_dir(const char* dir, const ns_format* fmt, const char* out_path, const ns_export_ext* extra,
                  const ns_export_options* opts, ns_export_totals* totals);

int ns_cmd_export(int argc, char** argv);
int ns_cmd_demo(int argc, char** argv);

#endif
