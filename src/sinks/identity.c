/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: the identity labels every output puts on every series
 * (outputs.h, ns_mident). The names are fixed; the values are as found, each
 * output escapes them its way. Writer thread. */
#include "sinks/outputs.h"

unsigned ns_mident(const ns_metrics* m, const ns_mprocess* p, uint32_t res, const char* key[NS_M_IDENT],
                   const char* val[NS_M_IDENT]) {
  unsigned n = 0;
  if (p->job_id && *p->job_id) key[n] = "job_id", val[n++] = p->job_id;
  key[n] = "host", val[n++] = p->host ? p->host : "";
  const ns_mres* r = res ? ns_metrics_res(m, res) : NULL;
  if (r && r->name[0]) key[n] = "comm_name", val[n++] = r->name;
  return n;
}
