/* pch.h -- NVRTC's precompiled headers around a program's compile (pch.c). */
#ifndef CUCORE_PCH_H
#define CUCORE_PCH_H

#include "toolchain/options.h"

/* 1 when the options make NVRTC use its process-wide PCH heap (pch, create-pch, use-pch). */
int cc_pch_uses_heap(const cucore_options *o);
/* Around a compile that uses the heap: a shared lock that cc_pch_raise_heap waits for. */
void cc_pch_enter(void);
void cc_pch_leave(void);
/* What nvrtcGetPCHCreateStatus says of `prog` (NONE when this NVRTC has no PCH calls). */
cucore_pch_status cc_pch_status(nvrtcProgram prog);
/* NVRTC found the heap too small for `prog`: raises it to the size NVRTC asks for, alone (the
 * heap is the process's; other PCH compiles are waited for). Call outside cc_pch_enter. */
cucore_status cc_pch_raise_heap(nvrtcProgram prog);
/* The log for the compile cache to keep: a copy of `log` without NVRTC's lines saying a PCH was
 * created or used (a hit makes none and uses none), or NULL when it has none. */
char *cc_pch_log_for_cache(const char *log);

#endif
