/**
 * @file
 * @brief Kernels: lookup and queries, arguments, launches, occupancy.
 *
 * A kernel of an object and its parameter layout, argument lists checked against it,
 * launches, the host-only occupancy model (no GPU, no driver) and occupancy on the GPU,
 * which takes the model's types.
 *
 * A part of cucore's public header: a program includes `<cucore.h>`, which includes every
 * part in the order of the data path; this part also compiles alone.
 */
#ifndef CUCORE_PART_KERNELS_H
#define CUCORE_PART_KERNELS_H

#include "base.h"
#include "devices.h"
#include "memory.h"
#include "code.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------ */
/* Kernels: lookup, parameter layout, every cuFunc / cuKernel query and setting                */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup kernel Kernels
 * Lookup, parameter layout, every cuFunc / cuKernel query and setting. A call that takes a
 * device needs a kernel looked up where a GPU was present (else CUCORE_NO_DEVICE), and
 * supports up to 16 devices per kernel (else CUCORE_NOT_SUPPORTED).
 * @{
 */

/** A kernel of an object: look up with cucore_object_get_kernel(), destroy with
 * cucore_kernel_destroy(). May be shared between threads (see the thread-safety notes on the
 * main page). */
typedef struct cucore_kernel cucore_kernel;

/** CONSTRUCTOR: the kernel `name` of `obj`: a symbol ("_Z5scalePfi", "saxpy") or a name
 * expression registered at compile time ("scale<float>"). The kernel holds a reference to the
 * object. With a GPU the code is loaded and the layout comes from the driver
 * (cuKernelGetParamInfo) -- except for a cubin under lazy loading (the driver's default),
 * whose own layout is read so the kernel stays unloaded until it is first used (the driver's
 * query would load it); without a GPU, from the offline reader. CUCORE_NOT_FOUND lists the
 * kernels that exist. Destroy `*out` with cucore_kernel_destroy().
 * @retval CUCORE_NOT_FOUND no such kernel (the message lists those that exist).
 * @retval CUCORE_INVALID_BINARY the code cannot be loaded or read.
 * @retval CUCORE_NO_DEVICE LTO-IR without a GPU.
 * @retval CUCORE_VERSION_MISMATCH PTX newer than the driver can compile. */
CUCORE_API cucore_status cucore_object_get_kernel(cucore_object *obj, const char *name,
                                                  cucore_kernel **out);
/** DESTRUCTOR: drops the kernel and its reference to the object. NULL is a no-op. Argument
 * lists made for it must be destroyed first. */
CUCORE_API cucore_status cucore_kernel_destroy(cucore_kernel *k);
/** The kernel's symbol as in the binary (the lowered name for a name expression). Owned by the
 * kernel. */
CUCORE_API cucore_status cucore_kernel_get_name(const cucore_kernel *k, const char **name);
/** The object the kernel came from (borrowed: no reference is added). */
CUCORE_API cucore_status cucore_kernel_get_object(const cucore_kernel *k, cucore_object **obj);
/**
 * A kernel handle over a CUkernel made elsewhere (cuLibraryGetKernel of the caller's own
 * library, or cudaGetKernel). Context-independent: it runs on every device. The parameter
 * layout comes from the driver (cuKernelGetParamInfo, CUDA 12.4+), so counts, sizes and
 * alignments are checked; types are not known unless declared with
 * cucore_kernel_declare_signature. The CUkernel is borrowed: its library must stay loaded
 * while the handle lives; cucore_kernel_destroy frees the handle only, and
 * cucore_kernel_get_object gives NULL.
 * Errors: CUCORE_DRIVER_TOO_OLD before CUDA 12.4; CUCORE_DRIVER_ERROR for a handle the driver
 * does not know.
 */
CUCORE_API cucore_status cucore_kernel_from_cukernel(void *cukernel, cucore_kernel **out);
/**
 * A kernel handle over a CUfunction of `dev`'s context (cuModuleGetFunction, or the runtime's
 * cudaGetFuncBySymbol). It runs on that device only (a launch on another is
 * CUCORE_INVALID_DEVICE). Layout from cuFuncGetParamInfo; the function is borrowed, as for
 * cucore_kernel_from_cukernel.
 */
CUCORE_API cucore_status cucore_kernel_from_cufunction(cucore_device *dev, void *cufunction,
                                                       cucore_kernel **out);
/** Number of parameters. */
CUCORE_API cucore_status cucore_kernel_get_param_count(const cucore_kernel *k, int *count);
/** Layout of parameter `index` (offset, size, alignment, kind when known), copied to `*out`.
 * @retval CUCORE_INVALID_ARGUMENT `index` is out of range. */
CUCORE_API cucore_status cucore_kernel_get_param(const cucore_kernel *k, int index,
                                                 cucore_param_info *out);
/** Total bytes of the parameter buffer. */
CUCORE_API cucore_status cucore_kernel_get_param_bytes(const cucore_kernel *k, size_t *bytes);
/** Declares the parameter types of a kernel whose code did not say them (a cubin loaded from a
 * file records offsets and sizes but not types): a comma-separated list, one per parameter,
 * of i8 u8 i16 u16 i32 u32 i64 u64 (integers), f16 bf16 f32 f64 (floating point), ptr, tex,
 * surf, or bytes (a struct by value), e.g.\ "f32, ptr, ptr, i32". Each is checked against the
 * layout: the count (CUCORE_ARG_COUNT) and each size (CUCORE_ARG_SIZE, naming the parameter);
 * nothing changes on failure. Argument lists made afterwards check against these types.
 * Not synchronised: must not race with any other use of the kernel or its argument lists.
 * @retval CUCORE_PARSE_ERROR an empty or unknown type in the list.
 * @retval CUCORE_ARG_COUNT the list has another number of parameters than the kernel.
 * @retval CUCORE_ARG_SIZE a type's size is not its parameter's. */
CUCORE_API cucore_status cucore_kernel_declare_signature(cucore_kernel *k, const char *signature);
/** Where the layout came from: "driver" (cuKernelGetParamInfo), "cubin" (offline reader) or
 * "ptx" (.entry declaration). Static storage. */
CUCORE_API cucore_status cucore_kernel_get_layout_source(const cucore_kernel *k, const char **src);

/** Kernel attributes; the values equal CUfunction_attribute's. */
typedef enum cucore_kernel_attr {
  CUCORE_KATTR_MAX_THREADS_PER_BLOCK = 0,              /**< largest block it can be launched with */
  CUCORE_KATTR_SHARED_SIZE_BYTES = 1,                  /**< static shared memory */
  CUCORE_KATTR_CONST_SIZE_BYTES = 2,                   /**< constant memory the kernel uses */
  CUCORE_KATTR_LOCAL_SIZE_BYTES = 3,                   /**< local memory per thread */
  CUCORE_KATTR_NUM_REGS = 4,                           /**< registers per thread */
  CUCORE_KATTR_PTX_VERSION = 5,                        /**< PTX ISA version, major*10 + minor */
  CUCORE_KATTR_BINARY_VERSION = 6,                     /**< binary architecture, major*10 + minor */
  CUCORE_KATTR_CACHE_MODE_CA = 7,                      /**< 1 when compiled with -Xptxas -dlcm=ca */
  CUCORE_KATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,      /**< settable */
  CUCORE_KATTR_PREFERRED_SHARED_MEMORY_CARVEOUT = 9,   /**< settable, percent or -1 */
  CUCORE_KATTR_CLUSTER_SIZE_MUST_BE_SET = 10,          /**< 1: launches must give a cluster size */
  CUCORE_KATTR_REQUIRED_CLUSTER_WIDTH = 11,            /**< settable before first launch */
  CUCORE_KATTR_REQUIRED_CLUSTER_HEIGHT = 12,           /**< settable before first launch */
  CUCORE_KATTR_REQUIRED_CLUSTER_DEPTH = 13,            /**< settable before first launch */
  CUCORE_KATTR_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14, /**< settable */
  CUCORE_KATTR_CLUSTER_SCHEDULING_POLICY_PREFERENCE = 15, /**< settable */
  CUCORE_KATTR_COUNT                                      /**< the number of attributes */
} cucore_kernel_attr;

/** "max_threads_per_block", ... ("unknown_attribute" for a value not in the enum). Never NULL;
 * static storage. */
CUCORE_API const char *cucore_kernel_attr_name(cucore_kernel_attr attr);
/** Reads an attribute for the kernel on `dev` (cuKernelGetAttribute). */
CUCORE_API cucore_status cucore_kernel_get_attribute(cucore_kernel *k, cucore_device *dev,
                                                     cucore_kernel_attr attr, int *value);
/** Sets a settable attribute for the kernel on `dev` (cuKernelSetAttribute); read-only ones are
 * CUCORE_INVALID_ARGUMENT naming the settable ones. Later launches check against the new value.
 * @retval CUCORE_INVALID_ARGUMENT a read-only attribute, dynamic shared memory beyond the
 *         device's opt-in maximum after static memory, or a carveout outside -1..100. */
CUCORE_API cucore_status cucore_kernel_set_attribute(cucore_kernel *k, cucore_device *dev,
                                                     cucore_kernel_attr attr, int value);

/** Preferred L1 / shared memory split of a kernel; the values equal CUfunc_cache's. */
typedef enum cucore_cache_config {
  CUCORE_CACHE_PREFER_NONE = 0,   /**< no preference */
  CUCORE_CACHE_PREFER_SHARED = 1, /**< prefer more shared memory */
  CUCORE_CACHE_PREFER_L1 = 2,     /**< prefer more L1 cache */
  CUCORE_CACHE_PREFER_EQUAL = 3   /**< prefer equal L1 and shared memory */
} cucore_cache_config;
/** Sets the preferred cache configuration (cuKernelSetCacheConfig). */
CUCORE_API cucore_status cucore_kernel_set_cache_config(cucore_kernel *k, cucore_device *dev,
                                                        cucore_cache_config config);
/** Whether the kernel's function is loaded on `dev` (cuFuncIsLoaded, read without loading it:
 * the function is found in its module's list, since cuKernelGetFunction would load it). Under
 * lazy loading (CUDA_MODULE_LOADING=LAZY, the driver's default) a kernel is loaded by its
 * first launch, which may serialise with other work: load kernels that must run concurrently
 * (programmatic dependent launches, producer/consumer kernels) with cucore_kernel_load()
 * before launching them, or load the object eagerly (cucore_load_options.eager). */
CUCORE_API cucore_status cucore_kernel_is_loaded(cucore_kernel *k, cucore_device *dev, int *loaded);
/** Loads the kernel's function on `dev` explicitly (cuFuncLoad). */
CUCORE_API cucore_status cucore_kernel_load(cucore_kernel *k, cucore_device *dev);
/** The native CUkernel and the CUfunction for `dev` (cuKernelGetFunction). Either may be NULL.
 * Both stay owned by cucore, valid while the kernel lives. */
CUCORE_API cucore_status cucore_kernel_get_native(cucore_kernel *k, cucore_device *dev,
                                                  void **cukernel, void **cufunction);
/** The CUmodule holding the kernel's function on `dev` (cuFuncGetModule); owned by the driver,
 * valid while the kernel lives. */
CUCORE_API cucore_status cucore_kernel_get_module(cucore_kernel *k, cucore_device *dev,
                                                  void **cumodule);
/** The function name the driver reports for the kernel's function on `dev` (cuFuncGetName);
 * owned by the driver, valid while the kernel lives. */
CUCORE_API cucore_status cucore_kernel_get_function_name(cucore_kernel *k, cucore_device *dev,
                                                         const char **name);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* Kernel arguments: bound by value, checked against the kernel's layout                       */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup args Kernel arguments
 * Bound by value, checked against the kernel's layout.
 * @{
 */

/** The argument values of one launch of a kernel, copied when bound: create with
 * cucore_args_create(), destroy with cucore_args_destroy(). Not thread-safe: one thread at a
 * time, including the launch that reads it. */
typedef struct cucore_args cucore_args;

/** CONSTRUCTOR: an empty argument list for `k` (which must outlive it). */
CUCORE_API cucore_status cucore_args_create(const cucore_kernel *k, cucore_args **out);
/** DESTRUCTOR: frees the argument list. NULL is a no-op. */
CUCORE_API cucore_status cucore_args_destroy(cucore_args *args);
/** Forgets every value and the sticky error; the next push is argument 0. */
CUCORE_API cucore_status cucore_args_reset(cucore_args *args);

/** Sets parameter `index` to an int8_t. Setters by index: each copies the value at once (the
 * caller's variable need not live on) and checks it against parameter `index`: the index
 * exists (CUCORE_ARG_COUNT), the size matches (CUCORE_ARG_SIZE), the kind matches where known
 * (CUCORE_ARG_TYPE: a float for an integer, a double for a float...), the alignment fits the
 * offset (CUCORE_ARG_ALIGNMENT). The first failure is also kept in the list and returned again
 * by cucore_args_check and at launch. */
CUCORE_API cucore_status cucore_args_set_i8(cucore_args *a, int index, int8_t v);
/** As cucore_args_set_i8(), for a uint8_t. */
CUCORE_API cucore_status cucore_args_set_u8(cucore_args *a, int index, uint8_t v);
/** As cucore_args_set_i8(), for an int16_t. */
CUCORE_API cucore_status cucore_args_set_i16(cucore_args *a, int index, int16_t v);
/** As cucore_args_set_i8(), for a uint16_t. */
CUCORE_API cucore_status cucore_args_set_u16(cucore_args *a, int index, uint16_t v);
/** As cucore_args_set_i8(), for an int32_t. */
CUCORE_API cucore_status cucore_args_set_i32(cucore_args *a, int index, int32_t v);
/** As cucore_args_set_i8(), for a uint32_t. */
CUCORE_API cucore_status cucore_args_set_u32(cucore_args *a, int index, uint32_t v);
/** As cucore_args_set_i8(), for an int64_t. */
CUCORE_API cucore_status cucore_args_set_i64(cucore_args *a, int index, int64_t v);
/** As cucore_args_set_i8(), for a uint64_t. */
CUCORE_API cucore_status cucore_args_set_u64(cucore_args *a, int index, uint64_t v);
/** Half and bfloat16 given as their 16-bit patterns: a half, as cucore_args_set_i8(). */
CUCORE_API cucore_status cucore_args_set_f16(cucore_args *a, int index, uint16_t bits);
/** A bfloat16 given as its 16-bit pattern, as cucore_args_set_i8(). */
CUCORE_API cucore_status cucore_args_set_bf16(cucore_args *a, int index, uint16_t bits);
/** As cucore_args_set_i8(), for a float. */
CUCORE_API cucore_status cucore_args_set_f32(cucore_args *a, int index, float v);
/** As cucore_args_set_i8(), for a double. */
CUCORE_API cucore_status cucore_args_set_f64(cucore_args *a, int index, double v);
/** A device pointer, as cucore_args_set_i8(). */
CUCORE_API cucore_status cucore_args_set_ptr(cucore_args *a, int index, cucore_devptr p);
/** A host pointer passed as an address (managed or mapped memory only), as
 * cucore_args_set_i8(). */
CUCORE_API cucore_status cucore_args_set_host_ptr(cucore_args *a, int index, const void *p);
/** A struct/union/vector by value: `size` bytes with the type's alignment (use `_Alignof`),
 * as cucore_args_set_i8(); `data` is copied.
 * @retval CUCORE_ARG_NULL `data` is NULL.
 * @retval CUCORE_ARG_SIZE `size` is 0, above 32764, or not the parameter's.
 * @retval CUCORE_ARG_ALIGNMENT `align` is not a power of two up to 4096, or not the
 *         parameter's. */
CUCORE_API cucore_status cucore_args_set_bytes(cucore_args *a, int index, const void *data,
                                               size_t size, size_t align);
/** Texture and surface objects (CUtexObject / CUsurfObject values): a texture object, as
 * cucore_args_set_i8(). */
CUCORE_API cucore_status cucore_args_set_texture(cucore_args *a, int index, uint64_t tex);
/** A surface object (CUsurfObject value), as cucore_args_set_i8(). */
CUCORE_API cucore_status cucore_args_set_surface(cucore_args *a, int index, uint64_t surf);

/** The same, each at the next index (0, 1, 2, ... since create or reset): here
 * cucore_args_set_i8(). A failed push still uses up its index. */
CUCORE_API cucore_status cucore_args_push_i8(cucore_args *a, int8_t v);
/** cucore_args_set_u8() at the next index. */
CUCORE_API cucore_status cucore_args_push_u8(cucore_args *a, uint8_t v);
/** cucore_args_set_i16() at the next index. */
CUCORE_API cucore_status cucore_args_push_i16(cucore_args *a, int16_t v);
/** cucore_args_set_u16() at the next index. */
CUCORE_API cucore_status cucore_args_push_u16(cucore_args *a, uint16_t v);
/** cucore_args_set_i32() at the next index. */
CUCORE_API cucore_status cucore_args_push_i32(cucore_args *a, int32_t v);
/** cucore_args_set_u32() at the next index. */
CUCORE_API cucore_status cucore_args_push_u32(cucore_args *a, uint32_t v);
/** cucore_args_set_i64() at the next index. */
CUCORE_API cucore_status cucore_args_push_i64(cucore_args *a, int64_t v);
/** cucore_args_set_u64() at the next index. */
CUCORE_API cucore_status cucore_args_push_u64(cucore_args *a, uint64_t v);
/** cucore_args_set_f16() at the next index. */
CUCORE_API cucore_status cucore_args_push_f16(cucore_args *a, uint16_t bits);
/** cucore_args_set_bf16() at the next index. */
CUCORE_API cucore_status cucore_args_push_bf16(cucore_args *a, uint16_t bits);
/** cucore_args_set_f32() at the next index. */
CUCORE_API cucore_status cucore_args_push_f32(cucore_args *a, float v);
/** cucore_args_set_f64() at the next index. */
CUCORE_API cucore_status cucore_args_push_f64(cucore_args *a, double v);
/** cucore_args_set_ptr() at the next index. */
CUCORE_API cucore_status cucore_args_push_ptr(cucore_args *a, cucore_devptr p);
/** cucore_args_set_host_ptr() at the next index. */
CUCORE_API cucore_status cucore_args_push_host_ptr(cucore_args *a, const void *p);
/** cucore_args_set_bytes() at the next index. */
CUCORE_API cucore_status cucore_args_push_bytes(cucore_args *a, const void *data, size_t size,
                                                size_t align);
/** cucore_args_set_texture() at the next index. */
CUCORE_API cucore_status cucore_args_push_texture(cucore_args *a, uint64_t tex);
/** cucore_args_set_surface() at the next index. */
CUCORE_API cucore_status cucore_args_push_surface(cucore_args *a, uint64_t surf);

/** The type of a value in a list given at once (cucore_args_set_values): the setters' types,
 * in their order. */
typedef enum cucore_value_type {
  CUCORE_VALUE_I8,       /**< int8_t (v.i8) */
  CUCORE_VALUE_U8,       /**< uint8_t (v.u8) */
  CUCORE_VALUE_I16,      /**< int16_t (v.i16) */
  CUCORE_VALUE_U16,      /**< uint16_t (v.u16) */
  CUCORE_VALUE_I32,      /**< int32_t (v.i32) */
  CUCORE_VALUE_U32,      /**< uint32_t (v.u32) */
  CUCORE_VALUE_I64,      /**< int64_t (v.i64) */
  CUCORE_VALUE_U64,      /**< uint64_t or a cucore_devptr (v.u64) */
  CUCORE_VALUE_F16,      /**< a half's bits (v.u16) */
  CUCORE_VALUE_BF16,     /**< a bfloat16's bits (v.u16) */
  CUCORE_VALUE_F32,      /**< float (v.f32) */
  CUCORE_VALUE_F64,      /**< double (v.f64) */
  CUCORE_VALUE_PTR,      /**< a device pointer (v.u64) */
  CUCORE_VALUE_HOST_PTR, /**< a host pointer (v.p), as cucore_args_set_host_ptr takes it */
} cucore_value_type;

/** One kernel argument of a list given at once: its type and the member of `v` it names. */
typedef struct cucore_value {
  cucore_value_type type; /**< which member of v holds the value */
  union {
    int8_t i8;     /**< CUCORE_VALUE_I8 */
    uint8_t u8;    /**< CUCORE_VALUE_U8 */
    int16_t i16;   /**< CUCORE_VALUE_I16 */
    uint16_t u16;  /**< CUCORE_VALUE_U16, _F16 and _BF16 (the bits) */
    int32_t i32;   /**< CUCORE_VALUE_I32 */
    uint32_t u32;  /**< CUCORE_VALUE_U32 */
    int64_t i64;   /**< CUCORE_VALUE_I64 */
    uint64_t u64;  /**< CUCORE_VALUE_U64 and _PTR */
    float f32;     /**< CUCORE_VALUE_F32 */
    double f64;    /**< CUCORE_VALUE_F64 */
    const void *p; /**< CUCORE_VALUE_HOST_PTR */
  } v;             /**< the value */
} cucore_value;

/** Resets `a`, gives values[i] to parameter i for i < count (each checked as its setter
 * checks it), and returns cucore_args_check(a): one call for a whole list, which CUCORE_ARGS
 * makes. The first mistake is kept and returned, as the setters keep it.
 * @retval CUCORE_INVALID_ARGUMENT count below 0, values NULL with a count, or a type that is
 *         no cucore_value_type. */
CUCORE_API cucore_status cucore_args_set_values(cucore_args *a, const cucore_value *values,
                                                int count);

/** CUCORE_OK when every parameter has a value; otherwise the first error kept, or
 * CUCORE_ARG_COUNT ("kernel `k` takes 4 parameters, 3 were given") / CUCORE_ARG_UNSET.
 * @retval CUCORE_ARG_COUNT the last parameters have no value.
 * @retval CUCORE_ARG_UNSET a parameter before the last one set has no value. */
CUCORE_API cucore_status cucore_args_check(const cucore_args *a);
/** The kernelParams array (one pointer per parameter) and the packed parameter buffer (the
 * `extra` form), both owned by `a`, valid until it is destroyed. Any out may be NULL. */
CUCORE_API cucore_status cucore_args_get_native(cucore_args *a, void ***kernel_params,
                                                void **buffer, size_t *buffer_size);

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__cplusplus)
/** CUCORE_ARG(args, x): pushes x with the setter its static type picks. cucore_devptr is
 * uint64_t, so it pushes as u64, which a pointer parameter accepts. Any pointer pushes as a
 * host pointer (cucore_args_push_host_ptr); other types do not compile. C11 only. */
#define CUCORE_ARG(a, x)                              \
  _Generic((x), _Bool                                 \
           : cucore_args_push_u8, char                \
           : cucore_args_push_i8, signed char         \
           : cucore_args_push_i8, unsigned char       \
           : cucore_args_push_u8, short               \
           : cucore_args_push_i16, unsigned short     \
           : cucore_args_push_u16, int                \
           : cucore_args_push_i32, unsigned int       \
           : cucore_args_push_u32, long               \
           : cucore_args_push_i64, unsigned long      \
           : cucore_args_push_u64, long long          \
           : cucore_args_push_i64, unsigned long long \
           : cucore_args_push_u64, float              \
           : cucore_args_push_f32, double             \
           : cucore_args_push_f64, default            \
           : cucore_args_push_host_ptr)((a), (x))
/** @cond CUCORE_INTERNAL */
/* Helpers of CUCORE_ARGS (one cucore_value per static type, counting and pasting its
 * arguments): not API, left out of the reference. */
#define CUCORE_VALUE_FN_(name, ctype, T, member)               \
  static inline cucore_value cucore_value_##name##_(ctype x) { \
    cucore_value r;                                            \
    r.type = T;                                                \
    r.v.u64 = 0;                                               \
    r.v.member = x;                                            \
    return r;                                                  \
  }
CUCORE_VALUE_FN_(i8, int8_t, CUCORE_VALUE_I8, i8)
CUCORE_VALUE_FN_(u8, uint8_t, CUCORE_VALUE_U8, u8)
CUCORE_VALUE_FN_(i16, int16_t, CUCORE_VALUE_I16, i16)
CUCORE_VALUE_FN_(u16, uint16_t, CUCORE_VALUE_U16, u16)
CUCORE_VALUE_FN_(i32, int32_t, CUCORE_VALUE_I32, i32)
CUCORE_VALUE_FN_(u32, uint32_t, CUCORE_VALUE_U32, u32)
CUCORE_VALUE_FN_(i64, int64_t, CUCORE_VALUE_I64, i64)
CUCORE_VALUE_FN_(u64, uint64_t, CUCORE_VALUE_U64, u64)
CUCORE_VALUE_FN_(f32, float, CUCORE_VALUE_F32, f32)
CUCORE_VALUE_FN_(f64, double, CUCORE_VALUE_F64, f64)
CUCORE_VALUE_FN_(host_ptr, const void *, CUCORE_VALUE_HOST_PTR, p)
#undef CUCORE_VALUE_FN_
#define CUCORE_VALUE_OF_(x)                        \
  _Generic((x), _Bool                              \
           : cucore_value_u8_, char                \
           : cucore_value_i8_, signed char         \
           : cucore_value_i8_, unsigned char       \
           : cucore_value_u8_, short               \
           : cucore_value_i16_, unsigned short     \
           : cucore_value_u16_, int                \
           : cucore_value_i32_, unsigned int       \
           : cucore_value_u32_, long               \
           : cucore_value_i64_, unsigned long      \
           : cucore_value_u64_, long long          \
           : cucore_value_i64_, unsigned long long \
           : cucore_value_u64_, float              \
           : cucore_value_f32_, double             \
           : cucore_value_f64_, default            \
           : cucore_value_host_ptr_)(x)
#define CUCORE_ARGS_N_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, N, \
                       ...)                                                                      \
  N
#define CUCORE_ARGS_N(...) \
  CUCORE_ARGS_N_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define CUCORE_ARGS_CAT_(a, b) a##b
#define CUCORE_ARGS_CAT(a, b) CUCORE_ARGS_CAT_(a, b)
#define CUCORE_ARGS_1(x) CUCORE_VALUE_OF_(x)
#define CUCORE_ARGS_2(x, ...) CUCORE_VALUE_OF_(x), CUCORE_ARGS_1(__VA_ARGS__)
#define CUCORE_ARGS_3(x, ...) CUCORE_VALUE_OF_(x), CUCORE_ARGS_2(__VA_ARGS__)
#define CUCORE_ARGS_4(x, ...) CUCORE_VALUE_OF_(x), CUCORE_ARGS_3(__VA_ARGS__)
#define CUCORE_ARGS_5(x, ...) CUCORE_VALUE_OF_(x), CUCORE_ARGS_4(__VA_ARGS__)
#define CUCORE_ARGS_6(x, ...) CUCORE_VALUE_OF_(x), CUCORE_ARGS_5(__VA_ARGS__)
#define CUCORE_ARGS_7(x, ...) CUCORE_VALUE_OF_(x), CUCORE_ARGS_6(__VA_ARGS__)
#define CUCORE_ARGS_8(x, ...) CUCORE_VALUE_OF_(x), CUCORE_ARGS_7(__VA_ARGS__)
#define CUCORE_ARGS_9(x, ...) CUCORE_VALUE_OF_(x), CUCORE_ARGS_8(__VA_ARGS__)
#define CUCORE_ARGS_10(x, ...) CUCORE_VALUE_OF_(x), CUCORE_ARGS_9(__VA_ARGS__)
#define CUCORE_ARGS_11(x, ...) CUCORE_VALUE_OF_(x), CUCORE_ARGS_10(__VA_ARGS__)
#define CUCORE_ARGS_12(x, ...) CUCORE_VALUE_OF_(x), CUCORE_ARGS_11(__VA_ARGS__)
#define CUCORE_ARGS_13(x, ...) CUCORE_VALUE_OF_(x), CUCORE_ARGS_12(__VA_ARGS__)
#define CUCORE_ARGS_14(x, ...) CUCORE_VALUE_OF_(x), CUCORE_ARGS_13(__VA_ARGS__)
#define CUCORE_ARGS_15(x, ...) CUCORE_VALUE_OF_(x), CUCORE_ARGS_14(__VA_ARGS__)
#define CUCORE_ARGS_16(x, ...) CUCORE_VALUE_OF_(x), CUCORE_ARGS_15(__VA_ARGS__)
/** @endcond */
/** CUCORE_ARGS(args, x, y, ...): the values by static type, given in one call
 * (cucore_args_set_values): resets `args`, sets up to 16 values and evaluates to
 * cucore_args_check(args): the first mistake, or a count that is off. Each value is evaluated
 * once. Takes 1 to 16 values; C11 only. */
#define CUCORE_ARGS(a, ...)                                                             \
  cucore_args_set_values((a),                                                           \
                         (const cucore_value[]){                                        \
                             CUCORE_ARGS_CAT(CUCORE_ARGS_,                              \
                                             CUCORE_ARGS_N(__VA_ARGS__))(__VA_ARGS__)}, \
                         CUCORE_ARGS_N(__VA_ARGS__))
#endif

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* Launches                                                                                   */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup launch Launches
 * Launch configurations, launches with pre-flight checks, host functions.
 * @{
 */

/** Launch attributes; the values equal CUlaunchAttributeID's. */
typedef enum cucore_launch_attr_id {
  CUCORE_LAUNCH_ACCESS_POLICY_WINDOW = 1,      /**< u.access_policy: L2 persistence window */
  CUCORE_LAUNCH_COOPERATIVE = 2,               /**< u.value 1: grid-wide synchronisation */
  CUCORE_LAUNCH_SYNCHRONIZATION_POLICY = 3,    /**< u.value: CUsynchronizationPolicy (some
                                                       drivers take it on streams only) */
  CUCORE_LAUNCH_CLUSTER_DIMENSION = 4,         /**< u.dim: blocks per cluster */
  CUCORE_LAUNCH_CLUSTER_SCHEDULING_POLICY = 5, /**< u.value: CUclusterSchedulingPolicy */
  CUCORE_LAUNCH_PROGRAMMATIC_STREAM_SERIALIZATION = 6, /**< u.value 1: programmatic dependent
                                                            launch */
  CUCORE_LAUNCH_PROGRAMMATIC_EVENT = 7,            /**< u.event: event triggered by the kernel */
  CUCORE_LAUNCH_PRIORITY = 8,                      /**< u.value: the launch's priority */
  CUCORE_LAUNCH_MEM_SYNC_DOMAIN_MAP = 9,           /**< u.domain_map */
  CUCORE_LAUNCH_MEM_SYNC_DOMAIN = 10,              /**< u.value: CUlaunchMemSyncDomain */
  CUCORE_LAUNCH_PREFERRED_CLUSTER_DIMENSION = 11,  /**< u.dim: preferred blocks per cluster */
  CUCORE_LAUNCH_COMPLETION_EVENT = 12,             /**< u.event: recorded when blocks finish */
  CUCORE_LAUNCH_DEVICE_UPDATABLE_KERNEL_NODE = 13, /**< u.value; graphs only (a launch refuses
                                                        it) */
  CUCORE_LAUNCH_PREFERRED_SHARED_MEMORY_CARVEOUT = 14, /**< u.value: percent */
  CUCORE_LAUNCH_NVLINK_UTIL_CENTRIC_SCHEDULING = 16    /**< u.value: 1 to turn it on */
} cucore_launch_attr_id;

/** One launch attribute. Fill the member its id names. */
typedef struct cucore_launch_attr {
  cucore_launch_attr_id id; /**< which attribute; names the member of `u` to fill */
  /** The attribute's value. */
  union {
    int value;       /**< COOPERATIVE, SYNCHRONIZATION_POLICY, CLUSTER_SCHEDULING_POLICY,
                  PROGRAMMATIC_STREAM_SERIALIZATION, PRIORITY, MEM_SYNC_DOMAIN,
                  DEVICE_UPDATABLE_KERNEL_NODE (graphs only), PREFERRED_SHARED_MEMORY_CARVEOUT,
                  NVLINK_UTIL_CENTRIC_SCHEDULING */
    unsigned dim[3]; /**< CLUSTER_DIMENSION, PREFERRED_CLUSTER_DIMENSION */
    /** ACCESS_POLICY_WINDOW */
    struct {
      cucore_devptr base; /**< start of the window */
      size_t bytes;       /**< size of the window */
      float hit_ratio;    /**< share of accesses given hit_property, 0..1 */
      /** @{ */
      int hit_property, miss_property; /**< 0 normal, 1 streaming, 2 persisting */
      /** @} */
    } access_policy;
    struct {
      cucore_event *event;        /**< an event of the launch's device (borrowed) */
      int flags;                  /**< event record flags (not CU_EVENT_RECORD_EXTERNAL) */
      int trigger_at_block_start; /**< PROGRAMMATIC_EVENT only */
    } event;                      /**< PROGRAMMATIC_EVENT, COMPLETION_EVENT */
    /** MEM_SYNC_DOMAIN_MAP */
    struct {
      /** @{ */
      unsigned char default_domain, remote_domain; /**< domains of default and remote
                                                        accesses */
      /** @} */
    } domain_map;
    /** The value as the driver lays it out (CUlaunchAttributeValue's 64 bytes), for attribute
     * ids newer than cucore: copied to the driver as given when the loaded driver is newer
     * than the headers cucore was built with. */
    unsigned char raw[64];
  } u;
} cucore_launch_attr;

/** Most attributes one launch configuration holds. */
#define CUCORE_MAX_LAUNCH_ATTRS 16

/** Where and how big: grid and block (1-3 D; unused dimensions 0 or 1), dynamic shared memory,
 * the stream (required: it names the device; cucore_stream_default gives stream 0), and
 * attributes. Zero-initialise, then fill. A plain value: not synchronised. */
typedef struct cucore_launch_config {
  unsigned grid[3];      /**< blocks per grid, x y z (x at least 1) */
  unsigned block[3];     /**< threads per block, x y z (x at least 1) */
  unsigned shared_bytes; /**< dynamic shared memory per block */
  cucore_stream *stream; /**< the stream (and so the device) to launch on */
  int attr_count;        /**< attributes used in `attrs`, 0..CUCORE_MAX_LAUNCH_ATTRS */
  cucore_launch_attr attrs[CUCORE_MAX_LAUNCH_ATTRS]; /**< set with cucore_launch_config_set() */
} cucore_launch_config;

/** Sets an attribute, replacing one with the same id. CUCORE_INVALID_ARGUMENT when full or
 * the id is unknown (or attr_count is corrupt). */
CUCORE_API cucore_status cucore_launch_config_set(cucore_launch_config *cfg,
                                                  const cucore_launch_attr *attr);
/** Shorthands for the common attributes: a cluster of x*y*z blocks
 * (CUCORE_LAUNCH_CLUSTER_DIMENSION), as cucore_launch_config_set(). */
CUCORE_API cucore_status cucore_launch_config_cluster(cucore_launch_config *cfg, unsigned x,
                                                      unsigned y, unsigned z);
/** A cooperative launch when `on` is not 0 (CUCORE_LAUNCH_COOPERATIVE), as
 * cucore_launch_config_set(). */
CUCORE_API cucore_status cucore_launch_config_cooperative(cucore_launch_config *cfg, int on);
/** The launch's priority (CUCORE_LAUNCH_PRIORITY), as cucore_launch_config_set(). */
CUCORE_API cucore_status cucore_launch_config_priority(cucore_launch_config *cfg, int priority);
/** Programmatic dependent launch: this launch may start before the previous kernel on the
 * stream finishes (it waits in cudaGridDependencySynchronize). As cucore_launch_config_set(). */
CUCORE_API cucore_status cucore_launch_config_pdl(cucore_launch_config *cfg, int on);

/**
 * Sets a stream attribute (cuStreamSetAttribute): the launch attributes that belong to a
 * stream -- CUCORE_LAUNCH_ACCESS_POLICY_WINDOW, _SYNCHRONIZATION_POLICY, _PRIORITY,
 * _MEM_SYNC_DOMAIN_MAP and _MEM_SYNC_DOMAIN -- apply to the work queued on `s` afterwards.
 * Errors: CUCORE_INVALID_ARGUMENT for another attribute, a value out of range (hit ratio
 * outside 0..1, a priority outside the device's range) or a default stream (legacy or
 * per-thread), which has no attributes of its own; CUCORE_DRIVER_TOO_OLD before CUDA 11.0.
 */
CUCORE_API cucore_status cucore_stream_set_attribute(cucore_stream *s,
                                                     const cucore_launch_attr *attr);
/** Reads a stream attribute (one of those cucore_stream_set_attribute takes) into *out. */
CUCORE_API cucore_status cucore_stream_get_attribute(cucore_stream *s, cucore_launch_attr_id id,
                                                     cucore_launch_attr *out);

/** Launches `k` with `args` after the pre-flight checks: arguments complete and valid; block
 * non-zero and within the kernel's max threads; grid and block within the device's limits;
 * dynamic shared memory within the opt-in maximum after static memory (the kernel's
 * MAX_DYNAMIC_SHARED_SIZE_BYTES is raised when needed, never lowered); cluster dimensions
 * valid and dividing the grid; cooperative grids within max active blocks x SMs. Uses
 * cuLaunchKernel when no attribute is set, cuLaunchKernelEx otherwise. Returns once the launch
 * is queued; the values in `args` are taken at the call, so `args` may change afterwards.
 * The errors of cucore_args_check() (CUCORE_ARG_*) come first.
 * @retval CUCORE_INVALID_ARGUMENT `args` was made for another kernel, or cfg->stream is NULL.
 * @retval CUCORE_LAUNCH_CONFIG a pre-flight check failed; the message has the arithmetic.
 * @retval CUCORE_LAUNCH_OUT_OF_RESOURCES the driver found too few registers or shared memory.
 * @retval CUCORE_NO_DEVICE the kernel was looked up without a GPU. */
CUCORE_API cucore_status cucore_launch(cucore_kernel *k, const cucore_launch_config *cfg,
                                       cucore_args *args);
/** Cooperative launch through cuLaunchCooperativeKernel (grid-wide sync allowed). Checked as
 * cucore_launch(); `cfg` may carry no attributes.
 * @retval CUCORE_INVALID_ARGUMENT `cfg` has attributes (use cucore_launch with
 *         CUCORE_LAUNCH_COOPERATIVE instead).
 * @retval CUCORE_LAUNCH_CONFIG the device has no cooperative launches, or the grid cannot be
 *         co-resident. */
CUCORE_API cucore_status cucore_launch_cooperative(cucore_kernel *k,
                                                   const cucore_launch_config *cfg,
                                                   cucore_args *args);
/** Queues a host function on a stream (cuLaunchHostFunc): it runs after the work before it and
 * before the work after it. It must not call CUDA. It runs on a driver thread, with `user`. */
CUCORE_API cucore_status cucore_launch_host_func(cucore_stream *s, void (*fn)(void *user),
                                                 void *user);

/* ---- Launch checks without a GPU ---- */

/** Flags of cucore_kernel_check_launch_offline(), combined with `|`. */
enum {
  CUCORE_CHECK_DEFAULT = 0,             /**< the portable limits */
  CUCORE_CHECK_NON_PORTABLE_CLUSTER = 1 /**< allow clusters of up to 16 blocks on sm_90 and
                                                newer, as a kernel with
                                                non_portable_cluster_size_allowed set may use */
};

/**
 * Checks a launch configuration against what the code records, with no GPU: the checks of
 * cucore_launch() that need no device, with the same messages. For architecture `arch` (e.g.
 * 90; 0: the arch the object's code is for, or the PTX's .target) it checks: block and grid
 * dimensions against the architecture's limits; the block against the kernel's
 * `__launch_bounds__` (.maxntid) and its required block size (.reqntid); the grid against the
 * compile-time cluster shape (`__cluster_dims__`) or `cfg`'s cluster dimension (a multiple in
 * each dimension; at most 8 blocks, or 16 with CUCORE_CHECK_NON_PORTABLE_CLUSTER; clusters
 * need sm_90); a kernel that must be launched as clusters; and static + dynamic shared memory
 * against the architecture's opt-in maximum per block. Not checked: registers, and whether a
 * kernel synchronises its whole grid (a cubin marks block-level cooperative groups the same
 * way). cfg->stream is not used (it may be NULL). Static shared memory comes from a cubin;
 * PTX does not record it, so only its declared bounds are checked.
 * @retval CUCORE_LAUNCH_CONFIG the launch can never run; the message has the arithmetic.
 * @retval CUCORE_NOT_SUPPORTED `arch` is not in the architecture table.
 * @retval CUCORE_INVALID_BINARY, CUCORE_NO_DEVICE the code cannot be read offline (LTO-IR).
 */
CUCORE_API cucore_status cucore_kernel_check_launch_offline(cucore_kernel *k,
                                                            const cucore_launch_config *cfg,
                                                            int arch, unsigned flags);

/** @} */

/* ==== SECTION: occupancy model (host-only) ==== */
/**
 * @defgroup occupancy_model Occupancy model (host-only)
 *
 * A host-only model of the driver's occupancy answers (no GPU, no driver): from a kernel's
 * resources and an architecture's limits, how many blocks of a given size stay resident on one
 * SM, which limit binds, the best block size, and the dynamic shared memory a block may use.
 * The arithmetic follows the CUDA toolkit's documented host calculator (cuda_occupancy.h); the
 * limits come from one table per compute capability (7.0 to 12.1). The driver's
 * cuOccupancy* functions remain the truth on a real GPU.
 * Queries allocate nothing and take no locks (tens of nanoseconds each); they are thread-safe.
 * @{
 */

/** Most shared-memory carveout sizes an architecture can have. */
#define CUCORE_ARCH_MAX_CARVEOUTS 12

/** The limits of one architecture (one row of cucore's table). All sizes are bytes, all
 * register counts are 32-bit registers. A caller may adjust a copy (for example to a real
 * device: cucore_arch_limits_from_device) and pass it to the model; the queries refuse
 * (CUCORE_INVALID_ARGUMENT, naming the field) a copy that contradicts itself: fields out of
 * 0..2^20, granularities and warp size not powers of two, max_threads_per_sm not
 * max_warps_per_sm * warp_size, carveouts not ascending or not ending at shared_per_sm. */
typedef struct cucore_arch_limits {
  int arch;                      /**< cc_major*10 + cc_minor, e.g.\ 90 */
  const char *name;              /**< "sm_90" (static storage) */
  const char *family;            /**< "Hopper" (static storage) */
  int warp_size;                 /**< threads per warp (32) */
  int max_threads_per_block;     /**< 1024 */
  int max_warps_per_sm;          /**< resident warps per SM */
  int max_threads_per_sm;        /**< max_warps_per_sm * warp_size */
  int max_blocks_per_sm;         /**< resident blocks per SM */
  int regs_per_sm;               /**< register file per SM (64 K) */
  int max_regs_per_block;        /**< 64 K */
  int max_regs_per_thread;       /**< 255 */
  int reg_alloc_unit;            /**< a warp's registers are allocated in units of this (256) */
  int warp_alloc_granularity;    /**< register sub-partitions per SM: a block's warps are
                                     rounded up to this for the per-block register check (4) */
  int shared_per_sm;             /**< largest shared-memory carveout of an SM */
  int shared_per_block;          /**< per-block limit without opt-in (48 KiB) */
  int shared_per_block_optin;    /**< per-block limit after opting in (dynamic memory only) */
  int reserved_shared_per_block; /**< reserved by the driver for each block (1 KiB from 8.0) */
  int shared_alloc_granularity;  /**< a block's shared memory is rounded up to this */
  int carveout_count;            /**< entries in carveout_bytes */
  int carveout_bytes[CUCORE_ARCH_MAX_CARVEOUTS]; /**< the legal shared-memory sizes of an SM
                                     (the L1/shared splits), ascending; the last is
                                     shared_per_sm */
  int max_barriers_per_block;                    /**< named barriers a block may use (16) */
  int barriers_per_sm;       /**< named barriers an SM holds for resident blocks */
  int barrier_limit_applies; /**< 1 when the driver limits occupancy by barriers (9.0+) */
  int sm_count;              /**< SMs of the chip: 0 in the table (it is chip-specific);
                                     set from cucore_device_props.sm_count for grid sizes */
} cucore_arch_limits;

/** Fills *out with the table row of architecture `arch` (e.g.\ 90 for sm_90, 120 for sm_120).
 * An architecture not in the table is CUCORE_NOT_SUPPORTED naming the known ones.
 * @retval CUCORE_NOT_SUPPORTED `arch` is not in the table (then *out is zeroed). */
CUCORE_API cucore_status cucore_arch_get_limits(int arch, cucore_arch_limits *out);
/** The architectures in the table, ascending: copies up to `capacity` of them into `archs`
 * (which may be NULL when capacity is 0) and sets *count to how many there are. */
CUCORE_API cucore_status cucore_arch_get_list(int *archs, int capacity, int *count);
/** The table row of the device's architecture, with every limit the device reports (SM count,
 * warps, blocks, registers, shared memory per SM and per block, the reservation) taken from
 * the device; carveouts above the device's shared memory per SM are dropped.
 * @retval CUCORE_NOT_SUPPORTED the device's architecture is not in the table. */
CUCORE_API cucore_status cucore_arch_limits_from_device(const cucore_device_props *props,
                                                        cucore_arch_limits *out);

/** What a kernel uses, as the model sees it. Start from CUCORE_KERNEL_RESOURCES_INIT: a zero
 * carveout_percent is a real preference (maximum L1), not "unset". */
typedef struct cucore_kernel_resources {
  int registers;                /**< per thread (CU_FUNC_ATTRIBUTE_NUM_REGS), 0..255 */
  int static_shared_bytes;      /**< CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES */
  int max_threads_per_block;    /**< the kernel's own limit
                                   (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, e.g.\ from
                                   `__launch_bounds__`); 0 = the architecture's */
  int barriers;                 /**< named barriers the kernel uses (0..16); -1 = unknown, taken
                                   as 1 (barrier 0, __syncthreads) */
  int carveout_percent;         /**< CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: -1 = no
                                   preference, else 0 (max L1) .. 100 (max shared). A legacy
                                   cache config maps as cuda_occupancy.h maps it: PREFER_SHARED
                                   100, PREFER_L1 0, PREFER_EQUAL 50, PREFER_NONE -1 */
  int max_dynamic_shared_bytes; /**< CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES; 0 = raised as
                                   needed up to the opt-in maximum (what cucore's launch does) */
} cucore_kernel_resources;

/** Initialiser of cucore_kernel_resources: nothing used, barriers unknown (-1), no carveout
 * preference (-1), dynamic shared memory raised as needed (0). */
#define CUCORE_KERNEL_RESOURCES_INIT \
  { 0, 0, 0, -1, -1, 0 }

/** Flags of the model queries (the values of the driver's CU_OCCUPANCY_* flags). */
enum {
  CUCORE_OCCUPANCY_DEFAULT = 0, /**< the default answer */
  /** CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE: assume partitioned global caching stays on. Only
   * sm_52 and 6.x have that caching, so on every architecture in the table the answer is the
   * same with or without the flag. */
  CUCORE_OCCUPANCY_DISABLE_CACHING_OVERRIDE = 1
};

/** The resource that limits how many blocks stay resident on an SM. */
typedef enum cucore_occupancy_limit {
  CUCORE_OCCUPANCY_LIMIT_WARPS = 0,     /**< warp slots of the SM */
  CUCORE_OCCUPANCY_LIMIT_REGISTERS,     /**< the register file */
  CUCORE_OCCUPANCY_LIMIT_SHARED_MEMORY, /**< the shared-memory carveout */
  CUCORE_OCCUPANCY_LIMIT_BLOCKS,        /**< resident blocks per SM */
  CUCORE_OCCUPANCY_LIMIT_BARRIERS,      /**< named barriers of the SM */
  CUCORE_OCCUPANCY_LIMIT_COUNT          /**< the number of limits */
} cucore_occupancy_limit;

/** "warps", "registers", "shared_memory", "blocks" or "barriers"; "unknown" otherwise. Never
 * NULL. */
CUCORE_API const char *cucore_occupancy_limit_name(cucore_occupancy_limit limit);

/** One occupancy answer. The blocks_limit_* fields are the blocks per SM each resource alone
 * allows (INT_MAX when it sets no limit, e.g.\ a kernel that uses no registers). */
typedef struct cucore_occupancy_result {
  int active_blocks_per_sm;     /**< the answer: min of the blocks_limit_* below */
  int active_warps_per_sm;      /**< active_blocks_per_sm * warps_per_block */
  double occupancy;             /**< active warps / max warps per SM, 0..1 */
  cucore_occupancy_limit limit; /**< the binding limit; the first in enum order when several bind */
  unsigned limiting_mask;       /**< bit (1u << limit) set for every limit that binds */
  int blocks_limit_warps;       /**< blocks the warp slots allow */
  int blocks_limit_registers;   /**< blocks the register file allows */
  int blocks_limit_shared;      /**< blocks the shared-memory carveout allows */
  int blocks_limit_blocks;      /**< blocks the resident-block limit allows */
  int blocks_limit_barriers;    /**< blocks the named barriers allow */
  int warps_per_block;          /**< ceil(block size / warp size) */
  int registers_per_block;      /**< registers allocated to one block */
  int shared_per_block;         /**< shared memory allocated to one block: static + dynamic +
                                   reserved, rounded up to the allocation granularity */
  int shared_carveout_bytes;    /**< the SM's shared-memory size (carveout) the answer assumes:
                                   with no preference, the smallest carveout that keeps the
                                   answer (the driver's choice); otherwise the preferred
                                   carveout, or the smallest that fits one block if that is
                                   larger */
} cucore_occupancy_result;

/** Max active blocks per SM of a kernel with resources `res` on `limits`, for blocks of
 * `block_size` threads using `dynamic_shared_bytes` of dynamic shared memory
 * (cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags). Launches that can never run are
 * failures whose message has the numbers: CUCORE_LAUNCH_CONFIG for a block size of 0 or above
 * the kernel's or the architecture's limit, or dynamic memory above the kernel's
 * max_dynamic_shared_bytes; CUCORE_LAUNCH_OUT_OF_RESOURCES for a block whose registers or
 * shared memory exceed the per-block limits; CUCORE_INVALID_ARGUMENT for resources outside
 * their ranges. On success active_blocks_per_sm is at least 1. When the launch can never run,
 * *out still holds the per-limit counts, 0 for the limit that cannot be met (and `limit` names
 * it); when an input is invalid, *out is zeroed.
 * @retval CUCORE_LAUNCH_CONFIG the block size or the dynamic memory is not allowed.
 * @retval CUCORE_LAUNCH_OUT_OF_RESOURCES a block needs too many registers or too much shared
 *         memory. */
CUCORE_API cucore_status cucore_occupancy_model_blocks(const cucore_arch_limits *limits,
                                                       const cucore_kernel_resources *res,
                                                       int block_size, size_t dynamic_shared_bytes,
                                                       unsigned flags,
                                                       cucore_occupancy_result *out);

/** Dynamic shared memory a block of `block_size` threads needs, for
 * cucore_occupancy_model_best_block (called on the calling thread, once per size tried). */
typedef size_t (*cucore_block_to_shared_fn)(int block_size, void *userdata);

/** The block size with the most active threads per SM. */
typedef struct cucore_occupancy_best {
  int block_size;               /**< the suggested block size */
  int blocks_per_sm;            /**< active blocks per SM at that size */
  int min_grid_size;            /**< blocks_per_sm * limits->sm_count (0 when sm_count is 0) */
  double occupancy;             /**< active warps / max warps per SM at that size */
  size_t dynamic_shared_bytes;  /**< the dynamic shared memory used at that size */
  cucore_occupancy_limit limit; /**< what binds at that size */
} cucore_occupancy_best;

/** The block size giving the most active threads per SM, tried from the largest allowed size
 * down in steps of the warp size (the largest wins ties; stops at full occupancy), like
 * cuOccupancyMaxPotentialBlockSizeWithFlags. Dynamic shared memory is `dynamic_shared_bytes`
 * for every size, or `shared_fn(size, userdata)` when shared_fn is not NULL. Sizes that
 * cannot run are skipped. `block_size_limit` 0 means the kernel's (or architecture's) limit.
 * CUCORE_LAUNCH_OUT_OF_RESOURCES, naming why, when no size can run.
 * @retval CUCORE_LAUNCH_OUT_OF_RESOURCES no block size can run (or CUCORE_LAUNCH_CONFIG, as
 *         cucore_occupancy_model_blocks() would say for the last size tried). */
CUCORE_API cucore_status cucore_occupancy_model_best_block(
    const cucore_arch_limits *limits, const cucore_kernel_resources *res,
    size_t dynamic_shared_bytes, cucore_block_to_shared_fn shared_fn, void *userdata,
    int block_size_limit, unsigned flags, cucore_occupancy_best *out);

/** The most dynamic shared memory a block of `block_size` threads may use so that
 * `blocks_per_sm` blocks stay resident on one SM (cuOccupancyAvailableDynamicSMemPerBlock): the
 * largest size for which cucore_occupancy_model_blocks answers at least blocks_per_sm.
 * CUCORE_LAUNCH_OUT_OF_RESOURCES, with the limit that stops it, when even no dynamic memory
 * leaves room for that many blocks.
 * @retval CUCORE_LAUNCH_OUT_OF_RESOURCES not even without dynamic memory do that many fit.
 * @retval CUCORE_LAUNCH_CONFIG the block size is not allowed. */
CUCORE_API cucore_status cucore_occupancy_model_available_shared(const cucore_arch_limits *limits,
                                                                 const cucore_kernel_resources *res,
                                                                 int block_size, int blocks_per_sm,
                                                                 size_t *bytes);

/** Max active clusters (cuOccupancyMaxActiveClusters). Always refused by the host model:
 * CUCORE_NOT_SUPPORTED, because how many clusters fit depends on how the chip groups its SMs
 * into GPCs (and on which SMs are enabled), which no table per architecture can tell. Use
 * the driver-backed query on a device. *max_clusters is set to 0. Invalid inputs are
 * CUCORE_INVALID_ARGUMENT first.
 * @retval CUCORE_NOT_SUPPORTED always, for valid inputs. */
CUCORE_API cucore_status cucore_occupancy_model_clusters(const cucore_arch_limits *limits,
                                                         const cucore_kernel_resources *res,
                                                         int block_size, int cluster_size,
                                                         size_t dynamic_shared_bytes,
                                                         int *max_clusters);
/** @} */
/* ==== END SECTION: occupancy model ==== */

/* ------------------------------------------------------------------------------------------ */
/* Occupancy on the GPU: kernel + launch configuration in, the driver's answers out            */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup occupancy_gpu Occupancy on the GPU
 * Kernel + launch configuration in, the driver's answers out. The inputs are checked first;
 * a kernel looked up without a GPU is CUCORE_NO_DEVICE.
 * @{
 */

/** Max active blocks per SM for `k` launched as `cfg` (block, shared_bytes; the device is
 * cfg->stream's) (cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags). `flags`:
 * CUCORE_OCCUPANCY_DEFAULT or CUCORE_OCCUPANCY_DISABLE_CACHING_OVERRIDE. A block of 0 threads
 * or above the kernel's limit, or shared memory above the device's, is refused first. As a
 * launch would, it raises the kernel's MAX_DYNAMIC_SHARED_SIZE_BYTES when needed.
 * @retval CUCORE_LAUNCH_CONFIG the block or the shared memory can never run.
 * @retval CUCORE_INVALID_ARGUMENT cfg->stream is NULL, or unknown flags. */
CUCORE_API cucore_status cucore_occupancy_max_active_blocks(cucore_kernel *k,
                                                            const cucore_launch_config *cfg,
                                                            unsigned flags, int *blocks_per_sm);
/** Best block size for maximum occupancy on `dev` (cuOccupancyMaxPotentialBlockSizeWithFlags):
 * fixed `dynamic_shared_bytes`, or `shared_fn(block_size, user)` bytes when shared_fn is not
 * NULL. `block_size_limit` 0 means the kernel's limit. *min_grid is the grid size that fills
 * the device at that occupancy. `shared_fn` is called on the calling thread during the call
 * and must not call this function. Raises the kernel's MAX_DYNAMIC_SHARED_SIZE_BYTES as a
 * launch would (to the device's maximum with shared_fn).
 * @retval CUCORE_LAUNCH_CONFIG `dynamic_shared_bytes` can never fit.
 * @retval CUCORE_INVALID_ARGUMENT `block_size_limit` outside 0 .. the kernel's limit. */
CUCORE_API cucore_status cucore_occupancy_best_block_size(
    cucore_kernel *k, cucore_device *dev, size_t dynamic_shared_bytes,
    size_t (*shared_fn)(int block_size, void *user), void *user, int block_size_limit,
    unsigned flags, int *min_grid, int *block_size);
/** Dynamic shared memory available per block when `blocks_per_sm` blocks of `block_size`
 * threads share an SM (cuOccupancyAvailableDynamicSMemPerBlock).
 * @retval CUCORE_LAUNCH_CONFIG `block_size` outside 1 .. the kernel's limit.
 * @retval CUCORE_INVALID_ARGUMENT `blocks_per_sm` below 1. */
CUCORE_API cucore_status cucore_occupancy_available_dynamic_shared(cucore_kernel *k,
                                                                   cucore_device *dev,
                                                                   int blocks_per_sm,
                                                                   int block_size, size_t *bytes);
/** Max clusters that can be co-resident for `cfg`, which must give a cluster dimension (or the
 * kernel a compile-time one) (cuOccupancyMaxActiveClusters).
 * @retval CUCORE_LAUNCH_CONFIG no cluster dimension, or a block outside the kernel's range.
 * @retval CUCORE_NOT_SUPPORTED the device has no thread block clusters. */
CUCORE_API cucore_status cucore_occupancy_max_active_clusters(cucore_kernel *k,
                                                              const cucore_launch_config *cfg,
                                                              int *clusters);
/** The largest cluster size `cfg`'s grid and block could use
 * (cuOccupancyMaxPotentialClusterSize).
 * @retval CUCORE_LAUNCH_CONFIG a block outside the kernel's range.
 * @retval CUCORE_NOT_SUPPORTED the device has no thread block clusters. */
CUCORE_API cucore_status cucore_occupancy_max_cluster_size(cucore_kernel *k,
                                                           const cucore_launch_config *cfg,
                                                           int *cluster_size);
/** The kernel's resources on `dev` (registers, static shared memory, max threads, carveout)
 * and the device's limits, ready for the host model, so the driver's answer can be explained
 * (which limit binds). Named barriers come from the cubin when it can be read (else -1);
 * max_dynamic_shared_bytes is 0 (raised as needed, as cucore's launch does).
 * @retval CUCORE_NOT_SUPPORTED the device's architecture is not in the model's table. */
CUCORE_API cucore_status cucore_occupancy_inputs(cucore_kernel *k, cucore_device *dev,
                                                 cucore_arch_limits *limits,
                                                 cucore_kernel_resources *resources);

/** @} */

#ifdef __cplusplus
}
#endif
#endif /* CUCORE_PART_KERNELS_H */
