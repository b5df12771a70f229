// Planted defect for tests/cuda: a clean kernel whose PTX uses an instruction ptxemu does not
// implement (match.any.sync). compile_check.py --ptxemu-decode must fail on it, naming the
// opcode: make test never lets a kernel the CPU emulator cannot run pass unnoticed.
__global__ void planted_match_any(unsigned* out, const unsigned* in) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = __match_any_sync(0xffffffffu, in[i]);
}
