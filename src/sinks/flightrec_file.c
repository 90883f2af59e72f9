/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: the flight record file (flightrec_file.h). Written
 * through util/safefile.h: an unpredictable temporary name opened with
 * O_EXCL|O_NOFOLLOW in the dump directory, then renamed, so nothing planted
 * there is followed or replaced. Nothing here fails NCCL. */
#include "sinks/flightrec_file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log/log.h"
#include "util/safefile.h"

int ns_fr_file_write(ns_fr_file* file, const ns_fr* fr, const ns_fr_dump_info* info, int dirfd, const char* dir,
                     const char* stem, unsigned mode, char* shown, size_t shownlen) {
  char name[NAME_MAX + 1], why[PATH_MAX + 200];
  snprintf(name, sizeof name, "%s", file->name[0] ? file->name : stem);
  if (!file->name[0]) strncat(name, ".json", sizeof name - strlen(name) - 1);
  snprintf(shown, shownlen, "%s/%s", dir, name);
  ns_out o;
  why[0] = 0;
  int rc = dirfd < 0 ? -1 : ns_out_open_at(&o, dirfd, name, name, mode, why, sizeof why);
  if (rc == 0) {
    if (ns_fr_dump_json(fr, info, o.f) != 0) {
      snprintf(why, sizeof why, "%s: %s", name, strerror(errno));
      ns_out_abort(&o);
      rc = -1;
    } else if (file->name[0]) {
      rc = ns_out_commit(&o, why, sizeof why);
    } else {
      rc = ns_out_commit_unique(&o, stem, ".json", info->now_ns, file->name, sizeof file->name, why, sizeof why);
      if (rc == 0)
        snprintf(shown, shownlen, "%s/%s", dir, file->name);
      else
        file->name[0] = '\0';
    }
  }
  if (rc != 0 && !file->warned) {
    file->warned = 1;
    ns_log_warn("cannot write the flight record %s (%s)", shown, why[0] ? why : "no dump directory");
  }
  return rc;
}
