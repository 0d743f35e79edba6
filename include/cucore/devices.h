/**
 * @file
 * @brief The loaded libraries and the devices: versions, the driver's log, streams, events.
 *
 * What was loaded at run time (the driver and the toolkit libraries) and the driver's own
 * log; devices and what NVML says of them; streams and events, events shared with other
 * processes; green contexts (a device's SMs split into shares; they make streams, so they
 * follow them); checkpointing another CUDA process.
 *
 * A part of cucore's public header: a program includes `<cucore.h>`, which includes every
 * part in the order of the data path; this part also compiles alone.
 */
#ifndef CUCORE_PART_DEVICES_H
#define CUCORE_PART_DEVICES_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------ */
/* Versions and loaded libraries                                                              */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup versions Versions and loaded libraries
 * What was loaded at run time, from where, and which versions.
 * @{
 */

/** One run-time-loaded library. Strings are owned by cucore and live until process exit. */
typedef struct cucore_library_info {
  int loaded;        /**< 1 when found and usable */
  int version;       /**< e.g.\ 13000 for 13.0; 0 when unknown */
  const char *path;  /**< where it was loaded from, or NULL */
  const char *error; /**< why it is not usable, or NULL */
} cucore_library_info;

/** The versions of cucore, the driver and the toolkit libraries (cucore_versions()). */
typedef struct cucore_versions_info {
  const char *cucore;            /**< CUCORE_VERSION_STRING */
  cucore_library_info driver;    /**< libcuda.so.1; version is cuDriverGetVersion's */
  cucore_library_info nvrtc;     /**< NVRTC; version is major*1000 + minor*10 (nvrtcVersion) */
  cucore_library_info nvjitlink; /**< nvJitLink; version is major*1000 + minor*10 */
  cucore_library_info nvvm;      /**< libNVVM; version = major*1000 + minor*10 of nvvmVersion */
  int toolkit_headers;           /**< CUDA_VERSION of the headers cucore was built with */
  /** What turns PTX into cubins: "nvJitLink"; "driver (cuLinkCreate/...; no LTO)" when
   * nvJitLink is missing or too old (CUDA 12.0-12.2 lacks nvJitLinkVersion) and a GPU is
   * present; NULL when neither can (then only NVRTC's own cubins can be made). */
  const char *ptx_linker;
} cucore_versions_info;

/** Loads (once) whatever of the driver and toolkit can be found, and describes it.
 * Never fails for a missing library: each entry says why it is missing. Strings in `*out`
 * live until process exit. */
CUCORE_API cucore_status cucore_versions(cucore_versions_info *out);

/** @} */

/* ==== SECTION: the driver's own log ==== */
/**
 * @defgroup driver_log The driver's own log
 *
 * Drivers for CUDA 12.9 and newer log why a call failed (cuLogsRegisterCallback). cucore
 * registers one callback per process when the driver is loaded and the entry point exists:
 * when a driver call fails, the message the driver logged for it on the calling thread is
 * appended to cucore_last_error() as "... the driver says: ...". Every message is bounded
 * (CUCORE_DRIVER_LOG_MESSAGE_MAX bytes) and filtered: control characters and bytes outside
 * ASCII are written as \\xHH. With an older driver these calls say CUCORE_DRIVER_TOO_OLD
 * naming the version needed (cucore_driver_log_available says 0 and succeeds).
 * @{
 */

/** The longest message kept, with its NUL (longer ones end in "..."). */
#define CUCORE_DRIVER_LOG_MESSAGE_MAX 512
/** How many of the newest messages the process keeps for cucore_driver_log_read. */
#define CUCORE_DRIVER_LOG_KEEP 32

/** Severity of a driver log message (CUlogLevel). */
typedef enum cucore_driver_log_level {
  CUCORE_DRIVER_LOG_ERROR = 0,  /**< the driver refused or failed a call */
  CUCORE_DRIVER_LOG_WARNING = 1 /**< a warning */
} cucore_driver_log_level;

/** Receives each driver log message, filtered and NUL-terminated, on the thread the driver
 * logged it from, during the driver call that logged it: it must return quickly and must not
 * call cucore or the driver. */
typedef void (*cucore_driver_log_fn)(void *user, cucore_driver_log_level level,
                                     const char *message);

/** *available = 1 when the driver's log is registered (the driver loaded and offers
 * cuLogsRegisterCallback, CUDA 12.9+), else 0; never fails for an absent log.
 * @retval CUCORE_INVALID_ARGUMENT `available` is NULL.
 * @retval CUCORE_DRIVER_NOT_FOUND the driver itself could not be loaded (or another load
 * failure; *available is 0). */
CUCORE_API cucore_status cucore_driver_log_available(int *available);
/** The messages kept since the process began (or the last cucore_driver_log_clear), oldest
 * first, one per line, into buf (`cap` bytes with the NUL; the newest ones are kept when they
 * do not fit). *needed (may be NULL) is the size all of them need with the NUL.
 * @retval CUCORE_INVALID_ARGUMENT buf is NULL with cap > 0.
 * @retval CUCORE_DRIVER_TOO_OLD the driver has no log (it names the version needed). */
CUCORE_API cucore_status cucore_driver_log_read(char *buf, size_t cap, size_t *needed);
/** The newest message the driver logged on the calling thread ("" if none) into buf.
 * @retval CUCORE_INVALID_ARGUMENT buf is NULL or cap is 0.
 * @retval CUCORE_DRIVER_TOO_OLD the driver has no log. */
CUCORE_API cucore_status cucore_driver_log_last(char *buf, size_t cap);
/** Forwards every later message to fn(user, level, message) as well; fn NULL stops it. One
 * forward at a time: a new one replaces the old.
 * @retval CUCORE_DRIVER_TOO_OLD the driver has no log. */
CUCORE_API cucore_status cucore_driver_log_forward(cucore_driver_log_fn fn, void *user);
/** Forgets the messages kept (the process's and this thread's).
 * @retval CUCORE_DRIVER_TOO_OLD the driver has no log. */
CUCORE_API cucore_status cucore_driver_log_clear(void);
/** @} */
/* ==== END SECTION: the driver's own log ==== */

/* ------------------------------------------------------------------------------------------ */
/* Devices                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup devices Devices
 * Enumeration, properties, and open devices holding the primary context.
 * @{
 */

/** Number of CUDA devices. Fails with CUCORE_DRIVER_NOT_FOUND, CUCORE_DRIVER_STUB, ... when the
 * driver is unusable (also CUCORE_DRIVER_TOO_OLD, or what a failed cuInit maps to); a usable
 * driver with no GPU gives *count = 0 and CUCORE_OK. */
CUCORE_API cucore_status cucore_device_get_count(int *count);

/** Properties of one device, read without creating a context. Each int field below read from
 * a device attribute is that attribute under a name of its own (the same value
 * cucore_device_get_attribute() reads; cucore_device_attribute_info::props_field names the
 * field, mempool_ipc_fd keeps one bit of the mask); a failed read fails the call. */
typedef struct cucore_device_props {
  int ordinal;         /**< 0-based device ordinal */
  char name[256];      /**< the device's name, e.g.\ "NVIDIA H100 80GB HBM3" */
  char uuid[37];       /**< "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"; "" when unknown */
  char pci_bus_id[32]; /**< "0000:00:00.0"; "" when unknown */
  /** @{ */
  int cc_major, cc_minor; /**< compute capability (major, minor) */
  /** @} */
  int arch;            /**< cc_major*10 + cc_minor, e.g.\ 90 */
  int sm_count;        /**< streaming multiprocessors */
  size_t total_memory; /**< bytes */
  /** @{ */
  int clock_khz, memory_clock_khz, memory_bus_width_bits; /**< SM clock, memory clock (kHz),
                                                              memory bus width (bits) */
  /** @} */
  int l2_cache_bytes;        /**< L2 cache size */
  int warp_size;             /**< threads per warp */
  int max_threads_per_block; /**< largest block the device allows */
  int max_block_dim[3];      /**< largest block per dimension (x, y, z) */
  int max_grid_dim[3];       /**< largest grid per dimension (x, y, z) */
  int max_threads_per_sm;    /**< resident threads per SM */
  int max_blocks_per_sm;     /**< resident blocks per SM */
  /** @{ */
  int regs_per_block, regs_per_sm; /**< 32-bit registers per block and per SM */
  /** @} */
  int shared_per_block;          /**< default per-block limit (48 KiB) */
  int shared_per_block_optin;    /**< opt-in maximum per block */
  int shared_per_sm;             /**< shared memory per SM */
  int reserved_shared_per_block; /**< the driver's per-block reservation */
  int const_memory_bytes;        /**< constant memory */
  int cooperative_launch;        /**< 1 if supported */
  int cluster_launch;            /**< 1 if supported */
  int managed_memory;            /**< 1 if managed memory is supported */
  int unified_addressing;        /**< 1 if the device shares an address space with the host */
  int async_engines;             /**< asynchronous copy engines */
  int ecc_enabled;               /**< 1 if ECC is on */
  int compute_mode;              /**< CUcomputemode value (0: default) */
  int integrated;                /**< 1 for a GPU integrated with the host's memory */
  int memory_pools;              /**< 1 if stream-ordered memory pools are supported
                                      (cucore_mem_alloc_async, cucore_mem_pool_create) */
  int mempool_ipc_fd;            /**< 1 if pools can be shared between processes through POSIX
                                      file descriptors (CUCORE_POOL_IPC) */
  int pageable_memory_access;    /**< 1 if kernels can read pageable host memory directly (HMM
                                      or ATS) */
  int concurrent_managed_access; /**< 1 if managed memory can be used by the device and the
                                      host at once (prefetch to the device works) */
} cucore_device_props;

/** Fills *out for device `ordinal` (0-based). CUCORE_INVALID_DEVICE names the range.
 * @retval CUCORE_INVALID_DEVICE `ordinal` is out of range.
 * @retval CUCORE_NO_DEVICE the driver sees no GPU. */
CUCORE_API cucore_status cucore_device_get_props(int ordinal, cucore_device_props *out);

/** The range of device attribute ids cucore knows: every CU_DEVICE_ATTRIBUTE_* of CUDA 13.0's
 * headers (1..147, with no gap) and CUDA 13.1's ATOMIC_REDUCTION_SUPPORTED (148). */
enum {
  /** the smallest id (CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK) */
  CUCORE_DEVICE_ATTRIBUTE_FIRST = 1,
  /** the largest id cucore knows (CU_DEVICE_ATTRIBUTE_ATOMIC_REDUCTION_SUPPORTED) */
  CUCORE_DEVICE_ATTRIBUTE_LAST = 148
};

/** What cucore knows of one device attribute (cucore_device_attribute_get_info()). The texts
 * are static: they live as long as the library. */
typedef struct cucore_device_attribute_info {
  int id;                  /**< the CU_DEVICE_ATTRIBUTE_* value */
  const char *name;        /**< cucore's name: the driver's, lower case, without the prefix,
                                e.g.\ "max_threads_per_block" */
  const char *driver_name; /**< "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK" */
  int since;               /**< the CUDA version that brought it (13010 = 13.1); 12000 for the
                                ids every driver cucore loads knows */
  int deprecated;          /**< 1: deprecated in the driver's headers, kept for old code */
  const char *meaning;     /**< what it says, in a few words */
  const char *props_field; /**< the cucore_device_props field that holds this attribute's
                                value (e.g.\ "sm_count"; mempool_ipc_fd keeps one bit of the
                                mask), or NULL when none does */
} cucore_device_attribute_info;

/** Reads device attribute `id` (a CU_DEVICE_ATTRIBUTE_* value) of device `ordinal` into
 * *value, as cuDeviceGetAttribute does; like cucore_device_get_props() it needs no context.
 * cucore_device_props holds some of them under its own field names (the info's props_field);
 * this call is the one getter of every other.
 * @retval CUCORE_INVALID_ARGUMENT `id` is not a device attribute: the message names the valid
 *         range (CUCORE_DEVICE_ATTRIBUTE_FIRST..CUCORE_DEVICE_ATTRIBUTE_LAST).
 * @retval CUCORE_DRIVER_TOO_OLD the attribute is newer than the loaded driver: the message
 *         names it, the CUDA version it needs and the driver's.
 * @retval CUCORE_INVALID_DEVICE `ordinal` is out of range.
 * @retval CUCORE_NO_DEVICE the driver sees no GPU. */
CUCORE_API cucore_status cucore_device_get_attribute(int ordinal, int id, int *value);
/** The id of the attribute named `name`: cucore's name ("max_threads_per_block") or the
 * driver's ("CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK", older spellings of the same id too),
 * in any case.
 * @retval CUCORE_NOT_FOUND no attribute has that name (*id is 0). */
CUCORE_API cucore_status cucore_device_attribute_from_name(const char *name, int *id);
/** cucore's name of attribute `id` (static text).
 * @retval CUCORE_INVALID_ARGUMENT `id` is not a device attribute (the range is named). */
CUCORE_API cucore_status cucore_device_attribute_get_name(int id, const char **name);
/** Everything cucore knows of attribute `id`; asks no driver.
 * @retval CUCORE_INVALID_ARGUMENT `id` is not a device attribute (the range is named). */
CUCORE_API cucore_status cucore_device_attribute_get_info(int id,
                                                          cucore_device_attribute_info *out);

/** A device in use: holds the device's primary context, so users never handle contexts.
 * Open with cucore_device_open(), close with cucore_device_close(). */
typedef struct cucore_device cucore_device;

/** CONSTRUCTOR: retains the primary context of device `ordinal` and makes it current on the
 * calling thread. Close `*out` with cucore_device_close().
 * @retval CUCORE_INVALID_DEVICE `ordinal` is out of range.
 * @retval CUCORE_NO_DEVICE the driver sees no GPU. */
CUCORE_API cucore_status cucore_device_open(int ordinal, cucore_device **out);
/** DESTRUCTOR: releases the primary context. NULL is a no-op. Objects created on the device
 * (streams, events, memory) must be destroyed first. The handle is freed even when the
 * release fails. */
CUCORE_API cucore_status cucore_device_close(cucore_device *dev);
/** Device ordinal of an open device. */
CUCORE_API cucore_status cucore_device_get_ordinal(const cucore_device *dev, int *ordinal);
/** Waits until all work on the device is done (cuCtxSynchronize). A faulted kernel is
 * reported as CUCORE_KERNEL_FAULT.
 * @retval CUCORE_KERNEL_FAULT a kernel faulted; the device is unusable from now on. */
CUCORE_API cucore_status cucore_device_synchronize(cucore_device *dev);
/** Free and total device memory in bytes. */
CUCORE_API cucore_status cucore_device_get_mem_info(cucore_device *dev, size_t *free_bytes,
                                                    size_t *total_bytes);
/** The range of stream priorities: `least` (numerically largest, usually 0) to `greatest`
 * (numerically smallest, e.g.\ -5). */
CUCORE_API cucore_status cucore_device_get_stream_priorities(cucore_device *dev, int *least,
                                                             int *greatest);
/** The native CUcontext (primary context) and CUdevice, for interoperation. Either out may be
 * NULL. The context stays owned by `dev`: do not destroy or release it. */
CUCORE_API cucore_status cucore_device_get_native(cucore_device *dev, void **cucontext,
                                                  int *cudevice);

/**
 * A device handle on a context the caller already has (the runtime API's, PyTorch's, one made
 * with cuCtxCreate): `cucontext` is a CUcontext, or NULL for the context current on this
 * thread. The context is borrowed, not retained: it must outlive the handle, and
 * cucore_device_close frees the handle only (the context stays current and alive). Work done
 * through this handle runs in that context.
 * Errors: CUCORE_INVALID_ARGUMENT when `cucontext` is NULL and no context is current;
 * CUCORE_DRIVER_ERROR when the context is unusable; CUCORE_NO_DEVICE without a GPU.
 */
CUCORE_API cucore_status cucore_device_from_context(void *cucontext, cucore_device **out);

/** @} */

/* ==== SECTION: system facts through NVML ==== */
/**
 * @defgroup system System facts (NVML)
 *
 * What NVML (libnvidia-ml.so.1, loaded at run time like the driver; CUCORE_LIBNVML names
 * another file) says of a GPU now: clocks, temperature, power, utilisation, the reasons its
 * clocks are held down, PCI, UUID, MIG mode and NVLink; the kernel-mode driver's version and
 * branch, the processes on a GPU, the topology and peer-to-peer status between two GPUs, the
 * CPUs and NUMA nodes nearest a GPU (and binding a thread to them), and NVML's events (XID
 * errors, clock changes) waited for with a timeout. A device is named by its cucore
 * ordinal (matched to NVML by PCI bus id, else by UUID) or by its UUID. A fact NVML does not
 * offer on this GPU is -1. Where NVML is absent or does not start, every call is
 * CUCORE_NOT_SUPPORTED saying what was tried.
 * @{
 */

/** Clock-event reason bits (nvmlClocksEventReasons): why the clocks are where they are. */
#define CUCORE_CLOCK_REASON_GPU_IDLE 0x1ull            /**< nothing runs */
#define CUCORE_CLOCK_REASON_APPLICATIONS_CLOCKS 0x2ull /**< application clocks setting */
#define CUCORE_CLOCK_REASON_SW_POWER_CAP 0x4ull        /**< software power cap */
#define CUCORE_CLOCK_REASON_HW_SLOWDOWN 0x8ull         /**< hardware slowdown */
#define CUCORE_CLOCK_REASON_SYNC_BOOST 0x10ull         /**< held to a group's sync boost */
#define CUCORE_CLOCK_REASON_SW_THERMAL 0x20ull         /**< software thermal slowdown */
#define CUCORE_CLOCK_REASON_HW_THERMAL 0x40ull         /**< hardware thermal slowdown */
#define CUCORE_CLOCK_REASON_HW_POWER_BRAKE 0x80ull     /**< hardware power brake */
#define CUCORE_CLOCK_REASON_DISPLAY_CLOCKS 0x100ull    /**< display clock setting */
/** The reasons that mean a measurement ran slower than the GPU can (power, thermal,
 * hardware slowdown, sync boost): a timing taken under any of them is flagged. */
#define CUCORE_CLOCK_REASONS_THROTTLE                                   \
  (CUCORE_CLOCK_REASON_SW_POWER_CAP | CUCORE_CLOCK_REASON_HW_SLOWDOWN | \
   CUCORE_CLOCK_REASON_SYNC_BOOST | CUCORE_CLOCK_REASON_SW_THERMAL |    \
   CUCORE_CLOCK_REASON_HW_THERMAL | CUCORE_CLOCK_REASON_HW_POWER_BRAKE)

/** What NVML says of one GPU now. Every number is -1 when NVML does not offer it. */
typedef struct cucore_system_info {
  int ordinal;             /**< the cucore device ordinal, -1 when the driver does not list it */
  char name[96];           /**< NVML's name of the product */
  char uuid[96];           /**< NVML's UUID, "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" */
  char pci_bus_id[32];     /**< NVML's PCI bus id, "00000000:19:00.0" */
  long long pci_device_id; /**< the 16-bit device id and 16-bit vendor id */
  int sm_clock_mhz;        /**< SM clock now */
  int sm_clock_max_mhz;    /**< SM clock at most */
  int mem_clock_mhz;       /**< memory clock now */
  int mem_clock_max_mhz;   /**< memory clock at most */
  int graphics_clock_mhz;  /**< graphics clock now */
  int temperature_c;       /**< GPU temperature, degrees Celsius */
  int power_mw;            /**< power drawn now, milliwatts */
  int power_limit_mw;      /**< the enforced power limit, milliwatts */
  int gpu_util_pct;        /**< percent of the last sample period a kernel ran */
  int mem_util_pct;        /**< percent of it device memory was read or written */
  long long clock_reasons; /**< CUCORE_CLOCK_REASON_* bits, -1 when unknown */
  int mig_current;         /**< MIG mode: 1 on, 0 off, -1 not offered */
  int mig_pending;         /**< MIG mode after the next reset */
  int nvlink_links;        /**< NVLinks NVML knows on this GPU (-1 none offered) */
  int nvlink_active;       /**< of them, the active ones */
  unsigned nvlink_active_mask; /**< bit i: link i is active */
} cucore_system_info;

/** What NVML says now of the GPU that is cucore device `ordinal`.
 * @retval CUCORE_INVALID_DEVICE no such ordinal.
 * @retval CUCORE_NOT_SUPPORTED NVML is absent or did not start (the message says why).
 * @retval CUCORE_NOT_FOUND NVML does not list the device (by PCI bus id or UUID). */
CUCORE_API cucore_status cucore_system_get_device_info(int ordinal, cucore_system_info *out);
/** The SM clock now (MHz) and the clock event reasons (CUCORE_CLOCK_REASON_* bits) of cucore
 * device `ordinal`, read alone: two NVML queries on the device's NVML handle, kept after the
 * first call (cucore_system_get_device_info reads every fact, NVLink and PCI included, which
 * costs more than a short timing sample). For sampling beside a timing. Either pointer may be
 * NULL; a value NVML does not give is -1. Thread-safe.
 * @retval CUCORE_INVALID_DEVICE no such ordinal.
 * @retval CUCORE_NOT_SUPPORTED NVML is absent or did not start (the message says why).
 * @retval CUCORE_NOT_FOUND NVML does not list the device (by PCI bus id or UUID). */
CUCORE_API cucore_status cucore_system_get_clock(int ordinal, int *sm_clock_mhz,
                                                 long long *clock_reasons);
/** The same for the GPU whose UUID is `uuid` ("GPU-..." as NVML writes it, or the
 * 36-character form cucore_device_props::uuid holds).
 * @retval CUCORE_NOT_FOUND no GPU has that UUID.
 * @retval CUCORE_NOT_SUPPORTED NVML is absent or did not start. */
CUCORE_API cucore_status cucore_system_get_info_by_uuid(const char *uuid, cucore_system_info *out);
/** The number of GPUs NVML lists (every GPU of the machine, whatever CUDA_VISIBLE_DEVICES says),
 * needing no CUDA driver call: with cucore_system_get_info_by_index, a program reads every
 * GPU's facts on a thread of its own while cuInit runs, and matches them to its devices by
 * UUID afterwards (`cucore devices` does). Thread-safe.
 * @retval CUCORE_INVALID_ARGUMENT count is NULL.
 * @retval CUCORE_NOT_SUPPORTED NVML is absent, did not start, or cannot count. */
CUCORE_API cucore_status cucore_system_get_count(int *count);
/** Every fact of NVML's GPU `index` (0 .. cucore_system_get_count - 1, NVML's order); `ordinal`
 * is the cucore device at its PCI bus id when the driver is started and lists it, else -1
 * (the call never waits for another thread's cuInit). `out` is the caller's; on failure its
 * facts are -1. Thread-safe.
 * @retval CUCORE_INVALID_ARGUMENT no such index, or out is NULL.
 * @retval CUCORE_NOT_SUPPORTED NVML is absent, did not start, or cannot list by index. */
CUCORE_API cucore_status cucore_system_get_info_by_index(int index, cucore_system_info *out);
/** The names of the reason bits in `reasons` ("sw_power_cap, hw_thermal"; "none" for 0;
 * unknown bits as hex), into buf (`cap` bytes with the NUL; cut when it does not fit).
 * @retval CUCORE_INVALID_ARGUMENT buf is NULL or cap is 0. */
CUCORE_API cucore_status cucore_system_reasons_text(long long reasons, char *buf, size_t cap);
/** Loads NVML and starts it (nvmlInit), once per process; later calls return the first one's
 * outcome at once. Thread-safe, and independent of the CUDA driver: a program may call it from
 * a thread of its own while cuInit runs, so that the first cucore_system_* query finds NVML
 * ready (its time is the phase CUCORE_PHASE_LOAD_NVML).
 * @retval CUCORE_NOT_SUPPORTED NVML is absent or did not start (the message says why). */
CUCORE_API cucore_status cucore_system_load(void);

/* ---- the kernel-mode driver ------------------------------------------------------------------ */

/** The kernel-mode driver's version as NVML gives it ("580.95.05"), nvmlSystemGetDriverVersion:
 * the text into buf (`cap` bytes with the NUL), never cut: when it does not fit the call fails.
 * *needed (may be NULL) receives the bytes the text needs with its NUL (buf may be NULL with
 * cap 0 to ask only that). Needs no CUDA driver call. Thread-safe.
 * @retval CUCORE_INVALID_ARGUMENT buf is NULL with cap > 0, or cap is smaller than *needed.
 * @retval CUCORE_NOT_SUPPORTED NVML is absent, did not start, or lacks the entry point. */
CUCORE_API cucore_status cucore_system_get_driver_version(char *buf, size_t cap, size_t *needed);
/** The driver's branch ("r580_00"), nvmlSystemGetDriverBranch, as for
 * cucore_system_get_driver_version.
 * @retval CUCORE_NOT_SUPPORTED NVML is absent, did not start, or is older than 12.6 and has no
 *         nvmlSystemGetDriverBranch (the message names it).
 * @retval CUCORE_INVALID_ARGUMENT as for cucore_system_get_driver_version. */
CUCORE_API cucore_status cucore_system_get_driver_branch(char *buf, size_t cap, size_t *needed);

/* ---- processes on a GPU ---------------------------------------------------------------------- */

/** What a process does on the GPU: bits of cucore_system_process::kinds. */
#define CUCORE_SYSTEM_PROCESS_COMPUTE 0x1u  /**< it has a compute (CUDA) context on the GPU */
#define CUCORE_SYSTEM_PROCESS_GRAPHICS 0x2u /**< it has a graphics context on the GPU */

/** The layout version of cucore_system_process that this header declares. */
#define CUCORE_SYSTEM_PROCESS_VERSION 1u

/** One process NVML lists on a GPU. The caller sets `version` to
 * CUCORE_SYSTEM_PROCESS_VERSION before asking (cucore_system_processes_get_item): a later
 * cucore adds fields after the last one and fills only those a caller's version has. */
typedef struct cucore_system_process {
  uint32_t version;           /**< set by the caller: CUCORE_SYSTEM_PROCESS_VERSION */
  unsigned kinds;             /**< CUCORE_SYSTEM_PROCESS_COMPUTE / _GRAPHICS bits */
  long long pid;              /**< its process id (as NVML sees it: the host's pid namespace) */
  long long used_memory;      /**< device memory it uses, bytes; -1 when NVML cannot say */
  long long gpu_instance;     /**< its MIG GPU instance id, -1 without MIG */
  long long compute_instance; /**< its MIG compute instance id, -1 without MIG */
  /** its name, /proc/PID/comm (up to 15 bytes as the kernel keeps it), or NULL when that is
   * not readable from this process (another pid namespace, gone, no permission); it belongs
   * to the list and lives as long as it. */
  const char *name;
} cucore_system_process;

/** The processes on one GPU, as NVML listed them at one moment. */
typedef struct cucore_system_processes cucore_system_processes;

/** CONSTRUCTOR: every process on cucore device `ordinal` now: its compute processes
 * (nvmlDeviceGetComputeRunningProcesses_v3) and graphics processes
 * (nvmlDeviceGetGraphicsRunningProcesses_v3), one item per pid with both kinds' bits where it
 * has both (its memory the larger of the two NVML gives), ordered by pid. Any number of
 * processes: when NVML answers that the list grew past the buffer, the buffer grows and the
 * query is asked again. NVML may list no process of other users or containers without the
 * permission. Destroy `*out` with cucore_system_processes_destroy().
 * @retval CUCORE_INVALID_DEVICE no such ordinal.
 * @retval CUCORE_NOT_SUPPORTED NVML is absent, did not start, or lacks the entry points.
 * @retval CUCORE_NOT_FOUND NVML does not list the device. */
CUCORE_API cucore_status cucore_system_get_processes(int ordinal, cucore_system_processes **out);
/** The number of processes in `list`.
 * @retval CUCORE_INVALID_ARGUMENT count is NULL. */
CUCORE_API cucore_status cucore_system_processes_get_count(const cucore_system_processes *list,
                                                           size_t *count);
/** Process `index` (0 .. count - 1) of `list` into *out, whose `version` the caller set.
 * @retval CUCORE_INVALID_ARGUMENT index out of range, out NULL, or out->version not 1 ..
 *         CUCORE_SYSTEM_PROCESS_VERSION. */
CUCORE_API cucore_status cucore_system_processes_get_item(const cucore_system_processes *list,
                                                          size_t index, cucore_system_process *out);
/** Frees `list` and the names in it; NULL is a no-op. */
CUCORE_API cucore_status cucore_system_processes_destroy(cucore_system_processes *list);

/* ---- topology and peer-to-peer between two GPUs ---------------------------------------------- */

/** How close two GPUs sit (nvmlGpuTopologyLevel_t, same values): the nearest thing their
 * paths share. Smaller is closer. */
typedef enum cucore_system_topology {
  CUCORE_TOPOLOGY_INTERNAL = 0,    /**< one board (two GPUs of one package) */
  CUCORE_TOPOLOGY_SINGLE = 10,     /**< one PCIe switch between them */
  CUCORE_TOPOLOGY_MULTIPLE = 20,   /**< several PCIe switches, no host bridge */
  CUCORE_TOPOLOGY_HOSTBRIDGE = 30, /**< one host bridge */
  CUCORE_TOPOLOGY_NODE = 40,       /**< one NUMA node, possibly several host bridges */
  CUCORE_TOPOLOGY_SYSTEM = 50      /**< only the system: across NUMA nodes (SMP link) */
} cucore_system_topology;
/** "internal", "single", "multiple", "hostbridge", "node", "system"; "unknown" for another
 * value. */
CUCORE_API const char *cucore_system_topology_name(cucore_system_topology level);
/** The topology level between cucore devices `a` and `b` (nvmlDeviceGetTopologyCommonAncestor).
 * @retval CUCORE_INVALID_DEVICE no such ordinal.
 * @retval CUCORE_INVALID_ARGUMENT `a` equals `b` (two GPUs expected), or out is NULL.
 * @retval CUCORE_NOT_SUPPORTED NVML is absent, did not start, lacks the entry point, or does
 *         not know the path on this machine. */
CUCORE_API cucore_status cucore_system_get_topology(int a, int b, cucore_system_topology *out);

/** What NVML says of one kind of peer access between two GPUs (nvmlGpuP2PStatus_t, same
 * values). */
typedef enum cucore_system_p2p_status {
  CUCORE_P2P_OK = 0,                         /**< supported */
  CUCORE_P2P_CHIPSET_NOT_SUPPORTED = 1,      /**< the chipset does not support it */
  CUCORE_P2P_GPU_NOT_SUPPORTED = 2,          /**< a GPU does not support it */
  CUCORE_P2P_IOH_TOPOLOGY_NOT_SUPPORTED = 3, /**< the IO hub topology does not allow it */
  CUCORE_P2P_DISABLED_BY_REGKEY = 4,         /**< a driver registry key turned it off */
  CUCORE_P2P_NOT_SUPPORTED = 5,              /**< not supported, for no reason NVML names */
  CUCORE_P2P_UNKNOWN = 6                     /**< unknown (also: NVML does not answer this kind) */
} cucore_system_p2p_status;
/** "ok", "chipset_not_supported", "gpu_not_supported", "ioh_topology_not_supported",
 * "disabled_by_regkey", "not_supported", "unknown" ("unknown" for another value too). */
CUCORE_API const char *cucore_system_p2p_status_name(cucore_system_p2p_status status);

/** The layout version of cucore_system_p2p that this header declares. */
#define CUCORE_SYSTEM_P2P_VERSION 1u
/** Peer-to-peer between two GPUs, one status per kind (nvmlDeviceGetP2PStatus). The caller
 * sets `version` to CUCORE_SYSTEM_P2P_VERSION; later fields are filled only for a caller that
 * declares them. */
typedef struct cucore_system_p2p {
  uint32_t version;                 /**< set by the caller: CUCORE_SYSTEM_P2P_VERSION */
  cucore_system_p2p_status read;    /**< reads of the peer's memory */
  cucore_system_p2p_status write;   /**< writes to the peer's memory */
  cucore_system_p2p_status nvlink;  /**< the access goes over NVLink */
  cucore_system_p2p_status atomics; /**< atomics on the peer's memory */
  cucore_system_p2p_status prop;    /**< over PCIe (NVML's PCI index, formerly "prop") */
} cucore_system_p2p;
/** The peer-to-peer statuses from cucore device `a` to `b`. A kind NVML does not answer
 * (NOT_SUPPORTED for that index) is CUCORE_P2P_UNKNOWN; any other NVML failure fails the call.
 * @retval CUCORE_INVALID_DEVICE no such ordinal.
 * @retval CUCORE_INVALID_ARGUMENT `a` equals `b`, out is NULL, or out->version not 1 ..
 *         CUCORE_SYSTEM_P2P_VERSION.
 * @retval CUCORE_NOT_SUPPORTED NVML is absent, did not start, or lacks the entry point. */
CUCORE_API cucore_status cucore_system_get_p2p(int a, int b, cucore_system_p2p *out);

/* ---- CPU and memory affinity ----------------------------------------------------------------- */

/** A set of CPU or NUMA-node numbers of any size (as NVML and the kernel number them). */
typedef struct cucore_system_set cucore_system_set;

/** Where NVML looks for a GPU's nearest memory (nvmlAffinityScope_t). */
typedef enum cucore_system_scope {
  CUCORE_SCOPE_NODE = 0,  /**< the NUMA nodes nearest the GPU */
  CUCORE_SCOPE_SOCKET = 1 /**< every NUMA node of the GPU's processor socket */
} cucore_system_scope;

/** CONSTRUCTOR: the CPUs nearest cucore device `ordinal` (nvmlDeviceGetCpuAffinity), however
 * many the machine has: the mask starts at the CPUs the system is configured for (at least
 * 1024) and doubles while NVML fills its last word. An empty set when NVML names none. Destroy
 * with cucore_system_set_destroy().
 * @retval CUCORE_INVALID_DEVICE no such ordinal.
 * @retval CUCORE_NOT_SUPPORTED NVML is absent, did not start, lacks the entry point, or does not
 *         answer for this GPU. */
CUCORE_API cucore_status cucore_system_get_cpu_affinity(int ordinal, cucore_system_set **out);
/** CONSTRUCTOR: the NUMA nodes nearest cucore device `ordinal` in `scope`
 * (nvmlDeviceGetMemoryAffinity), as for cucore_system_get_cpu_affinity.
 * @retval CUCORE_INVALID_ARGUMENT scope is not a cucore_system_scope.
 * @retval CUCORE_NOT_SUPPORTED as for cucore_system_get_cpu_affinity. */
CUCORE_API cucore_status cucore_system_get_memory_affinity(int ordinal, cucore_system_scope scope,
                                                           cucore_system_set **out);
/** CONSTRUCTOR: the CPUs the calling thread may run on now (sched_getaffinity), for
 * cucore_system_set_thread_affinity to put back.
 * @retval CUCORE_INVALID_ARGUMENT out is NULL. */
CUCORE_API cucore_status cucore_system_get_thread_affinity(cucore_system_set **out);
/** Binds the calling thread to cucore device `ordinal`'s CPUs (cucore_system_get_cpu_affinity,
 * then sched_setaffinity on the thread alone). *previous (may be NULL) receives the thread's
 * CPUs before, a set to give back to cucore_system_set_thread_affinity and destroy. The kernel
 * keeps only the CPUs the thread is allowed (cgroup cpusets); none allowed is refused.
 * @retval CUCORE_NOT_SUPPORTED NVML cannot say the GPU's CPUs, or none of them is allowed to
 *         this thread (the message lists them); the thread is left as it was.
 * @retval CUCORE_INVALID_DEVICE no such ordinal. */
CUCORE_API cucore_status cucore_system_bind_thread(int ordinal, cucore_system_set **previous);
/** Sets the calling thread's CPUs to `cpus` (a CPU set: from cucore_system_bind_thread,
 * cucore_system_get_thread_affinity or cucore_system_get_cpu_affinity).
 * @retval CUCORE_INVALID_ARGUMENT `cpus` is a NUMA-node set, or empty, or none of its CPUs is
 *         allowed to the thread (the kernel's EINVAL). */
CUCORE_API cucore_status cucore_system_set_thread_affinity(const cucore_system_set *cpus);
/** The number of members of `set`.
 * @retval CUCORE_INVALID_ARGUMENT count is NULL. */
CUCORE_API cucore_status cucore_system_set_get_count(const cucore_system_set *set, size_t *count);
/** Member `index` (0 .. count - 1, in increasing order) of `set` into *member.
 * @retval CUCORE_INVALID_ARGUMENT index out of range or member NULL. */
CUCORE_API cucore_status cucore_system_set_get_member(const cucore_system_set *set, size_t index,
                                                      int *member);
/** *yes = 1 when `member` is in `set`, else 0 (a negative number is in no set).
 * @retval CUCORE_INVALID_ARGUMENT yes is NULL. */
CUCORE_API cucore_status cucore_system_set_is_member(const cucore_system_set *set, int member,
                                                     int *yes);
/** *is_numa = 1 when `set` holds NUMA nodes, 0 when it holds CPUs.
 * @retval CUCORE_INVALID_ARGUMENT is_numa is NULL. */
CUCORE_API cucore_status cucore_system_set_is_numa(const cucore_system_set *set, int *is_numa);
/** Frees `set`; NULL is a no-op. */
CUCORE_API cucore_status cucore_system_set_destroy(cucore_system_set *set);

/* ---- NVML events ----------------------------------------------------------------------------- */

/** Event types (nvmlEventType bits, same values): what an event set listens for. */
#define CUCORE_SYSTEM_EVENT_SINGLE_BIT_ECC 0x1ull    /**< a single-bit ECC error */
#define CUCORE_SYSTEM_EVENT_DOUBLE_BIT_ECC 0x2ull    /**< a double-bit ECC error */
#define CUCORE_SYSTEM_EVENT_PSTATE 0x4ull            /**< a performance-state change */
#define CUCORE_SYSTEM_EVENT_XID 0x8ull               /**< an XID critical error (data: the XID) */
#define CUCORE_SYSTEM_EVENT_CLOCK 0x10ull            /**< a clock change */
#define CUCORE_SYSTEM_EVENT_POWER_SOURCE 0x80ull     /**< AC / battery power source change */
#define CUCORE_SYSTEM_EVENT_MIG_CONFIG 0x100ull      /**< a MIG configuration change */
#define CUCORE_SYSTEM_EVENT_ECC_STORM 0x200ull       /**< a single-bit ECC error storm */
#define CUCORE_SYSTEM_EVENT_DRAM_RETIREMENT 0x400ull /**< DRAM page retirement */
#define CUCORE_SYSTEM_EVENT_DRAM_RETIREMENT_FAIL 0x800ull /**< DRAM page retirement failed */
#define CUCORE_SYSTEM_EVENT_NON_FATAL_POISON 0x1000ull    /**< a non-fatal poison error */
#define CUCORE_SYSTEM_EVENT_FATAL_POISON 0x2000ull        /**< a fatal poison error */

/** The name of one event type bit ("xid", "clock", "pstate", "single_bit_ecc",
 * "double_bit_ecc", "power_source", "mig_config", "ecc_storm", "dram_retirement",
 * "dram_retirement_fail", "non_fatal_poison", "fatal_poison"); "unknown" for another value. */
CUCORE_API const char *cucore_system_event_type_name(unsigned long long type);

/** The layout version of cucore_system_event that this header declares. */
#define CUCORE_SYSTEM_EVENT_VERSION 1u
/** One NVML event. The caller sets `version` to CUCORE_SYSTEM_EVENT_VERSION before the wait. */
typedef struct cucore_system_event {
  uint32_t version;           /**< set by the caller: CUCORE_SYSTEM_EVENT_VERSION */
  int ordinal;                /**< the cucore device it happened on (as it was added to the set) */
  unsigned long long type;    /**< one CUCORE_SYSTEM_EVENT_* bit */
  unsigned long long data;    /**< the XID of an XID event (999: an unknown XID), else 0 */
  long long gpu_instance;     /**< MIG GPU instance it is attributed to, -1 when none */
  long long compute_instance; /**< MIG compute instance it is attributed to, -1 when none */
} cucore_system_event;

/** A set of NVML events to wait on, over one or more GPUs. Use a set from one thread at a
 * time (NVML's own rule). */
typedef struct cucore_system_event_set cucore_system_event_set;

/** The event types cucore device `ordinal` can report (nvmlDeviceGetSupportedEventTypes):
 * CUCORE_SYSTEM_EVENT_* bits.
 * @retval CUCORE_INVALID_DEVICE no such ordinal.
 * @retval CUCORE_NOT_SUPPORTED NVML is absent, did not start, or lacks the entry point. */
CUCORE_API cucore_status cucore_system_get_event_types(int ordinal, unsigned long long *types);
/** CONSTRUCTOR: an empty event set (nvmlEventSetCreate). Destroy it with
 * cucore_system_event_set_destroy().
 * @retval CUCORE_NOT_SUPPORTED NVML is absent, did not start, lacks the entry points, or
 *         offers no events on this platform. */
CUCORE_API cucore_status cucore_system_event_set_create(cucore_system_event_set **out);
/** Listens for the events `types` (CUCORE_SYSTEM_EVENT_* bits) of cucore device `ordinal`
 * from now on (nvmlDeviceRegisterEvents); events before the call are not seen.
 * @retval CUCORE_INVALID_ARGUMENT types is 0 or has a bit the device does not report (the
 *         message names those bits and the ones it does report).
 * @retval CUCORE_INVALID_DEVICE no such ordinal.
 * @retval CUCORE_NOT_SUPPORTED NVML refused the types on this device. */
CUCORE_API cucore_status cucore_system_event_set_add_device(cucore_system_event_set *set,
                                                            int ordinal, unsigned long long types);
/** Waits up to `timeout_ms` milliseconds for the next event of `set` (nvmlEventSetWait_v2) and
 * returns it in *out (whose `version` the caller set). One event per call, the oldest first.
 * @retval CUCORE_OK an event is in *out.
 * @retval CUCORE_NOT_READY no event came within the timeout (NVML may also end the wait early
 *         on a signal): *out has type 0; no message is kept, as for a stream query.
 * @retval CUCORE_INVALID_ARGUMENT out is NULL or out->version not 1 ..
 *         CUCORE_SYSTEM_EVENT_VERSION, or no device was added to the set.
 * @retval CUCORE_DRIVER_ERROR NVML failed (a GPU fell off the bus: the message says so). */
CUCORE_API cucore_status cucore_system_event_set_wait(cucore_system_event_set *set,
                                                      unsigned timeout_ms,
                                                      cucore_system_event *out);
/** Frees `set` (nvmlEventSetFree); NULL is a no-op. */
CUCORE_API cucore_status cucore_system_event_set_destroy(cucore_system_event_set *set);
/** @} */
/* ==== END SECTION: system facts ==== */

/* ------------------------------------------------------------------------------------------ */
/* Streams and events                                                                         */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup streams Streams and events
 * Ordering work on a device, and timing it.
 * @{
 */

/** A stream of a device (CUstream). Create with cucore_stream_create() or take the device's
 * with cucore_stream_default(); destroy with cucore_stream_destroy(). */
typedef struct cucore_stream cucore_stream;
/** An event of a device (CUevent): create with cucore_event_create(), destroy with
 * cucore_event_destroy(). */
typedef struct cucore_event cucore_event;

/** Flags of cucore_stream_create(). */
enum {
  CUCORE_STREAM_DEFAULT = 0,     /**< synchronises with the legacy default stream */
  CUCORE_STREAM_NON_BLOCKING = 1 /**< does not synchronise with the legacy default stream */
};

/** CONSTRUCTOR: a new stream on `dev`. `priority` 0 is the default; lower numbers are higher
 * priority; a value outside the device's range is CUCORE_INVALID_ARGUMENT naming the range.
 * `flags` is CUCORE_STREAM_DEFAULT or CUCORE_STREAM_NON_BLOCKING. Destroy `*out` with
 * cucore_stream_destroy() before closing `dev`. */
CUCORE_API cucore_status cucore_stream_create(cucore_device *dev, unsigned flags, int priority,
                                              cucore_stream **out);
/** The device's legacy default stream (stream 0), as a handle owned by `dev`; do not destroy
 * (cucore_stream_destroy() ignores it). Valid while `dev` is open. */
CUCORE_API cucore_status cucore_stream_default(cucore_device *dev, cucore_stream **out);
/** DESTRUCTOR: destroys the stream. Pending work completes first (the driver's rule). NULL is
 * a no-op. The handle is freed even when the driver call fails. */
CUCORE_API cucore_status cucore_stream_destroy(cucore_stream *s);
/** Blocks until all work queued on the stream is done.
 * @retval CUCORE_KERNEL_FAULT a kernel on the device faulted. */
CUCORE_API cucore_status cucore_stream_synchronize(cucore_stream *s);
/** CUCORE_OK when all work is done, CUCORE_NOT_READY when some is pending.
 * @retval CUCORE_NOT_READY work is pending (no message is kept: it is not a failure). */
CUCORE_API cucore_status cucore_stream_query(cucore_stream *s);
/** Makes future work on `s` wait for `ev`. */
CUCORE_API cucore_status cucore_stream_wait_event(cucore_stream *s, cucore_event *ev);
/** Makes future work on `waiter` wait for the work queued on `waited` so far, without a host
 * round trip: an event is made and recorded in `waited`'s context (another device's, or
 * another context's, works), `waiter` waits on it, and the event is let go (the wait holds
 * what it needs). In a capture the capture's rules hold: a `waited` stream in a capture makes
 * `waiter` join it (as cucore_stream_wait_event() does); a capturing `waiter` may only wait
 * on a stream of its own capture.
 * @retval CUCORE_INVALID_ARGUMENT a stream is NULL, or both are the same stream.
 * @retval CUCORE_STREAM_CAPTURE the wait would cross a capture's boundary (named). */
CUCORE_API cucore_status cucore_stream_wait_stream(cucore_stream *waiter, cucore_stream *waited);
/** The stream's priority. */
CUCORE_API cucore_status cucore_stream_get_priority(cucore_stream *s, int *priority);
/** The device a stream belongs to (borrowed). */
CUCORE_API cucore_status cucore_stream_get_device(cucore_stream *s, cucore_device **dev);
/** The native CUstream (NULL for the legacy default stream); still owned by `s`. */
CUCORE_API cucore_status cucore_stream_get_native(cucore_stream *s, void **custream);

/** Flags of cucore_event_create(), combined with `|`. */
enum {
  CUCORE_EVENT_DEFAULT = 0,        /**< records timing */
  CUCORE_EVENT_BLOCKING_SYNC = 1,  /**< synchronize sleeps instead of spinning */
  CUCORE_EVENT_DISABLE_TIMING = 2, /**< records no timing (cheaper; cannot be timed) */
  CUCORE_EVENT_INTERPROCESS = 4    /**< may be shared with other processes
                                        (cucore_event_export_ipc()); needs DISABLE_TIMING */
};

/** CONSTRUCTOR: a new event on `dev`. `flags` combines CUCORE_EVENT_BLOCKING_SYNC,
 * CUCORE_EVENT_DISABLE_TIMING and CUCORE_EVENT_INTERPROCESS (which needs DISABLE_TIMING).
 * Destroy `*out` with cucore_event_destroy() before closing `dev`. */
CUCORE_API cucore_status cucore_event_create(cucore_device *dev, unsigned flags,
                                             cucore_event **out);
/** DESTRUCTOR: destroys the event. NULL is a no-op. The handle is freed even when the driver
 * call fails. */
CUCORE_API cucore_status cucore_event_destroy(cucore_event *ev);
/** Records the event on a stream.
 * @retval CUCORE_INVALID_ARGUMENT the stream belongs to another device than the event. */
CUCORE_API cucore_status cucore_event_record(cucore_event *ev, cucore_stream *s);
/** Blocks until the event has completed.
 * @retval CUCORE_KERNEL_FAULT a kernel on the device faulted. */
CUCORE_API cucore_status cucore_event_synchronize(cucore_event *ev);
/** CUCORE_OK when complete, CUCORE_NOT_READY otherwise.
 * @retval CUCORE_NOT_READY not complete yet (no message is kept: it is not a failure). */
CUCORE_API cucore_status cucore_event_query(cucore_event *ev);
/** Milliseconds between two recorded, completed events.
 * @retval CUCORE_INVALID_ARGUMENT an event was created with CUCORE_EVENT_DISABLE_TIMING.
 * @retval CUCORE_NOT_READY an event has not completed yet. */
CUCORE_API cucore_status cucore_event_elapsed_ms(cucore_event *start, cucore_event *end, float *ms);

/**
 * The device's per-thread default stream (CU_STREAM_PER_THREAD: one implicit stream per host
 * thread that does not synchronise with other streams), as a handle owned by `dev`; do not
 * destroy it (destroying it is a no-op).
 */
CUCORE_API cucore_status cucore_stream_per_thread(cucore_device *dev, cucore_stream **out);
/**
 * Wraps a stream the caller created (a CUstream or cudaStream_t, or NULL / CU_STREAM_LEGACY /
 * CU_STREAM_PER_THREAD) so cucore can launch, copy and record on it. Not owned:
 * cucore_stream_destroy frees the wrapper and leaves the stream alone; the stream must
 * outlive the wrapper. The stream must belong to `dev`'s context (checked with
 * cuStreamGetCtx: CUCORE_INVALID_ARGUMENT names the stream's device otherwise; a runtime-API
 * stream belongs to the primary context, which cucore_device_open uses too).
 */
CUCORE_API cucore_status cucore_stream_wrap(cucore_device *dev, void *custream,
                                            cucore_stream **out);
/**
 * Wraps an event the caller created (a CUevent or cudaEvent_t) of `dev`'s context. Not owned:
 * cucore_event_destroy frees the wrapper only. Its creation flags are not known to cucore
 * (timing an event made with timing disabled is refused by the driver).
 * Errors: CUCORE_DRIVER_ERROR (from cuEventQuery) when it is not a usable event.
 */
CUCORE_API cucore_status cucore_event_wrap(cucore_device *dev, void *cuevent, cucore_event **out);

/** @} */

/* ==== SECTION: IPC events ==== */
/**
 * @defgroup ipc_events Events shared between processes
 *
 * An event created with CUCORE_EVENT_INTERPROCESS | CUCORE_EVENT_DISABLE_TIMING is exported
 * as plain bytes (cucore_ipc_event_handle: the driver's 64 bytes, a magic and a version), sent
 * any way at all, and imported in another process on the same GPU: a stream there waits on it
 * (cucore_stream_wait_event()), so work of one process is ordered after work of another
 * without a host round trip. A wait on an imported event waits for the exporter's most recent
 * record of it at the time of the wait. Entry points cuIpcGetEventHandle and
 * cuIpcOpenEventHandle (CUDA 4.1; Linux only).
 * @{
 */

/** An event as bytes for another process (cucore_event_export_ipc()). */
typedef struct cucore_ipc_event_handle {
  uint32_t magic;         /**< cucore's mark, checked on import */
  uint32_t version;       /**< of this layout */
  int32_t pid;            /**< the exporting process */
  uint32_t reserved;      /**< 0 */
  unsigned char data[64]; /**< the driver's CUipcEventHandle */
} cucore_ipc_event_handle;

/** Exports `ev` (created with CUCORE_EVENT_INTERPROCESS) into *out.
 * @retval CUCORE_INVALID_ARGUMENT `ev` was not created with CUCORE_EVENT_INTERPROCESS, or it
 *         wraps a CUevent cucore did not create (cucore_event_wrap()).
 * @retval CUCORE_DRIVER_TOO_OLD the driver lacks cuIpcGetEventHandle. */
CUCORE_API cucore_status cucore_event_export_ipc(cucore_event *ev, cucore_ipc_event_handle *out);
/** CONSTRUCTOR: opens an event another process exported, on `dev` (the same GPU as the
 * exporter's). It can be waited on, synchronised, queried and recorded, never timed. Destroy
 * `*out` with cucore_event_destroy().
 * @retval CUCORE_INVALID_ARGUMENT `in` is not a cucore_ipc_event_handle of this version
 *         (damaged or truncated in transit), or it comes from this very process. */
CUCORE_API cucore_status cucore_event_import_ipc(cucore_device *dev,
                                                 const cucore_ipc_event_handle *in,
                                                 cucore_event **out);
/** @} */
/* ==== END SECTION: IPC events ==== */

/* ==== SECTION: green contexts ==== */
/**
 * @defgroup green Green contexts
 *
 * A green context owns a share of a device's SMs (CUDA 12.4+ drivers; streams on it 12.5+):
 * work launched on its streams runs only on those SMs, so an inference server can sit beside
 * training, or a tuner can give a kernel N SMs. The device's SMs are split into groups of at
 * least a number of SMs, by the driver's rules: a group is at least
 * cucore_green_sm_info::min_partition_sms and a multiple of
 * cucore_green_sm_info::alignment_sms (on compute capability 9.0, 8 and 8); a split that cannot
 * be made is refused with those numbers in the message. A green context gives a cucore_device
 * (cucore_green_get_device) that works in it: streams made on it (cucore_green_stream_create, or
 * cucore_stream_create on that device) take every cucore call, and launches on them go
 * through the usual checked path. A green context is current to one thread at a time: use
 * each one from one thread. Only SMs are split: work-queue resources (cuda.core's
 * WorkqueueResource) are not offered, since CUDA 13.0's headers, which cucore is built with,
 * do not declare them (CU_DEV_RESOURCE_TYPE_SM is the only resource type there). Version gate:
 * a driver older than an entry point needs returns CUCORE_DRIVER_TOO_OLD (cucore's status for
 * a driver too old for a call) with a message naming the entry point and the CUDA version it
 * needs (12.4 for the split and the green context, 12.5 for cucore_green_stream_create).
 * @{
 */

/** A green context: a share of a device's SMs. */
typedef struct cucore_green cucore_green;

/** What a device's SMs allow (cuDeviceGetDevResource, CU_DEV_RESOURCE_TYPE_SM). */
typedef struct cucore_green_sm_info {
  unsigned sm_count;          /**< SMs of the device */
  unsigned min_partition_sms; /**< the fewest SMs a group may have */
  unsigned alignment_sms;     /**< a group's SMs are a multiple of this (co-scheduled SMs) */
} cucore_green_sm_info;

/** Split flag: treat each SM alone (finer groups, no large thread block clusters). */
#define CUCORE_GREEN_IGNORE_COSCHEDULING 0x1u
/** Split flag (compute capability 9.0+): groups that allow the largest clusters. */
#define CUCORE_GREEN_MAX_CLUSTER 0x2u

/** The SM facts of `dev` that a split follows.
 * @retval CUCORE_INVALID_ARGUMENT `dev` or `out` is NULL.
 * @retval CUCORE_DRIVER_TOO_OLD the driver has no green contexts (CUDA 12.4+). */
CUCORE_API cucore_status cucore_green_get_sm_info(cucore_device *dev, cucore_green_sm_info *out);
/** What a split of `dev` into groups of at least `min_sms` SMs would give, without making
 * contexts: `groups` (how many fit), `sms_per_group` (each group's SMs, `min_sms` rounded
 * up by the driver's rules) and `remaining_sms` (those left over); any output may be NULL.
 * `flags`: 0, CUCORE_GREEN_IGNORE_COSCHEDULING, CUCORE_GREEN_MAX_CLUSTER.
 * @retval CUCORE_INVALID_ARGUMENT `min_sms` is 0 or above the device's SMs, or unknown flags.
 * @retval CUCORE_DRIVER_TOO_OLD the driver has no green contexts. */
CUCORE_API cucore_status cucore_green_split_query(cucore_device *dev, unsigned min_sms,
                                                  unsigned flags, unsigned *groups,
                                                  unsigned *sms_per_group, unsigned *remaining_sms);
/** Splits `dev`'s SMs into `count` groups of at least `min_sms` SMs each and makes a green
 * context of each into out[0..count-1]; with `remainder` not NULL, the SMs left over make one
 * more (NULL when none are left; it has fewer guarantees than the groups). `flags` as for
 * cucore_green_split_query. On failure nothing is made and every output is NULL. Destroy each
 * with cucore_green_destroy.
 * @retval CUCORE_INVALID_ARGUMENT `count` or `min_sms` is 0, or the split cannot give `count`
 * groups: the message gives the device's SMs, the minimum and the granularity, what `min_sms`
 * rounds up to, and how many such groups fit.
 * @retval CUCORE_DRIVER_TOO_OLD the driver has no green contexts. */
CUCORE_API cucore_status cucore_green_split(cucore_device *dev, unsigned count, unsigned min_sms,
                                            unsigned flags, cucore_green **out,
                                            cucore_green **remainder);
/** The SMs the green context owns.
 * @retval CUCORE_INVALID_ARGUMENT a NULL argument. */
CUCORE_API cucore_status cucore_green_get_sm_count(const cucore_green *g, unsigned *sm_count);
/** A device handle that works in the green context (its memory is the device's): streams,
 * events, allocations and launches made through it run on the green context's SMs. It
 * belongs to `g`: cucore_device_close refuses it (CUCORE_MISUSE); it is valid until
 * cucore_green_destroy.
 * @retval CUCORE_INVALID_ARGUMENT a NULL argument. */
CUCORE_API cucore_status cucore_green_get_device(cucore_green *g, cucore_device **dev);
/** A stream of the green context (cuGreenCtxStreamCreate; non-blocking, as the driver
 * requires) at `priority` (as cucore_stream_create). Destroy it with cucore_stream_destroy
 * before the green context.
 * @retval CUCORE_INVALID_ARGUMENT a NULL argument, or `priority` outside the range.
 * @retval CUCORE_DRIVER_TOO_OLD the driver lacks cuGreenCtxStreamCreate (CUDA 12.5+). */
CUCORE_API cucore_status cucore_green_stream_create(cucore_green *g, int priority,
                                                    cucore_stream **out);
/** Destroys a green context (cuGreenCtxDestroy); its streams must be destroyed first (the
 * driver does not). NULL is a no-op. */
CUCORE_API cucore_status cucore_green_destroy(cucore_green *g);
/** @} */
/* ==== END SECTION: green contexts ==== */

/* ==== SECTION: checkpoint ==== */
/**
 * @defgroup checkpoint Checkpointing another process
 *
 * The driver's checkpoint calls (CUDA 12.8+ drivers, Linux) for a CUDA process of this user,
 * named by its pid: lock it (its CUDA calls then block), checkpoint it (its GPU memory moves to
 * host memory and its GPU resources are released; a tool such as CRIU can then save the
 * process), restore it (onto the same GPUs or, by UUID, onto others of the same chip), unlock
 * it. The driver must be loadable here; this process needs no device. A driver without the
 * entry points gives CUCORE_DRIVER_TOO_OLD naming the version needed; one that refuses a step
 * for the process's state says the state it is in.
 * @{
 */

/** The CUDA state of a process (cucore_checkpoint_get_state()). */
typedef enum cucore_process_state {
  CUCORE_PROCESS_RUNNING = 0,      /**< runs (the default) */
  CUCORE_PROCESS_LOCKED = 1,       /**< its CUDA calls block (locked or restored) */
  CUCORE_PROCESS_CHECKPOINTED = 2, /**< its GPU memory is on the host, its GPU resources freed */
  CUCORE_PROCESS_FAILED = 3        /**< a checkpoint or restore failed beyond repair */
} cucore_process_state;

/** A GPU to restore onto another: UUIDs as in cucore_device_props.uuid ("GPU-" prefix
 * allowed). */
typedef struct cucore_checkpoint_gpu_pair {
  char old_uuid[48]; /**< a GPU the process used when checkpointed */
  char new_uuid[48]; /**< the GPU (same chip, enough memory) to restore it onto */
} cucore_checkpoint_gpu_pair;

/** The state of process `pid`.
 * @retval CUCORE_INVALID_ARGUMENT `pid` <= 0.
 * @retval CUCORE_DRIVER_TOO_OLD the driver lacks cuCheckpointProcessGetState (12.8). */
CUCORE_API cucore_status cucore_checkpoint_get_state(int pid, cucore_process_state *out);
/** Locks running process `pid`: waits up to `timeout_ms` (0: no limit) for its CUDA work to
 * reach a point where it can be locked.
 * @retval CUCORE_NOT_READY the timeout passed (the driver's CUDA_ERROR_TIMEOUT or
 *         CUDA_ERROR_NOT_READY, kept as the native code); the process still runs. */
CUCORE_API cucore_status cucore_checkpoint_lock(int pid, unsigned timeout_ms);
/** Checkpoints locked process `pid`: its GPU memory to the host, its GPU resources released. */
CUCORE_API cucore_status cucore_checkpoint_process(int pid);
/** Restores checkpointed process `pid` (it is then locked). `count` pairs (0: none, the same
 * GPUs) remap GPUs; when given, they must name every GPU checkpointed with it, which is every
 * GPU visible to it, not only those it used (two H200s: a pair for device 0 alone is refused
 * with CUDA_ERROR_INVALID_VALUE for a process that used device 0 only).
 * @retval CUCORE_INVALID_ARGUMENT a UUID that is not one, an old GPU named twice, `pairs`
 *         NULL with `count` > 0, more than 64 pairs. */
CUCORE_API cucore_status cucore_checkpoint_restore(int pid, const cucore_checkpoint_gpu_pair *pairs,
                                                   size_t count);
/** Unlocks locked process `pid`: its CUDA calls go on. */
CUCORE_API cucore_status cucore_checkpoint_unlock(int pid);
/** @} */
/* ==== END SECTION: checkpoint ==== */

#ifdef __cplusplus
}
#endif
#endif /* CUCORE_PART_DEVICES_H */
