// What one CTA of the backward computes: a (batch, kv head, kv block), and the steps it walks:
// for every q head of the kv head's group, the q blocks the transposed block plan lists for
// that kv block, partial first (docs/sm90a-backward.md, "The walk").
#pragma once

#include <cute/config.hpp>

namespace kgen {
namespace sm90a {

struct BackwardCtaWork {
  int batch;
  int kv_head;
  int kv_block;
  int steps;  // over the whole group; 0: dK and dV are zero
};

// One step: the q block of one head the CTA's K and V meet.
struct BackwardStep {
  int head;
  int q_block;
  int entry;     // its entry in the plan's tables (the bitmask of a partial tile)
  bool partial;  // masked: the first step_partial_count(list) entries of a list
};

// One list per (plan row, kv block): plan rows are 1 when every head shares one mask, else
// one per q head.
template <class Config>
CUTE_DEVICE int backward_list(int head, int kv_block) {
  return (Config::kPlanRows == 1 ? 0 : head) * Config::kKvBlocks + kv_block;
}

// Grid: x = batch * kv_heads + kv head, y = rank of the kv block, heaviest first.
template <class Config>
CUTE_DEVICE BackwardCtaWork backward_cta_work() {
  constexpr int kGroup = Config::kQHeads / Config::kKvHeads;
  BackwardCtaWork work;
  work.kv_head = int(blockIdx.x) % Config::kKvHeads;
  work.batch = int(blockIdx.x) / Config::kKvHeads;
  work.kv_block = Config::kv_block_order(blockIdx.y);
  work.steps = 0;
  for (int g = 0; g < kGroup; ++g) {
    const int list = backward_list<Config>(work.kv_head * kGroup + g, work.kv_block);
    work.steps += Config::step_begin(list + 1) - Config::step_begin(list);
  }
  return work;
}

// Calls step_body(step, t) for t = 0, 1, ... over the CTA's steps, the order the producer
// loads them and the consumers use them.
template <class Config, class StepBody>
CUTE_DEVICE void for_each_step(BackwardCtaWork const& work, StepBody&& step_body) {
  constexpr int kGroup = Config::kQHeads / Config::kKvHeads;
  int t = 0;
  CUTE_NO_UNROLL
  for (int g = 0; g < kGroup; ++g) {
    const int head = work.kv_head * kGroup + g;
    const int list = backward_list<Config>(head, work.kv_block);
    const int begin = Config::step_begin(list);
    const int end = Config::step_begin(list + 1);
    const int partial_end = begin + Config::step_partial_count(list);
    CUTE_NO_UNROLL
    for (int entry = begin; entry < end; ++entry, ++t)
      step_body(BackwardStep{head, Config::step_q(entry), entry, entry < partial_end}, t);
  }
}

}  // namespace sm90a
}  // namespace kgen
