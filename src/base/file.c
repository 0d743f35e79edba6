/* file.c -- the one careful whole-file reader: regular files only (a directory, FIFO, device or
 * socket is refused by kind, never waited on), a size cap, files that report size 0 but have
 * content (/proc) read by chunks up to the cap, EINTR retried, a NUL after the data. `-` is
 * standard input, read bounded by the cap, where the caller asks for it. */
#define _POSIX_C_SOURCE 200809L
#include "base/base.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static cucore_status fail_errno(int e, const char *what, const char *path) {
  return cc_fail(cc_status(CUCORE_IO_ERROR, CUCORE_SOURCE_ERRNO, e), "cannot %s `%s`: %s", what,
                 path, strerror(e));
}

/* What a file that is not a regular file is, for the message. */
static const char *kind_of(mode_t m) {
  return S_ISDIR(m)    ? "a directory"
         : S_ISFIFO(m) ? "a FIFO (named pipe)"
         : S_ISCHR(m)  ? "a character device"
         : S_ISBLK(m)  ? "a block device"
         : S_ISSOCK(m) ? "a socket"
                       : "not a regular file";
}

/* Appends bytes to *buf, growing it (doubling) to keep room for a NUL after them. */
static cucore_status append(unsigned char **buf, size_t *room, size_t *len, const void *bytes,
                            size_t n, const char *path) {
  size_t r = *room;
  while (r < *len + n + 1) r = r > SIZE_MAX / 2 ? SIZE_MAX : r * 2;
  if (r != *room) {
    unsigned char *b = cc_raw_realloc(*buf, r);
    if (!b)
      return cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "out of host memory reading `%s` (%zu bytes)", path,
                     r);
    *buf = b;
    *room = r;
  }
  memcpy(*buf + *len, bytes, n);
  *len += n;
  return CUCORE_OK;
}

/* One read into the buffer's free room, or (when it is full) into a probe that then grows it:
 * a regular file whose size was known is read without ever doubling its buffer. Returns the
 * bytes read, 0 at the end, -1 with errno. */
static ssize_t read_more(int fd, unsigned char **buf, size_t *room, size_t *len, const char *path,
                         cucore_status *st) {
  ssize_t n;
  if (*len + 1 < *room) {
    do n = read(fd, *buf + *len, *room - 1 - *len);
    while (n < 0 && errno == EINTR);
    if (n > 0) *len += (size_t)n;
    return n;
  }
  unsigned char probe[4096];
  do n = read(fd, probe, sizeof probe);
  while (n < 0 && errno == EINTR);
  if (n > 0 && (*st = append(buf, room, len, probe, (size_t)n, path)) != CUCORE_OK) return 0;
  return n;
}

/* Reads fd to its end, at most cap bytes; `hint` is the size fstat gave (0 when unknown). */
static cucore_status read_all(int fd, const char *path, size_t hint, size_t cap,
                              unsigned char **data, size_t *size) {
  size_t room = (hint ? hint : 65536) + 1, len = 0;
  unsigned char *buf = cc_malloc(room, path);
  if (!buf) return CUCORE_HOST_OUT_OF_MEMORY;
  cucore_status st = CUCORE_OK;
  ssize_t n;
  while ((n = read_more(fd, &buf, &room, &len, path, &st)) > 0 && st == CUCORE_OK)
    if (len > cap) {
      st = cc_fail(CUCORE_IO_ERROR, "`%s` holds more than %zu bytes, the most cucore reads", path,
                   cap);
      break;
    }
  if (n < 0) st = fail_errno(errno, "read", path);
  if (st != CUCORE_OK) {
    free(buf);
    return st;
  }
  buf[len] = 0;
  *data = buf;
  *size = len;
  return CUCORE_OK;
}

/* Opens path without waiting on a FIFO's writer; EINTR retried. */
static int open_nonblocking(const char *path) {
  int fd;
  do fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  while (fd < 0 && errno == EINTR);
  return fd;
}

/* Checks what fd is: regular files pass (and their size against the cap); standard input may
 * also be a pipe, a terminal or a socket; a directory never. */
static cucore_status check_kind(int fd, const char *path, int is_stdin, size_t cap, size_t *hint) {
  struct stat sb;
  if (fstat(fd, &sb) != 0) return fail_errno(errno, "examine", path);
  *hint = 0;
  if (S_ISDIR(sb.st_mode)) return cc_fail(CUCORE_IO_ERROR, "`%s` is a directory", path);
  if (!S_ISREG(sb.st_mode)) {
    if (is_stdin) return CUCORE_OK;
    return cc_fail(CUCORE_IO_ERROR, "`%s` is %s, not a regular file (only regular files are read)",
                   path, kind_of(sb.st_mode));
  }
  if ((uint64_t)sb.st_size > (uint64_t)cap)
    return cc_fail(CUCORE_IO_ERROR, "`%s` is %llu bytes; the most cucore reads is %zu bytes", path,
                   (unsigned long long)sb.st_size, cap);
  *hint = (size_t)sb.st_size;
  return CUCORE_OK;
}

/* The reader behind cc_read_file and cucore_file_read: regular files only (a directory, FIFO,
 * device or socket is CUCORE_IO_ERROR naming its kind, and is never waited on); at most
 * max_bytes (0: CC_READ_DEFAULT_MAX), the size and the cap named when over; files that report
 * size 0 (/proc) read by chunks; a NUL after the data. With allow_stdin, "-" is standard input,
 * which may be a pipe or a terminal, read to its end within the cap. */
static cucore_status read_file_capped(const char *path, uint64_t max_bytes, int allow_stdin,
                                      unsigned char **data, size_t *size) {
  *data = NULL;
  *size = 0;
  size_t cap = max_bytes == 0              ? CC_READ_DEFAULT_MAX
               : max_bytes >= SIZE_MAX - 1 ? SIZE_MAX - 2
                                           : (size_t)max_bytes;
  int is_stdin = allow_stdin && strcmp(path, "-") == 0;
  const char *name = is_stdin ? "standard input" : path;
  int fd = is_stdin ? 0 : open_nonblocking(path);
  if (fd < 0) return fail_errno(errno, "open", path);
  size_t hint = 0;
  cucore_status st = check_kind(fd, name, is_stdin, cap, &hint);
  if (st == CUCORE_OK && !is_stdin) {
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  }
  if (st == CUCORE_OK) st = read_all(fd, name, hint, cap, data, size);
  if (!is_stdin) close(fd);
  return st;
}

cucore_status cc_read_file(const char *path, unsigned char **data, size_t *size) {
  return read_file_capped(path, 0, 0, data, size);
}

cucore_status cucore_file_read(const char *path, uint64_t max_bytes, void **data, size_t *size) {
  cc_begin();
  CC_CHECK_ARG(data, "cucore_file_read", "data");
  *data = NULL;
  CC_CHECK_ARG(size, "cucore_file_read", "size");
  *size = 0;
  CC_CHECK_ARG(path, "cucore_file_read", "path");
  unsigned char *buf = NULL;
  cucore_status st = read_file_capped(path, max_bytes, 1, &buf, size);
  *data = buf;
  return st;
}

cucore_status cucore_file_free(void *data) {
  free(data);
  return CUCORE_OK;
}
