# Shared by the option-table tests (test_options.sh, test_numbers.sh, test_json_failure.sh;
# sourced, not a test itself): lib.sh, a temporary folder removed at exit, and $dir/k.cu
# (saxpy; `big`, whose 48000 B of static shared memory leave no room for 200000 B more;
# `take`, one parameter of each float width's bits) compiled for sm_90 to $dir/k.cubin, or a
# skip where NVRTC cannot compile.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/k.cu" <<'CU'
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }
extern "C" __global__ void big(float *p) {
  __shared__ float s[12000]; s[threadIdx.x] = p[0]; __syncthreads(); p[1] = s[5]; }
extern "C" __global__ void take(unsigned short h, unsigned short b, float f, double d) {}
CU
timeout 60 "$CUCORE" compile "$dir/k.cu" --arch sm_90 -o "$dir/k.cubin" >/dev/null 2>&1
[ -s "$dir/k.cubin" ] || { echo "SKIP: NVRTC cannot compile here"; exit 77; }
lacks() { ! has "$@"; }
