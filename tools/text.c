/* text.c -- what the command prints is safe for a terminal and valid UTF-8.
 *
 * Names and strings read from a cubin, fatbin or PTX file (kernel and symbol names, section
 * names, compiler versions) reach the output through many printf calls, and the library's
 * messages (cucore_last_error) quote them as they are: the library reports to its caller, the
 * command is what must not hand a terminal raw escape sequences. So stdout and stderr are
 * filtered once, here, at the stream: valid UTF-8 text, newlines and tabs pass unchanged; every
 * other control character (C0, DEL, and C1 as U+0080..U+009F) and every byte that is not part of
 * valid UTF-8 is written as `\xHH`. The JSON writer escapes and replaces on its own
 * (json_write.c), so JSON passes the filter untouched. */
#include "cli.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct text_filter {
  int fd;
  unsigned char pending[4]; /* the start of a UTF-8 sequence split across two writes */
  int npending;
  unsigned long long escaped;
  int err; /* the errno of the first write that failed, 0 while none has */
} text_filter;

static text_filter out_filter = {1, {0}, 0, 0, 0};
static text_filter err_filter = {2, {0}, 0, 0, 0};
static FILE *real_stderr;
static int guarded;       /* stdout and stderr are the filters */
static int stdout_closed; /* cli_close_stdout ran: the stream is not touched again */

/* Writes everything or returns -1 with errno (kept in t->err) set. */
static int put_all(text_filter *t, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(t->fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      if (w == 0) errno = EIO;
      if (!t->err) t->err = errno;
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Length of the valid UTF-8 sequence at p[0..n) (1..4), 0 when it is not valid, -1 when it
 * may be valid but is cut short by the end of the buffer. */
int text_utf8_len(const unsigned char *p, size_t n) {
  unsigned c = p[0];
  int len;
  unsigned lo = 0x80, hi = 0xbf; /* the range of the second byte */
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf)
    len = 2;
  else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
    if (c == 0xe0)
      lo = 0xa0; /* overlong */
    else if (c == 0xed)
      hi = 0x9f; /* surrogates */
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
    if (c == 0xf0)
      lo = 0x90; /* overlong */
    else if (c == 0xf4)
      hi = 0x8f; /* beyond U+10FFFF */
  } else
    return 0;
  for (int i = 1; i < len; i++) {
    if ((size_t)i >= n) return -1;
    unsigned b = p[i];
    if (i == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xbf)) return 0;
  }
  return len;
}

size_t text_escape(const unsigned char *p, size_t n, char *dst, size_t *used,
                   unsigned long long *escaped, int final) {
  size_t o = 0, i = 0;
  while (i < n) {
    unsigned c = p[i];
    int len = c < 0x80 ? 1 : text_utf8_len(p + i, n - i);
    if (len < 0 && !final) break; /* keep for the next write */
    int bad = len <= 0 || (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f ||
              (len == 2 && c == 0xc2 && p[i + 1] <= 0x9f); /* C1 controls */
    if (!bad) {
      memcpy(dst + o, p + i, (size_t)len);
      o += (size_t)len;
      i += (size_t)len;
      continue;
    }
    int k = len > 0 ? len : 1; /* an invalid byte alone; a C1 control as its two bytes */
    for (int b = 0; b < k; b++) o += (size_t)sprintf(dst + o, "\\x%02x", p[i + (size_t)b]);
    i += (size_t)k;
    (*escaped)++;
  }
  *used = i;
  return o;
}

/* The cookie's write: the stream sees a failure of the file underneath (ferror, fflush). */
static ssize_t filter_write(void *cookie, const char *buf, size_t size) {
  text_filter *t = cookie;
  size_t done = 0;
  while (done < size || t->npending) {
    unsigned char in[1024 + 4];
    size_t n = (size_t)t->npending;
    memcpy(in, t->pending, n);
    size_t take = size - done < 1024 ? size - done : 1024;
    memcpy(in + n, buf + done, take);
    n += take;
    done += take;
    char out[(1024 + 4) * 4];
    size_t used = 0;
    size_t o = text_escape(in, n, out, &used, &t->escaped, 0);
    if (put_all(t, out, o)) return -1;
    t->npending = (int)(n - used);
    memcpy(t->pending, in + used, (size_t)t->npending);
    if (take == 0) break; /* a short sequence waits for more */
  }
  return (ssize_t)size;
}

/* Whatever incomplete sequence is left at exit is written escaped, and the count said. */
static int flush_pending(text_filter *t) {
  if (!t->npending) return 0;
  char out[32];
  size_t used = 0;
  size_t o = text_escape(t->pending, (size_t)t->npending, out, &used, &t->escaped, 1);
  t->npending = 0;
  return put_all(t, out, o);
}

/* Flushes and closes standard output; 0 or the errno of the first failure. A closed
 * descriptor that was never written to is no failure. */
static int close_stdout(void) {
  errno = 0;
  int err = fflush(stdout) != 0 ? (errno ? errno : EIO) : 0;
  if (guarded && flush_pending(&out_filter) != 0 && !err) err = errno;
  if (!err && ferror(stdout)) err = out_filter.err ? out_filter.err : EIO;
  stdout_closed = 1;
  /* The filter's stream stays (its cookie has no close); the descriptor under it is closed,
   * then held by /dev/null so that no file opened later becomes standard output. */
  if ((guarded ? close(1) : fclose(stdout)) != 0 && errno != EBADF && !err) err = errno;
  int null = open("/dev/null", O_WRONLY);
  if (null >= 0 && null != 1) {
    dup2(null, 1);
    close(null);
  }
  return err;
}

int cli_close_stdout(const char *verb, int rc) {
  if (stdout_closed) return rc;
  int err = close_stdout();
  if (!err) return rc;
  fprintf(stderr, "cucore %s: writing standard output: %s\n", verb, strerror(err));
  return rc ? rc : CLI_EXIT_FAILURE;
}

static void at_exit(void) {
  /* Exits that did not pass through cli_close_stdout (--version, --help) are checked here. */
  int err = stdout_closed ? 0 : close_stdout();
  fflush(stderr);
  flush_pending(&err_filter);
  if (err) {
    fprintf(real_stderr ? real_stderr : stderr, "cucore: writing standard output: %s\n",
            strerror(err));
    _exit(CLI_EXIT_FAILURE); /* the status cannot be changed otherwise this late */
  }
  if (out_filter.escaped && real_stderr)
    fprintf(real_stderr,
            "cucore: note: %llu character%s of the output (control characters, or bytes that "
            "are not UTF-8) shown escaped as \\xHH\n",
            out_filter.escaped, out_filter.escaped == 1 ? "" : "s");
}

static FILE *filtered(text_filter *t, int mode) {
  cookie_io_functions_t io = {NULL, filter_write, NULL, NULL};
  FILE *f = fopencookie(t, "w", io);
  if (f) setvbuf(f, NULL, mode, BUFSIZ);
  return f;
}

void text_guard_streams(void) {
  atexit(at_exit);
  if (getenv("CUCORE_RAW_OUTPUT")) return; /* for debugging the command itself */
  FILE *o = filtered(&out_filter, isatty(1) ? _IOLBF : _IOFBF);
  FILE *e = filtered(&err_filter, _IONBF);
  if (!o || !e) {
    if (o) fclose(o);
    if (e) fclose(e);
    return;
  }
  fflush(stdout);
  fflush(stderr);
  real_stderr = stderr;
  stdout = o;
  stderr = e;
  guarded = 1;
}

void text_terminal_control(const char *seq) {
  fflush(stderr);
  put_all(&err_filter, seq, strlen(seq));
}
