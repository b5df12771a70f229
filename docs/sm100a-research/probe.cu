// Minimal sm_100a probe: TMA load (SM90_TMA_LOAD_2D), TMEM alloc, tcgen05 bf16 SS MMA (S = Q K^T),
// TMEM load of S, TMEM store of P (bf16 packed), tcgen05 bf16 TS MMA (O = P V, P from TMEM),
// TMEM load of O, TMEM free. Compile-only; not meant to be numerically exercised.
#include <cuda.h>
#include <cute/tensor.hpp>
#include <cute/arch/tmem_allocator_sm100.hpp>
#include <cute/arch/copy_sm90_tma.hpp>
#include <cute/atom/mma_traits_sm100.hpp>
#include <cute/atom/copy_traits_sm100.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/numeric_types.h>
#include <cutlass/cutlass.h>

using namespace cute;
using TA = cutlass::bfloat16_t;

constexpr int kM = 128;  // query rows per tile
constexpr int kN = 128;  // key rows per tile
constexpr int kK = 64;   // head dim (QK reduction dim)
constexpr int kD = 64;   // head dim of V / O

using MmaQK = decltype(make_tiled_mma(
    SM100_MMA_F16BF16_SS<TA, TA, float, kM, kN, UMMA::Major::K, UMMA::Major::K>{}));
using MmaPV = decltype(make_tiled_mma(
    SM100_MMA_F16BF16_TS<TA, TA, float, kM, kD, UMMA::Major::K, UMMA::Major::MN>{}));

using SmemLayoutQ = decltype(UMMA::tile_to_mma_shape(
    UMMA::Layout_K_SW128_Atom<TA>{}, partition_shape_A(MmaQK{}, make_shape(Int<kM>{}, Int<kK>{}))));
using SmemLayoutK = decltype(UMMA::tile_to_mma_shape(
    UMMA::Layout_K_SW128_Atom<TA>{}, partition_shape_B(MmaQK{}, make_shape(Int<kN>{}, Int<kK>{}))));
// V is the B operand of P@V: (N = kD, K = kN), stored MN-major (row-major [seq, d] in gmem).
using SmemLayoutV = decltype(UMMA::tile_to_mma_shape(
    UMMA::Layout_MN_SW128_Atom<TA>{}, partition_shape_B(MmaPV{}, make_shape(Int<kD>{}, Int<kN>{})),
    Step<_2, _1>{}));
// Fake smem layout for P, only used to derive the TMEM A-fragment shape (same trick as CUTLASS ex. 77).
using SmemLayoutP = decltype(UMMA::tile_to_mma_shape(
    UMMA::Layout_K_SW128_Atom<TA>{}, partition_shape_A(MmaPV{}, make_shape(Int<kM>{}, Int<kN>{}))));

struct SharedStorage {
  alignas(1024) cute::array_aligned<TA, cosize_v<SmemLayoutQ>, 1024> q;
  alignas(1024) cute::array_aligned<TA, cosize_v<SmemLayoutK>, 1024> k;
  alignas(1024) cute::array_aligned<TA, cosize_v<SmemLayoutV>, 1024> v;
  alignas(8) uint64_t bar_tma;
  alignas(8) uint64_t bar_mma;
  uint32_t tmem_base;
};

constexpr uint32_t kTmemCols = 256;  // S: cols [0,128), P: [128,192) packed bf16x2, O: [192,256)

__global__ void __launch_bounds__(128, 1)
probe_kernel(__grid_constant__ const CUtensorMap tma_q, TA const* gK, TA const* gV, float* gO) {
  extern __shared__ __align__(1024) char smem_raw[];
  SharedStorage& ss = *reinterpret_cast<SharedStorage*>(smem_raw);
#if defined(PROBE_UNIFORM)
  int const warp = cutlass::canonical_warp_idx_sync();  // shfl-broadcast: provably warp-uniform
#else
  int const warp = threadIdx.x / 32;
#endif

  MmaQK mma_qk;
  MmaPV mma_pv;

  Tensor sQ = make_tensor(make_smem_ptr(ss.q.data()), SmemLayoutQ{});
  Tensor sK = make_tensor(make_smem_ptr(ss.k.data()), SmemLayoutK{});
  Tensor sV = make_tensor(make_smem_ptr(ss.v.data()), SmemLayoutV{});

  if (threadIdx.x == 0) {
    cutlass::arch::ClusterBarrier::init(&ss.bar_tma, 1);
    cutlass::arch::ClusterBarrier::init(&ss.bar_mma, 1);
    cutlass::arch::fence_barrier_init();
  }
  cute::TMEM::Allocator1Sm tmem_alloc;
  if (warp == 0) {
    tmem_alloc.allocate(kTmemCols, &ss.tmem_base);  // whole warp, .sync.aligned
  }
  __syncthreads();
  uint32_t const tmem_base = ss.tmem_base;

  // Q: one TMA box (64 x 128 bf16, 128B swizzle) into the K-major SW128 layout.
  if (warp == 0 && cute::elect_one_sync()) {
    cutlass::arch::ClusterTransactionBarrier::arrive_and_expect_tx(&ss.bar_tma, kM * kK * sizeof(TA));
    SM90_TMA_LOAD_2D::copy(&tma_q, &ss.bar_tma, uint64_t(TMA::CacheHintSm90::EVICT_NORMAL),
                           ss.q.data(), 0, int32_t(blockIdx.x * kM));
  }
  // K, V: plain generic-proxy copies (all 128 threads), then a proxy fence for the async (UMMA) proxy.
  {
    Tensor gKt = make_tensor(make_gmem_ptr(gK), make_shape(Int<kN>{}, Int<kK>{}), LayoutRight{});
    Tensor gVt = make_tensor(make_gmem_ptr(gV), make_shape(Int<kD>{}, Int<kN>{}), LayoutLeft{});
    for (int i = threadIdx.x; i < size(gKt); i += blockDim.x) { sK(i) = gKt(i); }
    for (int i = threadIdx.x; i < size(gVt); i += blockDim.x) { sV(i) = gVt(i); }
  }
  cutlass::arch::fence_view_async_shared();
  __syncthreads();

  // ---- S = Q K^T (SS MMA), issued by warp 0 (the atom elects one lane internally) ----
  Tensor tStS = partition_fragment_C(mma_qk, make_shape(Int<kM>{}, Int<kN>{}));
  tStS.data() = tmem_base;
  if (warp == 0) {
    cutlass::arch::ClusterBarrier::wait(&ss.bar_tma, 0);
    ThrMMA thr_qk = mma_qk.get_slice(0);
    Tensor tCrQ = thr_qk.make_fragment_A(sQ);
    Tensor tCrK = thr_qk.make_fragment_B(sK);
    mma_qk.accumulate_ = UMMA::ScaleOut::Zero;
    CUTE_UNROLL
    for (int kb = 0; kb < size<2>(tCrQ); ++kb) {
      cute::gemm(mma_qk, tCrQ(_, _, kb), tCrK(_, _, kb), tStS);
      mma_qk.accumulate_ = UMMA::ScaleOut::One;
    }
    cutlass::arch::umma_arrive(&ss.bar_mma);  // tcgen05.commit -> mbarrier arrive
  }
  cutlass::arch::ClusterBarrier::wait(&ss.bar_mma, 0);

  // ---- TMEM -> RF: each thread owns one row of S (32dp32b, 32 columns per instruction) ----
  Tensor cS = make_identity_tensor(make_shape(Int<kM>{}, Int<kN>{}));
  Tensor tScS = mma_qk.get_slice(0).partition_C(cS);
  auto tiled_ld_s = make_tmem_copy(SM100_TMEM_LOAD_32dp32b32x{}, tStS);
  auto thr_ld_s = tiled_ld_s.get_slice(threadIdx.x);
  Tensor tLtS = thr_ld_s.partition_S(tStS);
  Tensor tLcS = thr_ld_s.partition_D(tScS);
  Tensor tLrS = make_tensor<float>(shape(tLcS));
  copy(tiled_ld_s, tLtS, tLrS);
  cutlass::arch::fence_view_async_tmem_load();  // tcgen05.wait::ld

  // ---- P = bf16(S) packed two per 32-bit column, RF -> TMEM at column 128 ----
  Tensor tStP = tStS.compose(make_layout(make_shape(Int<kM>{}, Int<kN / 2>{})));
  tStP.data() = tmem_base + 128;
  Tensor tScP = tScS.compose(make_layout(make_shape(Int<kM>{}, Int<kN / 2>{})));
  auto tiled_st_p = make_tmem_copy(SM100_TMEM_STORE_32dp32b32x{}, tStP);
  auto thr_st_p = tiled_st_p.get_slice(threadIdx.x);
  Tensor tRtP = thr_st_p.partition_D(tStP);
  Tensor tRcP = thr_st_p.partition_S(tScP);
  Tensor tRrP = make_tensor<uint32_t>(shape(tRcP));
  CUTE_UNROLL
  for (int w = 0; w < size(tRrP); ++w) {
    __nv_bfloat162 h = __floats2bfloat162_rn(tLrS(2 * w), tLrS(2 * w + 1));
    tRrP(w) = reinterpret_cast<uint32_t const&>(h);
  }
  copy(tiled_st_p, tRrP, tRtP);
  cutlass::arch::fence_view_async_tmem_store();  // tcgen05.wait::st
  __syncthreads();

  // ---- O = P V (TS MMA: A = P from TMEM, B = V descriptor), issued by warp 0 ----
  Tensor tOtO = partition_fragment_C(mma_pv, make_shape(Int<kM>{}, Int<kD>{}));
  tOtO.data() = tmem_base + 192;
  if (warp == 0) {
    ThrMMA thr_pv = mma_pv.get_slice(0);
    Tensor sP = make_tensor(make_smem_ptr(static_cast<TA*>(nullptr)), SmemLayoutP{});
    Tensor tOrP = thr_pv.make_fragment_A(sP);  // becomes a TMEM tensor (FrgTypeA = tmem_frg)
    tOrP.data() = tOrP.data().get() + tmem_base + 128;
    Tensor tOrV = thr_pv.make_fragment_B(sV);
    mma_pv.accumulate_ = UMMA::ScaleOut::Zero;
    CUTE_UNROLL
    for (int kb = 0; kb < size<2>(tOrP); ++kb) {
      cute::gemm(mma_pv, tOrP(_, _, kb), tOrV(_, _, kb), tOtO);
      mma_pv.accumulate_ = UMMA::ScaleOut::One;
    }
    cutlass::arch::umma_arrive(&ss.bar_mma);
  }
  cutlass::arch::ClusterBarrier::wait(&ss.bar_mma, 1);

  // ---- O: TMEM -> RF -> gmem ----
  Tensor cO = make_identity_tensor(make_shape(Int<kM>{}, Int<kD>{}));
  Tensor tOcO = mma_pv.get_slice(0).partition_C(cO);
  auto tiled_ld_o = make_tmem_copy(SM100_TMEM_LOAD_32dp32b32x{}, tOtO);
  auto thr_ld_o = tiled_ld_o.get_slice(threadIdx.x);
  Tensor tLtO = thr_ld_o.partition_S(tOtO);
  Tensor tLcO = thr_ld_o.partition_D(tOcO);
  Tensor tLrO = make_tensor<float>(shape(tLcO));
  copy(tiled_ld_o, tLtO, tLrO);
  cutlass::arch::fence_view_async_tmem_load();
  CUTE_UNROLL
  for (int i = 0; i < size(tLrO); ++i) {
    auto c = tLcO(i);
    gO[(blockIdx.x * kM + get<0>(c)) * kD + get<1>(c)] = tLrO(i);
  }

  __syncthreads();
  if (warp == 0) {
    tmem_alloc.release_allocation_lock();
    tmem_alloc.free(tmem_base, kTmemCols);
  }
}
