// The reference check CuTe's Hopper tutorials lack: wgmma_sm90.cu and wgmma_tma_sm90.cu run
// their GEMM, copy C back and print a timing, but never compare C with anything. This file
// compiles the unmodified tutorial (CUTE_TUTORIAL_SOURCE, its main renamed away) and replaces
// the timing loop by one launch and an exact host check:
//   <program> M N K [transA transB]   (defaults 256 128 64 N T)
// A and B hold +-1 (as in the tutorial), so every dot product is an integer of magnitude <= K,
// exact in half precision for K <= 2048: the check is bit-exact, no tolerance.
#define main cute_tutorial_main
#include CUTE_TUTORIAL_SOURCE
#undef main

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  int m = 256, n = 128, k = 64;
  char trans_a = 'N', trans_b = 'T';
  if (argc >= 4) {
    m = std::atoi(argv[1]);
    n = std::atoi(argv[2]);
    k = std::atoi(argv[3]);
  }
  if (argc >= 6) {
    trans_a = argv[4][0];
    trans_b = argv[5][0];
  }
  if (k > 2048) {
    std::printf("K = %d: the exact check needs K <= 2048\n", k);
    return 2;
  }
  using T = cute::half_t;
  thrust::host_vector<T> a(size_t(m) * k), b(size_t(n) * k), c(size_t(m) * n);
  for (auto& x : a) x = T(int((rand() % 2) ? 1 : -1));
  for (auto& x : b) x = T(int((rand() % 2) ? 1 : -1));
  for (auto& x : c) x = T(0);
  thrust::device_vector<T> d_a = a, d_b = b, d_c = c;
  // The tutorial's leading dimensions: column-major M x K / N x K for 'N', K-major for 'T'.
  const int lda = trans_a == 'N' ? m : k, ldb = trans_b == 'N' ? k : n, ldc = m;
  gemm(trans_a, trans_b, m, n, k, T(1.0f), d_a.data().get(), lda, d_b.data().get(), ldb, T(0.0f), d_c.data().get(), ldc);
  const cudaError_t error = cudaDeviceSynchronize();
  if (error != cudaSuccess) {
    std::printf("launch failed: %s\n", cudaGetErrorString(error));
    return 1;
  }
  thrust::host_vector<T> result = d_c;
  auto at_a = [&](int i, int p) { return float(trans_a == 'N' ? a[i + size_t(p) * lda] : a[p + size_t(i) * lda]); };
  auto at_b = [&](int j, int p) { return float(trans_b == 'T' ? b[j + size_t(p) * ldb] : b[p + size_t(j) * ldb]); };
  long wrong = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      float expected = 0;
      for (int p = 0; p < k; ++p) expected += at_a(i, p) * at_b(j, p);
      const float got = float(result[i + size_t(j) * ldc]);
      if (got != expected && wrong++ < 5) std::printf("C(%d,%d) = %g, expected %g\n", i, j, got, expected);
    }
  std::printf("reference check (%dx%dx%d %c%c): %ld of %ld elements wrong: %s\n", m, n, k, trans_a, trans_b, wrong,
              long(m) * n, wrong ? "FAILED" : "PASSED");
  return wrong ? 1 : 0;
}
