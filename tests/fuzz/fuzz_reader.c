/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope fuzz target: the streaming trace reader on arbitrary bytes.
 *
 * The input is written to an anonymous in-memory file (memfd) and read back
 * through /proc/self/fd with ns_reader_open/ns_reader_next until the end,
 * touching every string id a record names and the final stats, as the
 * exporter does. The reader must never crash, read out of bounds, loop, or
 * leak, whatever the bytes; a bad block only ends the stream.
 * Single-threaded.
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ncclscope/trace_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int fd = memfd_create("fuzz-trace", MFD_CLOEXEC);
  if (fd < 0) return 0;
  size_t off = 0;
  while (off < size) {
    ssize_t k = write(fd, data + off, size - off);
    if (k <= 0) break;
    off += (size_t)k;
  }
  char path[64], err[256];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  ns_reader* r = ns_reader_open(path, err, sizeof err);
  if (r) {
    ns_item it;
    uint64_t sink = 0;
    while (ns_reader_next(r, &it)) {
      if (it.kind == NS_ITEM_RECORD) {
        for (int i = 0; i < NS_REC_STRS; i++) {
          const char* s = ns_reader_string(r, it.record->str[i]);
          if (s) sink += (uint64_t)s[0];
        }
        sink += it.record->ts ^ it.record->id;
      }
    }
    const ns_process_info* p = ns_reader_process(r);
    if (p) sink += p->pid;
    ns_reader_stats st;
    ns_reader_get_stats(r, &st);
    sink += st.records;
    ns_reader_close(r);
    if (sink == 42) fputc('\n', stderr); /* keep the reads */
  }
  close(fd);
  return 0;
}
