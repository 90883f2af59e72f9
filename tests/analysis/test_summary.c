/* SPDX-License-Identifier: Apache-2.0 */
/* The summary's collectives table: one row per (communicator, function,
 * size, type, algorithm, protocol) over every rank; per-rank call counts;
 * each rank's first min(5, calls/4) calls are warm-up and left out of the
 * time and bandwidth figures; communicator ids are strings in the JSON.
 *
 * Two ranks (two analyses, as `ncclscope report` has one per file) of one
 * communicator, 8 AllReduce of 1 MiB each, the first two 100x slower (a
 * warm-up), and the same on a second communicator with another protocol;
 * durations are enqueue times (Coll start..stop), known exactly. The same
 * summary built one analysis at a time (ns_summary_add), each destroyed at
 * once, reads the same. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "synth_stream.h"

#define CALLS 8
#define BYTES (1u << 20)

static ns_analysis* rank_analysis(int rank, uint64_t comm_id, const char* proto, int calls) {
  synth_stream s = {0};
  uint64_t t = 1000000;
  for (int i = 0; i < calls; i++) {
    uint64_t dur = i < 2 ? 100000000 : 1000000; /* 100 ms warm-up, then 1 ms */
    synth_ev* e = synth_push(&s, 0, NS_REC_START, NS_EV_COLL, t, (uint64_t)i + 1, 0);
    e->r.num[NS_COLL_SEQ] = (uint64_t)i;
    e->r.num[NS_COLL_COUNT] = BYTES / 4;
    e->r.num[NS_COLL_CHANNELS] = 2;
    e->r.str[NS_COLL_FUNC] = synth_str("AllReduce");
    e->r.str[NS_COLL_DTYPE] = synth_str("ncclFloat32");
    e->r.str[NS_COLL_ALGO] = synth_str("RING");
    e->r.str[NS_COLL_PROTO] = synth_str(proto);
    synth_push(&s, 0, NS_REC_STOP, NS_EV_COLL, t + dur, (uint64_t)i + 1, 0);
    t += dur + 1000000;
  }
  ns_analysis_config cfg;
  ns_analysis_config_default(&cfg);
  ns_analysis_config_offline(&cfg);
  cfg.string = synth_string;
  ns_analysis* a = ns_analysis_create(&cfg);
  ns_comm_info ci = ns_comm_info_make(1, comm_id, rank, 2);
  ns_analysis_comm(a, &ci);
  for (size_t i = 0; i < s.n; i++) ns_analysis_record(a, &s.v[i].r);
  ns_analysis_flush(a);
  synth_free(&s);
  return a;
}

static double jnum(const char* obj, const char* key) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\":", key);
  const char* p = strstr(obj, pat);
  return p ? strtod(p + strlen(pat), NULL) : -1;
}

int main(void) {
  const uint64_t big = 0xF234567890ABCDEFull; /* above 2^53: exact only as a string */
  ns_analysis* a[4] = {rank_analysis(0, big, "SIMPLE", CALLS), rank_analysis(1, big, "SIMPLE", CALLS - 1),
                       rank_analysis(0, 0x77, "LL", CALLS), rank_analysis(1, 0x77, "LL", CALLS)};
  char* json = NULL;
  size_t len = 0;
  FILE* f = open_memstream(&json, &len);
  ns_summary_options opt = {.max_links = 10};
  CHECK_U64(ns_analysis_summary_json(a, 4, &opt, f), 0);
  fclose(f);
  char* text = NULL;
  f = open_memstream(&text, &len);
  CHECK_U64(ns_analysis_summary_text(a, 4, &opt, f), 0);
  fclose(f);
  printf("%s\n%s", json, text);

  /* the big communicator: one row, two ranks, 8 and 7 calls */
  const char* row = strstr(json, "\"commId\":\"0xf234567890abcdef\"");
  CHECK_TRUE(row != NULL);
  if (row) {
    const char* obj = row;
    while (obj > json && *obj != '{') obj--;
    CHECK_U64(jnum(obj, "ranks"), 2);
    CHECK_U64(jnum(obj, "calls"), 2 * CALLS - 1);
    CHECK_U64(jnum(obj, "callsPerRankMin"), CALLS - 1);
    CHECK_U64(jnum(obj, "callsPerRankMax"), CALLS);
    CHECK_U64(jnum(obj, "warmupCalls"), 2 + 1); /* min(5, 8/4) + min(5, 7/4) */
    CHECK_U64(jnum(obj, "timedCalls"), 2 * CALLS - 1 - 3);
    /* rank 1 keeps one of its two slow calls (7/4 = 1 warm-up): 1 of 12 timed calls is slow */
    CHECK_NEAR(jnum(obj, "timeUs"), (11 * 1000.0 + 100000.0) / 12, 1e-6);
    CHECK_NEAR(jnum(obj, "p50Us"), 1000.0, 10.0);
    CHECK_NEAR(jnum(obj, "busbwP50GBs"), BYTES / 1e6, 0.02); /* 1 MiB per ms, busbw factor 1 for 2 ranks */
    CHECK_TRUE(strstr(obj, "\"algo\":\"RING\",\"proto\":\"SIMPLE\"") != NULL);
  }
  /* the other: its own row (other communicator and protocol), warm-up gone entirely */
  row = strstr(json, "\"commId\":\"0x77\"");
  CHECK_TRUE(row != NULL);
  if (row) {
    const char* obj = row;
    while (obj > json && *obj != '{') obj--;
    CHECK_U64(jnum(obj, "warmupCalls"), 4);
    CHECK_NEAR(jnum(obj, "timeUs"), 1000.0, 1e-6);
    CHECK_NEAR(jnum(obj, "busbwGBs"), BYTES / 1e6, 1e-5);
    CHECK_TRUE(strstr(obj, "\"proto\":\"LL\"") != NULL);
  }
  /* narrow: one block per communicator; the slow row's 12 timed calls give a p50, too few for a p99 */
  CHECK_TRUE(strstr(text, "# communicator 0xf234567890abcdef, 2 ranks") != NULL);
  CHECK_TRUE(strstr(text, "# communicator 0x0000000000000077, 2 ranks") != NULL);
  const char* slow = strstr(text, "9250.00");
  CHECK_TRUE(slow != NULL);
  if (slow) {
    double p50 = 0;
    char p99[16] = "";
    unsigned long long timed = 0;
    CHECK_U64(sscanf(slow, "9250.00 %*f %*f %lf %15s %llu", &p50, p99, &timed), 3);
    CHECK_NEAR(p50, 1000.0, 10.0);
    CHECK_TRUE(strcmp(p99, "-") == 0);
    CHECK_U64(timed, 12);
  }
  const char* links = strstr(text, "\n# slowest links");
  for (const char* l = text; l && *l && (!links || l < links); l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
    CHECK_TRUE(strcspn(l, "\n") <= 120); /* the table reads in a terminal */
  /* wide: calls per rank differ */
  char* wide = NULL;
  f = open_memstream(&wide, &len);
  opt.wide = 1;
  CHECK_U64(ns_analysis_summary_text(a, 4, &opt, f), 0);
  fclose(f);
  CHECK_TRUE(strstr(wide, "0xf234567890abcdef") != NULL);
  CHECK_TRUE(strstr(wide, "7..8") != NULL);
  for (int i = 0; i < 4; i++) ns_analysis_destroy(a[i]);

  /* the same ranks added to a summary one at a time, each destroyed before the next is made (as `report`
   * reads its files): the summary keeps nothing of them, and says what the checks above found */
  ns_summary* sum = ns_summary_new(&opt);
  CHECK_TRUE(sum != NULL);
  static const struct {
    int rank;
    int big;
    const char* proto;
    int calls;
  } ranks[4] = {{0, 1, "SIMPLE", CALLS}, {1, 1, "SIMPLE", CALLS - 1}, {0, 0, "LL", CALLS}, {1, 0, "LL", CALLS}};
  for (int i = 0; sum && i < 4; i++) {
    ns_analysis* one = rank_analysis(ranks[i].rank, ranks[i].big ? big : 0x77, ranks[i].proto, ranks[i].calls);
    CHECK_U64(ns_summary_add(sum, one), 0);
    ns_analysis_destroy(one);
  }
  char *json2 = NULL, *text2 = NULL;
  f = open_memstream(&json2, &len);
  CHECK_U64(ns_summary_json(sum, &opt, f), 0);
  fclose(f);
  char* wide2 = NULL;
  f = open_memstream(&wide2, &len);
  CHECK_U64(ns_summary_text(sum, &opt, f), 0);
  fclose(f);
  opt.wide = 0;
  f = open_memstream(&text2, &len);
  CHECK_U64(ns_summary_text(sum, &opt, f), 0);
  fclose(f);
  CHECK_TRUE(strcmp(json, json2) == 0);
  CHECK_TRUE(strcmp(text, text2) == 0);
  CHECK_TRUE(strcmp(wide, wide2) == 0);
  ns_summary_free(sum);
  free(json2);
  free(text2);
  free(wide2);
  free(json);
  free(text);
  free(wide);
  CHECK_DONE();
}
