/* cmd_cache.c -- `cucore cache`: where the compile cache is, what it holds, and clearing it. */
#include <inttypes.h>
#include <string.h>

#include "cli.h"

static const char cmd_cache_help[] =
    "usage: cucore cache [stats|path|clear] [--json]\n"
    "       cucore cache key FILE [--target ptx|cubin|ltoir|fatbin] [--json] [compile options]\n"
    "       cucore cache tune [list|show KEY|clear [KEY]|import FILE] [--json]\n"
    "       cucore cache tune export KEY [--t4 FILE]\n"
    "       cucore cache tune merge DIR [--into DIR] [--json]\n"
    "\n"
    "Program compiles are cached on disk (and within a process), keyed by a SHA-256 of\n"
    "everything that decides the output: source, in-memory headers, options, arch, target,\n"
    "name expressions, the compiler library and cucore's version. A compile that can read\n"
    "files the key cannot see (an include path, a pre-include, a header beside the source)\n"
    "is not cached.\n"
    "\n"
    "  stats    (the default) the directory, whether the cache is on, its entries and size\n"
    "           against the cap, and the counters of every process that used it since it\n"
    "           was last cleared: hits, misses, stores, evictions, errors, uncacheable\n"
    "  path     print the cache directory\n"
    "  clear    remove every entry and reset the counters\n"
    "  key      the key a compile of FILE with these compile options would use, computed\n"
    "           without compiling (the `cache_key` of `cucore compile --json`); none (exit\n"
    "           1, the reason on stderr) when the compile cannot be cached\n"
    "  tune     the result stores of `cucore tune` (tune/KEY.jsonl, its default --db):\n"
    "             list         each store: its key, source file, kernel, problem size,\n"
    "                          records, verified ones and best (\"no tune stores in\n"
    "                          DIR\" when there are none)\n"
    "             show KEY     one line per record: configuration, status, median\n"
    "                          (--json: the whole records)\n"
    "             clear [KEY]  remove one store, or all of them\n"
    "             export KEY   the store's lines on stdout, for `import` on another\n"
    "                          machine; --t4 FILE: its results as TuningSchema T4 JSON\n"
    "                          (the shape `tune --t4` writes)\n"
    "             import FILE  a store's lines merged into the store of their key,\n"
    "                          records already there skipped\n"
    "             merge DIR    every store of DIR (a shard's `tune --db-dir DIR`)\n"
    "                          merged the same way, into the cache folder's stores or\n"
    "                          --into DIR's; then `cucore tune ... --report-only` reports\n"
    "                          all the shards' results as one tune\n"
    "           KEY: a key or, as git takes a commit, a unique prefix of at least 4 of its\n"
    "           hexadecimal digits (a prefix that fits several stores lists them)\n"
    "\n"
    "options:\n"
    "%o"
    "\n"
    "environment:\n"
    "  CUCORE_CACHE_DIR        the directory (else $XDG_CACHE_HOME/cucore, else\n"
    "                          ~/.cache/cucore)\n"
    "  CUCORE_CACHE_DISABLE=1  turn the cache off\n"
    "  CUCORE_CACHE_MAX_BYTES  the size cap: bytes, or with a K, M or G suffix (default 1G);\n"
    "                          least recently used entries go first\n"
    "\n"
    "A configuration the cache cannot use (a CUCORE_CACHE_DIR that is a file or cannot be\n"
    "written or created, a malformed CUCORE_CACHE_MAX_BYTES or CUCORE_CACHE_DISABLE) is named\n"
    "on stderr: `stats` and `path` then exit 1 and print nothing; every compile warns once\n"
    "and goes on without the cache.\n"
    "\n"
    "exit status: 0 done; 1 the cache cannot be used as configured, there is no directory,\n"
    "it cannot be read, `clear` could not remove everything (it says how many files and the\n"
    "first with the reason) or removed nothing, `key` found no key or could not read FILE,\n"
    "no tune store matches a KEY, an import file\n"
    "is not a store, or the output cannot be written; 2 usage (an ambiguous or malformed\n"
    "KEY too).\n"
    "\n"
    "examples:\n"
    "  cucore cache\n"
    "  cucore cache stats --json | jq .hits\n"
    "  CUCORE_CACHE_DIR=/tmp/cc cucore cache clear\n"
    "  cucore cache key saxpy.cu --arch sm_90 -DN=256\n"
    "  cucore cache tune show 3fa9\n"
    "  cucore cache tune export 3fa9 > gemm.jsonl   # then, elsewhere:\n"
    "  cucore cache tune import gemm.jsonl\n";

static void print_size(uint64_t bytes) {
  static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)bytes;
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    u++;
  }
  if (u == 0)
    printf("%" PRIu64 " bytes", bytes);
  else
    printf("%.1f %s", v, units[u]);
}

/* Output written whole, or exit 1 with the reason. */
static int output_done(void) {
  if (fflush(stdout) == 0 && !ferror(stdout)) return CLI_EXIT_OK;
  fprintf(stderr, "cucore cache: cannot write the output: %s\n",
          errno ? strerror(errno) : "write error");
  return CLI_EXIT_FAILURE;
}

static void stats_json(const cucore_cache_stats *s) {
  const cucore_cache_counters *c = &s->total;
  json_out j = {stdout, 0, {0}, 1};
  json_begin_object(&j, NULL);
  json_str(&j, "dir", s->dir[0] ? s->dir : NULL);
  json_bool(&j, "enabled", s->enabled);
  json_int(&j, "entries", (long long)s->entries);
  json_int(&j, "bytes", (long long)s->bytes);
  json_int(&j, "max_bytes", (long long)s->max_bytes);
  json_int(&j, "hits", (long long)c->hits);
  json_int(&j, "misses", (long long)c->misses);
  json_int(&j, "stores", (long long)c->stores);
  json_int(&j, "evictions", (long long)c->evictions);
  json_int(&j, "errors", (long long)c->errors);
  json_int(&j, "uncacheable", (long long)c->uncacheable);
  json_end_object(&j);
}

static void stats_text(const cucore_cache_stats *s) {
  const cucore_cache_counters *c = &s->total;
  printf("directory    %s\n", s->dir[0] ? s->dir : "(none: set CUCORE_CACHE_DIR)");
  printf("enabled      %s\n", s->enabled ? "yes" : "no");
  printf("entries      %" PRIu64 "\n", s->entries);
  printf("size         ");
  print_size(s->bytes);
  printf(" of ");
  print_size(s->max_bytes);
  printf("\n");
  printf("hits         %" PRIu64 "\n", c->hits);
  printf("misses       %" PRIu64 "\n", c->misses);
  printf("stores       %" PRIu64 "\n", c->stores);
  printf("evictions    %" PRIu64 "\n", c->evictions);
  printf("errors       %" PRIu64 "\n", c->errors);
  printf("uncacheable  %" PRIu64 "\n", c->uncacheable);
}

static int cache_stats(int json) {
  if (cli_cache_check("cache")) return CLI_EXIT_FAILURE;
  cucore_cache_stats s;
  cucore_status st = cucore_cache_get_stats(&s);
  if (st != CUCORE_OK) return cli_fail("cache", "stats", st);
  if (json)
    stats_json(&s);
  else
    stats_text(&s);
  return output_done();
}

static int cache_path(int json) {
  if (cli_cache_check("cache")) return CLI_EXIT_FAILURE;
  cucore_cache_stats s;
  int rc = cli_cache_dir("path", &s);
  if (rc) return rc;
  if (json) {
    json_out j = {stdout, 0, {0}, 1};
    json_begin_object(&j, NULL);
    json_str(&j, "dir", s.dir);
    json_end_object(&j);
  } else {
    printf("%s\n", s.dir);
  }
  return output_done();
}

static int cache_clear(int json) {
  cli_cache_warn_once();
  cucore_cache_stats s;
  cucore_status st = cucore_cache_get_stats(&s);
  uint64_t entries = 0, bytes = 0;
  if (st == CUCORE_OK) st = cucore_cache_clear(&entries, &bytes);
  if (st != CUCORE_OK) return cli_fail("cache", "clear", st);
  if (json) {
    json_out j = {stdout, 0, {0}, 1};
    json_begin_object(&j, NULL);
    json_str(&j, "dir", s.dir[0] ? s.dir : NULL);
    json_int(&j, "removed_entries", (long long)entries);
    json_int(&j, "removed_bytes", (long long)bytes);
    json_end_object(&j);
  } else {
    printf("removed %" PRIu64 " entr%s (", entries, entries == 1 ? "y" : "ies");
    print_size(bytes);
    printf(") from %s\n", s.dir[0] ? s.dir : "(no directory)");
  }
  return output_done();
}

static int cmd_cache(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "tune") == 0) return cmd_cache_tune(argc - 1, argv + 1);
  if (argc > 1 && strcmp(argv[1], "key") == 0) return cmd_cache_key(argc - 1, argv + 1);
  const char *action = NULL;
  cli_json_only line = {0};
  cli_parse parse = {"cache", cli_json_opts, &line, NULL, &action, 1, 0, "action"};
  int rc = cli_opt_parse(&parse, argc, argv);
  if (rc) return rc;
  int json = line.json;
  if (!action || strcmp(action, "stats") == 0) return cache_stats(json);
  if (strcmp(action, "path") == 0) return cache_path(json);
  if (strcmp(action, "clear") == 0) return cache_clear(json);
  return cli_usage("cache", "unknown action `%s`; expected stats, path or clear", action);
}

/* `cucore cache`'s one help source: the summary and text here, each option's help in its row of
 * cli_json_opts. */
const cli_verb cmd_cache_verb = {"cache", cmd_cache, "show, locate or clear the compile cache",
                                 cmd_cache_help, cli_json_opts};
