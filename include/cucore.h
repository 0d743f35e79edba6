/**
 * @file
 * @brief The public header of cucore: one include gives every part (include/cucore/).
 *
 * @mainpage cucore API reference
 *
 * cucore makes CUDA kernels easy and safe to use from C: compile CUDA C++, PTX or NVVM IR at
 * run time, load the code, inspect kernels, compute occupancy, and launch with arguments that
 * are checked against the kernel before the GPU sees them. Everything is declared in
 * `include/cucore.h` and the parts it includes; its sections are listed under Modules.
 *
 * @par Parts (include/cucore/, in the order of the data path; each compiles alone)
 * - `cucore/base.h`: version and export macros, status codes and the last error, reading
 *   files, comparing outputs, phase timings.
 * - `cucore/devices.h`: versions and loaded libraries, the driver's own log, devices, system
 *   facts (NVML), streams and events, events shared between processes, green contexts,
 *   checkpointing another process.
 * - `cucore/memory.h`: allocations, memory facts and checks, device memory pools, IPC, pinned
 *   host pools, managed memory (host NUMA nodes, discard, batches), copies and fills,
 *   virtual memory, arrays, textures and surfaces, mipmapped arrays, tensor maps, DLPack.
 * - `cucore/code.h`: code types and parameter descriptions, compile options, Program,
 *   Linker, the compile cache, ObjectCode and module globals.
 * - `cucore/kernels.h`: kernels, kernel arguments, launches, the occupancy model (host-only),
 *   occupancy on the GPU.
 * - `cucore/binary.h`: binary inspection (the offline reader; after kernels.h, whose
 *   cucore_kernel_resources it gives).
 * - `cucore/graphs.h`: CUDA graphs, graph memory nodes.
 * - `cucore/tune.h`: autotuning.
 *
 * @par Conventions (they hold for every declaration below)
 * - Every function returns a cucore_status. CUCORE_OK (0) is success. On failure a message
 *   naming the call, the object and the limit is kept for the calling thread:
 *   cucore_last_error(). The first error of a failing call is the one kept. Like `errno`, a
 *   call that succeeds does not clear it (cucore_clear_error() does).
 * - A status carries the cucore code in its low 8 bits; when the failure came from the driver,
 *   NVRTC, nvJitLink, libNVVM or the C library, the original code is kept in the high bits
 *   (see CUCORE_CODE, cucore_status_source, cucore_status_native).
 * - Handles are opaque. Constructors take an out-parameter that is set to NULL on failure.
 *   Destroying NULL is a no-op. Inputs are copied unless a declaration says otherwise.
 *   Pointers handed out (names, logs, code) are borrowed: owned by the handle named, valid
 *   while it lives unless a declaration says less.
 * - Nothing is linked against the CUDA driver or toolkit: they are loaded at run time, and a
 *   missing piece is a status with a message, never an abort.
 *
 * @par Errors
 * Each function lists (as "Return values") the codes it returns beyond these, which any
 * function may return: CUCORE_INVALID_ARGUMENT (a NULL handle or out-parameter, an unknown
 * enum value or flag, a value out of range: the message names it) and
 * CUCORE_HOST_OUT_OF_MEMORY. A function that calls the driver may also return what loading it
 * gives (CUCORE_DRIVER_NOT_FOUND, CUCORE_DRIVER_STUB, CUCORE_DRIVER_TOO_OLD, CUCORE_NO_DEVICE)
 * and the code a failed driver call maps to (CUCORE_DRIVER_ERROR unless a closer one fits;
 * CUCORE_KERNEL_FAULT once a kernel has faulted on the device). Version gates: each driver
 * entry point is resolved with the CUDA version whose ABI it has; where the loaded driver is
 * older than an entry point a call needs, the call returns CUCORE_DRIVER_TOO_OLD (cucore's
 * status for that, never a crash) with a message naming the entry point and the CUDA version
 * it needs. One that runs NVRTC,
 * nvJitLink or libNVVM may return CUCORE_NVRTC_NOT_FOUND, CUCORE_NVJITLINK_NOT_FOUND,
 * CUCORE_NVVM_NOT_FOUND, CUCORE_TOOLKIT_TOO_OLD and CUCORE_NVRTC_ERROR,
 * CUCORE_NVJITLINK_ERROR, CUCORE_NVVM_ERROR.
 *
 * @par Misuse (best effort, like SQLITE_MISUSE)
 * Every function that takes a handle, its destructor included, may also return CUCORE_MISUSE:
 * the handle was destroyed already (a second destroy, a call after destroy), is a handle of
 * another type, or was not made by cucore. The message names the call, the type expected and
 * what was found; nothing is freed or changed. Each handle carries a magic word checked on
 * entry, and a destroyed handle's memory is held in a small quarantine (the last 256 destroyed
 * handles, freed at exit) so the check reads no freed memory. Detection is best effort: using
 * a handle destroyed long ago (its memory freed and reused), a pointer to random memory, or a
 * destroy racing another call on the same handle stay undefined behaviour. Shared handles are
 * dead once no one holds them: a cucore_object lives while a kernel, the compile cache or
 * another handle received for it holds a reference, so destroying it more often than it was
 * received is caught only once nothing holds it (before that, it drops another holder's
 * reference: undefined). A kernel, event or graph is dead to the caller at its destroy even
 * while a graph or an executable graph still uses it. Handles owned by another one (a body
 * graph of a conditional node, a graph node, the default streams of a device) are not
 * destroyed by the caller; a body graph is caught once its graph is destroyed. cucore_device
 * (opened once per ordinal and kept) and the value types (launch configurations, tensor
 * maps) carry no magic word.
 *
 * @par Thread safety
 * cucore may be called from many threads at once. The driver and each toolkit library are
 * loaded once, under a lock; the last error is per thread. A handle's destructor must never
 * race with another call on that handle. Per type:
 * - cucore_device, cucore_stream, cucore_event, device and pinned memory: may be shared; their
 *   calls may run concurrently. Closing a device must not race with any use of it or of what
 *   was made on it. A call that reaches the driver makes the device's primary context current
 *   on the calling thread.
 * - cucore_options, cucore_program, cucore_linker, cucore_args, cucore_launch_config: not
 *   synchronised: calls on one of them must not run concurrently (cucore_options_canonical
 *   caches its text in the set, so it counts as a change). Constructors only read the options
 *   or kernel they take, so one option set may go to several constructors at once while
 *   nothing changes it. Distinct handles are independent.
 * - cucore_object: may be shared. References are counted atomically; the lazy load and the
 *   kernel list are built under the object's lock. Two compiles with the same cache key may
 *   hand out the same object: each handle received is a reference of its own.
 * - cucore_kernel: may be shared: lookups, queries, attribute calls and launches may run
 *   concurrently (per-device facts are read once, under the kernel's lock).
 *   cucore_kernel_declare_signature changes the layout without a lock: it must not race with
 *   any other use of the kernel or of an argument list made for it. An argument list is used
 *   by one thread at a time, including the launch that reads it.
 * - cucore_binary: read-only once opened: concurrent calls are safe, except
 *   cucore_binary_attach_ptx, which must not race with any other call on it.
 * - The status functions, code-type detection, the option table and the host occupancy model
 *   are pure. The compile cache's settings, statistics and directory are process-wide and
 *   locked; many processes may share one directory.
 *
 * @par For contributors
 * Every public declaration (function, type, field, enumerator, macro) needs a Doxygen
 * comment: a block opened with two stars before it, or one opened with two stars and `<`
 * after a field or enumerator. Say what it does, who owns what, the codes it returns beyond
 * the ones above, and thread safety where it differs from this list. Fields declared together
 * (`int a, b;`) share one comment inside a member group (`@{` ... `@}`), as cc_major and
 * cc_minor do. `make docs` builds this reference (build/docs/html); the CTest test `api_docs`
 * fails naming any declaration without one.
 * A new declaration goes into the part that holds its section (the list above), after the
 * types it uses; a new part is included here and by the parts that use it.
 */
#ifndef CUCORE_H
#define CUCORE_H

/* The parts, in the order of the data path (the list above). */
#include "cucore/base.h"
#include "cucore/devices.h"
#include "cucore/memory.h"
#include "cucore/code.h"
#include "cucore/kernels.h"
#include "cucore/binary.h"
#include "cucore/graphs.h"
#include "cucore/tune.h"

#endif /* CUCORE_H */
