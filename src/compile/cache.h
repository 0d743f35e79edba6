/*
 * compile/cache.h -- the compile cache. It stores and finds bytes by key: a compile's result
 * goes in as a cc_cache_record (plain bytes and numbers) and comes back as one; it knows
 * nothing of cucore_program or cucore_object. Program (program.c) asks it, never the other way
 * round. Eight files, one job each:
 *   cache_key.c    the key: what a compile depends on, and whether the key can see all of it
 *   cache_scan.c   the include scanner the key uses: which files a CUDA C++ text names
 *   cache_entry.c  the entry file format: encode a record, decode and check an entry
 *   cache_disk.c   the directory: settings, atomic writes, reads, eviction, counters on disk
 *   cache_config.c the configuration checked (cucore_cache_config_problem)
 *   cache_job.c    the in-process layer and the compile hook (a job)
 *   cache_backend.c the back end a program plugs in (cucore_cache_set_backend): entries got
 *                  and put through its callbacks, checked as the directory's are
 *   cache_api.c    the public cache API: settings, statistics, clearing
 * The cache never fails a compile and never records a failure with cc_fail: what goes wrong
 * becomes a note in the caller's cc_cache_state (cucore_program_get_cache_info). The one record
 * is cc_grow's, when the list of entries a walk of the directory makes cannot grow (the walk
 * then stops: a compile still succeeds, cucore_cache_clear fails with it).
 */
#ifndef CUCORE_CACHE_H
#define CUCORE_CACHE_H

#include "base/sha256.h"
#include "toolchain/options.h"

#include <stdint.h>

#define CC_CACHE_FORMAT_VERSION 2u
#define CC_CACHE_KEY_BYTES 32
#define CC_CACHE_NOTE_MAX 1024
#define CC_CACHE_DEFAULT_MAX_BYTES (1024ull * 1024 * 1024)
#define CC_CACHE_MIN_MAX_BYTES 4096ull

/* ---- per program (a field of struct cucore_program) ----------------------------------- */

typedef struct cc_cache_state {
  int off;      /* cucore_program_set_cache(prog, 0) */
  char *digest; /* cucore_program_set_cache_digest */
  /* the last compile, for cucore_program_get_cache_info */
  cucore_cache_result result;
  int stored;
  char key_hex[2 * CC_CACHE_KEY_BYTES + 1];
  char *path;
  char reason[CC_CACHE_NOTE_MAX];
  char note[CC_CACHE_NOTE_MAX];
  char *key_reason; /* cucore_program_get_cache_key's reason, when it gave no key */
} cc_cache_state;

void cc_cache_state_free(cc_cache_state *s);

/* ---- what is stored ------------------------------------------------------------------- */

/* What one compile made, as the cache keeps it. Decoded records own every pointer
 * (cc_cache_record_free); records handed to the cache are only read. */
typedef struct cc_cache_record {
  cucore_code_type type; /* PTX, cubin, LTO-IR or fatbin */
  int arch;
  char suffix[4];
  int producer_version;
  unsigned char *code; /* decoded: size + 1 bytes, NUL at [size] */
  size_t size;
  char *ptx; /* the PTX kept beside the code (parameter types), or NULL */
  size_t ptx_size;
  char *log; /* the compile log, or NULL */
  int expr_count;
  char **exprs, **lowered; /* name expressions and their lowered names */
} cc_cache_record;

/* Frees what a decoded record owns; the record is zeroed. */
void cc_cache_record_free(cc_cache_record *r);

/* ---- the key (cache_key.c) ------------------------------------------------------------ */

/* What one compile is made of. Everything is borrowed. */
typedef struct cc_cache_request {
  cucore_code_type type;   /* CUDA C++, PTX or NVVM */
  cucore_code_type target; /* PTX, cubin or LTO-IR, as asked */
  int arch;
  const char *suffix;
  const char *name;
  const unsigned char *code;
  size_t size;
  const cucore_options *opts;
  const char *const *exprs;
  int expr_count;
  const char *digest; /* the caller's digest, or NULL */
} cc_cache_request;

/* A key being computed: fields go into a SHA-256 as label + length + bytes. */
typedef struct cc_cache_key {
  cc_sha256 sha;
  int uncacheable; /* 1 when the key cannot see everything the compile reads */
  char why[CC_CACHE_NOTE_MAX];
} cc_cache_key;

/* Starts a key with every field of `rq` (and the compiler's identity). Sets key->uncacheable
 * with the reason when the compile reads what the key cannot see. Returns 0, or -1 when it
 * ran out of memory (then key->why says so). */
int cc_cache_key_begin(cc_cache_key *key, const cc_cache_request *rq);
/* Adds an extra NVVM module. */
void cc_cache_key_add_module(cc_cache_key *key, const char *name, const void *code, size_t size,
                             int lazy);
/* Finishes the key. */
void cc_cache_key_end(cc_cache_key *key, unsigned char out[CC_CACHE_KEY_BYTES]);
/* One labelled, length-prefixed field (also used by the tests). */
void cc_cache_key_field(cc_sha256 *sha, const char *label, const void *data, size_t size);

/* ---- the include scanner (cache_scan.c) ------------------------------------------------- */

/* A file a CUDA C++ text names, as the preprocessor reads it (translation phases 1-3). */
typedef enum cc_include_kind {
  CC_INCLUDE_QUOTED, /* "name": `text` is the name */
  CC_INCLUDE_ANGLE,  /* <name>: `text` is the name */
  CC_INCLUDE_UNKNOWN /* a macro, a computed name, or text the scanner cannot read with
                         certainty: `text` is what follows `how` (at most 80 bytes) */
} cc_include_kind;

typedef struct cc_include_ref {
  cc_include_kind kind;
  const char *how; /* "#include", "#include_next", "__has_include", "__has_include_next", or
                      what makes the text unreadable */
  const char *text;
  size_t len;
} cc_include_ref;

/* Called for each file named; a non-zero return stops the scan. */
typedef int (*cc_include_fn)(void *ctx, const cc_include_ref *ref);
/* Calls `fn` for every file `text` names with #include, #include_next, __has_include or
 * __has_include_next, whatever the spelling (comments, line splices, `%:`, `??=`). Returns 0,
 * or -1 when out of memory. */
int cc_cache_scan_includes(const char *text, size_t n, cc_include_fn fn, void *ctx);

typedef enum cc_cache_tool { CC_CACHE_NVRTC, CC_CACHE_NVJITLINK, CC_CACHE_NVVM } cc_cache_tool;

/* ---- the entry format (cache_entry.c) ------------------------------------------------- */

#define CC_CACHE_MAGIC "CUCACHE\x1a"
#define CC_CACHE_HEADER_BYTES 64u

/* Serialises `rec` into one entry for `key`. Returns a malloc'd buffer and its size, or NULL
 * when out of memory. */
unsigned char *cc_cache_entry_encode(const unsigned char key[CC_CACHE_KEY_BYTES],
                                     const cc_cache_record *rec, size_t *size);
/* Checks an entry (magic, version, lengths, key, checksum, every field in bounds) and fills
 * *out with what it holds (owned: cc_cache_record_free). Returns 0, or -1 with the reason in
 * `why` (then *out holds nothing). */
int cc_cache_entry_decode(const unsigned char *data, size_t size,
                          const unsigned char key[CC_CACHE_KEY_BYTES], cc_cache_record *out,
                          char *why, size_t why_cap);

/* ---- the directory (cache_disk.c) ------------------------------------------------------ */

/* The settings in force now (API, then environment, then defaults). */
typedef struct cc_cache_settings {
  int enabled;
  char disabled_by[256]; /* when !enabled */
  char dir[4096];        /* "" when none */
  const char *dir_from;  /* what chose it: "cucore_cache_set_dir", or the variable's name
                            ("CUCORE_CACHE_DIR", "XDG_CACHE_HOME", "HOME"); NULL for none */
  uint64_t max_bytes;
} cc_cache_settings;

void cc_cache_settings_get(cc_cache_settings *s);
cucore_status cc_cache_settings_set_dir(const char *dir);
void cc_cache_settings_set_enabled(int enabled);
void cc_cache_settings_set_max_bytes(uint64_t max_bytes);

/* Parses a size: digits, optionally K, M or G (then optionally B or iB). Returns 0 with
 * *out, -1 when malformed, -2 when it does not fit in 64 bits. */
int cc_cache_parse_size(const char *s, uint64_t *out);
/* Checks the configuration (cache_config.c): writes what is wrong to `msg` (variables named,
 * problems joined by "; ") and returns 1, or returns 0 with msg "". Reads only. */
int cc_cache_config_check(char *msg, size_t cap);

/* The entry path of a key in `dir`. */
void cc_cache_entry_path(const char *dir, const unsigned char key[CC_CACHE_KEY_BYTES], char *out,
                         size_t cap);

/* Reads an entry. Returns 1 with the record on a hit; 0 on a miss (no entry, or a damaged
 * one, which is removed and noted in `note`). Touches the entry on a hit. */
int cc_cache_disk_load(const cc_cache_settings *s, const unsigned char key[CC_CACHE_KEY_BYTES],
                       cc_cache_record *out, char *note, size_t note_cap);
/* Writes an entry (temporary file, flush, rename), then keeps the directory under the cap.
 * Returns 1 when written, 0 when not (the reason in `note`). */
int cc_cache_disk_store(const cc_cache_settings *s, const unsigned char key[CC_CACHE_KEY_BYTES],
                        const cc_cache_record *rec, char *note, size_t note_cap);
/* The same with the entry already encoded (`entry`, `size` bytes; only read). */
int cc_cache_disk_store_entry(const cc_cache_settings *s,
                              const unsigned char key[CC_CACHE_KEY_BYTES],
                              const unsigned char *entry, size_t size, char *note, size_t note_cap);
/* Entries and bytes on disk now. */
void cc_cache_disk_usage(const char *dir, uint64_t *entries, uint64_t *bytes);
/* What a clear did. */
typedef struct cc_cache_clear_report {
  uint64_t entries, bytes; /* entries removed and their bytes */
  uint64_t failed;         /* entries, temporary files, shards or counters it could not remove,
                              read or reset */
  char first[4096];        /* the first of them, */
  int first_errno;         /* and why */
} cc_cache_clear_report;
/* Removes every entry and temporary file and resets the counters. Returns 0; or -1 with
 * r->failed > 0 when something could not be removed, or with r->failed 0 and errno set when
 * the directory cannot be read; or -2 when out of memory listing it (recorded by cc_grow). */
int cc_cache_disk_clear(const char *dir, cc_cache_clear_report *r);

/* Counters: this process's, and the directory's (a small file updated under a lock). */
typedef enum cc_cache_event {
  CC_EV_HIT,
  CC_EV_MEMORY_HIT,
  CC_EV_MISS,
  CC_EV_STORE,
  CC_EV_EVICTION,
  CC_EV_ERROR,
  CC_EV_UNCACHEABLE,
  CC_EV_BACKEND_HIT, /* the back end's events: counted in the process only */
  CC_EV_BACKEND_STORE,
  CC_EV_BACKEND_ERROR,
  CC_EV_COUNT
} cc_cache_event;
/* Counts `n` events in the process and, when `dir` is not NULL, in the directory. */
void cc_cache_count(const char *dir, cc_cache_event ev, uint64_t n);
/* Counts in the directory only (a miss is written there once the store made the directory). */
void cc_cache_count_dir(const char *dir, cc_cache_event ev, uint64_t n);
void cc_cache_counters_process(cucore_cache_counters *out);
void cc_cache_counters_dir(const char *dir, cucore_cache_counters *out);

/* ---- the back end (cache_backend.c) ------------------------------------------------------ */

/* The installed back end's flags (CUCORE_CACHE_BACKEND_*); returns 1 when one is installed,
 * 0 when none (*flags 0). */
int cc_cache_backend_installed(unsigned *flags);
/* Asks the back end for `key`'s entry and checks it as a disk entry is checked. Returns 1 with
 * the record on a hit; 0 on a miss, a failure or a damaged entry (the reason in `note`; a
 * damaged entry is removed through the back end's remove when it has one). When `disk` is not
 * NULL, a good entry is also written to that directory. */
int cc_cache_backend_load(const unsigned char key[CC_CACHE_KEY_BYTES],
                          const cc_cache_settings *disk, cc_cache_record *out, char *note,
                          size_t note_cap);
/* Hands an encoded entry to the back end's put. Returns 1 when it took it, 0 when there is no
 * put or it failed (the reason in `note`). */
int cc_cache_backend_store(const unsigned char key[CC_CACHE_KEY_BYTES], const unsigned char *entry,
                           size_t size, char *note, size_t note_cap);

/* ---- the in-process layer (cache_job.c) -------------------------------------------------- */

/* The in-process layer keeps what the caller made for a key (Program keeps its objects, so a
 * library is loaded once per process) and hands out new references to it; it takes and drops
 * references through these. */
typedef struct cc_cache_value_ops {
  void (*retain)(void *value);
  void (*release)(void *value);
} cc_cache_value_ops;

/* Drops every value the in-process layer holds (tests use it to reach the disk layer). */
void cc_cache_memory_clear(void);

/* ---- the compile hook (cache_job.c), called by cucore_program_compile ---------------------- */

typedef struct cc_cache_job {
  cc_cache_state *state;
  const cc_cache_value_ops *ops;
  cc_cache_settings settings;
  cc_cache_key key;
  int active;  /* 1 when the result may be looked up and stored */
  int backend; /* 1 when a back end is installed (cache_backend.c) */
  int disk;    /* 0 when the back end replaces the directory (settings.dir is then "") */
  unsigned char digest[CC_CACHE_KEY_BYTES];
} cc_cache_job;

/* What cc_cache_job_lookup found. */
typedef enum cc_cache_found {
  CC_CACHE_FOUND_NONE,   /* compile, then cc_cache_job_store */
  CC_CACHE_FOUND_MEMORY, /* *value is a new reference, *log a malloc'd copy (may be NULL) */
  CC_CACHE_FOUND_DISK    /* *rec is filled (from the directory or the back end): make the
                            value, then cc_cache_job_keep */
} cc_cache_found;

/* Starts the cache's part of a compile: settings, key (add modules with
 * cc_cache_job_add_module before the lookup). The outcome is written to `state`. */
void cc_cache_job_begin(cc_cache_job *job, cc_cache_state *state, const cc_cache_request *rq,
                        const cc_cache_value_ops *ops);
void cc_cache_job_add_module(cc_cache_job *job, const char *name, const void *code, size_t size,
                             int lazy);
/* Starts a job that only computes the key (cucore_program_get_cache_key): no settings, no
 * lookup; `digest` is the program's (or NULL). Add modules, then cc_cache_job_key. */
void cc_cache_job_begin_key(cc_cache_job *job, const cc_cache_request *rq, const char *digest);
/* The key as 64 hex digits and a NUL into `hex`, returning 1; or 0 with `hex` "" and the
 * reason the compile cannot be cached in `why`. Ends the job. */
int cc_cache_job_key(cc_cache_job *job, char hex[2 * CC_CACHE_KEY_BYTES + 1], char *why,
                     size_t why_cap);
/* Looks the key up in this process, then on disk, then in the back end. */
cc_cache_found cc_cache_job_lookup(cc_cache_job *job, void **value, char **log,
                                   cc_cache_record *rec);
/* Keeps `value` (made from a disk hit; `size` bytes of code) in the in-process layer and
 * returns the value to hand out: `value`, or an equal one another thread kept first (then
 * `value` is released). */
void *cc_cache_job_keep(cc_cache_job *job, void *value, size_t size, const char *log);
/* After a successful compile: writes `rec` to disk and keeps `value` (made from it) in the
 * in-process layer; returns the value to hand out, as cc_cache_job_keep does. */
void *cc_cache_job_store(cc_cache_job *job, const cc_cache_record *rec, void *value);

/* A digest of large contents (a tune's buffers) for a key: XXH3_128bits as 32 hex digits and
 * a NUL (cache_entry.c). SHA-256 of 32 MiB took ~100 ms of a tune's start; this ~2 ms. */
void cc_content_digest(const void *data, size_t n, char out[33]);

/* ---- tests only ----------------------------------------------------------------------------
 * Exported for the tests (and bench/checksum.c); nothing else in the library calls them from
 * outside their own file. */

/* The entry's 64-bit payload checksum: XXH3_64bits, seed 0 (cache_entry.c; tests/test_cache.c,
 * test_cache_entry_format.c, bench/checksum.c). */
uint64_t cc_cache_checksum(const void *data, size_t n);
/* The identity of a toolkit library as the key sees it: path, device, inode, size and
 * modification time of the file the loader would open (found without loading it). Returns 0
 * and fills `out`, or -1 (cache_key.c; tests/test_cache.c). */
int cc_cache_tool_identity(cc_cache_tool tool, char *out, size_t cap);
/* The resolved path of the library the key names, for the tests' cross-check (cache_key.c;
 * tests/test_cache.c). */
int cc_cache_tool_path(cc_cache_tool tool, char *out, size_t cap);
/* `hook(step)` is asked before each file-system step of a store ("create the directory",
 * "create", "write", "flush", "close", "rename"), a load ("open", "read") and a clear
 * ("remove", per entry); a non-zero errno it returns makes the step fail with it. NULL removes
 * the hook (cache_disk.c; tests/test_fault_cache.c). */
typedef int (*cc_cache_io_hook_fn)(const char *step);
void cc_test_cache_io_hook(cc_cache_io_hook_fn hook);

#endif
