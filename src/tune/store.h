/*
 * tune/store.h -- the records of a tune store as its files share them: reading a store file
 * (store_file.c: the one reader of a record line, for the store (store.c), its refresh and the
 * lookup (lookup.c)), the default path, and the key's check.
 */
#ifndef CUCORE_TUNE_STORE_H
#define CUCORE_TUNE_STORE_H

#include "base/base.h"

#include <stddef.h>

/* One line of a store: the public record, its strings owned (malloc'd; free with a cast). */
typedef cucore_tune_record cc_trec;

typedef struct cc_trecs {
  cc_trec *r;
  size_t n, cap;
  size_t damaged; /* lines that could not be read */
  int torn;       /* the file does not end with a newline (a write was cut, or is under way) */
  int first;      /* the file's first line: 1 a store record (or the start of one, torn), 0
                     something else, -1 none (a missing or empty file) */
  long long end;  /* the bytes read: where a refresh goes on (the start of a torn last line,
                     which a refresh reads again once it is whole) */
} cc_trecs;

/* The names of a record's line besides its config and result (NULL: ""). */
typedef struct cc_trec_names {
  const char *key, *problem, *device, *source, *kernel;
} cc_trec_names;

/* Reads every record of the file at `path` (a missing file has none). CUCORE_IO_ERROR names
 * a file that exists and cannot be read. */
cucore_status cc_tune_records_read(const char *path, cc_trecs *out);
/* Reads what was appended to the file at `path` since rs->end (complete lines only), skipping
 * the lines that begin at one of own[0..nown) (sorted: this process's appends, already in rs);
 * *added gets how many records were read. */
cucore_status cc_tune_records_refresh(const char *path, cc_trecs *rs, const long long *own,
                                      size_t nown, size_t *added);
/* Adds a record (copies of the texts; the result's fields read by the strict reader). -1 when
 * out of memory. */
int cc_tune_records_add(cc_trecs *rs, const cc_trec_names *names, const char *config,
                        size_t config_len, const char *result, size_t result_len);
void cc_tune_records_free(cc_trecs *rs);
/* `<compile cache folder>/tune/<key>.jsonl`, malloc'd, into *out; CUCORE_IO_ERROR when there
 * is no cache folder. */
cucore_status cc_tune_store_default_path(const char *key, char **out);
/* 1 when record r is of the store's own key, problem and device. */
int cc_tune_store_mine(const cucore_tune_store *s, const cc_trec *r);
/* Checks that `key` is 64 hexadecimal digits (CUCORE_INVALID_ARGUMENT naming `fn`). */
cucore_status cc_tune_check_key(const char *fn, const char *key);

#endif /* CUCORE_TUNE_STORE_H */
