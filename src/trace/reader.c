/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: streaming reader of one trace file (API: include/ncclscope/trace_reader.h).
 *
 * Used by the CLI only (single-threaded). The reader holds the current block
 * payload (one buffer, grown to the largest block seen), the string table
 * and the CRC of every block read (duplicates); nothing else grows with the
 * trace. Every length read from the file is
 * checked against what is left of the file before it is used, and every
 * block's CRC is checked before its payload is decoded. After a damaged
 * block the reader looks for the next "NSB1" whose header is plausible and
 * whose payload's CRC matches, and goes on from there (resynchronisation):
 * each block is self-contained apart from the string ids, so every intact
 * block after the damage is read. A block whose sequence number and payload
 * CRC were already read, however far back, is a duplicate and is dropped
 * (seen_blocks.h: 4 bytes a block). Damage with no valid block after it is
 * the cut tail (a killed writer's torn last write).
 */
#include "ncclscope/trace_reader.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace/codec.h"
#include "trace/props_blocks.h"
#include "trace/seen_blocks.h"
#include "trace/seq_runs.h"
#include "util/idmap.h"
#include "util/safefile.h"

/* A block larger than this is taken as corruption rather than allocated:
 * the writer flushes at least once a second, so real blocks are far smaller. */
#define NS_READER_MAX_PAYLOAD (256u << 20)

struct ns_reader {
  FILE* f;
  uint64_t offset; /* file offset of the next block header */
  uint64_t next_seq;
  int have_seq;
  int done;

  uint8_t* payload;
  size_t payload_cap;
  ns_event_decoder dec;
  int in_events;

  ns_idmap strings; /* string id -> its NUL-terminated copy (char*) */

  int have_process;
  ns_process_info process;
  ns_thread_info thread;
  ns_comm_info comm;
  ns_props_info props;
  ns_record record;
  ns_reader_stats stats;
  uint64_t block_at, block_seq; /* the block the current item came from */
  /* Sequence bookkeeping. The header is not under the CRC, so a damaged seq
   * must not discard good data: a block is dropped only when it repeats a
   * block read before, anywhere in the file (seq and CRC). Every other block
   * is accounted under a seq, and the seqs none was accounted under are the
   * missing blocks, whatever the order the blocks came in. A block that
   * jumps forward is accounted once the next block is read: when that one
   * resumes the old sequence, the jump was a damaged seq and the block is
   * accounted under the seq it skipped. */
  ns_seen_blocks seen;
  ns_seq_runs accounted;
  uint64_t jump_from, jump_seq; /* the pending forward jump: next_seq before it, the block's own seq */
  int jump_pending;
  ns_reader_damage damage[NS_READER_MAX_DAMAGE];
  size_t ndamage;
};

/* ---- CRC-32: the writer's (slicing by 8, src/trace/crc32.c) ---- */

uint32_t ns_reader_crc32(const void* data, size_t n) { return ns_crc32(data, n); }

/* ---- string table ---- */

/* Stores a copy of s[0..n) under id; a later definition of the same id replaces it. */
static int strings_put(ns_reader* r, uint32_t id, const char* s, size_t n) {
  if (id == 0) return 0; /* 0 means NULL and is never defined */
  char* copy = malloc(n + 1);
  if (!copy) return -1;
  memcpy(copy, s, n);
  copy[n] = '\0';
  int inserted;
  uint64_t* slot = ns_idmap_put(&r->strings, id, &inserted);
  if (!slot) {
    free(copy);
    return -1;
  }
  if (!inserted) free((char*)(uintptr_t)*slot);
  *slot = (uint64_t)(uintptr_t)copy;
  return 0;
}

const char* ns_reader_string(const ns_reader* r, uint32_t id) {
  if (id == 0) return NULL;
  const uint64_t* slot = ns_idmap_get(&r->strings, id);
  return slot ? (const char*)(uintptr_t)*slot : "";
}

/* ---- open / close ---- */

static int block_at(ns_reader* r, uint64_t at, ns_block_header* h, int with_payload, const char** why);
static int find_block(ns_reader* r, uint64_t from, ns_block_header* h, uint64_t* found);
static void note_damage(ns_reader* r, uint64_t at, uint64_t len, uint64_t seq_next, int tail, const char* why);

/* What is wrong with a file header, NULL when nothing: its magic, its major
 * version or its size (a longer header is a newer minor's). */
static const char* header_problem(const ns_file_header* h, uint64_t file_size) {
  if (memcmp(h->magic, NS_TRACE_MAGIC, sizeof NS_TRACE_MAGIC) != 0) return "bad magic";
  if (h->version_major != NS_TRACE_VERSION_MAJOR) return "major version";
  if (h->header_size < sizeof *h || (uint64_t)h->header_size > file_size) return "header size";
  return NULL;
}

/* A major version one bit from ours is taken as a flipped bit when blocks of
 * ours follow; any other (2, 4, 6 ...: the next majors) is another format. */
static int one_bit_from_major(uint32_t major) {
  uint32_t x = major ^ NS_TRACE_VERSION_MAJOR;
  return x && !(x & (x - 1));
}

/* The header is damaged (or says a size no block follows): the blocks are
 * found by their own framing and CRCs from the end of a version-1 header on,
 * the header's bytes (and any before the first valid block) count as one
 * damaged range. 1, or 0 when no valid block is in the file (not a trace). */
static int recover_header(ns_reader* r, const char* why) {
  ns_block_header h;
  const char* bad;
  uint64_t first = sizeof(ns_file_header);
  if (!block_at(r, first, &h, 1, &bad) && !find_block(r, first + 1, &h, &first)) return 0;
  char what[48];
  snprintf(what, sizeof what, "file header: %s", why);
  note_damage(r, 0, first, h.seq, 0, what);
  r->stats.header_damaged = 1;
  r->stats.bytes_ok = 0;
  r->stats.bytes_skipped += first;
  r->offset = first;
  return 1;
}

ns_reader* ns_reader_open(const char* path, char* err, size_t errlen) {
  FILE* f = ns_fopen_read(path); /* a path of any length: a dump directory may be near PATH_MAX */
  if (!f) {
    snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    return NULL;
  }
  struct stat st;
  if (fstat(fileno(f), &st) != 0) {
    snprintf(err, errlen, "%s: cannot stat: %s", path, strerror(errno));
    fclose(f);
    return NULL;
  }
  ns_file_header h;
  if (fread(&h, 1, sizeof h, f) != sizeof h) {
    snprintf(err, errlen, "%s: not an ncclscope trace (shorter than the %zu-byte header)", path, sizeof h);
    fclose(f);
    return NULL;
  }
  const char* bad = header_problem(&h, (uint64_t)st.st_size);
  if (bad && !strcmp(bad, "major version") && !one_bit_from_major(h.version_major)) {
    snprintf(err, errlen,
             "%s: trace format version %" PRIu32 ".%" PRIu32 " is not supported (this ncclscope reads version %d.x)",
             path, h.version_major, h.version_minor, NS_TRACE_VERSION_MAJOR);
    fclose(f);
    return NULL;
  }
  ns_reader* r = calloc(1, sizeof *r);
  if (!r) {
    snprintf(err, errlen, "%s: out of memory", path);
    fclose(f);
    return NULL;
  }
  r->f = f;
  r->stats.file_size = (uint64_t)st.st_size;
  /* A header size other than ours is a newer minor's longer header only
   * when a valid block starts there and none at the end of ours. */
  ns_block_header bh;
  const char* why;
  if (!bad && h.header_size != sizeof h &&
      (block_at(r, sizeof h, &bh, 1, &why) || !block_at(r, h.header_size, &bh, 1, &why)))
    bad = "header size";
  if (!bad) {
    r->offset = h.header_size; /* a newer minor may have a longer header: skip the rest */
    r->stats.bytes_ok = h.header_size;
    return r;
  }
  if (recover_header(r, bad)) return r;
  if (!strcmp(bad, "bad magic"))
    snprintf(err, errlen, "%s: not an ncclscope trace (bad magic)", path);
  else if (!strcmp(bad, "major version"))
    snprintf(err, errlen,
             "%s: trace format version %" PRIu32 ".%" PRIu32 " is not supported (this ncclscope reads version %d.x)",
             path, h.version_major, h.version_minor, NS_TRACE_VERSION_MAJOR);
  else
    snprintf(err, errlen, "%s: corrupt file header (header size %" PRIu32 ") and no valid block", path,
             h.header_size);
  ns_reader_close(r);
  return NULL;
}

void ns_reader_close(ns_reader* r) {
  if (!r) return;
  uint64_t id, str;
  for (size_t pos = 0; ns_idmap_next(&r->strings, &pos, &id, &str);) free((char*)(uintptr_t)str);
  ns_idmap_free(&r->strings);
  ns_seen_blocks_free(&r->seen);
  ns_seq_runs_free(&r->accounted);
  free(r->payload);
  if (r->f) fclose(r->f);
  free(r);
}

const ns_process_info* ns_reader_process(const ns_reader* r) { return r->have_process ? &r->process : NULL; }

void ns_reader_get_stats(const ns_reader* r, ns_reader_stats* out) { *out = r->stats; }

size_t ns_reader_damage_list(const ns_reader* r, const ns_reader_damage** out) {
  *out = r->damage;
  return r->ndamage;
}

void ns_reader_block_pos(const ns_reader* r, uint64_t* offset, uint64_t* seq) {
  *offset = r->block_at;
  *seq = r->block_seq;
}

/* Records the damaged range [at, at + len); seq_next: the seq of the valid block after it (0: none). */
static void note_damage(ns_reader* r, uint64_t at, uint64_t len, uint64_t seq_next, int tail, const char* why) {
  r->stats.damaged++;
  if (r->ndamage == NS_READER_MAX_DAMAGE) return;
  ns_reader_damage* d = &r->damage[r->ndamage++];
  d->offset = at;
  d->length = len;
  d->seq_first = r->have_seq ? r->next_seq : 0;
  d->seq_next = seq_next;
  d->tail = tail;
  d->kept = 0;
  snprintf(d->why, sizeof d->why, "%s", why);
}

/* Ends the stream at `at`: no valid block follows, everything from there on is cut. */
static int stop_at(ns_reader* r, uint64_t at, const char* why) {
  r->done = 1;
  r->in_events = 0;
  r->stats.bytes_cut = r->stats.file_size > at ? r->stats.file_size - at : 0;
  if (r->stats.bytes_cut) note_damage(r, at, r->stats.bytes_cut, 0, 1, why);
  snprintf(r->stats.stop_reason, sizeof r->stats.stop_reason, "%s at offset %" PRIu64, why, at);
  return 0;
}


static int load_strings(ns_reader* r, const uint8_t* p, size_t n) {
  ns_strings_decoder d;
  if (ns_strings_open(&d, p, n)) return -1;
  uint32_t id;
  const char* s;
  size_t len;
  int rc;
  while ((rc = ns_strings_next(&d, &id, &s, &len)) == 1)
    if (strings_put(r, id, s, len)) return -1;
  return rc;
}

/* ---- blocks ---- */

/* Reads the payload of a block whose header is *h at `at` into r->payload. 1, or 0 with *why. */
static int read_payload(ns_reader* r, uint64_t at, const ns_block_header* h, const char** why) {
  if (h->payload_size > r->payload_cap) {
    size_t cap = r->payload_cap ? r->payload_cap : 65536;
    while (cap < h->payload_size) cap *= 2;
    uint8_t* np = realloc(r->payload, cap);
    if (!np) return *why = "out of memory", 0;
    r->payload = np;
    r->payload_cap = cap;
  }
  if (h->payload_size && (fseeko(r->f, (off_t)(at + sizeof *h), SEEK_SET) != 0 ||
                          fread(r->payload, 1, h->payload_size, r->f) != h->payload_size))
    return *why = "read error", 0;
  if (ns_reader_crc32(r->payload, h->payload_size) != h->payload_crc32) return *why = "CRC mismatch", 0;
  return 1;
}

/* Checks the block at `at`: its header fits in the file and is plausible,
 * and (with_payload) its payload, read into r->payload, matches its CRC.
 * 1, or 0 with the reason in *why. */
static int block_at(ns_reader* r, uint64_t at, ns_block_header* h, int with_payload, const char** why) {
  uint64_t left = r->stats.file_size > at ? r->stats.file_size - at : 0;
  if (left < sizeof *h) return *why = "partial block header", 0;
  if (fseeko(r->f, (off_t)at, SEEK_SET) != 0 || fread(h, 1, sizeof *h, r->f) != sizeof *h)
    return *why = "read error", 0;
  if (h->magic != NS_BLOCK_MAGIC) return *why = "bad block magic", 0;
  if (h->payload_size > left - sizeof *h) return *why = "partial block", 0;
  if (h->payload_size > NS_READER_MAX_PAYLOAD) return *why = "implausible block size", 0;
  return with_payload ? read_payload(r, at, h, why) : 1;
}

/* Resynchronisation: the first valid block (payload CRC checked, read into
 * r->payload) at or after `from`. 1 with *h and *found, or 0 when none. */
static int find_block(ns_reader* r, uint64_t from, ns_block_header* h, uint64_t* found) {
  static const uint8_t magic[4] = {'N', 'S', 'B', '1'}; /* NS_BLOCK_MAGIC, little-endian */
  uint8_t buf[65536];
  uint64_t pos = from;
  while (pos + sizeof *h <= r->stats.file_size) {
    uint64_t left = r->stats.file_size - pos;
    size_t want = left < sizeof buf ? (size_t)left : sizeof buf;
    if (fseeko(r->f, (off_t)pos, SEEK_SET) != 0) return 0;
    size_t got = fread(buf, 1, want, r->f);
    if (got < sizeof magic) return 0;
    for (size_t i = 0; i + sizeof magic <= got; i++) {
      const uint8_t* m = memchr(buf + i, magic[0], got - sizeof magic + 1 - i);
      if (!m) break;
      i = (size_t)(m - buf);
      if (memcmp(m, magic, sizeof magic) != 0) continue;
      const char* why;
      if (block_at(r, pos + i, h, 1, &why)) {
        *found = pos + i;
        return 1;
      }
    }
    if (got < want) return 0;
    pos += got - (sizeof magic - 1); /* a magic across the chunk boundary is seen in the next one */
  }
  return 0;
}

static int is_duplicate(const ns_reader* r, const ns_block_header* h) {
  return ns_seen_blocks_has(&r->seen, h->seq, h->payload_crc32);
}

/* Out of memory: that block is not recognised if it comes again (its copy is
 * then read twice, as before duplicates were detected). */
static void remember(ns_reader* r, const ns_block_header* h) {
  (void)ns_seen_blocks_add(&r->seen, h->seq, h->payload_crc32);
}

/* Out of memory: that seq is not accounted, and counts as missing. */
static void account(ns_reader* r, uint64_t seq) {
  (void)ns_seq_runs_add(&r->accounted, seq);
  r->stats.seq_gaps = r->accounted.missing;
}

/* The pending forward jump, if any, accounted under its own seq (no block
 * after it said otherwise). */
static void settle_jump(ns_reader* r) {
  if (r->jump_pending) account(r, r->jump_seq);
  r->jump_pending = 0;
}

/* Accounts the block; see the struct for why a jump forward waits. */
static void account_seq(ns_reader* r, const ns_block_header* h) {
  if (!r->have_seq) {
    r->have_seq = 1;
    r->next_seq = h->seq + 1;
    account(r, h->seq);
    return;
  }
  if (r->jump_pending && h->seq == r->jump_from + 1) {
    /* The block before had a damaged seq: it was jump_from, and the sequence goes on from there. */
    r->jump_seq = r->jump_from;
    r->next_seq = r->jump_from + 1;
  }
  settle_jump(r);
  if (h->seq > r->next_seq) {
    r->jump_pending = 1;
    r->jump_from = r->next_seq;
    r->jump_seq = h->seq;
  } else {
    account(r, h->seq); /* lower and not a duplicate: a damaged seq or a block out of order; its data is kept */
  }
  if (h->seq >= r->next_seq) r->next_seq = h->seq + 1;
}

/* Reads the next new valid block into r->payload, resynchronising after
 * damage and dropping duplicates. 1: read; 0: the stream ended. */
static int read_block(ns_reader* r, ns_block_header* h) {
  for (;;) {
    uint64_t at = r->offset;
    if (at >= r->stats.file_size) {
      r->done = 1;
      settle_jump(r);
      return 0;
    }
    const char* why;
    if (!block_at(r, at, h, 1, &why)) {
      uint64_t next;
      if (!find_block(r, at + 1, h, &next)) {
        settle_jump(r);
        return stop_at(r, at, why);
      }
      note_damage(r, at, next - at, h->seq, 0, why);
      r->stats.bytes_skipped += next - at;
      at = r->offset = next;
    }
    uint64_t size = sizeof *h + h->payload_size;
    r->offset = at + size;
    if (is_duplicate(r, h)) {
      r->stats.blocks_duplicate++;
      r->stats.bytes_duplicate += size;
      continue;
    }
    account_seq(r, h);
    remember(r, h);
    r->block_at = at;
    r->block_seq = h->seq;
    r->stats.bytes_ok += size;
    r->stats.blocks++;
    return 1;
  }
}

/* Records the damage of the block the current item came from, whose CRC
 * matched (a writer bug or a hand-made block, not a torn write): `kept`,
 * every record of it was read all the same; else the rest of it is skipped
 * rather than guessed at. */
static void note_block_damage(ns_reader* r, int kept, const char* why) {
  uint64_t size = r->offset - r->block_at;
  if (kept) {
    r->stats.damaged_kept++;
  } else {
    r->stats.bytes_ok -= size;
    r->stats.bytes_skipped += size;
  }
  r->stats.damaged++;
  if (r->ndamage < NS_READER_MAX_DAMAGE) {
    ns_reader_damage* d = &r->damage[r->ndamage++];
    d->offset = r->block_at;
    d->length = size;
    d->seq_first = r->block_seq;
    d->seq_next = kept ? r->block_seq : r->block_seq + 1;
    d->tail = 0;
    d->kept = kept;
    snprintf(d->why, sizeof d->why, "%s", why);
  }
  r->in_events = 0;
}

static void malformed(ns_reader* r, const char* why) { note_block_damage(r, 0, why); }

int ns_reader_scan(const char* path, ns_trace_scan* out, char* err, size_t errlen) {
  memset(out, 0, sizeof *out);
  ns_reader* r = ns_reader_open(path, err, errlen);
  if (!r) return -1;
  uint64_t finis = 0;
  ns_block_header h;
  for (;;) {
    uint64_t at = r->offset;
    if (at >= r->stats.file_size) break;
    const char* why;
    int ok = block_at(r, at, &h, 0, &why);
    if (ok && h.kind == NS_BLOCK_COUNTERS) ok = read_payload(r, at, &h, &why);
    if (!ok && !find_block(r, at + 1, &h, &at)) break;
    r->offset = at + sizeof h + h.payload_size;
    if (ns_seq_runs_has(&r->accounted, h.seq)) continue; /* a duplicate, wherever its original is */
    (void)ns_seq_runs_add(&r->accounted, h.seq);
    if (h.kind == NS_BLOCK_COUNTERS) {
      static const uint8_t no_payload[1];
      const uint8_t* p = r->payload ? r->payload : no_payload;
      if (ns_props_numeric(p, h.payload_size ? p + h.payload_size : p, &r->props) >= 0) {
        out->has_counters = 1;
        out->counters = r->props;
        out->finis_before_counters = finis;
      }
    } else if (h.kind == NS_BLOCK_COMM_FINI) {
      finis++;
    }
    out->blocks++;
  }
  ns_reader_close(r);
  return 0;
}

int ns_reader_next(ns_reader* r, ns_item* item) {
  memset(item, 0, sizeof *item);
  for (;;) {
    if (r->in_events) {
      int rc = ns_events_next(&r->dec, &r->record);
      if (rc == 1) {
        r->stats.records++;
        item->kind = NS_ITEM_RECORD;
        item->record = &r->record;
        return 1;
      }
      r->in_events = 0;
      if (rc < 0) {
        malformed(r, "malformed EVENTS block");
      } else if (ns_events_miscounted(&r->dec)) {
        char why[sizeof r->damage[0].why];
        snprintf(why, sizeof why, "EVENTS record count %" PRIu64 " for %" PRIu64 " records", r->dec.count,
                 r->dec.decoded);
        note_block_damage(r, 1, why);
      }
    }
    if (r->done) return 0;
    ns_block_header h;
    if (!read_block(r, &h)) return 0;
    /* An empty payload may leave r->payload NULL: NULL + 0 is still undefined in C. */
    static const uint8_t no_payload[1];
    const uint8_t* p = r->payload ? r->payload : no_payload;
    const uint8_t* end = h.payload_size ? p + h.payload_size : p;
    const char* bad = NULL; /* what is wrong with the block; NULL: nothing */
    int out = 0;            /* item holds what the block brought */
    switch (h.kind) {
      case NS_BLOCK_PROCESS:
        r->have_process = 1;
        if (ns_props_process(p, end, &r->process) < 0) bad = "malformed PROCESS block";
        else item->kind = NS_ITEM_PROCESS, item->process = &r->process, out = 1;
        break;
      case NS_BLOCK_STRINGS:
        if (load_strings(r, p, h.payload_size) < 0) bad = "malformed STRINGS block";
        break;
      case NS_BLOCK_THREAD:
        if (ns_props_thread(p, end, &r->thread) < 0) bad = "malformed THREAD block";
        else item->kind = NS_ITEM_THREAD, item->thread = &r->thread, out = 1;
        break;
      case NS_BLOCK_COMM_INIT:
        if (ns_props_comm_init(p, end, &r->comm) < 0) bad = "malformed COMM_INIT block";
        else r->stats.comm_inits++, item->kind = NS_ITEM_COMM_INIT, item->comm = &r->comm, out = 1;
        break;
      case NS_BLOCK_EVENTS:
      case NS_BLOCK_EVENTS13:
        if ((h.kind == NS_BLOCK_EVENTS ? ns_events_open : ns_events13_open)(&r->dec, p, h.payload_size) < 0)
          bad = "malformed EVENTS block";
        else r->in_events = 1;
        break;
      case NS_BLOCK_COMM_FINI:
      case NS_BLOCK_COUNTERS:
      case NS_BLOCK_CLOCKFIT:
      case NS_BLOCK_ANCHOR:
      case NS_BLOCK_DETAIL:
        if (ns_props_numeric(p, end, &r->props) < 0) {
          bad = "malformed props block";
        } else if (h.kind == NS_BLOCK_ANCHOR && (!r->props.has[NS_P_TS] || !r->props.has[NS_P_REALTIME_OFFSET_NS])) {
          bad = "ANCHOR block without its ts or offset";
        } else if (h.kind == NS_BLOCK_DETAIL && (!r->props.has[NS_P_TS] || !r->props.has[NS_P_DETAIL_FULL])) {
          bad = "DETAIL block without its ts or level";
        } else {
          item->kind = h.kind == NS_BLOCK_COMM_FINI  ? NS_ITEM_COMM_FINI
                       : h.kind == NS_BLOCK_COUNTERS ? NS_ITEM_COUNTERS
                       : h.kind == NS_BLOCK_CLOCKFIT ? NS_ITEM_CLOCKFIT
                       : h.kind == NS_BLOCK_DETAIL   ? NS_ITEM_DETAIL
                                                     : NS_ITEM_ANCHOR;
          item->props = &r->props;
          out = 1;
        }
        break;
      case NS_BLOCK_END:
        /* props since format 1.0's writer said how it ended; an empty END is a finalize */
        if (ns_props_numeric(p, end, &r->props) < 0) {
          bad = "malformed END block";
          break;
        }
        r->stats.clean_end = 1;
        r->stats.end_how = r->props.has[NS_P_END_HOW] ? (unsigned)r->props.u[NS_P_END_HOW] : NS_END_FINALIZE;
        r->stats.end_signal = r->props.has[NS_P_END_SIGNAL] ? (int)r->props.u[NS_P_END_SIGNAL] : 0;
        item->kind = NS_ITEM_END;
        item->props = &r->props;
        out = 1;
        break;
      default:
        break; /* a newer minor's block kind: skipped */
    }
    if (bad) malformed(r, bad);
    else if (out) return 1;
  }
}
