// A hand edit of a generated kernel, not in kgen's CUDA format: format-check must fail on it.
__global__ void k(float* __restrict__ out) { if (threadIdx.x==0) out[0]=1.f; }
