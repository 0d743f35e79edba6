/*
 * checkpoint.c -- checkpointing another CUDA process by pid (CUDA 12.8+ drivers):
 * its state, lock (with a timeout), checkpoint (its GPU memory moved to the host), restore
 * (optionally onto other GPUs, by UUID), unlock. Lives beside the devices: it needs only the
 * driver, not a device of this process. A driver without the entry points gives
 * CUCORE_DRIVER_TOO_OLD naming the version needed.
 */
#include "runtime/runtime.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define MAX_PAIRS 64

static const char *state_name(int state) {
  switch (state) {
  case CU_PROCESS_STATE_RUNNING: return "running";
  case CU_PROCESS_STATE_LOCKED: return "locked";
  case CU_PROCESS_STATE_CHECKPOINTED: return "checkpointed";
  case CU_PROCESS_STATE_FAILED: return "failed";
  default: return "in an unknown state";
  }
}

static cucore_status check_pid(int pid, const char *fn) {
  if (pid <= 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: pid %d is not a process id (expected > 0)", fn,
                   pid);
  return cc_driver_load();
}

/* A failed call: names the process and, for an illegal state, the state it is in and the one
 * `need`ed. */
static cucore_status fail_call(CUresult r, const char *call, const char *fn, int pid,
                               const char *need) {
  CUprocessState now = CU_PROCESS_STATE_RUNNING;
  if (r == CUDA_ERROR_ILLEGAL_STATE && DRV(cuCheckpointProcessGetState) &&
      DRV(cuCheckpointProcessGetState)(pid, &now) == CUDA_SUCCESS)
    return cc_fail_cu(r, call, "%s: process %d is %s (expected %s)", fn, pid, state_name((int)now),
                      need);
  return cc_fail_cu(r, call, "%s: process %d (a CUDA process of this user, %s?)", fn, pid, need);
}

cucore_status cucore_checkpoint_get_state(int pid, cucore_process_state *out) {
  cc_begin();
  const char *fn = "cucore_checkpoint_get_state";
  CC_CHECK_ARG(out, fn, "out");
  *out = CUCORE_PROCESS_RUNNING;
  cucore_status st = check_pid(pid, fn);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuCheckpointProcessGetState);
  if (st != CUCORE_OK) return st;
  CUprocessState s = CU_PROCESS_STATE_RUNNING;
  CUresult r = DRV(cuCheckpointProcessGetState)(pid, &s);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuCheckpointProcessGetState",
                      "%s: process %d (is it a CUDA process "
                      "of this user?)",
                      fn, pid);
  *out = (cucore_process_state)s;
  return CUCORE_OK;
}

cucore_status cucore_checkpoint_lock(int pid, unsigned timeout_ms) {
  cc_begin();
  const char *fn = "cucore_checkpoint_lock";
  cucore_status st = check_pid(pid, fn);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuCheckpointProcessLock);
  if (st != CUCORE_OK) return st;
  CUcheckpointLockArgs a;
  memset(&a, 0, sizeof a);
  a.timeoutMs = timeout_ms;
  CUresult r = DRV(cuCheckpointProcessLock)(pid, &a);
  if (r == CUDA_ERROR_NOT_READY || r == CUDA_ERROR_TIMEOUT) {
    st = cc_fail_cu(r, "cuCheckpointProcessLock",
                    "%s: process %d did not reach a point where "
                    "it can be locked within %u ms; it is still running",
                    fn, pid, timeout_ms);
    if (r == CUDA_ERROR_NOT_READY) return st;
    /* The timeout passed (CUDA_ERROR_TIMEOUT, 909): NOT_READY's status, the message kept. */
    char msg[2048];
    snprintf(msg, sizeof msg, "%s", cucore_last_error());
    return cc_fail_restate(cc_status(CUCORE_NOT_READY, CUCORE_SOURCE_DRIVER, (int)r), msg);
  }
  return r == CUDA_SUCCESS ? CUCORE_OK
                           : fail_call(r, "cuCheckpointProcessLock", fn, pid, "running");
}

cucore_status cucore_checkpoint_process(int pid) {
  cc_begin();
  const char *fn = "cucore_checkpoint_process";
  cucore_status st = check_pid(pid, fn);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuCheckpointProcessCheckpoint);
  if (st != CUCORE_OK) return st;
  CUcheckpointCheckpointArgs a;
  memset(&a, 0, sizeof a);
  CUresult r = DRV(cuCheckpointProcessCheckpoint)(pid, &a);
  return r == CUDA_SUCCESS ? CUCORE_OK
                           : fail_call(r, "cuCheckpointProcessCheckpoint", fn, pid,
                                       "locked (cucore_checkpoint_lock)");
}

cucore_status cucore_checkpoint_unlock(int pid) {
  cc_begin();
  const char *fn = "cucore_checkpoint_unlock";
  cucore_status st = check_pid(pid, fn);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuCheckpointProcessUnlock);
  if (st != CUCORE_OK) return st;
  CUcheckpointUnlockArgs a;
  memset(&a, 0, sizeof a);
  CUresult r = DRV(cuCheckpointProcessUnlock)(pid, &a);
  return r == CUDA_SUCCESS ? CUCORE_OK
                           : fail_call(r, "cuCheckpointProcessUnlock", fn, pid, "locked");
}

/* ---- restore, with GPU remapping ------------------------------------------------------------ */

static int hex(int c) { return isdigit(c) ? c - '0' : tolower(c) - 'a' + 10; }

static int parse_uuid(const char *text, unsigned char out[16]) {
  if (strncmp(text, "GPU-", 4) == 0) text += 4;
  size_t n = 0;
  for (const char *p = text; *p; p++) {
    if (*p == '-' && (p - text == 8 || p - text == 13 || p - text == 18 || p - text == 23))
      continue;
    if (!isxdigit((unsigned char)*p) || n == 32) return 0;
    if (n % 2 == 0)
      out[n / 2] = (unsigned char)(hex(*p) << 4);
    else
      out[n / 2] |= (unsigned char)hex(*p);
    n++;
  }
  return n == 32;
}

/* The driver's pairs from cucore's; checks each UUID and that no old GPU is named twice. */
static cucore_status make_pairs(const cucore_checkpoint_gpu_pair *pairs, size_t count,
                                CUcheckpointGpuPair *out, const char *fn) {
  if (count && !pairs)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: `pairs` is NULL with count %zu", fn, count);
  if (count > MAX_PAIRS)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %zu GPU pairs (at most %d)", fn, count, MAX_PAIRS);
  for (size_t i = 0; i < count; i++) {
    const char *bad = NULL;
    if (!parse_uuid(pairs[i].old_uuid, (unsigned char *)out[i].oldUuid.bytes))
      bad = pairs[i].old_uuid;
    else if (!parse_uuid(pairs[i].new_uuid, (unsigned char *)out[i].newUuid.bytes))
      bad = pairs[i].new_uuid;
    if (bad)
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "%s: pair %zu: \"%.40s\" is not a GPU UUID "
                     "(expected xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, as in "
                     "cucore_device_props.uuid, optionally prefixed GPU-)",
                     fn, i, bad);
    for (size_t j = 0; j < i; j++)
      if (memcmp(out[j].oldUuid.bytes, out[i].oldUuid.bytes, 16) == 0)
        return cc_fail(CUCORE_INVALID_ARGUMENT,
                       "%s: GPU %s is remapped twice (pairs %zu and "
                       "%zu)",
                       fn, pairs[i].old_uuid, j, i);
  }
  return CUCORE_OK;
}

cucore_status cucore_checkpoint_restore(int pid, const cucore_checkpoint_gpu_pair *pairs,
                                        size_t count) {
  cc_begin();
  const char *fn = "cucore_checkpoint_restore";
  CUcheckpointGpuPair cp[MAX_PAIRS];
  memset(cp, 0, sizeof cp);
  cucore_status st = make_pairs(pairs, count, cp, fn);
  if (st == CUCORE_OK) st = check_pid(pid, fn);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuCheckpointProcessRestore);
  if (st != CUCORE_OK) return st;
  CUcheckpointRestoreArgs a;
  memset(&a, 0, sizeof a);
  a.gpuPairs = count ? cp : NULL;
  a.gpuPairsCount = (unsigned)count;
  CUresult r = DRV(cuCheckpointProcessRestore)(pid, &a);
  return r == CUDA_SUCCESS ? CUCORE_OK
                           : fail_call(r, "cuCheckpointProcessRestore", fn, pid,
                                       count ? "checkpointed, and every checkpointed GPU in the "
                                               "pairs, onto GPUs of the same chip"
                                             : "checkpointed (cucore_checkpoint_process)");
}
