/*
 * tune/store.h -- the records of a tune store as its files share them: reading a store file
 * (store_file.c) for the store (store.c) and the lookup (lookup.c), the default path, and a
 * JSON string writer for the lines.
 */
#ifndef CUCORE_TUNE_STORE_H
#define CUCORE_TUNE_STORE_H

#include "base/base.h"

#include <stddef.h>

/* One line of a store. Strings are owned. */
typedef struct cc_trec {
  char *key, *problem, *device;
  char *config, *result; /* the JSON texts as written */
  double median;         /* result's median_ms; -1 when none */
  int ok;                /* result's status is "ok" */
} cc_trec;

typedef struct cc_trecs {
  cc_trec *r;
  size_t n, cap;
  size_t damaged; /* lines that could not be read */
  int torn;       /* the file does not end with a newline (a write was cut) */
} cc_trecs;

/* Reads every record of the file at `path` (a missing file has none). CUCORE_IO_ERROR names
 * a file that exists and cannot be read. */
cucore_status cc_tune_records_read(const char *path, cc_trecs *out);
/* Adds a record (copies of the texts). -1 when out of memory. */
int cc_tune_records_add(cc_trecs *rs, const char *key, const char *problem, const char *device,
                        const char *config, size_t config_len, const char *result,
                        size_t result_len);
void cc_tune_records_free(cc_trecs *rs);
/* `<compile cache folder>/tune/<key>.jsonl` into out; CUCORE_IO_ERROR when there is no cache
 * folder. */
cucore_status cc_tune_store_default_path(const char *key, char *out, size_t cap);
/* Checks that `key` is 64 hexadecimal digits (CUCORE_INVALID_ARGUMENT naming `fn`). */
cucore_status cc_tune_check_key(const char *fn, const char *key);

#endif /* CUCORE_TUNE_STORE_H */
