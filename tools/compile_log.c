/* compile_log.c -- what a compiler said, as the command shows it: the log printed on stderr
 * (through the text filter main() puts on it) and cut after CLI_LOG_LINES lines, with the whole
 * of it written to the --log file; and what an NVRTC failure means for the nvcc fallback
 * (which failures nvcc can fix, which are the command line's, which are a name expression's). */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static size_t count_lines(const char *s) {
  size_t n = 0;
  for (; *s; s++)
    if (*s == '\n' && s[1]) n++;
  return n + 1;
}

/* Writes the whole log to `path` (through a temporary, as every output); 0, or -1 after
 * saying why. */
static int write_log(const char *verb, const char *path, const char *log) {
  return cli_write_file(verb, "--log", path, log, strlen(log)) ? -1 : 0;
}

/* Prints `shown` (the log, or its records) on stderr, at most CLI_LOG_LINES lines, and writes
 * the raw `log` to `log_path`. */
static int print_head(const char *verb, const char *shown, const char *log, const char *log_path) {
  if (!shown || !shown[0]) return log_path ? write_log(verb, log_path, log ? log : "") : 0;
  size_t total = count_lines(shown);
  const char *p = shown;
  for (size_t i = 0; i < CLI_LOG_LINES && *p; i++) {
    size_t len = strcspn(p, "\n");
    fprintf(stderr, "%.*s\n", (int)len, p);
    p += len + (p[len] == '\n');
  }
  int rc = log_path ? write_log(verb, log_path, log) : 0;
  if (total > CLI_LOG_LINES) {
    if (log_path && rc == 0 && shown == log)
      fprintf(stderr, "(%zu more lines: all %zu in `%s`)\n", total - CLI_LOG_LINES, total,
              log_path);
    else if (log_path && rc == 0)
      fprintf(stderr, "(%zu more lines: all of the log in `%s`)\n", total - CLI_LOG_LINES,
              log_path);
    else
      fprintf(stderr, "(%zu more lines: --log FILE)\n", total - CLI_LOG_LINES);
  }
  return rc;
}

int cli_log_print(const char *verb, const char *log, const char *log_path) {
  return print_head(verb, log, log, log_path);
}

/* One record as the command shows it: `file:line:col: severity: message [#N]`, then the lines
 * that belong to it; a line without structure as it is. */
static void diag_text(FILE *f, const cucore_diagnostic *d) {
  if (d->severity == CUCORE_DIAG_TEXT) {
    fprintf(f, "%s\n", d->text);
    return;
  }
  if (d->file[0]) fprintf(f, "%s:", d->file);
  if (d->file[0] && d->line) fprintf(f, "%d:", d->line);
  if (d->file[0] && d->line && d->column) fprintf(f, "%d:", d->column);
  fprintf(f, "%s%s: %s", d->file[0] ? " " : "", cucore_diag_severity_name(d->severity), d->message);
  if (d->number) fprintf(f, " [#%d]", d->number);
  const char *more = strchr(d->text, '\n');
  fprintf(f, "\n%s%s", more ? more + 1 : "", more ? "\n" : "");
}

int cli_diag_print(const char *verb, const cucore_program *prog, const char *log,
                   const char *log_path) {
  int n = 0;
  char *shown = NULL;
  size_t len = 0;
  FILE *f = cucore_program_get_diagnostic_count(prog, &n) == CUCORE_OK && n > 0
                ? open_memstream(&shown, &len)
                : NULL;
  for (int i = 0; f && i < n; i++) {
    cucore_diagnostic d;
    if (cucore_program_get_diagnostic(prog, i, &d) == CUCORE_OK) diag_text(f, &d);
  }
  int ok = f && fclose(f) == 0;
  int rc = print_head(verb, ok ? shown : log, log, log_path);
  free(shown);
  return rc;
}

void cli_diag_json(json_out *j, const char *key, const cucore_program *prog) {
  int n = 0;
  if (!prog || cucore_program_get_diagnostic_count(prog, &n) != CUCORE_OK) return;
  json_begin_array(j, key);
  for (int i = 0; i < n; i++) {
    cucore_diagnostic d;
    if (cucore_program_get_diagnostic(prog, i, &d) != CUCORE_OK) continue;
    json_begin_object(j, NULL);
    json_str(j, "severity", cucore_diag_severity_name(d.severity));
    json_str(j, "file", d.file);
    json_int(j, "line", d.line);
    json_int(j, "column", d.column);
    json_int(j, "number", d.number);
    json_str(j, "message", d.message);
    json_end_object(j);
  }
  json_end_array(j);
}

/* The first line of the log that reports an error (copied into line), or NULL. */
static const char *first_error(const char *log, char *line, size_t n) {
  for (const char *p = log; p && *p;) {
    size_t len = strcspn(p, "\n");
    const char *e = strstr(p, "error");
    if (e && (size_t)(e - p) < len) {
      snprintf(line, n, "%.*s", (int)len, p);
      return p;
    }
    p += len + (p[len] == '\n');
  }
  return NULL;
}

/* 1 when some line of the log starts with `prefix` and reports an error. */
static int error_line_starts(const char *log, const char *prefix) {
  size_t k = strlen(prefix);
  for (const char *p = log; p && *p;) {
    size_t len = strcspn(p, "\n");
    const char *e = strstr(p, "error");
    if (len >= k && strncmp(p, prefix, k) == 0 && e && (size_t)(e - p) < len) return 1;
    p += len + (p[len] == '\n');
  }
  return 0;
}

/* A header nvcc finds and NVRTC does not: the C++ library's (no extension: <vector>,
 * <cstdio>) or one in the system's include folders (<stdio.h>, <cuda_runtime.h>). */
static int host_header(const char *name) {
  if (!name[0] || strstr(name, "..")) return 0;
  if (!strchr(name, '.') && !strchr(name, '/')) return 1;
  const char *dirs[] = {"/usr/include", "/usr/local/include", "/usr/local/cuda/include"};
  for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dirs[i], name);
    if (access(path, R_OK) == 0) return 1;
  }
  return 0;
}

/* The header a "cannot open source file" line names, and whether it is a host header. */
static int missing_host_header(const char *line, char *why, size_t n) {
  const char *m = strstr(line, "cannot open source file \"");
  if (!m) return 0;
  m += strlen("cannot open source file \"");
  char name[512];
  snprintf(name, sizeof name, "%.*s", (int)strcspn(m, "\""), m);
  if (!host_header(name)) return 0;
  snprintf(why, n, "it includes the host header <%s>, which NVRTC does not have", name);
  return 1;
}

cli_nvrtc_failure cli_nvrtc_classify(cucore_status st, const char *log, char *why, size_t n) {
  char line[1024] = "";
  snprintf(why, n, "%s", cucore_last_error());
  if (!log) log = "";
  const char *first = first_error(log, line, sizeof line);
  if (first) snprintf(why, n, "%s", line);
  int nvrtc_option = CUCORE_CODE(st) == CUCORE_INVALID_ARGUMENT &&
                     cucore_status_source(st) ==
                         CUCORE_SOURCE_NVRTC; /* NVRTC_ERROR_INVALID_OPTION */
  if (nvrtc_option || strcasestr(log, "command-line error")) return CLI_NVRTC_OPTION;
  if (CUCORE_CODE(st) != CUCORE_COMPILE_ERROR) return CLI_NVRTC_OTHER;
  if (error_line_starts(log, "__nv_name_map")) return CLI_NVRTC_NAME_EXPR;
  if (!first) return CLI_NVRTC_OTHER;
  if (strstr(line, "host functions are not allowed")) {
    snprintf(why, n,
             "it has host code (a function without __device__ or __global__, such as "
             "main), which NVRTC does not compile");
    return CLI_NVRTC_HOST;
  }
  return missing_host_header(line, why, n) ? CLI_NVRTC_HOST : CLI_NVRTC_OTHER;
}
