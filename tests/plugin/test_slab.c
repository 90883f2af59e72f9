/* ncclscope plugin unit test: slot region and slabs: exhaustion, FIFO
 * reuse, handle range/alignment/activity checks. */
#include "capture/slab.h"
#include "check.h"

int main(void) {
  CHECK_U64(ns_region_create(50), 0); /* rounded up to 64 */
  CHECK_U64(ns_reg.n, 64);
  CHECK_U64(ns_slab_activate(3), 0);
  ns_slot* got[64];
  for (int i = 0; i < 64; i++) {
    got[i] = ns_slab_alloc(3);
    CHECK_TRUE(got[i] != NULL);
    CHECK_TRUE(ns_slot_from_handle(got[i]) == got[i]);
    CHECK_U64(ns_slot_slab(got[i]), 3);
  }
  CHECK_TRUE(ns_slab_alloc(3) == NULL); /* exhausted */
  CHECK_U64(ns_slab_free_count(3), 0);
  /* FIFO: freed 10, 20, 5 come back in that order */
  ns_slab_free(3, got[10]);
  ns_slab_free(3, got[20]);
  ns_slab_free(3, got[5]);
  CHECK_U64(ns_slab_free_count(3), 3);
  CHECK_TRUE(ns_slab_alloc(3) == got[10]);
  CHECK_TRUE(ns_slab_alloc(3) == got[20]);
  CHECK_TRUE(ns_slab_alloc(3) == got[5]);
  CHECK_TRUE(ns_slab_alloc(3) == NULL);
  /* handle checks */
  CHECK_TRUE(ns_slot_from_handle(NULL) == NULL);
  CHECK_TRUE(ns_slot_from_handle((char*)got[0] + 8) == NULL);          /* misaligned */
  CHECK_TRUE(ns_slot_from_handle((char*)ns_reg.base - 64) == NULL);    /* below */
  CHECK_TRUE(ns_slot_from_handle((char*)ns_reg.base + ns_reg.total) == NULL); /* above */
  CHECK_TRUE(ns_slot_from_handle(ns_reg.slabs[4].slots) == NULL);      /* inactive slab (PROT_NONE) */
  int local;
  CHECK_TRUE(ns_slot_from_handle(&local) == NULL);
  /* release zeroes and deactivates; reactivation starts fresh */
  atomic_store(&got[0]->repeats, 77);
  ns_slot_writer(got[0])->start_ns = 77; /* the writer's record of it, beside the slab */
  ns_slot_writer(got[0])->type = 0x200;
  CHECK_TRUE(ns_slot_writer(got[1]) == ns_slot_writer(got[0]) + (got[1] - got[0]));
  ns_slab_release(3);
  CHECK_TRUE(ns_slot_from_handle(got[0]) == NULL);
  CHECK_U64(ns_slab_activate(3), 0);
  CHECK_U64(atomic_load(&got[0]->repeats), 0);
  CHECK_U64(ns_slot_writer(got[0])->start_ns, 0);
  CHECK_U64(ns_slot_writer(got[0])->type, 0);
  CHECK_TRUE(ns_slab_alloc(3) == got[0]);
  ns_region_destroy();
  CHECK_TRUE(ns_slot_from_handle(got[0]) == NULL);
  CHECK_DONE();
}
