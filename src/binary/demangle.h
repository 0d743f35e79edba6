/*
 * binary/demangle.h -- C++ names demangled by libstdc++, loaded at run time (demangle.c).
 */
#ifndef CUCORE_BINARY_DEMANGLE_H
#define CUCORE_BINARY_DEMANGLE_H

#include "base/base.h"

/* ---- demangling (demangle.c) ----------------------------------------------------------------- */

/* The demangled form of an Itanium C++ name (malloc'd), or NULL when `name` is not mangled,
 * cannot be demangled, or libstdc++ could not be loaded (never an error). */
char *cc_demangle(const char *name);
/* 1 when a demangler was loaded (libstdc++.so.6 with __cxa_demangle). */
int cc_demangler_available(void);

#endif /* CUCORE_BINARY_DEMANGLE_H */
