/*
 * tune/tuner.h -- cucore_tune_run(), the tune as a library call, in six rooms. Each room owns
 * its part of the state, a struct of its own that only its files touch (a room of two files or
 * more defines it in its own header, which no other room includes); the other rooms reach it
 * through the calls declared here. What every room shares is the tune's inputs and its results
 * (cc_trun). Lowest first: a room calls only the rooms above it in this list, and within a
 * room a file calls only the files listed before it (CTest call_circles refuses a circle).
 *
 *   the core     tuner.c: the clock, notes for the caller, a row's texts, a failed row, the
 *                model's order of rows, the results' names
 *   compiles     cc_tcomp (compiles.h): the groups (one per distinct compile), the compile
 *                threads, what the compiles said
 *     compile_notes.c  warnings once each, values that change nothing, a kernel name the
 *                      source does not have
 *     compile_group.c  one group compiled: by the compile callback or the default compiler
 *                      (cucore_tune_compile), the -minimal check, its cubin's resources, its
 *                      object kept for measuring
 *     compile_pipe.c   the threads over the distinct compiles, handed out as they finish
 *                      with the model's verdicts; the dry run
 *   the device   cc_tdev (devdata.h): the context, the buffers, the baseline, the cold cache
 *     dev_verify.c  the outputs checked: the check callback, or the first result (compared on
 *                   the device first by compare.c)
 *     dev_data.c    the context (made on a helper thread while the host prepares, unless it is
 *                   made or being made already), the buffers made and restored, the cold cache
 *                   (the L2 flush, rotated copies) and the timing options that follow, a
 *                   kernel fault's recovery
 *   the store    cc_tstore (store_results.c): the tune's key, resuming rows measured before,
 *                recording results, claiming a group so that tunes on one store share the work
 *   measuring    cc_tmeas (measuring.h): when measuring began, the row being timed
 *     trial.c     one configuration bound, reset, launched, verified, timed and recorded; the
 *                 progress; the finalists re-timed interleaved and ranked
 *     gpu_loop.c  the measured tune: compiles pipelined with measuring, model-first order,
 *                 groups shared with the other tunes on the store
 *   the report   report_handle.c: the report handle and its getters, the model's agreement
 *   the entry    entry.c: cucore_tune_run: the inputs checked and copied, the arch, the rows;
 *                the rooms made, run in order and let go
 */
#ifndef CUCORE_TUNE_TUNER_H
#define CUCORE_TUNE_TUNER_H

#include "base/handle.h"

/* One distinct compile: the configurations that share it, its cubin and resources. The
 * compiles make and own the groups; measuring reads them. */
typedef struct cc_tgroup {
  uint64_t hash;
  uint64_t index; /* a configuration of the group (its defines and kernel name) */
  int ok, cache_hit;
  int deferred;       /* 1: every configuration came from the store; not compiled (yet) */
  int timed_out;      /* 1: the compile ran past the time-out */
  int definite;       /* ok 0: 1 when the compiler refused the configuration (kept in the store) */
  int foreign;        /* 1: another shard's share (deferred: compiled here when taken over) */
  cucore_object *obj; /* kept for measuring (NULL in a dry run or after a failure) */
  char *symbol;       /* the kernel's symbol in obj (malloc'd) */
  cucore_kernel_resources res;
  int local_bytes;
  double ms;
  char *error;     /* why it failed, one line (malloc'd; NULL: none) */
  char *log;       /* the compiler's log when it has warnings (malloc'd; NULL: none) */
  char digest[33]; /* of its cubin ("" when none) */
} cc_tgroup;

typedef struct cc_tcomp cc_tcomp;           /* compiles.h */
typedef struct cc_tdev cc_tdev;             /* devdata.h */
typedef struct cc_tstore cc_tstore;         /* store_results.c */
typedef struct cc_tmeas cc_tmeas;           /* measuring.h */
typedef struct cc_tcomp_warn cc_tcomp_warn; /* compile_notes.c: one distinct warning */

/* The state of one tune. */
typedef struct cc_trun {
  /* The inputs: checked and copied by the entry, read by every room. */
  cucore_tune_space *space;
  cucore_tune_run_options o; /* identity and source_name copied */
  cucore_options *copts;     /* the compile options (a copy; NULL: none) */
  cucore_tune_buffer *bufs;  /* copies: labels owned; host contents the caller's, read during
                                the call (cucore_tune_run returns before it may change), or
                                zeros allocated here (host_owned) */
  unsigned char *host_owned; /* 1: bufs[i].host was allocated here */
  size_t nbufs;
  size_t l2_bytes;  /* the device's L2, found with the arch (0: no device) */
  size_t mem_bytes; /* the device's memory */
  /* The results: every room adds to them; the report takes them. */
  cucore_tune_summary s; /* counts, times, results (key and store_path: the report's) */
  cucore_tune_row *rows; /* the configurations past restrictions (a search: those evaluated) */
  size_t round_first;    /* a search: the first row of the batch under way (the compiles and
                            the GPU loop take rows from here on; earlier ones are done). 0:
                            every row, as a tune without a search takes them */
  /* Each room's own state: made by the entry with the room's _init, let go with its _free. */
  cc_tcomp *comp;
  cc_tdev *dev;
  cc_tstore *store;
  cc_tmeas *meas;
} cc_trun;

/* ---- the core (tuner.c) ---- */
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
/* order[0..n) = the rows that compiled and can run, best model score first (a tie: the lower
 * configuration index); returns n. `order` holds nrows. */
size_t cc_trun_model_order(const cucore_tune_row *rows, size_t nrows, size_t *order);
/* The bytes of a buffer. */
size_t cc_trun_bytes(const cucore_tune_buffer *b);
/* The public comparison's dtype code (CUCORE_DTYPE_*) of a cucore_tune_elem. */
int cc_trun_dtype(cucore_tune_elem elem);

/* ---- compiles (compile_notes.c, compile_group.c, compile_pipe.c) ---- */
cucore_status cc_tcomp_init(cc_trun *c);
/* The threads joined and the groups let go (if cc_tcomp_finish did not), the notes freed. */
void cc_tcomp_free(cc_trun *c);
/* Starts the compile threads over the distinct compiles of the runnable rows; with
 * `keep_objects` every group that compiles keeps its object for measuring. */
cucore_status cc_tcomp_start(cc_trun *c, int keep_objects);
/* The next finished group (blocking), its rows judged by the model; NULL when all were
 * handed out. */
cc_tgroup *cc_tcomp_next(cc_trun *c);
/* 1 when cc_tcomp_next would wait: no finished compile is waiting and some are still made. */
int cc_tcomp_waiting(cc_trun *c);
/* A deferred group compiled now (for a finalist): 0, or -1 with g->error. */
int cc_tcomp_now(cc_trun *c, cc_tgroup *g);
/* Another shard's group taken over: compiled now on the calling thread and its rows judged
 * by the model, as a group from the compile threads is; 0, or -1 with g->error. */
int cc_tcomp_take_over(cc_trun *c, cc_tgroup *g);
/* Joins the threads, frees the pipeline and the groups' objects (the parameters that change
 * nothing found first, except after a search, whose compiles are a sample). */
void cc_tcomp_finish(cc_trun *c);
/* A search's next batch: the threads joined, the groups let go, and the compiles started again
 * over every row (the earlier batches' groups deferred: compiled again only for a finalist). */
cucore_status cc_tcomp_restart(cc_trun *c);
/* The group of row r, or NULL (none started, or finished). */
cc_tgroup *cc_tcomp_group_of(const cc_trun *c, const cucore_tune_row *r);
/* How many groups there are. */
size_t cc_tcomp_count(const cc_trun *c);
/* CUCORE_NOT_FOUND (said) when a compile found that the kernel names nothing in the source. */
cucore_status cc_tcomp_kernel_found(const cc_trun *c);
/* A dry run: every group compiled and judged, nothing measured. */
cucore_status cc_tcomp_dry_run(cc_trun *c);
/* The warnings (c->s.warnings of them) and the parameters that change nothing (c->s.
 * inert_params), moved out for the report. */
void cc_tcomp_take_notes(cc_trun *c, cc_tcomp_warn **warns, size_t **inert);
void cc_tcomp_free_warnings(cc_tcomp_warn *w, size_t n);
/* Warning i of w[0..n) into *out (CUCORE_INVALID_ARGUMENT past n). */
cucore_status cc_tcomp_get_warning(const cc_tcomp_warn *w, size_t n, size_t i,
                                   cucore_tune_warning *out);

/* ---- the device (dev_verify.c, dev_data.c) ---- */
cucore_status cc_tdev_init(cc_trun *c);
/* The helper thread joined and its handle let go, everything on the device let go. */
void cc_tdev_free(cc_trun *c);
/* Starts making the device's context on a helper thread, unless it is made or being made
 * already (dev_data.c says the rule); none could start: cc_tdev_open makes it. */
void cc_tdev_early_start(cc_trun *c);
/* Opens the device, allocates and fills every buffer and keeps pristine copies of inputs. */
cucore_status cc_tdev_open(cc_trun *c);
/* Before a checked launch: inputs and in-place buffers restored, outputs zeroed or poisoned. */
cucore_status cc_tdev_reset(cc_trun *c);
/* After it: the outputs checked (the check callback, or the first configuration that ran);
 * 0 right, 1 wrong (r->detail says how), -1 when the data could not be read. */
int cc_tdev_verify(cc_trun *c, cucore_tune_row *r);
/* Everything on the device let go, the host copies and the baseline freed (nothing to do when
 * it was not opened). */
void cc_tdev_close(cc_trun *c);
cucore_stream *cc_tdev_stream(const cc_trun *c);
/* The device the tune measures on (NULL before it is open). */
cucore_device *cc_tdev_device(const cc_trun *c);
/* The device pointers of the buffers (nbufs of them). */
const cucore_devptr *cc_tdev_ptrs(const cc_trun *c);
/* With cold rotate: how many copies pass 2 x L2 (too many: a note, and the flush); no device
 * needed. */
void cc_tdev_rot_plan(cc_trun *c);
/* The planned copies made on the device (no room: an error naming --cold flush). */
cucore_status cc_tdev_rot_open(cc_trun *c);
/* The copies let go and the plan dropped. */
void cc_tdev_rot_close(cc_trun *c);
/* How many rotated argument sets there are (0: no rotation). */
int cc_tdev_rot_sets(const cc_trun *c);
/* The device pointers of rotated set s (nbufs of them). */
const cucore_devptr *cc_tdev_rot_ptrs(const cc_trun *c, int s);
/* The timing's L2 flush buffer of `bytes` (made at the first call, kept until the device
 * closes; 0 when it cannot be made: the timing then makes its own). */
cucore_devptr cc_tdev_flush(cc_trun *c, size_t bytes);
/* Whether NVML answers for the device's SM clock (else a note). */
void cc_tdev_probe_clock(cc_trun *c);
/* The timing options of this tune on this device: the noise, the launch mode, the cold cache
 * (the flush's L2 bytes, none with rotation or hot), the clock observed. */
cucore_tune_timing_options cc_tdev_timing(const cc_trun *c);
/* 1 when the device has faulted (every later call would fail). */
int cc_tdev_fault_check(const cc_trun *c);
/* Row r recorded as a fault (its detail kept after the reason). */
void cc_tdev_fault_mark(cc_trun *c, cucore_tune_row *r);
/* Everything on the device let go, opened again, the buffers made again; resets counted.
 * CUCORE_OK, or a failure with c->s.lost set. */
cucore_status cc_tdev_fault_recover(cc_trun *c, const cucore_tune_row *r);
/* After a failed row r: on a fault, r marked and the device recovered. */
void cc_tdev_fault_after_row(cc_trun *c, cucore_tune_row *r);

/* ---- the store (store_results.c) ---- */
cucore_status cc_tstore_init(cc_trun *c);
void cc_tstore_free(cc_trun *c);
/* The store of this tune opened (its key, the device's fingerprint and the timing policy). */
cucore_status cc_tstore_open(cc_trun *c);
/* Every runnable row the store has a result for marked resumed (unless fresh). */
void cc_tstore_resume(cc_trun *c);
/* Appends row r's result to the store (a later record of a configuration wins); nothing when
 * the store cannot be appended to (said once). */
void cc_tstore_record(cc_trun *c, const cucore_tune_row *r);
/* Appends each configuration of failed group g (not from the store) as a compile error, so
 * that a rerun does not compile it again (the caller keeps time-outs and crashed compilers
 * out: g->definite). */
void cc_tstore_record_compile_error(cc_trun *c, const cc_tgroup *g);
/* Claims configuration group `hash` for measuring here: its lock taken (waiting for it when
 * `wait`), then what other processes appended read and the group's rows they measured marked
 * resumed; returns 1 (also when nothing is shared: no store to append to, --fresh, no locks),
 * or 0 when another process holds it (not waiting). */
int cc_tstore_claim(cc_trun *c, uint64_t hash, int wait);
/* Lets group `hash`'s claim go (its results are in the store for the others). */
void cc_tstore_release(cc_trun *c, uint64_t hash);
/* What cc_tstore_others hands over: configuration `index`'s time in ms (NAN: it failed);
 * returns 1 when it was news to the caller. */
typedef int (*cc_tstore_seen)(void *user, uint64_t index, double ms);
/* The records of this tune's key, problem and device appended since the last call (other
 * processes' too: the store refreshed first), each handed to fn in the store's order (a later
 * record of a configuration after an earlier one); returns how many fn took as news. */
size_t cc_tstore_others(cc_trun *c, cc_tstore_seen fn, void *user);
/* The path and the record count kept, the store closed. */
void cc_tstore_close(cc_trun *c);
/* The tune's key, 64 hexadecimal digits ("" before the store opened: a dry run). */
const char *cc_tstore_key(const cc_trun *c);
/* The store's path, handed over (malloc'd; NULL: none). */
char *cc_tstore_take_path(cc_trun *c);

/* ---- measuring (trial.c, gpu_loop.c) ---- */
cucore_status cc_tmeas_init(cc_trun *c);
void cc_tmeas_free(cc_trun *c);
/* Measures every runnable configuration, pipelined with the compiles. */
cucore_status cc_tmeas_all(cc_trun *c);
/* Its parts (gpu_loop.c): the store, the compiles started, the device; every finished group's
 * rows from round_first on measured as its compile comes; the finalists and the closing
 * (returns st, or the kernel's absence). */
cucore_status cc_tmeas_begin(cc_trun *c);
void cc_tmeas_groups(cc_trun *c);
cucore_status cc_tmeas_end(cc_trun *c, cucore_status st);
/* A measured tune that searches (search_tune.c, run options' max_evals): the strategy proposes
 * batches over the live space; each batch is made rows, compiled and measured, and its times
 * (failures as failures) observed before the next. When the budget covers every runnable
 * configuration (and there is no time limit) it measures nothing and sets c->s.exhaustive:
 * the caller measures them all in one pass, as a tune without a budget. */
cucore_status cc_tmeas_search(cc_trun *c);

/* ---- the report (report_handle.c) ---- */
/* The report made from c (its rows and texts moved out of c). */
cucore_status cc_treport_make(cc_trun *c, cucore_tune_report **out);

#endif /* CUCORE_TUNE_TUNER_H */
