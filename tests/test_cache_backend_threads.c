/* test_cache_backend_threads.c -- the compile cache's back end used by several threads at
 * once while another thread installs and removes back ends: every compile succeeds with the
 * right code, every entry handed out is released, and a removed back end is not called
 * again.
 * Runs under ThreadSanitizer with `make tsan`. */
#include "backend_support.h"

#include <stdatomic.h>

#define NTHREADS 4
#define SOURCES 2
#define SWAPS 40

typedef struct shared {
  pthread_barrier_t barrier;
  char *src[SOURCES];
  cucore_object *ref[SOURCES];
  memstore stores[2];
  atomic_int workers_done; /* the swapper goes on until every worker has finished */
} shared;

typedef struct worker {
  shared *sh;
  int id;
  int ok;
  char error[512];
} worker;

static void *compile_main(void *p) {
  worker *w = p;
  pthread_barrier_wait(&w->sh->barrier);
  w->ok = 1;
  int rounds = getenv("CUCORE_UNDER_VALGRIND") ? 1 : 3; /* valgrind runs threads one at a time */
  for (int round = 0; round < rounds && w->ok; round++)
    for (int s = 0; s < SOURCES && w->ok; s++) {
      cucore_object *obj = NULL;
      cucore_status st = cache_test_compile(w->sh->src[s], "k.cu", "sm_90", CUCORE_CODE_CUBIN, NULL,
                                            NULL, 0, 1, &obj, NULL);
      if (st != CUCORE_OK || !cache_test_same_object(obj, w->sh->ref[s])) {
        w->ok = 0;
        snprintf(w->error, sizeof w->error, "thread %d, source %d: %s", w->id, s,
                 st != CUCORE_OK ? cucore_last_error() : "another object");
      }
      cucore_object_destroy(obj);
      if ((w->id + round) % 2) cc_cache_memory_clear(); /* reach the back end again */
    }
  atomic_fetch_add(&w->sh->workers_done, 1);
  return NULL;
}

/* Installs the two stores in turn, and now and then none, at least SWAPS times and until every
 * worker has finished (under valgrind the compiles can outlast any fixed count), ending with a
 * store installed. */
static void *swap_main(void *p) {
  shared *sh = p;
  pthread_barrier_wait(&sh->barrier);
  for (int i = 0; i < SWAPS || atomic_load(&sh->workers_done) < NTHREADS; i++) {
    int k = i % 2;
    cucore_cache_backend b = memstore_backend(&sh->stores[k], CUCORE_CACHE_BACKEND_ONLY);
    cucore_cache_set_backend(i % 5 == 4 ? NULL : &b);
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
  }
  cucore_cache_backend last = memstore_backend(&sh->stores[0], CUCORE_CACHE_BACKEND_ONLY);
  cucore_cache_set_backend(&last);
  return NULL;
}

static void threads_use_and_replace_backends(void **state) {
  (void)state;
  char *dir = cache_test_mkdtemp();
  assert_int_equal(cache_test_settings(dir), 0);
  shared *sh = calloc(1, sizeof *sh);
  for (int s = 0; s < SOURCES; s++) {
    sh->src[s] = cache_test_source(900 + s);
    assert_ok(cache_test_compile(sh->src[s], "k.cu", "sm_90", CUCORE_CODE_CUBIN, NULL, NULL, 0, 0,
                                 &sh->ref[s], NULL));
  }
  memstore_init(&sh->stores[0]);
  memstore_init(&sh->stores[1]);
  pthread_barrier_init(&sh->barrier, NULL, NTHREADS + 1);
  worker w[NTHREADS];
  pthread_t th[NTHREADS], swapper;
  for (int i = 0; i < NTHREADS; i++) {
    w[i] = (worker){sh, i, 0, ""};
    assert_int_equal(pthread_create(&th[i], NULL, compile_main, &w[i]), 0);
  }
  assert_int_equal(pthread_create(&swapper, NULL, swap_main, sh), 0);
  for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
  pthread_join(swapper, NULL);
  for (int i = 0; i < NTHREADS; i++)
    if (!w[i].ok) fail_msg("%s", w[i].error);
  for (int k = 0; k < 2; k++) assert_int_equal(sh->stores[k].outstanding, 0);
  assert_true(sh->stores[0].gets + sh->stores[1].gets > 0);
  /* Removed: neither store is called again. */
  assert_ok(cucore_cache_set_backend(NULL));
  int calls = sh->stores[0].gets + sh->stores[1].gets + sh->stores[0].puts + sh->stores[1].puts;
  cc_cache_memory_clear();
  cucore_object *obj = NULL;
  assert_ok(cache_test_compile(sh->src[0], "k.cu", "sm_90", CUCORE_CODE_CUBIN, NULL, NULL, 0, 1,
                               &obj, NULL));
  cucore_object_destroy(obj);
  assert_int_equal(sh->stores[0].gets + sh->stores[1].gets + sh->stores[0].puts +
                       sh->stores[1].puts,
                   calls);
  pthread_barrier_destroy(&sh->barrier);
  for (int s = 0; s < SOURCES; s++) {
    cucore_object_destroy(sh->ref[s]);
    free(sh->src[s]);
  }
  memstore_free(&sh->stores[0]);
  memstore_free(&sh->stores[1]);
  free(sh);
  cache_test_settings(NULL);
  cache_test_rm_rf(dir);
  free(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(threads_use_and_replace_backends),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
