/*
 * toolkit_symbols.h -- the entry points cucore takes from NVRTC, nvJitLink and libNVVM, each
 * loaded at run time (toolkit.c). CC_SYM(return type, name, (parameters), required).
 */
#ifndef CUCORE_TOOLKIT_SYMBOLS_H
#define CUCORE_TOOLKIT_SYMBOLS_H

#include <nvJitLink.h>
#include <nvrtc.h>
#include <nvvm.h>

#define CC_NVRTC_SYMBOLS(CC_SYM)                                                        \
  CC_SYM(const char *, nvrtcGetErrorString, (nvrtcResult), 1)                           \
  CC_SYM(nvrtcResult, nvrtcVersion, (int *, int *), 1)                                  \
  CC_SYM(nvrtcResult, nvrtcGetNumSupportedArchs, (int *), 1)                            \
  CC_SYM(nvrtcResult, nvrtcGetSupportedArchs, (int *), 1)                               \
  CC_SYM(nvrtcResult, nvrtcCreateProgram,                                               \
         (nvrtcProgram *, const char *, const char *, int, const char *const *,         \
          const char *const *),                                                         \
         1)                                                                             \
  CC_SYM(nvrtcResult, nvrtcDestroyProgram, (nvrtcProgram *), 1)                         \
  CC_SYM(nvrtcResult, nvrtcCompileProgram, (nvrtcProgram, int, const char *const *), 1) \
  CC_SYM(nvrtcResult, nvrtcGetPTXSize, (nvrtcProgram, size_t *), 1)                     \
  CC_SYM(nvrtcResult, nvrtcGetPTX, (nvrtcProgram, char *), 1)                           \
  CC_SYM(nvrtcResult, nvrtcGetCUBINSize, (nvrtcProgram, size_t *), 1)                   \
  CC_SYM(nvrtcResult, nvrtcGetCUBIN, (nvrtcProgram, char *), 1)                         \
  CC_SYM(nvrtcResult, nvrtcGetLTOIRSize, (nvrtcProgram, size_t *), 0)                   \
  CC_SYM(nvrtcResult, nvrtcGetLTOIR, (nvrtcProgram, char *), 0)                         \
  CC_SYM(nvrtcResult, nvrtcGetProgramLogSize, (nvrtcProgram, size_t *), 1)              \
  CC_SYM(nvrtcResult, nvrtcGetProgramLog, (nvrtcProgram, char *), 1)                    \
  CC_SYM(nvrtcResult, nvrtcAddNameExpression, (nvrtcProgram, const char *), 1)          \
  CC_SYM(nvrtcResult, nvrtcGetPCHHeapSize, (size_t *), 0)                               \
  CC_SYM(nvrtcResult, nvrtcSetPCHHeapSize, (size_t), 0)                                 \
  CC_SYM(nvrtcResult, nvrtcGetPCHCreateStatus, (nvrtcProgram), 0)                       \
  CC_SYM(nvrtcResult, nvrtcGetPCHHeapSizeRequired, (nvrtcProgram, size_t *), 0)         \
  CC_SYM(nvrtcResult, nvrtcGetLoweredName, (nvrtcProgram, const char *, const char **), 1)

#define CC_NVJITLINK_SYMBOLS(CC_SYM)                                                        \
  CC_SYM(nvJitLinkResult, nvJitLinkVersion, (unsigned *, unsigned *), 1)                    \
  CC_SYM(nvJitLinkResult, nvJitLinkCreate, (nvJitLinkHandle *, uint32_t, const char **), 1) \
  CC_SYM(nvJitLinkResult, nvJitLinkDestroy, (nvJitLinkHandle *), 1)                         \
  CC_SYM(nvJitLinkResult, nvJitLinkAddData,                                                 \
         (nvJitLinkHandle, nvJitLinkInputType, const void *, size_t, const char *), 1)      \
  CC_SYM(nvJitLinkResult, nvJitLinkComplete, (nvJitLinkHandle), 1)                          \
  CC_SYM(nvJitLinkResult, nvJitLinkGetLinkedCubinSize, (nvJitLinkHandle, size_t *), 1)      \
  CC_SYM(nvJitLinkResult, nvJitLinkGetLinkedCubin, (nvJitLinkHandle, void *), 1)            \
  CC_SYM(nvJitLinkResult, nvJitLinkGetLinkedPtxSize, (nvJitLinkHandle, size_t *), 1)        \
  CC_SYM(nvJitLinkResult, nvJitLinkGetLinkedPtx, (nvJitLinkHandle, char *), 1)              \
  CC_SYM(nvJitLinkResult, nvJitLinkGetErrorLogSize, (nvJitLinkHandle, size_t *), 1)         \
  CC_SYM(nvJitLinkResult, nvJitLinkGetErrorLog, (nvJitLinkHandle, char *), 1)               \
  CC_SYM(nvJitLinkResult, nvJitLinkGetInfoLogSize, (nvJitLinkHandle, size_t *), 1)          \
  CC_SYM(nvJitLinkResult, nvJitLinkGetInfoLog, (nvJitLinkHandle, char *), 1)                \
  CC_SYM(nvJitLinkResult, nvJitLinkGetLinkedLTOIRSize, (nvJitLinkHandle, size_t *), 0)      \
  CC_SYM(nvJitLinkResult, nvJitLinkGetLinkedLTOIR, (nvJitLinkHandle, void *), 0)

#define CC_NVVM_SYMBOLS(CC_SYM)                                                                    \
  CC_SYM(const char *, nvvmGetErrorString, (nvvmResult), 1)                                        \
  CC_SYM(nvvmResult, nvvmVersion, (int *, int *), 1)                                               \
  CC_SYM(nvvmResult, nvvmIRVersion, (int *, int *, int *, int *), 1)                               \
  CC_SYM(nvvmResult, nvvmCreateProgram, (nvvmProgram *), 1)                                        \
  CC_SYM(nvvmResult, nvvmDestroyProgram, (nvvmProgram *), 1)                                       \
  CC_SYM(nvvmResult, nvvmAddModuleToProgram, (nvvmProgram, const char *, size_t, const char *), 1) \
  CC_SYM(nvvmResult, nvvmLazyAddModuleToProgram,                                                   \
         (nvvmProgram, const char *, size_t, const char *), 1)                                     \
  CC_SYM(nvvmResult, nvvmCompileProgram, (nvvmProgram, int, const char **), 1)                     \
  CC_SYM(nvvmResult, nvvmVerifyProgram, (nvvmProgram, int, const char **), 1)                      \
  CC_SYM(nvvmResult, nvvmGetCompiledResultSize, (nvvmProgram, size_t *), 1)                        \
  CC_SYM(nvvmResult, nvvmGetCompiledResult, (nvvmProgram, char *), 1)                              \
  CC_SYM(nvvmResult, nvvmGetProgramLogSize, (nvvmProgram, size_t *), 1)                            \
  CC_SYM(nvvmResult, nvvmGetProgramLog, (nvvmProgram, char *), 1)

#define CC_SYM_MEMBER(ret, name, params, req) ret(*fn_##name) params;
typedef struct cc_nvrtc {
  CC_NVRTC_SYMBOLS(CC_SYM_MEMBER) int version;
} cc_nvrtc;
typedef struct cc_nvjitlink {
  CC_NVJITLINK_SYMBOLS(CC_SYM_MEMBER) int version;
} cc_nvjitlink;
typedef struct cc_nvvm {
  CC_NVVM_SYMBOLS(CC_SYM_MEMBER) int version;
  int ir_version;
} cc_nvvm;
#undef CC_SYM_MEMBER

extern cc_nvrtc cc_rtc;
extern cc_nvjitlink cc_jl;
extern cc_nvvm cc_vm;
#define NVRTC(name) (cc_rtc.fn_##name)
#define JITLINK(name) (cc_jl.fn_##name)
#define NVVM(name) (cc_vm.fn_##name)

/* Each loads its library once (thread-safe), restating the cause of a failure on every call. */
cucore_status cc_nvrtc_load(void);
cucore_status cc_nvjitlink_load(void);
cucore_status cc_nvvm_load(void);
void cc_nvrtc_describe(cucore_library_info *out);
void cc_nvjitlink_describe(cucore_library_info *out);
void cc_nvvm_describe(cucore_library_info *out);
/* The file each library would be loaded from under its override variable or the toolkit
 * roots, found without loading it (for the compile cache's key): 0, or -1 when only the
 * loader could tell. */
int cc_nvrtc_locate(char *out, size_t cap);
int cc_nvjitlink_locate(char *out, size_t cap);
int cc_nvvm_locate(char *out, size_t cap);
/* The toolkit root cucore found (CUDA_HOME, CUDA_PATH, /usr/local/cuda), or NULL. */
const char *cc_toolkit_root(void);
/* Every toolkit root that exists, in search order, without repeats: their number (0..3). */
int cc_toolkit_roots(const char *roots[3]);

/* Failures of toolkit calls, keeping the native code. */
cucore_status cc_fail_nvrtc(nvrtcResult r, const char *call, const char *fmt, ...) CC_PRINTF(3, 4);
cucore_status cc_fail_nvjitlink(nvJitLinkResult r, const char *call, const char *fmt, ...)
    CC_PRINTF(3, 4);
cucore_status cc_fail_nvvm(nvvmResult r, const char *call, const char *fmt, ...) CC_PRINTF(3, 4);

#endif
