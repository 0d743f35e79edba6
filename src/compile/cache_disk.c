/*
 * cache_disk.c -- the compile cache's directory: where it is, how entries are written (a
 * temporary file in the entry's own directory, its write-back started (not waited for: the
 * checksum finds an entry a crash cut short), then renamed over the entry, so a reader sees a
 * whole entry or none), read (checked; a damaged one is removed), touched on a
 * hit (the modification time is the last use), evicted (least recently used first) and
 * counted (a small text file updated under flock).
 *
 * Layout: <dir>/<first 2 hex digits of the key>/<the other 62>, temporary files
 * <dir>/<2 hex>/.tmp-<pid>-<n>-<random>, counters in <dir>/stats.
 */
#define _GNU_SOURCE
#include "compile/cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TMP_PREFIX ".tmp-"
#define STALE_TMP_SECONDS 3600

/* ---- settings ------------------------------------------------------------------------------- */

static pthread_mutex_t settings_lock = PTHREAD_MUTEX_INITIALIZER;
static char *api_dir;          /* cucore_cache_set_dir */
static int api_enabled = -1;   /* cucore_cache_set_enabled; -1 = not set */
static uint64_t api_max_bytes; /* cucore_cache_set_max_bytes; 0 = not set */

cucore_status cc_cache_settings_set_dir(const char *dir) {
  char *copy = NULL;
  if (dir && !(copy = cc_raw_strdup(dir)))
    return cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "cucore_cache_set_dir: out of host memory");
  pthread_mutex_lock(&settings_lock);
  free(api_dir);
  api_dir = copy;
  pthread_mutex_unlock(&settings_lock);
  return CUCORE_OK;
}

void cc_cache_settings_set_enabled(int enabled) {
  pthread_mutex_lock(&settings_lock);
  api_enabled = enabled;
  pthread_mutex_unlock(&settings_lock);
}

void cc_cache_settings_set_max_bytes(uint64_t max_bytes) {
  pthread_mutex_lock(&settings_lock);
  api_max_bytes = max_bytes;
  pthread_mutex_unlock(&settings_lock);
}

/* The directory the environment chooses, and the variable that chose it. */
static void default_dir(cc_cache_settings *s) {
  const char *d = getenv("CUCORE_CACHE_DIR");
  if (d && d[0]) {
    snprintf(s->dir, sizeof s->dir, "%s", d);
    s->dir_from = "CUCORE_CACHE_DIR";
    return;
  }
  const char *xdg = getenv("XDG_CACHE_HOME");
  if (xdg && xdg[0] == '/') { /* the XDG spec ignores relative paths */
    snprintf(s->dir, sizeof s->dir, "%s/cucore", xdg);
    s->dir_from = "XDG_CACHE_HOME";
    return;
  }
  const char *home = getenv("HOME");
  s->dir_from = "HOME";
  char buf[4096];
  struct passwd pw, *res = NULL;
  if ((!home || !home[0]) && getpwuid_r(getuid(), &pw, buf, sizeof buf, &res) == 0 && res) {
    home = res->pw_dir;
    s->dir_from = "the password database's home directory";
  }
  if (home && home[0])
    snprintf(s->dir, sizeof s->dir, "%s/.cache/cucore", home);
  else
    s->dir_from = NULL;
}

int cc_cache_parse_size(const char *s, uint64_t *out) {
  *out = 0;
  if (s[0] < '0' || s[0] > '9') return -1; /* no sign, no blanks */
  char *end = NULL;
  errno = 0;
  unsigned long long n = strtoull(s, &end, 10);
  if (errno == ERANGE) return -2;
  uint64_t mult = 1;
  switch (*end) {
  case 'k':
  case 'K':
    mult = 1024ull;
    end++;
    break;
  case 'm':
  case 'M':
    mult = 1024ull * 1024;
    end++;
    break;
  case 'g':
  case 'G':
    mult = 1024ull * 1024 * 1024;
    end++;
    break;
  default: break;
  }
  if (mult > 1 && (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0)) end += strlen(end);
  if (*end) return -1;
  if (n > UINT64_MAX / mult) return -2;
  *out = (uint64_t)n * mult;
  return 0;
}

void cc_cache_settings_get(cc_cache_settings *s) {
  memset(s, 0, sizeof *s);
  pthread_mutex_lock(&settings_lock);
  int enabled = api_enabled;
  uint64_t max = api_max_bytes;
  if (api_dir) {
    snprintf(s->dir, sizeof s->dir, "%s", api_dir);
    s->dir_from = "cucore_cache_set_dir";
  }
  pthread_mutex_unlock(&settings_lock);
  const char *off = getenv("CUCORE_CACHE_DISABLE");
  s->enabled = 1;
  if (off && off[0] && strcmp(off, "0") != 0) {
    s->enabled = 0;
    snprintf(s->disabled_by, sizeof s->disabled_by,
             "the environment sets CUCORE_CACHE_DISABLE=%.64s", off);
  } else if (enabled == 0) {
    s->enabled = 0;
    snprintf(s->disabled_by, sizeof s->disabled_by,
             "the process turned it off with cucore_cache_set_enabled(0)");
  }
  if (!s->dir[0]) default_dir(s);
  if (!max) {
    const char *m = getenv("CUCORE_CACHE_MAX_BYTES");
    if (!m || !m[0] || cc_cache_parse_size(m, &max) != 0 || !max)
      max = CC_CACHE_DEFAULT_MAX_BYTES; /* cucore_cache_config_problem says why */
  }
  s->max_bytes = max < CC_CACHE_MIN_MAX_BYTES ? CC_CACHE_MIN_MAX_BYTES : max;
}

/* ---- paths ---------------------------------------------------------------------------------- */

void cc_cache_entry_path(const char *dir, const unsigned char key[CC_CACHE_KEY_BYTES], char *out,
                         size_t cap) {
  char hex[2 * CC_CACHE_KEY_BYTES + 1];
  cc_hex(key, CC_CACHE_KEY_BYTES, hex);
  snprintf(out, cap, "%s/%.2s/%s", dir, hex, hex + 2);
}

static int is_hex(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
  return s[n] == '\0';
}

/* mkdir -p; 0 or -1 with errno. */
static int make_dirs(const char *path) {
  char p[PATH_MAX];
  snprintf(p, sizeof p, "%s", path);
  size_t n = strlen(p);
  for (size_t i = 1; i <= n; i++) {
    if (p[i] != '/' && p[i] != '\0') continue;
    char c = p[i];
    p[i] = '\0';
    if (mkdir(p, 0755) != 0 && errno != EEXIST) return -1;
    p[i] = c;
  }
  struct stat st;
  if (stat(path, &st) != 0) return -1;
  if (!S_ISDIR(st.st_mode)) {
    errno = ENOTDIR;
    return -1;
  }
  return 0;
}

/* ---- counters ------------------------------------------------------------------------------- */

static const char *const event_names[CC_EV_COUNT] = {"hits",           "memory_hits",
                                                     "misses",         "stores",
                                                     "evictions",      "errors",
                                                     "uncacheable",    "backend_hits",
                                                     "backend_stores", "backend_errors"};
static _Atomic uint64_t process_counts[CC_EV_COUNT];

static void counters_set(cucore_cache_counters *c, const uint64_t v[CC_EV_COUNT]) {
  c->hits = v[CC_EV_HIT];
  c->memory_hits = v[CC_EV_MEMORY_HIT];
  c->misses = v[CC_EV_MISS];
  c->stores = v[CC_EV_STORE];
  c->evictions = v[CC_EV_EVICTION];
  c->errors = v[CC_EV_ERROR];
  c->uncacheable = v[CC_EV_UNCACHEABLE];
  c->backend_hits = v[CC_EV_BACKEND_HIT];
  c->backend_stores = v[CC_EV_BACKEND_STORE];
  c->backend_errors = v[CC_EV_BACKEND_ERROR];
}

void cc_cache_counters_process(cucore_cache_counters *out) {
  uint64_t v[CC_EV_COUNT];
  for (int i = 0; i < CC_EV_COUNT; i++) v[i] = atomic_load(&process_counts[i]);
  counters_set(out, v);
}

/* Parses "name value" lines; unknown or malformed lines are ignored (a damaged file counts
 * from zero again rather than failing anything). */
static void parse_counts(const char *text, uint64_t v[CC_EV_COUNT]) {
  memset(v, 0, CC_EV_COUNT * sizeof *v);
  for (const char *line = text; line && *line;) {
    for (int i = 0; i < CC_EV_COUNT; i++) {
      size_t n = strlen(event_names[i]);
      if (strncmp(line, event_names[i], n) == 0 && line[n] == ' ')
        v[i] = strtoull(line + n + 1, NULL, 10);
    }
    line = strchr(line, '\n');
    if (line) line++;
  }
}

static void stats_path(const char *dir, char *out, size_t cap) {
  snprintf(out, cap, "%s/stats", dir);
}

/* Reads (and with `add`, updates) the directory's counters under an exclusive lock. */
static int dir_counts(const char *dir, const uint64_t add[CC_EV_COUNT], int reset,
                      uint64_t out[CC_EV_COUNT]) {
  char path[PATH_MAX];
  stats_path(dir, path, sizeof path);
  int writing = add || reset;
  int fd = open(path, writing ? O_RDWR | O_CREAT | O_CLOEXEC : O_RDONLY | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  if (flock(fd, writing ? LOCK_EX : LOCK_SH) != 0) {
    close(fd);
    return -1;
  }
  char text[1024];
  ssize_t n = pread(fd, text, sizeof text - 1, 0);
  text[n > 0 ? n : 0] = '\0';
  uint64_t v[CC_EV_COUNT];
  parse_counts(text, v);
  if (reset) memset(v, 0, sizeof v);
  if (add)
    for (int i = 0; i < CC_EV_COUNT; i++) v[i] += add[i];
  int rc = 0;
  if (writing) {
    int len = snprintf(text, sizeof text, "cucore-cache-stats 1\n");
    for (int i = 0; i < CC_EV_COUNT; i++)
      len += snprintf(text + len, sizeof text - (size_t)len, "%s %020llu\n", event_names[i],
                      (unsigned long long)v[i]);
    /* Fixed-width numbers: the file keeps its length, so no truncation on the hit path. */
    if (pwrite(fd, text, (size_t)len, 0) != len || (n != len && ftruncate(fd, len) != 0)) rc = -1;
  }
  close(fd); /* releases the lock */
  if (out) memcpy(out, v, sizeof v);
  return rc;
}

void cc_cache_count_dir(const char *dir, cc_cache_event ev, uint64_t n) {
  if (!n || !dir || !dir[0] || ev == CC_EV_MEMORY_HIT) return;
  uint64_t add[CC_EV_COUNT] = {0};
  add[ev] = n;
  (void)dir_counts(dir, add, 0, NULL);
}

void cc_cache_count(const char *dir, cc_cache_event ev, uint64_t n) {
  if (!n) return;
  atomic_fetch_add(&process_counts[ev], n);
  cc_cache_count_dir(dir, ev, n);
}

void cc_cache_counters_dir(const char *dir, cucore_cache_counters *out) {
  uint64_t v[CC_EV_COUNT] = {0};
  if (dir && dir[0] && dir_counts(dir, NULL, 0, v) != 0) memset(v, 0, sizeof v);
  counters_set(out, v);
}

/* ---- reading an entry ----------------------------------------------------------------------- */

static int read_all(int fd, unsigned char *buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = pread(fd, buf + got, n - got, (off_t)got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    got += (size_t)r;
  }
  return 0;
}

/* Removes `path` when it is still the file `fd` has open (another process may have renamed
 * a good entry over it since). */
static int remove_if_same(const char *path, int fd) {
  struct stat a, b;
  if (fstat(fd, &a) != 0 || stat(path, &b) != 0) return -1;
  if (a.st_dev != b.st_dev || a.st_ino != b.st_ino) return 0;
  return unlink(path);
}

static int io_fault(const char *step);

int cc_cache_disk_load(const cc_cache_settings *s, const unsigned char key[CC_CACHE_KEY_BYTES],
                       cc_cache_record *out, char *note, size_t note_cap) {
  memset(out, 0, sizeof *out);
  if (!s->dir[0]) return 0;
  char path[PATH_MAX];
  cc_cache_entry_path(s->dir, key, path, sizeof path);
  int fd = io_fault("open") ? -1 : open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT && errno != ENOTDIR) {
      snprintf(note, note_cap, "cannot open the cache entry `%s`: %s; compiled instead", path,
               strerror(errno));
      cc_cache_count(s->dir, CC_EV_ERROR, 1);
    }
    return 0;
  }
  struct stat st;
  unsigned char *buf = NULL;
  char why[512] = "";
  int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (!ok) snprintf(why, sizeof why, "it is not a regular file");
  size_t size = ok ? (size_t)st.st_size : 0;
  if (ok && size > 0) {
    buf = cc_raw_malloc(size);
    if (!buf || io_fault("read") || read_all(fd, buf, size) != 0) {
      snprintf(why, sizeof why, "%s", buf ? "it could not be read whole" : "out of host memory");
      ok = 0;
    }
  }
  if (ok) ok = cc_cache_entry_decode(buf, size, key, out, why, sizeof why) == 0;
  free(buf);
  if (!ok) {
    int removed = remove_if_same(path, fd) == 0;
    snprintf(note, note_cap, "the cache entry `%s` was damaged (%s); %s and compiled again", path,
             why, removed ? "removed it" : "could not remove it");
    close(fd);
    cc_cache_count(s->dir, CC_EV_ERROR, 1);
    return 0;
  }
  /* A hit is a use: the modification time orders eviction (access times are often not
   * kept: noatime, relatime). A read-only directory just keeps the old time. */
  (void)futimens(fd, NULL);
  close(fd);
  cc_cache_count(s->dir, CC_EV_HIT, 1);
  return 1;
}

/* ---- scanning ------------------------------------------------------------------------------- */

typedef struct scan_entry {
  char path[PATH_MAX];
  struct timespec mtime;
  uint64_t size;
} scan_entry;

typedef struct scan {
  scan_entry *v;
  size_t n, cap;
  uint64_t bytes;
  cc_cache_clear_report *fails; /* where files that could not be read or removed are told */
} scan;

static void scan_failed(scan *sc, const char *path, int err) {
  cc_cache_clear_report *r = sc ? sc->fails : NULL;
  if (!r) return;
  if (!r->failed++) {
    snprintf(r->first, sizeof r->first, "%s", path);
    r->first_errno = err;
  }
}

/* Walks <dir>/<2 hex>/: entries go into `out` (when not NULL); temporary files older than an
 * hour (left by a crash) are removed, as are all of them when `all_tmp`. Returns 0; -1 with
 * errno when `dir` cannot be read; -2 when the list of entries cannot grow (cc_grow recorded
 * it). */
static int walk(const char *dir, scan *out, int all_tmp, uint64_t *tmp_removed) {
  DIR *d = opendir(dir);
  if (!d) return errno == ENOENT ? 0 : -1;
  time_t now = time(NULL);
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (strlen(de->d_name) != 2 || !is_hex(de->d_name, 2)) continue;
    char sub[PATH_MAX];
    snprintf(sub, sizeof sub, "%s/%s", dir, de->d_name);
    DIR *sd = opendir(sub);
    if (!sd) {
      scan_failed(out, sub, errno);
      continue;
    }
    struct dirent *e;
    while ((e = readdir(sd)) != NULL) {
      char path[PATH_MAX];
      snprintf(path, sizeof path, "%s/%s", sub, e->d_name);
      struct stat st;
      if (strncmp(e->d_name, TMP_PREFIX, strlen(TMP_PREFIX)) == 0) {
        if (lstat(path, &st) != 0 || !(all_tmp || now - st.st_mtime > STALE_TMP_SECONDS)) continue;
        if (unlink(path) == 0 && tmp_removed)
          ++*tmp_removed;
        else if (errno != ENOENT && all_tmp)
          scan_failed(out, path, errno);
        continue;
      }
      if (strlen(e->d_name) != 2 * CC_CACHE_KEY_BYTES - 2 ||
          !is_hex(e->d_name, 2 * CC_CACHE_KEY_BYTES - 2))
        continue;
      if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
      if (!out) continue;
      scan_entry *nv = cc_grow(out->v, &out->cap, out->n + 1, sizeof *nv, "the cache's entries");
      if (!nv) {
        closedir(sd);
        closedir(d);
        return -2;
      }
      out->v = nv;
      scan_entry *se = &out->v[out->n++];
      snprintf(se->path, sizeof se->path, "%s", path);
      se->mtime = st.st_mtim;
      se->size = (uint64_t)st.st_size;
      out->bytes += se->size;
    }
    closedir(sd);
  }
  closedir(d);
  return 0;
}

static int by_last_use(const void *a, const void *b) {
  const scan_entry *x = a, *y = b;
  if (x->mtime.tv_sec != y->mtime.tv_sec) return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
  if (x->mtime.tv_nsec != y->mtime.tv_nsec) return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
  return strcmp(x->path, y->path);
}

/* What this process believes the directory holds, so that not every store walks it. */
static pthread_mutex_t usage_lock = PTHREAD_MUTEX_INITIALIZER;
static char usage_dir[4096];
static uint64_t usage_bytes;
static int usage_known;

/* Evicts least recently used entries until at most `target` bytes remain, and remembers
 * what is left as what this process believes the directory holds (nothing changes when the
 * directory cannot be walked). Called with usage_lock held. */
static void trim_locked(const char *dir, uint64_t target) {
  scan sc = {0};
  if (walk(dir, &sc, 0, NULL) != 0) {
    free(sc.v);
    return;
  }
  uint64_t total = sc.bytes, evicted = 0;
  if (total > target) {
    qsort(sc.v, sc.n, sizeof *sc.v, by_last_use);
    for (size_t i = 0; i < sc.n && total > target; i++) {
      /* Gone already (another process evicted it): the bytes are gone too. */
      if (unlink(sc.v[i].path) == 0)
        evicted++;
      else if (errno != ENOENT)
        continue;
      total -= sc.v[i].size;
    }
  }
  free(sc.v);
  cc_cache_count(dir, CC_EV_EVICTION, evicted);
  snprintf(usage_dir, sizeof usage_dir, "%s", dir);
  usage_bytes = total;
  usage_known = 1;
}

void cc_cache_disk_usage(const char *dir, uint64_t *entries, uint64_t *bytes) {
  scan sc = {0};
  *entries = *bytes = 0;
  if (dir[0] && walk(dir, &sc, 0, NULL) == 0) {
    *entries = sc.n;
    *bytes = sc.bytes;
  }
  free(sc.v);
}

/* Removes the empty shard directories (rmdir leaves any that another process just filled). */
static void remove_empty_shards(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *de;
  while ((de = readdir(d)) != NULL)
    if (strlen(de->d_name) == 2 && is_hex(de->d_name, 2)) {
      char sub[PATH_MAX];
      snprintf(sub, sizeof sub, "%s/%s", dir, de->d_name);
      (void)rmdir(sub);
    }
  closedir(d);
}

int cc_cache_disk_clear(const char *dir, cc_cache_clear_report *r) {
  memset(r, 0, sizeof *r);
  scan sc = {.fails = r};
  uint64_t tmp = 0;
  int rc = walk(dir, &sc, 1, &tmp);
  if (rc != 0) {
    int e = errno;
    free(sc.v);
    errno = e;
    return rc;
  }
  for (size_t i = 0; i < sc.n; i++) {
    if (!io_fault("remove") && unlink(sc.v[i].path) == 0) {
      r->entries++;
      r->bytes += sc.v[i].size;
    } else if (errno != ENOENT) {
      scan_failed(&sc, sc.v[i].path, errno);
    }
  }
  free(sc.v);
  remove_empty_shards(dir);
  pthread_mutex_lock(&usage_lock);
  usage_known = 0;
  pthread_mutex_unlock(&usage_lock);
  char stats[PATH_MAX];
  stats_path(dir, stats, sizeof stats);
  if (dir_counts(dir, NULL, 1, NULL) != 0) {
    int e = errno;
    if (access(stats, F_OK) == 0) scan_failed(&sc, stats, e); /* none to reset is no failure */
  }
  return r->failed ? -1 : 0;
}

/* ---- writing an entry ----------------------------------------------------------------------- */

/* Tests only (tests/test_fault_cache.c): a hook that may fail each file-system step of a store
 * or a load with an errno of its choice (ENOSPC, EROFS, EIO, ...). One atomic load when unset. */
static _Atomic(cc_cache_io_hook_fn) io_hook;

void cc_test_cache_io_hook(cc_cache_io_hook_fn hook) { atomic_store(&io_hook, hook); }

static int io_fault(const char *step) {
  cc_cache_io_hook_fn h = atomic_load_explicit(&io_hook, memory_order_relaxed);
  int e = h ? h(step) : 0;
  if (e) errno = e;
  return e != 0;
}

/* The entry's pages handed to the disk without waiting for them (fsync here was
 * 1.3 ms of a cold `cucore run` on an H200 host, and tens of ms on a busy or network disk).
 * No fsync is needed for correctness: a reader checks every entry's checksum, so one cut
 * short by a crash before the disk had it is found damaged, removed and compiled again.
 * A file system without sync_file_range counts as done. */
static int start_writeback(int fd) {
  if (sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE) == 0) return 0;
  return errno == EINVAL || errno == ENOSYS || errno == ESPIPE || errno == EOPNOTSUPP ? 0 : -1;
}

static int write_all(int fd, const unsigned char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      if (w == 0) errno = EIO;
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static _Atomic unsigned tmp_counter;

int cc_cache_disk_store(const cc_cache_settings *s, const unsigned char key[CC_CACHE_KEY_BYTES],
                        const cc_cache_record *rec, char *note, size_t note_cap) {
  if (!s->dir[0]) return cc_cache_disk_store_entry(s, key, NULL, 0, note, note_cap);
  size_t size = 0;
  unsigned char *buf = cc_cache_entry_encode(key, rec, &size);
  if (!buf) {
    snprintf(note, note_cap, "out of host memory encoding the cache entry; not stored");
    cc_cache_count(s->dir, CC_EV_ERROR, 1);
    return 0;
  }
  int stored = cc_cache_disk_store_entry(s, key, buf, size, note, note_cap);
  free(buf);
  return stored;
}

int cc_cache_disk_store_entry(const cc_cache_settings *s,
                              const unsigned char key[CC_CACHE_KEY_BYTES], const unsigned char *buf,
                              size_t size, char *note, size_t note_cap) {
  if (!s->dir[0]) {
    snprintf(note, note_cap,
             "no cache directory: neither CUCORE_CACHE_DIR, XDG_CACHE_HOME nor "
             "a home directory is set; only the in-process layer is used");
    return 0;
  }
  if (size > s->max_bytes * 9 / 10) {
    snprintf(note, note_cap,
             "the entry (%zu bytes) is larger than 90%% of the cache's size cap "
             "(%llu bytes); not stored",
             size, (unsigned long long)s->max_bytes);
    return 0;
  }
  char path[PATH_MAX], shard[PATH_MAX], tmp[PATH_MAX + 64];
  cc_cache_entry_path(s->dir, key, path, sizeof path);
  snprintf(shard, sizeof shard, "%s", path);
  *strrchr(shard, '/') = '\0';
  const char *step = "create the directory";
  int fd = -1;
  if (io_fault(step) || make_dirs(shard) != 0) goto failed;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  snprintf(tmp, sizeof tmp, "%s/" TMP_PREFIX "%ld-%u-%lx", shard, (long)getpid(),
           atomic_fetch_add(&tmp_counter, 1),
           (unsigned long)ts.tv_nsec ^ (unsigned long)(uintptr_t)&ts);
  step = "create";
  fd = io_fault(step) ? -1 : open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) goto failed;
  step = "write";
  if (io_fault(step) || write_all(fd, buf, size) != 0) goto failed;
  step = "flush";
  if (io_fault(step) || start_writeback(fd) != 0) goto failed;
  step = "close";
  int rc = close(fd);
  fd = -1;
  if (rc != 0 || io_fault(step)) goto failed;
  step = "rename";
  if (io_fault(step) || rename(tmp, path) != 0) goto failed;
  cc_cache_count(s->dir, CC_EV_STORE, 1);

  /* Keep under the cap: walk the directory when this process has not yet, or when what it
   * knows says the cap is passed; then trim to 90% of the cap. */
  pthread_mutex_lock(&usage_lock);
  if (!usage_known || strcmp(usage_dir, s->dir) != 0)
    trim_locked(s->dir, UINT64_MAX);
  else
    usage_bytes += size;
  if (usage_bytes > s->max_bytes) trim_locked(s->dir, s->max_bytes / 10 * 9);
  pthread_mutex_unlock(&usage_lock);
  return 1;

failed : {
  int e = errno;
  if (fd >= 0) close(fd);
  const char *target = strcmp(step, "create the directory") == 0 ? shard : tmp;
  if (strcmp(step, "create the directory") != 0) unlink(tmp);
  snprintf(note, note_cap,
           "could not %s `%s` for the cache entry: %s; the compile result is "
           "fine but was not stored",
           step, target, strerror(e));
  cc_cache_count(s->dir, CC_EV_ERROR, 1);
  return 0;
}
}
