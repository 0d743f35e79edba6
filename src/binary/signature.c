/*
 * signature.c -- the parameter types of a C++ kernel from its demangled name.
 *
 * The parameter list is the last top-level "( ... )" of the name (template arguments and
 * namespaces such as "(anonymous namespace)" come before it). It is split at the commas that
 * are not nested inside (), <>, [] or {}: a '>' closes a '<' only when the '<' is the
 * innermost open bracket, so a comparison inside parentheses, "k<(3>2)>", stays whole. The
 * demangler writes const after the type ("int const*"); a const that follows a plain type
 * name is moved to the front, as people write it ("const int*").
 */
#include "binary/signature.h"

#include <stdlib.h>

/* Where the parameter list's '(' is: the match of the final ')', or -1. */
static long params_open(const char *s, size_t n) {
  while (n > 0 && s[n - 1] == ' ') n--;
  if (n == 0 || s[n - 1] != ')') return -1;
  long depth = 0;
  for (size_t i = n; i-- > 0;) {
    if (s[i] == ')') depth++;
    if (s[i] == '(' && --depth == 0) return (long)i;
  }
  return -1;
}

/* The end of the parameter that starts at s[i] (a top-level ',' or the end `n`). */
static size_t param_end(const char *s, size_t i, size_t n) {
  char stack[64];
  int top = 0; /* brackets deeper than 64 are counted but not matched: never a real type */
  int overflow = 0;
  for (; i < n; i++) {
    char c = s[i];
    if (c == '(' || c == '<' || c == '[' || c == '{') {
      if (top < (int)sizeof stack)
        stack[top++] = c;
      else
        overflow++;
    } else if (c == '>') {
      if (overflow) continue;
      if (top > 0 && stack[top - 1] == '<') top--;
    } else if (c == ')' || c == ']' || c == '}') {
      if (overflow) {
        overflow--;
        continue;
      }
      char open = c == ')' ? '(' : c == ']' ? '[' : '{';
      while (top > 0 && stack[top - 1] != open) top--; /* drops an unmatched '<' */
      if (top > 0) top--;
    } else if (c == ',' && top == 0 && !overflow) {
      return i;
    }
  }
  return n;
}

/* Writes the type s[0..n) trimmed, const first, into out (room for n + 7 bytes); returns its
 * length. */
static size_t normalise(const char *s, size_t n, char *out) {
  while (n > 0 && s[0] == ' ') s++, n--;
  while (n > 0 && s[n - 1] == ' ') n--;
  /* " const" at angle depth 0 after a plain name: "int const*" -> "const int*" */
  int depth = 0;
  for (size_t i = 0; i + 6 <= n; i++) {
    char c = s[i];
    if (c == '<' || c == '(' || c == '[') depth++;
    if ((c == '>' || c == ')' || c == ']') && depth > 0) depth--;
    if (depth == 0 && (c == '*' || c == '&' || c == '(' || c == '[')) break;
    if (depth == 0 && i > 0 && memcmp(s + i, " const", 6) == 0 &&
        (i + 6 == n || s[i + 6] == '*' || s[i + 6] == '&' || s[i + 6] == ' ')) {
      size_t len = 0;
      memcpy(out, "const ", 6);
      len = 6;
      memcpy(out + len, s, i);
      len += i;
      size_t rest = n - (i + 6);
      memcpy(out + len, s + i + 6, rest);
      len += rest;
      out[len] = '\0';
      return len;
    }
  }
  memcpy(out, s, n);
  out[n] = '\0';
  return n;
}

char **cc_signature_params(const char *demangled, uint32_t *count) {
  *count = 0;
  if (!demangled) return NULL;
  size_t n = strlen(demangled);
  long open = params_open(demangled, n);
  if (open < 0) return NULL;
  size_t close = n;
  while (close > 0 && demangled[close - 1] == ' ') close--;
  close--; /* the final ')' */
  size_t start = (size_t)open + 1;
  const char *s = demangled;
  /* Count the parameters first, then lay out one block: pointers, then strings. */
  uint32_t np = 0;
  int empty = 1;
  for (size_t i = start; i < close; i++)
    if (s[i] != ' ') empty = 0;
  if (!empty && !(close - start == 4 && memcmp(s + start, "void", 4) == 0)) {
    for (size_t i = start;; np++) {
      size_t e = param_end(s, i, close);
      if (e >= close) {
        np++;
        break;
      }
      i = e + 1;
    }
  }
  size_t bytes = (size_t)np * sizeof(char *) + (close - start) + (size_t)np * 8 + 1;
  char **out = cc_raw_malloc(bytes);
  if (!out) return NULL;
  char *text = (char *)(out + np);
  size_t i = start;
  for (uint32_t p = 0; p < np; p++) {
    size_t e = param_end(s, i, close);
    out[p] = text;
    text += normalise(s + i, e - i, text) + 1;
    i = e + 1;
  }
  *count = np;
  return out;
}

void cc_kinfo_param_types(cucore_kernel_info *k) {
  if (!k->demangled || k->param_types) return;
  uint32_t n = 0;
  char **types = cc_signature_params(k->demangled, &n);
  if (!types) return;
  if (n != k->param_count) {
    free(types);
    return;
  }
  k->param_types = (const char *const *)types;
}
