/*
 * registry.c -- the record of every allocation and registered range cucore made: an AVL tree
 * of non-overlapping [base, base + size) ranges keyed by base, under one mutex. A lookup
 * (each copy) finds the node with the greatest base <= address in O(log n); inserts and
 * removals take well under a microsecond. (A read-write lock cost 18 ns more per
 * allocate/free pair than the mutex, on the path a stream-ordered pair of 0.6 us takes; the
 * sections are too short for shared readers to pay that back.) Freed nodes are kept for reuse
 * so the hot path does not call malloc, and the last frees are remembered so a double free can
 * be named as one.
 *
 * A pinned-pool block (CC_REC_LIVE) keeps its node while it is pinned; whether it is handed out,
 * and for how many bytes, is in its cc_hpool_block, which the pool changes without this lock (one
 * compare-and-swap per free). Lookups see such a node only while the block is handed out, with
 * the size asked for; inserts see it always (its memory stays pinned), and never evict it.
 */
#define _GNU_SOURCE
#include "memory/memory.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct cc_reg_node cc_reg_node;

struct cc_reg_node {
  cc_mem_rec rec;
  cc_reg_node *left, *right;
  int height;
};

#define CC_REG_FREED_RING 128

struct cc_registry {
  pthread_mutex_t lock;
  cc_reg_node *root;
  cc_reg_node *spare; /* freed nodes, reused (linked through `right`) */
  size_t count;
  cc_mem_rec freed[CC_REG_FREED_RING]; /* the most recent frees, for "freed already" */
  unsigned freed_next, freed_count;
};

cc_registry cc_mem_registry = {.lock = PTHREAD_MUTEX_INITIALIZER};
_Atomic uint64_t cc_mem_reg_gen = 1;

/* A record of the process's registry was removed or changed (under its lock, so the writers
 * are one at a time): what threads remember of earlier lookups is void. */
static void changed(cc_registry *r) {
  if (r != &cc_mem_registry) return;
  atomic_store_explicit(&cc_mem_reg_gen,
                        atomic_load_explicit(&cc_mem_reg_gen, memory_order_relaxed) + 1,
                        memory_order_release);
}

cc_registry *cc_reg_create(void) {
  cc_registry *r = cc_raw_calloc(1, sizeof *r);
  if (r) pthread_mutex_init(&r->lock, NULL);
  return r;
}

static void free_tree(cc_reg_node *n) {
  if (!n) return;
  free_tree(n->left);
  free_tree(n->right);
  free(n);
}

void cc_reg_free(cc_registry *r) {
  if (!r) return;
  free_tree(r->root);
  while (r->spare) {
    cc_reg_node *next = r->spare->right;
    free(r->spare);
    r->spare = next;
  }
  pthread_mutex_destroy(&r->lock);
  free(r);
}

/* ---- AVL helpers (all under the write lock) -------------------------------------------------- */

static int height(const cc_reg_node *n) { return n ? n->height : 0; }

static void update(cc_reg_node *n) {
  int hl = height(n->left), hr = height(n->right);
  n->height = 1 + (hl > hr ? hl : hr);
}

static cc_reg_node *rotate_right(cc_reg_node *y) {
  cc_reg_node *x = y->left;
  y->left = x->right;
  x->right = y;
  update(y);
  update(x);
  return x;
}

static cc_reg_node *rotate_left(cc_reg_node *x) {
  cc_reg_node *y = x->right;
  x->right = y->left;
  y->left = x;
  update(x);
  update(y);
  return y;
}

static cc_reg_node *rebalance(cc_reg_node *n) {
  update(n);
  int balance = height(n->left) - height(n->right);
  if (balance > 1) {
    if (height(n->left->left) < height(n->left->right)) n->left = rotate_left(n->left);
    return rotate_right(n);
  }
  if (balance < -1) {
    if (height(n->right->right) < height(n->right->left)) n->right = rotate_right(n->right);
    return rotate_left(n);
  }
  return n;
}

static cc_reg_node *insert_node(cc_reg_node *root, cc_reg_node *n) {
  if (!root) return n;
  if (n->rec.base < root->rec.base)
    root->left = insert_node(root->left, n);
  else
    root->right = insert_node(root->right, n);
  return rebalance(root);
}

/* Detaches the leftmost node of `root` into *min. */
static cc_reg_node *remove_min(cc_reg_node *root, cc_reg_node **min) {
  if (!root->left) {
    *min = root;
    return root->right;
  }
  root->left = remove_min(root->left, min);
  return rebalance(root);
}

/* Detaches the node with `base` into *out (NULL when absent). */
static cc_reg_node *remove_node(cc_reg_node *root, uint64_t base, cc_reg_node **out) {
  if (!root) return NULL;
  if (base < root->rec.base) {
    root->left = remove_node(root->left, base, out);
  } else if (base > root->rec.base) {
    root->right = remove_node(root->right, base, out);
  } else {
    *out = root;
    cc_reg_node *l = root->left, *r = root->right;
    if (!r) return l;
    cc_reg_node *min = NULL;
    r = remove_min(r, &min);
    min->left = l;
    min->right = r;
    return rebalance(min);
  }
  return rebalance(root);
}

/* The node with the greatest base <= addr. */
static cc_reg_node *floor_node(cc_reg_node *n, uint64_t addr) {
  cc_reg_node *best = NULL;
  while (n) {
    if (n->rec.base <= addr) {
      best = n;
      n = n->right;
    } else {
      n = n->left;
    }
  }
  return best;
}

/* The node with the smallest base >= addr. */
static cc_reg_node *ceil_node(cc_reg_node *n, uint64_t addr) {
  cc_reg_node *best = NULL;
  while (n) {
    if (n->rec.base >= addr) {
      best = n;
      n = n->left;
    } else {
      n = n->right;
    }
  }
  return best;
}

static int contains(const cc_mem_rec *rec, uint64_t addr) {
  return addr >= rec->base && addr - rec->base < rec->size;
}

static cc_hpool_block *block_of(const cc_reg_node *n) {
  return (cc_hpool_block *)(uintptr_t)n->rec.aux;
}

static uint64_t block_state(const cc_reg_node *n) {
  return atomic_load_explicit(&block_of(n)->state, memory_order_acquire);
}

/* 1 when lookups do not see the node: a pinned-pool block that is not handed out. */
static int hidden(const cc_reg_node *n) {
  return (n->rec.flags & CC_REC_LIVE) && !(block_state(n) & CC_HPOOL_IN_USE);
}

/* The record as lookups see it: a handed-out pool block has the size asked for. */
static cc_mem_rec view(const cc_reg_node *n) {
  cc_mem_rec r = n->rec;
  if (r.flags & CC_REC_LIVE)
    r.size = atomic_load_explicit(&block_of(n)->requested, memory_order_relaxed);
  return r;
}

/* 1 when the node, as `all` (inserts) or lookups see it, contains addr (a zero-size record
 * contains only its base). */
static int node_contains(const cc_reg_node *n, uint64_t addr, int all) {
  if (all) return contains(&n->rec, addr) || (n->rec.size == 0 && n->rec.base == addr);
  if (hidden(n)) return 0;
  cc_mem_rec r = view(n);
  return contains(&r, addr) || (r.size == 0 && r.base == addr);
}

/* The node containing addr, as lookups see it. */
static cc_reg_node *containing(cc_reg_node *root, uint64_t addr) {
  cc_reg_node *n = floor_node(root, addr);
  return n && node_contains(n, addr, 0) ? n : NULL;
}

/* The lowest node at or above `lo` that lookups (or, with `all`, inserts) see. */
static cc_reg_node *next_seen(cc_reg_node *root, uint64_t lo, int all) {
  cc_reg_node *n = ceil_node(root, lo);
  while (n && !all && hidden(n))
    n = n->rec.base == UINT64_MAX ? NULL : ceil_node(root, n->rec.base + 1);
  return n;
}

/* The lowest node overlapping [lo, hi), as lookups or (`all`) inserts see it. */
static cc_reg_node *overlapping(cc_reg_node *root, uint64_t lo, uint64_t hi, int all) {
  cc_reg_node *n = floor_node(root, lo);
  if (n && node_contains(n, lo, all)) return n;
  n = next_seen(root, lo, all);
  if (n && n->rec.base < hi) return n;
  return NULL;
}

static void remember_freed(cc_registry *r, const cc_mem_rec *rec) {
  r->freed[r->freed_next] = *rec;
  r->freed_next = (r->freed_next + 1) % CC_REG_FREED_RING;
  if (r->freed_count < CC_REG_FREED_RING) r->freed_count++;
}

static void recycle(cc_registry *r, cc_reg_node *n) {
  n->left = NULL;
  n->right = r->spare;
  r->spare = n;
}

/* ---- the interface ----------------------------------------------------------------------- */

static cc_reg_result insert_locked(cc_registry *r, const cc_mem_rec *rec, int evict);

/* The threads' front tables drain into the process's tree. */
static int drain_sink(void *p, const cc_mem_rec *rec, int add) {
  cc_registry *r = p;
  if (add) return insert_locked(r, rec, 1) == CC_REG_OK;
  cc_reg_node *gone = NULL;
  r->root = remove_node(r->root, rec->base, &gone);
  if (gone) {
    r->count--;
    recycle(r, gone);
    changed(r);
  }
  return 1;
}

/* Takes the lock; the process's registry first takes in what the threads' front tables hold,
 * so everything below sees every record. */
static void lock_all(cc_registry *r) {
  pthread_mutex_lock(&r->lock);
  if (r == &cc_mem_registry) cc_front_drain(drain_sink, r);
}

cc_reg_result cc_reg_insert(cc_registry *r, const cc_mem_rec *rec, int evict) {
  lock_all(r);
  cc_reg_result res = insert_locked(r, rec, evict);
  pthread_mutex_unlock(&r->lock);
  return res;
}

static cc_reg_result insert_locked(cc_registry *r, const cc_mem_rec *rec, int evict) {
  uint64_t hi = rec->base + (rec->size ? rec->size : 1);
  if (hi < rec->base) hi = UINT64_MAX;
  cc_reg_node *o;
  while ((o = overlapping(r->root, rec->base, hi, 1)) != NULL) {
    if (!evict || (o->rec.flags & CC_REC_LIVE)) { /* a pool block's memory is still pinned */
      return CC_REG_OVERLAP;
    }
    cc_reg_node *gone = NULL;
    r->root = remove_node(r->root, o->rec.base, &gone);
    r->count--;
    recycle(r, gone);
    changed(r);
  }
  cc_reg_node *n = r->spare;
  if (n) {
    r->spare = n->right;
  } else {
    n = cc_raw_malloc(sizeof *n);
    if (!n) return CC_REG_NO_MEMORY;
  }
  n->rec = *rec;
  n->left = n->right = NULL;
  n->height = 1;
  r->root = insert_node(r->root, n);
  r->count++;
  return CC_REG_OK;
}

int cc_reg_find(cc_registry *r, uint64_t addr, cc_mem_rec *out) {
  lock_all(r);
  cc_reg_node *n = containing(r->root, addr);
  if (n && out) *out = view(n);
  pthread_mutex_unlock(&r->lock);
  return n != NULL;
}

int cc_reg_find_overlap(cc_registry *r, uint64_t lo, uint64_t hi, cc_mem_rec *out) {
  lock_all(r);
  cc_reg_node *n = overlapping(r->root, lo, hi, 1); /* cached pool blocks are pinned too */
  if (n && out) *out = view(n);
  pthread_mutex_unlock(&r->lock);
  return n != NULL;
}

/* What a lookup saw of node `n`, for cc_reg_seen (under the lock). */
static void note_seen(const cc_reg_node *n, cc_reg_seen *seen) {
  if (!seen) return;
  seen->gen = atomic_load_explicit(&cc_mem_reg_gen, memory_order_relaxed);
  seen->block = NULL;
  seen->block_state = 0;
  if (n->rec.flags & CC_REC_LIVE) {
    seen->block = block_of(n);
    seen->block_state = block_state(n);
  }
}

static int locate(cc_reg_node *root, uint64_t lo, uint64_t hi, cc_mem_rec *out, cc_reg_seen *seen) {
  if (seen) seen->gen = 0;
  cc_reg_node *n = containing(root, lo);
  if (n) {
    note_seen(n, seen);
    *out = view(n);
    /* A pool block handed out again meanwhile (the pool needs no lock): not to be trusted. */
    if (seen && seen->block && block_state(n) != seen->block_state) seen->gen = 0;
    return CC_LOC_IN;
  }
  n = next_seen(root, lo, 0);
  if (n && n->rec.base < hi) {
    *out = view(n);
    return CC_LOC_INTO;
  }
  return CC_LOC_NONE;
}

int cc_reg_locate(cc_registry *r, uint64_t lo, uint64_t hi, cc_mem_rec *out) {
  lock_all(r);
  int where = locate(r->root, lo, hi, out, NULL);
  pthread_mutex_unlock(&r->lock);
  return where;
}

void cc_reg_locate2(cc_registry *r, uint64_t a, uint64_t b, uint64_t bytes, cc_mem_rec *ra, int *la,
                    cc_mem_rec *rb, int *lb, cc_reg_seen *sa, cc_reg_seen *sb) {
  lock_all(r);
  int mine = r == &cc_mem_registry;
  *la = locate(r->root, a, a + bytes, ra, mine ? sa : NULL);
  *lb = locate(r->root, b, b + bytes, rb, mine ? sb : NULL);
  pthread_mutex_unlock(&r->lock);
}

cc_reg_result cc_reg_take(cc_registry *r, uint64_t base, cc_reg_accept accept, void *ctx,
                          int take_owned, cc_mem_rec *out) {
  lock_all(r);
  cc_reg_node *n = containing(r->root, base);
  cc_reg_result res = CC_REG_OK;
  cc_mem_rec seen;
  if (!n) {
    res = CC_REG_NOT_FOUND;
  } else {
    seen = view(n);
    if (out) *out = seen;
    if (n->rec.base != base)
      res = CC_REG_NOT_BASE;
    else if (accept && !accept(&seen, ctx))
      res = CC_REG_REJECTED;
    else if (n->rec.textures || n->rec.exports ||
             (!take_owned && (n->rec.flags & CC_REC_DLPACK_OWNED)))
      res = CC_REG_BUSY;
  }
  if (res == CC_REG_OK && (n->rec.flags & CC_REC_LIVE)) {
    /* A pool block stays recorded: it becomes free (a racing free wins or loses here). */
    uint64_t st = block_state(n);
    if ((st & CC_HPOOL_IN_USE) && cc_hpool_block_unuse(block_of(n), st))
      n->rec.flags &= ~(uint32_t)CC_REC_DLPACK_OWNED;
    else
      res = CC_REG_NOT_FOUND;
    changed(r);
  } else if (res == CC_REG_OK) {
    cc_reg_node *gone = NULL;
    r->root = remove_node(r->root, base, &gone);
    r->count--;
    remember_freed(r, &gone->rec);
    recycle(r, gone);
    changed(r);
  }
  pthread_mutex_unlock(&r->lock);
  return res;
}

/* A pool block's BUSY bit follows its users, so that the pool's lock-free free refuses it;
 * 0 when the block stopped being handed out meanwhile. */
static int mark_busy(cc_reg_node *n) {
  if (!(n->rec.flags & CC_REC_LIVE)) return 1;
  int busy = n->rec.textures || n->rec.exports || (n->rec.flags & CC_REC_DLPACK_OWNED);
  uint64_t st = block_state(n);
  for (;;) {
    if (!(st & CC_HPOOL_IN_USE)) return 0;
    uint64_t want = busy ? st | CC_HPOOL_BUSY : st & ~(uint64_t)CC_HPOOL_BUSY;
    if (want == st || cc_hpool_block_update_remote(block_of(n), st, want)) return 1;
    st = block_state(n); /* freed, or freed and handed out again, meanwhile */
  }
}

cc_reg_result cc_reg_use(cc_registry *r, uint64_t addr, int which, int delta, cc_mem_rec *out) {
  lock_all(r);
  cc_reg_node *n = containing(r->root, addr);
  if (n) {
    uint32_t *c = which ? &n->rec.exports : &n->rec.textures;
    uint32_t before = *c;
    if (delta >= 0)
      *c += (uint32_t)delta;
    else
      *c = *c >= (uint32_t)-delta ? *c - (uint32_t)-delta : 0;
    if (!mark_busy(n)) {
      *c = before;
      n = NULL;
    } else if (out) {
      *out = view(n);
    }
    changed(r);
  }
  pthread_mutex_unlock(&r->lock);
  return n ? CC_REG_OK : CC_REG_NOT_FOUND;
}

cc_reg_result cc_reg_claim(cc_registry *r, uint64_t addr, cc_mem_rec *out) {
  lock_all(r);
  cc_reg_node *n = containing(r->root, addr);
  cc_reg_result res = CC_REG_NOT_FOUND;
  if (n) {
    if (out) *out = view(n);
    if (n->rec.textures || n->rec.exports || (n->rec.flags & CC_REC_DLPACK_OWNED)) {
      res = CC_REG_BUSY;
    } else {
      n->rec.flags |= CC_REC_DLPACK_OWNED;
      res = CC_REG_OK;
      if (!mark_busy(n)) {
        n->rec.flags &= ~(uint32_t)CC_REC_DLPACK_OWNED;
        res = CC_REG_NOT_FOUND;
      }
    }
    changed(r);
  }
  pthread_mutex_unlock(&r->lock);
  return res;
}

cc_reg_result cc_reg_set_flags(cc_registry *r, uint64_t base, uint32_t set, uint32_t clear) {
  lock_all(r);
  cc_reg_node *n = containing(r->root, base);
  cc_reg_result res = !n ? CC_REG_NOT_FOUND : n->rec.base != base ? CC_REG_NOT_BASE : CC_REG_OK;
  uint32_t mine = CC_REC_LIVE; /* whether a node is a pool block is the pool's to say */
  if (res == CC_REG_OK) {
    n->rec.flags = (n->rec.flags | (set & ~mine)) & ~(clear & ~mine);
    changed(r);
  }
  pthread_mutex_unlock(&r->lock);
  return res;
}

int cc_reg_remove(cc_registry *r, uint64_t base) {
  lock_all(r);
  cc_reg_node *gone = NULL;
  r->root = remove_node(r->root, base, &gone);
  if (gone) {
    r->count--;
    cc_mem_rec rec = view(gone);
    rec.flags &= ~(uint32_t)CC_REC_LIVE; /* its block record is someone else's from now on */
    rec.aux = 0;
    remember_freed(r, &rec);
    recycle(r, gone);
    changed(r);
  }
  pthread_mutex_unlock(&r->lock);
  return gone != NULL;
}

int cc_reg_was_freed(cc_registry *r, uint64_t addr, cc_mem_rec *out) {
  int found = 0;
  lock_all(r);
  cc_reg_node *n = floor_node(r->root, addr);
  if (r == &cc_mem_registry && cc_front_was_freed(addr, out)) found = 1;
  if (!found && n && (n->rec.flags & CC_REC_LIVE) && hidden(n)) { /* a pool block given back */
    cc_mem_rec v = view(n);
    if (contains(&v, addr) || v.base == addr) {
      if (out) *out = v;
      found = 1;
    }
  }
  for (unsigned i = 0; i < r->freed_count && !found; i++) { /* newest first */
    unsigned k = (r->freed_next + CC_REG_FREED_RING - 1 - i) % CC_REG_FREED_RING;
    const cc_mem_rec *f = &r->freed[k];
    if (contains(f, addr) || (f->size == 0 && f->base == addr)) {
      if (out) *out = *f;
      found = 1;
    }
  }
  pthread_mutex_unlock(&r->lock);
  return found;
}

static void owned_walk(const cc_reg_node *n, const void *owner, uint64_t *count, uint64_t *bytes) {
  if (!n) return;
  owned_walk(n->left, owner, count, bytes);
  if (n->rec.owner == owner &&
      (cc_mem_kind_is_pooled(n->rec.kind) || n->rec.kind == CUCORE_MEM_IPC_IMPORTED ||
       n->rec.kind == CUCORE_MEM_RESOURCE)) {
    (*count)++;
    *bytes += n->rec.size;
  }
  owned_walk(n->right, owner, count, bytes);
}

void cc_reg_pool_live(cc_registry *r, const void *owner, uint64_t *count, uint64_t *bytes) {
  *count = *bytes = 0;
  lock_all(r);
  owned_walk(r->root, owner, count, bytes);
  pthread_mutex_unlock(&r->lock);
}

size_t cc_reg_count(cc_registry *r) {
  lock_all(r);
  size_t n = r->count;
  pthread_mutex_unlock(&r->lock);
  return n;
}

/* Walks the tree in order: bases ascend, ranges do not overlap, heights are right and
 * balanced. Returns the node count, or -1 when a rule breaks. */
static long verify_node(const cc_reg_node *n, uint64_t *prev_end, int *first) {
  if (!n) return 0;
  long l = verify_node(n->left, prev_end, first);
  if (l < 0) return -1;
  if (!*first && n->rec.base < *prev_end) return -1;
  *first = 0;
  uint64_t end = n->rec.base + n->rec.size;
  if (end < n->rec.base) return -1;
  *prev_end = n->rec.size ? end : n->rec.base + 1;
  long r = verify_node(n->right, prev_end, first);
  if (r < 0) return -1;
  int hl = height(n->left), hr = height(n->right);
  if (n->height != 1 + (hl > hr ? hl : hr) || hl - hr > 1 || hr - hl > 1) return -1;
  return l + r + 1;
}

int cc_reg_verify(cc_registry *r) {
  lock_all(r);
  uint64_t prev_end = 0;
  int first = 1;
  long n = verify_node(r->root, &prev_end, &first);
  int ok = n >= 0 && (size_t)n == r->count;
  pthread_mutex_unlock(&r->lock);
  return ok;
}
