/* formats.c -- the command's one writer for each plain-text format it produces besides JSON
 * (json_write.c): CSV fields (RFC 4180) and POSIX shell words (commands printed to be pasted). */
#include "cli.h"

#include <string.h>

const char *cli_verb_name = "run"; /* main.c sets the verb being run */

void csv_field(FILE *f, const char *text) {
  size_t n = strlen(text);
  int quote = strpbrk(text, ",\"\r\n") != NULL || (n && (text[0] == ' ' || text[n - 1] == ' '));
  if (!quote) {
    fputs(text, f);
    return;
  }
  fputc('"', f);
  for (const char *p = text; *p; p++) {
    if (*p == '"') fputc('"', f);
    fputc(*p, f);
  }
  fputc('"', f);
}

void shell_word(FILE *f, const char *word) {
  static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                             "_@%+=:,./-";
  if (*word && word[strspn(word, safe)] == 0) {
    fputs(word, f);
    return;
  }
  fputc('\'', f);
  for (const char *p = word; *p; p++) {
    if (*p == '\'')
      fputs("'\\''", f);
    else
      fputc(*p, f);
  }
  fputc('\'', f);
}
