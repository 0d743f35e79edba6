/*
 * binary/signature.h -- the parameter types of a C++ kernel, read from its demangled name
 * (signature.c).
 */
#ifndef CUCORE_BINARY_SIGNATURE_H
#define CUCORE_BINARY_SIGNATURE_H

#include "binary/reader.h"

/* Sets k->param_types from k->demangled when the signature has k->param_count parameters. */
void cc_kinfo_param_types(cucore_kernel_info *k);

/* ---- tests only ---- */
/* Exported for tests/test_globals.c; cc_kinfo_param_types uses it. The types of the parameter
 * list of a demangled function name ("void f<int>(int const*, float)"), each trimmed and
 * written const first ("const int*"): one malloc'd block holding *count pointers followed by
 * the strings (free it once). NULL when the name has no parameter list or the block cannot be
 * allocated (nothing is recorded: the types are optional). */
char **cc_signature_params(const char *demangled, uint32_t *count);

#endif /* CUCORE_BINARY_SIGNATURE_H */
