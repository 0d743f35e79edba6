/* options.h -- the option table and rendering of options into each tool's flags. */
#ifndef CUCORE_OPTIONS_H
#define CUCORE_OPTIONS_H

#include "loader/loader.h"

typedef enum cc_tool { CC_TOOL_NVRTC, CC_TOOL_NVJITLINK, CC_TOOL_NVVM } cc_tool;

/* A NULL-terminated argv owned by the caller (cc_argv_free). */
typedef struct cc_argv {
  char **v;
  int n;
  size_t cap; /* cc_grow's capacity */
} cc_argv;

cucore_status cc_argv_push(cc_argv *a, const char *fmt, ...) CC_PRINTF(2, 3);
void cc_argv_free(cc_argv *a);

typedef struct cc_header {
  char *name;
  char *contents;
} cc_header;

typedef struct cc_option_value {
  int is_set;
  int ival;
  char *sval;
  char **items; /* a list's values */
  int count;
  size_t items_cap; /* cc_grow's capacity of items */
} cc_option_value;

struct cucore_options {
  cc_handle hdr; /* first: the magic word of base/handle.h */
  cc_option_value v[CUCORE_OPT_COUNT];
  cc_header *headers;
  int header_count;
  size_t header_cap;   /* cc_grow's capacity of headers */
  char *canonical;     /* cache of cucore_options_canonical */
  char *key_canonical; /* cache of cc_options_key_canonical */
};

/* Renders the options for `tool`. `arch` is the resolved arch number (e.g. 90) with its
 * suffix ("", "a", "f"); `virtual_arch` asks for compute_XX instead of sm_XX. */
cucore_status cc_options_render(const cucore_options *o, cc_tool tool, int arch,
                                const char *arch_suffix, int virtual_arch, cc_argv *out);
/* Resolves the arch: the option when set (parsed into number + suffix), otherwise the current
 * GPU's; fails with a clear message when neither exists. */
cucore_status cc_options_arch(const cucore_options *o, int *arch, char suffix[4]);
/* Parses "sm_90a" / "compute_90" / "90": number and suffix; returns 0 when malformed. */
int cc_parse_arch(const char *s, int *arch, char suffix[4], int *is_virtual);
/* A bool/int option's value (its default when unset). */
int cc_options_int(const cucore_options *o, cucore_option opt);

/* The flags as the compile cache's key sees them: cc_options_render without the options the key
 * leaves out (cc_options_in_key) and without checking the tools' versions. */
cucore_status cc_options_render_key(const cucore_options *o, cc_tool tool, int arch,
                                    const char *arch_suffix, int virtual_arch, cc_argv *out);
/* The canonical text of the options the key holds (cucore_options_canonical less the options
 * the key leaves out); owned by `o` until its next change. */
cucore_status cc_options_key_canonical(const cucore_options *o, const char **out);
/* 0 for an option that changes how fast the code is made, not the code (the PCH options). */
int cc_options_in_key(cucore_option opt);
/* CUCORE_INVALID_ARGUMENT when a newer option is given that none of `tools` (bits
 * 1 << cc_tool) has a flag for: `fn` names the call, `subject` what is compiled ("`k.ptx`"). */
cucore_status cc_options_check_tools(const cucore_options *o, unsigned tools, const char *fn,
                                     const char *subject);
/* 1 when an option makes the compiler write a file or log text a cache hit would not (time,
 * fdevice-time-trace, create-pch), with the reason in `why`; 0 otherwise. */
int cc_options_side_files(const cucore_options *o, char *why, size_t cap);

#endif
