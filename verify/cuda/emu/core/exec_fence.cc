// fence.proxy.async (orders a warp's generic writes before async-proxy reads of them: TMA
// stores, wgmma operands), fence.mbarrier_init (makes initialized mbarriers visible to the
// async proxy), and the memory fences that order nothing more in a sequential emulator.
#include "core/decode.h"
#include "core/lanes.h"

namespace kgen::emu {
namespace {

void publish_mbarriers(Cta& cta) {
  for (auto& [address, b] : cta.mbarriers) b.fenced = true;
}

Step run_proxy_async(Warp& w, const Decoded&, uint32_t) {
  const uint8_t me = static_cast<uint8_t>(w.index + 1);
  for (ShadowByte& s : w.cta->smem.shadow)
    if (s.unfenced_writer == me) s.unfenced_writer = 0;
  // Writes into peer CTAs' shared memory (st.shared::cluster) are marked kPeerWriter there,
  // without naming the writer: any fence.proxy.async of a peer orders them.
  if (w.cta->cluster)
    for (Cta* peer : w.cta->cluster->ctas) {
      if (peer == w.cta || !peer->peer_unfenced) continue;
      for (ShadowByte& s : peer->smem.shadow)
        if (s.unfenced_writer == kPeerWriter) s.unfenced_writer = 0;
      peer->peer_unfenced = false;
    }
  publish_mbarriers(*w.cta);
  return Step::next;
}

Step run_mbarrier_init(Warp& w, const Decoded&, uint32_t) {
  publish_mbarriers(*w.cta);
  return Step::next;
}

Step run_ordering(Warp&, const Decoded&, uint32_t) { return Step::next; }

// fence.{sc,acq_rel,release} at cluster scope or wider: a later relaxed cluster-barrier arrival
// releases what the warp did before it (exec_cluster.cc).
Step run_release_fence(Warp& w, const Decoded&, uint32_t) {
  w.release_fenced = true;
  return Step::next;
}

}  // namespace

void decode_fence(const ptx::Instruction& in, const Modifiers& m, Decoded& d) {
  if (in.parts[0] == "membar") {
    d.run = run_ordering;
  } else if (m.has("proxy") && m.has("async")) {
    d.run = run_proxy_async;
  } else if (m.has("mbarrier_init")) {
    d.run = run_mbarrier_init;
  } else if (m.has("proxy") && m.has("release")) {
    d.run = run_release_fence;  // e.g. fence.proxy.async::generic.release...: a release fence too
  } else if (m.has("proxy")) {
    d.run = run_ordering;  // fence.proxy.tensormap::generic etc.: tensor maps are immutable here
  } else if (m.has("acquire") || m.has("cta")) {
    d.run = run_ordering;  // an acquire fence, or a fence of CTA scope: nothing for the cluster barrier
  } else {
    d.run = run_release_fence;  // fence{.sc,.acq_rel,.release}.{cluster,gpu,sys}
  }
}

}  // namespace kgen::emu
