/*
 * cache.c -- the compile cache's in-process layer, the hook cucore_program_compile calls, and
 * the public API (cucore.h, section "compile cache").
 *
 * The in-process layer maps a key to the object this process made (or read) for it and hands
 * out a new reference to that same object, so its library is loaded once. It keeps at most
 * MEM_MAX_ENTRIES objects and MEM_MAX_BYTES of code, dropping the least recently used; objects
 * already handed out live on (they are reference counted).
 */
#define _GNU_SOURCE
#include "cache.h"
#include "object.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MEM_BUCKETS 256
#define MEM_MAX_ENTRIES 512
#define MEM_MAX_BYTES (256u * 1024 * 1024)

/* ---- the in-process layer ------------------------------------------------------------------- */

typedef struct mem_entry {
  unsigned char key[CC_CACHE_KEY_BYTES];
  cucore_object *obj; /* one reference held by the layer */
  char *log;          /* the compile log, given again on a hit */
  uint64_t last_use;
  struct mem_entry *next;
} mem_entry;

static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;
static mem_entry *mem_buckets[MEM_BUCKETS];
static size_t mem_count, mem_bytes;
static uint64_t mem_tick;

static mem_entry **mem_find(const unsigned char key[CC_CACHE_KEY_BYTES]) {
  mem_entry **pp = &mem_buckets[key[0]];
  while (*pp && memcmp((*pp)->key, key, CC_CACHE_KEY_BYTES) != 0) pp = &(*pp)->next;
  return pp;
}

static void mem_unlink(mem_entry **pp) {
  mem_entry *e = *pp;
  *pp = e->next;
  mem_count--;
  mem_bytes -= e->obj->size;
  cc_object_release(e->obj);
  free(e->log);
  free(e);
}

/* A new reference to the object held for `key` (and a copy of its log), or NULL. */
static cucore_object *mem_lookup(const unsigned char key[CC_CACHE_KEY_BYTES], char **log) {
  pthread_mutex_lock(&mem_lock);
  mem_entry *e = *mem_find(key);
  cucore_object *obj = NULL;
  if (e) {
    e->last_use = ++mem_tick;
    obj = e->obj;
    cc_object_retain(obj);
    *log = e->log ? strdup(e->log) : NULL;
  }
  pthread_mutex_unlock(&mem_lock);
  return obj;
}

/* Keeps `obj` for `key` and returns the object to hand out: `obj` itself, or the one another
 * thread kept first (then `obj` is released and a reference to that one returned). */
static cucore_object *mem_insert(const unsigned char key[CC_CACHE_KEY_BYTES],
                                 cucore_object *obj, const char *log) {
  pthread_mutex_lock(&mem_lock);
  mem_entry *e = *mem_find(key);
  if (e) {
    e->last_use = ++mem_tick;
    cc_object_retain(e->obj);
    cucore_object *kept = e->obj;
    pthread_mutex_unlock(&mem_lock);
    if (kept != obj) cc_object_release(obj);
    return kept;
  }
  e = calloc(1, sizeof *e);
  if (e) {
    memcpy(e->key, key, CC_CACHE_KEY_BYTES);
    e->obj = obj;
    e->log = log && log[0] ? strdup(log) : NULL;
    cc_object_retain(obj);
    e->last_use = ++mem_tick;
    e->next = mem_buckets[key[0]];
    mem_buckets[key[0]] = e;
    mem_count++;
    mem_bytes += obj->size;
    while (mem_count > 1 && (mem_count > MEM_MAX_ENTRIES || mem_bytes > MEM_MAX_BYTES)) {
      mem_entry **oldest = NULL;
      for (int b = 0; b < MEM_BUCKETS; b++)
        for (mem_entry **pp = &mem_buckets[b]; *pp; pp = &(*pp)->next)
          if (*pp != e && (!oldest || (*pp)->last_use < (*oldest)->last_use)) oldest = pp;
      if (!oldest) break;
      mem_unlink(oldest);
    }
  }
  pthread_mutex_unlock(&mem_lock);
  return obj;
}

void cc_cache_memory_clear(void) {
  pthread_mutex_lock(&mem_lock);
  for (int b = 0; b < MEM_BUCKETS; b++)
    while (mem_buckets[b]) mem_unlink(&mem_buckets[b]);
  pthread_mutex_unlock(&mem_lock);
}

/* ---- per-program state ---------------------------------------------------------------------- */

void cc_cache_state_free(cc_cache_state *s) {
  free(s->digest);
  free(s->path);
  s->digest = s->path = NULL;
}

static void state_reset(cc_cache_state *s) {
  s->result = CUCORE_CACHE_NOT_USED;
  s->stored = 0;
  s->key_hex[0] = s->reason[0] = s->note[0] = '\0';
  free(s->path);
  s->path = NULL;
}

/* ---- the compile hook ----------------------------------------------------------------------- */

void cc_cache_job_begin(cc_cache_job *job, cc_cache_state *state, const cc_cache_request *rq) {
  memset(job, 0, sizeof *job);
  job->state = state;
  job->name = rq->name;
  state_reset(state);
  if (state->off) {
    state->result = CUCORE_CACHE_DISABLED;
    snprintf(state->reason, sizeof state->reason,
             "the program turned it off with cucore_program_set_cache(prog, 0)");
    return;
  }
  cc_cache_settings_get(&job->settings);
  if (!job->settings.enabled) {
    state->result = CUCORE_CACHE_DISABLED;
    snprintf(state->reason, sizeof state->reason, "%s", job->settings.disabled_by);
    return;
  }
  if (rq->type == CUCORE_CODE_PTX && rq->target == CUCORE_CODE_PTX) {
    state->result = CUCORE_CACHE_UNCACHEABLE;
    snprintf(state->reason, sizeof state->reason,
             "PTX compiled to PTX is a copy of the source: there is nothing to cache");
    return;
  }
  cc_cache_request r = *rq;
  r.digest = state->digest;
  cc_cache_key_begin(&job->key, &r);
  job->active = 1;
}

void cc_cache_job_add_module(cc_cache_job *job, const char *name, const void *code, size_t size,
                             int lazy) {
  if (job->active) cc_cache_key_add_module(&job->key, name, code, size, lazy);
}

int cc_cache_job_lookup(cc_cache_job *job, cucore_object **out, char **log) {
  *out = NULL;
  *log = NULL;
  if (!job->active) return 0;
  cc_cache_state *st = job->state;
  const char *dir = job->settings.dir;
  if (job->key.uncacheable) {
    st->result = CUCORE_CACHE_UNCACHEABLE;
    snprintf(st->reason, sizeof st->reason, "%s", job->key.why);
    cc_cache_count(dir, CC_EV_UNCACHEABLE, 1);
    job->active = 0;
    cc_begin(); /* nothing the cache met is the compile's failure */
    return 0;
  }
  cc_cache_key_end(&job->key, job->digest);
  cc_hex(job->digest, CC_CACHE_KEY_BYTES, st->key_hex);
  if (dir[0]) {
    char path[PATH_MAX];
    cc_cache_entry_path(dir, job->digest, path, sizeof path);
    st->path = strdup(path);
  }
  cucore_object *obj = mem_lookup(job->digest, log);
  if (obj) {
    st->result = CUCORE_CACHE_HIT_MEMORY;
    cc_cache_count(dir, CC_EV_MEMORY_HIT, 1);
    *out = obj;
    job->active = 0;
    return 1;
  }
  if (cc_cache_disk_load(&job->settings, job->digest, job->name, &obj, log, st->note,
                         sizeof st->note)) {
    st->result = CUCORE_CACHE_HIT_DISK;
    *out = mem_insert(job->digest, obj, *log);
    job->active = 0;
    return 1;
  }
  st->result = CUCORE_CACHE_MISS;
  cc_cache_count(NULL, CC_EV_MISS, 1); /* the directory counts it at the store */
  cc_begin();
  return 0;
}

void cc_cache_job_store(cc_cache_job *job, cucore_object **obj, const char *log) {
  if (!job->active || !*obj) return;
  cc_cache_state *st = job->state;
  char note[CC_CACHE_NOTE_MAX] = "";
  st->stored = cc_cache_disk_store(&job->settings, job->digest, *obj, log, note, sizeof note);
  cc_cache_count_dir(job->settings.dir, CC_EV_MISS, 1);
  if (note[0]) {
    size_t used = strlen(st->note);
    snprintf(st->note + used, sizeof st->note - used, "%s%s", used ? "; " : "", note);
  }
  *obj = mem_insert(job->digest, *obj, log);
  job->active = 0;
}

/* ---- public API ----------------------------------------------------------------------------- */

const char *cucore_cache_result_name(cucore_cache_result result) {
  switch (result) {
  case CUCORE_CACHE_NOT_USED: return "not_used";
  case CUCORE_CACHE_DISABLED: return "disabled";
  case CUCORE_CACHE_UNCACHEABLE: return "uncacheable";
  case CUCORE_CACHE_MISS: return "miss";
  case CUCORE_CACHE_HIT_DISK: return "hit_disk";
  case CUCORE_CACHE_HIT_MEMORY: return "hit_memory";
  }
  return "unknown";
}

cucore_status cucore_program_cache_info(const cucore_program *prog, cucore_cache_info *out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_program_cache_info", "out");
  memset(out, 0, sizeof *out);
  out->path = out->reason = out->note = "";
  CC_CHECK_ARG(prog, "cucore_program_cache_info", "prog");
  const cc_cache_state *s = cc_program_cache_state_const(prog);
  out->result = s->result;
  out->stored = s->stored;
  memcpy(out->key, s->key_hex, sizeof out->key);
  out->path = s->path ? s->path : "";
  out->reason = s->reason;
  out->note = s->note;
  return CUCORE_OK;
}

cucore_status cucore_program_set_cache(cucore_program *prog, int enabled) {
  cc_begin();
  CC_CHECK_ARG(prog, "cucore_program_set_cache", "prog");
  if (enabled != 0 && enabled != 1)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_program_set_cache: enabled is %d; expected 0 (off) or 1 (on)", enabled);
  cc_program_cache_state(prog)->off = !enabled;
  return CUCORE_OK;
}

cucore_status cucore_program_set_cache_digest(cucore_program *prog, const char *digest) {
  cc_begin();
  CC_CHECK_ARG(prog, "cucore_program_set_cache_digest", "prog");
  if (digest && !digest[0])
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_program_set_cache_digest: the digest is empty; give text that "
                   "changes whenever the files it stands for change, or NULL to remove it");
  char *copy = NULL;
  if (digest && !(copy = cc_strdup(digest, "a cache digest"))) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_cache_state *s = cc_program_cache_state(prog);
  free(s->digest);
  s->digest = copy;
  return CUCORE_OK;
}

cucore_status cucore_cache_stats_get(cucore_cache_stats *out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_cache_stats_get", "out");
  memset(out, 0, sizeof *out);
  cc_cache_settings s;
  cc_cache_settings_get(&s);
  out->enabled = s.enabled;
  snprintf(out->dir, sizeof out->dir, "%s", s.dir);
  out->max_bytes = s.max_bytes;
  cc_cache_disk_usage(s.dir, &out->entries, &out->bytes);
  cc_cache_counters_process(&out->process);
  cc_cache_counters_dir(s.dir, &out->total);
  return CUCORE_OK;
}

cucore_status cucore_cache_set_dir(const char *dir) {
  cc_begin();
  if (dir && !dir[0])
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_cache_set_dir: the directory is \"\"; give a path, or NULL to use "
                   "the environment's (CUCORE_CACHE_DIR, XDG_CACHE_HOME, HOME)");
  if (dir && strlen(dir) >= PATH_MAX - 80)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_cache_set_dir: the path is %zu bytes; at most %d fit", strlen(dir),
                   PATH_MAX - 81);
  if (dir && dir[0] != '/') { /* relative to the working directory of this call */
    char cwd[PATH_MAX], abs[PATH_MAX + PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
      return cc_fail(cc_status(CUCORE_IO_ERROR, CUCORE_SOURCE_ERRNO, errno),
                     "cucore_cache_set_dir: `%s` is relative and the working directory cannot "
                     "be read: %s",
                     dir, strerror(errno));
    snprintf(abs, sizeof abs, "%s/%s", cwd, dir);
    return cc_cache_settings_set_dir(abs);
  }
  return cc_cache_settings_set_dir(dir);
}

cucore_status cucore_cache_set_enabled(int enabled) {
  cc_begin();
  if (enabled < -1 || enabled > 1)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_cache_set_enabled: %d; expected 1 (on), 0 (off) or -1 (the default)",
                   enabled);
  cc_cache_settings_set_enabled(enabled);
  return CUCORE_OK;
}

cucore_status cucore_cache_set_max_bytes(uint64_t max_bytes) {
  cc_begin();
  if (max_bytes && max_bytes < CC_CACHE_MIN_MAX_BYTES)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_cache_set_max_bytes: %llu bytes is below the minimum of %llu (or 0 "
                   "for the default)",
                   (unsigned long long)max_bytes, CC_CACHE_MIN_MAX_BYTES);
  cc_cache_settings_set_max_bytes(max_bytes);
  return CUCORE_OK;
}

cucore_status cucore_cache_clear(uint64_t *entries, uint64_t *bytes) {
  cc_begin();
  if (entries) *entries = 0;
  if (bytes) *bytes = 0;
  cc_cache_memory_clear();
  cc_cache_settings s;
  cc_cache_settings_get(&s);
  if (!s.dir[0]) return CUCORE_OK;
  uint64_t n = 0, b = 0;
  if (cc_cache_disk_clear(s.dir, &n, &b) != 0)
    return cc_fail(cc_status(CUCORE_IO_ERROR, CUCORE_SOURCE_ERRNO, errno),
                   "cucore_cache_clear: cannot read the cache directory `%s`: %s", s.dir,
                   strerror(errno));
  if (entries) *entries = n;
  if (bytes) *bytes = b;
  return CUCORE_OK;
}
