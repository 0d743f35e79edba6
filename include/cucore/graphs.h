/**
 * @file
 * @brief CUDA graphs: capture, nodes, executable graphs and their updates, graph memory nodes.
 *
 * Graphs made by stream capture or node by node (kernel nodes checked as launches are),
 * executable graphs with whole-graph and per-node updates, and the allocation and free
 * nodes whose memory the graph owns.
 *
 * A part of cucore's public header: a program includes `<cucore.h>`, which includes every
 * part in the order of the data path; this part also compiles alone.
 */
#ifndef CUCORE_PART_GRAPHS_H
#define CUCORE_PART_GRAPHS_H

#include "base.h"
#include "devices.h"
#include "memory.h"
#include "kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== SECTION: CUDA graphs ==== */
/**
 * @defgroup graph CUDA graphs
 *
 * Work recorded once and replayed many times for a fraction of the launch cost: a graph
 * (cucore_graph) is a set of nodes -- kernels, copies, fills, host functions, event records and
 * waits, child graphs, conditional nodes -- and the dependencies between them; an executable
 * graph (cucore_graph_exec) is a graph instantiated for launching.
 *
 * A graph is made either by **capturing** what cucore does on a stream
 * (cucore_stream_begin_capture ... cucore_stream_end_capture: launches with every attribute,
 * copies and fills given a stream, host functions, and the event records and waits that fork
 * work to other streams and join it back), or **node by node** (cucore_graph_add_kernel_node
 * and the other cucore_graph_add_ functions). A kernel node is checked exactly as
 * cucore_launch checks a launch (the same code: the arguments first, then block, grid, shared
 * memory, clusters, attributes, cooperative grids), and its argument values are copied into the
 * node. An executable graph's kernel nodes can be given new arguments (checked the same way; a
 * wrong list leaves the node as it was) or new dimensions, and be disabled, without
 * instantiating again; cucore_graph_exec_update takes every node's parameters from another
 * graph of the same shape, and explains a refusal (which node, why).
 *
 * **Lifetimes.** What a graph uses stays alive as long as a graph or an executable graph made
 * from it needs it: kernels (and so their objects), events, child graphs, host data given a
 * destructor, argument values. Handles may be destroyed in any order: an executable graph keeps
 * its graph, a graph keeps what its nodes use, and what a graph used is released once the
 * driver reports that no graph or executable graph needs it any more (launches still running
 * included) -- by cucore, at its next graph call or when a device closes (cucore_device_close
 * waits up to a second for launches still running).
 *
 * **Captures cucore knows.** cucore follows the streams of a capture it began: the origin, and
 * each stream that waited (cucore_stream_wait_event) on an event recorded in the capture.
 * Calls that would invalidate such a capture are refused first, naming the call and the
 * capture, and the capture goes on (CUCORE_STREAM_CAPTURE): synchronising with or querying a
 * capturing stream or an event recorded in a capture, device synchronisation, allocations,
 * frees and synchronous copies or fills where the capture's mode forbids them (global mode:
 * every thread; thread-local: the thread that began it), and launches or copies on the legacy
 * default stream while a stream that synchronises with it captures. A capture the driver
 * invalidated anyway (a direct driver call, another library) is reported by the calls that
 * meet it and by cucore_stream_end_capture, which ends it so that the stream is usable again.
 * A capture begun outside cucore is not followed: the driver still refuses what it forbids and
 * cucore explains its answer, but kernels launched into it are not kept alive by cucore.
 *
 * **Thread safety.** Building a graph (adding nodes, dependencies, conditions) is not
 * synchronised: one thread at a time per graph. Launching, uploading and updating an executable
 * graph must not race with each other on the same executable graph. Destroying is safe from
 * any thread once nothing else uses that handle; the references between graphs, executable
 * graphs and kernels are counted atomically.
 *
 * Needs a driver for CUDA 12.0 or newer (12.3 for conditional nodes and capturing into an
 * existing graph, 12.8 for if/else and switch nodes); an older one gives CUCORE_DRIVER_TOO_OLD
 * naming the function.
 * @{
 */

/** A graph being built (a CUgraph and what its nodes use): made by cucore_graph_create() or
 * cucore_stream_end_capture(), destroyed with cucore_graph_destroy(). The body graphs of a
 * conditional node are graphs too, owned by that node. */
typedef struct cucore_graph cucore_graph;
/** A node of a graph, made by a cucore_graph_add_ function. Owned by its graph: valid while the
 * graph (or an executable graph made from it) lives; never destroyed by the caller. */
typedef struct cucore_graph_node cucore_graph_node;
/** An executable graph (CUgraphExec): made by cucore_graph_instantiate(), launched with
 * cucore_graph_launch(), destroyed with cucore_graph_exec_destroy(). */
typedef struct cucore_graph_exec cucore_graph_exec;

/** How a capture limits other calls (the values of CUstreamCaptureMode). */
typedef enum cucore_capture_mode {
  CUCORE_CAPTURE_GLOBAL = 0,       /**< potentially unsafe calls are refused on every thread
                                        (the driver's default) */
  CUCORE_CAPTURE_THREAD_LOCAL = 1, /**< ... on the thread that began the capture only */
  CUCORE_CAPTURE_RELAXED = 2       /**< not refused (calls that conflict with any capture still
                                        are); any thread may end the capture */
} cucore_capture_mode;

/** Begins capturing the work queued on `s` into a new graph (cuStreamBeginCapture). The work
 * does not run; cucore_stream_end_capture() gives the graph. Other streams join the capture by
 * waiting on an event recorded in it (fork) and must be joined back (the origin waits on an
 * event recorded on each) before it ends. A capture begun in global or thread-local mode is
 * ended by the thread that began it.
 * @retval CUCORE_INVALID_ARGUMENT `s` is a default stream (legacy or per-thread: capture on a
 *         stream of your own), or `mode` is not a cucore_capture_mode.
 * @retval CUCORE_STREAM_CAPTURE the stream is capturing already.
 * @retval CUCORE_DRIVER_TOO_OLD the driver has no stream capture. */
CUCORE_API cucore_status cucore_stream_begin_capture(cucore_stream *s, cucore_capture_mode mode);
/** Begins capturing the work queued on `s` into the existing graph `g` (for instance the body
 * of a conditional node), the first captured work depending on `deps` (`dep_count` nodes of
 * `g`; NULL when 0). cucore_stream_end_capture() ends it; `g` then holds the captured nodes.
 * As cucore_stream_begin_capture() otherwise.
 * @retval CUCORE_INVALID_ARGUMENT a dependency is not a node of `g`, or `g` is of another device.
 * @retval CUCORE_DRIVER_TOO_OLD before CUDA 12.3. */
CUCORE_API cucore_status cucore_stream_begin_capture_to_graph(cucore_stream *s, cucore_graph *g,
                                                              cucore_graph_node *const *deps,
                                                              size_t dep_count,
                                                              cucore_capture_mode mode);
/** Ends the capture begun on `s` and gives the captured graph in `*out` (a new graph to destroy
 * with cucore_graph_destroy()). For a capture into an existing graph, `*out` is that graph
 * again (no new reference: destroy it once), and `out` may be NULL. Whatever the outcome, the
 * capture is over and every stream that took part is usable again.
 * @retval CUCORE_STREAM_CAPTURE the stream is not capturing, joined the capture elsewhere
 *         (end it on its origin), is ended by another thread than the one that began it (the
 *         capture goes on), or the driver invalidated the capture (the message names the first
 *         failing call cucore saw) or could not end it (a forked stream not joined back). */
CUCORE_API cucore_status cucore_stream_end_capture(cucore_stream *s, cucore_graph **out);

/** In the capture `origin` takes part in (one cucore began), forks the capture onto `count`
 * helper streams: each waits on the work captured on `origin` so far (an event made, recorded
 * and destroyed by cucore) and joins the capture; work queued on them is captured in parallel
 * branches. Join them back with cucore_stream_capture_join() before the capture ends.
 * @retval CUCORE_STREAM_CAPTURE `origin` is in no capture cucore began, or a helper is in
 *         another capture (the message names the helper's index).
 * @retval CUCORE_INVALID_ARGUMENT `helpers` NULL with a count, a helper NULL or `origin`. */
CUCORE_API cucore_status cucore_stream_capture_fork(cucore_stream *origin,
                                                    cucore_stream *const *helpers, size_t count);
/** Joins `count` helper streams back into `origin`: the work captured on `origin` from now on
 * runs after the work captured on each helper, and the helpers leave the capture. As
 * cucore_stream_capture_fork(). */
CUCORE_API cucore_status cucore_stream_capture_join(cucore_stream *origin,
                                                    cucore_stream *const *helpers, size_t count);
/** Embeds graph `child` in the capture `s` takes part in, after the work captured on `s` so far
 * (a child-graph node: the driver clones `child`); the work captured on `s` afterwards runs
 * after it (cuStreamUpdateCaptureDependencies). The capture keeps what `child`'s nodes use.
 * @retval CUCORE_STREAM_CAPTURE `s` is in no capture cucore began, or it was invalidated.
 * @retval CUCORE_INVALID_ARGUMENT `child` is a body, of another device, or has conditional or
 *         memory nodes (which a child-graph node cannot take). */
CUCORE_API cucore_status cucore_stream_capture_add_graph(cucore_stream *s, cucore_graph *child);

/** The capture state of a stream. */
typedef enum cucore_capture_status {
  CUCORE_CAPTURE_NONE = 0,       /**< not capturing */
  CUCORE_CAPTURE_ACTIVE = 1,     /**< capturing */
  CUCORE_CAPTURE_INVALIDATED = 2 /**< capturing, but the capture failed: end it to go on */
} cucore_capture_status;

/** What cucore_stream_get_capture_info() tells. */
typedef struct cucore_capture_info {
  cucore_capture_status status; /**< the driver's answer (cuStreamIsCapturing) */
  uint64_t id;       /**< the driver's id of the capture sequence, unique in the process (0
                           when none, or when the driver cannot tell: before CUDA 11.3) */
  size_t node_count; /**< nodes the graph being captured has so far (0 when none or unknown) */
  int by_cucore;     /**< 1 when cucore began the capture and follows this stream in it */
  int mode;          /**< the capture's cucore_capture_mode when by_cucore, else -1 */
  int is_origin;     /**< 1 when the capture began on this stream (and must end here) */
} cucore_capture_info;

/** Whether `s` is capturing, and what cucore knows of the capture.
 * @retval CUCORE_STREAM_CAPTURE `s` is the legacy default stream and a stream that
 *         synchronises with it is capturing (the driver cannot answer for it then). */
CUCORE_API cucore_status cucore_stream_get_capture_info(cucore_stream *s, cucore_capture_info *out);

/** Captures `count` (1..1000000) launches of `k` with `cfg` and `args` on cfg->stream into a
 * new graph (thread-local mode), checked as cucore_launch() checks them: what `cucore run
 * --graph N` replays. Each launch is checked; on a failure the capture is ended and the
 * launch's error returned. Destroy `*out` with cucore_graph_destroy().
 * @retval CUCORE_INVALID_ARGUMENT `count` out of range, or the errors of cucore_launch(). */
CUCORE_API cucore_status cucore_graph_capture_launches(cucore_kernel *k,
                                                       const cucore_launch_config *cfg,
                                                       cucore_args *args, int count,
                                                       cucore_graph **out);

/** CONSTRUCTOR: an empty graph on `dev` (cuGraphCreate); every node added to it runs there.
 * Destroy with cucore_graph_destroy(). */
CUCORE_API cucore_status cucore_graph_create(cucore_device *dev, cucore_graph **out);
/** DESTRUCTOR: drops the caller's graph. Executable graphs made from it keep it (and what its
 * nodes use) until they are destroyed. NULL, and the body graph of a conditional node (owned
 * by its node), are no-ops. */
CUCORE_API cucore_status cucore_graph_destroy(cucore_graph *g);
/** The number of nodes directly in `g` (cuGraphGetNodes: captured nodes included, the nodes of
 * child graphs and conditional bodies not). */
CUCORE_API cucore_status cucore_graph_get_node_count(cucore_graph *g, size_t *count);
/** The device a graph runs on (borrowed). */
CUCORE_API cucore_status cucore_graph_get_device(const cucore_graph *g, cucore_device **dev);
/** The native CUgraph, owned by `g`: do not destroy it. */
CUCORE_API cucore_status cucore_graph_get_native(cucore_graph *g, void **cugraph);

/** Kinds of nodes (the values of CUgraphNodeType). */
typedef enum cucore_graph_node_type {
  CUCORE_GRAPH_NODE_KERNEL = 0,           /**< a kernel launch */
  CUCORE_GRAPH_NODE_MEMCPY = 1,           /**< a copy */
  CUCORE_GRAPH_NODE_MEMSET = 2,           /**< a fill */
  CUCORE_GRAPH_NODE_HOST = 3,             /**< a host function */
  CUCORE_GRAPH_NODE_GRAPH = 4,            /**< a child graph */
  CUCORE_GRAPH_NODE_EMPTY = 5,            /**< nothing (a point to depend on) */
  CUCORE_GRAPH_NODE_WAIT_EVENT = 6,       /**< waits for an event */
  CUCORE_GRAPH_NODE_EVENT_RECORD = 7,     /**< records an event */
  CUCORE_GRAPH_NODE_EXT_SEMAS_SIGNAL = 8, /**< signals external semaphores (found in graphs
                                               made elsewhere; cucore adds none) */
  CUCORE_GRAPH_NODE_EXT_SEMAS_WAIT = 9,   /**< waits on external semaphores (likewise) */
  CUCORE_GRAPH_NODE_MEM_ALLOC = 10, /**< allocates graph memory (cucore_graph_add_mem_alloc_node) */
  CUCORE_GRAPH_NODE_MEM_FREE = 11,  /**< frees it (cucore_graph_add_mem_free_node) */
  CUCORE_GRAPH_NODE_BATCH_MEM_OP = 12, /**< stream memory operations (found in graphs made
                                            elsewhere) */
  CUCORE_GRAPH_NODE_CONDITIONAL = 13   /**< if, if/else, switch or while over body graphs */
} cucore_graph_node_type;

/** "kernel", "memcpy", "memset", "host", "graph", "empty", "wait_event", "event_record",
 * "ext_semas_signal", "ext_semas_wait", "conditional", "mem_alloc", "mem_free",
 * "batch_mem_op"; "unknown" otherwise. Never NULL; static storage. */
CUCORE_API const char *cucore_graph_node_type_name(cucore_graph_node_type type);
/** The kind of a node. */
CUCORE_API cucore_status cucore_graph_node_get_type(const cucore_graph_node *node,
                                                    cucore_graph_node_type *type);
/** The native CUgraphNode, owned by the node's graph. */
CUCORE_API cucore_status cucore_graph_node_get_native(const cucore_graph_node *node, void **cunode);

/**
 * Adds a kernel node: `k` launched with `cfg` (grid, block, dynamic shared memory and
 * attributes; cfg->stream is not used and may be NULL, else it must be of the graph's device)
 * and the values of `args` (copied into the node: `args` may change or go afterwards). The
 * node runs after the `dep_count` nodes of `deps` (NULL when 0), all of `g`.
 * Checked as cucore_launch() checks a launch, in the same order: the errors of
 * cucore_args_check() (CUCORE_ARG_*) come first, before `g` is looked at (so they can be had
 * without a GPU), then the dependencies, then the configuration against the kernel on the
 * graph's device. The attribute CUCORE_LAUNCH_DEVICE_UPDATABLE_KERNEL_NODE is accepted here
 * (a launch refuses it). The graph keeps `k` alive.
 * @retval CUCORE_INVALID_ARGUMENT `args` was made for another kernel; a dependency is NULL,
 *         repeated or of another graph; cfg->stream is of another device.
 * @retval CUCORE_LAUNCH_CONFIG a pre-flight check failed; the message has the arithmetic.
 * @retval CUCORE_NO_DEVICE the kernel was looked up without a GPU.
 */
CUCORE_API cucore_status cucore_graph_add_kernel_node(cucore_graph *g,
                                                      cucore_graph_node *const *deps,
                                                      size_t dep_count, cucore_kernel *k,
                                                      const cucore_launch_config *cfg,
                                                      cucore_args *args, cucore_graph_node **out);
/** Adds a copy of `bytes` (> 0) from host `src` to device `dst`. `src` is read when the node
 * runs (it must stay valid while the graph may run; pinned memory from cucore_host_alloc()
 * gives asynchronous copies). Dependencies as cucore_graph_add_kernel_node(). Both ranges
 * are checked against the memory cucore recorded, as cucore_memcpy() checks them.
 * @retval CUCORE_INVALID_ARGUMENT a NULL or 0 address, or 0 bytes.
 * @retval CUCORE_OUT_OF_BOUNDS a range runs past its allocation. */
CUCORE_API cucore_status cucore_graph_add_memcpy_htod_node(cucore_graph *g,
                                                           cucore_graph_node *const *deps,
                                                           size_t dep_count, cucore_devptr dst,
                                                           const void *src, size_t bytes,
                                                           cucore_graph_node **out);
/** Adds a copy of `bytes` from device `src` to host `dst` (written when the node runs), as
 * cucore_graph_add_memcpy_htod_node(). */
CUCORE_API cucore_status cucore_graph_add_memcpy_dtoh_node(cucore_graph *g,
                                                           cucore_graph_node *const *deps,
                                                           size_t dep_count, void *dst,
                                                           cucore_devptr src, size_t bytes,
                                                           cucore_graph_node **out);
/** Adds a copy of `bytes` from device `src` to device `dst`, as
 * cucore_graph_add_memcpy_htod_node(). */
CUCORE_API cucore_status cucore_graph_add_memcpy_dtod_node(cucore_graph *g,
                                                           cucore_graph_node *const *deps,
                                                           size_t dep_count, cucore_devptr dst,
                                                           cucore_devptr src, size_t bytes,
                                                           cucore_graph_node **out);
/** Adds a fill of `count` (> 0) elements of `element_size` bytes (1, 2 or 4) at device `dst`
 * with `value` (its low `element_size` bytes), as cucore_graph_add_memcpy_htod_node(); the
 * range is checked against the allocation `dst` is in (CUCORE_OUT_OF_BOUNDS).
 * @retval CUCORE_INVALID_ARGUMENT another element size, a value that does not fit it, a 0
 *         address or count.
 * @retval CUCORE_ARG_ALIGNMENT `dst` is not aligned to the element size. */
CUCORE_API cucore_status cucore_graph_add_memset_node(cucore_graph *g,
                                                      cucore_graph_node *const *deps,
                                                      size_t dep_count, cucore_devptr dst,
                                                      uint32_t value, unsigned element_size,
                                                      size_t count, cucore_graph_node **out);
/** Adds a 2D fill: `height` rows of `width` elements of `element_size` bytes (1, 2 or 4), rows
 * `pitch` bytes apart (at least a row; ignored for one row), from device `dst`, with `value`.
 * The footprint is checked against the allocation `dst` is in (as cucore_memset_2d() checks
 * it). Dependencies as cucore_graph_add_memcpy_htod_node().
 * @retval CUCORE_INVALID_ARGUMENT another element size, a value that does not fit it, a 0
 *         address, width or height, a pitch below the row.
 * @retval CUCORE_ARG_ALIGNMENT `dst` is not aligned to the element size.
 * @retval CUCORE_OUT_OF_BOUNDS the fill runs past its allocation. */
CUCORE_API cucore_status cucore_graph_add_memset_2d_node(cucore_graph *g,
                                                         cucore_graph_node *const *deps,
                                                         size_t dep_count, cucore_devptr dst,
                                                         size_t pitch, uint32_t value,
                                                         unsigned element_size, size_t width,
                                                         size_t height, cucore_graph_node **out);
/** Adds a 2D or 3D copy between pitched memory (host addresses through CUCORE_HOST_ADDR) and
 * arrays of the graph's device, as cucore_memcpy_3d() describes it (`copy->depth` 1 for 2D):
 * each side's footprint is checked against its allocation or its array's extent when the node
 * is added. The memory must stay valid while the graph may run. Dependencies as
 * cucore_graph_add_memcpy_htod_node().
 * @retval CUCORE_INVALID_ARGUMENT a 0 address, a size of 0, a pitch below the row or rows per
 *         slice below the rows, an array of another device.
 * @retval CUCORE_OUT_OF_BOUNDS a side runs past its allocation or array. */
CUCORE_API cucore_status cucore_graph_add_memcpy_3d_node(cucore_graph *g,
                                                         cucore_graph_node *const *deps,
                                                         size_t dep_count,
                                                         const cucore_copy_3d *copy,
                                                         cucore_graph_node **out);
/** Adds a host function node: `fn(user)` runs on a driver thread when the node runs (it must
 * not call CUDA). When `destroy` is not NULL, the graph owns `user`: destroy(user) is called
 * (by cucore, from a later cucore call or when a device closes) once no graph or executable
 * graph can run the node any more -- also when adding the node fails. */
CUCORE_API cucore_status cucore_graph_add_host_node(cucore_graph *g, cucore_graph_node *const *deps,
                                                    size_t dep_count, void (*fn)(void *user),
                                                    void *user, void (*destroy)(void *user),
                                                    cucore_graph_node **out);
/** Adds a node that records `ev` (of the graph's device) when it runs. The graph keeps `ev`
 * alive. */
CUCORE_API cucore_status cucore_graph_add_event_record_node(cucore_graph *g,
                                                            cucore_graph_node *const *deps,
                                                            size_t dep_count, cucore_event *ev,
                                                            cucore_graph_node **out);
/** Adds a node that waits for `ev` (recorded by a stream or another graph) before the nodes
 * that depend on it run. The graph keeps `ev` alive. */
CUCORE_API cucore_status cucore_graph_add_event_wait_node(cucore_graph *g,
                                                          cucore_graph_node *const *deps,
                                                          size_t dep_count, cucore_event *ev,
                                                          cucore_graph_node **out);
/** Adds an empty node: a point other nodes can depend on (joining many into one). */
CUCORE_API cucore_status cucore_graph_add_empty_node(cucore_graph *g,
                                                     cucore_graph_node *const *deps,
                                                     size_t dep_count, cucore_graph_node **out);
/** Adds a node that runs a copy of `child` (cloned now: later changes to `child` do not reach
 * it, and `child` may be destroyed). The graph keeps what `child`'s nodes use.
 * @retval CUCORE_INVALID_ARGUMENT `child` is `g`, of another device, or has conditional nodes
 *         (the driver does not take those in a child graph). */
CUCORE_API cucore_status cucore_graph_add_child_graph_node(cucore_graph *g,
                                                           cucore_graph_node *const *deps,
                                                           size_t dep_count, cucore_graph *child,
                                                           cucore_graph_node **out);
/** Makes `to` depend on `from` (both nodes of `g`).
 * @retval CUCORE_INVALID_ARGUMENT a node of another graph, or `from` == `to`. */
CUCORE_API cucore_status cucore_graph_add_dependency(cucore_graph *g, cucore_graph_node *from,
                                                     cucore_graph_node *to);
/** Gives a kernel node of a graph (not of an executable graph: see
 * cucore_graph_exec_set_kernel_args()) new argument values, checked as cucore_launch() checks
 * them; executable graphs made before are not changed. A wrong list leaves the node as it was.
 * @retval CUCORE_INVALID_ARGUMENT `node` is not a kernel node, or `args` was made for another
 *         kernel. */
CUCORE_API cucore_status cucore_graph_kernel_node_set_args(cucore_graph_node *node,
                                                           cucore_args *args);

/** A condition of a conditional node (the value of a CUgraphConditionalHandle): passed to a
 * kernel as a 64-bit integer (cucore_args_set_u64, or CUCORE_ARG of this type), which sets it
 * from the device with cudaGraphSetConditional (see CUCORE_GRAPH_SET_CONDITIONAL_DECL). */
typedef uint64_t cucore_graph_condition;

/** Flags of cucore_graph_condition_create(). */
enum {
  CUCORE_CONDITION_DEFAULT = 0,       /**< the value stays as the last kernel set it */
  CUCORE_CONDITION_ASSIGN_DEFAULT = 1 /**< the default value is assigned at each launch */
};

/** Kinds of conditional nodes (the values of CUgraphConditionalNodeType). */
typedef enum cucore_conditional_type {
  CUCORE_CONDITIONAL_IF = 0,    /**< body 0 runs when the condition is not 0; with 2 bodies,
                                     body 1 runs when it is 0 (if/else, CUDA 12.8+) */
  CUCORE_CONDITIONAL_WHILE = 1, /**< body 0 runs again and again while the condition is not 0
                                     (tested before each run) */
  CUCORE_CONDITIONAL_SWITCH = 2 /**< body n runs when the condition is n; none when it is not
                                     below the number of bodies (CUDA 12.8+) */
} cucore_conditional_type;

/** The declaration a kernel needs to set a condition from the device: put this text before
 * the kernel's source (C string concatenation: CUCORE_GRAPH_SET_CONDITIONAL_DECL "extern
 * \"C\" __global__ ..."). NVRTC knows the type cudaGraphConditionalHandle but not the function
 * without a header; this declares it as the toolkit's cuda_device_runtime_api.h does, which
 * NVRTC compiles without -rdc and without linking libcudadevrt: the driver resolves the call
 * when it loads the code (CUDA 12.3+; checked with NVRTC 13.0 for cubin and PTX targets).
 * Including <cuda_device_runtime_api.h> instead works too, with a warning about an internal
 * header. */
#define CUCORE_GRAPH_SET_CONDITIONAL_DECL                                              \
  "extern \"C\" __device__ __cudart_builtin__ void CUDARTAPI cudaGraphSetConditional(" \
  "cudaGraphConditionalHandle handle, unsigned int value);\n"

/** Creates a condition for conditional nodes of `g` (cuGraphConditionalHandleCreate): its
 * value at each launch is `default_value` with CUCORE_CONDITION_ASSIGN_DEFAULT, else what a
 * kernel last set. Every condition made must be used by a conditional node of `g` before the
 * graph is instantiated (the driver refuses unused ones).
 * @retval CUCORE_INVALID_ARGUMENT unknown flags.
 * @retval CUCORE_DRIVER_TOO_OLD before CUDA 12.3. */
CUCORE_API cucore_status cucore_graph_condition_create(cucore_graph *g, unsigned default_value,
                                                       unsigned flags, cucore_graph_condition *out);
/** Adds a conditional node over condition `cond` (made for `g` by
 * cucore_graph_condition_create()) with `body_count` body graphs: 1 for WHILE; 1 or 2 for IF
 * (2: if/else); 1 or more for SWITCH. `bodies` (an array of `body_count`) receives the body
 * graphs, empty, owned by the node: fill them with cucore_graph_add_ functions or by
 * capturing into them (cucore_stream_begin_capture_to_graph()). The driver allows in bodies
 * kernel, empty, child-graph, memcpy, memset and conditional nodes, all on one device.
 * @retval CUCORE_INVALID_ARGUMENT an unknown type, or a body count the type does not take.
 * @retval CUCORE_DRIVER_TOO_OLD before CUDA 12.3, or 12.8 for if/else and switch. */
CUCORE_API cucore_status cucore_graph_add_conditional_node(
    cucore_graph *g, cucore_graph_node *const *deps, size_t dep_count, cucore_graph_condition cond,
    cucore_conditional_type type, unsigned body_count, cucore_graph **bodies,
    cucore_graph_node **out);

/* ---- inspecting and editing a graph ---- */

/** Lists: each call below copies up to `capacity` entries into its array (which may be NULL
 * when `capacity` is 0) and sets *count to how many there are, so one call with 0 sizes the
 * array and a second fills it. Nodes the driver made -- captured work, nodes added through the
 * native handles, the nodes of a child graph -- are taken in on first sight: each gets a
 * cucore_graph_node, owned by the graph as the others are, the same handle every time. Taking
 * nodes in changes the graph's structure: list a graph from one thread at a time, as it is
 * built. */

/** The nodes directly in `g` in the driver's order (cuGraphGetNodes), captured ones included;
 * not the nodes of child graphs or conditional bodies (list those graphs' own). */
CUCORE_API cucore_status cucore_graph_get_nodes(cucore_graph *g, cucore_graph_node **nodes,
                                                size_t capacity, size_t *count);
/** The nodes of `g` that depend on no other (cuGraphGetRootNodes), as cucore_graph_get_nodes(). */
CUCORE_API cucore_status cucore_graph_get_root_nodes(cucore_graph *g, cucore_graph_node **nodes,
                                                     size_t capacity, size_t *count);

/** Kinds of edges (the values of CUgraphDependencyType). */
typedef enum cucore_edge_type {
  CUCORE_EDGE_DEFAULT = 0,     /**< the downstream node waits for the upstream one to finish */
  CUCORE_EDGE_PROGRAMMATIC = 1 /**< programmatic dependent launch between two kernel nodes */
} cucore_edge_type;

/** One edge of a graph: `to` depends on `from`. The ports are the driver's (0: the whole
 * node; kernel nodes define others, CU_GRAPH_KERNEL_NODE_PORT_*). */
typedef struct cucore_graph_edge {
  cucore_graph_node *from; /**< the upstream node */
  cucore_graph_node *to;   /**< the node that depends on it */
  cucore_edge_type type;   /**< default or programmatic */
  unsigned from_port;      /**< when the dependency is triggered from `from` */
  unsigned to_port;        /**< what part of `to` depends */
} cucore_graph_edge;

/** The edges of `g` (cuGraphGetEdges), as cucore_graph_get_nodes() lists.
 * @retval CUCORE_DRIVER_TOO_OLD before CUDA 12.3 (edges with data). */
CUCORE_API cucore_status cucore_graph_get_edges(cucore_graph *g, cucore_graph_edge *edges,
                                                size_t capacity, size_t *count);
/** The edges into `node`: what it depends on (each edge's `from`; its `to` is `node`). */
CUCORE_API cucore_status cucore_graph_node_get_dependencies(cucore_graph_node *node,
                                                            cucore_graph_edge *edges,
                                                            size_t capacity, size_t *count);
/** The edges out of `node`: what depends on it (each edge's `to`). */
CUCORE_API cucore_status cucore_graph_node_get_dependents(cucore_graph_node *node,
                                                          cucore_graph_edge *edges, size_t capacity,
                                                          size_t *count);
/** Removes the edge from `from` to `to` of `g` (cuGraphRemoveDependencies), whatever its type
 * and ports. Executable graphs made before are not changed.
 * @retval CUCORE_INVALID_ARGUMENT a node of another graph, or no such edge (the message lists
 *         what `to` depends on). */
CUCORE_API cucore_status cucore_graph_remove_dependency(cucore_graph *g, cucore_graph_node *from,
                                                        cucore_graph_node *to);
/** Destroys `node` and its edges (cuGraphDestroyNode). Its cucore_graph_node stays valid but
 * refused by every call (naming it as destroyed) until the graph goes; executable graphs made
 * before keep the node. Allocation and free nodes cannot be destroyed (the graph's memory
 * record needs both); a conditional node goes with its bodies.
 * @retval CUCORE_INVALID_ARGUMENT a memory node, or a node destroyed already. */
CUCORE_API cucore_status cucore_graph_node_destroy(cucore_graph_node *node);
/** The graph `node` is directly in (borrowed): its top-level graph, a conditional body or a
 * child graph's embedded graph. */
CUCORE_API cucore_status cucore_graph_node_get_graph(const cucore_graph_node *node,
                                                     cucore_graph **g);
/** The driver's id of `g` (cuGraphGetId), as cuGraphDebugDotPrint prints it.
 * @retval CUCORE_DRIVER_TOO_OLD before CUDA 13.1. */
CUCORE_API cucore_status cucore_graph_get_id(cucore_graph *g, unsigned *id);
/** The driver's id of executable graph `e` (cuGraphExecGetId).
 * @retval CUCORE_DRIVER_TOO_OLD before CUDA 13.1. */
CUCORE_API cucore_status cucore_graph_exec_get_id(cucore_graph_exec *e, unsigned *id);
/** The node's id within its graph (cuGraphNodeGetLocalId): with the graph's id it names the
 * node uniquely, as in the DOT output.
 * @retval CUCORE_DRIVER_TOO_OLD before CUDA 13.1. */
CUCORE_API cucore_status cucore_graph_node_get_id(cucore_graph_node *node, unsigned *id);
/** The id profilers and other tools use for the node (cuGraphNodeGetToolsId).
 * @retval CUCORE_DRIVER_TOO_OLD before CUDA 13.1. */
CUCORE_API cucore_status cucore_graph_node_get_tools_id(cucore_graph_node *node, uint64_t *id);

/** Where one end of a copy node is (the values of CUmemorytype). */
typedef enum cucore_copy_end {
  CUCORE_COPY_END_HOST = 1,   /**< host memory: the address is a host pointer */
  CUCORE_COPY_END_DEVICE = 2, /**< a device address */
  CUCORE_COPY_END_ARRAY = 3,  /**< a CUDA array (its native handle below) */
  CUCORE_COPY_END_UNIFIED = 4 /**< any address of the unified space */
} cucore_copy_end;

/** What a node does, read back from the driver (cucore_graph_node_get_params()); only the part
 * of its `type` is filled, the rest is zero. Pointers are borrowed: valid while the node is
 * and until its parameters change. */
typedef struct cucore_graph_node_params {
  cucore_graph_node_type type; /**< the node's kind */
  struct {
    cucore_kernel *kernel; /**< the kernel: the one given to cucore, or for a node cucore did
                                 not add, one made over the driver's function (its types not
                                 known), owned by the node */
    const char *name;      /**< its name */
    unsigned grid[3];      /**< blocks */
    unsigned block[3];     /**< threads per block */
    unsigned shared_bytes; /**< dynamic shared memory */
    unsigned cluster[3];   /**< cluster dimension (0 when none was set) */
    cucore_args *args;     /**< the argument values as bound: read them with
                                 cucore_args_get_native() and the kernel's parameter layout */
  } kernel;                /**< CUCORE_GRAPH_NODE_KERNEL */
  struct {
    cucore_devptr dst;     /**< the first element */
    size_t pitch;          /**< bytes between rows (2D fills) */
    uint32_t value;        /**< the value (its low 8 or 16 bits for the smaller elements) */
    unsigned element_size; /**< 1, 2 or 4 bytes */
    size_t width;          /**< elements per row */
    size_t height;         /**< rows */
  } memset;                /**< CUCORE_GRAPH_NODE_MEMSET */
  struct {
    cucore_copy_end src_end; /**< where the source is */
    cucore_copy_end dst_end; /**< where the destination is */
    cucore_copy_3d copy;     /**< the region (addresses: host ones through CUCORE_HOST_ADDR; the
                                 array fields are NULL: see the native arrays) */
    void *src_cuarray;       /**< the source's CUarray when it is an array */
    void *dst_cuarray;       /**< the destination's CUarray when it is an array */
  } memcpy;                  /**< CUCORE_GRAPH_NODE_MEMCPY */
  struct {
    void (*fn)(void *user); /**< the host function */
    void *user;             /**< its argument */
  } host;                   /**< CUCORE_GRAPH_NODE_HOST */
  cucore_graph *child;      /**< CUCORE_GRAPH_NODE_GRAPH: the embedded graph (the driver's
                                 clone, owned by the node: edit and list it as a graph) */
  struct {
    cucore_event *event; /**< the event given to cucore, NULL for a node cucore did not add */
    void *cuevent;       /**< the driver's event */
  } event;               /**< CUCORE_GRAPH_NODE_EVENT_RECORD and _WAIT_EVENT */
  struct {
    cucore_graph_condition cond;  /**< the condition */
    cucore_conditional_type type; /**< if, while or switch */
    unsigned body_count;          /**< bodies */
    cucore_graph *const *bodies;  /**< the body graphs, owned by the node */
  } conditional;                  /**< CUCORE_GRAPH_NODE_CONDITIONAL */
  struct {
    cucore_devptr dptr; /**< the memory's address (allocation) or the address freed */
    size_t bytes;       /**< the allocation's size (0 for a free node) */
  } mem;                /**< CUCORE_GRAPH_NODE_MEM_ALLOC and _MEM_FREE */
} cucore_graph_node_params;

/** What `node` does, from the driver: every kind of node, of built and captured graphs alike.
 * @retval CUCORE_DRIVER_TOO_OLD a conditional node cucore did not add, before CUDA 13.1
 *         (cuGraphNodeGetParams).
 * @retval CUCORE_NOT_SUPPORTED external semaphore and memory-operation nodes (their kind only).
 * @retval CUCORE_INVALID_ARGUMENT the node was destroyed. */
CUCORE_API cucore_status cucore_graph_node_get_params(cucore_graph_node *node,
                                                      cucore_graph_node_params *out);
/** Gives `node` new parameters in its graph (executable graphs made before are not
 * changed): read them with cucore_graph_node_get_params(), change what is to change, set them.
 * `params->type` is the node's. Kernel nodes: `kernel.kernel` may be another kernel (its
 * argument list `kernel.args`, grid, block and shared bytes checked as cucore_launch() checks
 * a launch, with the node's attributes; the graph keeps the kernel alive); `kernel.name` and
 * `kernel.cluster` are not read. Memset nodes: one row or a 2D fill (`pitch` at least the row),
 * memcpy nodes: any region, each checked against the memory cucore recorded. Host nodes: a new
 * function and argument. Event nodes: another event of the graph's device (held). Empty nodes:
 * nothing to change. A refusal leaves the node as it was.
 * @retval CUCORE_INVALID_ARGUMENT another kind in `params`, a value out of range, a destroyed
 *         node.
 * @retval CUCORE_OUT_OF_BOUNDS a fill or copy runs past its allocation.
 * @retval CUCORE_LAUNCH_CONFIG the kernel's shape fails a pre-flight check.
 * @retval CUCORE_NOT_SUPPORTED child-graph, conditional and memory nodes (the driver changes
 *         none of them in a graph: the message says what to do instead). */
CUCORE_API cucore_status cucore_graph_node_set_params(cucore_graph_node *node,
                                                      const cucore_graph_node_params *params);
/** Gives `node`, a node of the graph `e` was instantiated from, new parameters in `e` alone
 * (its next launch runs them; the graph is not changed), checked as
 * cucore_graph_node_set_params() checks them, and against the driver's rules for executable
 * graphs first: a kernel node may run another kernel of the same context (its values in `e`
 * follow, so cucore_graph_exec_set_kernel_args() goes on working); a fill stays one row, in
 * memory of the same context; a copy keeps the kind of memory at each end and its contexts; a
 * child-graph node takes a graph of the same shape as its embedded graph (the message gives
 * both node counts); host and event nodes take any function or event of the device.
 * @retval CUCORE_GRAPH_UPDATE a rule of the driver's for executable graphs is broken (named).
 * @retval CUCORE_INVALID_ARGUMENT `node` is not in `e` (of another graph, added after `e` was
 *         made, or destroyed), or as cucore_graph_node_set_params().
 * @retval CUCORE_NOT_SUPPORTED conditional and memory nodes. */
CUCORE_API cucore_status cucore_graph_exec_set_node_params(cucore_graph_exec *e,
                                                           cucore_graph_node *node,
                                                           const cucore_graph_node_params *params);

/** A condition for a conditional node of the capture `s` takes part in (its graph's, as
 * cucore_graph_condition_create() makes one for a graph): pass it to the kernel, captured
 * before the node, that sets it.
 * @retval CUCORE_STREAM_CAPTURE `s` is in no capture cucore began.
 * @retval CUCORE_INVALID_ARGUMENT unknown flags.
 * @retval CUCORE_DRIVER_TOO_OLD before CUDA 12.3. */
CUCORE_API cucore_status cucore_stream_capture_condition_create(cucore_stream *s,
                                                                unsigned default_value,
                                                                unsigned flags,
                                                                cucore_graph_condition *out);
/** Adds a conditional node over `cond` (from cucore_stream_capture_condition_create() for this
 * capture) to the capture `s` takes part in, after the work captured on `s` so far; the work
 * captured afterwards runs after it. `bodies` receives its body graphs as
 * cucore_graph_add_conditional_node() gives them: fill them while the capture runs, by
 * capturing into them from another stream (cucore_stream_begin_capture_to_graph()) or node by
 * node. They belong to the graph cucore_stream_end_capture() gives.
 * @retval CUCORE_STREAM_CAPTURE `s` is in no capture cucore began, or it was invalidated.
 * @retval CUCORE_INVALID_ARGUMENT as cucore_graph_add_conditional_node().
 * @retval CUCORE_DRIVER_TOO_OLD as cucore_graph_add_conditional_node(). */
CUCORE_API cucore_status cucore_stream_capture_add_conditional(cucore_stream *s,
                                                               cucore_graph_condition cond,
                                                               cucore_conditional_type type,
                                                               unsigned body_count,
                                                               cucore_graph **bodies);

/** Flags of the DOT output (the values of CUgraphDebugDot_flags; any of its bits may be
 * given). */
enum {
  CUCORE_GRAPH_DOT_DEFAULT = 0,            /**< the nodes, their kinds and the edges */
  CUCORE_GRAPH_DOT_VERBOSE = 1,            /**< everything the driver can print */
  CUCORE_GRAPH_DOT_KERNEL_PARAMS = 1 << 2, /**< kernel nodes' parameters */
  CUCORE_GRAPH_DOT_HANDLES = 1 << 10       /**< node and function handles */
};
/** Writes the graph in Graphviz DOT form to `path` (cuGraphDebugDotPrint), for debugging.
 * @retval CUCORE_INVALID_ARGUMENT `flags` beyond the driver's bits (0..0xffff).
 * @retval CUCORE_IO_ERROR the driver could not write `path`. */
CUCORE_API cucore_status cucore_graph_dot_write(cucore_graph *g, const char *path, unsigned flags);
/** The graph in DOT form as text, owned by `g` until its next cucore_graph_dot() or its
 * destruction (written to a temporary file and read back).
 * @retval CUCORE_IO_ERROR no temporary file could be written ($TMPDIR, else /tmp). */
CUCORE_API cucore_status cucore_graph_dot(cucore_graph *g, unsigned flags, const char **dot);

/** Flags of cucore_graph_instantiate() (the values of CUgraphInstantiate_flags). */
enum {
  CUCORE_GRAPH_INSTANTIATE_DEFAULT = 0,             /**< nothing special */
  CUCORE_GRAPH_INSTANTIATE_AUTO_FREE_ON_LAUNCH = 1, /**< memory a graph allocated and did not
                                                          free is freed before it runs again */
  CUCORE_GRAPH_INSTANTIATE_UPLOAD = 2,              /**< upload at once on the stream given */
  CUCORE_GRAPH_INSTANTIATE_DEVICE_LAUNCH = 4,       /**< launchable from the device (the
                                                          driver checks the graph can be) */
  CUCORE_GRAPH_INSTANTIATE_USE_NODE_PRIORITY = 8    /**< nodes run at their priority
                                                          attribute, not the stream's */
};

/** CONSTRUCTOR: instantiates `g` (cuGraphInstantiateWithParams). With
 * CUCORE_GRAPH_INSTANTIATE_UPLOAD, `upload_stream` (of the graph's device) uploads it at once;
 * it is NULL otherwise. The executable graph keeps `g` (and what its nodes use): `g` may be
 * destroyed afterwards. Later changes to `g` do not reach it (see
 * cucore_graph_exec_update()). Destroy with cucore_graph_exec_destroy().
 * @retval CUCORE_INVALID_ARGUMENT unknown flags, DEVICE_LAUNCH with AUTO_FREE_ON_LAUNCH, UPLOAD
 *         without a stream (or a stream without UPLOAD), `g` a conditional node's body.
 * @retval CUCORE_DRIVER_ERROR the driver refused the graph; the message gives its reason (a
 *         cycle, an operation device launch cannot do, an unused condition) and the node. */
CUCORE_API cucore_status cucore_graph_instantiate(cucore_graph *g, unsigned flags,
                                                  cucore_stream *upload_stream,
                                                  cucore_graph_exec **out);
/** DESTRUCTOR: destroys the executable graph (launches still running complete; the driver
 * frees it then) and drops its graph. NULL is a no-op. */
CUCORE_API cucore_status cucore_graph_exec_destroy(cucore_graph_exec *e);
/** Uploads the executable graph to the device on stream `s` ahead of its first launch, so
 * that launch does not pay for it.
 * @retval CUCORE_INVALID_ARGUMENT `s` is of another device. */
CUCORE_API cucore_status cucore_graph_upload(cucore_graph_exec *e, cucore_stream *s);
/** Launches the executable graph on stream `s` (cuGraphLaunch): it runs after the work queued
 * on `s` before it, and the work queued after it waits for the whole graph. One launch of an
 * executable graph runs at a time; launches on different streams are ordered by the driver.
 * @retval CUCORE_INVALID_ARGUMENT `s` is of another device. */
CUCORE_API cucore_status cucore_graph_launch(cucore_graph_exec *e, cucore_stream *s);
/** Gives every node of `e` the parameters of the matching node of `from`, a graph of the same
 * shape (cuGraphExecUpdate): the usual way to change a captured graph's arguments is to
 * capture again and update. Nodes are matched by the order they were added and their
 * dependencies, as the driver does. Kernel nodes made node by node in the same order as `e`'s
 * are matched by cucore too, so that per-node updates (cucore_graph_exec_set_kernel_args())
 * go on working; otherwise those refuse until the next instantiation. `e` keeps `from` (and
 * what its nodes use) alive from now on. Nothing changes when the update is refused.
 * @retval CUCORE_GRAPH_UPDATE the driver refused: the message says why (another shape: the node
 *         counts; a changed node type, kernel context, or parameters an update cannot change)
 *         and names the node (its kind, kernel and position among `from`'s nodes).
 * @retval CUCORE_INVALID_ARGUMENT `from` is of another device, or a conditional body. */
CUCORE_API cucore_status cucore_graph_exec_update(cucore_graph_exec *e, cucore_graph *from);
/** Gives kernel node `node` (a node of the graph `e` was instantiated from) new argument values
 * in `e` alone (cuGraphExecKernelNodeSetParams), checked as cucore_launch() checks them:
 * count, sizes, types where known, alignment (the checks made when `args` was filled, kept in
 * it) and every parameter set. A wrong list leaves the node as it was and returns the usual
 * CUCORE_ARG_* error. Takes effect at the next launch; allocates nothing. `args` may change or
 * go afterwards.
 * @retval CUCORE_INVALID_ARGUMENT `node` is not a kernel node of `e`'s graph, was added after
 *         `e` was instantiated, or its values are unknown since a whole-graph update from a
 *         graph cucore could not match node by node; `args` made for another kernel. */
CUCORE_API cucore_status cucore_graph_exec_set_kernel_args(cucore_graph_exec *e,
                                                           cucore_graph_node *node,
                                                           cucore_args *args);
/** Gives kernel node `node` of `e` new launch dimensions: `grid` and `block` (3 values each;
 * unused dimensions 0 or 1) and `shared_bytes` of dynamic shared memory, checked against the
 * kernel as a launch is (with the node's attributes). A refusal leaves the node as it was.
 * @retval CUCORE_LAUNCH_CONFIG a pre-flight check failed.
 * @retval CUCORE_INVALID_ARGUMENT as cucore_graph_exec_set_kernel_args(). */
CUCORE_API cucore_status cucore_graph_exec_set_kernel_dims(cucore_graph_exec *e,
                                                           cucore_graph_node *node,
                                                           const unsigned grid[3],
                                                           const unsigned block[3],
                                                           unsigned shared_bytes);
/** Turns node `node` of `e` off (`enabled` 0: it does nothing when the graph runs, its
 * dependencies still hold) or on again (cuGraphNodeSetEnabled). Kernel, memcpy and memset
 * nodes only.
 * @retval CUCORE_INVALID_ARGUMENT `node` is of another kind, or not of `e`'s graph.
 * @retval CUCORE_DRIVER_TOO_OLD before CUDA 11.6. */
CUCORE_API cucore_status cucore_graph_exec_set_node_enabled(cucore_graph_exec *e,
                                                            cucore_graph_node *node, int enabled);
/** Whether node `node` of `e` is enabled (1) or not (0). */
CUCORE_API cucore_status cucore_graph_exec_get_node_enabled(cucore_graph_exec *e,
                                                            cucore_graph_node *node, int *enabled);
/** The native CUgraphExec, owned by `e`: do not destroy it. */
CUCORE_API cucore_status cucore_graph_exec_get_native(cucore_graph_exec *e, void **cugraphexec);

/** @} */
/* ==== END SECTION: CUDA graphs ==== */

/* ==== SECTION: graph memory nodes ==== */
/**
 * @defgroup graph_mem Graph memory nodes
 *
 * Allocation and free nodes of an explicit graph (cuGraphAddMemAllocNode,
 * cuGraphAddMemFreeNode, CUDA 11.4+). The allocation's address is fixed when its node is
 * added, so later nodes of the graph take it as an ordinary pointer: cucore records it (kind
 * CUCORE_MEM_GRAPH) and kernel nodes' pointer checks and copies' bounds checks know it. The
 * graph owns the memory: cucore_mem_free() and the other frees refuse it with a message, and
 * the graph frees it itself -- every allocation node needs a free node for its memory in the
 * same graph (checked by cucore_graph_instantiate()). The memory exists only while a launch
 * runs between the two nodes; the record goes when the graph is destroyed. The driver allows
 * one executable graph at a time of a graph with memory nodes, no memory nodes in conditional
 * bodies, and no such graph as a child graph (refused by cucore).
 * @{
 */

/** Adds a node that allocates `bytes` (> 0) of device memory on the graph's device when it
 * runs, after `deps` (`dep_count` nodes of `g`). *dptr gets the address (fixed for the graph's
 * life), *out the node. The driver allocates it from its graph memory pool: a memory resource
 * installed on the device (cucore_device_set_mem_resource()) is not used.
 * @retval CUCORE_DRIVER_TOO_OLD the driver lacks cuGraphAddMemAllocNode (CUDA 11.4).
 * @retval CUCORE_INVALID_ARGUMENT a size of 0, a conditional body, a wrong dependency. */
CUCORE_API cucore_status cucore_graph_add_mem_alloc_node(cucore_graph *g,
                                                         cucore_graph_node *const *deps,
                                                         size_t dep_count, size_t bytes,
                                                         cucore_devptr *dptr,
                                                         cucore_graph_node **out);
/** Adds a node that frees `dptr`, the address an allocation node of the same graph gave, after
 * `deps` (which must order it after the allocation node and every node using the memory).
 * @retval CUCORE_INVALID_ARGUMENT `dptr` is not the start of an allocation of this graph, or
 *         is freed already by another free node (the message says which).
 * @retval CUCORE_DRIVER_TOO_OLD the driver lacks cuGraphAddMemFreeNode (CUDA 11.4). */
CUCORE_API cucore_status cucore_graph_add_mem_free_node(cucore_graph *g,
                                                        cucore_graph_node *const *deps,
                                                        size_t dep_count, cucore_devptr dptr,
                                                        cucore_graph_node **out);
/** @} */
/* ==== END SECTION: graph memory nodes ==== */

#ifdef __cplusplus
}
#endif
#endif /* CUCORE_PART_GRAPHS_H */
