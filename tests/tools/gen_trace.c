/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope tests: writes synthetic traces into a directory.
 * usage: gen_trace DIR [NPROC [TRUNCATE_BYTES_OF_LAST_FILE]]   the standard run
 *        gen_trace --case NAME DIR [N]                          a special run (trace_builder.h) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_builder.h"

int main(int argc, char** argv) {
  if (argc >= 4 && strcmp(argv[1], "--case") == 0) {
    uint64_t n = argc > 4 ? strtoull(argv[4], NULL, 10) : 0;
    if (tb_write_special(argv[3], argv[2], n)) {
      fprintf(stderr, "gen_trace: cannot write case %s into %s\n", argv[2], argv[3]);
      return 1;
    }
    return 0;
  }
  if (argc < 2 || argv[1][0] == '-') {
    fprintf(stderr, "usage: gen_trace DIR [NPROC [TRUNCATE]] | gen_trace --case NAME DIR [N]\n");
    return 2;
  }
  int nproc = argc > 2 ? atoi(argv[2]) : 2;
  size_t cut = argc > 3 ? (size_t)strtoull(argv[3], NULL, 10) : 0;
  if (tb_write_standard_run(argv[1], nproc, cut)) {
    fprintf(stderr, "gen_trace: cannot write into %s\n", argv[1]);
    return 1;
  }
  return 0;
}
