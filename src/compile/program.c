/*
 * program.c -- Program: every kind of JIT. CUDA C++ through NVRTC, PTX through nvJitLink,
 * NVVM IR through libNVVM; targets PTX, cubin, LTO-IR and a fatbin of several of them. The
 * result is an ObjectCode.
 */
#define _GNU_SOURCE
#include "compile/cache.h"
#include "compile/pch.h"
#include "compile/diag.h"
#include "base/phase.h"
#include "binary/detect.h"
#include "binary/fatbin_write.h"
#include "object/object.h"
#include "toolchain/jitlink.h"
#include "toolchain/options.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cc_module {
  unsigned char *code;
  size_t size;
  char *name;
  int lazy;
} cc_module;

struct cucore_program {
  cc_handle hdr; /* first: the magic word of base/handle.h */
  cucore_code_type type;
  unsigned char *code;
  size_t size;
  char *name;
  cucore_options *opts;
  char **exprs;
  int expr_count;
  size_t expr_cap;    /* cc_grow's capacity of exprs */
  cc_module *modules; /* extra NVVM modules */
  int module_count;
  size_t module_cap; /* cc_grow's capacity of modules */
  char *log;
  cc_cache_state cache;   /* the compile cache's part (compile/cache.h) */
  cucore_pch_status pch;  /* what NVRTC said of a PCH in the last compile (compile/pch.c) */
  cc_libdevice libdevice; /* what this compile links for __nv_* calls (use_libdevice) */
  int use_libdevice;
  cc_diag_list diags; /* the log read into records (compile/diag.h) */
  int diags_failed;   /* 1 when the log could not be read into records */
};

static const char *empty_log = "";

static cucore_status set_log(cucore_program *p, char *log) {
  free(p->log);
  p->log = log;
  /* The records are read now (a log is short, and often empty); failing to read them fails
   * only cucore_program_get_diagnostic*, never the compile. */
  p->diags_failed = cc_diag_parse(log, &p->diags) != 0;
  if (p->diags_failed) cc_begin();
  return CUCORE_OK;
}

cucore_status cucore_program_create(cucore_code_type type, const void *code, size_t size,
                                    const char *name, const cucore_options *opts,
                                    cucore_program **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_program_create", "out");
  *out = NULL;
  CC_CHECK_ARG(code, "cucore_program_create", "code");
  if (opts) CC_CHECK_HANDLE(opts, OPTIONS, "cucore_program_create", "opts");
  if (size == 0) size = strlen(code);
  if (size == 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "cucore_program_create: the source is empty");
  cucore_status st = cc_check_code_size(size, "cucore_program_create", "the source");
  if (st != CUCORE_OK) return st;
  if (type == CUCORE_CODE_AUTO) {
    cucore_code_type t = cc_code_type_guess(code, size);
    type = (t == CUCORE_CODE_PTX || t == CUCORE_CODE_NVVM) ? t : CUCORE_CODE_CUDA_CPP;
    if (t == CUCORE_CODE_CUBIN || t == CUCORE_CODE_FATBIN || t == CUCORE_CODE_LTOIR)
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "cucore_program_create: the code is already compiled (%s); load it with "
                     "cucore_object_from_memory or link it with cucore_linker_*",
                     cucore_code_type_name(t));
  }
  if (type != CUCORE_CODE_CUDA_CPP && type != CUCORE_CODE_PTX && type != CUCORE_CODE_NVVM)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_program_create: a program compiles CUDA C++, PTX or NVVM IR, not %s; "
                   "load compiled code with cucore_object_from_memory",
                   cucore_code_type_name(type));
  cucore_program *p = cc_calloc(1, sizeof *p, "a program");
  if (!p) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_handle_init(p, CC_KIND_PROGRAM);
  p->type = type;
  p->size = size;
  p->code = cc_copy_code(code, size);
  p->name = cc_strdup(name ? name
                           : (type == CUCORE_CODE_PTX    ? "program.ptx"
                              : type == CUCORE_CODE_NVVM ? "program.ll"
                                                         : "program.cu"),
                      "a program name");
  st = (p->code && p->name) ? CUCORE_OK : CUCORE_HOST_OUT_OF_MEMORY;
  if (st == CUCORE_OK)
    st = opts ? cucore_options_copy(opts, &p->opts) : cucore_options_create(&p->opts);
  if (st != CUCORE_OK) {
    cucore_program_destroy(p);
    return st;
  }
  *out = p;
  return CUCORE_OK;
}

cucore_status cucore_program_destroy(cucore_program *p) {
  cc_begin();
  if (!p) return CUCORE_OK;
  CC_CHECK_HANDLE(p, PROGRAM, "cucore_program_destroy", "prog");
  for (int i = 0; i < p->expr_count; i++) free(p->exprs[i]);
  for (int i = 0; i < p->module_count; i++) {
    free(p->modules[i].code);
    free(p->modules[i].name);
  }
  free(p->modules);
  free(p->exprs);
  free(p->code);
  free(p->name);
  free(p->log);
  cc_diag_free(&p->diags);
  cc_cache_state_free(&p->cache);
  cucore_options_destroy(p->opts);
  cc_handle_retire(p, CC_KIND_PROGRAM);
  return CUCORE_OK;
}

cucore_status cucore_program_add_name_expression(cucore_program *p, const char *expr) {
  cc_begin();
  CC_CHECK_HANDLE(p, PROGRAM, "cucore_program_add_name_expression", "prog");
  CC_CHECK_ARG(expr, "cucore_program_add_name_expression", "expr");
  if (p->type != CUCORE_CODE_CUDA_CPP)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_program_add_name_expression: name expressions are for CUDA C++; `%s` "
                   "is %s",
                   p->name, cucore_code_type_name(p->type));
  if (!expr[0])
    return cc_fail(CUCORE_INVALID_ARGUMENT, "cucore_program_add_name_expression: empty expression");
  for (int i = 0; i < p->expr_count; i++)
    if (strcmp(p->exprs[i], expr) == 0) return CUCORE_OK;
  char **e = cc_grow(p->exprs, &p->expr_cap, (size_t)p->expr_count + 1, sizeof *e,
                     "the list of name expressions");
  if (!e) return cucore_last_status();
  p->exprs = e;
  if (!(p->exprs[p->expr_count] = cc_strdup(expr, "a name expression")))
    return CUCORE_HOST_OUT_OF_MEMORY;
  p->expr_count++;
  return CUCORE_OK;
}

cucore_status cucore_program_add_module(cucore_program *p, const void *code, size_t size,
                                        const char *name, int lazy) {
  cc_begin();
  CC_CHECK_HANDLE(p, PROGRAM, "cucore_program_add_module", "prog");
  CC_CHECK_ARG(code, "cucore_program_add_module", "code");
  if (p->type != CUCORE_CODE_NVVM)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_program_add_module: extra modules are for NVVM IR programs; `%s` is %s",
                   p->name, cucore_code_type_name(p->type));
  if (size == 0) size = strlen(code);
  cucore_status st = cc_check_code_size(size, "cucore_program_add_module", "the module");
  if (st != CUCORE_OK) return st;
  cc_module *m = cc_grow(p->modules, &p->module_cap, (size_t)p->module_count + 1, sizeof *m,
                         "the list of modules");
  if (!m) return cucore_last_status();
  p->modules = m;
  cc_module *nm = &p->modules[p->module_count];
  nm->code = cc_copy_code(code, size);
  nm->name = cc_strdup(name ? name : "module", "a module name");
  nm->size = size;
  nm->lazy = lazy;
  if (!nm->code || !nm->name) {
    free(nm->code);
    free(nm->name);
    return CUCORE_HOST_OUT_OF_MEMORY;
  }
  p->module_count++;
  return CUCORE_OK;
}

cucore_status cucore_program_get_log(const cucore_program *p, const char **log) {
  cc_begin();
  CC_CHECK_HANDLE(p, PROGRAM, "cucore_program_get_log", "prog");
  CC_CHECK_ARG(log, "cucore_program_get_log", "log");
  *log = p->log ? p->log : empty_log;
  return CUCORE_OK;
}

cucore_status cucore_program_get_diagnostic_count(const cucore_program *p, int *count) {
  cc_begin();
  CC_CHECK_ARG(count, "cucore_program_get_diagnostic_count", "count");
  *count = 0;
  CC_CHECK_HANDLE(p, PROGRAM, "cucore_program_get_diagnostic_count", "prog");
  if (p->diags_failed)
    return cc_fail(CUCORE_HOST_OUT_OF_MEMORY,
                   "cucore_program_get_diagnostic_count: `%s`'s log (%zu bytes) could not be "
                   "read into records: out of host memory",
                   p->name, strlen(p->log));
  *count = p->diags.n > INT_MAX ? INT_MAX : (int)p->diags.n;
  return CUCORE_OK;
}

cucore_status cucore_program_get_diagnostic(const cucore_program *p, int index,
                                            cucore_diagnostic *out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_program_get_diagnostic", "out");
  memset(out, 0, sizeof *out);
  out->file = out->message = out->text = "";
  CC_CHECK_HANDLE(p, PROGRAM, "cucore_program_get_diagnostic", "prog");
  if (index < 0 || (size_t)index >= p->diags.n)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_program_get_diagnostic: index %d is out of range; `%s`'s last log has "
                   "%zu record%s (0 .. count-1)",
                   index, p->name, p->diags.n, p->diags.n == 1 ? "" : "s");
  *out = p->diags.v[index];
  return CUCORE_OK;
}

/* The first line of a log that reports an error, for the one-line message. */
static void first_error_line(const char *log, char *buf, size_t n) {
  buf[0] = '\0';
  if (!log) return;
  const char *line = log;
  while (*line) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    if (memmem(line, len, "error", 5)) {
      snprintf(buf, n, "%.*s", (int)len, line);
      return;
    }
    if (!end) break;
    line = end + 1;
  }
  snprintf(buf, n, "%.*s", (int)strcspn(log, "\n"), log);
}

/* The newer options a tool of this compile has no flag for are refused, naming the tools. */
static cucore_status tools_check(const cucore_program *p, cucore_code_type target) {
  int link = target == CUCORE_CODE_CUBIN || target == CUCORE_CODE_FATBIN;
  unsigned tools = p->type == CUCORE_CODE_CUDA_CPP ? 1u << CC_TOOL_NVRTC
                   : p->type == CUCORE_CODE_PTX
                       ? 1u << CC_TOOL_NVJITLINK
                       : (1u << CC_TOOL_NVVM) | (link ? 1u << CC_TOOL_NVJITLINK : 0);
  char subject[320];
  snprintf(subject, sizeof subject, "`%.256s` (%s to %s)", p->name, cucore_code_type_name(p->type),
           cucore_code_type_name(target));
  return cc_options_check_tools(p->opts, tools, "cucore_program_compile", subject);
}

static cucore_status target_check(const cucore_program *p, cucore_code_type target) {
  if (target == CUCORE_CODE_PTX || target == CUCORE_CODE_CUBIN || target == CUCORE_CODE_LTOIR ||
      target == CUCORE_CODE_FATBIN) {
    if (p->type == CUCORE_CODE_PTX && target == CUCORE_CODE_LTOIR)
      return cc_fail(CUCORE_NOT_SUPPORTED,
                     "cucore_program_compile: PTX cannot be compiled to LTO-IR (nvJitLink takes "
                     "PTX in, and gives cubin or PTX out); compile the C++ or NVVM source with "
                     "lto instead");
    return CUCORE_OK;
  }
  return cc_fail(CUCORE_INVALID_ARGUMENT,
                 "cucore_program_compile: target %s is not one a program produces; expected ptx, "
                 "cubin, ltoir or fatbin",
                 cucore_code_type_name(target));
}

/* ---- NVRTC --------------------------------------------------------------------------------- */

static char *nvrtc_log(nvrtcProgram prog) {
  size_t n = 0;
  if (NVRTC(nvrtcGetProgramLogSize)(prog, &n) != NVRTC_SUCCESS || n == 0) return NULL;
  char *log = cc_raw_malloc(n + 1);
  if (log && NVRTC(nvrtcGetProgramLog)(prog, log) != NVRTC_SUCCESS) log[0] = '\0';
  if (log) log[n] = '\0';
  return log;
}

typedef nvrtcResult (*nvrtc_size_fn)(nvrtcProgram, size_t *);
typedef nvrtcResult (*nvrtc_get_fn)(nvrtcProgram, char *);

static cucore_status nvrtc_output(nvrtcProgram prog, nvrtc_size_fn size_fn, nvrtc_get_fn get_fn,
                                  const char *what, int is_text, unsigned char **out,
                                  size_t *out_size) {
  size_t n = 0;
  nvrtcResult r = size_fn(prog, &n);
  if (r != NVRTC_SUCCESS) {
    char size_call[64];
    snprintf(size_call, sizeof size_call, "%sSize", what); /* nvrtcGetPTXSize, ... */
    return cc_fail_nvrtc(r, size_call, NULL);
  }
  unsigned char *buf = cc_malloc(n + 1, what);
  if (!buf) return CUCORE_HOST_OUT_OF_MEMORY;
  r = get_fn(prog, (char *)buf);
  if (r != NVRTC_SUCCESS) {
    free(buf);
    return cc_fail_nvrtc(r, what, NULL);
  }
  buf[n] = 0;
  /* PTX sizes count the terminating NUL; binaries are kept whole (an ELF may end in zeros). */
  if (is_text)
    while (n > 0 && buf[n - 1] == 0) n--;
  *out = buf;
  *out_size = n;
  return CUCORE_OK;
}

/* The program in NVRTC, with the option set's headers and the name expressions; *prog is set
 * only when it was created (the caller destroys it). */
static cucore_status nvrtc_create(const cucore_program *p, nvrtcProgram *prog) {
  const char **hnames = NULL, **hsrcs = NULL;
  int nh = p->opts->header_count;
  if (nh) {
    hnames = cc_calloc((size_t)nh, sizeof *hnames, "header names");
    hsrcs = hnames ? cc_calloc((size_t)nh, sizeof *hsrcs, "headers") : NULL;
    if (!hsrcs) {
      free(hnames);
      return CUCORE_HOST_OUT_OF_MEMORY;
    }
    for (int i = 0; i < nh; i++) {
      hnames[i] = p->opts->headers[i].name;
      hsrcs[i] = p->opts->headers[i].contents;
    }
  }
  nvrtcProgram made = NULL;
  nvrtcResult r = NVRTC(nvrtcCreateProgram)(&made, (const char *)p->code, p->name, nh, hsrcs,
                                            hnames);
  free(hnames);
  free(hsrcs);
  if (r != NVRTC_SUCCESS) return cc_fail_nvrtc(r, "nvrtcCreateProgram", "`%s`", p->name);
  *prog = made;
  for (int i = 0; i < p->expr_count; i++) {
    r = NVRTC(nvrtcAddNameExpression)(made, p->exprs[i]);
    if (r != NVRTC_SUCCESS) return cc_fail_nvrtc(r, "nvrtcAddNameExpression", "`%s`", p->exprs[i]);
  }
  return CUCORE_OK;
}

/* A failed nvrtcCompileProgram: the log's first error, and for a refused option (NVRTC names
 * the option but not its value) every option that was passed. */
static cucore_status nvrtc_compile_failed(const cucore_program *p, nvrtcResult r,
                                          const cc_argv *args, cucore_code_type target, int arch,
                                          const char *suffix) {
  char first[512];
  first_error_line(p->log, first, sizeof first);
  if (r == NVRTC_ERROR_COMPILATION)
    return cc_fail(cc_status(CUCORE_COMPILE_ERROR, CUCORE_SOURCE_NVRTC, (int)r),
                   "compiling `%s` for %s_%d%s failed: %s (the full log has every message)",
                   p->name, target == CUCORE_CODE_CUBIN ? "sm" : "compute", arch, suffix, first);
  char given[1024] = "";
  size_t len = 0;
  for (int i = 0; i < args->n && len + 2 < sizeof given; i++)
    len += (size_t)snprintf(given + len, sizeof given - len, "%s%s", i ? " " : "", args->v[i]);
  return cc_fail_nvrtc(r, "nvrtcCompileProgram", "`%s`: %s (options given: %s)", p->name, first,
                       given);
}

/* Compiles `prog` with the program's options for the target; the log is kept either way. */
static cucore_status nvrtc_compile(cucore_program *p, nvrtcProgram prog, cucore_code_type target,
                                   int arch, const char *suffix) {
  cc_argv args = {0};
  cucore_status st = cc_options_render(p->opts, CC_TOOL_NVRTC, arch, suffix,
                                       target != CUCORE_CODE_CUBIN, &args);
  if (st == CUCORE_OK && target == CUCORE_CODE_LTOIR && !cc_options_int(p->opts, CUCORE_OPT_LTO))
    st = cc_argv_push(&args, "-dlto");
  if (st == CUCORE_OK) {
    nvrtcResult r = NVRTC(nvrtcCompileProgram)(prog, args.n, (const char *const *)args.v);
    set_log(p, nvrtc_log(prog));
    if (r != NVRTC_SUCCESS) st = nvrtc_compile_failed(p, r, &args, target, arch, suffix);
  }
  cc_argv_free(&args);
  return st;
}

/* The compiled code: LTO-IR when asked for or when the lto option is on (for anything but
 * PTX), else the cubin or the PTX. *got is the code type it is. */
static cucore_status nvrtc_code(const cucore_program *p, nvrtcProgram prog, cucore_code_type target,
                                cucore_code_type *got, unsigned char **code, size_t *size) {
  int want_lto = target == CUCORE_CODE_LTOIR || cc_options_int(p->opts, CUCORE_OPT_LTO);
  *got = target;
  if (target == CUCORE_CODE_LTOIR || (want_lto && target != CUCORE_CODE_PTX)) {
    *got = CUCORE_CODE_LTOIR;
    if (CC_UNLIKELY(NVRTC(nvrtcGetLTOIRSize) == NULL))
      return cc_fail(CUCORE_TOOLKIT_TOO_OLD, "this NVRTC cannot produce LTO-IR");
    return nvrtc_output(prog, NVRTC(nvrtcGetLTOIRSize), NVRTC(nvrtcGetLTOIR), "nvrtcGetLTOIR", 0,
                        code, size);
  }
  if (target == CUCORE_CODE_CUBIN)
    return nvrtc_output(prog, NVRTC(nvrtcGetCUBINSize), NVRTC(nvrtcGetCUBIN), "nvrtcGetCUBIN", 0,
                        code, size);
  return nvrtc_output(prog, NVRTC(nvrtcGetPTXSize), NVRTC(nvrtcGetPTX), "nvrtcGetPTX", 1, code,
                      size);
}

/* The PTX beside a cubin records parameter types: kept in the object when NVRTC has it (an
 * object without it is still whole, so a failure here is not one). */
static void nvrtc_keep_ptx(nvrtcProgram prog, cucore_object *obj) {
  size_t n = 0;
  if (NVRTC(nvrtcGetPTXSize)(prog, &n) != NVRTC_SUCCESS || n <= 1) return;
  char *ptx = cc_raw_malloc(n + 1);
  if (ptx && NVRTC(nvrtcGetPTX)(prog, ptx) == NVRTC_SUCCESS) {
    ptx[n] = 0;
    obj->ptx = ptx;
    obj->ptx_size = strlen(ptx);
  } else {
    free(ptx);
  }
}

/* Each name expression and its lowered name, into the object. */
static cucore_status nvrtc_lowered_names(const cucore_program *p, nvrtcProgram prog,
                                         cucore_object *obj) {
  if (!p->expr_count) return CUCORE_OK;
  obj->exprs = cc_calloc((size_t)p->expr_count, sizeof *obj->exprs, "name expressions");
  obj->lowered = cc_calloc((size_t)p->expr_count, sizeof *obj->lowered, "lowered names");
  if (!obj->exprs || !obj->lowered) return CUCORE_HOST_OUT_OF_MEMORY;
  for (int i = 0; i < p->expr_count; i++) {
    const char *lowered = NULL;
    nvrtcResult r = NVRTC(nvrtcGetLoweredName)(prog, p->exprs[i], &lowered);
    if (r != NVRTC_SUCCESS)
      return cc_fail_nvrtc(r, "nvrtcGetLoweredName",
                           "name expression `%s` does not name a __global__ function or "
                           "variable of `%s`",
                           p->exprs[i], p->name);
    obj->exprs[i] = cc_strdup(p->exprs[i], "a name expression");
    obj->lowered[i] = cc_strdup(lowered, "a lowered name");
    obj->expr_count = i + 1;
    if (!obj->exprs[i] || !obj->lowered[i]) return CUCORE_HOST_OUT_OF_MEMORY;
  }
  return CUCORE_OK;
}

/* The object made of what `prog` compiled. */
static cucore_status nvrtc_object(const cucore_program *p, nvrtcProgram prog,
                                  cucore_code_type target, int arch, const char *suffix,
                                  cucore_object **out) {
  cucore_code_type got;
  unsigned char *code = NULL;
  size_t size = 0;
  cucore_status st = nvrtc_code(p, prog, target, &got, &code, &size);
  if (st != CUCORE_OK) return st;
  cucore_object *obj = NULL;
  st = cc_object_new(got, code, size, p->name, &obj); /* takes the code */
  if (st != CUCORE_OK) return st;
  obj->arch = arch;
  snprintf(obj->arch_suffix, sizeof obj->arch_suffix, "%s", suffix);
  obj->producer_version = cc_rtc.version;
  if (got == CUCORE_CODE_CUBIN) nvrtc_keep_ptx(prog, obj);
  st = nvrtc_lowered_names(p, prog, obj);
  if (st != CUCORE_OK) {
    cc_object_release(obj);
    return st;
  }
  *out = obj;
  return CUCORE_OK;
}

/* The steps of an NVRTC compile; *prog is the caller's to destroy. */
static cucore_status nvrtc_steps(cucore_program *p, nvrtcProgram *prog, cucore_code_type target,
                                 int arch, const char *suffix, cucore_object **out) {
  cucore_status st = nvrtc_create(p, prog);
  if (st != CUCORE_OK) return st;
  st = nvrtc_compile(p, *prog, target, arch, suffix);
  if (st != CUCORE_OK) return st;
  return nvrtc_object(p, *prog, target, arch, suffix, out);
}

/* With PCH options the compile holds the PCH heap's shared lock and reads the PCH status; when
 * NVRTC found the heap too small, the heap is raised and a new program compiled once more. */
static cucore_status compile_nvrtc(cucore_program *p, cucore_code_type target, int arch,
                                   const char *suffix, cucore_object **out) {
  cucore_status st = cc_nvrtc_load();
  int pch = cc_pch_uses_heap(p->opts);
  for (int attempt = 0; st == CUCORE_OK; attempt++) {
    nvrtcProgram prog = NULL;
    if (pch) cc_pch_enter();
    st = nvrtc_steps(p, &prog, target, arch, suffix, out);
    p->pch = pch && st == CUCORE_OK ? cc_pch_status(prog) : CUCORE_PCH_NONE;
    if (pch) cc_pch_leave();
    int again = p->pch == CUCORE_PCH_HEAP_EXHAUSTED && attempt == 0 &&
                cc_pch_raise_heap(prog) == CUCORE_OK;
    if (prog) NVRTC(nvrtcDestroyProgram)(&prog);
    if (!again) break;
    cc_object_release(*out);
    *out = NULL;
  }
  return st;
}

/* ---- nvJitLink for PTX ------------------------------------------------------------------- */

static cucore_status compile_ptx(cucore_program *p, cucore_code_type target, int arch,
                                 const char *suffix, cucore_object **out) {
  unsigned char *code = NULL;
  size_t size = 0;
  cucore_status st;
  if (target == CUCORE_CODE_PTX) {
    code = cc_copy_code(p->code, p->size);
    size = p->size;
    st = code ? CUCORE_OK : CUCORE_HOST_OUT_OF_MEMORY;
    set_log(p, NULL);
  } else {
    char *log = NULL;
    st = cc_jitlink_one(p->opts, arch, suffix, CUCORE_CODE_PTX, p->code, p->size, p->name, 0, 0,
                        &code, &size, &log);
    set_log(p, log);
    if (st != CUCORE_OK && CUCORE_CODE(st) == CUCORE_LINK_ERROR)
      st = cc_status(CUCORE_COMPILE_ERROR, cucore_status_source(st), cucore_status_native(st));
  }
  if (st != CUCORE_OK) return st;
  cucore_object *obj = NULL;
  st = cc_object_new(target, code, size, p->name, &obj);
  if (st != CUCORE_OK) return st;
  obj->arch = target == CUCORE_CODE_CUBIN ? arch : 0;
  snprintf(obj->arch_suffix, sizeof obj->arch_suffix, "%s", suffix);
  obj->ptx = (char *)cc_copy_code(p->code, p->size);
  obj->ptx_size = p->size;
  *out = obj;
  return CUCORE_OK;
}

/* ---- libNVVM ------------------------------------------------------------------------------- */

/* The program in libNVVM with its extra modules; *prog is set only when it was created (the
 * caller destroys it). */
static cucore_status nvvm_create(const cucore_program *p, nvvmProgram *prog) {
  nvvmProgram made = NULL;
  nvvmResult r = NVVM(nvvmCreateProgram)(&made);
  if (r != NVVM_SUCCESS) return cc_fail_nvvm(r, "nvvmCreateProgram", NULL);
  *prog = made;
  r = NVVM(nvvmAddModuleToProgram)(made, (const char *)p->code, p->size, p->name);
  for (int i = 0; r == NVVM_SUCCESS && i < p->module_count; i++) {
    const cc_module *m = &p->modules[i];
    r = (m->lazy ? NVVM(nvvmLazyAddModuleToProgram)
                 : NVVM(nvvmAddModuleToProgram))(made, (const char *)m->code, m->size, m->name);
  }
  if (r != NVVM_SUCCESS) return cc_fail_nvvm(r, "nvvmAddModuleToProgram", "`%s`", p->name);
  if (p->use_libdevice) {
    r = NVVM(nvvmLazyAddModuleToProgram)(made, (const char *)p->libdevice.data, p->libdevice.size,
                                         p->libdevice.path);
    if (r != NVVM_SUCCESS)
      return cc_fail_nvvm(r, "nvvmLazyAddModuleToProgram", "libdevice %s", p->libdevice.path);
  }
  return CUCORE_OK;
}

/* Compiles `prog` for compute_<arch> (LTO-IR when asked for); the log is kept either way. */
static cucore_status nvvm_compile(cucore_program *p, nvvmProgram prog, cucore_code_type target,
                                  int arch, const char *suffix) {
  cc_argv args = {0};
  cucore_status st = cc_options_render(p->opts, CC_TOOL_NVVM, arch, suffix, 1, &args);
  if (st == CUCORE_OK && target == CUCORE_CODE_LTOIR && !cc_options_int(p->opts, CUCORE_OPT_LTO))
    st = cc_argv_push(&args, "-gen-lto");
  nvvmResult r = NVVM_SUCCESS;
  if (st == CUCORE_OK) r = NVVM(nvvmCompileProgram)(prog, args.n, (const char **)args.v);
  cc_argv_free(&args);
  if (st != CUCORE_OK) return st;
  size_t n = 0;
  char *log = NULL;
  if (NVVM(nvvmGetProgramLogSize)(prog, &n) == NVVM_SUCCESS && n > 1) {
    log = cc_raw_malloc(n + 1);
    if (log && NVVM(nvvmGetProgramLog)(prog, log) == NVVM_SUCCESS) log[n] = 0;
  }
  set_log(p, log);
  if (r == NVVM_SUCCESS) return CUCORE_OK;
  char first[512];
  first_error_line(p->log, first, sizeof first);
  return cc_fail_nvvm(r, "nvvmCompileProgram", "`%s` for compute_%d%s%s: %s", p->name, arch,
                      p->use_libdevice ? " with libdevice " : "",
                      p->use_libdevice ? p->libdevice.path : "", first);
}

/* What `prog` compiled (PTX or LTO-IR), NUL-terminated. */
static cucore_status nvvm_result(const cucore_program *p, nvvmProgram prog, unsigned char **code,
                                 size_t *size) {
  size_t n = 0;
  nvvmResult r = NVVM(nvvmGetCompiledResultSize)(prog, &n);
  if (r != NVVM_SUCCESS) return cc_fail_nvvm(r, "nvvmGetCompiledResult", "`%s`", p->name);
  unsigned char *buf = cc_malloc(n + 1, "compiled NVVM");
  if (!buf) return CUCORE_HOST_OUT_OF_MEMORY;
  r = NVVM(nvvmGetCompiledResult)(prog, (char *)buf);
  buf[n] = 0;
  if (r != NVVM_SUCCESS) {
    free(buf);
    return cc_fail_nvvm(r, "nvvmGetCompiledResult", "`%s`", p->name);
  }
  *code = buf;
  *size = n;
  return CUCORE_OK;
}

/* The steps in libNVVM; *prog is the caller's to destroy. */
static cucore_status nvvm_steps(cucore_program *p, nvvmProgram *prog, cucore_code_type target,
                                int arch, const char *suffix, unsigned char **code, size_t *size) {
  cucore_status st = nvvm_create(p, prog);
  if (st != CUCORE_OK) return st;
  st = nvvm_compile(p, *prog, target, arch, suffix);
  if (st != CUCORE_OK) return st;
  return nvvm_result(p, *prog, code, size);
}

/* A cubin object from libNVVM's PTX through nvJitLink; the PTX is kept beside it. Takes
 * `ptx` (freed on failure). */
static cucore_status nvvm_cubin(const cucore_program *p, int arch, const char *suffix,
                                unsigned char *ptx, size_t ptx_size, cucore_object **out) {
  unsigned char *cubin = NULL;
  size_t cubin_size = 0;
  char *jlog = NULL;
  cucore_status st = cc_jitlink_one(p->opts, arch, suffix, CUCORE_CODE_PTX, ptx, ptx_size, p->name,
                                    0, 0, &cubin, &cubin_size, &jlog);
  free(jlog);
  cucore_object *obj = NULL;
  if (st == CUCORE_OK) st = cc_object_new(CUCORE_CODE_CUBIN, cubin, cubin_size, p->name, &obj);
  if (st != CUCORE_OK) {
    free(ptx);
    return st;
  }
  obj->arch = arch;
  obj->ptx = (char *)ptx;
  obj->ptx_size = ptx_size;
  *out = obj;
  return CUCORE_OK;
}

static cucore_status compile_nvvm(cucore_program *p, cucore_code_type target, int arch,
                                  const char *suffix, cucore_object **out) {
  cucore_status st = cc_nvvm_load();
  if (st != CUCORE_OK) return st;
  nvvmProgram prog = NULL;
  unsigned char *code = NULL;
  size_t size = 0;
  st = nvvm_steps(p, &prog, target, arch, suffix, &code, &size);
  if (prog) NVVM(nvvmDestroyProgram)(&prog);
  if (st != CUCORE_OK) return st;
  cucore_code_type got = target == CUCORE_CODE_LTOIR ? CUCORE_CODE_LTOIR : CUCORE_CODE_PTX;
  if (got == CUCORE_CODE_PTX)
    while (size && code[size - 1] == 0) size--;
  if (target == CUCORE_CODE_CUBIN) return nvvm_cubin(p, arch, suffix, code, size, out);
  cucore_object *obj = NULL;
  st = cc_object_new(got, code, size, p->name, &obj); /* takes the code */
  if (st != CUCORE_OK) return st;
  obj->producer_version = cc_vm.version;
  *out = obj;
  return CUCORE_OK;
}

/* NVVM IR that calls a libdevice function (__nv_sinf, ...) gets libdevice, added lazily so that
 * only what is called is linked. IR that calls none is compiled without it and pays for a scan
 * of its bytes only: libdevice is not looked for, so a toolkit without it fails only the IR that
 * needs it (CUCORE_NOT_FOUND naming the paths tried). Adding libdevice costs libNVVM a few
 * milliseconds per compile even when nothing is taken from it, which is why it is not always
 * added. */
static cucore_status nvvm_libdevice(cucore_program *p) {
  p->use_libdevice = 0;
  if (p->type != CUCORE_CODE_NVVM) return CUCORE_OK;
  size_t len = 0;
  const char *sym = cc_libdevice_wanted(p->code, p->size, &len), *from = p->name;
  for (int i = 0; !sym && i < p->module_count; i++) {
    sym = cc_libdevice_wanted(p->modules[i].code, p->modules[i].size, &len);
    from = p->modules[i].name;
  }
  if (!sym) return CUCORE_OK;
  cc_sb need = {0};
  cc_sb_printf(&need, "cucore_program_compile: `%s` calls %.*s (a libdevice function)", from,
               (int)len, sym);
  cucore_status st = need.failed ? CUCORE_HOST_OUT_OF_MEMORY
                                 : cc_libdevice_get(p->opts->v[CUCORE_OPT_LIBDEVICE].sval,
                                                    cc_sb_text(&need), &p->libdevice);
  cc_sb_free(&need);
  p->use_libdevice = st == CUCORE_OK;
  return st;
}

/* ---- fatbin: one entry per gencode -------------------------------------------------------- */

/* One compile by the program's type: PTX, cubin or LTO-IR for one arch. */
static cucore_status compile_one(cucore_program *p, cucore_code_type target, int arch,
                                 const char *suffix, cucore_object **out) {
  switch (p->type) {
  case CUCORE_CODE_CUDA_CPP: return compile_nvrtc(p, target, arch, suffix, out);
  case CUCORE_CODE_PTX: return compile_ptx(p, target, arch, suffix, out);
  case CUCORE_CODE_NVVM: return compile_nvvm(p, target, arch, suffix, out);
  default: return cc_fail(CUCORE_INTERNAL, "program of type %d", (int)p->type);
  }
}

static cucore_status compile_fatbin(cucore_program *p, cucore_object **out) {
  if (cc_options_int(p->opts, CUCORE_OPT_LTO))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_program_compile: the lto option makes LTO-IR, and a fatbin cucore "
                   "builds holds cubins and PTX only; compile to ltoir for link-time "
                   "optimisation, or leave lto off for a fatbin");
  const cc_option_value *gen = &p->opts->v[CUCORE_OPT_GENCODE];
  char defaults[2][32];
  const char *targets[64];
  int n = 0;
  if (gen->count) {
    if (gen->count > 64)
      return cc_fail(CUCORE_INVALID_ARGUMENT, "a fatbin takes at most 64 gencode entries, %d given",
                     gen->count);
    for (int i = 0; i < gen->count; i++) targets[n++] = gen->items[i];
  } else {
    int arch = 0;
    char suffix[4] = "";
    cucore_status st = cc_options_arch(p->opts, &arch, suffix);
    if (st != CUCORE_OK) return st;
    snprintf(defaults[0], sizeof defaults[0], "sm_%d%s", arch, suffix);
    snprintf(defaults[1], sizeof defaults[1], "compute_%d", arch);
    targets[n++] = defaults[0];
    targets[n++] = defaults[1];
  }
  cucore_object *parts_obj[64] = {0};
  cc_fatbin_part parts[64];
  memset(parts, 0, sizeof parts);
  cucore_status st = CUCORE_OK;
  for (int i = 0; st == CUCORE_OK && i < n; i++) {
    int arch = 0, is_virtual = 0;
    char suffix[4] = "";
    cc_parse_arch(targets[i], &arch, suffix, &is_virtual);
    st = compile_one(p, is_virtual ? CUCORE_CODE_PTX : CUCORE_CODE_CUBIN, arch, suffix,
                     &parts_obj[i]);
    if (st != CUCORE_OK) break;
    cucore_object *o = parts_obj[i];
    parts[i].is_ptx = is_virtual;
    parts[i].data = o->code;
    parts[i].size = o->size;
    parts[i].arch = arch;
    parts[i].arch_suffix = suffix[0];
    if (is_virtual) {
      const char *v = strstr((const char *)o->code, ".version");
      if (!v || sscanf(v, ".version %d.%d", &parts[i].version_major, &parts[i].version_minor) != 2)
        st = cc_fail(CUCORE_INTERNAL, "the PTX for %s has no .version directive", targets[i]);
    } else {
      parts[i].version_major = 1; /* the cubin ELF format, as fatbinary records it */
      parts[i].version_minor = 8;
    }
  }
  unsigned char *fat = NULL;
  size_t fat_size = 0;
  if (st == CUCORE_OK) st = cc_fatbin_write(parts, n, &fat, &fat_size);
  cucore_object *obj = NULL;
  if (st == CUCORE_OK) {
    unsigned char *copy = cc_copy_code(fat, fat_size);
    free(fat);
    st = copy ? cc_object_new(CUCORE_CODE_FATBIN, copy, fat_size, p->name, &obj)
              : CUCORE_HOST_OUT_OF_MEMORY;
  }
  /* The name expressions' lowered names do not depend on the arch: take the first entry's. */
  if (st == CUCORE_OK && parts_obj[0] && parts_obj[0]->expr_count) {
    cucore_object *first = parts_obj[0];
    obj->exprs = first->exprs;
    obj->lowered = first->lowered;
    obj->expr_count = first->expr_count;
    first->exprs = first->lowered = NULL;
    first->expr_count = 0;
  }
  for (int i = 0; i < n; i++) cc_object_release(parts_obj[i]);
  if (st != CUCORE_OK) {
    cc_object_release(obj);
    return st;
  }
  *out = obj;
  return CUCORE_OK;
}

/* ---- objects as the compile cache keeps them ------------------------------------------------ */

static void object_retain(void *obj) { cc_object_retain(obj); }
static void object_release(void *obj) { cc_object_release(obj); }
static const cc_cache_value_ops object_ops = {object_retain, object_release};

/* What the cache stores of an object: a view that borrows the object's bytes. */
static cc_cache_record record_of(const cucore_object *o, const char *log) {
  cc_cache_record r = {0};
  r.type = o->type;
  r.arch = o->arch;
  memcpy(r.suffix, o->arch_suffix, sizeof r.suffix);
  r.producer_version = o->producer_version;
  r.code = o->code;
  r.size = o->size;
  r.ptx = o->ptx;
  r.ptx_size = o->ptx_size;
  r.log = (char *)log;
  r.expr_count = o->expr_count;
  r.exprs = o->exprs;
  r.lowered = o->lowered;
  return r;
}

/* An object named `name` made from a decoded record, taking its code, PTX and names (the
 * record keeps its log). */
static cucore_status object_from_record(cc_cache_record *r, const char *name, cucore_object **out) {
  cucore_object *o = NULL;
  cucore_status st = cc_object_new(r->type, r->code, r->size, name, &o);
  r->code = NULL; /* taken (freed on failure) */
  if (st != CUCORE_OK) return st;
  o->arch = r->arch;
  memcpy(o->arch_suffix, r->suffix, sizeof o->arch_suffix);
  o->producer_version = r->producer_version;
  o->ptx = r->ptx;
  o->ptx_size = r->ptx_size;
  o->expr_count = r->expr_count;
  o->exprs = r->exprs;
  o->lowered = r->lowered;
  r->ptx = NULL;
  r->exprs = r->lowered = NULL;
  r->expr_count = 0;
  *out = o;
  return CUCORE_OK;
}

/* The compile itself (the cache missed): a fatbin of one compile per entry, or one. */
static cucore_status compile_now(cucore_program *p, cucore_code_type target, int arch,
                                 const char *suffix, cucore_object **out) {
  if (target == CUCORE_CODE_FATBIN) return compile_fatbin(p, out);
  return compile_one(p, target, arch, suffix, out);
}

/* The target checked and the arch it compiles for: a fatbin with a gencode list names its
 * archs there; otherwise the arch decides (the option, or the current GPU's). */
static cucore_status compile_arch(const cucore_program *p, cucore_code_type target, int *arch,
                                  char suffix[4]) {
  cucore_status st = target_check(p, target);
  if (st != CUCORE_OK) return st;
  if (target != CUCORE_CODE_FATBIN || !p->opts->v[CUCORE_OPT_GENCODE].count)
    return cc_options_arch(p->opts, arch, suffix);
  return CUCORE_OK;
}

/* What the cache key of a compile is made of: the one list for the compile and for
 * cucore_program_get_cache_key, so that both give the same key. */
static cc_cache_request cache_request(const cucore_program *p, cucore_code_type target, int arch,
                                      const char *suffix) {
  cc_cache_request rq = {p->type,       target,  arch,
                         suffix,        p->name, p->code,
                         p->size,       p->opts, (const char *const *)p->exprs,
                         p->expr_count, NULL};
  return rq;
}

/* The key's fields beyond the request: the extra NVVM modules, and libdevice's identity when
 * the compile links it (its bytes are the toolkit's, like the compiler's). */
static void cache_modules(const cucore_program *p, cc_cache_job *job) {
  for (int i = 0; i < p->module_count; i++)
    cc_cache_job_add_module(job, p->modules[i].name, p->modules[i].code, p->modules[i].size,
                            p->modules[i].lazy);
  if (p->use_libdevice)
    cc_cache_job_add_module(job, "libdevice", p->libdevice.identity, strlen(p->libdevice.identity),
                            1);
}

cucore_status cucore_program_compile(cucore_program *p, cucore_code_type target,
                                     cucore_object **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_program_compile", "out");
  *out = NULL;
  CC_CHECK_HANDLE(p, PROGRAM, "cucore_program_compile", "prog");
  p->pch = CUCORE_PCH_NONE;
  int arch = 0;
  char suffix[4] = "";
  cucore_status st = compile_arch(p, target, &arch, suffix);
  if (st == CUCORE_OK) st = tools_check(p, target);
  if (st == CUCORE_OK) st = nvvm_libdevice(p);
  if (st != CUCORE_OK) return st;
  /* The compile cache: a hit skips the compile; a miss compiles, then stores. */
  int64_t t0 = cc_phase_clock();
  cc_cache_job job;
  cc_cache_request rq = cache_request(p, target, arch, suffix);
  cc_cache_job_begin(&job, &p->cache, &rq, &object_ops);
  cache_modules(p, &job);
  void *kept = NULL;
  char *cached_log = NULL;
  cc_cache_record rec;
  cc_cache_found found = cc_cache_job_lookup(&job, &kept, &cached_log, &rec);
  cc_phase_done(CUCORE_PHASE_CACHE_LOOKUP, t0);
  switch (found) {
  case CC_CACHE_FOUND_MEMORY: *out = kept; return set_log(p, cached_log);
  case CC_CACHE_FOUND_DISK:
    if (object_from_record(&rec, p->name, out) == CUCORE_OK) {
      *out = cc_cache_job_keep(&job, *out, (*out)->size, rec.log);
      set_log(p, rec.log);
      rec.log = NULL;
      cc_cache_record_free(&rec);
      return CUCORE_OK;
    }
    cc_cache_record_free(&rec); /* out of memory: compile instead */
    cc_begin();
    break;
  case CC_CACHE_FOUND_NONE: break;
  }
  t0 = cc_phase_clock();
  st = compile_now(p, target, arch, suffix, out);
  cc_phase_done(CUCORE_PHASE_COMPILE, t0);
  if (st == CUCORE_OK) {
    t0 = cc_phase_clock();
    char *kept_log = cc_pch_log_for_cache(p->log); /* NULL: the log as it is */
    cc_cache_record view = record_of(*out, kept_log ? kept_log : p->log);
    *out = cc_cache_job_store(&job, &view, *out);
    free(kept_log);
    cc_phase_done(CUCORE_PHASE_CACHE_STORE, t0);
  }
  return st;
}

/* ---- the compile cache's part of a program ------------------------------------------------ */

cucore_status cucore_program_get_cache_info(const cucore_program *prog, cucore_cache_info *out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_program_get_cache_info", "out");
  memset(out, 0, sizeof *out);
  out->path = out->reason = out->note = "";
  CC_CHECK_HANDLE(prog, PROGRAM, "cucore_program_get_cache_info", "prog");
  const cc_cache_state *s = &prog->cache;
  out->result = s->result;
  out->stored = s->stored;
  memcpy(out->key, s->key_hex, sizeof out->key);
  out->path = s->path ? s->path : "";
  out->reason = s->reason;
  out->note = s->note;
  return CUCORE_OK;
}

cucore_status cucore_program_get_pch_status(const cucore_program *prog, cucore_pch_status *out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_program_get_pch_status", "out");
  *out = CUCORE_PCH_NONE;
  CC_CHECK_HANDLE(prog, PROGRAM, "cucore_program_get_pch_status", "prog");
  *out = prog->pch;
  return CUCORE_OK;
}

cucore_status cucore_program_get_cache_key(cucore_program *prog, cucore_code_type target,
                                           char key[65], const char **reason) {
  cc_begin();
  if (reason) *reason = "";
  CC_CHECK_ARG(key, "cucore_program_get_cache_key", "key");
  key[0] = '\0';
  CC_CHECK_HANDLE(prog, PROGRAM, "cucore_program_get_cache_key", "prog");
  int arch = 0;
  char suffix[4] = "";
  cucore_status st = compile_arch(prog, target, &arch, suffix);
  if (st == CUCORE_OK) st = tools_check(prog, target);
  if (st == CUCORE_OK) st = nvvm_libdevice(prog); /* whether libdevice joins the key */
  if (st != CUCORE_OK) return st;
  cc_cache_job job;
  cc_cache_request rq = cache_request(prog, target, arch, suffix);
  cc_cache_job_begin_key(&job, &rq, prog->cache.digest);
  cache_modules(prog, &job);
  char why[CC_CACHE_NOTE_MAX] = "";
  free(prog->cache.key_reason);
  prog->cache.key_reason = NULL;
  if (cc_cache_job_key(&job, key, why, sizeof why)) return CUCORE_OK;
  if (!(prog->cache.key_reason = cc_strdup(why, "the cache key's reason")))
    return CUCORE_HOST_OUT_OF_MEMORY;
  if (reason) *reason = prog->cache.key_reason;
  return CUCORE_OK;
}

cucore_status cucore_program_set_cache(cucore_program *prog, int enabled) {
  cc_begin();
  CC_CHECK_HANDLE(prog, PROGRAM, "cucore_program_set_cache", "prog");
  if (enabled != 0 && enabled != 1)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_program_set_cache: enabled is %d; expected 0 (off) or 1 (on)", enabled);
  prog->cache.off = !enabled;
  return CUCORE_OK;
}

cucore_status cucore_program_set_cache_digest(cucore_program *prog, const char *digest) {
  cc_begin();
  CC_CHECK_HANDLE(prog, PROGRAM, "cucore_program_set_cache_digest", "prog");
  if (digest && !digest[0])
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_program_set_cache_digest: the digest is empty; give text that "
                   "changes whenever the files it stands for change, or NULL to remove it");
  char *copy = NULL;
  if (digest && !(copy = cc_strdup(digest, "a cache digest"))) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_cache_state *s = &prog->cache;
  free(s->digest);
  s->digest = copy;
  return CUCORE_OK;
}
