/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: the definitions of the OTF2 archive that export_otf2.c
 * writes (strings, system tree, location groups, locations, regions,
 * attributes, communicators), collected while its events are written and
 * written once at the end as its global definitions. Names are UTF-8 as
 * OTF2 wants them (ill-formed bytes and control characters: U+FFFD).
 * Single-threaded. */
#ifndef NCCLSCOPE_TOOLS_OTF2_DEFS_H
#define NCCLSCOPE_TOOLS_OTF2_DEFS_H

#include <otf2/otf2.h>
#include <stddef.h>
#include <stdint.h>

#include "export/export_walk.h"

#define NS_OTF2_NONE UINT64_MAX

/* The attributes of an Enter record (attribute ref = its value). */
enum { A_EVENT_ID, A_PARENT_ID, A_BYTES, A_CHANNEL, A_PEER, A_SEQ, A_INCOMPLETE, A_GPU_ERROR_US, A_COUNT };

typedef struct {
  uint64_t name, group, nevents;
  OTF2_LocationType type;
  OTF2_EvtWriter* w;
} ns_otf2_location;

typedef struct {
  uint64_t name;
  OTF2_LocationGroupType type;
  uint64_t node, creator;
  uint64_t base_name;       /* PROCESS: "host:pid" */
  unsigned file_of_process; /* PROCESS: 1 for its first trace file, 2 for the next, ... */
} ns_otf2_lgroup;

typedef struct {
  uint64_t comm_id;
  uint32_t nranks;
  char name[160];
  uint64_t* members; /* location per rank, NS_OTF2_NONE unknown */
} ns_otf2_comm;

typedef struct {
  char** strings;
  size_t nstrings;
  char** regions;
  int* region_gpu;
  size_t nregions;
  char** hosts;
  size_t nhosts; /* system tree node i + 1; node 0 is the job */
  ns_otf2_lgroup* groups;
  size_t ngroups;
  ns_otf2_location* locs;
  size_t nlocs;
  ns_otf2_comm* comms;
  size_t ncomms;
  int failed; /* out of memory: the archive is incomplete */
} ns_otf2_defs;

/* Each returns the definition's ref, adding it when new (0 when out of
 * memory, with failed set). */
uint64_t ns_otf2_intern(ns_otf2_defs* d, const char* text);
uint32_t ns_otf2_region(ns_otf2_defs* d, const char* name, int gpu);
uint64_t ns_otf2_host_node(ns_otf2_defs* d, const char* host);
uint64_t ns_otf2_add_group(ns_otf2_defs* d, const char* name, OTF2_LocationGroupType type, uint64_t node,
                           uint64_t creator);
/* A new location (NS_OTF2_NONE when out of memory); its event writer is the caller's to set. */
uint64_t ns_otf2_add_location(ns_otf2_defs* d, const char* name, OTF2_LocationType type, uint64_t group);
/* The communicator with that id (members all NS_OTF2_NONE when new); NULL for a
 * size of 0 or above 2^20, or out of memory. name: NULL or its commName. */
ns_otf2_comm* ns_otf2_comm_of(ns_otf2_defs* d, uint64_t comm_id, uint32_t nranks, const char* name);
/* Writes every definition, the clock properties for events in [t_min, t_max]; 0, or -1. */
int ns_otf2_write_definitions(ns_otf2_defs* d, OTF2_Archive* archive, uint64_t t_min, uint64_t t_max);
void ns_otf2_defs_free(ns_otf2_defs* d);

#endif
