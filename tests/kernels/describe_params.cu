// describe_params.cu -- a test oracle: the parameter lists of the test kernels as the C++
// compiler sees them. Built with nvcc and run on the host (no GPU, no CUDA call); prints one
// line per kernel:
//
//   KEY<TAB>N<TAB>size:align:category ...
//
// KEY is what cucore_binary_find_kernel is asked for (the symbol of an extern "C" kernel, the
// demangled name otherwise); category is p (pointer), f (floating point), i (integral, bool,
// enum) or c (class: struct, union, vector and half types).
#include <cstdio>
#include <type_traits>

#include "big_params.cu"
#include "launch_attrs.cu"
#include "params.cu"
#if defined(CUCORE_TEST_CLUSTERS)
#include "cluster.cu"
#endif

template <typename T>
static char category() {
  if (std::is_pointer<T>::value) return 'p';
  if (std::is_floating_point<T>::value) return 'f';
  if (std::is_integral<T>::value || std::is_enum<T>::value) return 'i';
  return 'c';
}

template <typename... A>
static void describe(const char *key, void (*)(A...)) {
  const size_t sizes[] = {sizeof(A)..., 0};
  const size_t aligns[] = {alignof(A)..., 0};
  const char cats[] = {category<A>()..., 0};
  const size_t n = sizeof...(A);
  std::printf("%s\t%zu", key, n);
  for (size_t i = 0; i + 1 <= n; i++) std::printf("\t%zu:%zu:%c", sizes[i], aligns[i], cats[i]);
  std::printf("\n");
}

#define D(k) describe(#k, k)

int main() {
  D(p_pointers);
  D(p_scalars);
  D(p_padding);
  D(p_structs);
  D(p_grid_constant);
  D(p_none);
  D(p_many);
  describe("mangled_kernel", mangled_kernel);
  describe("overloaded(int*, int)", (void (*)(int *, int))overloaded);
  describe("overloaded(int*, double)", (void (*)(int *, double))overloaded);
  describe("tmpl_fill<float, 4>", tmpl_fill<float, 4>);
  describe("tmpl_fill<double, 8>", tmpl_fill<double, 8>);
  describe("tmpl_fill<int, 1>", tmpl_fill<int, 1>);
  describe("outer::inner::nested_kernel", outer::inner::nested_kernel);
  describe("(anonymous namespace)::anon_kernel", anon_kernel);
  D(big_4400);
  D(big_8k);
  D(big_max);
  D(lb_max256);
  D(lb_max128_min4);
  D(maxnreg32);
  D(shared_static);
  D(shared_dynamic);
  D(shared_both);
  D(local_stack);
  D(calls_noinline);
  D(uses_constants);
  D(named_barriers);
  D(grid_sync);
#if defined(CUCORE_TEST_CLUSTERS)
  D(cluster_2x1x1);
  D(cluster_2x2x1);
  D(cluster_bounded);
#endif
  return 0;
}
