/*
 * tune/expr_impl.h -- what the expression parser and evaluator share: node kinds, operator
 * codes and the function table (expr_eval.c). Only expr_parse.c and expr_eval.c include it.
 */
#ifndef CUCORE_TUNE_EXPR_IMPL_H
#define CUCORE_TUNE_EXPR_IMPL_H

#include "tune/expr.h"

/* Node kinds, and what a node's a, b, c hold:
 *   NUM    a: the literal's index in consts
 *   VAR    a: the variable's index
 *   UN     op (NEG POS NOT INV), a: the operand
 *   BIN    op (arithmetic, bitwise, one comparison), a b: the operands; for IN/NOTIN b may be a
 *          collection (a LIST or a range CALL)
 *   LOGIC  op (AND OR), a b: the operands (b evaluated only when needed)
 *   COND   a: the condition, b: the value when true, c: when false
 *   CMP    a chain of two or more comparisons: kids[a .. a + 2b]: operand, op, operand, op, ...
 *          (b comparisons); only the last operand may be a collection, after IN/NOTIN
 *   CALL   op (CC_FN_*), kids[a .. a + b): the arguments
 *   LIST   a list, tuple or set: kids[a .. a + b): the elements (values, never collections)
 * LIST and a CALL of range are collections: the parser lets them stand only after `in` /
 * `not in` and as the one argument of any all len min max. */
enum cc_expr_kind {
  CC_EX_NUM,
  CC_EX_VAR,
  CC_EX_UN,
  CC_EX_BIN,
  CC_EX_LOGIC,
  CC_EX_COND,
  CC_EX_CMP,
  CC_EX_CALL,
  CC_EX_LIST
};

enum cc_expr_op {
  /* arithmetic and bitwise (BIN) */
  CC_OP_ADD,
  CC_OP_SUB,
  CC_OP_MUL,
  CC_OP_DIV,
  CC_OP_FLOORDIV,
  CC_OP_MOD,
  CC_OP_POW,
  CC_OP_BITAND,
  CC_OP_BITOR,
  CC_OP_BITXOR,
  CC_OP_SHL,
  CC_OP_SHR,
  /* comparisons (BIN, CMP), CC_OP_LT .. CC_OP_ISNOT */
  CC_OP_LT,
  CC_OP_LE,
  CC_OP_GT,
  CC_OP_GE,
  CC_OP_EQ,
  CC_OP_NE,
  CC_OP_IN,
  CC_OP_NOTIN,
  CC_OP_IS,
  CC_OP_ISNOT,
  /* LOGIC */
  CC_OP_AND,
  CC_OP_OR,
  /* UN */
  CC_OP_NEG,
  CC_OP_POS,
  CC_OP_NOT,
  CC_OP_INV,
  CC_OP_COUNT
};

/* Functions (CALL's op). */
enum cc_expr_fn {
  CC_FN_ABS,
  CC_FN_ALL,
  CC_FN_ANY,
  CC_FN_CEIL,
  CC_FN_FLOAT,
  CC_FN_FLOOR,
  CC_FN_INT,
  CC_FN_LEN,
  CC_FN_LOG2,
  CC_FN_MAX,
  CC_FN_MIN,
  CC_FN_RANGE,
  CC_FN_ROUND
};

/* How a function takes its arguments. */
enum cc_expr_fn_args {
  CC_FA_VALUES,       /* min_args..max_args values */
  CC_FA_ONE_SEQ,      /* one collection or string (any all len) */
  CC_FA_SEQ_OR_VALUES /* one collection or string, or two or more values (min max) */
};

typedef struct cc_expr_func_info {
  const char *name;
  uint8_t fn;   /* cc_expr_fn */
  uint8_t args; /* cc_expr_fn_args */
  uint8_t min_args, max_args;
} cc_expr_func_info;

/* The function named name[0..len), or NULL. */
const cc_expr_func_info *cc_expr_func(const char *name, size_t len);
/* The functions' names, space-separated, for messages. */
const char *cc_expr_func_names(void);
/* An operator's spelling, for messages ("+", "not in"). */
const char *cc_expr_op_name(int op);
/* A message made with printf's rules, malloc'd (NULL when out of memory). */
char *cc_expr_why(const char *fmt, ...) CC_PRINTF(1, 2);
/* 1 for a keyword (and or not in is if else lambda def), never a parameter's name. */
int cc_expr_is_keyword(const char *name, size_t len);

#endif /* CUCORE_TUNE_EXPR_IMPL_H */
