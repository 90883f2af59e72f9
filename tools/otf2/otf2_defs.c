/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: the OTF2 archive's definitions (see otf2_defs.h). */
#include "otf2/otf2_defs.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"

static const struct {
  const char* name;
  const char* what;
  OTF2_Type type;
} attr_defs[A_COUNT] = {
    {"eventId", "the event's id in its trace file (the low 64 bits of its eventAddr)", OTF2_TYPE_UINT64},
    {"parentId", "its parent's eventId (same trace file)", OTF2_TYPE_UINT64},
    {"bytes", "bytes of the operation (as the JSON Lines export's bytes)", OTF2_TYPE_UINT64},
    {"channel", "NCCL channel", OTF2_TYPE_INT64},
    {"peer", "peer rank", OTF2_TYPE_INT64},
    {"seq", "the collective's sequence number in its communicator", OTF2_TYPE_UINT64},
    {"incomplete", "1: never stopped; drawn to the end of its trace file", OTF2_TYPE_UINT8},
    {"gpuErrorUs", "bound of the GPU-to-CPU clock conversion, microseconds", OTF2_TYPE_DOUBLE},
};

static uint64_t intern_clean(ns_otf2_defs* d, const char* text);

/* OTF2 strings are UTF-8 text: NCCL's strings (names, functions) may hold
 * anything. Ill-formed bytes and control characters become U+FFFD. */
static char* utf8_clean(const char* text) {
  size_t n = strlen(text), at = 0;
  char* out = malloc(3 * n + 1);
  if (!out) return NULL;
  for (size_t i = 0; i < n;) {
    const unsigned char* p = (const unsigned char*)text + i;
    size_t len = *p < 0x20 || *p == 0x7F ? 0 : ns_utf8_len(p, n - i);
    if (len) {
      memcpy(out + at, p, len);
      at += len;
      i += len;
    } else {
      memcpy(out + at, "\xEF\xBF\xBD", 3);
      at += 3;
      i++;
    }
  }
  out[at] = '\0';
  return out;
}

uint64_t ns_otf2_intern(ns_otf2_defs* d, const char* raw) {
  char* text = utf8_clean(raw);
  if (!text) {
    d->failed = 1;
    return 0;
  }
  uint64_t ref = intern_clean(d, text);
  free(text);
  return ref;
}

static uint64_t intern_clean(ns_otf2_defs* d, const char* text) {
  for (size_t i = 0; i < d->nstrings; i++)
    if (strcmp(d->strings[i], text) == 0) return i;
  char** ns = realloc(d->strings, (d->nstrings + 1) * sizeof *ns);
  char* copy = strdup(text);
  if (!ns || !copy) {
    free(copy);
    if (ns) d->strings = ns;
    d->failed = 1;
    return 0;
  }
  d->strings = ns;
  ns[d->nstrings] = copy;
  return d->nstrings++;
}

uint32_t ns_otf2_region(ns_otf2_defs* d, const char* name, int gpu) {
  for (size_t i = 0; i < d->nregions; i++)
    if (d->region_gpu[i] == gpu && strcmp(d->regions[i], name) == 0) return (uint32_t)i;
  char** nr = realloc(d->regions, (d->nregions + 1) * sizeof *nr);
  if (nr) d->regions = nr;
  int* ng = nr ? realloc(d->region_gpu, (d->nregions + 1) * sizeof *ng) : NULL;
  if (ng) d->region_gpu = ng;
  char* copy = ng ? strdup(name) : NULL;
  if (!copy) {
    d->failed = 1;
    return 0;
  }
  d->regions[d->nregions] = copy;
  d->region_gpu[d->nregions] = gpu;
  return (uint32_t)d->nregions++;
}

uint64_t ns_otf2_host_node(ns_otf2_defs* d, const char* host) {
  for (size_t i = 0; i < d->nhosts; i++)
    if (strcmp(d->hosts[i], host) == 0) return i + 1; /* node 0 is the job */
  char** nh = realloc(d->hosts, (d->nhosts + 1) * sizeof *nh);
  char* copy = nh ? strdup(host) : NULL;
  if (nh) d->hosts = nh;
  if (!copy) {
    d->failed = 1;
    return 0;
  }
  d->hosts[d->nhosts++] = copy;
  return d->nhosts;
}

uint64_t ns_otf2_add_group(ns_otf2_defs* d, const char* name, OTF2_LocationGroupType type, uint64_t node,
                           uint64_t creator) {
  ns_otf2_lgroup* ng = realloc(d->groups, (d->ngroups + 1) * sizeof *ng);
  if (!ng) {
    d->failed = 1;
    return 0;
  }
  d->groups = ng;
  ng[d->ngroups] = (ns_otf2_lgroup){ns_otf2_intern(d, name), type, node, creator, 0, 0};
  return d->ngroups++;
}

uint64_t ns_otf2_add_location(ns_otf2_defs* d, const char* name, OTF2_LocationType type, uint64_t group) {
  ns_otf2_location* nl = realloc(d->locs, (d->nlocs + 1) * sizeof *nl);
  if (!nl) {
    d->failed = 1;
    return NS_OTF2_NONE;
  }
  d->locs = nl;
  uint64_t id = d->nlocs;
  nl[id] = (ns_otf2_location){ns_otf2_intern(d, name), group, 0, type, NULL};
  d->nlocs++;
  return id;
}

ns_otf2_comm* ns_otf2_comm_of(ns_otf2_defs* d, uint64_t comm_id, uint32_t nranks, const char* name) {
  for (size_t i = 0; i < d->ncomms; i++)
    if (d->comms[i].comm_id == comm_id) return &d->comms[i];
  uint32_t n = nranks;
  if (n == 0 || n > (1u << 20)) return NULL;
  ns_otf2_comm* nc = realloc(d->comms, (d->ncomms + 1) * sizeof *nc);
  if (!nc) return NULL;
  d->comms = nc;
  ns_otf2_comm* m = &nc[d->ncomms];
  m->members = malloc(n * sizeof *m->members);
  if (!m->members) return NULL;
  for (uint32_t r = 0; r < n; r++) m->members[r] = NS_OTF2_NONE;
  m->comm_id = comm_id;
  m->nranks = n;
  if (name && name[0]) /* names may repeat: the id makes them unique */
    snprintf(m->name, sizeof m->name, "%.130s (0x%" PRIx64 ")", name, comm_id);
  else snprintf(m->name, sizeof m->name, "comm 0x%" PRIx64, comm_id);
  d->ncomms++;
  return m;
}

/* Global definitions: everything the events refer to. */
int ns_otf2_write_definitions(ns_otf2_defs* d, OTF2_Archive* archive, uint64_t t_min, uint64_t t_max) {
  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(archive);
  if (!g) return -1;
  uint64_t t0 = t_min == UINT64_MAX ? 0 : t_min, len = t_max > t0 ? t_max - t0 : 0;
  OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000ull, t0, len, t0);
  uint64_t job = ns_otf2_intern(d, "ncclscope job"), machine = ns_otf2_intern(d, "machine"),
           node = ns_otf2_intern(d, "node");
  for (size_t i = 0; i < d->nhosts; i++) ns_otf2_intern(d, d->hosts[i]);
  uint64_t names[A_COUNT], whats[A_COUNT];
  for (int a = 0; a < A_COUNT; a++) {
    names[a] = ns_otf2_intern(d, attr_defs[a].name);
    whats[a] = ns_otf2_intern(d, attr_defs[a].what);
  }
  for (size_t r = 0; r < d->nregions; r++) ns_otf2_intern(d, d->regions[r]);
  for (size_t c = 0; c < d->ncomms; c++) ns_otf2_intern(d, d->comms[c].name);
  uint64_t comm_locs = ns_otf2_intern(d, "NCCL ranks");
  if (d->failed) return -1;
  for (size_t i = 0; i < d->nstrings; i++) OTF2_GlobalDefWriter_WriteString(g, (OTF2_StringRef)i, d->strings[i]);
  OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, job, machine, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  for (size_t i = 0; i < d->nhosts; i++)
    OTF2_GlobalDefWriter_WriteSystemTreeNode(g, i + 1, ns_otf2_intern(d, d->hosts[i]), node, 0);
  for (size_t i = 0; i < d->ngroups; i++)
    OTF2_GlobalDefWriter_WriteLocationGroup(g, i, d->groups[i].name, d->groups[i].type, d->groups[i].node,
                                            d->groups[i].creator);
  for (size_t i = 0; i < d->nlocs; i++)
    OTF2_GlobalDefWriter_WriteLocation(g, i, d->locs[i].name, d->locs[i].type, d->locs[i].nevents, d->locs[i].group);
  for (int a = 0; a < A_COUNT; a++) OTF2_GlobalDefWriter_WriteAttribute(g, a, names[a], whats[a], attr_defs[a].type);
  for (size_t r = 0; r < d->nregions; r++) {
    uint64_t n = ns_otf2_intern(d, d->regions[r]);
    OTF2_GlobalDefWriter_WriteRegion(g, r, n, n, 0, OTF2_REGION_ROLE_FUNCTION,
                                     d->region_gpu[r] ? OTF2_PARADIGM_CUDA : OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE,
                                     0, 0, 0);
  }
  /* The communicators: one COMM_LOCATIONS group of every member location,
   * a COMM_GROUP per communicator (its recorded ranks, in rank order). */
  uint64_t* all = malloc((d->nlocs + 1) * sizeof *all);
  uint64_t* pos = malloc((d->nlocs + 1) * sizeof *pos);
  uint64_t* members = NULL;
  size_t nall = 0;
  int rc = all && pos ? 0 : -1;
  for (size_t i = 0; !rc && i < d->nlocs; i++) pos[i] = NS_OTF2_NONE;
  for (size_t c = 0; !rc && c < d->ncomms; c++)
    for (uint32_t r = 0; r < d->comms[c].nranks; r++) {
      uint64_t l = d->comms[c].members[r];
      if (l != NS_OTF2_NONE && pos[l] == NS_OTF2_NONE) {
        pos[l] = nall;
        all[nall++] = l;
      }
    }
  if (!rc && d->ncomms) {
    OTF2_GlobalDefWriter_WriteGroup(g, 0, comm_locs, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                    OTF2_GROUP_FLAG_NONE, (uint32_t)nall, all);
    for (size_t c = 0; c < d->ncomms && !rc; c++) {
      ns_otf2_comm* m = &d->comms[c];
      free(members);
      members = malloc((m->nranks + 1) * sizeof *members);
      if (!members) {
        rc = -1;
        break;
      }
      uint32_t n = 0;
      for (uint32_t r = 0; r < m->nranks; r++)
        if (m->members[r] != NS_OTF2_NONE) members[n++] = pos[m->members[r]];
      if (n < m->nranks)
        fprintf(stderr,
                "ncclscope: note: %s: %u of its %u ranks are in the archive: its OTF2 group lists those; the root of "
                "its Broadcast/Reduce records is the NCCL rank\n",
                m->name, n, m->nranks);
      uint64_t name = ns_otf2_intern(d, m->name);
      OTF2_GlobalDefWriter_WriteGroup(g, c + 1, name, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                      OTF2_GROUP_FLAG_NONE, n, members);
      OTF2_GlobalDefWriter_WriteComm(g, c, name, c + 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
    }
  }
  free(members);
  free(all);
  free(pos);
  if (OTF2_Archive_CloseGlobalDefWriter(archive, g) != OTF2_SUCCESS) rc = -1;
  return rc;
}

void ns_otf2_defs_free(ns_otf2_defs* d) {
  for (size_t i = 0; i < d->nstrings; i++) free(d->strings[i]);
  for (size_t i = 0; i < d->nregions; i++) free(d->regions[i]);
  for (size_t i = 0; i < d->nhosts; i++) free(d->hosts[i]);
  for (size_t i = 0; i < d->ncomms; i++) free(d->comms[i].members);
  free(d->strings);
  free(d->regions);
  free(d->region_gpu);
  free(d->hosts);
  free(d->groups);
  free(d->locs);
  free(d->comms);
  memset(d, 0, sizeof *d);
}
