/* compare.h -- two device buffers compared on the device (the tune's verification): a kernel
 * compiled once per tune (NVRTC through the compile cache), run on the tune's stream; only the
 * offset of the first differing byte comes back (8 bytes instead of the whole output).
 * Private to src/tune. */
#ifndef CUCORE_TUNE_COMPARE_H
#define CUCORE_TUNE_COMPARE_H

#include "tune/space.h"

typedef struct cc_tune_cmp cc_tune_cmp;

/* The comparison kernel's code, compiled (or found in the compile cache); needs no device, so
 * it is made while the device opens. */
cucore_status cc_tune_cmp_compile(cucore_object **obj);
/* The comparison for `dev` with the code `obj` (taken, destroyed on failure; NULL: compiled
 * here), loaded. */
cucore_status cc_tune_cmp_create(cucore_device *dev, cucore_object *obj, cc_tune_cmp **out);
/* NULL is a no-op. */
void cc_tune_cmp_destroy(cc_tune_cmp *c);
/* *first = the offset of the first byte where [a, a + bytes) and [b, b + bytes) differ, or
 * `bytes` when they are equal; waits for `s`. CUCORE_NOT_SUPPORTED when the kernel did not run
 * (a driver that runs no kernels, as the tests' fake): compare on the host then. */
cucore_status cc_tune_cmp_run(cc_tune_cmp *c, cucore_stream *s, cucore_devptr a, cucore_devptr b,
                              size_t bytes, size_t *first);
/* The element kind cc_tune_cmp_within takes for elements of CUCORE_DTYPE_* `code` and
 * `elem_size` bytes: 0 float, 1 double, 2 half, 3 bfloat16; -1 for any other (integers are
 * compared on the host). */
int cc_tune_cmp_kind(int code, size_t elem_size);
/* *outside = how many of the `count` elements of kind `kind` at `got` lie outside rtol/atol of
 * those at `want`, by cucore_compare_elements' rule (the same decision for every element: the
 * host then needs to look only when some do); waits for `s`. CUCORE_NOT_SUPPORTED as
 * cc_tune_cmp_run. */
cucore_status cc_tune_cmp_within(cc_tune_cmp *c, cucore_stream *s, cucore_devptr got,
                                 cucore_devptr want, size_t count, int kind, double rtol,
                                 double atol, size_t *outside);

#endif
