// Planted defect for tests/cuda: what an sm_100a kernel built without the "a" features
// (compute_100) becomes: CuTe's tcgen05 atoms compile to traps instead of instructions.
// Four trap paths here, against the three tcgen05 guardrail stubs ptxas links into a real
// kernel; its header promises no product, so the trap count alone must fail it.
//   0 of 1 tiles live; 0 tcgen05.mma per tile
__global__ void planted_traps(float* out, const int* path) {
  const int p = path[threadIdx.x];
  if (p == 1) __trap();
  out[threadIdx.x] = 1.f;
  if (p == 2) __trap();
  out[threadIdx.x + 32] = 2.f;
  if (p == 3) __trap();
  out[threadIdx.x + 64] = 3.f;
  if (p == 4) __trap();
}
