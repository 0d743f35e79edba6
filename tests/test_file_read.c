/* test_file_read.c -- the one careful reader (cucore_file_read; cc_read_file and every library
 * reader on it): regular files only, by kind and without waiting (a FIFO with no writer,
 * /dev/zero, a directory), the size cap, /proc files that report size 0, "-" as standard
 * input, and cucore_object_from_file's directory. */
#include "support.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"

static char dir[] = "/tmp/cucore_file_read_XXXXXX";
static char fifo[64], big[64], small[64];

static int setup(void **state) {
  (void)state;
  if (!mkdtemp(dir)) return -1;
  snprintf(fifo, sizeof fifo, "%s/fifo", dir);
  snprintf(big, sizeof big, "%s/big", dir);
  snprintf(small, sizeof small, "%s/small", dir);
  FILE *f = fopen(small, "w");
  if (!f) return -1;
  fputs("0123456789", f);
  fclose(f);
  alarm(20); /* a reader that waits on the FIFO fails the test instead of hanging it */
  return mkfifo(fifo, 0600);
}

static int teardown(void **state) {
  (void)state;
  unlink(fifo);
  unlink(big);
  unlink(small);
  rmdir(dir);
  return 0;
}

/* Refused with IO_ERROR, *data NULL, and the message names the path and `want`. */
static void refused(const char *path, uint64_t cap, const char *want) {
  void *data = (void *)1;
  size_t size = 7;
  cucore_status st = cucore_file_read(path, cap, &data, &size);
  assert_int_equal(CUCORE_CODE(st), CUCORE_IO_ERROR);
  assert_null(data);
  assert_int_equal(size, 0);
  const char *msg = cucore_last_error();
  if (!strstr(msg, path) || !strstr(msg, want)) fail_msg("%s: `%s`", path, msg);
}

static void special_files_refused_by_kind(void **state) {
  (void)state;
  refused(fifo, 0, "is a FIFO");
  refused("/dev/zero", 0, "is a character device");
  refused("/dev/urandom", 0, "is a character device");
  refused(dir, 0, "is a directory");
  refused("/tmp", 0, "is a directory");
  refused("/nonexistent/cucore", 0, "cannot open");
  /* The internal reader every library reader uses says the same. */
  unsigned char *data = NULL;
  size_t size = 0;
  cc_begin(); /* internal calls keep the first message since the last cc_begin */
  assert_int_equal(CUCORE_CODE(cc_read_file(fifo, &data, &size)), CUCORE_IO_ERROR);
  cc_begin();
  assert_int_equal(CUCORE_CODE(cc_read_file("/tmp", &data, &size)), CUCORE_IO_ERROR);
  assert_non_null(strstr(cucore_last_error(), "is a directory"));
}

static void object_from_directory_is_io_error(void **state) {
  (void)state;
  cucore_object *obj = NULL;
  cucore_status st = cucore_object_from_file("/tmp", CUCORE_CODE_AUTO, &obj);
  assert_int_equal(CUCORE_CODE(st), CUCORE_IO_ERROR);
  assert_non_null(strstr(cucore_last_error(), "`/tmp` is a directory"));
  assert_null(strstr(cucore_last_error(), "out of host memory"));
}

static void size_cap(void **state) {
  (void)state;
  void *data = NULL;
  size_t size = 0;
  assert_int_equal(cucore_file_read(small, 10, &data, &size), CUCORE_OK);
  assert_int_equal(size, 10);
  assert_int_equal(((char *)data)[10], '\0');
  assert_memory_equal(data, "0123456789", 10);
  cucore_file_free(data);
  refused(small, 9, "is 10 bytes; the most cucore reads is 9 bytes");
  /* A sparse file past the default cap: refused from its size, nothing read. */
  int fd = open(big, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  assert_true(fd >= 0);
  assert_int_equal(ftruncate(fd, (off_t)CUCORE_FILE_MAX_BYTES_DEFAULT + 1), 0);
  close(fd);
  refused(big, 0, "is 1073741825 bytes; the most cucore reads is 1073741824 bytes");
  assert_int_equal(cucore_file_free(NULL), CUCORE_OK);
}

/* /proc files report size 0; their content is read to its end, within the cap. */
static void proc_files_read(void **state) {
  (void)state;
  void *data = NULL;
  size_t size = 0;
  assert_int_equal(cucore_file_read("/proc/self/status", 0, &data, &size), CUCORE_OK);
  assert_true(size > 0);
  assert_int_equal(strlen(data), size);
  assert_non_null(strstr(data, "Name:"));
  cucore_file_free(data);
  refused("/proc/self/status", 16, "holds more than 16 bytes");
}

/* "-" is standard input (here a pipe), bounded by the cap. */
static void stdin_dash(void **state) {
  (void)state;
  int p[2];
  assert_int_equal(pipe(p), 0);
  assert_int_equal(write(p[1], "from a pipe", 11), 11);
  close(p[1]);
  int saved = dup(0);
  dup2(p[0], 0);
  close(p[0]);
  void *data = NULL;
  size_t size = 0;
  cucore_status st = cucore_file_read("-", 0, &data, &size);
  dup2(saved, 0);
  close(saved);
  assert_int_equal(st, CUCORE_OK);
  assert_int_equal(size, 11);
  assert_string_equal(data, "from a pipe");
  cucore_file_free(data);
  /* The library's own readers take "-" as a file name. */
  unsigned char *raw = NULL;
  assert_int_equal(CUCORE_CODE(cc_read_file("-", &raw, &size)), CUCORE_IO_ERROR);
}

static void null_arguments(void **state) {
  (void)state;
  void *data = NULL;
  size_t size = 0;
  assert_int_equal(CUCORE_CODE(cucore_file_read(NULL, 0, &data, &size)), CUCORE_INVALID_ARGUMENT);
  assert_int_equal(CUCORE_CODE(cucore_file_read(small, 0, NULL, &size)), CUCORE_INVALID_ARGUMENT);
  assert_int_equal(CUCORE_CODE(cucore_file_read(small, 0, &data, NULL)), CUCORE_INVALID_ARGUMENT);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(special_files_refused_by_kind),
                                     cmocka_unit_test(object_from_directory_is_io_error),
                                     cmocka_unit_test(size_cap),
                                     cmocka_unit_test(proc_files_read),
                                     cmocka_unit_test(stdin_dash),
                                     cmocka_unit_test(null_arguments)};
  return cmocka_run_group_tests(tests, setup, teardown);
}
