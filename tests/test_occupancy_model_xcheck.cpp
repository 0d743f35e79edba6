// test_occupancy_model_xcheck.cpp -- cucore's host occupancy model against NVIDIA's own host
// calculator, cuda_occupancy.h (a C++ header of the CUDA toolkit), over a grid of inputs for
// every architecture in cucore's table.
//
// Both sides get the same architecture limits (cucore's table row turned into a
// cudaOccDeviceProp), so this checks the arithmetic, not the table (the table's numbers are
// checked against the programming guide in test_occupancy_model_table.c). The kernel is
// modelled the way cucore launches it: the dynamic shared-memory maximum raised as needed
// (FUNC_SHMEM_LIMIT_OPTIN with maxDynamicSharedSizeBytes = opt-in max - static).
//
// Reports the number of cases compared and the mismatches; exits 1 when any answer differs,
// except where cuda_occupancy.h contradicts itself (its cudaOccAvailableDynamicSMemPerBlock
// can return a size at which its own cudaOccMaxActiveBlocksPerMultiprocessor gives fewer
// blocks than asked for: it ignores the per-block reservation); those are counted apart.
#include <cuda_occupancy.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "cucore.h"
extern "C" {
#include "exec/occupancy_model.h"
}

namespace {

long g_cases = 0, g_mismatches = 0;
int g_printed = 0;

void mismatch(const char *what, const cucore_arch_limits &l, const cucore_kernel_resources &k,
              int block, size_t dyn, long model, long nvidia) {
  g_mismatches++;
  if (g_printed++ < 25)
    std::printf("MISMATCH %s: %s regs=%d static=%d maxthr=%d barriers=%d carveout=%d block=%d "
                "dyn=%zu: cucore %ld, cuda_occupancy.h %ld\n",
                what, l.name, k.registers, k.static_shared_bytes, k.max_threads_per_block,
                k.barriers, k.carveout_percent, block, dyn, model, nvidia);
}

cudaOccDeviceProp device_of(const cucore_arch_limits &l) {
  cudaOccDeviceProp p;
  p.computeMajor = l.arch / 10;
  p.computeMinor = l.arch % 10;
  p.maxThreadsPerBlock = l.max_threads_per_block;
  p.maxThreadsPerMultiprocessor = l.max_threads_per_sm;
  p.regsPerBlock = l.max_regs_per_block;
  p.regsPerMultiprocessor = l.regs_per_sm;
  p.warpSize = l.warp_size;
  p.sharedMemPerBlock = (size_t)l.shared_per_block;
  p.sharedMemPerMultiprocessor = (size_t)l.shared_per_sm;
  p.numSms = l.sm_count;
  p.sharedMemPerBlockOptin = (size_t)l.shared_per_block_optin;
  p.reservedSharedMemPerBlock = (size_t)l.reserved_shared_per_block;
  return p;
}

cudaOccFuncAttributes function_of(const cucore_arch_limits &l, const cucore_kernel_resources &k,
                                  unsigned flags) {
  cudaOccFuncAttributes a;
  a.maxThreadsPerBlock = k.max_threads_per_block > 0 ? k.max_threads_per_block : INT_MAX;
  a.numRegs = k.registers;
  a.sharedSizeBytes = (size_t)k.static_shared_bytes;
  a.partitionedGCConfig = (flags & CUCORE_OCCUPANCY_DISABLE_CACHING_OVERRIDE)
                              ? PARTITIONED_GC_ON_STRICT
                              : PARTITIONED_GC_OFF;
  a.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
  a.maxDynamicSharedSizeBytes = (size_t)(l.shared_per_block_optin - k.static_shared_bytes);
  a.numBlockBarriers = k.barriers < 0 ? 1 : k.barriers;
  a.virtualResourceCount = 0;
  return a;
}

cudaOccDeviceState state_of(const cucore_kernel_resources &k) {
  cudaOccDeviceState s;
  s.carveoutConfig = k.carveout_percent;
  return s;
}

int nvidia_blocks(const cudaOccDeviceProp &p, const cudaOccFuncAttributes &a,
                  const cudaOccDeviceState &s, int block, size_t dyn, cudaOccResult *r) {
  cudaOccResult local;
  if (!r) r = &local;
  std::memset(r, 0, sizeof *r);
  cudaOccError e = cudaOccMaxActiveBlocksPerMultiprocessor(r, &p, &a, &s, block, dyn);
  if (e != CUDA_OCC_SUCCESS) {
    std::printf("cuda_occupancy.h failed (%d) for %d.%d block %d\n", (int)e, p.computeMajor,
                p.computeMinor, block);
    std::exit(1);
  }
  return r->activeBlocksPerMultiprocessor;
}

// --- max active blocks per SM, with each per-limit count and the limiting factors -----------
void check_blocks(const cucore_arch_limits &l, const cucore_kernel_resources &k, int block,
                  size_t dyn, unsigned flags) {
  cudaOccDeviceProp p = device_of(l);
  cudaOccFuncAttributes a = function_of(l, k, flags);
  cudaOccDeviceState s = state_of(k);
  cudaOccResult nr;
  int nvidia = nvidia_blocks(p, a, s, block, dyn, &nr);

  cucore_occupancy_result r;
  cc_occ_why why;
  int model = cc_occupancy_model_blocks(&l, &k, block, dyn, flags, &r, &why);
  g_cases++;
  if (model != nvidia) mismatch("active blocks", l, k, block, dyn, model, nvidia);
  if (r.blocks_limit_warps != nr.blockLimitWarps)
    mismatch("warps limit", l, k, block, dyn, r.blocks_limit_warps, nr.blockLimitWarps);
  if (r.blocks_limit_registers != nr.blockLimitRegs)
    mismatch("registers limit", l, k, block, dyn, r.blocks_limit_registers, nr.blockLimitRegs);
  if (r.blocks_limit_shared != nr.blockLimitSharedMem)
    mismatch("shared limit", l, k, block, dyn, r.blocks_limit_shared, nr.blockLimitSharedMem);
  if (r.blocks_limit_blocks != nr.blockLimitBlocks)
    mismatch("blocks limit", l, k, block, dyn, r.blocks_limit_blocks, nr.blockLimitBlocks);
  if (r.blocks_limit_barriers != nr.blockLimitBarriers)
    mismatch("barriers limit", l, k, block, dyn, r.blocks_limit_barriers, nr.blockLimitBarriers);
  // Same bit order: warps 1, registers 2, shared 4, blocks 8, barriers 0x10. When the barrier
  // limit lowers the answer, cuda_occupancy.h keeps the bits it set before applying it (for
  // limits that no longer bind); only the barriers bit is right then.
  unsigned nvidia_mask = nr.limitingFactors & 0x1fu;
  int others = nr.blockLimitWarps;
  if (nr.blockLimitRegs < others) others = nr.blockLimitRegs;
  if (nr.blockLimitSharedMem < others) others = nr.blockLimitSharedMem;
  if (nr.blockLimitBlocks < others) others = nr.blockLimitBlocks;
  if (nr.blockLimitBarriers < others) nvidia_mask = OCC_LIMIT_BARRIERS;
  if (r.limiting_mask != nvidia_mask)
    mismatch("limiting factors", l, k, block, dyn, r.limiting_mask, nr.limitingFactors);

  // The public call succeeds exactly when at least one block fits, and agrees on the count.
  cucore_occupancy_result pub;
  cucore_status st = cucore_occupancy_model_blocks(&l, &k, block, dyn, flags, &pub);
  if ((st == CUCORE_OK) != (nvidia > 0) || (st == CUCORE_OK && pub.active_blocks_per_sm != nvidia))
    mismatch("public status", l, k, block, dyn, st == CUCORE_OK ? pub.active_blocks_per_sm : -1,
             nvidia);
}

// --- best block size ----------------------------------------------------------------------------
size_t g_per_thread = 0, g_base = 0;
size_t nvidia_smem_of(int block) { return g_base + g_per_thread * (size_t)block; }
size_t cucore_smem_of(int block, void *userdata) {
  (void)userdata;
  return g_base + g_per_thread * (size_t)block;
}

void check_best(const cucore_arch_limits &l, const cucore_kernel_resources &k, size_t dyn,
                bool variable, int block_size_limit) {
  cudaOccDeviceProp p = device_of(l);
  cucore_kernel_resources kn = k; // cuda_occupancy.h has no block-size limit: fold it in
  if (block_size_limit > 0 &&
      (kn.max_threads_per_block == 0 || block_size_limit < kn.max_threads_per_block))
    kn.max_threads_per_block = block_size_limit;
  cudaOccFuncAttributes a = function_of(l, kn, 0);
  cudaOccDeviceState s = state_of(k);
  int n_grid = 0, n_block = 0;
  cudaOccError e = cudaOccMaxPotentialOccupancyBlockSize(&n_grid, &n_block, &p, &a, &s,
                                                         variable ? nvidia_smem_of : NULL, dyn);
  if (e != CUDA_OCC_SUCCESS) {
    std::printf("cudaOccMaxPotentialOccupancyBlockSize failed (%d)\n", (int)e);
    std::exit(1);
  }
  cucore_occupancy_best best;
  cucore_status st = cucore_occupancy_model_best_block(&l, &k, dyn,
                                                       variable ? cucore_smem_of : NULL, NULL,
                                                       block_size_limit, 0, &best);
  g_cases++;
  if ((st == CUCORE_OK) != (n_block > 0))
    mismatch("best block status", l, k, block_size_limit, dyn, st, n_block);
  else if (st == CUCORE_OK && (best.block_size != n_block || best.min_grid_size != n_grid))
    mismatch("best block size", l, k, block_size_limit, dyn,
             best.block_size * 100000L + best.min_grid_size, n_block * 100000L + n_grid);
}

// --- dynamic shared memory available per block ---------------------------------------------------
long g_header_inconsistent = 0, g_available_same = 0;

void check_available(const cucore_arch_limits &l, const cucore_kernel_resources &k, int block,
                     int want) {
  cudaOccDeviceProp p = device_of(l);
  cudaOccFuncAttributes a = function_of(l, k, 0);
  cudaOccDeviceState s = state_of(k);
  size_t nvidia = 0;
  cudaOccError e = cudaOccAvailableDynamicSMemPerBlock(&nvidia, &p, &a, &s, want, block);
  size_t model = 0;
  cucore_status st = cucore_occupancy_model_available_shared(&l, &k, block, want, &model);
  g_cases++;
  if ((e == CUDA_OCC_SUCCESS) != (st == CUCORE_OK)) {
    mismatch("available smem status", l, k, block, (size_t)want, st, e);
    return;
  }
  if (st != CUCORE_OK) return;
  // The driver answers as cuda_occupancy.h does (checked on an H100 by tests/gpu_occupancy.c),
  // including not taking the per-block reservation off, so the model must equal the header.
  if (model == nvidia) {
    g_available_same++;
    return;
  }
  mismatch("available smem", l, k, block, (size_t)want, (long)model, (long)nvidia);
}

} // namespace

int main() {
  int n_arch = 0;
  if (cucore_arch_get_list(NULL, 0, &n_arch) != CUCORE_OK) return 1;
  int archs[64];
  if (n_arch > 64 || cucore_arch_get_list(archs, 64, &n_arch) != CUCORE_OK) return 1;

  static const int regs[] = {0, 1, 16, 24, 32, 33, 40, 48, 64, 65, 72, 96, 128, 168, 200, 255};
  static const int statics[] = {0, 1, 1024, 4000, 12288, 40000, 49152};
  static const size_t dyns[] = {0,      1,          127,    1000,       4096,
                                16384,  40000,      49152,  65536,      99 * 1024,
                                100000, 163 * 1024, 200000, 227 * 1024, 300000};
  static const int blocks[] = {1,   31,  32,  33,  64,  65,  96,  100, 128, 160,  192, 255,
                               256, 257, 320, 384, 500, 512, 513, 640, 768, 1000, 1024};
  static const int carveouts[] = {-1, 0, 25, 50, 100};
  static const int barriers[] = {-1, 0, 2, 3, 8, 16};

  long before;
  for (int ai = 0; ai < n_arch; ai++) {
    cucore_arch_limits l;
    if (cucore_arch_get_limits(archs[ai], &l) != CUCORE_OK) return 1;
    l.sm_count = 100;
    before = g_cases;
    cucore_kernel_resources k = CUCORE_KERNEL_RESOURCES_INIT;
    // Active blocks: registers x static x dynamic x block size x carveout.
    for (int r : regs)
      for (int st : statics)
        for (size_t d : dyns)
          for (int b : blocks)
            for (int c : carveouts) {
              k.registers = r;
              k.static_shared_bytes = st;
              k.carveout_percent = c;
              k.barriers = -1;
              check_blocks(l, k, b, d, 0);
            }
    // Named barriers and the caching-override flag.
    for (int bar : barriers)
      for (int r : {0, 32, 64})
        for (int b : blocks)
          for (size_t d : {(size_t)0, (size_t)4096})
            for (unsigned f : {0u, 1u}) {
              k.registers = r;
              k.static_shared_bytes = 0;
              k.carveout_percent = -1;
              k.barriers = bar;
              check_blocks(l, k, b, d, f);
            }
    // Best block size: fixed dynamic memory, memory growing with the block, a kernel limit,
    // and a caller's block-size limit.
    k.barriers = -1;
    for (int r : regs)
      for (int st : {0, 4000, 40000})
        for (int c : carveouts)
          for (int maxthr : {0, 768, 640, 256, 100, 32}) {
            k.registers = r;
            k.static_shared_bytes = st;
            k.carveout_percent = c;
            k.max_threads_per_block = maxthr;
            for (size_t d : {(size_t)0, (size_t)4096, (size_t)40000, (size_t)100000})
              check_best(l, k, d, false, 0);
            for (size_t per : {(size_t)16, (size_t)128, (size_t)200}) {
              g_per_thread = per;
              g_base = 512;
              check_best(l, k, 0, true, 0);
            }
            for (int lim : {1024, 500, 96}) check_best(l, k, 0, false, lim);
          }
    k.max_threads_per_block = 0;
    // Available dynamic shared memory per block.
    for (int r : {0, 32, 64, 128})
      for (int st : {0, 1, 1000, 12288, 40000})
        for (int c : carveouts)
          for (int b : {32, 96, 128, 256, 1024})
            for (int want : {1, 2, 3, 4, 5, 7, 8, 16, 24, 32}) {
              k.registers = r;
              k.static_shared_bytes = st;
              k.carveout_percent = c;
              check_available(l, k, b, want);
            }
    std::printf("%-7s %ld cases\n", l.name, g_cases - before);
  }
  std::printf("compared %ld cases with cuda_occupancy.h: %ld mismatches\n", g_cases, g_mismatches);
  std::printf("available dynamic shared memory: %ld answers identical; %ld where "
              "cuda_occupancy.h's answer does not fit by its own count (not mismatches)\n",
              g_available_same, g_header_inconsistent);
  return g_mismatches == 0 && g_cases > 0 ? 0 : 1;
}
