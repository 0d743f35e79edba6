/*
 * cache_job.c -- the compile cache's in-process layer and the hook cucore_program_compile
 * calls (a job: key, lookup in this process then on disk, store).
 *
 * The in-process layer maps a key to the value this process made (or read) for it -- Program's
 * object -- and hands out a new reference to that same value, so a library is loaded once. It
 * keeps at most MEM_MAX_ENTRIES values and MEM_MAX_BYTES of code, dropping the least recently
 * used; values already handed out live on (the caller counts references).
 */
#define _GNU_SOURCE
#include "compile/cache.h"

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
  void *value; /* one reference held by the layer */
  const cc_cache_value_ops *ops;
  size_t size; /* bytes of code, for the cap */
  char *log;   /* the compile log, given again on a hit */
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
  mem_bytes -= e->size;
  e->ops->release(e->value);
  free(e->log);
  free(e);
}

/* A new reference to the value held for `key` (and a copy of its log), or NULL. */
static void *mem_lookup(const unsigned char key[CC_CACHE_KEY_BYTES], char **log) {
  pthread_mutex_lock(&mem_lock);
  mem_entry *e = *mem_find(key);
  void *value = NULL;
  if (e) {
    e->last_use = ++mem_tick;
    value = e->value;
    e->ops->retain(value);
    *log = e->log ? cc_raw_strdup(e->log) : NULL;
  }
  pthread_mutex_unlock(&mem_lock);
  return value;
}

/* Keeps `value` for `key` and returns the value to hand out: `value` itself, or the one
 * another thread kept first (then `value` is released and a reference to that one returned). */
static void *mem_insert(const unsigned char key[CC_CACHE_KEY_BYTES], void *value, size_t size,
                        const cc_cache_value_ops *ops, const char *log) {
  pthread_mutex_lock(&mem_lock);
  mem_entry *e = *mem_find(key);
  if (e) {
    e->last_use = ++mem_tick;
    e->ops->retain(e->value);
    void *kept = e->value;
    pthread_mutex_unlock(&mem_lock);
    if (kept != value) ops->release(value);
    return kept;
  }
  e = cc_raw_calloc(1, sizeof *e);
  if (e) {
    memcpy(e->key, key, CC_CACHE_KEY_BYTES);
    e->value = value;
    e->ops = ops;
    e->size = size;
    e->log = log && log[0] ? cc_raw_strdup(log) : NULL;
    ops->retain(value);
    e->last_use = ++mem_tick;
    e->next = mem_buckets[key[0]];
    mem_buckets[key[0]] = e;
    mem_count++;
    mem_bytes += size;
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
  return value;
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
  free(s->key_reason);
  s->digest = s->path = s->key_reason = NULL;
}

static void state_reset(cc_cache_state *s) {
  s->result = CUCORE_CACHE_NOT_USED;
  s->stored = 0;
  s->key_hex[0] = s->reason[0] = s->note[0] = '\0';
  free(s->path);
  s->path = NULL;
}

/* ---- the compile hook ----------------------------------------------------------------------- */

static const char ptx_copy[] =
    "PTX compiled to PTX is a copy of the source: there is nothing to cache";

static int ptx_to_ptx(const cc_cache_request *rq) {
  return rq->type == CUCORE_CODE_PTX && rq->target == CUCORE_CODE_PTX;
}

/* Appends `more` to the state's note ("; " between). */
static void add_note(cc_cache_state *st, const char *more) {
  if (!more[0]) return;
  size_t used = strlen(st->note);
  snprintf(st->note + used, sizeof st->note - used, "%s%s", used ? "; " : "", more);
}

void cc_cache_job_begin(cc_cache_job *job, cc_cache_state *state, const cc_cache_request *rq,
                        const cc_cache_value_ops *ops) {
  memset(job, 0, sizeof *job);
  job->state = state;
  job->ops = ops;
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
    cc_format_field(state->reason, sizeof state->reason, "%s", job->settings.disabled_by);
    return;
  }
  if (ptx_to_ptx(rq)) {
    state->result = CUCORE_CACHE_UNCACHEABLE;
    snprintf(state->reason, sizeof state->reason, "%s", ptx_copy);
    return;
  }
  unsigned flags = 0;
  job->backend = cc_cache_backend_installed(&flags);
  job->disk = !(job->backend && (flags & CUCORE_CACHE_BACKEND_ONLY));
  if (!job->disk) job->settings.dir[0] = '\0';
  cc_cache_request r = *rq;
  r.digest = state->digest;
  cc_cache_key_begin(&job->key, &r);
  job->active = 1;
}

void cc_cache_job_begin_key(cc_cache_job *job, const cc_cache_request *rq, const char *digest) {
  memset(job, 0, sizeof *job);
  job->active = 1;
  if (ptx_to_ptx(rq)) {
    job->key.uncacheable = 1;
    snprintf(job->key.why, sizeof job->key.why, "%s", ptx_copy);
    return;
  }
  cc_cache_request r = *rq;
  r.digest = digest;
  cc_cache_key_begin(&job->key, &r);
}

int cc_cache_job_key(cc_cache_job *job, char hex[2 * CC_CACHE_KEY_BYTES + 1], char *why,
                     size_t why_cap) {
  hex[0] = '\0';
  job->active = 0;
  if (job->key.uncacheable) {
    cc_format_field(why, why_cap, "%s", job->key.why);
    cc_begin(); /* what the key met is no failure of the call */
    return 0;
  }
  cc_cache_key_end(&job->key, job->digest);
  cc_hex(job->digest, CC_CACHE_KEY_BYTES, hex);
  return 1;
}

void cc_cache_job_add_module(cc_cache_job *job, const char *name, const void *code, size_t size,
                             int lazy) {
  if (job->active) cc_cache_key_add_module(&job->key, name, code, size, lazy);
}

cc_cache_found cc_cache_job_lookup(cc_cache_job *job, void **value, char **log,
                                   cc_cache_record *rec) {
  *value = NULL;
  *log = NULL;
  memset(rec, 0, sizeof *rec);
  if (!job->active) return CC_CACHE_FOUND_NONE;
  cc_cache_state *st = job->state;
  const char *dir = job->settings.dir;
  if (job->key.uncacheable) {
    st->result = CUCORE_CACHE_UNCACHEABLE;
    cc_format_field(st->reason, sizeof st->reason, "%s", job->key.why);
    cc_cache_count(dir, CC_EV_UNCACHEABLE, 1);
    job->active = 0;
    cc_begin(); /* nothing the cache met is the compile's failure */
    return CC_CACHE_FOUND_NONE;
  }
  cc_cache_key_end(&job->key, job->digest);
  cc_hex(job->digest, CC_CACHE_KEY_BYTES, st->key_hex);
  if (dir[0]) {
    char path[PATH_MAX];
    cc_cache_entry_path(dir, job->digest, path, sizeof path);
    st->path = cc_raw_strdup(path);
  }
  if ((*value = mem_lookup(job->digest, log)) != NULL) {
    st->result = CUCORE_CACHE_HIT_MEMORY;
    cc_cache_count(dir, CC_EV_MEMORY_HIT, 1);
    job->active = 0;
    return CC_CACHE_FOUND_MEMORY;
  }
  if (job->disk &&
      cc_cache_disk_load(&job->settings, job->digest, rec, st->note, sizeof st->note)) {
    st->result = CUCORE_CACHE_HIT_DISK;
    return CC_CACHE_FOUND_DISK; /* still active: cc_cache_job_keep follows */
  }
  if (job->backend) {
    char note[CC_CACHE_NOTE_MAX] = "";
    int hit = cc_cache_backend_load(job->digest, job->disk ? &job->settings : NULL, rec, note,
                                    sizeof note);
    add_note(st, note);
    if (hit) {
      st->result = CUCORE_CACHE_HIT_BACKEND;
      return CC_CACHE_FOUND_DISK;
    }
  }
  st->result = CUCORE_CACHE_MISS;
  cc_cache_count(NULL, CC_EV_MISS, 1); /* the directory counts it at the store */
  cc_begin();
  return CC_CACHE_FOUND_NONE;
}

void *cc_cache_job_keep(cc_cache_job *job, void *value, size_t size, const char *log) {
  if (!job->active || !value) return value;
  job->active = 0;
  return mem_insert(job->digest, value, size, job->ops, log);
}

void *cc_cache_job_store(cc_cache_job *job, const cc_cache_record *rec, void *value) {
  if (!job->active || !value) return value;
  cc_cache_state *st = job->state;
  char note[CC_CACHE_NOTE_MAX] = "";
  int backend = job->backend, disk = job->disk;
  size_t size = 0;
  unsigned char *entry = cc_cache_entry_encode(job->digest, rec, &size);
  if (!entry) {
    add_note(st, "out of host memory encoding the cache entry; not stored");
    cc_cache_count(disk ? job->settings.dir : NULL, CC_EV_ERROR, 1);
  } else {
    if (disk) {
      st->stored = cc_cache_disk_store_entry(&job->settings, job->digest, entry, size, note,
                                             sizeof note);
      add_note(st, note);
    }
    note[0] = '\0';
    if (backend) cc_cache_backend_store(job->digest, entry, size, note, sizeof note);
    add_note(st, note);
    free(entry);
  }
  if (disk) cc_cache_count_dir(job->settings.dir, CC_EV_MISS, 1);
  return cc_cache_job_keep(job, value, rec->size, rec->log);
}
