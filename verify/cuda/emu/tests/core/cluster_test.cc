// Thread-block clusters (hand-written PTX): the cluster special registers, mapa and peer
// shared memory, the cluster barrier, a peer's mbarrier, TMA multicast, and the reports a
// broken cluster protocol must produce.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/device.h"
#include "run_ptx.h"
#include "tensor/tensor_map.h"

namespace kgen::emu::testing {
namespace {

std::string module(const std::string& body, const std::string& params = "") {
  return std::string(kHeader) + ".extern .shared .align 1024 .b8 smem[];\n.visible .entry k(" + params + ")\n{\n" + body +
         "\n}\n";
}

std::string run_cluster(const std::string& ptx, const std::string& origin, Dim3 grid, Dim3 cluster, uint32_t threads,
                        std::vector<void*> args, uint32_t dynamic_shared = 1024) {
  try {
    Device::get().load_ptx(ptx, origin);
    Device::get().launch("k", grid, {threads, 1, 1}, dynamic_shared, args.data(), cluster, true);
    return "";
  } catch (const EmulationError& e) {
    return e.what();
  }
}

template <class T>
T* device_array(size_t n) {
  return static_cast<T*>(Device::get().allocate(n * sizeof(T)));
}

TEST(Cluster, SpecialRegistersDescribeTheCluster) {
  // Thread 0 of each CTA writes its cluster registers to out[ctaid.x * 8 ...].
  const std::string ptx = module(R"(
  .reg .b32 %r<12>; .reg .b64 %rd<4>; .reg .pred %p<2>;
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra DONE;
  ld.param.u64 %rd1, [out];
  mov.u32 %r2, %ctaid.x;
  mul.wide.u32 %rd2, %r2, 32;
  add.u64 %rd1, %rd1, %rd2;
  mov.u32 %r3, %cluster_ctarank;   st.global.u32 [%rd1], %r3;
  mov.u32 %r4, %cluster_nctarank;  st.global.u32 [%rd1+4], %r4;
  mov.u32 %r5, %clusterid.x;       st.global.u32 [%rd1+8], %r5;
  mov.u32 %r6, %nclusterid.x;      st.global.u32 [%rd1+12], %r6;
  mov.u32 %r7, %cluster_ctaid.x;   st.global.u32 [%rd1+16], %r7;
  mov.u32 %r8, %cluster_nctaid.x;  st.global.u32 [%rd1+20], %r8;
  mov.u32 %r9, %is_explicit_cluster; st.global.u32 [%rd1+24], %r9;
  mov.u32 %r10, %cluster_ctaid.y;  st.global.u32 [%rd1+28], %r10;
DONE:
  ret;)", ".param .u64 out");
  uint32_t* out = device_array<uint32_t>(6 * 8);
  EXPECT_EQ(run_cluster(ptx, "cluster_specials.ptx", {6, 1, 1}, {3, 1, 1}, 32, {&out}), "");
  for (uint32_t cta = 0; cta < 6; ++cta) {
    const uint32_t* o = out + cta * 8;
    EXPECT_EQ(o[0], cta % 3) << cta;  // rank
    EXPECT_EQ(o[1], 3u);
    EXPECT_EQ(o[2], cta / 3);          // clusterid.x
    EXPECT_EQ(o[3], 2u);
    EXPECT_EQ(o[4], cta % 3);          // cluster_ctaid.x
    EXPECT_EQ(o[5], 3u);
    EXPECT_EQ(o[6], 1u);
    EXPECT_EQ(o[7], 0u);
  }
}

// Each CTA stores 100 + its rank into its peer's shared memory through mapa, the cluster
// barrier orders it, and each reads what its peer wrote.
const char* kPeerExchange = R"(
  .reg .b32 %r<12>; .reg .b64 %rd<4>; .reg .pred %p<2>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %cluster_ctarank;
  xor.b32 %r3, %r2, 1;
  mov.u32 %r4, smem;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra ARRIVE;
  mapa.shared::cluster.u32 %r5, %r4, %r3;
  add.u32 %r6, %r2, 100;
  st.shared::cluster.u32 [%r5], %r6;
ARRIVE:
  BARRIER
  ld.shared.u32 %r7, [%r4];
  ld.param.u64 %rd1, [out];
  mov.u32 %r8, %ctaid.x;
  mul.wide.u32 %rd2, %r8, 4;
  add.u64 %rd1, %rd1, %rd2;
  @%p1 bra DONE;
  st.global.u32 [%rd1], %r7;
DONE:
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  ret;)";

std::string peer_exchange(const std::string& barrier) {
  std::string body = kPeerExchange;
  body.replace(body.find("BARRIER"), 7, barrier);
  return module(body, ".param .u64 out");
}

TEST(Cluster, MapaReachesThePeersSharedMemoryOrderedByTheClusterBarrier) {
  uint32_t* out = device_array<uint32_t>(4);
  EXPECT_EQ(run_cluster(peer_exchange("barrier.cluster.arrive.release.aligned;\n  barrier.cluster.wait.acquire.aligned;"),
                        "cluster_exchange.ptx", {4, 1, 1}, {2, 1, 1}, 64, {&out}),
            "");
  EXPECT_EQ(out[0], 101u);  // CTA 0 (rank 0) holds what rank 1 wrote
  EXPECT_EQ(out[1], 100u);
  EXPECT_EQ(out[2], 101u);
  EXPECT_EQ(out[3], 100u);
}

TEST(Cluster, APeersStoreWithoutTheBarrierIsARaceBetweenCtas) {
  // Without the cluster barrier nothing orders a CTA's read of its shared memory with the peer's
  // store into it: whichever comes first, the second is a race (for every seed).
  uint32_t* out = device_array<uint32_t>(2);
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    Device::get().options().seed = seed;
    const std::string report = run_cluster(peer_exchange(""), "cluster_no_barrier_" + std::to_string(seed) + ".ptx",
                                           {2, 1, 1}, {2, 1, 1}, 32, {&out});
    EXPECT_NE(report.find("of cluster CTA rank"), std::string::npos) << report;
    EXPECT_NE(report.find("with no synchronization between"), std::string::npos) << report;
  }
  Device::get().options().seed = 1;
}

TEST(Cluster, APeersStoreBeforeARelaxedClusterBarrierIsARace) {
  // barrier.cluster.arrive.relaxed releases nothing: the barrier orders execution, not the store.
  uint32_t* out = device_array<uint32_t>(2);
  const std::string report = run_cluster(peer_exchange("barrier.cluster.arrive.relaxed.aligned;\n  barrier.cluster.wait.aligned;"),
                                         "cluster_relaxed_exchange.ptx", {2, 1, 1}, {2, 1, 1}, 32, {&out});
  EXPECT_NE(report.find("reads what warp 0 of cluster CTA rank"), std::string::npos) << report;
}

TEST(Cluster, ArrivingTwiceWithoutWaitIsReported) {
  const std::string ptx = module(R"(
  barrier.cluster.arrive.aligned;
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  ret;)");
  const std::string report = run_cluster(ptx, "cluster_twice.ptx", {2, 1, 1}, {2, 1, 1}, 32, {});
  EXPECT_NE(report.find("arrives at the cluster barrier again"), std::string::npos) << report;
}

TEST(Cluster, ABarrierThePeerNeverReachesIsADeadlockReport) {
  // Rank 1 spins on an mbarrier nobody arrives at; rank 0 waits at the cluster barrier.
  const std::string ptx = module(R"(
  .reg .b32 %r<6>; .reg .pred %p<3>;
  mov.u32 %r1, %cluster_ctarank;
  mov.u32 %r2, smem;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 bra RANK0;
  mbarrier.init.shared::cta.b64 [%r2], 1;
SPIN:
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
  @!%p2 bra SPIN;
RANK0:
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  ret;)");
  const std::string report = run_cluster(ptx, "cluster_deadlock.ptx", {2, 1, 1}, {2, 1, 1}, 1, {});
  EXPECT_NE(report.find("deadlock"), std::string::npos) << report;
  EXPECT_NE(report.find("cluster (0,0,0) of 2 CTAs"), std::string::npos) << report;
  EXPECT_NE(report.find("waits at the cluster barrier (1 of 2 live threads arrived)"), std::string::npos) << report;
  EXPECT_NE(report.find("rank 1 warp 0"), std::string::npos) << report;
}

TEST(Cluster, AccessToAnExitedPeersSharedMemoryIsReported) {
  // Rank 1 exits at once (its threads count as arrived); rank 0 then writes its shared memory.
  const std::string ptx = module(R"(
  .reg .b32 %r<6>; .reg .pred %p<2>;
  mov.u32 %r1, %cluster_ctarank;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra DONE;
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  mov.u32 %r2, smem;
  mov.u32 %r3, 1;
  mapa.shared::cluster.u32 %r4, %r2, %r3;
  st.shared::cluster.u32 [%r4], %r3;
DONE:
  ret;)");
  const std::string report = run_cluster(ptx, "cluster_exited.ptx", {2, 1, 1}, {2, 1, 1}, 32, {});
  EXPECT_NE(report.find("shared memory of cluster CTA rank 1, which has exited"), std::string::npos) << report;
}

// Rank 0 initializes an mbarrier for COUNT arrivals; both CTAs arrive ARRIVALS times on it
// through its shared::cluster address.
const char* kPeerMbarrier = R"(
  .reg .b32 %r<8>; .reg .pred %p<4>;
  mov.u32 %r1, %cluster_ctarank;
  mov.u32 %r2, smem;
  setp.eq.u32 %p1, %r1, 0;
  @!%p1 bra SYNC;
  mbarrier.init.shared::cta.b64 [%r2], COUNT;
  fence.mbarrier_init.release.cluster;
SYNC:
  barrier.cluster.arrive.relaxed.aligned;
  barrier.cluster.wait.aligned;
  mov.u32 %r3, 0;
  mapa.shared::cluster.u32 %r4, %r2, %r3;
  mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r4], ARRIVALS;
  @!%p1 bra DONE;
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
  @!%p2 bra WAIT;
DONE:
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  ret;)";

std::string peer_mbarrier(int count, int arrivals) {
  std::string body = kPeerMbarrier;
  body.replace(body.find("COUNT"), 5, std::to_string(count));
  body.replace(body.find("ARRIVALS"), 8, std::to_string(arrivals));
  return module(body);
}

TEST(Cluster, PeersArriveOnAnMbarrierOfRankZero) {
  EXPECT_EQ(run_cluster(peer_mbarrier(4, 2), "cluster_mbarrier.ptx", {2, 1, 1}, {2, 1, 1}, 1, {}), "");
}

TEST(Cluster, OverArrivalByAPeerIsReported) {
  const std::string report = run_cluster(peer_mbarrier(3, 2), "cluster_over.ptx", {2, 1, 1}, {2, 1, 1}, 1, {});
  EXPECT_NE(report.find("over-arrival"), std::string::npos) << report;
  EXPECT_NE(report.find("of cluster CTA rank 0"), std::string::npos) << report;
}

// A 16-word box, multicast by rank 0 to both CTAs of the cluster: each CTA's mbarrier at the
// same offset gets the 64 bytes. `relaxed`: the cluster barrier after the inits is
// barrier.cluster.arrive.relaxed, which releases them only after fence.mbarrier_init.
std::string multicast_kernel(const std::string& mask, bool fence_init, bool relaxed = true) {
  return module(std::string(R"(
  .reg .b32 %r<12>; .reg .b64 %rd<6>; .reg .pred %p<4>; .reg .b16 %rs<2>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %cluster_ctarank;
  mov.u32 %r3, smem;
  add.u32 %r4, %r3, 128;
  setp.eq.u32 %p1, %r1, 0;
  @!%p1 bra SYNC;
  mbarrier.init.shared::cta.b64 [%r3], 1;
  )") + (fence_init ? "fence.mbarrier_init.release.cluster;" : "") + R"(
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r3], 64;
SYNC:
  barrier.cluster.arrive)" + std::string(relaxed ? ".relaxed" : "") + R"(.aligned;
  barrier.cluster.wait.aligned;
  setp.eq.u32 %p2, %r2, 0;
  and.pred %p3, %p1, %p2;
  @!%p3 bra WAIT;
  ld.param.u64 %rd1, [map];
  mov.u32 %r5, 0;
  mov.u16 %rs1, )" + mask + R"(;
  cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r4], [%rd1, {%r5}], [%r3], %rs1;
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r3], 0;
  @!%p2 bra WAIT;
  setp.lt.u32 %p1, %r1, 16;
  @!%p1 bra DONE;
  mul.wide.u32 %rd2, %r1, 4;
  cvt.u64.u32 %rd3, %r4;
  add.u64 %rd3, %rd3, %rd2;
  cvt.u32.u64 %r6, %rd3;
  ld.shared.u32 %r7, [%r6];
  ld.param.u64 %rd4, [out];
  mul.wide.u32 %rd5, %r2, 64;
  add.u64 %rd4, %rd4, %rd5;
  add.u64 %rd4, %rd4, %rd2;
  st.global.u32 [%rd4], %r7;
DONE:
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  ret;)",
                ".param .u64 map, .param .u64 out");
}

struct MulticastFixture {
  uint32_t* source = device_array<uint32_t>(16);
  TensorMap* map = static_cast<TensorMap*>(Device::get().allocate(128));
  uint32_t* out = device_array<uint32_t>(32);
  MulticastFixture() {
    for (uint32_t k = 0; k < 16; ++k) source[k] = 7 * k + 1;
    TensorMap m;
    m.magic = TensorMap::kMagic;
    m.data_type = 2;  // CU_TENSOR_MAP_DATA_TYPE_UINT32
    m.rank = 1;
    m.element_bytes = 4;
    m.element_strides[0] = 1;
    m.box_dim[0] = 16;
    m.global_address = reinterpret_cast<uint64_t>(source);
    m.global_dim[0] = 16;
    m.global_stride[0] = 4;
    std::memcpy(static_cast<void*>(map), &m, sizeof m);
  }
};

TEST(Cluster, TmaMulticastLandsInEveryMaskedCtaAndCompletesEachMbarrier) {
  MulticastFixture f;
  EXPECT_EQ(run_cluster(multicast_kernel("3", true), "cluster_multicast.ptx", {2, 1, 1}, {2, 1, 1}, 32, {&f.map, &f.out}),
            "");
  for (uint32_t k = 0; k < 32; ++k) EXPECT_EQ(f.out[k], 7 * (k % 16) + 1) << k;
}

TEST(Cluster, MulticastToACtaThatExpectsNoBytesIsADeadlockOrReport) {
  // Mask 1: rank 1's mbarrier expects 64 bytes that never come.
  MulticastFixture f;
  const std::string report =
      run_cluster(multicast_kernel("1", true), "cluster_multicast_mask.ptx", {2, 1, 1}, {2, 1, 1}, 32, {&f.map, &f.out});
  EXPECT_NE(report.find("deadlock"), std::string::npos) << report;
  EXPECT_NE(report.find("64 transaction bytes pending"), std::string::npos) << report;
}

// A relaxed cluster-barrier arrival releases nothing: without fence.mbarrier_init before it, the
// peer's init does not happen before rank 0's copy signals that mbarrier.
TEST(Cluster, MulticastIntoAPeerWhoseMbarrierInitWasNotReleasedIsReported) {
  MulticastFixture f;
  const std::string report =
      run_cluster(multicast_kernel("3", false), "cluster_multicast_fence.ptx", {2, 1, 1}, {2, 1, 1}, 32, {&f.map, &f.out});
  EXPECT_NE(report.find("uses the mbarrier at shared 0x400 that warp 0 of cluster CTA rank 1 initialized"),
            std::string::npos)
      << report;
}

// The copy accesses its mbarrier in the generic proxy (PTX ISA 9.2, cp.async.bulk.tensor): a
// releasing cluster barrier after the init suffices, with no proxy fence.
TEST(Cluster, MulticastAfterAReleasingClusterBarrierNeedsNoMbarrierInitFence) {
  MulticastFixture f;
  EXPECT_EQ(run_cluster(multicast_kernel("3", false, false), "cluster_multicast_release.ptx", {2, 1, 1}, {2, 1, 1}, 32,
                        {&f.map, &f.out}),
            "");
  for (uint32_t k = 0; k < 32; ++k) EXPECT_EQ(f.out[k], 7 * (k % 16) + 1) << k;
}

// TMA with .cta_group::2: each CTA of a pair loads a 16-word box into its own shared memory and
// signals the even CTA's mbarrier, naming it as CUTLASS's 2-SM copies do: its own shared::cta
// address with bit 24 (the rank's low bit, memory.h) cleared. Rank 0 expects both boxes' bytes,
// waits, and stores its box and rank 1's (read through mapa). `peer_bit`: the odd CTA names its
// own mbarrier instead (left uninitialized).
std::string pair_load_kernel(bool peer_bit_cleared) {
  return module(std::string(R"(
  .reg .b32 %r<12>; .reg .b64 %rd<8>; .reg .pred %p<8>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %cluster_ctarank;
  mov.u32 %r3, smem;
  add.u32 %r4, %r3, 128;
  setp.eq.u32 %p1, %r1, 0;
  setp.eq.u32 %p2, %r2, 0;
  and.pred %p3, %p1, %p2;
  @!%p3 bra SYNC;
  mbarrier.init.shared::cta.b64 [%r3], 1;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r3], 128;
SYNC:
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  @!%p1 bra WAIT;
  )") + (peer_bit_cleared ? "and.b32 %r5, %r3, -16777217;" : "mov.u32 %r5, %r3;") + R"(
  ld.param.u64 %rd1, [map];
  shl.b32 %r6, %r2, 4;
  cp.async.bulk.tensor.1d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes [%r4], [%rd1, {%r6}], [%r5];
WAIT:
  @!%p2 bra DONE;
WAIT2:
  mbarrier.try_wait.parity.shared::cta.b64 %p4, [%r3], 0;
  @!%p4 bra WAIT2;
  setp.lt.u32 %p5, %r1, 16;
  @!%p5 bra DONE;
  shl.b32 %r7, %r1, 2;
  add.u32 %r8, %r4, %r7;
  ld.shared.u32 %r9, [%r8];
  mapa.shared::cluster.u32 %r10, %r8, 1;
  ld.shared::cluster.u32 %r11, [%r10];
  ld.param.u64 %rd2, [out];
  mul.wide.u32 %rd3, %r1, 4;
  add.u64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r9;
  st.global.u32 [%rd4+64], %r11;
DONE:
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  ret;)",
                ".param .u64 map, .param .u64 out");
}

struct PairLoadFixture {
  uint32_t* source = device_array<uint32_t>(32);
  TensorMap* map = static_cast<TensorMap*>(Device::get().allocate(128));
  uint32_t* out = device_array<uint32_t>(32);
  PairLoadFixture() {
    for (uint32_t k = 0; k < 32; ++k) source[k] = 3 * k + 2;
    TensorMap m;
    m.magic = TensorMap::kMagic;
    m.data_type = 2;  // CU_TENSOR_MAP_DATA_TYPE_UINT32
    m.rank = 1;
    m.element_bytes = 4;
    m.element_strides[0] = 1;
    m.box_dim[0] = 16;
    m.global_address = reinterpret_cast<uint64_t>(source);
    m.global_dim[0] = 32;
    m.global_stride[0] = 4;
    std::memcpy(static_cast<void*>(map), &m, sizeof m);
  }
};

TEST(Cluster, PairTmaLoadsSignalTheEvenCtasMbarrier) {
  PairLoadFixture f;
  EXPECT_EQ(run_cluster(pair_load_kernel(true), "cluster_pair_load.ptx", {2, 1, 1}, {2, 1, 1}, 32, {&f.map, &f.out}), "");
  for (uint32_t k = 0; k < 32; ++k) EXPECT_EQ(f.out[k], 3 * k + 2) << k;
}

TEST(Cluster, APairTmaLoadSignallingItsOwnUninitializedMbarrierIsReported) {
  PairLoadFixture f;
  const std::string report =
      run_cluster(pair_load_kernel(false), "cluster_pair_load_own.ptx", {2, 1, 1}, {2, 1, 1}, 32, {&f.map, &f.out});
  EXPECT_NE(report.find("no initialized mbarrier at shared 0x400"), std::string::npos) << report;
}

// Cluster launch control: each launched CTA (clusters of one) counts its own tile, then keeps
// cancelling a not-yet-launched cluster and counting that one's tile instead, until a request
// fails. Every tile must be counted exactly once, most by the first CTA to run. `early`: the
// response is read before waiting for its mbarrier.
std::string clc_kernel(bool early) {
  return module(std::string(R"(
  .reg .b32 %r<16>; .reg .b64 %rd<6>; .reg .pred %p<6>; .reg .b128 %h;
  mov.u32 %r1, %tid.x;
  mov.u32 %r3, smem;
  add.u32 %r4, %r3, 16;
  mov.u32 %r10, %ctaid.x;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 mbarrier.init.shared::cta.b64 [%r3], 1;
  bar.sync 0;
  mov.u32 %r11, 0;
  ld.param.u64 %rd1, [out];
LOOP:
  mul.wide.u32 %rd2, %r10, 4;
  add.u64 %rd3, %rd1, %rd2;
  @%p1 red.global.add.u32 [%rd3], 1;
  @!%p1 bra WAIT;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r3], 16;
  clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [%r4], [%r3];
WAIT:
  )") + (early ? "" : "mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r3], %r11;\n  @!%p2 bra WAIT;") + R"(
  xor.b32 %r11, %r11, 1;
  ld.shared.b128 %h, [%r4];
  clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 %p3, %h;
  @!%p3 bra DONE;
  clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128 {%r10, %r12, %r13, _}, %h;
  bar.sync 0;
  bra LOOP;
DONE:
  ret;)",
                ".param .u64 out");
}

TEST(Cluster, TryCancelHandsEveryNotYetLaunchedClusterToExactlyOneCta) {
  constexpr uint32_t kTiles = 6;
  uint32_t* out = device_array<uint32_t>(kTiles);
  std::memset(out, 0, kTiles * 4);
  EXPECT_EQ(run_cluster(clc_kernel(false), "cluster_clc.ptx", {kTiles, 1, 1}, {1, 1, 1}, 32, {&out}, 1024), "");
  for (uint32_t k = 0; k < kTiles; ++k) EXPECT_EQ(out[k], 1u) << k;
}

TEST(Cluster, ReadingATryCancelResponseBeforeItsMbarrierIsReported) {
  uint32_t* out = device_array<uint32_t>(6);
  const std::string report = run_cluster(clc_kernel(true), "cluster_clc_early.ptx", {6, 1, 1}, {1, 1, 1}, 32, {&out}, 1024);
  EXPECT_NE(report.find("still writes it"), std::string::npos) << report;
}

// Warp 0 writes a shared word and arrives on an mbarrier; warp 1 waits for the phase and reads
// the word. With the default semantics (arrive .release, try_wait .acquire) that orders them;
// .relaxed on both orders nothing: a race.
std::string mbarrier_handoff(bool relaxed) {
  const std::string sem = relaxed ? ".relaxed.cta" : "";
  return module(R"(
  .reg .b32 %r<8>; .reg .b64 %rd<4>; .reg .pred %p<4>;
  mov.u32 %r1, %tid.x;
  shr.u32 %r2, %r1, 5;
  mov.u32 %r3, smem;
  add.u32 %r4, %r3, 64;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 mbarrier.init.shared::cta.b64 [%r3], 32;
  bar.sync 0;
  setp.ne.u32 %p2, %r2, 0;
  @%p2 bra READER;
  st.shared.u32 [%r4], 41;
  mbarrier.arrive)" + sem + R"(.shared::cta.b64 _, [%r3];
  bra DONE;
READER:
  mbarrier.try_wait.parity)" + sem + R"(.shared::cta.b64 %p3, [%r3], 0;
  @!%p3 bra READER;
  ld.shared.u32 %r5, [%r4];
  ld.param.u64 %rd1, [out];
  st.global.u32 [%rd1], %r5;
DONE:
  ret;)",
                ".param .u64 out");
}

TEST(Cluster, ARelaxedMbarrierHandOffOrdersNothing) {
  uint32_t* out = device_array<uint32_t>(1);
  EXPECT_EQ(run_cluster(mbarrier_handoff(false), "mbarrier_release_acquire.ptx", {1, 1, 1}, {1, 1, 1}, 64, {&out}), "");
  EXPECT_EQ(out[0], 41u);
  const std::string report =
      run_cluster(mbarrier_handoff(true), "mbarrier_relaxed.ptx", {1, 1, 1}, {1, 1, 1}, 64, {&out});
  EXPECT_NE(report.find("reads what warp 0 wrote with no synchronization between"), std::string::npos) << report;
}

// Rank 1 writes 16 bytes into rank 0's shared memory; after the cluster barrier rank 0 stores
// them to global with a bulk copy (the async proxy), which needs the writer's fence.proxy.async.
std::string peer_write_then_bulk_store(bool fence) {
  return module(std::string(R"(
  .reg .b32 %r<8>; .reg .b64 %rd<4>; .reg .pred %p<2>;
  mov.u32 %r1, %cluster_ctarank;
  mov.u32 %r2, smem;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 bra SYNC;
  mov.u32 %r3, 0;
  mapa.shared::cluster.u32 %r4, %r2, %r3;
  st.shared::cluster.v4.u32 [%r4], {%r1, %r1, %r1, %r1};
  )") + (fence ? "fence.proxy.async.shared::cta;" : "") + R"(
SYNC:
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  @!%p1 bra DONE;
  ld.param.u64 %rd1, [out];
  cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r2], 16;
  cp.async.bulk.commit_group;
  cp.async.bulk.wait_group 0;
DONE:
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  ret;)",
                ".param .u64 out");
}

TEST(Cluster, APeersUnfencedWriteReadByTheAsyncProxyIsReported) {
  uint32_t* out = device_array<uint32_t>(4);
  const std::string report =
      run_cluster(peer_write_then_bulk_store(false), "cluster_peer_unfenced.ptx", {2, 1, 1}, {2, 1, 1}, 1, {&out});
  EXPECT_NE(report.find("written by a warp of another CTA of the cluster with no fence.proxy.async"), std::string::npos)
      << report;
  EXPECT_EQ(run_cluster(peer_write_then_bulk_store(true), "cluster_peer_fenced.ptx", {2, 1, 1}, {2, 1, 1}, 1, {&out}),
            "");
  EXPECT_EQ(out[0], 1u);
}

TEST(Cluster, ReqnctaperclusterGivesTheShapeWhenTheLaunchGivesNone) {
  // __cluster_dims__(2, 1, 1) compiles to .reqnctapercluster; a plain launch then runs clusters
  // of 2, and %is_explicit_cluster says so.
  const std::string ptx = std::string(kHeader) + R"(.visible .entry k(.param .u64 out) .explicitcluster .reqnctapercluster 2, 1, 1
{
  .reg .b32 %r<6>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %ctaid.x;
  mul.wide.u32 %rd2, %r1, 8;
  add.u64 %rd1, %rd1, %rd2;
  mov.u32 %r2, %cluster_nctarank;
  st.global.u32 [%rd1], %r2;
  mov.u32 %r3, %is_explicit_cluster;
  st.global.u32 [%rd1+4], %r3;
  ret;
}
)";
  uint32_t* out = device_array<uint32_t>(8);
  std::vector<void*> args = {&out};
  std::string report;
  try {
    Device::get().load_ptx(ptx, "cluster_dims.ptx");
    Device::get().launch("k", {4, 1, 1}, {1, 1, 1}, 0, args.data());
  } catch (const EmulationError& e) {
    report = e.what();
  }
  EXPECT_EQ(report, "");
  for (int cta = 0; cta < 4; ++cta) {
    EXPECT_EQ(out[2 * cta], 2u);
    EXPECT_EQ(out[2 * cta + 1], 1u);
  }
}

TEST(Cluster, GridNotAMultipleOfTheClusterIsRefused) {
  const std::string ptx = module("  ret;");
  const std::string report = run_cluster(ptx, "cluster_grid.ptx", {3, 1, 1}, {2, 1, 1}, 32, {});
  EXPECT_NE(report.find("is not a multiple of the cluster"), std::string::npos) << report;
}

}  // namespace
}  // namespace kgen::emu::testing
