/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: finding the trace files of a dump directory, the mode of
 * the files the CLI writes, and the exit codes every command shares. */
#ifndef NCCLSCOPE_TOOLS_TRACE_DIR_H
#define NCCLSCOPE_TOOLS_TRACE_DIR_H

#include <stddef.h>
#include <stdio.h>

#include "ncclscope/trace_reader.h"

typedef struct {
  char** paths; /* DIR/name, sorted by name */
  size_t n;
} ns_trace_list;

/* Lists DIR/\*.nstrace (regular files, links followed). An entry that
 * cannot be examined, is not a regular file, or is a second name of a file
 * listed already (a symbolic link to a trace of the directory, a hard link:
 * the name that is not a link is kept) is named on stderr and skipped.
 * 0 on success (possibly none found), -1 if the directory cannot be read
 * (message in err). */
int ns_trace_dir_list(const char* dir, ns_trace_list* out, char* err, size_t errlen);
/* Lists DIR/PREFIX*SUFFIX (regular files), sorted by name: the flight
 * records (flightrec-*.json) of a dump directory. As ns_trace_dir_list. */
int ns_dir_list(const char* dir, const char* prefix, const char* suffix, ns_trace_list* out, char* err,
                size_t errlen);
void ns_trace_list_free(ns_trace_list* l);

/* Exit codes of every command (docs/cli.md). */
enum {
  NS_EXIT_OK = 0,      /* done; damaged traces were recovered as far as they could be (warnings say how) */
  NS_EXIT_FAIL = 1,    /* nothing done: no readable trace, an output that cannot be written, a failed simulator */
  NS_EXIT_USAGE = 2,   /* bad arguments */
  NS_EXIT_VERDICT = 3, /* report: output written, and it found a hang or a mismatch (its verdict) */
  NS_EXIT_PARTIAL = 4, /* output written, but at least one trace file yielded nothing (unreadable, no record) */
};

/* What a reader met in one file: its stats and the first damaged ranges. */
#define NS_HEALTH_RANGES 16
typedef struct {
  ns_reader_stats st;
  ns_reader_damage d[NS_HEALTH_RANGES];
  size_t n;
} ns_file_health;
void ns_file_health_take(const ns_reader* r, ns_file_health* h);
/* Warnings on stderr, prefixed by `tool`: each damaged range (bytes, blocks
 * lost, why), duplicates dropped, blocks missing, the cut tail, a missing
 * end marker. Returns 1 when the file yielded nothing (no record and no
 * communicator), else 0. */
int ns_file_health_print(const char* tool, const char* path, const ns_file_health* h);

/* The mode of files the CLI creates: NCCLSCOPE_FILE_MODE (octal), else
 * 0640; a bad value is reported once on stderr. */
unsigned ns_cli_file_mode(void);

/* The dump-directory argument of `ncclscope CMD`, for what the option loop
 * did not take: `a` becomes *dir when none is set yet. NS_EXIT_OK, else
 * NS_EXIT_USAGE with "ncclscope CMD: ..." on stderr: an unknown option (then
 * also usage(stderr)) or a second directory. */
int ns_cli_dir_arg(const char* cmd, const char* a, const char** dir, void (*usage)(FILE*));
/* After the option loop: NS_EXIT_OK when a directory was given, else
 * NS_EXIT_USAGE with the message and usage(stderr). */
int ns_cli_dir_given(const char* cmd, const char* dir, void (*usage)(FILE*));

#endif
