// Planted defect for tests/cuda: an sm_100a "attention kernel" whose header promises the
// tensor-core products of a 128 x 128 tile at head_dim 128 (16 tcgen05.mma per tile) but
// computes S = Q K^T as a scalar loop, spill-free and correct, on the FMA pipe. compile_check.py
// must fail on it: no UTCHMMA, no commit, no tensor-memory traffic.
//   1 of 1 tiles live; 16 tcgen05.mma per tile
__global__ void planted_scalar_mma(float* s, const float* q, const float* k) {
  const int row = threadIdx.x;
  for (int j = 0; j < 128; ++j) {
    float dot = 0.f;
    for (int d = 0; d < 128; ++d) dot += q[row * 128 + d] * k[j * 128 + d];
    s[row * 128 + j] = dot;
  }
}
