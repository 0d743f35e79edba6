/*
 * tune/expr_impl.h -- what the expression parser and evaluator share: node kinds, operator
 * codes and the function table (expr_eval.c). Only expr_parse.c and expr_eval.c include it.
 */
#ifndef CUCORE_TUNE_EXPR_IMPL_H
#define CUCORE_TUNE_EXPR_IMPL_H

#include "tune/expr.h"

enum cc_expr_kind { CC_EX_NUM, CC_EX_VAR, CC_EX_UN, CC_EX_BIN, CC_EX_LOGIC, CC_EX_COND };

enum cc_expr_op {
  CC_OP_ADD,
  CC_OP_SUB,
  CC_OP_MUL,
  CC_OP_DIV,
  CC_OP_FLOORDIV,
  CC_OP_MOD,
  CC_OP_POW,
  CC_OP_LT,
  CC_OP_LE,
  CC_OP_GT,
  CC_OP_GE,
  CC_OP_EQ,
  CC_OP_NE,
  CC_OP_AND,
  CC_OP_OR,
  CC_OP_NEG,
  CC_OP_POS,
  CC_OP_NOT,
  /* functions */
  CC_FN_MIN,
  CC_FN_MAX,
  CC_FN_CEIL,
  CC_FN_FLOOR,
  CC_FN_ABS,
  CC_FN_LOG2
};

/* The function named by name[0..len), or -1. */
int cc_expr_func(const char *name, size_t len);
/* 1 for min and max (two or more arguments). */
int cc_expr_func_variadic(int fn);
const char *cc_expr_func_name(int fn);
/* A message made with printf's rules, malloc'd (NULL when out of memory). */
char *cc_expr_why(const char *fmt, ...) CC_PRINTF(1, 2);
/* 1 for and, or, not, if, else, lambda (never parameter names). */
int cc_expr_is_keyword(const char *name, size_t len);

#endif /* CUCORE_TUNE_EXPR_IMPL_H */
