// The ground truth for tests/tensor, computed by NVIDIA's CuTe on the host (nvcc, host code only):
// where CuTe's shared-memory layouts and GMMA descriptors put every element of a wgmma operand,
// the smem layouts and TMA boxes make_tma_copy pairs, the fragment layouts of wgmma, ldmatrix and
// stmatrix, and the swizzle functions. Writes a text file (argv[1]) that tensor_test.cc reads;
// nothing here knows the emulator's rules.
//
// Two host-side stand-ins: make_gmma_desc's start address comes from cvta.to.shared, which has no
// host form (CuTe returns 0 and prints an error), so the start-address field is set from the same
// pointer CuTe would convert, measured from a 1024-byte aligned buffer standing for the shared
// window; and make_tma_copy's cuTensorMapEncodeTiled is defined here to record its arguments
// instead of calling a driver.
#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include <cute/tensor.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>
#include <cute/atom/mma_traits_sm100.hpp>
#include <cute/atom/copy_traits_sm75.hpp>
#include <cute/atom/copy_traits_sm90.hpp>
#include <cute/atom/copy_traits_sm90_tma.hpp>
#include <cute/atom/copy_traits_sm100.hpp>

using namespace cute;

namespace {

FILE* out = nullptr;

// The stand-in for the shared window: byte i is shared address i.
alignas(1024) unsigned char shared_window[1 << 18];
uint32_t window_address(void const* p) {
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(p) - reinterpret_cast<uintptr_t>(shared_window));
}

// ---------------------------------------------------------------- swizzles
template <int B, int M, int S>
void emit_swizzle() {
  Swizzle<B, M, S> swizzle;
  std::fprintf(out, "swizzle %d %d %d", B, M, S);
  for (uint32_t a = 0; a < 4096; a += 4) std::fprintf(out, " %u", uint32_t(swizzle(a)));
  std::fprintf(out, "\n");
}

// ---------------------------------------------------------------- wgmma operands
// layout: 0 interleave, 1 128B, 2 64B, 3 32B (the descriptor's encoding)
template <class T, GMMA::Major kMajor, int kLayout>
auto gmma_atom() {
  if constexpr (kLayout == 0) return GMMA::Layout_INTER_Atom<T, kMajor>{};
  else if constexpr (kLayout == 1) return GMMA::Layout_SW128_Atom<T, kMajor>{};
  else if constexpr (kLayout == 2) return GMMA::Layout_SW64_Atom<T, kMajor>{};
  else return GMMA::Layout_SW32_Atom<T, kMajor>{};
}

// A (MNt x Kt) tile of CuTe's canonical layout at shared address `base`, sliced into the
// (kMnBlock x instruction-K) operands wgmma would read; for each: CuTe's descriptor and the
// address of every element.
template <class T, GMMA::Major kMajor, int kLayout, int kMnTile, int kKTile, int kMnBlock>
void emit_gmma_operand(uint32_t base) {
  constexpr int kBlockK = 32 / int(sizeof(T));  // the instruction's K: 32 bytes of elements
  auto layout = tile_to_shape(gmma_atom<T, kMajor, kLayout>(), Shape<Int<kMnTile>, Int<kKTile>>{});
  Tensor tile = make_tensor(make_smem_ptr(reinterpret_cast<T*>(shared_window + base)), layout);
  std::fprintf(out, "gmma %d %s %d %d %d %d %d\n", int(sizeof(T)), kMajor == GMMA::Major::K ? "K" : "MN", kLayout,
               kMnTile, kKTile, kMnBlock, kBlockK);
  for (int mb = 0; mb < kMnTile / kMnBlock; ++mb) {
    for (int kb = 0; kb < kKTile / kBlockK; ++kb) {
      Tensor block = local_tile(tile, Shape<Int<kMnBlock>, Int<kBlockK>>{}, make_coord(mb, kb));
      GmmaDescriptor desc = SM90::GMMA::make_gmma_desc<kMajor>(block);
      desc.bitfield.start_address_ = uint16_t((window_address(raw_pointer_cast(block.data())) & 0x3ffff) >> 4);
      std::fprintf(out, "block %d %d %llx", mb, kb, (unsigned long long)desc.desc_);
      for (int mn = 0; mn < kMnBlock; ++mn)
        for (int k = 0; k < kBlockK; ++k) std::fprintf(out, " %u", window_address(&block(mn, k)));
      std::fprintf(out, "\n");
    }
  }
}

template <class T, GMMA::Major kMajor>
void emit_gmma_operands_of_type() {
  constexpr int T16 = 16 / int(sizeof(T));  // elements per 16-byte chunk
  constexpr int kBlockK = 32 / int(sizeof(T));
  if constexpr (kMajor == GMMA::Major::K) {
    // K-major: K spans two swizzle atoms (so descriptors start mid-row and in the second atom).
    emit_gmma_operand<T, kMajor, 0, 128, 2 * kBlockK, 64>(0x2000);
    emit_gmma_operand<T, kMajor, 3, 128, 2 * 2 * T16, 64>(0x2000);
    emit_gmma_operand<T, kMajor, 2, 128, 2 * 4 * T16, 128>(0x4000);
    emit_gmma_operand<T, kMajor, 1, 128, 2 * 8 * T16, 64>(0x8000);
  } else {
    // MN-major: the block spans several atoms along MN (LBO) and K spans two 8-row groups (SBO).
    emit_gmma_operand<T, kMajor, 0, 256, 2 * kBlockK, 128>(0x2000);
    emit_gmma_operand<T, kMajor, 3, 256, 2 * kBlockK, 128>(0x2000);
    emit_gmma_operand<T, kMajor, 2, 256, 2 * kBlockK, 128>(0x4000);
    emit_gmma_operand<T, kMajor, 1, 256, 2 * kBlockK, 128>(0x8000);
  }
}

// ---------------------------------------------------------------- tcgen05 operands
// layout: the tcgen05 descriptor's encoding (0 none, 6 32B, 4 64B, 2 128B, 1 128B_BASE32B)
template <class T, UMMA::Major kMajor, int kLayout>
auto umma_atom() {
  constexpr GMMA::Major g = kMajor == UMMA::Major::K ? GMMA::Major::K : GMMA::Major::MN;
  if constexpr (kLayout == 0) return GMMA::Layout_INTER_Atom<T, g>{};
  else if constexpr (kLayout == 6) return GMMA::Layout_SW32_Atom<T, g>{};
  else if constexpr (kLayout == 4) return GMMA::Layout_SW64_Atom<T, g>{};
  else if constexpr (kLayout == 2) return GMMA::Layout_SW128_Atom<T, g>{};
  else return UMMA::Layout_MN_SW128_32B_Atom<T>{};
}

template <class T, UMMA::Major kMajor, int kLayout, int kMnTile, int kKTile, int kMnBlock>
void emit_umma_operand(uint32_t base) {
  constexpr int kBlockK = 32 / int(sizeof(T));
  auto layout = tile_to_shape(umma_atom<T, kMajor, kLayout>(), Shape<Int<kMnTile>, Int<kKTile>>{});
  Tensor tile = make_tensor(make_smem_ptr(reinterpret_cast<T*>(shared_window + base)), layout);
  std::fprintf(out, "umma %d %s %d %d %d %d %d\n", int(sizeof(T)), kMajor == UMMA::Major::K ? "K" : "MN", kLayout,
               kMnTile, kKTile, kMnBlock, kBlockK);
  for (int mb = 0; mb < kMnTile / kMnBlock; ++mb) {
    for (int kb = 0; kb < kKTile / kBlockK; ++kb) {
      Tensor block = local_tile(tile, Shape<Int<kMnBlock>, Int<kBlockK>>{}, make_coord(mb, kb));
      UMMA::SmemDescriptor desc = UMMA::make_umma_desc<kMajor>(block);
      desc.start_address_ = uint16_t((window_address(raw_pointer_cast(block.data())) & 0x3ffff) >> 4);
      std::fprintf(out, "block %d %d %llx", mb, kb, (unsigned long long)desc.desc_);
      for (int mn = 0; mn < kMnBlock; ++mn)
        for (int k = 0; k < kBlockK; ++k) std::fprintf(out, " %u", window_address(&block(mn, k)));
      std::fprintf(out, "\n");
    }
  }
}

template <class T, UMMA::Major kMajor>
void emit_umma_operands_of_type() {
  constexpr int T16 = 16 / int(sizeof(T));
  constexpr int kBlockK = 32 / int(sizeof(T));
  if constexpr (kMajor == UMMA::Major::K) {
    emit_umma_operand<T, kMajor, 0, 128, 2 * kBlockK, 128>(0x2000);
    emit_umma_operand<T, kMajor, 6, 128, 2 * 2 * T16, 128>(0x2000);
    emit_umma_operand<T, kMajor, 4, 128, 2 * 4 * T16, 128>(0x4000);
    emit_umma_operand<T, kMajor, 2, 128, 2 * 8 * T16, 128>(0x8000);
  } else {
    emit_umma_operand<T, kMajor, 0, 256, 2 * kBlockK, 128>(0x2000);
    emit_umma_operand<T, kMajor, 6, 256, 2 * kBlockK, 128>(0x2000);
    emit_umma_operand<T, kMajor, 4, 256, 2 * kBlockK, 128>(0x4000);
    emit_umma_operand<T, kMajor, 2, 256, 2 * kBlockK, 128>(0x8000);
    emit_umma_operand<T, kMajor, 1, 256, 2 * kBlockK, 128>(0x8000);
  }
}

template <class A, class B, class C, int M, int N, UMMA::Major kA, UMMA::Major kB, UMMA::ScaleIn kNegA = UMMA::ScaleIn::One>
void emit_instr_desc(char const* a, char const* b, char const* c) {
  const uint32_t value = UMMA::make_instr_desc<A, B, C, M, N, kA, kB, kNegA>().desc_;
  std::fprintf(out, "idesc %s %s %s %d %d %d %d %d %u\n", a, b, c, M, N, kA == UMMA::Major::MN ? 1 : 0,
               kB == UMMA::Major::MN ? 1 : 0, kNegA == UMMA::ScaleIn::Neg ? 1 : 0, value);
}

// ---------------------------------------------------------------- wgmma fragments
template <class Layout>
void emit_fragment(char const* name, int parameter, Layout layout) {
  std::fprintf(out, "%s %d %d", name, parameter, int(size<1>(layout)));
  for (int t = 0; t < 128; ++t)
    for (int v = 0; v < int(size<1>(layout)); ++v) std::fprintf(out, " %d", int(layout(t, v)));
  std::fprintf(out, "\n");
}

// ---------------------------------------------------------------- ldmatrix / stmatrix
// For the traits of a copy between (address-supplying threads, 128-bit rows) and (threads, 32-bit
// registers): which row each thread's address gives, and which 16-bit element each register part
// holds, both as indices of 16-bit elements in the reference bit space (matrix i = elements
// 64 i .. 64 i + 63, 8 per row).
template <class Traits>
void emit_matrix_copy(char const* name, int matrices, bool trans, bool store) {
  // ldmatrix reads rows (Src) into registers (Dst); stmatrix writes registers (Src) to rows (Dst).
  std::fprintf(out, "%s %d %d", name, matrices, trans ? 1 : 0);
  auto print = [&](auto row_layout, auto register_layout) {
    for (int t = 0; t < 32; ++t) std::fprintf(out, " %d", int(row_layout(t, 0)) / 16);
    for (int t = 0; t < 32; ++t)
      for (int r = 0; r < matrices; ++r)
        for (int part = 0; part < 2; ++part) std::fprintf(out, " %d", int(register_layout(t, 32 * r + 16 * part)) / 16);
  };
  if (store) print(typename Traits::DstLayout{}, typename Traits::SrcLayout{});
  else print(typename Traits::SrcLayout{}, typename Traits::DstLayout{});
  std::fprintf(out, "\n");
}

// ---------------------------------------------------------------- tcgen05.ld/st
// For a TMEM load atom (its Copy_Traits: DstLayout maps (thread, register bit) to a reference
// bit, ValID that bit to a tensor-memory bit address, lanes TMEM::DP_b apart): the tensor-memory
// lane and 32-bit column of each 32-bit register of each thread. `shape`, `num` and `split` are
// the PTX the atom issues (copy_sm100.hpp: "tcgen05.ld.sync.aligned.<shape>.x<num>", and for
// .16x32bx2 its immHalfSplitoff).
template <class Op>
void emit_tmem_copy(char const* shape, int num, int split) {
  using Traits = Copy_Traits<Op>;
  auto dst = typename Traits::DstLayout{};
  auto val = typename Traits::ValID{};
  const int registers = int(size<1>(dst)) / 32;
  const int lane_bits = int(TMEM::DP_b{});
  std::fprintf(out, "tmem %s %d %d %d", shape, num, split, registers);
  for (int t = 0; t < 32; ++t)
    for (int r = 0; r < registers; ++r) {
      const int address = int(val(int(dst(t, 32 * r))));
      std::fprintf(out, " %d %d", address / lane_bits, address % lane_bits / 32);
    }
  std::fprintf(out, "\n");
}

}  // namespace

// ---------------------------------------------------------------- TMA
// make_tma_copy calls this; it records what CuTe asks the driver to encode.
struct RecordedTensorMap {
  int data_type = 0, rank = 0, interleave = 0, swizzle = 0, oob_fill = 0;
  uint64_t global_address = 0;
  uint64_t global_dim[5] = {}, global_stride[5] = {};
  uint32_t box_dim[5] = {}, element_strides[5] = {};
};
static RecordedTensorMap recorded;

extern "C" CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap*, CUtensorMapDataType type, cuuint32_t rank, void* address,
                                                   const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                                                   const cuuint32_t* element_strides, CUtensorMapInterleave interleave,
                                                   CUtensorMapSwizzle swizzle, CUtensorMapL2promotion,
                                                   CUtensorMapFloatOOBfill oob_fill) {
  recorded = {};
  recorded.data_type = type;
  recorded.rank = int(rank);
  recorded.global_address = reinterpret_cast<uint64_t>(address);
  for (cuuint32_t i = 0; i < rank; ++i) {
    recorded.global_dim[i] = dims[i];
    recorded.global_stride[i] = i == 0 ? 0 : strides[i - 1];
    recorded.box_dim[i] = box[i];
    recorded.element_strides[i] = element_strides[i];
  }
  recorded.interleave = interleave;
  recorded.swizzle = swizzle;
  recorded.oob_fill = oob_fill;
  return CUDA_SUCCESS;
}

namespace {

alignas(256) unsigned char global_buffer[1 << 20];

// A (rows x cols) global tensor, row-major (K-major smem) or column-major (MN-major smem), and a
// TMA load of one smem tile from its origin: the map CuTe encodes and, for each (mn, k) of the
// tile, the shared address CuTe's smem layout gives it. Element (r, c) of the global tensor is at
// element offset r * cols + c (row-major) or c * rows + r (column-major).
template <class T, class Atom, int kMnTile, int kKTile>
void emit_tma(char const* name, bool mn_major, int rows, int cols, uint32_t base) {
  Tensor gmem = make_tensor(make_gmem_ptr(reinterpret_cast<T*>(global_buffer)),
                            mn_major ? make_layout(make_shape(rows, cols), make_stride(1, rows))
                                     : make_layout(make_shape(rows, cols), make_stride(cols, 1)));
  auto smem_layout = tile_to_shape(Atom{}, Shape<Int<kMnTile>, Int<kKTile>>{});
  auto tma = make_tma_copy(SM90_TMA_LOAD{}, gmem, smem_layout);
  (void)tma;
  Tensor smem = make_tensor(make_smem_ptr(reinterpret_cast<T*>(shared_window + base)), smem_layout);
  std::fprintf(out, "tma %s %d %d %d %d %d %u %d %d %d %d %llu", name, int(sizeof(T)), mn_major ? 1 : 0, rows, cols,
               kMnTile * 1000 + kKTile, base, recorded.data_type, recorded.rank, recorded.interleave, recorded.swizzle,
               (unsigned long long)(recorded.global_address - reinterpret_cast<uint64_t>(global_buffer)));
  for (int i = 0; i < recorded.rank; ++i)
    std::fprintf(out, " %llu %llu %u %u", (unsigned long long)recorded.global_dim[i],
                 (unsigned long long)recorded.global_stride[i], recorded.box_dim[i], recorded.element_strides[i]);
  for (int mn = 0; mn < kMnTile; ++mn)
    for (int k = 0; k < kKTile; ++k) std::fprintf(out, " %u", window_address(&smem(mn, k)));
  std::fprintf(out, "\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT\n", argv[0]);
    return 2;
  }
  out = std::fopen(argv[1], "w");
  if (!out) {
    std::perror(argv[1]);
    return 1;
  }
  // make_gmma_desc prints an error for every host-side cvta (see the top): keep stdout quiet.
  if (!std::freopen("/dev/null", "w", stdout)) return 1;

  emit_swizzle<1, 4, 3>();
  emit_swizzle<2, 4, 3>();
  emit_swizzle<3, 4, 3>();
  emit_swizzle<2, 5, 2>();

  emit_gmma_operands_of_type<half_t, GMMA::Major::K>();
  emit_gmma_operands_of_type<half_t, GMMA::Major::MN>();
  emit_gmma_operands_of_type<tfloat32_t, GMMA::Major::K>();
  emit_gmma_operands_of_type<tfloat32_t, GMMA::Major::MN>();
  emit_gmma_operands_of_type<float_e4m3_t, GMMA::Major::K>();
  emit_gmma_operands_of_type<float_e4m3_t, GMMA::Major::MN>();

  emit_umma_operands_of_type<half_t, UMMA::Major::K>();
  emit_umma_operands_of_type<half_t, UMMA::Major::MN>();
  emit_umma_operands_of_type<tfloat32_t, UMMA::Major::K>();
  emit_umma_operands_of_type<tfloat32_t, UMMA::Major::MN>();
  emit_umma_operands_of_type<float_e4m3_t, UMMA::Major::K>();
  emit_umma_operands_of_type<float_e4m3_t, UMMA::Major::MN>();

  using UMMA::Major;
  emit_instr_desc<half_t, half_t, float, 128, 256, Major::K, Major::K>("f16", "f16", "f32");
  emit_instr_desc<bfloat16_t, bfloat16_t, float, 64, 128, Major::MN, Major::K>("bf16", "bf16", "f32");
  emit_instr_desc<half_t, half_t, half_t, 128, 64, Major::K, Major::MN>("f16", "f16", "f16");
  emit_instr_desc<bfloat16_t, bfloat16_t, float, 128, 8, Major::MN, Major::MN, UMMA::ScaleIn::Neg>("bf16", "bf16", "f32");
  emit_instr_desc<tfloat32_t, tfloat32_t, float, 128, 32, Major::K, Major::K>("tf32", "tf32", "f32");
  emit_instr_desc<float_e4m3_t, float_e5m2_t, float, 128, 248, Major::K, Major::K>("e4m3", "e5m2", "f32");

  emit_fragment("clayout", 8, GMMA::CLayout_64xN<8>{});
  emit_fragment("clayout", 16, GMMA::CLayout_64xN<16>{});
  emit_fragment("clayout", 24, GMMA::CLayout_64xN<24>{});
  emit_fragment("clayout", 64, GMMA::CLayout_64xN<64>{});
  emit_fragment("clayout", 256, GMMA::CLayout_64xN<256>{});
  emit_fragment("alayout", 4, GMMA::ALayout_64x8{});   // 4-byte elements (tf32), K 8
  emit_fragment("alayout", 2, GMMA::ALayout_64x16{});  // 2-byte elements, K 16
  emit_fragment("alayout", 1, GMMA::ALayout_64x32{});  // 1-byte elements, K 32

  emit_matrix_copy<Copy_Traits<SM75_U32x1_LDSM_N>>("ldsm", 1, false, false);
  emit_matrix_copy<Copy_Traits<SM75_U32x2_LDSM_N>>("ldsm", 2, false, false);
  emit_matrix_copy<Copy_Traits<SM75_U32x4_LDSM_N>>("ldsm", 4, false, false);
  emit_matrix_copy<Copy_Traits<SM75_U16x2_LDSM_T>>("ldsm", 1, true, false);
  emit_matrix_copy<Copy_Traits<SM75_U16x4_LDSM_T>>("ldsm", 2, true, false);
  emit_matrix_copy<Copy_Traits<SM75_U16x8_LDSM_T>>("ldsm", 4, true, false);
  emit_matrix_copy<Copy_Traits<SM90_U32x1_STSM_N>>("stsm", 1, false, true);
  emit_matrix_copy<Copy_Traits<SM90_U32x2_STSM_N>>("stsm", 2, false, true);
  emit_matrix_copy<Copy_Traits<SM90_U32x4_STSM_N>>("stsm", 4, false, true);
  emit_matrix_copy<Copy_Traits<SM90_U16x2_STSM_T>>("stsm", 1, true, true);
  emit_matrix_copy<Copy_Traits<SM90_U16x4_STSM_T>>("stsm", 2, true, true);
  emit_matrix_copy<Copy_Traits<SM90_U16x8_STSM_T>>("stsm", 4, true, true);

  emit_tmem_copy<SM100_TMEM_LOAD_32dp32b1x>("32x32b", 1, 0);
  emit_tmem_copy<SM100_TMEM_LOAD_32dp32b8x>("32x32b", 8, 0);
  emit_tmem_copy<SM100_TMEM_LOAD_16dp64b1x>("16x64b", 1, 0);
  emit_tmem_copy<SM100_TMEM_LOAD_16dp64b4x>("16x64b", 4, 0);
  emit_tmem_copy<SM100_TMEM_LOAD_16dp128b1x>("16x128b", 1, 0);
  emit_tmem_copy<SM100_TMEM_LOAD_16dp128b4x>("16x128b", 4, 0);
  emit_tmem_copy<SM100_TMEM_LOAD_16dp256b1x>("16x256b", 1, 0);
  emit_tmem_copy<SM100_TMEM_LOAD_16dp256b4x>("16x256b", 4, 0);
  emit_tmem_copy<SM100_TMEM_LOAD_16dp32b1x>("16x32bx2", 1, 1);
  emit_tmem_copy<SM100_TMEM_LOAD_16dp32b4x>("16x32bx2", 4, 4);

  // TMA: K-major tiles one and two swizzle atoms wide, an MN-major tile, 2- and 4-byte elements.
  emit_tma<half_t, GMMA::Layout_K_SW128_Atom<half_t>, 64, 64>("k_sw128_h", false, 100, 136, 0x4000);
  emit_tma<half_t, GMMA::Layout_K_SW128_Atom<half_t>, 64, 128>("k_sw128_h_2atoms", false, 100, 136, 0x4000);
  emit_tma<half_t, GMMA::Layout_K_SW64_Atom<half_t>, 64, 32>("k_sw64_h", false, 100, 72, 0x4000);
  emit_tma<half_t, GMMA::Layout_K_SW32_Atom<half_t>, 32, 16>("k_sw32_h", false, 40, 24, 0x4000);
  emit_tma<half_t, GMMA::Layout_K_INTER_Atom<half_t>, 16, 8>("k_none_h", false, 40, 24, 0x4000);
  emit_tma<half_t, GMMA::Layout_MN_SW128_Atom<half_t>, 64, 32>("mn_sw128_h", true, 72, 40, 0x4000);
  emit_tma<float, GMMA::Layout_K_SW128_Atom<float>, 64, 32>("k_sw128_f", false, 100, 44, 0x4000);
  emit_tma<float, GMMA::Layout_K_SW64_Atom<float>, 32, 16>("k_sw64_f", false, 40, 20, 0x4000);
  emit_tma<float, GMMA::Layout_K_SW32_Atom<float>, 16, 8>("k_sw32_f", false, 40, 12, 0x4000);
  emit_tma<float, GMMA::Layout_MN_SW64_Atom<float>, 32, 16>("mn_sw64_f", true, 36, 20, 0x4000);

  std::fclose(out);
  return 0;
}
