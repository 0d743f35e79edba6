/* args_elem.c -- the element types of the args module (i8 u8 i16 u16 i32 u32 i64 u64 f16 bf16
 * f32 f64): their names, sizes and kinds, and the code cucore_compare_elements takes. */
#include "args_spec.h"

#include <string.h>

const char *const args_elem_names[ARGS_ELEM_COUNT] = {"i8",  "u8",  "i16", "u16",  "i32", "u32",
                                                      "i64", "u64", "f16", "bf16", "f32", "f64"};
const int args_elem_sizes[ARGS_ELEM_COUNT] = {1, 1, 2, 2, 4, 4, 8, 8, 2, 2, 4, 8};

int args_elem_is_float(args_elem t) { return t >= ARGS_F16; }
int args_elem_is_signed(args_elem t) {
  return t == ARGS_I8 || t == ARGS_I16 || t == ARGS_I32 || t == ARGS_I64 || args_elem_is_float(t);
}

int args_elem_dtype(args_elem t) {
  return t == ARGS_BF16           ? CUCORE_DTYPE_BFLOAT
         : args_elem_is_float(t)  ? CUCORE_DTYPE_FLOAT
         : args_elem_is_signed(t) ? CUCORE_DTYPE_INT
                                  : CUCORE_DTYPE_UINT;
}

int args_elem_parse(const char *s, size_t len) {
  for (int i = 0; i < ARGS_ELEM_COUNT; i++)
    if (strlen(args_elem_names[i]) == len && strncmp(s, args_elem_names[i], len) == 0) return i;
  return -1;
}

const char *args_elem_list(void) { return "i8 u8 i16 u16 i32 u32 i64 u64 f16 bf16 f32 f64"; }
