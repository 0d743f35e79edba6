// fir.cu -- the worked example of `cucore run` (README, `cucore help run`): a 16-tap FIR
// filter that takes a struct by value, reads its taps from a __constant__ table, and writes
// y[i] = gain * sum_k taps[k] * x[i - k] + bias (x before 0 counts as 0).
struct FirParams {
  float gain;   // offset 0
  int n;        // offset 4
  double bias;  // offset 8 -> 16 bytes, aligned to 8
};

__constant__ float taps[16];

extern "C" __global__ void fir(FirParams p, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= p.n) return;
  float s = 0.0f;
  for (int k = 0; k < 16; k++)
    if (i - k >= 0) s += taps[k] * x[i - k];
  y[i] = p.gain * s + (float)p.bias;
}
