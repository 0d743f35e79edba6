// params.cu -- kernels whose parameter lists exercise the parameter-buffer layout.
//
// Every kernel writes what it received to `out`, so launch tests can check the values the
// GPU saw, not only that the launch was accepted. Signatures are shared with other test
// suites: add kernels, do not change these.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

// A struct with internal padding: 1 + 7 (pad) + 8 + 2 + 6 (tail pad) = 24 bytes, align 8.
struct Padded {
  char c;
  double d;
  short s;
};

// 16-byte alignment by request: 8 bytes of members, 16 bytes of struct.
struct alignas(16) Align16 {
  float x;
  int y;
};

// 64-byte alignment by request: 16 bytes of members, 64 bytes of struct.
struct alignas(64) Align64 {
  char c;
  int v[3];
};

// Arrays inside a struct: 4 + 20 + 3 + 1 (tail pad) = 28 bytes, align 4.
struct WithArrays {
  int n;
  float vals[5];
  char tag[3];
};

// A vector type by value (CUDA's float4 is 16-byte aligned).
struct Pair {
  float4 a;
  int2 b;
};

extern "C" __global__ void p_pointers(int *a, const float *b, double *__restrict__ c, void *d,
                                      unsigned long long *out) {
  out[0] = (unsigned long long)a;
  out[1] = (unsigned long long)b;
  out[2] = (unsigned long long)c;
  out[3] = (unsigned long long)d;
}

extern "C" __global__ void p_scalars(char c, signed char sc, unsigned char uc, short s,
                                     unsigned short us, int i, unsigned u, long l,
                                     long long ll, unsigned long long ull, float f, double d,
                                     __half h, __nv_bfloat16 bf, bool b, double *out) {
  out[0] = c;
  out[1] = sc;
  out[2] = uc;
  out[3] = s;
  out[4] = us;
  out[5] = i;
  out[6] = u;
  out[7] = (double)l;
  out[8] = (double)ll;
  out[9] = (double)ull;
  out[10] = f;
  out[11] = d;
  out[12] = __half2float(h);
  out[13] = __bfloat162float(bf);
  out[14] = b ? 1.0 : 0.0;
}

// Padding between parameters: char then double leaves 7 bytes of padding, and so on.
extern "C" __global__ void p_padding(char a, double b, char c, int d, short e, long long f,
                                     char g, float4 h, double *out) {
  out[0] = a;
  out[1] = b;
  out[2] = c;
  out[3] = d;
  out[4] = e;
  out[5] = (double)f;
  out[6] = g;
  out[7] = h.x + h.y + h.z + h.w;
}

extern "C" __global__ void p_structs(Padded p, Align16 a16, char gap, Align64 a64, WithArrays w,
                                     Pair pr, double *out) {
  out[0] = p.c + p.d + p.s;
  out[1] = a16.x + a16.y;
  out[2] = gap;
  out[3] = a64.c + a64.v[0] + a64.v[1] + a64.v[2];
  out[4] = w.n + w.vals[0] + w.vals[4] + w.tag[0] + w.tag[2];
  out[5] = pr.a.x + pr.a.w + pr.b.x + pr.b.y;
}

// __grid_constant__: the parameter stays in the parameter space; its address may be taken.
extern "C" __global__ void p_grid_constant(const __grid_constant__ Align64 g, int n,
                                           const __grid_constant__ WithArrays w, double *out) {
  const Align64 *pg = &g;
  out[0] = pg->c + pg->v[0] + pg->v[1] + pg->v[2] + n;
  out[1] = w.vals[n % 5];
}

extern "C" __global__ void p_none() {}

// More than 20 parameters, of mixed widths.
extern "C" __global__ void p_many(int a0, char a1, double a2, short a3, float a4, long long a5,
                                  int a6, char a7, int a8, double a9, int a10, short a11,
                                  int a12, float a13, int a14, char a15, int a16, int *a17,
                                  int a18, double a19, int a20, char a21, unsigned a22,
                                  double *out) {
  double s = a0 + a1 + a2 + a3 + a4 + (double)a5 + a6 + a7 + a8 + a9 + a10 + a11 + a12 + a13 +
             a14 + a15 + a16 + a18 + a19 + a20 + a21 + a22;
  out[0] = s;
  out[1] = (double)(unsigned long long)a17;
}

// A C++ (mangled) name.
__global__ void mangled_kernel(int *out, float x, Padded p) { out[0] = (int)x + p.c; }

// Overloads: same name, different parameters, so only the mangled names tell them apart.
__global__ void overloaded(int *out, int x) { out[0] = x; }
__global__ void overloaded(int *out, double x) { out[0] = (int)(2 * x); }

// Templates, for name expressions: instantiated below.
template <typename T, int N>
__global__ void tmpl_fill(T *out, T value) {
  for (int i = 0; i < N; i++) out[i] = value;
}
template __global__ void tmpl_fill<float, 4>(float *, float);
template __global__ void tmpl_fill<double, 8>(double *, double);
template __global__ void tmpl_fill<int, 1>(int *, int);

namespace outer {
namespace inner {
__global__ void nested_kernel(int *out, char c) { out[0] = c; }
}  // namespace inner
}  // namespace outer

namespace {
__global__ void anon_kernel(int *out, short s) { out[0] = s; }
}  // namespace

// Takes the anonymous-namespace kernel's address so every compiler keeps it.
void *params_anon_kernel_address() { return (void *)anon_kernel; }
