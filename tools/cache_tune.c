/* cache_tune.c -- `cucore cache tune list|show KEY|clear [KEY]`: the tune stores under the
 * cache folder (tune/KEY.jsonl, one line per measured configuration, cucore tune's default
 * --db): which tunes are kept, how many results each holds and its best, and removing them. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static int tune_dir(char *out, size_t cap) {
  cucore_cache_stats s;
  cucore_status st = cucore_cache_get_stats(&s);
  if (st != CUCORE_OK) return cli_fail("cache", "tune", st);
  if (!s.dir[0]) {
    fprintf(stderr, "cucore cache: no cache directory: set CUCORE_CACHE_DIR, XDG_CACHE_HOME or "
                    "HOME\n");
    return CLI_EXIT_FAILURE;
  }
  snprintf(out, cap, "%s/tune", s.dir);
  return 0;
}

/* Lines and lines with a verified result in a store file. */
static void count_lines(const char *path, size_t *lines, size_t *ok) {
  char *data = NULL;
  size_t size = 0;
  *lines = *ok = 0;
  if (cli_read_file("cache", path, &data, &size)) return;
  for (char *p = data; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
    (*lines)++;
    char *nl = strchr(p, '\n');
    if (nl) *nl = 0;
    *ok += strstr(p, "\"status\":\"ok\"") != NULL;
    if (nl) *nl = '\n';
  }
  free(data);
}

static void show_one(json_out *j, const char *dir, const char *key) {
  char path[4400], cfg[1024] = "";
  double ms = 0;
  size_t lines, ok;
  cucore_tune_match how;
  snprintf(path, sizeof path, "%s/%s.jsonl", dir, key);
  count_lines(path, &lines, &ok);
  int found = cucore_tune_lookup(path, key, "", "", cfg, sizeof cfg, &ms, &how) == CUCORE_OK;
  if (!j) {
    printf("%s  %zu records, %zu verified", key, lines, ok);
    if (found) printf(", best %s %.4f ms", cfg, ms);
    printf("\n");
    return;
  }
  json_begin_object(j, NULL);
  json_str(j, "key", key);
  json_str(j, "path", path);
  json_uint(j, "records", lines);
  json_uint(j, "verified", ok);
  if (found) json_number_text(j, "best", cfg);
  if (found) json_num(j, "best_ms", ms);
  json_end_object(j);
}

/* Each store of the folder (one key when `only` is set): shown, or removed. */
static int each_store(const char *dir, const char *only, int remove_them, json_out *j) {
  DIR *d = opendir(dir);
  size_t n = 0;
  for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
    size_t len = strlen(e->d_name);
    if (len != 64 + 6 || strcmp(e->d_name + 64, ".jsonl") != 0) continue;
    char key[65];
    snprintf(key, sizeof key, "%.64s", e->d_name);
    if (only && strcmp(only, key) != 0) continue;
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (remove_them)
      n += unlink(path) == 0;
    else
      show_one(j, dir, key), n++;
  }
  if (d) closedir(d);
  if (remove_them && !j) printf("removed %zu tune store%s from %s\n", n, n == 1 ? "" : "s", dir);
  if (remove_them && j) json_uint(j, "removed", n);
  if (only && n == 0) {
    fprintf(stderr, "cucore cache: no tune store `%s` in %s\n", only, dir);
    return CLI_EXIT_FAILURE;
  }
  return 0;
}

int cmd_cache_tune(int argc, char **argv) {
  const char *pos[2] = {NULL, NULL};
  cli_json_only line = {0};
  cli_parse parse = {"cache", cli_json_opts, &line, NULL, pos, 2, 0, "action"};
  int rc = cli_opt_parse(&parse, argc, argv);
  if (rc) return rc;
  const char *action = pos[0] ? pos[0] : "list";
  int list = strcmp(action, "list") == 0, show = strcmp(action, "show") == 0;
  int clear = strcmp(action, "clear") == 0;
  if (!list && !show && !clear)
    return cli_usage("cache",
                     "unknown action `tune %s`; expected tune list, tune show KEY or "
                     "tune clear [KEY]",
                     action);
  if (show && !pos[1]) return cli_usage("cache", "tune show needs a KEY (see `cache tune list`)");
  char dir[4200];
  if ((rc = tune_dir(dir, sizeof dir))) return rc;
  json_out j = {stdout, 0, {0}, 1, 0};
  if (line.json) json_begin_object(&j, NULL);
  if (line.json && !clear) json_begin_array(&j, "stores");
  rc = each_store(dir, pos[1], clear, line.json ? &j : NULL);
  if (line.json && !clear) json_end_array(&j);
  if (line.json) json_end_object(&j);
  if (line.json) fputc('\n', stdout);
  return rc;
}
