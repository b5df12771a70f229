// wgmma.fence / mma_async / commit_group / wait_group (sm_90a): the warpgroup's tensor core.
//
// Each of the 4 warps of a warpgroup issues its part of an mma_async (its A fragment in the RS
// form, its accumulator registers); the k-th mma_async of every warp is one operation, which
// launches when the last warp issued it: it then reads its shared-memory operands through the
// descriptors (bytes a TMA load still writes, or that a generic write put there without
// fence.proxy.async, are reported) and keeps them marked as read until it completes. Its
// accumulator and A registers are poisoned from issue to completion: touching one before
// wgmma.wait_group is reported. Completion, in issue order, happens when a warp's wait_group
// needs it; the product is computed then, with f32 accumulation in k order.
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <sstream>
#include <vector>

#include "core/decode.h"
#include "core/lanes.h"
#include "core/races.h"
#include "tensor/gmma.h"

namespace kgen::emu {

struct Cta::WarpgroupState {
  struct Op {
    uint64_t seq = 0;
    const Decoded* d = nullptr;
    std::array<bool, 4> issued{};
    std::array<bool, 4> scale_d{};
    uint64_t desc_a = 0, desc_b = 0;
    std::array<std::array<uint32_t, 4 * 32>, 4> a_regs{};  // RS: [warp][reg * 32 + lane]
    std::vector<float> a, b;  // launched: A (64 x K) and B (N x K) as floats
    std::vector<std::pair<uint32_t, uint32_t>> read_ranges;  // shared bytes marked read
    bool launched = false;
  };
  std::deque<Op> ops;  // not yet complete, oldest first
};

namespace {

struct Shape {
  int n = 0, k = 16;
  Type accumulator = Type::f32, input = Type::bf16;
  bool a_from_registers = false;
};

Shape shape_of(const Decoded& d) {
  Shape s;
  s.n = static_cast<int>(d.imm);
  s.accumulator = d.type2;
  s.input = d.type;
  s.a_from_registers = d.mode == 1;
  s.k = s.input == Type::tf32 ? 8 : 16;
  return s;
}

uint32_t element_bytes(Type t) { return t == Type::tf32 ? 4 : 2; }

// An input element's value. tf32 is an f32 whose low 13 mantissa bits the tensor core ignores.
float element(Type t, uint32_t v) {
  if (t == Type::tf32) return f32(v & 0xffffe000u);
  return t == Type::bf16 ? from_bf16(static_cast<uint16_t>(v)) : from_f16(static_cast<uint16_t>(v));
}

// Whether the instruction has the imm-trans-a/b operands (only 16-bit inputs do: tf32 operands
// are K-major).
bool has_transpose(const Decoded& d) { return element_bytes(d.type) == 2; }

std::vector<uint32_t> slots_of(const ptx::Operand& vector) {
  std::vector<uint32_t> slots;
  for (const ptx::Operand& e : vector.elements) slots.push_back(e.reg);
  return slots;
}

Cta::WarpgroupState& group_of(Warp& w) {
  Cta& cta = *w.cta;
  const size_t g = w.index / 4;
  if (cta.warpgroups.size() <= g) cta.warpgroups.resize(g + 1);
  if (!cta.warpgroups[g]) cta.warpgroups[g] = std::make_shared<Cta::WarpgroupState>();
  return *cta.warpgroups[g];
}

Warp& member(Warp& w, int k) { return w.cta->warps[w.index / 4 * 4 + static_cast<uint32_t>(k)]; }

void poison(Warp& w, const std::vector<uint32_t>& slots, int delta) {
  for (uint32_t s : slots) {
    const uint8_t before = w.poisoned[s];
    w.poisoned[s] = static_cast<uint8_t>(before + delta);
    if (!before && w.poisoned[s]) ++w.poisoned_count;
    if (before && !w.poisoned[s]) --w.poisoned_count;
  }
}

// Reads one operand (A: 64 x K, B: N x K) through its descriptor, checking and marking the bytes.
std::vector<float> read_operand(Warp& w, const Decoded& d, uint64_t desc, int rows, Major major, Type t,
                                std::vector<std::pair<uint32_t, uint32_t>>& ranges) {
  const std::string problem = check_gmma_descriptor(desc);
  if (!problem.empty()) w.fail(d, "wgmma descriptor " + hex(desc) + ": " + problem);
  const int k_elems = 32 / static_cast<int>(element_bytes(t));  // K: 32 bytes of elements
  const uint32_t eb = element_bytes(t);
  std::vector<float> out(static_cast<size_t>(rows * 16));  // row stride 16 for every K
  SharedMemory& smem = w.cta->smem;
  for (int r = 0; r < rows; ++r) {
    for (int k = 0; k < k_elems; ++k) {
      const uint32_t a = operand_element_address(desc, major, r, k, static_cast<int>(eb));
      if (a < kSharedBase || a + eb > smem.limit)
        w.fail(d, "wgmma operand element (" + std::to_string(r) + "," + std::to_string(k) + ") at shared " + hex(a) +
                      " lies outside the CTA's shared memory");
      for (uint32_t b = 0; b < eb; ++b) {
        ShadowByte& s = smem.shadow[a + b];
        if (s.async_writes)
          w.fail(d, "wgmma reads shared " + hex(a + b) + " while a TMA load still writes it: a missing mbarrier wait");
        if (s.unfenced_writer)
          w.fail(d, "wgmma reads shared " + hex(a + b) + ", written by " + unfenced_writer_name(s.unfenced_writer) +
                        " with no fence.proxy.async since: the async proxy may not see the write");
        if (s.mbarrier) w.fail(d, "wgmma reads the mbarrier object at shared " + hex(a + b));
        const std::string race = async_access(w, s, false);
        if (!race.empty()) w.fail(d, "wgmma operand at shared " + hex(a + b) + ": " + race);
        ++s.async_reads;
      }
      ranges.emplace_back(a, eb);
      uint32_t v = 0;
      std::memcpy(&v, smem.bytes.data() + a, eb);
      out[static_cast<size_t>(r * 16 + k)] = element(t, v);
    }
  }
  return out;
}

void launch(Warp& w, Cta::WarpgroupState::Op& o) {
  const Decoded& d = *o.d;
  const Shape s = shape_of(d);
  const bool trans_a = has_transpose(d) && !s.a_from_registers && op(d, 6).bits != 0;
  const bool trans_b = has_transpose(d) && op(d, s.a_from_registers ? 6 : 7).bits != 0;
  if (!s.a_from_registers) {
    o.a = read_operand(w, d, o.desc_a, 64, trans_a ? Major::kMN : Major::kK, s.input, o.read_ranges);
  } else {
    o.a.assign(64 * 16, 0);
    const int eb = static_cast<int>(element_bytes(s.input)), per_register = 4 / eb;
    for (int wk = 0; wk < 4; ++wk)
      for (int lane = 0; lane < 32; ++lane)
        for (int v = 0; v < 4 * per_register; ++v) {
          const FragmentCoord c = gmma_a_register_coord(wk * 32 + lane, v, eb);
          const uint32_t reg = o.a_regs[wk][static_cast<size_t>(v / per_register * 32 + lane)];
          o.a[static_cast<size_t>(c.row * 16 + c.col)] = element(s.input, reg >> (8 * eb * (v % per_register)));
        }
  }
  o.b = read_operand(w, d, o.desc_b, s.n, trans_b ? Major::kMN : Major::kK, s.input, o.read_ranges);
  // imm-scale-a and imm-scale-b (operands 4 and 5 in both forms): 1 or -1.
  if (static_cast<int32_t>(op(d, 4).bits) == -1)
    for (float& x : o.a) x = -x;
  if (static_cast<int32_t>(op(d, 5).bits) == -1)
    for (float& x : o.b) x = -x;
  o.launched = true;
}

// Completes the oldest op: D = A B^T (+ D), written to the 4 warps' registers.
void complete_oldest(Warp& w, Cta::WarpgroupState& g) {
  Cta::WarpgroupState::Op& o = g.ops.front();
  const Decoded& d = *o.d;
  const Shape s = shape_of(d);
  const std::vector<uint32_t> slots = slots_of(op(d, 0));
  // Where each thread's accumulator values sit in the 64 x N tile (tensor/gmma.h), once per op.
  const int values = s.n / 2;
  std::vector<FragmentCoord> coords(static_cast<size_t>(128 * values));
  for (int thread = 0; thread < 128; ++thread)
    for (int v = 0; v < values; ++v) coords[static_cast<size_t>(thread * values + v)] = gmma_accumulator_coord(thread, v);
  for (int wk = 0; wk < 4; ++wk) {
    Warp& m = member(w, wk);
    poison(m, slots, -1);
    if (s.a_from_registers) poison(m, slots_of(op(d, 1)), -1);
    for (uint32_t slot : slots) m.written_at[slot] = std::max<uint64_t>(m.written_at[slot], 1);  // not by an instruction
    for (int lane = 0; lane < 32; ++lane) {
      const int thread = wk * 32 + lane;
      for (int v = 0; v < values; ++v) {
        const FragmentCoord c = coords[static_cast<size_t>(thread * values + v)];
        const uint32_t slot = s.accumulator == Type::f32 ? slots[static_cast<size_t>(v)] : slots[static_cast<size_t>(v / 2)];
        uint64_t& r = m.reg(slot, lane);
        float acc = 0;
        if (o.scale_d[wk]) acc = s.accumulator == Type::f32 ? f32(r) : from_f16(static_cast<uint16_t>(r >> (16 * (v % 2))));
        // In k order; the product of two 16-bit floats is exact in f32, so this is an fma chain.
        const float* a = &o.a[static_cast<size_t>(c.row * 16)];
        const float* b = &o.b[static_cast<size_t>(c.col * 16)];
        for (int k = 0; k < s.k; ++k) acc += a[k] * b[k];
        if (s.accumulator == Type::f32) {
          r = bits(acc);
        } else {
          const uint64_t half = to_f16(acc);
          r = (r & ~(uint64_t{0xffff} << (16 * (v % 2)))) | (half << (16 * (v % 2)));
        }
      }
    }
  }
  // The operands were read until now, on behalf of the warpgroup: a later copy into them must
  // synchronize with this warp (core/races.h).
  for (const auto& [a, n] : o.read_ranges)
    for (uint32_t b = 0; b < n; ++b) {
      ShadowByte& s = w.cta->smem.shadow[a + b];
      --s.async_reads;
      record_wgmma_read(w, s);
    }
  g.ops.pop_front();
}

Step run_fence(Warp& w, const Decoded& d, uint32_t mask) {
  if (mask != w.live()) w.fail(d, "wgmma.fence executed by a diverged warp (.sync.aligned)");
  w.wgmma_fence_at = w.instructions + 1;
  return Step::next;
}

Step run_mma(Warp& w, const Decoded& d, uint32_t mask) {
  if (mask != w.live() || w.valid != 0xffffffffu) w.fail(d, "wgmma.mma_async executed by a diverged or partial warp");
  if (w.cta->warps.size() < (w.index / 4 + 1) * 4) w.fail(d, "wgmma in a CTA without a whole warpgroup");
  const Shape s = shape_of(d);
  const std::vector<uint32_t> d_slots = slots_of(op(d, 0));
  std::vector<uint32_t> a_slots;
  if (s.a_from_registers) a_slots = slots_of(op(d, 1));
  // Registers another instruction wrote (accumulator or A), or read (the accumulator, which the
  // wgmma overwrites), must be ordered before the wgmma by wgmma.fence (PTX ISA, wgmma.fence).
  auto unfenced = [&](uint32_t slot, const char* what) {
    w.fail(d, "register " + w.cta->launch->program->function->register_names[slot] + " was " + what +
                  " after the last wgmma.fence (or none came): wgmma.fence must order it before the wgmma");
  };
  for (const std::vector<uint32_t>* list : std::array<const std::vector<uint32_t>*, 2>{&d_slots, &a_slots})
    for (uint32_t slot : *list)
      if (w.written_at[slot] > w.wgmma_fence_at) unfenced(slot, "written");
  for (uint32_t slot : d_slots)
    if (w.read_at[slot] > w.wgmma_fence_at) unfenced(slot, "read");
  for (uint32_t slot : a_slots)
    if (w.poisoned[slot]) w.fail(d, "A fragment register is still in use by an earlier wgmma");
  Cta::WarpgroupState& g = group_of(w);
  const uint64_t seq = w.wgmma_issued++;
  auto it = std::find_if(g.ops.begin(), g.ops.end(), [&](const auto& o) { return o.seq == seq; });
  if (it == g.ops.end()) {
    g.ops.emplace_back();
    it = std::prev(g.ops.end());
    it->seq = seq;
    it->d = &d;
  }
  Cta::WarpgroupState::Op& o = *it;
  if (o.d != &d) w.fail(d, "the warps of a warpgroup issue different wgmma instructions as their wgmma number " + std::to_string(seq));
  const int me = static_cast<int>(w.index % 4);
  o.issued[static_cast<size_t>(me)] = true;
  o.scale_d[static_cast<size_t>(me)] = w.get(op(d, 3), 0, d) != 0;  // scale-d
  if (s.a_from_registers) {
    for (size_t r = 0; r < 4; ++r)
      for (int lane = 0; lane < 32; ++lane)
        o.a_regs[static_cast<size_t>(me)][r * 32 + static_cast<size_t>(lane)] = static_cast<uint32_t>(w.reg(a_slots[r], lane));
  } else {
    o.desc_a = w.get(op(d, 1), 0, d);
  }
  o.desc_b = w.get(op(d, 2), 0, d);
  poison(w, d_slots, +1);
  if (s.a_from_registers) poison(w, a_slots, +1);
  if (o.issued[0] && o.issued[1] && o.issued[2] && o.issued[3]) launch(w, o);
  return Step::next;
}

Step run_commit(Warp& w, const Decoded&, uint32_t) {
  w.wgmma_groups.push_back(w.wgmma_issued);
  return Step::next;
}

Step run_wait(Warp& w, const Decoded& d, uint32_t mask) {
  if (mask != w.live()) w.fail(d, "wgmma.wait_group executed by a diverged warp (.sync.aligned)");
  const uint64_t keep = op(d, 0).bits;
  if (w.wgmma_groups.size() <= keep) return Step::next;
  const uint64_t upto = w.wgmma_groups[w.wgmma_groups.size() - 1 - keep];  // ops with seq < upto complete
  Cta::WarpgroupState& g = group_of(w);
  while (!g.ops.empty() && g.ops.front().seq < upto) {
    if (!g.ops.front().launched) {
      w.wait = Wait{Wait::Kind::wgmma, 0, 0, 0};
      return Step::blocked;  // another warp of the warpgroup has not issued its part yet
    }
    complete_oldest(w, g);
  }
  w.wgmma_groups.erase(w.wgmma_groups.begin(), w.wgmma_groups.end() - static_cast<std::ptrdiff_t>(keep));
  return Step::next;
}

}  // namespace

void decode_wgmma(const ptx::Instruction& in, const Modifiers& m, Decoded& d) {
  if (m.has("fence")) {
    d.run = run_fence;
    return;
  }
  if (m.has("commit_group")) {
    d.run = run_commit;
    return;
  }
  if (m.has("wait_group")) {
    d.run = run_wait;
    return;
  }
  if (!m.has("mma_async")) throw Unsupported{"wgmma operation"};
  if (m.types.size() != 3) throw Unsupported{"type list"};
  d.type2 = m.types[0];  // accumulator
  d.type = m.types[1];   // inputs
  if ((d.type != Type::bf16 && d.type != Type::f16 && d.type != Type::tf32) || m.types[2] != d.type)
    throw Unsupported{"inputs other than f16/bf16/tf32"};
  if (d.type == Type::tf32 && d.type2 != Type::f32) throw Unsupported{"tf32 with an accumulator other than f32"};
  if (d.type2 != Type::f32 && d.type2 != Type::f16) throw Unsupported{"accumulators other than f32/f16"};
  int n = 0;
  for (const std::string& w : m.words)
    if (w.rfind("m64n", 0) == 0) {
      const size_t k = w.find('k');
      n = std::stoi(w.substr(4, k - 4));
      if (w.substr(k) != (d.type == Type::tf32 ? "k8" : "k16")) throw Unsupported{"K other than 16 for 16-bit inputs, 8 for tf32"};
    }
  if (n < 8 || n > 256 || n % 8) throw Unsupported{"shape"};
  d.imm = static_cast<uint32_t>(n);
  d.mode = in.operands.size() > 1 && in.operands[1].kind == ptx::Operand::Kind::vector;  // RS
  const size_t d_regs = static_cast<size_t>(d.type2 == Type::f32 ? n / 2 : n / 4);
  if (in.operands[0].kind != ptx::Operand::Kind::vector || in.operands[0].elements.size() != d_regs)
    throw Unsupported{"accumulator operand does not have " + std::to_string(d_regs) + " registers"};
  const size_t operands = (d.mode ? 7u : 8u) - (d.type == Type::tf32 ? 2u : 0u);  // tf32: no imm-trans
  if (in.operands.size() != operands) throw Unsupported{"operand count"};
  d.run = run_mma;
}

}  // namespace kgen::emu
