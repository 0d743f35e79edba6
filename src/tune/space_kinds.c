/* space_kinds.c -- parameters by name, the block-size names, and what each parameter is to a
 * compile: a template argument, a -D define, or used only in launch expressions (then a new
 * value needs no compile). */
#include "tune/space_file.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char *const DEFAULT_BLOCK_NAMES[3] = {"block_size_x", "block_size_y", "block_size_z"};

/* ---- parameters by name: open addressing over their indices --------------------------------- */

static uint64_t name_hash(const char *name, size_t len) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)name[i]) * 0x100000001b3ull;
  return h;
}

static void place(size_t *slots, size_t cap, const cucore_tune_space *s, size_t i) {
  const char *name = s->params[i].name;
  size_t at = (size_t)name_hash(name, strlen(name)) & (cap - 1);
  while (slots[at]) at = (at + 1) & (cap - 1);
  slots[at] = i + 1;
}

cucore_status cc_tune_names_reserve(cucore_tune_space *s, size_t n) {
  if (s->names_cap >= 2 * n && s->names) return CUCORE_OK;
  size_t cap = s->names_cap ? s->names_cap : 16;
  while (cap < 2 * n) cap *= 2;
  size_t *slots = cc_calloc(cap, sizeof *slots, "a tune space's parameter names");
  if (!slots) return CUCORE_HOST_OUT_OF_MEMORY;
  for (size_t i = 0; i < s->nparams; i++) place(slots, cap, s, i);
  free(s->names);
  s->names = slots;
  s->names_cap = cap;
  return CUCORE_OK;
}

void cc_tune_names_add(cucore_tune_space *s, size_t i) { place(s->names, s->names_cap, s, i); }

int cc_tune_find_param(void *space, const char *name, size_t len) {
  const cucore_tune_space *s = space;
  if (!s->names) return -1;
  for (size_t at = (size_t)name_hash(name, len) & (s->names_cap - 1); s->names[at];
       at = (at + 1) & (s->names_cap - 1)) {
    const char *p = s->params[s->names[at] - 1].name;
    if (strlen(p) == len && memcmp(p, name, len) == 0) return (int)(s->names[at] - 1);
  }
  return -1;
}

const char *cc_tune_block_name(const cucore_tune_space *s, int d) {
  return s->block_names[d] ? s->block_names[d] : DEFAULT_BLOCK_NAMES[d];
}

/* ---- kinds -------------------------------------------------------------------------------- */

static int word_in(const char *text, const char *word) {
  size_t n = strlen(word);
  for (const char *p = text; (p = strstr(p, word)) != NULL; p += n) {
    int before = p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
    int after = isalnum((unsigned char)p[n]) || p[n] == '_';
    if (!before && !after) return 1;
  }
  return 0;
}

static int in_template(const char *kernel, const char *name) {
  if (!kernel) return 0;
  size_t n = strlen(name);
  for (const char *p = kernel; (p = strchr(p, '{')) != NULL; p++)
    if (strncmp(p + 1, name, n) == 0 && p[1 + n] == '}') return 1;
  return 0;
}

static int in_launch(const cucore_tune_space *s, int var) {
  for (int k = 0; k < CC_TUNE_SLOTS; k++)
    for (int i = 0; i < s->slot[k].n; i++)
      if (cc_expr_uses(&s->slot[k].e[i], var)) return 1;
  for (int d = 0; d < 3; d++)
    if (s->slot[CUCORE_TUNE_BLOCK].n == 0 &&
        strcmp(cc_tune_block_name(s, d), s->params[var].name) == 0)
      return 1;
  return 0;
}

/* With a space file's "defines" (Kernel Tuner's), what is defined is exactly those: a parameter
 * reaches the code only through a define whose text names it (or a template hole). */
static int has_defines(const cucore_tune_space *s) { return s->extras && s->extras->has_defines; }

static int in_defines(const cucore_tune_space *s, const char *name) {
  for (size_t d = 0; has_defines(s) && d < s->extras->ndefs; d++)
    if (!s->extras->defs[d].literal && word_in(s->extras->defs[d].text, name)) return 1;
  return 0;
}

unsigned cc_tune_param_uses(const cucore_tune_space *s, size_t i) {
  const char *name = s->params[i].name;
  unsigned u = 0;
  if (has_defines(s) ? in_defines(s, name) : s->source && word_in(s->source, name))
    u |= CUCORE_TUNE_USED_SOURCE;
  if (in_launch(s, (int)i)) u |= CUCORE_TUNE_USED_LAUNCH;
  if (in_template(s->kernel, name)) u |= CUCORE_TUNE_USED_TEMPLATE;
  for (size_t r = 0; r < s->nrestr && !(u & CUCORE_TUNE_USED_RESTRICTION); r++)
    if (cc_expr_uses(&s->restr[r], (int)i)) u |= CUCORE_TUNE_USED_RESTRICTION;
  return u;
}

void cc_tune_resolve_kind(cucore_tune_space *s, size_t i) {
  cc_tparam *p = &s->params[i];
  p->uses = cc_tune_param_uses(s, i);
  p->resolved = p->kind;
  if (p->kind != CUCORE_TUNE_PARAM_AUTO) return;
  if (in_template(s->kernel, p->name))
    p->resolved = CUCORE_TUNE_PARAM_TEMPLATE;
  else if (has_defines(s)) /* defined only through a define that names it */
    p->resolved = in_defines(s, p->name) ? CUCORE_TUNE_PARAM_DEFINE : CUCORE_TUNE_PARAM_LAUNCH_ONLY;
  else if (s->source && !word_in(s->source, p->name) && in_launch(s, (int)i))
    p->resolved = CUCORE_TUNE_PARAM_LAUNCH_ONLY;
  else
    p->resolved = CUCORE_TUNE_PARAM_DEFINE;
}

void cc_tune_resolve_kinds(cucore_tune_space *s) {
  for (size_t i = 0; i < s->nparams; i++) cc_tune_resolve_kind(s, i);
}
