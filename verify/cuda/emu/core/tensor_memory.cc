#include "core/tensor_memory.h"

#include <algorithm>

namespace kgen::emu {

uint32_t Cta::TensorMemoryState::allocated_columns() const {
  uint32_t n = 0;
  for (const auto& [first, a] : allocations) n += a.columns;
  return n;
}

std::string Cta::TensorMemoryState::check_allocated(uint32_t first, uint32_t count) const {
  auto it = allocations.upper_bound(first);
  if (it != allocations.begin()) {
    --it;
    if (first >= it->first && first + count <= it->first + it->second.columns) return "";
  }
  return "columns " + std::to_string(first) + ".." + std::to_string(first + count - 1) +
         " are not inside one tensor-memory allocation of this CTA";
}

const TmemPublication* Cta::TensorMemoryState::published(const Cta& cta, uint64_t seq) const {
  const TmemPublication* best = nullptr;
  for (const TmemPublication& p : mmas[seq].publications) {
    const auto it = cta.mbarriers.find(p.mbarrier);
    if (it == cta.mbarriers.end() || it->second.phase < p.phase) continue;
    if (!best || p.time < best->time) best = &p;
  }
  return best;
}

void Cta::TensorMemoryState::drain_through(const AsyncOp* op) {
  while (!pipe.empty()) {
    PipeEntry e = std::move(pipe.front());
    pipe.pop_front();
    e.op->done = true;
    e.run();
    if (e.op == op) return;
  }
}

uint32_t tensor_memory_first_fit(const Cta::TensorMemoryState& t, uint32_t columns) {
  for (uint32_t s = 0; s + columns <= kTmemColumns; s += columns) {
    bool overlap = false;
    for (const auto& [first, a] : t.allocations) overlap |= first < s + columns && s < first + a.columns;
    if (!overlap) return s;
  }
  return kTmemColumns;
}

bool tensor_memory_fits(const Cta& cta, uint32_t columns) {
  return !cta.tmem || tensor_memory_first_fit(*cta.tmem, columns) < kTmemColumns;
}

bool tensor_memory_pair_ready(const Cta& cta) {
  if (!cta.tmem) return false;
  const Cta::TensorMemoryState::PairAllocation& mine = cta.tmem->pair_alloc;
  if (mine.waiting) return mine.done;
  const uint32_t peer = cta.rank ^ 1u;
  if (!cta.cluster || peer >= cta.cluster->ctas.size() || !cta.cluster->ctas[peer]->tmem) return false;
  const Cta::TensorMemoryState& other = *cta.cluster->ctas[peer]->tmem;
  if (!other.pair_alloc.waiting || other.pair_alloc.done) return false;
  const uint32_t n = other.pair_alloc.columns;
  for (uint32_t s = 0; s + n <= kTmemColumns; s += n) {
    bool overlap = false;
    for (const Cta::TensorMemoryState* t : {static_cast<const Cta::TensorMemoryState*>(cta.tmem.get()), &other})
      for (const auto& [first, a] : t->allocations) overlap |= first < s + n && s < first + a.columns;
    if (!overlap) return true;
  }
  return false;
}

Cta::TensorMemoryState& tensor_memory(Cta& cta) {
  if (!cta.tmem) {
    cta.tmem = std::make_shared<Cta::TensorMemoryState>();
    cta.tmem->owner = &cta;
  }
  return *cta.tmem;
}

void check_tensor_memory_at_exit(const Cta& cta) {
  if (!cta.tmem || cta.tmem->allocations.empty()) return;
  const auto& [first, a] = *cta.tmem->allocations.begin();
  throw EmulationError("kernel " + cta.launch->program->function->name + ", CTA (" + std::to_string(cta.id.x) + "," +
                       std::to_string(cta.id.y) + "," + std::to_string(cta.id.z) + ") exits holding " +
                       std::to_string(cta.tmem->allocated_columns()) + " columns of tensor memory (the " +
                       std::to_string(a.columns) + " at column " + std::to_string(first) + " allocated by warp " +
                       std::to_string(a.warp) + " at PTX line " + std::to_string(a.line) +
                       "): a missing tcgen05.dealloc, which the next CTA on the SM would block on");
}

}  // namespace kgen::emu
