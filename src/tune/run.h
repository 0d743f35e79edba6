/*
 * tune/run.h -- cucore_tune_run(), the tune as a library call, and what its files share, one
 * job each (lowest first: a file calls only the ones above it in this list):
 *   run_base.c     the clock, notes, a failed row, a row's group
 *   run_early.c    the device's context made on a helper thread while the host prepares
 *   run_data.c     the buffers on the device: made, restored before a checked launch, the
 *                  outputs verified (the check callback, or the first result: compared on
 *                  the device first by compare.c, read back only when a byte differs)
 *   run_rotate.c   the copies of every buffer for cold-cache rotation, their argument sets
 *   run_bind.c     a configuration's kernel with its arguments bound (the bind callback)
 *   run_time.c     timing one configuration (the launch mode, the cold cache, the clock)
 *   run_recover.c  kernel faults: the row recorded, the device reset, the buffers made again
 *   run_store.c    the store: the key, resuming rows measured before, recording results,
 *                  claiming a group (its lock) so that tunes on one store share the work
 *   run_notes.c    what compiles say beyond cubins: warnings once each, values that change
 *                  nothing, a kernel name the source does not have
 *   run_compile.c  the compile pipeline: threads over the distinct compiles, the model's
 *                  verdicts, the default compiler (cucore_tune_compile)
 *   run_one.c      one configuration: reset, checked launch, verification, timing, recorded
 *   run_final.c    the finalists re-timed interleaved and ranked
 *   run_gpu.c      the GPU loop: compiles pipelined with measuring, model-first order
 *   run_report.c   the report handle and its getters, the model's agreement
 *   run.c          cucore_tune_run: the inputs checked and copied, the arch, the rows
 */
#ifndef CUCORE_TUNE_RUN_H
#define CUCORE_TUNE_RUN_H

#include "base/handle.h"

/* One distinct compile: the configurations that share it, its cubin and resources. */
typedef struct cc_tgroup {
  uint64_t hash;
  uint64_t index; /* a configuration of the group (its defines and kernel name) */
  int ok, cache_hit;
  int deferred;       /* 1: every configuration came from the store; not compiled (yet) */
  int timed_out;      /* 1: the compile ran past the time-out */
  cucore_object *obj; /* kept for measuring (NULL in a dry run or after a failure) */
  char *symbol;       /* the kernel's symbol in obj (malloc'd) */
  cucore_kernel_resources res;
  int local_bytes;
  double ms;
  char *error;     /* why it failed, one line (malloc'd; NULL: none) */
  char *log;       /* the compiler's log when it has warnings (malloc'd; NULL: none) */
  char digest[33]; /* of its cubin ("" when none) */
} cc_tgroup;

typedef struct cc_tpipe cc_tpipe;   /* run_compile.c */
typedef struct cc_tdev cc_tdev;     /* run_data.c */
typedef struct cc_trot cc_trot;     /* run_rotate.c */
typedef struct cc_tearly cc_tearly; /* run_early.c */
typedef struct cc_twarn cc_twarn;   /* run_notes.c */

/* The state of one tune. */
typedef struct cc_trun {
  cucore_tune_space *space;
  cucore_tune_run_options o; /* identity and source_name copied */
  cucore_options *copts;     /* the compile options (a copy; NULL: none) */
  cucore_tune_buffer *bufs;  /* copies (host contents and labels owned) */
  size_t nbufs;
  cucore_tune_summary s; /* counts, times, results (store_path and key point below) */
  cucore_tune_row *rows; /* the configurations past restrictions */
  double rtol, atol;     /* the tolerances in force */
  cc_tgroup *groups;
  size_t ngroups;
  cc_tpipe *pipe;
  int keep_objects; /* 1: groups keep their objects for measuring */
  cc_tdev *dev;
  cc_trot *rot;
  cc_tearly *early; /* the context being made on a helper thread (NULL: none) */
  cucore_tune_store *store;
  char key[65];
  char *store_path;     /* malloc'd; NULL: none */
  size_t l2_bytes;      /* the device's L2 (0: no device) */
  size_t mem_bytes;     /* the device's memory */
  double last_timed_ms; /* when the last configuration's timing ended (0 none) */
  double t_start;       /* when measuring began (the progress's ETA) */
  int observe_clock;    /* 1: NVML answers, the SM clock is read per sample */
  int last_of_group;    /* 1: the row being timed is its group's last (the GPU thread's next
                           work is the next compile) */
  size_t done;          /* rows finished (the progress callback's count) */
  cc_twarn *warns;      /* distinct compiler warnings (run_notes.c) */
  size_t nwarns, cap_warns;
  size_t *inert;        /* parameters whose values change nothing in the code */
  char *kernel_missing; /* set by a compile thread: the kernel names nothing in the source */
  int no_locks;         /* 1: the store's locks cannot be had (said once): no work shared */
} cc_trun;

/* ---- run_base.c ---- */
/* The text every row's error and detail start as (""). */
extern const char cc_trun_none[];
/* *slot (a row's error or detail) set to the printf text, the previous one freed (out of
 * memory: a fixed note). */
void cc_trun_text(const char **slot, const char *fmt, ...) CC_PRINTF(2, 3);
void cc_trun_text_free(const char **slot);
/* A compiler message's line that says what went wrong: its first line naming an error (else
 * its first line), malloc'd ("what: LINE"); NULL when out of memory. */
char *cc_trun_error_line(const char *what, const char *msg);
/* Milliseconds of a monotonic clock. */
double cc_trun_now_ms(void);
/* A note for the caller (options' note callback), printf-style. */
void cc_trun_note(const cc_trun *c, const char *fmt, ...) CC_PRINTF(2, 3);
/* Row r failed with `status` and why (counted). */
void cc_trun_failed(cc_trun *c, cucore_tune_row *r, cucore_tune_result status, const char *detail);
/* The result named name[0..len) ("ok", ...; unknown: a launch error). */
cucore_tune_result cc_tune_result_parse(const char *name, size_t len);
/* qsort's order of groups by hash. */
int cc_tgroup_by_hash(const void *a, const void *b);
/* The group of row r (groups sorted by hash), or NULL. */
cc_tgroup *cc_trun_group_of(const cc_trun *c, const cucore_tune_row *r);
/* order[0..n) = the rows that compiled and can run, best model score first (a tie: the lower
 * configuration index); returns n. `order` holds nrows. */
size_t cc_trun_model_order(const cucore_tune_row *rows, size_t nrows, size_t *order);

/* ---- run_early.c ---- */
/* Starts making the device's context on a helper thread (none could start: cc_tdata_open
 * makes it). */
void cc_tearly_start(cc_trun *c);
/* Waits for the helper. */
void cc_tearly_wait(cc_trun *c);
/* Waits for it and lets its handle go (the context stays while another handle holds it). */
void cc_tearly_finish(cc_trun *c);

/* ---- run_data.c ---- */
/* Opens the device, allocates and fills every buffer and keeps pristine copies of inputs. */
cucore_status cc_tdata_open(cc_trun *c);
/* Before a checked launch: inputs and in-place buffers restored, outputs zeroed or poisoned. */
cucore_status cc_tdata_reset(cc_trun *c);
/* After it: the outputs checked (the check callback, or the first configuration that ran);
 * 0 right, 1 wrong (r->detail says how), -1 when the data could not be read. */
int cc_tdata_verify(cc_trun *c, cucore_tune_row *r);
/* The device after a fault: let go and opened again, buffers made again. */
cucore_status cc_tdata_reopen(cc_trun *c);
void cc_tdata_close(cc_trun *c);
cucore_stream *cc_tdata_stream(const cc_trun *c);
size_t cc_tdata_l2(const cc_trun *c);
cucore_device *cc_tdata_device(const cc_trun *c);
/* The device pointers of the buffers (nbufs of them). */
const cucore_devptr *cc_tdata_ptrs(const cc_trun *c);
/* The timing's L2 flush buffer of `bytes` (made at the first call, kept until the device
 * closes; 0 when it cannot be made: the timing then makes its own). */
cucore_devptr cc_tdata_flush(cc_trun *c, size_t bytes);
/* The bytes of buffer i. */
size_t cc_tdata_bytes(const cucore_tune_buffer *b);

/* ---- run_rotate.c ---- */
/* With cold rotate: how many copies pass 2 x L2 (too many: a note, and the flush); no device
 * needed. */
void cc_trot_plan(cc_trun *c);
/* The planned copies made on the device (no room: an error naming --cold flush). */
cucore_status cc_trot_open(cc_trun *c);
/* The copies let go, the plan kept (a device reset, then cc_trot_open again). */
void cc_trot_release(cc_trun *c);
void cc_trot_close(cc_trun *c);
int cc_trot_sets(const cc_trun *c);
/* The device pointers of rotated set s (nbufs of them). */
const cucore_devptr *cc_trot_ptrs(const cc_trun *c, int s);

/* ---- run_bind.c ---- */
/* Group g's kernel with `ptrs` bound to a new argument set. */
cucore_status cc_tbind(cc_trun *c, const cc_tgroup *g, cucore_kernel *k, const cucore_devptr *ptrs,
                       cucore_args **a);
/* Group g's kernel and its arguments on the buffers. */
cucore_status cc_tbind_kernel(cc_trun *c, const cc_tgroup *g, cucore_kernel **k, cucore_args **a);

/* ---- run_time.c ---- */
/* Whether NVML answers for the device (else a note): c->observe_clock. */
void cc_ttime_probe(cc_trun *c);
/* The launch and the timing options of a row. */
cucore_launch_config cc_ttime_launch_of(const cc_trun *c, const cucore_tune_row *r);
cucore_tune_timing_options cc_ttime_options(const cc_trun *c);
/* Times row r (o from cc_ttime_options) with the rotated argument sets when there are any. */
cucore_status cc_ttime(cc_trun *c, cucore_kernel *k, cucore_args *a, const cucore_tune_row *r,
                       cucore_tune_timing_options *o, cucore_tune_timing *t);

/* ---- run_recover.c ---- */
/* 1 when the device has faulted (every later call would fail). */
int cc_trec_faulted(const cc_trun *c);
/* Row r recorded as a fault (its detail kept after the reason). */
void cc_trec_mark(cc_trun *c, cucore_tune_row *r);
/* Everything on the device let go, opened again, the buffers made again; resets counted.
 * CUCORE_OK, or a failure with c->s.lost set. */
cucore_status cc_trec_recover(cc_trun *c, const cucore_tune_row *r);
/* After a failed row r: on a fault, r marked and the device recovered. */
void cc_trec_after_row(cc_trun *c, cucore_tune_row *r);

/* ---- run_store.c ---- */
/* The store of this tune opened (its key, the device's fingerprint and the timing policy). */
cucore_status cc_tstore_open(cc_trun *c);
/* Every runnable row the store has a result for marked resumed (unless fresh). */
void cc_tstore_resume(cc_trun *c);
/* Appends row r's result to the store (a later record of a configuration wins); nothing when
 * the store cannot be appended to (said once). */
void cc_tstore_record(cc_trun *c, const cucore_tune_row *r);
/* Claims configuration group `hash` for measuring here: its lock taken (waiting for it when
 * `wait`), then what other processes appended read and the group's rows they measured marked
 * resumed; returns 1 (also when nothing is shared: no store to append to, --fresh, no locks),
 * or 0 when another process holds it (not waiting). */
int cc_tstore_claim(cc_trun *c, uint64_t hash, int wait);
/* Lets group `hash`'s claim go (its results are in the store for the others). */
void cc_tstore_release(cc_trun *c, uint64_t hash);
/* The path and the record count kept, the store closed. */
void cc_tstore_close(cc_trun *c);

/* ---- run_notes.c ---- */
/* Group g's warnings added to the tune's distinct ones (the calling thread). */
void cc_tnotes_warnings(cc_trun *c, const cc_tgroup *g);
void cc_tnotes_free_warnings(cc_twarn *w, size_t n);
/* Warning i of w[0..n) into *out (CUCORE_INVALID_ARGUMENT past n). */
cucore_status cc_tnotes_get_warning(const cc_twarn *w, size_t n, size_t i,
                                    cucore_tune_warning *out);
/* After the compiles: the distinct cubins and the parameters that change nothing (c->inert). */
void cc_tnotes_inert(cc_trun *c);
/* When group g's failed compile says `kernel` names nothing in the source: the message (malloc'd,
 * naming the kernels the source has, compiled with `defines`); else NULL. */
char *cc_tnotes_missing_kernel(const cc_trun *c, const cc_tgroup *g, const char *kernel,
                               const char *defines);

/* ---- run_compile.c ---- */
/* Starts the compile threads over the distinct compiles of the runnable rows. */
cucore_status cc_tcomp_start(cc_trun *c);
/* The next finished group (blocking), its rows judged by the model; NULL when all were
 * handed out. */
cc_tgroup *cc_tcomp_next(cc_trun *c);
/* 1 when cc_tcomp_next would wait: no finished compile is waiting and some are still made. */
int cc_tcomp_waiting(cc_trun *c);
/* A deferred group compiled now (for a finalist): 0, or -1 with g->error. */
int cc_tcomp_now(cc_trun *c, cc_tgroup *g);
/* Joins the threads, frees the pipeline and the groups' objects. */
void cc_tcomp_finish(cc_trun *c);

/* ---- run_one.c ---- */
/* One runnable row: from the store, or reset, launched, verified, timed and stored. */
void cc_tone_measure(cc_trun *c, cucore_kernel *k, cucore_args *a, cucore_tune_row *r);
/* The progress callback after row r. */
void cc_tone_progress(cc_trun *c, const cucore_tune_row *r, int finished);

/* ---- run_final.c ---- */
/* The finalists re-timed interleaved; c->s.best and ties set. */
void cc_tfinal(cc_trun *c);

/* ---- run_gpu.c ---- */
/* Measures every runnable configuration, pipelined with the compiles. */
cucore_status cc_tgpu_measure_all(cc_trun *c);
/* A dry run: every group compiled and judged, nothing measured. */
cucore_status cc_tgpu_compile_all(cc_trun *c);

/* ---- run_report.c ---- */
/* The report made from c (its rows and texts moved out of c). */
cucore_status cc_treport_make(cc_trun *c, cucore_tune_report **out);

#endif /* CUCORE_TUNE_RUN_H */
