/*
 * expr_parse.c -- the tokenizer and parser of tune expressions (expr.h).
 *
 * Grammar, lowest precedence first (Python's order, with C's spellings beside):
 *   cond    := or ( 'if' or 'else' cond | '?' cond ':' cond )?      (right-associative)
 *   or      := and ( ('or' | '||') and )*
 *   and     := not ( ('and' | '&&') not )*
 *   not     := 'not' not | cmp
 *   cmp     := bitor ( CMPOP bitor )*                         (chained: a < b < c)
 *   CMPOP   := '<' | '<=' | '>' | '>=' | '==' | '!=' | 'in' | 'not' 'in' | 'is' | 'is' 'not'
 *   bitor   := xor ( '|' xor )*
 *   xor     := bitand ( '^' bitand )*
 *   bitand  := shift ( '&' shift )*
 *   shift   := add ( ('<<' | '>>') add )*
 *   add     := mul ( ('+' | '-') mul )*
 *   mul     := unary ( ('*' | '/' | '//' | '%') unary )*
 *   unary   := ('-' | '+' | '~' | '!') unary | power
 *   power   := primary ( '**' unary )?                        (-2 ** 2 == -4, 2 ** -1 == 0.5)
 *   primary := NUMBER | STRING | NAME | 'True' | 'False' | 'true' | 'false'
 *            | FUNC '(' [ cond (',' cond)* [','] ] ')'
 *            | '(' cond ')' | '(' ')' | '(' cond ',' [ cond (',' cond)* [','] ] ')'  (tuples)
 *            | '[' [ cond (',' cond)* [','] ] ']' | '{' ... '}'         (lists, sets)
 *   NUMBER  := Python's literals: 12 1_000 0x1f 0o17 0b101 1.5 .5 1. 1e-3 (no leading zeros)
 *   STRING  := '...' or "..." (or tripled), prefix r (raw) or u; escapes \\ \' \" \a \b \f \n
 *              \r \t \v \ooo \xHH \uXXXX \UXXXXXXXX and a backslash ending a line; code points
 *              are stored as UTF-8
 *   FUNC    := abs all any ceil float floor int len log2 max min range round
 * A list, tuple, set or range(...) (a collection) stands only after `in` / `not in` (as the
 * last operand of a chain) and as the one argument of any all len min max; anywhere else it
 * is refused here. The binary levels are one precedence-climbing loop (parse_binary).
 *
 * Limits (expr.h): the text is at most CC_EXPR_TEXT_MAX bytes; the parser's recursion (each
 * `cond`, each prefix operator, each `**`) and the tree's depth (each node one level above its
 * deepest child, so left-deep chains count too) are at most CC_EXPR_DEPTH_MAX, which bounds
 * the evaluator's recursion as well. A lambda, `def` or a name followed by `:` is a Python
 * function, refused with what to write instead.
 */
#include "tune/expr_impl.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tok {
  int kind; /* T_* */
  const char *s;
  size_t len;
  int col;
  cc_tval val; /* T_NUM, T_STR */
} tok;

enum { T_END, T_NUM, T_STR, T_NAME, T_OP };

typedef struct parser {
  const char *text;
  const char *p;
  tok t;
  cc_expr *e;
  cc_expr_lookup_fn lookup;
  void *ctx;
  int depth;         /* the parser's recursion, at most CC_EXPR_DEPTH_MAX */
  const char *first; /* the first token: a name then `:` there is a Python function */
  size_t nlits;      /* bytes used in e->lits */
  int32_t *stack;    /* the children of the lists, calls and chains being parsed */
  size_t nstack, cap_stack;
  char **why;
  int failed;
} parser;

/* Kept out of its callers, so that the frames of the recursion (cond -> binary -> unary ->
 * power -> primary -> group -> cond) stay small (a few hundred bytes a level of nesting),
 * whatever the compiler inlines: the lexer's buffers are not on that path. */
#define NOINLINE __attribute__((noinline))

/* Binding powers of the binary levels. */
enum { P_OR = 1, P_AND, P_NOT, P_CMP, P_BOR, P_XOR, P_BAND, P_SHIFT, P_ADD, P_MUL };

static const char FUNCTION_HINT[] =
    "a Python function or lambda is not accepted: write the restriction as a boolean expression "
    "over the parameter names, e.g. `block_size_x * tile_size_x <= 1024`";
static const char COLLECTION_HINT[] =
    "a list, tuple, set or range can only follow `in` / `not in` or be the one argument of any, "
    "all, len, min or max";

static CC_COLD int fail(parser *ps, int col, const char *fmt, ...) CC_PRINTF(3, 4);
static CC_COLD int fail(parser *ps, int col, const char *fmt, ...) {
  if (!ps->failed) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    *ps->why = cc_expr_why("column %d: %s", col, msg);
  }
  ps->failed = 1;
  return -1;
}

static int fail_nested(parser *ps, int col) {
  return fail(ps, col, "more than %d levels of nested operations (the limit)", CC_EXPR_DEPTH_MAX);
}

/* Some text of the input for a message: escaped, quoted, cut at 40 characters with "...". */
static const char *quote(const char *s, size_t len, char *buf, size_t cap) {
  char q[44];
  cc_escape_text(q, sizeof q, s, len);
  snprintf(buf, cap, "`%s`", q);
  return buf;
}

/* A failure at token t; `fmt` has one %s, the token quoted ("the end of the text" at the end). */
static CC_COLD int fail_tok(parser *ps, const tok *t, const char *fmt) {
  char buf[64];
  const char *text = t->kind == T_END ? "the end of the text"
                                      : quote(t->s, t->len, buf, sizeof buf);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
  return fail(ps, t->col, fmt, text);
#pragma GCC diagnostic pop
}

/* ---- numbers ---------------------------------------------------------------------------- */

static int digit_value(char c) {
  return isdigit((unsigned char)c)    ? c - '0'
         : isxdigit((unsigned char)c) ? (c | 32) - 'a' + 10
                                      : 99;
}

/* Digits of `base` with single underscores between them (and, after a prefix, before the
 * first), from s; returns how many characters were read, the value in *v (*ovf when past
 * INT64_MAX). */
static size_t int_digits(const char *s, int base, int lead_us, uint64_t *v, int *ovf) {
  size_t i = 0, nd = 0;
  for (;;) {
    size_t us = s[i] == '_' && (nd > 0 || lead_us) ? 1 : 0;
    if (digit_value(s[i + us]) >= base) break;
    i += us;
    if (__builtin_mul_overflow(*v, (uint64_t)base, v) ||
        __builtin_add_overflow(*v, (uint64_t)digit_value(s[i]), v) || *v > (uint64_t)INT64_MAX)
      *ovf = 1;
    i++, nd++;
  }
  return nd ? i : 0;
}

/* A real's characters from s: digits, '.', an exponent; returns how many were read. */
static size_t real_chars(const char *s) {
  uint64_t v = 0;
  int ovf = 0;
  size_t i = int_digits(s, 10, 0, &v, &ovf);
  if (s[i] == '.') i += 1 + int_digits(s + i + 1, 10, 0, &v, &ovf);
  if (s[i] != 'e' && s[i] != 'E') return i;
  size_t sign = s[i + 1] == '+' || s[i + 1] == '-';
  if (isdigit((unsigned char)s[i + 1 + sign]))
    i += 1 + sign + int_digits(s + i + 1 + sign, 10, 0, &v, &ovf);
  return i;
}

static NOINLINE int lex_real(parser *ps, tok *t, size_t len) {
  char buf[128];
  size_t k = 0;
  if (len >= sizeof buf)
    return fail(ps, t->col, "a number longer than %zu characters", sizeof buf - 1);
  for (size_t i = 0; i < len; i++)
    if (t->s[i] != '_') buf[k++] = t->s[i];
  buf[k] = 0;
  t->val = cc_tval_real(strtod(buf, NULL)); /* Python's rule: past the range is inf */
  return 0;
}

/* Up to 12 characters of s, to quote near a malformed number. */
static size_t near_len(const char *s) {
  size_t n = 0;
  while (n < 12 && s[n]) n++;
  return n;
}

static NOINLINE int lex_number(parser *ps, tok *t) {
  const char *s = ps->p;
  int base = 10;
  size_t len = 0;
  if (s[0] == '0' && s[1] && strchr("xXoObB", s[1])) {
    base = (s[1] | 32) == 'x' ? 16 : (s[1] | 32) == 'o' ? 8 : 2;
    len = 2;
  }
  uint64_t v = 0;
  int ovf = 0;
  size_t nd = int_digits(s + len, base, base != 10, &v, &ovf);
  char buf[64];
  t->kind = T_NUM;
  if (base == 10 && (s[nd] == '.' || s[nd] == 'e' || s[nd] == 'E') && real_chars(s) > nd) {
    len = real_chars(s);
    if (lex_real(ps, t, len) < 0) return -1;
  } else {
    if (base != 10 && nd == 0)
      return fail(ps, t->col, "a malformed number near %s", quote(s, near_len(s), buf, sizeof buf));
    len += nd;
    if (ovf) return fail(ps, t->col, "a number out of range (integers have 64 bits)");
    if (base == 10 && s[0] == '0' && v != 0)
      return fail(ps, t->col, "leading zeros in a decimal number (write 0o17 for octal)");
    t->val = cc_tval_int((int64_t)v);
  }
  t->len = len;
  if (isalnum((unsigned char)s[len]) || s[len] == '_' || s[len] == '.')
    return fail(ps, t->col, "a malformed number near %s", quote(s, near_len(s), buf, sizeof buf));
  return 0;
}

/* ---- strings ---------------------------------------------------------------------------- */

static void put_utf8(char **o, uint32_t cp) {
  char *p = *o;
  if (cp < 0x80) {
    *p++ = (char)cp;
  } else if (cp < 0x800) {
    *p++ = (char)(0xc0 | cp >> 6);
    *p++ = (char)(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    *p++ = (char)(0xe0 | cp >> 12);
    *p++ = (char)(0x80 | ((cp >> 6) & 0x3f));
    *p++ = (char)(0x80 | (cp & 0x3f));
  } else {
    *p++ = (char)(0xf0 | cp >> 18);
    *p++ = (char)(0x80 | ((cp >> 12) & 0x3f));
    *p++ = (char)(0x80 | ((cp >> 6) & 0x3f));
    *p++ = (char)(0x80 | (cp & 0x3f));
  }
  *o = p;
}

/* A code point written as `n` hex digits (\x, \u, \U) after p[1]; returns the characters read. */
static size_t hex_escape(parser *ps, const char *p, size_t n, char **o) {
  uint32_t cp = 0;
  int col = (int)(p - ps->text) + 1;
  for (size_t i = 0; i < n; i++) {
    if (!isxdigit((unsigned char)p[2 + i])) {
      fail(ps, col, "a \\%c escape needs %zu hex digits", p[1], n);
      return 0;
    }
    cp = cp << 4 | (uint32_t)digit_value(p[2 + i]);
  }
  if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
    fail(ps, col, "a \\%c escape that is not a character (a surrogate or past U+10FFFF)", p[1]);
    return 0;
  }
  put_utf8(o, cp);
  return 2 + n;
}

/* Decodes the escape at p (p[0] == '\\') into *o; returns the characters read, 0 after a
 * failure. The decoded bytes are never more than the characters read. */
static size_t unescape(parser *ps, const char *p, char **o) {
  static const char from[] = "\\'\"abfnrtv", to[] = "\\'\"\a\b\f\n\r\t\v";
  const char *m = p[1] ? strchr(from, p[1]) : NULL;
  if (m) return *(*o)++ = to[m - from], 2;
  if (p[1] == '\n') return 2;
  if (p[1] == '\r') return p[2] == '\n' ? 3 : 2;
  if (p[1] >= '0' && p[1] <= '7') {
    uint32_t cp = 0;
    size_t i = 1;
    for (; i < 4 && p[i] >= '0' && p[i] <= '7'; i++) cp = cp * 8 + (uint32_t)(p[i] - '0');
    put_utf8(o, cp);
    return i;
  }
  if (p[1] == 'x' || p[1] == 'u' || p[1] == 'U')
    return hex_escape(ps, p, p[1] == 'x' ? 2 : p[1] == 'u' ? 4 : 8, o);
  if (p[1] == 'N') {
    fail(ps, (int)(p - ps->text) + 1, "\\N{...} escapes are not supported (write \\u or \\U)");
    return 0;
  }
  *(*o)++ = '\\'; /* an unknown escape keeps its backslash, as Python does */
  return 1;
}

/* A string literal whose quote is at ps->p + prefix; raw: no escapes (r"..."). */
static NOINLINE int lex_string(parser *ps, tok *t, size_t prefix, int raw) {
  const char *s = ps->p + prefix;
  char q = *s;
  size_t qlen = s[1] == q && s[2] == q ? 3 : 1;
  char *start = ps->e->lits + ps->nlits, *o = start;
  const char *p = s + qlen;
  for (;;) {
    if (*p == 0) return fail(ps, t->col, "a string that is not closed");
    if (*p == q && (qlen == 1 || (p[1] == q && p[2] == q))) break;
    if (qlen == 1 && (*p == '\n' || *p == '\r'))
      return fail(ps, t->col, "a string that is not closed on its line");
    if (*p != '\\') {
      *o++ = *p++;
    } else if (raw) {
      *o++ = *p++;
      if (*p) *o++ = *p++;
    } else {
      size_t n = unescape(ps, p, &o);
      if (n == 0) return -1;
      p += n;
    }
  }
  p += qlen;
  ps->nlits += (size_t)(o - start);
  t->kind = T_STR;
  t->val = cc_tval_str(start, (size_t)(o - start));
  t->len = (size_t)(p - ps->p);
  return 0;
}

/* A name, or a string with a prefix (r"...", u'...'). */
static NOINLINE int lex_name(parser *ps, tok *t) {
  const char *s = ps->p;
  size_t n = 0;
  while (isalnum((unsigned char)s[n]) || s[n] == '_') n++;
  t->kind = T_NAME;
  t->len = n;
  if (n > 2 || (s[n] != '\'' && s[n] != '"')) return 0;
  int raw = 0, bf = 0;
  for (size_t i = 0; i < n; i++) {
    char c = (char)(s[i] | 32);
    if (c == 'r')
      raw++;
    else if (c == 'b' || c == 'f')
      bf++;
    else if (c != 'u' || n > 1)
      return 0; /* a name before a string: refused by the grammar */
  }
  if (raw > 1 || bf > 1) return 0;
  if (bf) return fail(ps, t->col, "bytes and f-strings are not supported (write a plain string)");
  return lex_string(ps, t, n, raw);
}

/* ---- tokens ----------------------------------------------------------------------------- */

static const char *const OPS2[] = {"**", "//", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||"};

static NOINLINE int lex_op(parser *ps, tok *t) {
  const char *s = ps->p;
  t->kind = T_OP;
  t->len = 1;
  for (size_t i = 0; i < CC_ARRAY_LEN(OPS2); i++)
    if (s[0] == OPS2[i][0] && s[1] == OPS2[i][1]) t->len = 2;
  if (t->len == 2 || strchr("+-*/%<>!?:(),[]{}&|^~", s[0])) return 0;
  if (s[0] == '=') return fail(ps, t->col, "unexpected character `=` (compare with `==`)");
  char buf[16];
  return fail(ps, t->col, "unexpected character %s", quote(s, 1, buf, sizeof buf));
}

static NOINLINE int next(parser *ps) {
  while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r' ||
         (*ps->p == '\\' && ps->p[1] == '\n'))
    ps->p += *ps->p == '\\' ? 2 : 1;
  tok *t = &ps->t;
  t->s = ps->p;
  t->col = (int)(ps->p - ps->text) + 1;
  t->len = 0;
  int r = 0;
  unsigned char c = (unsigned char)*ps->p;
  if (c == 0)
    t->kind = T_END;
  else if (isdigit(c) || (c == '.' && isdigit((unsigned char)ps->p[1])))
    r = lex_number(ps, t);
  else if (isalpha(c) || c == '_')
    r = lex_name(ps, t);
  else if (c == '\'' || c == '"')
    r = lex_string(ps, t, 0, 0);
  else
    r = lex_op(ps, t);
  if (r < 0) return -1;
  ps->p += t->len;
  return 0;
}

/* 1 when the token is the operator or keyword `op`. */
static int is_op(const tok *t, const char *op) {
  return (t->kind == T_OP || t->kind == T_NAME) && t->len == strlen(op) &&
         memcmp(t->s, op, t->len) == 0;
}

static CC_COLD int fail_expected(parser *ps, const char *op) {
  char what[32];
  if (is_op(&ps->t, "for"))
    return fail(ps, ps->t.col,
                "a generator or comprehension (`for`) is not supported: list the "
                "values, as in `any([a > 1, b > 1])`");
  snprintf(what, sizeof what, "expected `%s`, found %%s", op);
  return fail_tok(ps, &ps->t, what);
}

static int expect(parser *ps, const char *op) {
  return is_op(&ps->t, op) ? next(ps) : fail_expected(ps, op);
}

/* ---- nodes ------------------------------------------------------------------------------ */

static int depth_of(parser *ps, int idx) { return idx >= 0 ? ps->e->nodes[idx].depth : 0; }

/* A node whose deepest child is `sub` levels deep. */
static NOINLINE int add_node(parser *ps, int kind, int op, int a, int b, int c, int col, int sub) {
  cc_expr *e = ps->e;
  if (sub + 1 > CC_EXPR_DEPTH_MAX) return fail_nested(ps, col);
  cc_expr_node *nodes = cc_grow(e->nodes, &e->cap, (size_t)e->count + 1, sizeof *nodes,
                                "an expression's nodes");
  if (!nodes) return fail(ps, col, "out of memory");
  e->nodes = nodes;
  cc_expr_node *n = &e->nodes[e->count];
  n->kind = (uint8_t)kind;
  n->op = (uint8_t)op;
  n->depth = (uint16_t)(sub + 1);
  n->a = a, n->b = b, n->c = c, n->col = col;
  return e->count++;
}

static int is_collection(parser *ps, int idx) {
  const cc_expr_node *n = &ps->e->nodes[idx];
  return n->kind == CC_EX_LIST || (n->kind == CC_EX_CALL && n->op == CC_FN_RANGE);
}

/* 0 when node idx is a value (not a list, tuple, set or range). */
static int need_value(parser *ps, int idx) {
  if (idx < 0 || !is_collection(ps, idx)) return 0;
  return fail(ps, ps->e->nodes[idx].col, "%s", COLLECTION_HINT);
}

/* A node over up to three values; for IN / NOT IN, b may be a collection. */
static NOINLINE int node(parser *ps, int kind, int op, int a, int b, int c, int col) {
  int b_any = kind == CC_EX_BIN && (op == CC_OP_IN || op == CC_OP_NOTIN);
  if (need_value(ps, a) < 0 || (!b_any && need_value(ps, b) < 0) || need_value(ps, c) < 0)
    return -1;
  int sub = depth_of(ps, a);
  if (depth_of(ps, b) > sub) sub = depth_of(ps, b);
  if (depth_of(ps, c) > sub) sub = depth_of(ps, c);
  return add_node(ps, kind, op, a, b, c, col, sub);
}

static NOINLINE int push(parser *ps, int32_t v) {
  int32_t *s = cc_grow(ps->stack, &ps->cap_stack, ps->nstack + 1, sizeof *s,
                       "an expression's parse stack");
  if (!s) return fail(ps, ps->t.col, "out of memory");
  ps->stack = s;
  ps->stack[ps->nstack++] = v;
  return 0;
}

/* A node (LIST, CALL, CMP) over the children pushed since `mark`: they move to e->kids. */
static NOINLINE int kids_node(parser *ps, int kind, int op, size_t mark, int count, int sub,
                              int col) {
  cc_expr *e = ps->e;
  size_t n = ps->nstack - mark;
  int32_t *k = cc_grow(e->kids, &e->cap_kids, (size_t)e->nkids + n + 1, sizeof *k,
                       "an expression's lists");
  if (!k) return fail(ps, col, "out of memory");
  e->kids = k;
  if (n) memcpy(e->kids + e->nkids, ps->stack + mark, n * sizeof *k);
  int at = e->nkids;
  e->nkids += (int)n;
  ps->nstack = mark;
  return add_node(ps, kind, op, at, count, -1, col, sub);
}

static NOINLINE int add_const(parser *ps, cc_tval v, int col) {
  cc_expr *e = ps->e;
  cc_tval *c = cc_grow(e->consts, &e->cap_consts, (size_t)e->nconsts + 1, sizeof *c,
                       "an expression's literals");
  if (!c) return fail(ps, col, "out of memory");
  e->consts = c;
  e->consts[e->nconsts] = v;
  int n = add_node(ps, CC_EX_NUM, 0, e->nconsts, -1, -1, col, 0);
  if (n >= 0) e->nconsts++;
  return n;
}

/* One more level of the parser's recursion, refused past the limit. */
static int enter(parser *ps, int col) {
  return ++ps->depth > CC_EXPR_DEPTH_MAX ? fail_nested(ps, col) : 0;
}

/* ---- the grammar ------------------------------------------------------------------------ */

static int parse_cond(parser *ps);
static int parse_binary(parser *ps, int min);

/* The items of a list, tuple or set after its first, up to `close`. */
static NOINLINE int parse_items(parser *ps, int first, const char *close, int col) {
  size_t mark = ps->nstack;
  int count = 1, sub = depth_of(ps, first);
  if (need_value(ps, first) < 0 || push(ps, first) < 0) return -1;
  while (is_op(&ps->t, ",")) {
    if (next(ps) < 0) return -1;
    if (is_op(&ps->t, close)) break;
    int a = parse_cond(ps);
    if (a < 0 || need_value(ps, a) < 0 || push(ps, a) < 0) return -1;
    count++;
    if (depth_of(ps, a) > sub) sub = depth_of(ps, a);
  }
  if (expect(ps, close) < 0) return -1;
  return kids_node(ps, CC_EX_LIST, 0, mark, count, sub, col);
}

/* '(' or '[' or '{': a parenthesized expression, a tuple, a list or a set. */
static NOINLINE int parse_group(parser *ps) {
  int col = ps->t.col;
  const char *close = is_op(&ps->t, "(") ? ")" : is_op(&ps->t, "[") ? "]" : "}";
  if (next(ps) < 0) return -1;
  if (is_op(&ps->t, close))
    return next(ps) < 0 ? -1 : kids_node(ps, CC_EX_LIST, 0, ps->nstack, 0, 0, col);
  int a = parse_cond(ps);
  if (a < 0) return -1;
  if (close[0] == ')' && !is_op(&ps->t, ",")) return expect(ps, ")") < 0 ? -1 : a;
  return parse_items(ps, a, close, col);
}

/* The arguments' kinds: collections only where the function takes one. */
static NOINLINE int check_args(parser *ps, const cc_expr_func_info *f, size_t mark, int argc,
                               int col) {
  static const char *const counts[] = {"none", "one", "one or two", "one to three"};
  if (f->args == CC_FA_VALUES ? argc < f->min_args || argc > f->max_args
                              : argc < 1 || (f->args == CC_FA_ONE_SEQ && argc > 1))
    return fail(ps, col, "%s takes a wrong number of arguments (%s)", f->name,
                f->args == CC_FA_VALUES          ? counts[f->max_args]
                : f->args == CC_FA_SEQ_OR_VALUES ? "a list, or two or more values"
                                                 : "one");
  for (int i = 0; i < argc; i++)
    if ((f->args == CC_FA_VALUES || argc > 1) && need_value(ps, ps->stack[mark + (size_t)i]) < 0)
      return -1;
  return 0;
}

static NOINLINE int parse_call(parser *ps, const tok *name) {
  char buf[64];
  const cc_expr_func_info *f = cc_expr_func(name->s, name->len);
  if (!f)
    return fail(ps, name->col, "%s is not a function (the functions: %s)",
                quote(name->s, name->len, buf, sizeof buf), cc_expr_func_names());
  if (enter(ps, name->col) < 0 || next(ps) < 0) return -1;
  size_t mark = ps->nstack;
  int argc = 0, sub = 0;
  while (!is_op(&ps->t, ")")) {
    int a = parse_cond(ps);
    if (a < 0 || push(ps, a) < 0) return -1;
    argc++;
    if (depth_of(ps, a) > sub) sub = depth_of(ps, a);
    if (!is_op(&ps->t, ",")) break;
    if (next(ps) < 0) return -1;
  }
  if (expect(ps, ")") < 0 || check_args(ps, f, mark, argc, name->col) < 0) return -1;
  ps->depth--;
  return kids_node(ps, CC_EX_CALL, f->fn, mark, argc, sub, name->col);
}

static CC_COLD int fail_unknown(parser *ps, const tok *name) {
  char buf[64];
  return fail(ps, name->col, "unknown name %s (not a parameter of the space)",
              quote(name->s, name->len, buf, sizeof buf));
}

static NOINLINE int parse_name(parser *ps) {
  tok name = ps->t;
  if (is_op(&name, "lambda") || is_op(&name, "def")) return fail(ps, name.col, "%s", FUNCTION_HINT);
  if (cc_expr_is_keyword(name.s, name.len))
    return fail_tok(ps, &name, "expected a number, a string, a name or `(`, found %s");
  if (next(ps) < 0) return -1;
  if (is_op(&ps->t, "(")) return parse_call(ps, &name);
  if (is_op(&name, "true") || is_op(&name, "True") || is_op(&name, "false") ||
      is_op(&name, "False"))
    return add_const(ps, cc_tval_bool((name.s[0] | 32) == 't'), name.col);
  if (is_op(&ps->t, ":") && name.s == ps->first) return fail(ps, name.col, "%s", FUNCTION_HINT);
  int var = ps->lookup ? ps->lookup(ps->ctx, name.s, name.len) : -1;
  if (var < 0) return fail_unknown(ps, &name);
  return add_node(ps, CC_EX_VAR, 0, var, -1, -1, name.col, 0);
}

static int parse_primary(parser *ps) {
  const tok t = ps->t;
  if (t.kind == T_NUM || t.kind == T_STR) {
    int n = add_const(ps, t.val, t.col);
    return n < 0 || next(ps) < 0 ? -1 : n;
  }
  if (t.kind == T_NAME) return parse_name(ps);
  if (is_op(&t, "(") || is_op(&t, "[") || is_op(&t, "{")) return parse_group(ps);
  if (is_op(&t, ":") && t.s == ps->first) return fail(ps, t.col, "%s", FUNCTION_HINT);
  return fail_tok(ps, &t, "expected a number, a string, a name or `(`, found %s");
}

static int parse_unary(parser *ps);

static int parse_power(parser *ps) {
  int a = parse_primary(ps);
  if (a < 0 || !is_op(&ps->t, "**")) return a;
  int col = ps->t.col;
  if (enter(ps, col) < 0 || next(ps) < 0) return -1;
  int b = parse_unary(ps);
  ps->depth--;
  return b < 0 ? -1 : node(ps, CC_EX_BIN, CC_OP_POW, a, b, -1, col);
}

static int parse_unary(parser *ps) {
  int op = is_op(&ps->t, "-")   ? CC_OP_NEG
           : is_op(&ps->t, "+") ? CC_OP_POS
           : is_op(&ps->t, "~") ? CC_OP_INV
           : is_op(&ps->t, "!") ? CC_OP_NOT
                                : -1;
  if (op < 0) return parse_power(ps);
  int col = ps->t.col;
  if (enter(ps, col) < 0 || next(ps) < 0) return -1;
  int a = parse_unary(ps);
  ps->depth--;
  return a < 0 ? -1 : node(ps, CC_EX_UN, op, a, -1, -1, col);
}

/* clang-format off */
static const struct { const char *text; uint8_t prec, op; } BINOPS[] = {
    {"or", P_OR, CC_OP_OR},       {"||", P_OR, CC_OP_OR},
    {"and", P_AND, CC_OP_AND},    {"&&", P_AND, CC_OP_AND},
    {"<", P_CMP, CC_OP_LT},       {"<=", P_CMP, CC_OP_LE},      {">", P_CMP, CC_OP_GT},
    {">=", P_CMP, CC_OP_GE},      {"==", P_CMP, CC_OP_EQ},      {"!=", P_CMP, CC_OP_NE},
    {"in", P_CMP, CC_OP_IN},      {"not", P_CMP, CC_OP_NOTIN},  {"is", P_CMP, CC_OP_IS},
    {"|", P_BOR, CC_OP_BITOR},    {"^", P_XOR, CC_OP_BITXOR},   {"&", P_BAND, CC_OP_BITAND},
    {"<<", P_SHIFT, CC_OP_SHL},   {">>", P_SHIFT, CC_OP_SHR},
    {"+", P_ADD, CC_OP_ADD},      {"-", P_ADD, CC_OP_SUB},
    {"*", P_MUL, CC_OP_MUL},      {"/", P_MUL, CC_OP_DIV},      {"//", P_MUL, CC_OP_FLOORDIV},
    {"%", P_MUL, CC_OP_MOD},
};
/* clang-format on */

/* The binary operator at the token: its binding power (0 when none) and *op. */
static int binop(const tok *t, int *op) {
  for (size_t i = 0; i < CC_ARRAY_LEN(BINOPS); i++)
    if (is_op(t, BINOPS[i].text)) return *op = BINOPS[i].op, BINOPS[i].prec;
  return 0;
}

/* Reads one comparison operator (two tokens for `not in`, `is not`). */
static int read_cmp_op(parser *ps, int op) {
  if (next(ps) < 0) return -1;
  if (op == CC_OP_NOTIN) {
    if (!is_op(&ps->t, "in")) return fail_tok(ps, &ps->t, "expected `in` after `not`, found %s");
    return next(ps) < 0 ? -1 : op;
  }
  if (op == CC_OP_IS && is_op(&ps->t, "not")) return next(ps) < 0 ? -1 : CC_OP_ISNOT;
  return op;
}

/* A comparison after its first operand, chained as in Python: a < b <= c is (a < b) and
 * (b <= c) with b evaluated once. One comparison is a BIN node; more are a CMP node whose kids
 * are operand, (column << 8 | op), operand, ... A collection may only be the last operand,
 * after `in` / `not in`. */
static NOINLINE int parse_chain(parser *ps, int first) {
  size_t mark = ps->nstack;
  int op = 0, next_op = 0, ncmp = 0, col0 = ps->t.col, sub = depth_of(ps, first), right = -1;
  if (need_value(ps, first) < 0 || push(ps, first) < 0) return -1;
  while (binop(&ps->t, &next_op) == P_CMP) {
    int col = ps->t.col;
    if (need_value(ps, right) < 0 || (op = read_cmp_op(ps, next_op)) < 0) return -1;
    right = parse_binary(ps, P_BOR);
    if (right < 0 || push(ps, col << 8 | op) < 0 || push(ps, right) < 0) return -1;
    if (!(op == CC_OP_IN || op == CC_OP_NOTIN) && need_value(ps, right) < 0) return -1;
    if (depth_of(ps, right) > sub) sub = depth_of(ps, right);
    ncmp++;
  }
  if (ncmp > 1) return kids_node(ps, CC_EX_CMP, 0, mark, ncmp, sub, col0);
  ps->nstack = mark;
  return node(ps, CC_EX_BIN, op, first, right, -1, col0);
}

static NOINLINE int parse_not(parser *ps) {
  int col = ps->t.col;
  if (enter(ps, col) < 0 || next(ps) < 0) return -1;
  int a = parse_binary(ps, P_NOT);
  ps->depth--;
  return a < 0 ? -1 : node(ps, CC_EX_UN, CC_OP_NOT, a, -1, -1, col);
}

/* The binary levels from binding power `min` up, by precedence climbing: left-associative
 * operators loop (no recursion), a right operand recurses one level up. */
static int parse_binary(parser *ps, int min) {
  int lhs = min <= P_NOT && is_op(&ps->t, "not") ? parse_not(ps) : parse_unary(ps);
  for (;;) {
    int op = 0, prec = lhs < 0 ? 0 : binop(&ps->t, &op);
    if (lhs < 0) return -1;
    if (prec < min || prec == 0) return lhs;
    if (prec == P_CMP) {
      lhs = parse_chain(ps, lhs);
      continue;
    }
    int col = ps->t.col;
    if (next(ps) < 0) return -1;
    int rhs = parse_binary(ps, prec + 1);
    if (rhs < 0) return -1;
    lhs = node(ps, prec <= P_AND ? CC_EX_LOGIC : CC_EX_BIN, op, lhs, rhs, -1, col);
  }
}

/* `c ? a : b` after c. */
static NOINLINE int parse_c_cond(parser *ps, int c) {
  int col = ps->t.col;
  if (next(ps) < 0) return -1;
  int a = parse_cond(ps);
  if (a < 0 || expect(ps, ":") < 0) return -1;
  int b = parse_cond(ps);
  return b < 0 ? -1 : node(ps, CC_EX_COND, 0, c, a, b, col);
}

/* `a if c else b` after a. */
static NOINLINE int parse_py_cond(parser *ps, int a) {
  int col = ps->t.col;
  if (next(ps) < 0) return -1;
  int c = parse_binary(ps, P_OR);
  if (c < 0 || expect(ps, "else") < 0) return -1;
  int b = parse_cond(ps);
  return b < 0 ? -1 : node(ps, CC_EX_COND, 0, c, a, b, col);
}

static int parse_cond(parser *ps) {
  if (enter(ps, ps->t.col) < 0) return -1;
  int c = parse_binary(ps, P_OR);
  if (c >= 0 && is_op(&ps->t, "?"))
    c = parse_c_cond(ps, c);
  else if (c >= 0 && is_op(&ps->t, "if"))
    c = parse_py_cond(ps, c);
  ps->depth--;
  return c;
}

/* ---- the entry points ------------------------------------------------------------------- */

static int parse_all(parser *ps, size_t len) {
  if (len > CC_EXPR_TEXT_MAX)
    return fail(ps, 1, "the expression is %zu bytes long, more than the limit of %d bytes", len,
                CC_EXPR_TEXT_MAX);
  ps->e->lits = cc_raw_malloc(len + 1);
  if (!ps->e->lits) return fail(ps, 1, "out of memory");
  if (next(ps) < 0) return -1;
  if (ps->t.kind == T_END) return fail(ps, 1, "an empty expression");
  ps->first = ps->t.s;
  int root = parse_cond(ps);
  if (root < 0 || need_value(ps, root) < 0) return -1;
  if (is_op(&ps->t, ":")) return fail(ps, ps->t.col, "%s", FUNCTION_HINT);
  if (ps->t.kind != T_END) return fail_tok(ps, &ps->t, "unexpected %s after a complete expression");
  ps->e->text = cc_raw_malloc(len + 1);
  if (!ps->e->text) return fail(ps, 1, "out of memory");
  memcpy(ps->e->text, ps->text, len + 1);
  return root;
}

int cc_expr_parse(const char *text, cc_expr_lookup_fn lookup, void *ctx, cc_expr *out, char **why) {
  memset(out, 0, sizeof *out);
  *why = NULL;
  parser ps = {.text = text, .p = text, .e = out, .lookup = lookup, .ctx = ctx, .why = why};
  out->root = parse_all(&ps, strlen(text));
  free(ps.stack);
  if (out->root < 0) {
    cc_expr_free(out);
    return -1;
  }
  return 0;
}

void cc_expr_free(cc_expr *e) {
  if (!e) return;
  free(e->nodes);
  free(e->kids);
  free(e->consts);
  free(e->lits);
  free(e->text);
  memset(e, 0, sizeof *e);
  e->root = -1;
}

int cc_expr_uses(const cc_expr *e, int var) {
  for (int i = 0; i < e->count; i++)
    if (e->nodes[i].kind == CC_EX_VAR && e->nodes[i].a == var) return 1;
  return 0;
}
