// One cluster of CTAs (a lone CTA is a cluster of one) to completion under a seeded scheduler:
// the warps of all its CTAs are resumable units that run a random number of instructions at a
// time; asynchronous operations complete at random points after
// issue, and at the latest when every warp waits. Lanes of a warp that diverged run lowest pc
// first, which reconverges them where nvcc's layout joins the paths.
#include <algorithm>
#include <sstream>

#include "core/machine.h"
#include "core/races.h"
#include "core/tensor_memory.h"

namespace kgen::emu {
namespace {

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

class ClusterRunner {
 public:
  ClusterRunner(Launch& launch, Dim3 cluster_id, LaunchStats& stats) : l_(launch), stats_(stats) {
    cluster_.id = cluster_id;
    const Dim3 shape = l_.cluster;
    const uint32_t size = static_cast<uint32_t>(shape.count());
    for (uint32_t rank = 0; rank < size; ++rank) {
      // Rank order is x fastest, as %cluster_ctarank numbers the CTAs of a cluster.
      const Dim3 ctaid{cluster_id.x * shape.x + rank % shape.x, cluster_id.y * shape.y + rank / shape.x % shape.y,
                       cluster_id.z * shape.z + rank / (shape.x * shape.y)};
      ctas_.push_back(std::make_unique<Cta>());
      set_up(*ctas_.back(), ctaid, rank);
      cluster_.ctas.push_back(ctas_.back().get());
    }
    for (auto& cta : ctas_)
      for (Warp& w : cta->warps) warps_.push_back(&w);
  }

  void run() {
    uint64_t progress = 0;
    std::vector<uint64_t> blocked_at(warps_.size(), ~0ull);
    // The rank-0 CTA's generator schedules: a cluster of one runs as a lone CTA always did.
    std::mt19937_64& rng = ctas_.front()->rng;
    for (;;) {
      // Async units finish at times of the seed's choosing.
      if (any_async() && rng() % 256 == 0) {
        complete_one_async(rng);
        ++progress;
      }
      std::vector<uint32_t> runnable;
      bool unfinished = false;
      for (uint32_t g = 0; g < warps_.size(); ++g) {
        Warp& w = *warps_[g];
        if (!w.live()) continue;
        unfinished = true;
        if (ready(w, blocked_at[g], progress)) runnable.push_back(g);
      }
      if (!unfinished) break;
      if (runnable.empty()) {
        // Threads that exited count as arrived at the cluster barrier.
        if (cluster_.try_complete_barrier() || complete_one_needed_async(rng)) {
          ++progress;
          continue;
        }
        deadlock();
      }
      const uint32_t g = runnable[rng() % runnable.size()];
      Warp& w = *warps_[g];
      const uint32_t quantum = 1 + static_cast<uint32_t>(rng() % 48);
      for (uint32_t k = 0; k < quantum && w.live(); ++k) {
        const Step s = step(w);
        if (s == Step::blocked || s == Step::yield) {
          blocked_at[g] = s == Step::blocked ? progress : ~0ull;
          break;
        }
        blocked_at[g] = ~0ull;
        ++progress;
        if (++l_.executed > l_.max_instructions)
          throw EmulationError("kernel " + l_.program->function->name + " executed more than " +
                               std::to_string(l_.max_instructions) +
                               " warp instructions (KGEN_EMU_MAX_INSTRUCTIONS): a runaway loop?");
        if (w.wait.kind != Wait::Kind::none) break;  // it arrived at a barrier and waits
      }
      if (!w.live()) retire_if_done(*w.cta);
      ++progress;
    }
    for (auto& cta : ctas_) {
      retire_if_done(*cta);
      for (const Warp& w : cta->warps) {
        stats_.warp_instructions += w.instructions;
        stats_.thread_instructions += w.thread_instructions;
      }
    }
  }

 private:
  void set_up(Cta& cta, Dim3 ctaid, uint32_t rank) {
    const Program& p = *l_.program;
    cta.launch = &l_;
    cta.cluster = &cluster_;
    cta.rank = rank;
    cta.id = ctaid;
    cta.linear_id = ctaid.x + l_.grid.x * (ctaid.y + l_.grid.y * ctaid.z);
    cta.rng.seed(mix(l_.seed ^ mix(cta.linear_id)));
    const uint32_t threads = static_cast<uint32_t>(l_.block.count());
    const uint32_t warps = (threads + 31) / 32;
    const uint32_t slots = p.function->register_slots;
    cta.warps.resize(warps);
    for (uint32_t k = 0; k < warps; ++k) {
      Warp& w = cta.warps[k];
      w.cta = &cta;
      w.index = k;
      const uint32_t lanes = std::min<uint32_t>(32, threads - k * 32);
      w.valid = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1;
      // Registers start as a recognizable garbage pattern: nothing may read one unwritten.
      w.regs.assign(size_t{slots} * 32, 0xdeadbeefdeadbeefull);
      w.poisoned.assign(slots, 0);
      w.written_at.assign(slots, 0);
      w.read_at.assign(slots, 0);
      // Its entry in the cluster's vector clocks (core/races.h), first epoch 1; the clocks
      // also have an entry per CTA for its tensor core (tensor_core_agent).
      w.agent = rank * 32 + k;
      w.vc.assign(l_.cluster.count() * (32 + 1), 0);
      w.vc[w.agent] = 1;
    }
    cta.smem.limit = p.dynamic_shared_address + l_.dynamic_shared;
    cta.smem.bytes.assign(cta.smem.limit, 0xff);
    cta.smem.shadow.assign(cta.smem.limit, ShadowByte{});
    cta.local.assign(threads * p.function->local_bytes, 0xff);
  }

  bool any_async() const {
    for (const auto& cta : ctas_)
      if (!cta->async_ops.empty()) return true;
    return false;
  }

  // Completes one async op of a CTA the seed picks; false when none is in flight.
  bool complete_one_async(std::mt19937_64& rng) {
    std::vector<Cta*> busy;
    for (auto& cta : ctas_)
      if (!cta->async_ops.empty()) busy.push_back(cta.get());
    if (busy.empty()) return false;
    Cta* cta = busy.size() == 1 ? busy.front() : busy[rng() % busy.size()];
    return cta->complete_one_async();
  }

  // Every warp waits: completes one operation that a waiting warp may need, chosen by the seed.
  // An operation whose completion only acts on an mbarrier no warp waits for (a copy nobody
  // waits for yet, a tcgen05.commit's arrival) stays in flight, as late as the hardware may
  // leave it, so that a CTA which exits without waiting for it is seen to; any operation when
  // none is needed. False when none is in flight.
  bool complete_one_needed_async(std::mt19937_64& rng) {
    std::vector<std::pair<Cta*, AsyncOp*>> needed, any;
    for (auto& cta : ctas_)
      for (auto& op : cta->async_ops) {
        if (op->done) continue;
        any.emplace_back(cta.get(), op.get());
        if (!idle(*op)) needed.emplace_back(cta.get(), op.get());
      }
    if (any.empty()) return false;
    const auto& pool = needed.empty() ? any : needed;
    const auto [cta, op] = pool[pool.size() == 1 ? 0 : rng() % pool.size()];
    op->done = true;
    op->complete();
    std::erase_if(cta->async_ops, [](const std::unique_ptr<AsyncOp>& o) { return o->done; });
    return true;
  }

  bool idle(const AsyncOp& op) const {
    if (!op.signals_cta) return false;
    for (const Warp* w : warps_)
      if (w->live() && w->wait.kind == Wait::Kind::mbarrier && w->cta == op.signals_cta &&
          w->wait.id == op.signals_mbarrier)
        return false;
    return true;
  }

  // Every warp of the CTA exited: its shared memory is gone, so a copy still reading or writing
  // it (a bulk store nobody waited for with cp.async.bulk.wait_group.read, a load nobody waited
  // for) is a bug, whatever the hardware happens to do with it; so is a peer CTA's later access
  // to it (the exited flag makes those reports).
  void retire_if_done(Cta& cta) {
    if (cta.exited) return;
    for (const Warp& w : cta.warps)
      if (w.live()) return;
    cta.exited = true;
    if (!cta.async_ops.empty())
      throw EmulationError("kernel " + l_.program->function->name + ", CTA (" + std::to_string(cta.id.x) + "," +
                           std::to_string(cta.id.y) + "," + std::to_string(cta.id.z) + ") exits with " +
                           std::to_string(cta.async_ops.size()) + " asynchronous copies on its shared memory in flight, the first issued at " +
                           cta.async_ops.front()->what + " (a missing wait)");
    check_tensor_memory_at_exit(cta);
  }

  // A warp can run when it waits for nothing, or what it waits for happened.
  bool ready(Warp& w, uint64_t blocked_at, uint64_t progress) {
    Cta& cta = *w.cta;
    switch (w.wait.kind) {
      case Wait::Kind::none: return blocked_at == ~0ull || blocked_at != progress;
      case Wait::Kind::barrier:
        if (cta.barriers[w.wait.id].generation == w.wait.generation) return false;
        w.wait = Wait{};
        return true;
      case Wait::Kind::mbarrier: {
        const auto it = cta.mbarriers.find(w.wait.id);
        if (it != cta.mbarriers.end() && it->second.phase == w.wait.generation) return false;
        w.wait = Wait{};
        return true;
      }
      case Wait::Kind::cluster_barrier:
        if (cluster_.barrier_generation < w.wait.generation) return false;
        acquire(w, cluster_.barrier_completed);
        w.cluster_acquired = w.wait.generation;
        w.wait = Wait{};
        return true;
      case Wait::Kind::async_group:
      case Wait::Kind::wgmma:
        if (blocked_at == progress) return false;
        w.wait = Wait{};
        return true;
      case Wait::Kind::tmem_alloc:  // id: the columns tcgen05.alloc asks for
        if (!tensor_memory_fits(cta, w.wait.id)) return false;
        w.wait = Wait{};
        return true;
      case Wait::Kind::tmem_pair:  // tcgen05.alloc.cta_group::2, for the peer CTA's warp
        if (!tensor_memory_pair_ready(cta)) return false;
        w.wait = Wait{};
        return true;
    }
    return true;
  }

  Step step(Warp& w) {
    const std::vector<Decoded>& code = l_.program->code;
    uint32_t pc, mask;
    if (!w.diverged) {
      pc = w.common_pc;
      mask = w.live();
    } else {
      pc = ~0u;
      const uint32_t live = w.live();
      for (int lane = 0; lane < 32; ++lane)
        if (live >> lane & 1) pc = std::min(pc, w.pc[lane]);
      mask = 0;
      for (int lane = 0; lane < 32; ++lane)
        if ((live >> lane & 1) && w.pc[lane] == pc) mask |= 1u << lane;
    }
    if (pc >= code.size()) {
      Decoded none;
      w.fail(none, "runs past the end of the kernel (pc " + std::to_string(pc) + ")");
    }
    const Decoded& d = code[pc];
    uint32_t active = mask;
    if (d.in->guard >= 0) {
      if (!w.written_at[static_cast<uint32_t>(d.in->guard)])
        w.fail(d, "branches on predicate " + l_.program->function->register_names[static_cast<uint32_t>(d.in->guard)] +
                      ", which nothing has written");
      active = 0;
      for (int lane = 0; lane < 32; ++lane) {
        if (!(mask >> lane & 1)) continue;
        const bool p = w.reg(static_cast<uint32_t>(d.in->guard), lane) != 0;
        if (p != d.in->guard_negated) active |= 1u << lane;
      }
    }
    Step s = Step::next;
    if (active) {
      s = d.run(w, d, active);
      if (s == Step::blocked) return s;
      ++w.instructions;
      w.thread_instructions += static_cast<uint64_t>(__builtin_popcount(active));
    }
    if (s == Step::jumped) {
      // The handler moved the lanes it ran (branch taken or not); lanes whose guard was false
      // fall through.
      const uint32_t fall = mask & ~active;
      if (fall) w.move(fall, pc + 1);
    } else {
      w.move(mask & w.live(), pc + 1);
    }
    if (w.diverged) w.reconverge();
    return s;
  }

  [[noreturn]] void deadlock() {
    std::ostringstream s;
    const Cta& first = *ctas_.front();
    s << "deadlock: kernel " << l_.program->function->name << ", ";
    if (ctas_.size() == 1) s << "CTA (" << first.id.x << "," << first.id.y << "," << first.id.z << ")";
    else s << "cluster (" << cluster_.id.x << "," << cluster_.id.y << "," << cluster_.id.z << ") of " << ctas_.size() << " CTAs";
    s << ": every warp waits and no asynchronous operation is in flight";
    for (const Warp* warp : warps_) {
      const Warp& w = *warp;
      const Cta& cta = *w.cta;
      if (!w.live()) continue;
      const uint32_t pc = w.diverged ? w.pc[__builtin_ctz(w.live())] : w.common_pc;
      const ptx::Instruction& in = *l_.program->code[pc].in;
      s << "\n  ";
      if (ctas_.size() > 1) s << "CTA (" << cta.id.x << "," << cta.id.y << "," << cta.id.z << ") rank " << cta.rank << " ";
      s << "warp " << w.index << ": PTX line " << in.line << " '" << in.opcode << "'";
      switch (w.wait.kind) {
        case Wait::Kind::barrier: {
          const NamedBarrier& b = cta.barriers[w.wait.id];
          s << ", waits at barrier " << w.wait.id << " (" << b.arrived << " of " << b.expected << " threads arrived)";
          break;
        }
        case Wait::Kind::mbarrier: {
          const auto it = cta.mbarriers.find(w.wait.id);
          s << ", spins on the mbarrier at shared 0x" << std::hex << w.wait.id << std::dec;
          if (it != cta.mbarriers.end())
            s << " (phase " << it->second.phase << ", " << it->second.pending << " arrivals and " << it->second.tx
              << " transaction bytes pending)";
          break;
        }
        case Wait::Kind::cluster_barrier: {
          uint32_t arrived = 0, live = 0;
          for (const Cta* c : cluster_.ctas)
            for (const Warp& v : c->warps) {
              arrived += static_cast<uint32_t>(__builtin_popcount(v.cluster_arrived & v.live()));
              live += static_cast<uint32_t>(__builtin_popcount(v.live()));
            }
          s << ", waits at the cluster barrier (" << arrived << " of " << live << " live threads arrived)";
          break;
        }
        case Wait::Kind::async_group: s << ", waits for its bulk async-groups"; break;
        case Wait::Kind::wgmma: s << ", waits for wgmma of its warpgroup"; break;
        case Wait::Kind::tmem_alloc: s << ", waits in tcgen05.alloc for " << w.wait.id << " free tensor-memory columns"; break;
        case Wait::Kind::tmem_pair:
          s << ", waits in tcgen05.alloc.cta_group::2 for " << w.wait.id
            << " columns with the peer CTA's warp (which has not joined, or the columns are not free in both)";
          break;
        case Wait::Kind::none: s << ", blocked"; break;
      }
    }
    throw EmulationError(s.str());
  }

  Launch& l_;
  LaunchStats& stats_;
  Cluster cluster_;
  std::vector<std::unique_ptr<Cta>> ctas_;  // by rank
  std::vector<Warp*> warps_;                // every warp of the cluster, scheduled together
};

}  // namespace

void run_cluster(Launch& launch, Dim3 cluster_id, LaunchStats& stats) { ClusterRunner(launch, cluster_id, stats).run(); }

}  // namespace kgen::emu
