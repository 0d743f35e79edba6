// big_params.cu -- by-value parameters past the old 4 KiB limit (CUDA 12.1+, sm_70+).
//
// 32 764 bytes is the largest parameter buffer a kernel may have. The cubin describes such
// kernels with EIATTR_KPARAM_INFO_V2 records.

// 4400 bytes: just past the old 4096-byte limit.
struct Blob4400 {
  char bytes[4400];
};

// 8 KiB of ints (align 4).
struct Blob8k {
  int words[2048];
};

// The maximum: 32 764 bytes, the whole parameter buffer.
struct Blob32764 {
  char bytes[32764];
};

extern "C" __global__ void big_4400(Blob4400 b, int *out) {
  out[threadIdx.x] = b.bytes[threadIdx.x] + b.bytes[4399];
}

extern "C" __global__ void big_8k(int x, Blob8k b, long long *out) {
  out[threadIdx.x] = b.words[threadIdx.x] + b.words[2047] + x;
}

// Nothing else fits: the one parameter is the whole buffer. Traps when the last byte is not
// the value launch tests put there (0x5a), so a truncated copy is caught.
extern "C" __global__ void big_max(Blob32764 b) {
  if (b.bytes[32763] != 0x5a || b.bytes[0] != 0x5a) asm volatile("trap;");
}
