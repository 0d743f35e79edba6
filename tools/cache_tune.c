/* cache_tune.c -- `cucore cache tune list|show KEY|clear [KEY]|export KEY [--t4 FILE]|import
 * FILE|merge DIR [--into DIR]`: the tune stores under the cache folder (tune/KEY.jsonl, one
 * line per measured configuration, cucore tune's default --db): which tunes are kept (the
 * source, the kernel and the problem size each was tuned for, its record count and best
 * result), one store's records,
 * removing them, and moving them between machines (a store's lines out, merged into the store
 * of their key on the way in, duplicates skipped; or the results as TuningSchema T4). A KEY is
 * a key or, as git takes a commit, a unique prefix of at least 4 of its hexadecimal digits.
 * Every record is read by the library's one reader (cucore_tune_store_get_record). */
#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "t4.h"

typedef struct ct_line {
  int json;
  const char *t4, *into;
} ct_line;

static const cli_opt ct_opts[] = {
    {.name = "--json", .kind = CLI_OPT_FLAG, CLI_AT(ct_line, json), .help = CLI_JSON_HELP},
    {.name = "--t4",
     .kind = CLI_OPT_TEXT,
     CLI_AT(ct_line, t4),
     .arg = "FILE",
     .help = "export: the results as TuningSchema T4 JSON into FILE"},
    {.name = "--into",
     .kind = CLI_OPT_TEXT,
     CLI_AT(ct_line, into),
     .arg = "DIR",
     .help = "merge: into the stores of DIR (DIR/KEY.jsonl, as `cucore tune --db-dir DIR`\n"
             "reads them), not the cache folder's",
     .nonempty = 1},
    {0}};

/* The stores' folder, `<cache folder>/tune`, malloc'd into *out; else an exit code after
 * saying why. */
static int tune_dir(char **out) {
  cucore_cache_stats s;
  *out = NULL;
  int rc = cli_cache_dir("tune", &s);
  if (rc) return rc;
  if (asprintf(out, "%s/tune", s.dir) < 0) {
    *out = NULL;
    fprintf(stderr, "cucore cache: out of host memory\n");
    return CLI_EXIT_FAILURE;
  }
  return 0;
}

/* ---- the stores of the folder ---- */

typedef struct keys {
  char **v;
  size_t n, cap;
} keys;

static void keys_free(keys *k) {
  for (size_t i = 0; i < k->n; i++) free(k->v[i]);
  free(k->v);
}

/* 1 when `name` is a store's file name: 64 hexadecimal digits and ".jsonl". */
static int store_name(const char *name) {
  for (int i = 0; i < 64; i++)
    if (!isxdigit((unsigned char)name[i])) return 0;
  return strcmp(name + 64, ".jsonl") == 0;
}

static int by_text(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The keys of the stores in `dir`, sorted; *missing 1 when there is no such folder. 0, or 1
 * after saying why the folder cannot be read. */
static int list_keys(const char *dir, keys *k, int *missing) {
  memset(k, 0, sizeof *k);
  *missing = 0;
  DIR *d = opendir(dir);
  if (!d && errno == ENOENT) return *missing = 1, 0;
  if (!d) {
    fprintf(stderr,
            "cucore cache: cannot read the tune stores' folder `%s`: %s (expected a "
            "folder cucore can read)\n",
            dir, strerror(errno));
    return CLI_EXIT_FAILURE;
  }
  int rc = 0;
  for (struct dirent *e; !rc && (e = readdir(d)) != NULL;) {
    if (!store_name(e->d_name)) continue;
    char **v = cli_grow(k->v, &k->cap, k->n + 1, sizeof *v, "the list of tune stores");
    char *key = v ? strndup(e->d_name, 64) : NULL;
    if (v) k->v = v;
    if (!key) rc = CLI_EXIT_FAILURE;
    if (key) k->v[k->n++] = key;
  }
  closedir(d);
  if (k->n) qsort(k->v, k->n, sizeof *k->v, by_text);
  return rc;
}

/* The one store KEY names (a key, or a unique prefix of >= 4 hexadecimal digits): 0 with
 * *key; 1 when none does; 2 when it is not hexadecimal, too short or ambiguous. */
static int resolve(const char *dir, const keys *k, const char *prefix, const char **key) {
  size_t len = strlen(prefix), hex = strspn(prefix, "0123456789abcdefABCDEF");
  if (len < 4 || len > 64 || hex != len)
    return cli_usage("cache",
                     "tune key `%s`: expected a key of 64 hexadecimal digits or a prefix of at "
                     "least 4 of them (see `cucore cache tune list`)",
                     prefix);
  size_t found = 0;
  for (size_t i = 0; i < k->n; i++)
    if (strncasecmp(k->v[i], prefix, len) == 0) *key = k->v[i], found++;
  if (found == 1) return 0;
  if (found == 0) {
    fprintf(stderr,
            "cucore cache: no tune store matching `%s` in %s (see `cucore cache tune "
            "list`)\n",
            prefix, dir);
    return CLI_EXIT_FAILURE;
  }
  fprintf(stderr,
          "cucore cache: tune key `%s` is ambiguous: %zu stores begin with it (expected "
          "more digits, enough for one):\n",
          prefix, found);
  for (size_t i = 0; i < k->n; i++)
    if (strncasecmp(k->v[i], prefix, len) == 0) fprintf(stderr, "  %s\n", k->v[i]);
  return CLI_EXIT_USAGE;
}

/* ---- one store, read ---- */

typedef struct summary {
  char *path;
  cucore_tune_store *s;
  size_t n, ok, damaged;   /* records, verified ones, lines that do not read */
  cucore_tune_record best; /* the fastest verified (best.config NULL: none) */
  const char *source, *kernel;
  const char **problems; /* distinct, in the file's order */
  size_t nproblems, cap_problems;
} summary;

static void summary_free(summary *m) {
  cucore_tune_store_close(m->s);
  free(m->path);
  free(m->problems);
}

/* Record r counted into m. 0, or -1 when out of memory. */
static int summarize(summary *m, const cucore_tune_record *r) {
  m->ok += r->status == CUCORE_TUNE_OK;
  if (r->status == CUCORE_TUNE_OK && r->median_ms >= 0 &&
      (!m->best.config || r->median_ms < m->best.median_ms))
    m->best = *r;
  if (!m->source && r->source[0]) m->source = r->source;
  if (!m->kernel && r->kernel[0]) m->kernel = r->kernel;
  for (size_t i = 0; i < m->nproblems; i++)
    if (strcmp(m->problems[i], r->problem) == 0) return 0;
  const char **p = cli_grow(m->problems, &m->cap_problems, m->nproblems + 1, sizeof *p,
                            "the problem sizes of a tune store");
  if (!p) return -1;
  m->problems = p;
  m->problems[m->nproblems++] = r->problem;
  return 0;
}

/* Store `key` of `dir` read into m. 0, or an exit code after saying why. */
static int summary_open(const char *dir, const char *key, summary *m) {
  memset(m, 0, sizeof *m);
  if (asprintf(&m->path, "%s/%s.jsonl", dir, key) < 0) {
    m->path = NULL;
    fprintf(stderr, "cucore cache: out of host memory\n");
    return CLI_EXIT_FAILURE;
  }
  cucore_status st = cucore_tune_store_open_read_only(m->path, key, NULL, NULL, &m->s);
  if (st == CUCORE_OK) st = cucore_tune_store_get_record_count(m->s, &m->n);
  if (st == CUCORE_OK) st = cucore_tune_store_get_info(m->s, NULL, NULL, &m->damaged);
  if (st != CUCORE_OK) return cli_fail("cache", "tune", st);
  for (size_t i = 0; i < m->n; i++) {
    cucore_tune_record r;
    if (cucore_tune_store_get_record(m->s, i, &r) != CUCORE_OK || summarize(m, &r) < 0)
      return cli_fail("cache", "tune", cucore_last_status());
  }
  return 0;
}

/* "64, 4096" (a problem size that is "" as "none"). */
static void problems_text(const summary *m, FILE *f) {
  for (size_t i = 0; i < m->nproblems; i++)
    fprintf(f, "%s%s", i ? ", " : "", m->problems[i][0] ? m->problems[i] : "none");
  if (!m->nproblems) fputs("none", f);
}

static void list_line(const char *key, const summary *m) {
  printf("%s  %s  %s  problem%s ", key, m->source ? m->source : "(source not recorded)",
         m->kernel ? m->kernel : "(kernel not recorded)", m->nproblems > 1 ? "s" : "");
  problems_text(m, stdout);
  printf("  %zu record%s, %zu verified", m->n, m->n == 1 ? "" : "s", m->ok);
  if (m->best.config) printf(", best %s %.4f ms", m->best.config, m->best.median_ms);
  if (m->best.config && m->nproblems > 1)
    printf(" (problem %s)", m->best.problem[0] ? m->best.problem : "none");
  if (m->damaged) printf(", %zu damaged line%s", m->damaged, m->damaged == 1 ? "" : "s");
  printf("\n");
}

/* The store as a JSON object's members. */
static void summary_json(json_out *j, const char *key, const summary *m) {
  json_str(j, "key", key);
  json_str(j, "path", m->path);
  json_str(j, "source", m->source);
  json_str(j, "kernel", m->kernel);
  json_begin_array(j, "problems");
  for (size_t i = 0; i < m->nproblems; i++) json_str(j, NULL, m->problems[i]);
  json_end_array(j);
  json_uint(j, "records", m->n);
  json_uint(j, "verified", m->ok);
  json_uint(j, "damaged", m->damaged);
  if (m->best.config) json_number_text(j, "best", m->best.config); /* its JSON, as stored */
  if (m->best.config) json_num(j, "best_ms", m->best.median_ms);
  if (m->best.config) json_str(j, "best_problem", m->best.problem);
}

/* ---- list, show ---- */

static int list_stores(const char *dir, const keys *k, int missing, json_out *j) {
  if (j) json_begin_array(j, "stores");
  int rc = 0;
  for (size_t i = 0; i < k->n && !rc; i++) {
    summary m;
    rc = summary_open(dir, k->v[i], &m);
    if (!rc && j) json_begin_object(j, NULL), summary_json(j, k->v[i], &m), json_end_object(j);
    if (!rc && !j) list_line(k->v[i], &m);
    summary_free(&m);
  }
  if (j) json_end_array(j);
  if (!k->n && !j) printf("no tune stores in %s%s\n", dir, missing ? " (no such folder yet)" : "");
  return rc;
}

/* One line per record: configuration, status, median (the problem when the store has more
 * than one). */
static void record_line(const summary *m, const cucore_tune_record *r) {
  if (m->nproblems > 1) printf("problem %s  ", r->problem[0] ? r->problem : "none");
  printf("%s  %s", r->config, cucore_tune_result_name(r->status));
  if (r->status == CUCORE_TUNE_OK && r->median_ms >= 0) printf("  %.4f ms", r->median_ms);
  if (r->finalist) printf("  (finalist)");
  if (r->status != CUCORE_TUNE_OK && r->detail[0]) printf("  %s", r->detail);
  printf("\n");
}

static void record_json(json_out *j, const cucore_tune_record *r) {
  json_begin_object(j, NULL);
  json_str(j, "key", r->key);
  json_str(j, "problem", r->problem);
  json_str(j, "device", r->device);
  if (r->source[0]) json_str(j, "source", r->source);
  if (r->kernel[0]) json_str(j, "kernel", r->kernel);
  json_number_text(j, "config", r->config); /* the JSON texts as stored */
  json_number_text(j, "result", r->result);
  json_end_object(j);
}

static int show_store(const char *dir, const char *key, json_out *j) {
  summary m;
  int rc = summary_open(dir, key, &m);
  if (!rc && j) {
    json_begin_array(j, "stores");
    json_begin_object(j, NULL);
    summary_json(j, key, &m);
    json_begin_array(j, "entries"); /* "records" is their count */
  }
  for (size_t i = 0; !rc && i < m.n; i++) {
    cucore_tune_record r;
    if (cucore_tune_store_get_record(m.s, i, &r) != CUCORE_OK) {
      rc = cli_fail("cache", "tune show", cucore_last_status());
    } else if (j) {
      record_json(j, &r);
    } else {
      record_line(&m, &r);
    }
  }
  if (!rc && j) json_end_array(j), json_end_object(j), json_end_array(j);
  if (!rc && !j && !m.n) printf("no records in %s\n", m.path);
  summary_free(&m);
  return rc;
}

/* ---- clear ---- */

/* Removes store `key` of `dir` and its lock file: 1 removed, 0 not (said why). */
static int remove_store(const char *dir, const char *key) {
  char *path = NULL, *lock = NULL;
  int ok = asprintf(&path, "%s/%s.jsonl", dir, key) >= 0;
  if (ok && asprintf(&lock, "%s.lock", path) < 0) lock = NULL, ok = 0;
  if (ok && unlink(path) != 0) {
    fprintf(stderr, "cucore cache: cannot remove `%s`: %s\n", path, strerror(errno));
    ok = 0;
  }
  if (ok) unlink(lock); /* none when no tune took a lock */
  if (!path || !lock) fprintf(stderr, "cucore cache: out of host memory\n");
  free(path), free(lock);
  return ok;
}

/* Removes every store of k (only `key` when set). */
static int clear_stores(const char *dir, const keys *k, const char *key, json_out *j) {
  if (!k->n) {
    fprintf(stderr, "cucore cache: no tune stores in %s: nothing removed\n", dir);
    return CLI_EXIT_FAILURE;
  }
  size_t removed = 0, tried = 0;
  for (size_t i = 0; i < k->n; i++)
    if (!key || strcmp(key, k->v[i]) == 0) tried++, removed += (size_t)remove_store(dir, k->v[i]);
  if (j) json_uint(j, "removed", removed);
  if (!j) printf("removed %zu tune store%s from %s\n", removed, removed == 1 ? "" : "s", dir);
  if (removed < tried)
    fprintf(stderr, "cucore cache: %zu of %zu tune stores could not be removed\n", tried - removed,
            tried);
  return removed == tried ? 0 : CLI_EXIT_FAILURE;
}

/* ---- export ---- */

/* The records T4 lists: the latest of each key, problem, device and configuration. */
typedef struct t4_store {
  const summary *m;
  size_t *idx, n;
} t4_store;

static const summary *tls_m; /* for by_record (no qsort_r in C11) */

/* Records x and y of m: the same key, problem, device and configuration (0), else their order. */
static int config_order(const summary *m, size_t x, size_t y) {
  cucore_tune_record r, q;
  cucore_tune_store_get_record(m->s, x, &r);
  cucore_tune_store_get_record(m->s, y, &q);
  int c = strcmp(r.key, q.key);
  if (!c) c = strcmp(r.problem, q.problem);
  if (!c) c = strcmp(r.device, q.device);
  return c ? c : strcmp(r.config, q.config);
}

/* By configuration, then by place in the file. */
static int by_record(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  int c = config_order(tls_m, x, y);
  return c ? c : x < y ? -1 : x > y;
}

static int by_index(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return x < y ? -1 : x > y;
}

/* ts->idx = the latest record of each configuration, in the file's order. 0, or -1. */
static int latest_records(t4_store *ts) {
  const summary *m = ts->m;
  ts->idx = malloc((m->n ? m->n : 1) * sizeof *ts->idx);
  if (!ts->idx) return -1;
  for (size_t i = 0; i < m->n; i++) ts->idx[i] = i;
  tls_m = m;
  qsort(ts->idx, m->n, sizeof *ts->idx, by_record);
  ts->n = 0;
  for (size_t i = 0; i < m->n; i++) /* the last of each run of one configuration */
    if (i + 1 == m->n || config_order(m, ts->idx[i], ts->idx[i + 1]) != 0)
      ts->idx[ts->n++] = ts->idx[i];
  qsort(ts->idx, ts->n, sizeof *ts->idx, by_index);
  return 0;
}

/* T4's view of record i of the latest ones: a tune row with the record's status and times. */
static void t4_record(const void *user, size_t i, t4_result *out) {
  const t4_store *ts = user;
  cucore_tune_record r;
  cucore_tune_store_get_record(ts->m->s, ts->idx[i], &r);
  cucore_tune_row row;
  memset(&row, 0, sizeof row);
  row.error = "";
  row.config.verdict = CUCORE_TUNE_RUNNABLE; /* a stored result was measured or compiled */
  row.status = r.status;
  if (r.status == CUCORE_TUNE_COMPILE_ERROR) /* as the tune's own row of it */
    row.error = r.detail[0] ? r.detail : "compile error", row.status = CUCORE_TUNE_NOT_MEASURED;
  row.stats.median = r.median_ms;
  row.compile_ms = r.compile_ms;
  t4_row_result(&row, out);
}

static void t4_config(const void *user, size_t i, json_out *j, const char *key) {
  const t4_store *ts = user;
  cucore_tune_record r;
  cucore_tune_store_get_record(ts->m->s, ts->idx[i], &r);
  json_number_text(j, key, r.config); /* the configuration's JSON, as stored */
}

/* The store as T4 into `t4`. */
static int export_t4(const summary *m, const char *t4) {
  t4_store ts = {m, NULL, 0};
  if (latest_records(&ts) < 0) {
    fprintf(stderr, "cucore cache: out of host memory\n");
    return CLI_EXIT_FAILURE;
  }
  t4_source src = {ts.n, &ts, t4_record, t4_config};
  int rc = t4_write("cache", "--t4", t4, &src);
  if (!rc && m->nproblems > 1)
    fprintf(stderr,
            "cucore cache: note: the store holds %zu problem sizes; T4 lists a "
            "configuration once for each\n",
            m->nproblems);
  free(ts.idx);
  return rc;
}

/* `export KEY`: the store's file as it is on stdout (what `import` reads on another machine);
 * with --t4 FILE the results as TuningSchema T4 into FILE. */
static int export_store(const char *dir, const char *key, const char *t4) {
  summary m;
  int rc = summary_open(dir, key, &m);
  if (!rc) cli_input_add(m.path); /* --t4 may not name the store */
  if (!rc && t4) rc = cli_output_check("cache", "--t4", t4);
  if (!rc && t4) rc = export_t4(&m, t4);
  char *data = NULL;
  size_t size = 0;
  if (!rc && !t4) rc = cli_read_file("cache", m.path, &data, &size);
  if (!rc && !t4 && fwrite(data, 1, size, stdout) != size) {
    fprintf(stderr, "cucore cache: cannot write the output: %s\n", strerror(errno));
    rc = CLI_EXIT_FAILURE;
  }
  free(data);
  summary_free(&m);
  return rc;
}

/* ---- import ---- */

/* The stores records are merged into, one per key. */
typedef struct dest {
  char *key; /* copied */
  cucore_tune_store *s;
  const char *path;
  size_t added, had;
} dest;

typedef struct dests {
  dest *v;
  size_t n, cap;
  const char *into; /* merge --into DIR: the stores are DIR/KEY.jsonl (NULL: the cache's) */
} dests;

/* The store of `key` under the cache folder (opened at its first record). NULL after saying
 * why. */
static dest *dest_of(dests *d, const char *key) {
  for (size_t i = 0; i < d->n; i++)
    if (strcmp(d->v[i].key, key) == 0) return &d->v[i];
  dest *v = cli_grow(d->v, &d->cap, d->n + 1, sizeof *v, "the stores of an import");
  if (!v) return NULL;
  d->v = v;
  dest x = {strdup(key), NULL, "", 0, 0};
  if (!x.key) {
    cli_fail("cache", "tune import", CUCORE_HOST_OUT_OF_MEMORY);
    return NULL;
  }
  char *path = NULL;
  if (d->into && asprintf(&path, "%s/%s.jsonl", d->into, key) < 0) path = NULL;
  cucore_status st = d->into && !path ? CUCORE_HOST_OUT_OF_MEMORY
                                      : cucore_tune_store_open(path, key, NULL, NULL, &x.s);
  free(path);
  if (st == CUCORE_OK) st = cucore_tune_store_get_info(x.s, &x.path, NULL, NULL);
  if (st != CUCORE_OK) {
    cucore_tune_store_close(x.s);
    free(x.key);
    cli_fail("cache", "tune import", st);
    return NULL;
  }
  d->v[d->n] = x;
  return &d->v[d->n++];
}

/* Every record of `in` merged into the store of its key. 0, or an exit code. */
static int merge(cucore_tune_store *in, size_t n, dests *d) {
  for (size_t i = 0; i < n; i++) {
    cucore_tune_record r;
    int added = 0;
    cucore_status st = cucore_tune_store_get_record(in, i, &r);
    dest *x = st == CUCORE_OK ? dest_of(d, r.key) : NULL;
    if (st == CUCORE_OK && !x) return CLI_EXIT_FAILURE;
    if (st == CUCORE_OK) st = cucore_tune_store_append_record(x->s, &r, &added);
    if (st != CUCORE_OK) return cli_fail("cache", "tune import", st);
    x->added += (size_t)added, x->had += (size_t)!added;
  }
  return 0;
}

static void import_report(const char *file, const dests *d, size_t damaged, json_out *j) {
  size_t added = 0, had = 0;
  if (j) json_str(j, "file", file), json_begin_array(j, "stores");
  for (size_t i = 0; i < d->n; i++) {
    added += d->v[i].added, had += d->v[i].had;
    if (!j) continue;
    json_begin_object(j, NULL);
    json_str(j, "key", d->v[i].key);
    json_str(j, "path", d->v[i].path);
    json_uint(j, "imported", d->v[i].added);
    json_uint(j, "duplicates", d->v[i].had);
    json_end_object(j);
  }
  if (j) json_end_array(j), json_uint(j, "imported", added), json_uint(j, "duplicates", had);
  if (j) json_uint(j, "damaged", damaged);
  if (!j)
    printf("imported %zu record%s from %s into %zu tune store%s (%zu already there)\n", added,
           added == 1 ? "" : "s", file, d->n, d->n == 1 ? "" : "s", had);
  if (damaged)
    fprintf(stderr,
            "cucore cache: note: %zu line%s of %s could not be read (expected one store "
            "record per line) and %s skipped\n",
            damaged, damaged == 1 ? "" : "s", file, damaged == 1 ? "was" : "were");
}

/* The records of the store file `file` merged into d (*n of them read, *damaged lines). */
static int merge_file(const char *file, dests *d, size_t *n, size_t *damaged) {
  cucore_tune_store *in = NULL;
  *n = 0;
  cucore_status st = cucore_tune_store_open_read_only(file, NULL, NULL, NULL, &in);
  if (st == CUCORE_OK) st = cucore_tune_store_get_record_count(in, n);
  size_t bad = 0;
  if (st == CUCORE_OK) st = cucore_tune_store_get_info(in, NULL, NULL, &bad);
  *damaged += bad;
  int rc = st == CUCORE_OK ? merge(in, *n, d) : cli_fail("cache", "tune import", st);
  cucore_tune_store_close(in);
  return rc;
}

static void dests_close(dests *d) {
  for (size_t i = 0; i < d->n; i++) cucore_tune_store_close(d->v[i].s), free(d->v[i].key);
  free(d->v);
}

/* `import FILE`: a store's lines (another machine's `export`) merged into the stores of their
 * keys, records there already skipped. */
static int import_file(const char *file, json_out *j) {
  size_t n = 0, damaged = 0;
  dests d = {0};
  int rc = merge_file(file, &d, &n, &damaged);
  if (!rc && n == 0) {
    fprintf(stderr,
            "cucore cache: tune import: `%s` holds no store records (expected the lines "
            "of a tune store, as `cucore cache tune export KEY` writes them)\n",
            file);
    rc = CLI_EXIT_FAILURE;
  }
  if (!rc) import_report(file, &d, damaged, j);
  dests_close(&d);
  return rc;
}

/* `merge DIR [--into DIR2]`: every store of DIR (each shard's --db-dir, gathered from hosts
 * without a shared file system) merged into the store of its key in the cache folder, or in
 * DIR2; records there already skipped. Then one report: `cucore tune ... --report-only` (with
 * --db-dir DIR2). */
static int merge_dir(const char *dir, const char *into, json_out *j) {
  keys k = {0};
  int missing = 0, rc = list_keys(dir, &k, &missing);
  if (!rc && (missing || k.n == 0)) {
    fprintf(stderr,
            "cucore cache: tune merge: `%s` holds no tune store (expected a folder of "
            "KEY.jsonl files, as `cucore tune --db-dir` makes)\n",
            dir);
    rc = CLI_EXIT_FAILURE;
  }
  dests d = {.into = into};
  size_t n = 0, damaged = 0;
  for (size_t i = 0; !rc && i < k.n; i++) {
    char *path = NULL;
    if (asprintf(&path, "%s/%s.jsonl", dir, k.v[i]) < 0)
      rc = cli_fail("cache", "tune merge", CUCORE_HOST_OUT_OF_MEMORY);
    if (!rc) rc = merge_file(path, &d, &n, &damaged);
    free(path);
  }
  if (!rc) import_report(dir, &d, damaged, j);
  dests_close(&d);
  keys_free(&k);
  return rc;
}

/* ---- the command ---- */

/* The action and its operand checked: 0, or a usage error's exit code. */
static int check_line(const char *action, const char *arg, const ct_line *line) {
  static const char *const needs[] = {"show",   "KEY",  "export", "KEY",
                                      "import", "FILE", "merge",  "DIR"};
  int known = 0;
  for (size_t i = 0; i < 8; i += 2)
    if (strcmp(action, needs[i]) == 0) {
      known = 1;
      if (!arg)
        return cli_usage("cache", "tune %s needs a %s (see `cucore help cache`)", action,
                         needs[i + 1]);
    }
  if (!known && strcmp(action, "list") != 0 && strcmp(action, "clear") != 0)
    return cli_usage("cache",
                     "unknown action `tune %s`; expected tune list, tune show KEY, tune clear "
                     "[KEY], tune export KEY [--t4 FILE], tune import FILE or tune merge DIR "
                     "[--into DIR]",
                     action);
  if (strcmp(action, "list") == 0 && arg)
    return cli_usage("cache", "tune list takes no operand (`%s`); expected tune show KEY", arg);
  if (line->into && strcmp(action, "merge") != 0)
    return cli_usage("cache", "--into DIR belongs to tune merge DIR, not tune %s", action);
  if (line->t4 && strcmp(action, "export") != 0)
    return cli_usage("cache", "--t4 FILE belongs to tune export KEY, not tune %s", action);
  if (line->json && strcmp(action, "export") == 0)
    return cli_usage("cache", "tune export writes the store's lines (or T4 JSON with --t4 "
                              "FILE): --json has nothing to add");
  return 0;
}

/* list, show, clear and export over the stores of the cache folder. */
static int on_stores(const char *action, const char *arg, const ct_line *line, json_out *j) {
  char *dir = NULL;
  keys k = {0};
  int missing = 0, rc = tune_dir(&dir);
  if (!rc) rc = list_keys(dir, &k, &missing);
  const char *key = NULL;
  if (!rc && arg) rc = resolve(dir, &k, arg, &key);
  if (!rc && strcmp(action, "list") == 0) rc = list_stores(dir, &k, missing, j);
  if (!rc && strcmp(action, "show") == 0) rc = show_store(dir, key, j);
  if (!rc && strcmp(action, "clear") == 0) rc = clear_stores(dir, &k, key, j);
  if (!rc && strcmp(action, "export") == 0) rc = export_store(dir, key, line->t4);
  keys_free(&k);
  free(dir);
  return rc;
}

int cmd_cache_tune(int argc, char **argv) {
  const char *pos[2] = {NULL, NULL};
  ct_line line = {0};
  cli_parse parse = {"cache", ct_opts, &line, NULL, pos, 2, 0, "action"};
  int rc = cli_opt_parse(&parse, argc, argv);
  if (rc) return rc;
  const char *action = pos[0] ? pos[0] : "list";
  if ((rc = check_line(action, pos[1], &line))) return rc;
  char *text = NULL; /* --json: the object, printed only when the action succeeds */
  size_t size = 0;
  json_out j = {line.json ? open_memstream(&text, &size) : NULL, 0, {0}, 1, 0};
  if (line.json && !j.f) return cli_fail("cache", "tune", CUCORE_HOST_OUT_OF_MEMORY);
  if (j.f) json_begin_object(&j, NULL);
  if (strcmp(action, "import") == 0)
    rc = import_file(pos[1], j.f ? &j : NULL);
  else if (strcmp(action, "merge") == 0)
    rc = merge_dir(pos[1], line.into, j.f ? &j : NULL);
  else
    rc = on_stores(action, pos[1], &line, j.f ? &j : NULL);
  if (j.f) json_end_object(&j), fclose(j.f); /* the top level ends with its newline */
  if (!rc && text) fwrite(text, 1, size, stdout);
  free(text);
  return rc;
}
