/*
 * expr_parse.c -- the tokenizer and recursive-descent parser of tune expressions (expr.h).
 *
 * Grammar, lowest precedence first (Python's order, with C's spellings beside):
 *   cond  := or ( '?' cond ':' cond )?
 *   or    := and ( ('or' | '||') and )*
 *   and   := not ( ('and' | '&&') not )*
 *   not   := 'not' not | cmp
 *   cmp   := add ( ('<' | '<=' | '>' | '>=' | '==' | '!=') add )*      (chained as Python)
 *   add   := mul ( ('+' | '-') mul )*
 *   mul   := unary ( ('*' | '/' | '//' | '%') unary )*
 *   unary := ('-' | '+' | '!') unary | power
 *   power := primary ( '**' unary )?
 *   primary := NUMBER | NAME | FUNC '(' cond (',' cond)* ')' | '(' cond ')'
 */
#include "tune/expr_impl.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CC_EXPR_DEPTH_MAX 64

typedef struct tok {
  int kind; /* T_* */
  const char *s;
  size_t len;
  int col;
  cc_tval num;
} tok;

enum { T_END, T_NUM, T_NAME, T_OP, T_BAD };

typedef struct parser {
  const char *text;
  const char *p;
  tok t;
  cc_expr *e;
  cc_expr_lookup_fn lookup;
  void *ctx;
  int depth;
  char **why;
  int failed;
} parser;

static int fail(parser *ps, int col, const char *fmt, const char *arg) {
  if (!ps->failed) {
    char *msg = cc_expr_why(fmt, arg);
    *ps->why = msg ? cc_expr_why("column %d: %s", col, msg) : NULL;
    free(msg);
  }
  ps->failed = 1;
  return -1;
}

/* The current token as text for messages ("end of text" at the end). */
static const char *tok_text(const tok *t, char *buf, size_t cap) {
  if (t->kind == T_END) return "the end of the text";
  snprintf(buf, cap, "`%.*s`", (int)(t->len > 40 ? 40 : t->len), t->s);
  return buf;
}

static int lex_number(parser *ps, tok *t) {
  const char *s = ps->p;
  char *end = NULL;
  int real = 0;
  size_t n = strspn(s, "0123456789abcdefABCDEFxX.");
  for (size_t i = 0; i < n; i++)
    if (s[i] == '.' || ((s[i] == 'e' || s[i] == 'E') && !(s[0] == '0' && (s[1] | 32) == 'x')))
      real = 1;
  errno = 0;
  if (real) {
    t->num = cc_tval_real(strtod(s, &end));
  } else {
    long long v = strtoll(s, &end, 0);
    t->num = cc_tval_int(v);
  }
  if (errno == ERANGE) return fail(ps, t->col, "a number out of range%s", "");
  t->kind = T_NUM;
  t->len = (size_t)(end - s);
  if (isalnum((unsigned char)*end) || *end == '_' || *end == '.')
    return fail(ps, t->col, "a malformed number near `%.12s`", s);
  return 0;
}

static const char *const OPS2[] = {"**", "//", "<=", ">=", "==", "!=", "&&", "||"};

static void lex_op(parser *ps, tok *t) {
  const char *s = ps->p;
  t->kind = T_OP;
  t->len = 1;
  for (size_t i = 0; i < CC_ARRAY_LEN(OPS2); i++)
    if (s[0] == OPS2[i][0] && s[1] == OPS2[i][1]) t->len = 2;
  if (t->len == 1 && !strchr("+-*/%<>!?:(),", s[0])) t->kind = T_BAD;
}

static int next(parser *ps) {
  while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r') ps->p++;
  tok *t = &ps->t;
  t->s = ps->p;
  t->col = (int)(ps->p - ps->text) + 1;
  t->len = 0;
  if (*ps->p == 0) {
    t->kind = T_END;
  } else if (isdigit((unsigned char)*ps->p) ||
             (*ps->p == '.' && isdigit((unsigned char)ps->p[1]))) {
    if (lex_number(ps, t) < 0) return -1;
  } else if (isalpha((unsigned char)*ps->p) || *ps->p == '_') {
    t->kind = T_NAME;
    while (isalnum((unsigned char)ps->p[t->len]) || ps->p[t->len] == '_') t->len++;
  } else {
    lex_op(ps, t);
    if (t->kind == T_BAD) return fail(ps, t->col, "unexpected character `%.1s`", ps->p);
  }
  ps->p += t->len;
  return 0;
}

static int is_op(const tok *t, const char *op) {
  return (t->kind == T_OP || t->kind == T_NAME) && t->len == strlen(op) &&
         memcmp(t->s, op, t->len) == 0;
}

static int add_node(parser *ps, int kind, int op, int a, int b, int c, int col) {
  cc_expr *e = ps->e;
  cc_expr_node *nodes = cc_grow(e->nodes, &e->cap, (size_t)e->count + 1, sizeof *nodes,
                                "an expression's nodes");
  if (!nodes) return fail(ps, col, "%sout of memory", "");
  e->nodes = nodes;
  cc_expr_node *n = &e->nodes[e->count];
  memset(n, 0, sizeof *n);
  n->kind = (uint8_t)kind;
  n->op = (uint8_t)op;
  n->a = a, n->b = b, n->c = c, n->col = col, n->var = -1;
  return e->count++;
}

static int parse_cond(parser *ps);

static int expect(parser *ps, const char *op) {
  char buf[64];
  if (!is_op(&ps->t, op)) {
    char msg[96];
    snprintf(msg, sizeof msg, "expected `%s`, found %%s", op);
    return fail(ps, ps->t.col, msg, tok_text(&ps->t, buf, sizeof buf));
  }
  return next(ps);
}

static int parse_call(parser *ps, const tok *name) {
  int fn = cc_expr_func(name->s, name->len);
  if (fn < 0) {
    char buf[72];
    snprintf(buf, sizeof buf, "%.*s", (int)(name->len > 64 ? 64 : name->len), name->s);
    return fail(ps, name->col, "`%s` is not a function (min max ceil floor abs log2)", buf);
  }
  if (next(ps) < 0) return -1;
  int args[2], argc = 0, acc = -1;
  do {
    if (argc > 0 && next(ps) < 0) return -1;
    int a = parse_cond(ps);
    if (a < 0) return -1;
    if (argc < 2) args[argc] = a;
    argc++;
    if (cc_expr_func_variadic(fn) && argc >= 2)
      acc = add_node(ps, CC_EX_BIN, fn, argc == 2 ? args[0] : acc, a, -1, name->col);
  } while (is_op(&ps->t, ","));
  if (expect(ps, ")") < 0) return -1;
  if (cc_expr_func_variadic(fn) ? argc < 2 : argc != 1)
    return fail(ps, name->col, "%s takes a wrong number of arguments", cc_expr_func_name(fn));
  return cc_expr_func_variadic(fn) ? acc : add_node(ps, CC_EX_UN, fn, args[0], -1, -1, name->col);
}

static int parse_name(parser *ps) {
  tok name = ps->t;
  if (next(ps) < 0) return -1;
  if (is_op(&ps->t, "(")) return parse_call(ps, &name);
  if ((name.len == 4 && (!memcmp(name.s, "true", 4) || !memcmp(name.s, "True", 4))) ||
      (name.len == 5 && (!memcmp(name.s, "false", 5) || !memcmp(name.s, "False", 5)))) {
    int n = add_node(ps, CC_EX_NUM, 0, -1, -1, -1, name.col);
    if (n >= 0) ps->e->nodes[n].num = cc_tval_bool(name.s[0] == 't' || name.s[0] == 'T');
    return n;
  }
  int var = ps->lookup ? ps->lookup(ps->ctx, name.s, name.len) : -1;
  if (var < 0) {
    char buf[96];
    snprintf(buf, sizeof buf, "%.*s", (int)(name.len > 64 ? 64 : name.len), name.s);
    return fail(ps, name.col, "unknown name `%s` (not a parameter of the space)", buf);
  }
  int n = add_node(ps, CC_EX_VAR, 0, -1, -1, -1, name.col);
  if (n >= 0) ps->e->nodes[n].var = var;
  return n;
}

static int parse_primary(parser *ps) {
  char buf[64];
  tok t = ps->t;
  if (t.kind == T_NUM) {
    int n = add_node(ps, CC_EX_NUM, 0, -1, -1, -1, t.col);
    if (n >= 0) ps->e->nodes[n].num = t.num;
    return n < 0 || next(ps) < 0 ? -1 : n;
  }
  if (t.kind == T_NAME && !cc_expr_is_keyword(t.s, t.len)) return parse_name(ps);
  if (is_op(&t, "(")) {
    if (next(ps) < 0) return -1;
    int n = parse_cond(ps);
    return n < 0 || expect(ps, ")") < 0 ? -1 : n;
  }
  return fail(ps, t.col, "expected a number, a name or `(`, found %s",
              tok_text(&t, buf, sizeof buf));
}

static int parse_unary(parser *ps);

static int parse_power(parser *ps) {
  int a = parse_primary(ps);
  if (a < 0 || !is_op(&ps->t, "**")) return a;
  int col = ps->t.col;
  if (next(ps) < 0) return -1;
  int b = parse_unary(ps);
  return b < 0 ? -1 : add_node(ps, CC_EX_BIN, CC_OP_POW, a, b, -1, col);
}

static int parse_unary(parser *ps) {
  int op = is_op(&ps->t, "-")   ? CC_OP_NEG
           : is_op(&ps->t, "!") ? CC_OP_NOT
           : is_op(&ps->t, "+") ? CC_OP_POS
                                : -1;
  if (op < 0) return parse_power(ps);
  int col = ps->t.col;
  if (++ps->depth > CC_EXPR_DEPTH_MAX) return fail(ps, col, "nested too deeply%s", "");
  if (next(ps) < 0) return -1;
  int a = parse_unary(ps);
  ps->depth--;
  return a < 0 ? -1 : add_node(ps, CC_EX_UN, op, a, -1, -1, col);
}

/* One binary level: operands parsed by `sub`, operators from `ops` (CC_OP_* in `codes`). */
static int parse_level(parser *ps, int (*sub)(parser *), const char *const *ops, const int *codes,
                       int n_ops) {
  int a = sub(ps);
  for (;;) {
    if (a < 0) return -1;
    int k = -1;
    for (int i = 0; i < n_ops && k < 0; i++)
      if (is_op(&ps->t, ops[i])) k = i;
    if (k < 0) return a;
    int col = ps->t.col;
    if (next(ps) < 0) return -1;
    int b = sub(ps);
    if (b < 0) return -1;
    int kind = codes[k] == CC_OP_AND || codes[k] == CC_OP_OR ? CC_EX_LOGIC : CC_EX_BIN;
    a = add_node(ps, kind, codes[k], a, b, -1, col);
  }
}

static int parse_mul(parser *ps) {
  static const char *const ops[] = {"*", "//", "/", "%"};
  static const int codes[] = {CC_OP_MUL, CC_OP_FLOORDIV, CC_OP_DIV, CC_OP_MOD};
  return parse_level(ps, parse_unary, ops, codes, 4);
}

static int parse_add(parser *ps) {
  static const char *const ops[] = {"+", "-"};
  static const int codes[] = {CC_OP_ADD, CC_OP_SUB};
  return parse_level(ps, parse_mul, ops, codes, 2);
}

/* Comparisons chain as in Python: a < b <= c is (a < b) and (b <= c), b evaluated once per
 * use (expressions have no side effects, so that is the same). */
static int parse_cmp(parser *ps) {
  static const char *const ops[] = {"<=", ">=", "==", "!=", "<", ">"};
  static const int codes[] = {CC_OP_LE, CC_OP_GE, CC_OP_EQ, CC_OP_NE, CC_OP_LT, CC_OP_GT};
  int left = parse_add(ps), acc = -1;
  for (;;) {
    if (left < 0) return -1;
    int k = -1;
    for (int i = 0; i < 6 && k < 0; i++)
      if (is_op(&ps->t, ops[i])) k = i;
    if (k < 0) return acc >= 0 ? acc : left;
    int col = ps->t.col;
    if (next(ps) < 0) return -1;
    int right = parse_add(ps);
    if (right < 0) return -1;
    int c = add_node(ps, CC_EX_BIN, codes[k], left, right, -1, col);
    acc = acc < 0 ? c : add_node(ps, CC_EX_LOGIC, CC_OP_AND, acc, c, -1, col);
    if (c < 0 || acc < 0) return -1;
    left = right;
  }
}

static int parse_not(parser *ps) {
  if (!is_op(&ps->t, "not")) return parse_cmp(ps);
  int col = ps->t.col;
  if (++ps->depth > CC_EXPR_DEPTH_MAX) return fail(ps, col, "nested too deeply%s", "");
  if (next(ps) < 0) return -1;
  int a = parse_not(ps);
  ps->depth--;
  return a < 0 ? -1 : add_node(ps, CC_EX_UN, CC_OP_NOT, a, -1, -1, col);
}

static int parse_and(parser *ps) {
  static const char *const ops[] = {"and", "&&"};
  static const int codes[] = {CC_OP_AND, CC_OP_AND};
  return parse_level(ps, parse_not, ops, codes, 2);
}

static int parse_or(parser *ps) {
  static const char *const ops[] = {"or", "||"};
  static const int codes[] = {CC_OP_OR, CC_OP_OR};
  return parse_level(ps, parse_and, ops, codes, 2);
}

static int parse_cond(parser *ps) {
  if (++ps->depth > CC_EXPR_DEPTH_MAX)
    return fail(ps, ps->t.col, "nested too deeply (more than %s levels)", "64");
  int c = parse_or(ps);
  if (c >= 0 && is_op(&ps->t, "?")) {
    int col = ps->t.col;
    if (next(ps) < 0) return -1;
    int a = parse_cond(ps);
    if (a < 0 || expect(ps, ":") < 0) return -1;
    int b = parse_cond(ps);
    c = b < 0 ? -1 : add_node(ps, CC_EX_COND, 0, c, a, b, col);
  }
  ps->depth--;
  return c;
}

int cc_expr_parse(const char *text, cc_expr_lookup_fn lookup, void *ctx, cc_expr *out, char **why) {
  memset(out, 0, sizeof *out);
  *why = NULL;
  parser ps = {.text = text, .p = text, .e = out, .lookup = lookup, .ctx = ctx, .why = why};
  char buf[64];
  int root = -1;
  if (next(&ps) == 0) {
    if (ps.t.kind == T_END)
      fail(&ps, 1, "an empty expression%s", "");
    else
      root = parse_cond(&ps);
  }
  if (root >= 0 && ps.t.kind != T_END)
    root = fail(&ps, ps.t.col, "unexpected %s after a complete expression",
                tok_text(&ps.t, buf, sizeof buf));
  out->text = root >= 0 ? cc_raw_strdup(text) : NULL;
  if (root >= 0 && !out->text) root = fail(&ps, 1, "out of memory%s", "");
  if (root < 0) {
    cc_expr_free(out);
    return -1;
  }
  out->root = root;
  return 0;
}

void cc_expr_free(cc_expr *e) {
  if (!e) return;
  free(e->nodes);
  free(e->text);
  memset(e, 0, sizeof *e);
}

int cc_expr_uses(const cc_expr *e, int var) {
  for (int i = 0; i < e->count; i++)
    if (e->nodes[i].kind == CC_EX_VAR && e->nodes[i].var == var) return 1;
  return 0;
}
