/* run_bind.c -- a configuration's kernel with its arguments bound: the caller's bind callback
 * given the buffers' device pointers (the buffers themselves, or a rotated set's copies). */
#include "tune/run.h"

cucore_status cc_tbind(cc_trun *c, const cc_tgroup *g, cucore_kernel *k, const cucore_devptr *ptrs,
                       cucore_args **a) {
  cucore_status st = cucore_args_create(k, a);
  if (st != CUCORE_OK) return st;
  cc_begin(); /* the callback's own calls begin again: its failure is the one kept */
  st = c->o.bind(c->o.user, g->obj, g->symbol, ptrs, *a);
  if (st != CUCORE_OK && !cc_message_kept())
    st = cc_fail(st, "cucore_tune_run: the bind callback failed for kernel %s", g->symbol);
  return st;
}

cucore_status cc_tbind_kernel(cc_trun *c, const cc_tgroup *g, cucore_kernel **k, cucore_args **a) {
  cucore_status st = cucore_object_get_kernel(g->obj, g->symbol, k);
  if (st == CUCORE_OK) st = cc_tbind(c, g, *k, cc_tdata_ptrs(c), a);
  if (st != CUCORE_OK) { /* nothing half made is kept */
    cucore_args_destroy(*a);
    cucore_kernel_destroy(*k);
    *a = NULL, *k = NULL;
  }
  return st;
}
