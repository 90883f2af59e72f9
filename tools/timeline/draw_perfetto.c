/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: the Perfetto drawer for the timeline layout
 * (timeline_draw.h): Perfetto's native protobuf trace (a Trace message:
 * TracePackets holding TrackDescriptors and TrackEvents), for
 * ui.perfetto.dev and trace_processor. Field numbers: the public Perfetto
 * trace schema (a subset is in tests/tools/perfetto_subset.proto).
 *
 * Encoding, chosen for size (about a tenth of the Trace Event JSON):
 *  - Tracks. A process track per layout pid (ProcessDescriptor: synthetic
 *    pid, the rank's name, labels), and under it one named track per layout
 *    tid (threads, per-channel lanes, overlap tracks), ordered by the
 *    layout's sort index (sibling_order_rank). Tracks are plain named child
 *    tracks, not ThreadDescriptors: a real thread serves several ranks of
 *    its process, and a tid may belong to one process only in Perfetto.
 *    Counters get counter tracks; an async slice a track of its own.
 *  - Sequences. Every track writes its events on a packet sequence of its
 *    own, whose first packet clears the incremental state and sets the
 *    defaults: the track (so events carry no track_uuid) and a
 *    sequence-scoped incremental clock (so timestamps are deltas from the
 *    previous packet of the sequence, in ns; the clock snapshot maps it 1:1
 *    onto the trace clock). Events of one track are written mostly in time
 *    order, so most deltas take one to three bytes.
 *  - Interning. Event names, categories, annotation names and short string
 *    values are interned per sequence (InternedData in the packet that
 *    first uses them). The tables are bounded: past INTERN_MAX entries in
 *    all, every sequence starts over (SEQ_INCREMENTAL_STATE_CLEARED) at its
 *    next packet.
 *  - Slices are SLICE_BEGIN / SLICE_END pairs; sub-slices (states) between
 *    them, so that equal timestamps keep the nesting (trace_processor sorts
 *    packets by time, then by file order). Arguments become debug
 *    annotations: numbers stay numbers, "0x..." strings become pointer
 *    values (an eventAddr keeps its 64-bit per-file id; the file is the
 *    process track), nested objects become dictionaries.
 *  - Flows. A parent link is a flow id on both slices (the earlier begins
 *    it). When the parent was written before its child, an instant
 *    "parent" at the parent's start on its track carries the id.
 *
 * Memory: the track table, the interning map (bounded) and one packet
 * buffer; each packet goes to the FILE when complete. Single-threaded. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timeline/perfetto_packets.h"

/* ---- drawing ---- */

static void te_head(pf_drawer* d, track* t, unsigned type, const char* name, const char* cat) {
  ns_pb_uint(&d->te, TE_TYPE, type);
  if (cat) {
    uint64_t iid = ns_pf_intern(d, t, ID_EVENT_CATEGORIES, cat, strlen(cat));
    if (iid) ns_pb_uint(&d->te, TE_CATEGORY_IIDS, iid);
    else ns_pb_str(&d->te, 22 /* categories */, cat);
  }
  if (name) {
    uint64_t iid = ns_pf_intern(d, t, ID_EVENT_NAMES, name, strlen(name));
    if (iid) ns_pb_uint(&d->te, TE_NAME_IID, iid);
    else ns_pb_str(&d->te, 23 /* name */, name);
  }
}

static void slice_end(pf_drawer* d, track* t, uint64_t ts) {
  ns_pf_event_begin(d, t, ts);
  ns_pb_uint(&d->te, TE_TYPE, TYPE_SLICE_END);
  ns_pf_event_end(d, t, ts);
}

static void pf_process(void* self, uint32_t pid, const char* name, int64_t sort) {
  (void)sort; /* processes keep their pid order */
  ns_pf_process_track(self, pid, name);
}

static void pf_process_label(void* self, uint32_t pid, const char* label) {
  pf_drawer* d = self;
  track* t = ns_pf_process_track(d, pid, NULL);
  if (t) ns_pf_write_process(d, t, label);
}

static void pf_thread(void* self, uint32_t pid, uint32_t tid, const char* name, int64_t sort) {
  ns_pf_thread_track(self, pid, tid, name, 1, sort);
}

static void pf_slice(void* self, const ns_draw_slice* s) {
  pf_drawer* d = self;
  track* t;
  if (s->async_id) { /* a track of its own, under the process */
    track* pt = ns_pf_process_track(d, s->pid, NULL);
    t = pt ? ns_pf_new_track(d) : NULL;
    if (!t) return;
    t->parent_uuid = pt->uuid;
    t->pid = s->pid;
    ns_pf_write_named_track(d, t, s->name, 0, 0);
  } else {
    t = ns_pf_thread_track(d, s->pid, s->tid, NULL, 0, 0);
    if (!t) return;
  }
  ns_pf_event_begin(d, t, s->ts);
  te_head(d, t, TYPE_SLICE_BEGIN, s->name, s->cat);
  ns_pf_annotations(d, t, &s->args);
  if (s->flow_in) ns_pb_fixed64(&d->te, TE_FLOW_IDS, s->flow_in);
  for (uint32_t i = 0; i < s->nflows_out; i++) ns_pb_fixed64(&d->te, TE_FLOW_IDS, s->flows_out[i]);
  ns_pf_event_end(d, t, s->ts);
  for (uint32_t i = 0; i < s->nsubs; i++) {
    const ns_draw_sub* sub = &s->subs[i];
    ns_pf_event_begin(d, t, sub->ts);
    te_head(d, t, TYPE_SLICE_BEGIN, sub->name, NULL);
    ns_pf_annotations(d, t, &sub->args);
    ns_pf_event_end(d, t, sub->ts);
    slice_end(d, t, sub->ts + sub->dur);
  }
  slice_end(d, t, s->ts + s->dur);
}

static void pf_instant(void* self, const ns_draw_instant* in) {
  pf_drawer* d = self;
  track* t = in->process_scope ? ns_pf_process_track(d, in->pid, NULL) : ns_pf_thread_track(d, in->pid, in->tid, NULL, 0, 0);
  if (!t) return;
  ns_pf_event_begin(d, t, in->ts);
  te_head(d, t, TYPE_INSTANT, in->name, in->cat);
  ns_pf_annotations(d, t, &in->args);
  ns_pf_event_end(d, t, in->ts);
}

static void pf_counters(void* self, uint32_t pid, const char* name, uint64_t ts, const char* const* keys,
                        const uint64_t* values, unsigned n) {
  pf_drawer* d = self;
  track* pt = ns_pf_process_track(d, pid, NULL);
  if (!pt) return;
  for (unsigned i = 0; i < n; i++) {
    uint64_t uuid = COUNTER_UUID_BASE + ++d->next_counter_uuid;
    ns_pb* p = &d->pkt;
    ns_pb_reset(p);
    ns_pb_uint(p, PKT_SEQUENCE_ID, DESCRIPTOR_SEQ);
    ns_pb_begin(p, PKT_TRACK_DESCRIPTOR);
    ns_pb_uint(p, TD_UUID, uuid);
    ns_pb_uint(p, TD_PARENT_UUID, pt->uuid);
    char full[256];
    snprintf(full, sizeof full, "%s %s", name, keys[i]);
    ns_pb_str(p, TD_NAME, full);
    ns_pb_begin(p, TD_COUNTER);
    ns_pb_end(p);
    ns_pb_end(p);
    ns_pf_emit(d, p);
    ns_pf_event_begin(d, pt, ts);
    ns_pb_uint(&d->te, TE_TRACK_UUID, uuid);
    ns_pb_uint(&d->te, TE_TYPE, TYPE_COUNTER);
    ns_pb_int(&d->te, TE_COUNTER_VALUE, (int64_t)values[i]);
    ns_pf_event_end(d, pt, ts);
  }
}

/* A flow from a parent already written: an instant at its start carries the id. */
static void pf_flow(void* self, const ns_draw_flow* f) {
  pf_drawer* d = self;
  track* t = ns_pf_thread_track(d, f->from_pid, f->from_tid, NULL, 0, 0);
  if (!t) return;
  ns_pf_event_begin(d, t, f->from_ts);
  te_head(d, t, TYPE_INSTANT, "parent", "hierarchy");
  ns_pb_fixed64(&d->te, TE_FLOW_IDS, f->id);
  ns_pf_event_end(d, t, f->from_ts);
}

static int pf_finish(void* self) {
  pf_drawer* d = self;
  ns_pf_flush_bundle(d);
  int rc = d->failed ? -1 : 0;
  if (d->args_left_out)
    fprintf(stderr,
            "ncclscope: note: %" PRIu64
            " event(s) drawn without their arguments (over %u KiB as JSON; --format "
            "chrome keeps them)\n",
            d->args_left_out, NSJ_BUF >> 10);
  free(d->bundle);
  free(d->zbuf);
  for (size_t i = 0; i < d->ntracks; i++) free(d->tracks[i].name);
  free(d->tracks);
  ns_idmap_free(&d->by_key);
  ns_idmap_free(&d->interned);
  ns_pb_free(&d->pkt);
  ns_pb_free(&d->te);
  ns_pb_free(&d->in);
  free(d);
  return rc;
}

int ns_draw_perfetto_new(FILE* out, int compress, ns_drawer* dr) {
  pf_drawer* d = calloc(1, sizeof *d);
  if (!d) return -1;
  d->compress = compress;
  if (compress && !(d->bundle = malloc(BUNDLE_BYTES))) {
    free(d);
    return -1;
  }
  d->out = out;
  d->gen = 1;
  ns_idmap_init(&d->by_key);
  ns_idmap_init(&d->interned);
  /* d->pkt, te, in: zeroed by calloc, an empty ns_pb */
  *dr = (ns_drawer){.self = d,
                    .flows_on_slices = 1,
                    .strict_lanes = 1,
                    .process = pf_process,
                    .process_label = pf_process_label,
                    .thread = pf_thread,
                    .slice = pf_slice,
                    .instant = pf_instant,
                    .counters = pf_counters,
                    .flow = pf_flow,
                    .finish = pf_finish};
  return 0;
}
