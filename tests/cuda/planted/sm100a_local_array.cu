// Planted defect for tests/cuda: an sm_100a kernel with a local array indexed at run time,
// which ptxas puts on the stack (local memory). compile_check.py must fail on it.
//   1 of 1 tiles live; 16 tcgen05.mma per tile
__global__ void planted_local_array(float* out, const int* index) {
  float scratch[256];
  for (int i = 0; i < 256; ++i) scratch[i] = out[i] * float(i);
  out[threadIdx.x] = scratch[index[threadIdx.x] & 255];
}
