#include "tpu_verifier.h"

#include <set>

#include "block_plan.h"
#include "dense_reference.h"
#include "grid_driver.h"
#include "targets/tpu/kernel_plan.h"
#include "mosaic_kernel.h"
#include "tpu_arrays.h"
#include "verification_inputs.h"

namespace kgen {
namespace {

using mosaic::HostArray;

constexpr int64_t kSpreadRows = 256;

// Which (batch, head) pairs and which of their rows a verification covers.
struct Sample {
  std::set<std::pair<int64_t, int64_t>> pairs;
  std::set<int64_t> rows;  // empty: every row
  std::string description;

  bool selected(int64_t b, int64_t h, int64_t i) const {
    return pairs.count({b, h}) && (rows.empty() || rows.count(i));
  }
};

Sample choose_sample(const Spec& spec, const TpuVerifyOptions& options) {
  const Shape& s = spec.shape;
  Sample sample;
  if (s.batch * s.q_heads <= options.max_pairs) {
    for (int64_t b = 0; b < s.batch; ++b)
      for (int64_t h = 0; h < s.q_heads; ++h) sample.pairs.insert({b, h});
  } else {
    // First and last head and one in between from another kv group; first and last batch.
    const std::vector<int64_t> heads = {0, s.q_heads - 1, (s.q_heads / 2 + s.group()) % s.q_heads};
    const std::vector<int64_t> batches = {0, s.batch - 1};
    for (std::size_t k = 0; static_cast<int>(sample.pairs.size()) < options.max_pairs && k < 2 * heads.size(); ++k)
      sample.pairs.insert({batches[k % 2], heads[k % heads.size()]});
  }
  std::string pairs;
  for (const auto& [b, h] : sample.pairs) pairs += (pairs.empty() ? "" : ", ") + std::string("(") + std::to_string(b) + ", " + std::to_string(h) + ")";
  sample.description = std::to_string(sample.pairs.size()) + " of " + std::to_string(s.batch * s.q_heads) +
                       " (batch, head) pairs [" + pairs + "], every q block and kv step";

  const int64_t dense_cost = s.q_len * s.kv_len * (s.head_dim + s.head_dim_v);
  if (dense_cost > options.dense_row_budget) {
    const SpreadRows spread = spread_rows(s.q_len, spec.tpu->block_q, kSpreadRows);
    sample.rows = spread.rows;
    sample.description += "; reference rows: " + std::to_string(sample.rows.size()) + " of " +
                          std::to_string(s.q_len) + " (edges and middle of each q block, and every " +
                          std::to_string(spread.stride) + "th row)";
  } else {
    sample.description += "; reference rows: all";
  }
  return sample;
}

}  // namespace

// Calls `visit(row)` with the flat (b, h, i) row index of every sampled row, in order.
template <typename Data, typename Visit>
void for_each_sampled_row(const Data& d, Visit visit) {
  const Shape& s = d.spec.shape;
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.q_heads; ++h)
      for (int64_t i = 0; i < s.q_len; ++i)
        if (d.sample.selected(b, h, i)) visit(static_cast<std::size_t>((b * s.q_heads + h) * s.q_len + i));
}

struct TpuVerification::Data {
  Spec spec;
  int llvm_opt_level = 2;
  SplashPlan plan;
  std::vector<TpuOperand> operands;
  std::vector<std::vector<int32_t>> prefetch;
  std::vector<HostArray> inputs;  // one per input window, in kernel order
  Sample sample;
  AttentionOutputs expected;      // the sampled rows of the reference, in row order
};

TpuVerification::TpuVerification(const Spec& spec, const TpuVerifyOptions& options) : data_(std::make_unique<Data>()) {
  Data& d = *data_;
  d.spec = spec;
  d.llvm_opt_level = options.llvm_opt_level;
  d.plan = tpu_splash_plan(spec);
  d.operands = tpu_operands(spec, d.plan);
  const AttentionInputs inputs = verification_inputs(spec, options.seed);
  d.prefetch = forward_prefetch_tables(spec, d.plan, inputs);
  for (const TpuOperand& op : d.operands)
    if (op.role == TpuOperand::Role::kInput) d.inputs.push_back(input_array(op, spec, inputs, d.plan));

  d.sample = choose_sample(spec, options);
  const AttentionOutputs reference = dense_attention(spec, inputs, [&](int64_t b, int64_t h, int64_t i) {
    return d.sample.selected(b, h, i);
  });
  for_each_sampled_row(d, [&](std::size_t row) {
    const std::size_t first = row * static_cast<std::size_t>(spec.shape.head_dim_v);
    d.expected.out.insert(d.expected.out.end(), reference.out.begin() + first,
                          reference.out.begin() + first + spec.shape.head_dim_v);
    if (spec.lse) d.expected.lse.push_back(reference.lse[row]);
  });
}

TpuVerification::~TpuVerification() = default;
TpuVerification::TpuVerification(TpuVerification&&) noexcept = default;

TpuVerifyResult TpuVerification::check(const std::string& module_text, const std::string& module_name) const {
  return run(compile(module_text, module_name));
}

mosaic::MosaicKernel TpuVerification::compile(const std::string& module_text, const std::string& module_name) const {
  mosaic::CompileOptions options;
  options.source_name = module_name;
  options.llvm_opt_level = data_->llvm_opt_level;
  return mosaic::MosaicKernel(module_text, options);
}

TpuVerifyResult TpuVerification::run(const mosaic::MosaicKernel& kernel) const {
  const Data& d = *data_;
  const Spec& spec = d.spec;
  TpuVerifyResult result;
  result.tolerance = tolerance_for(spec.dtype);
  result.sample = d.sample.description;
  result.compile_seconds = kernel.compile_times().parse_seconds + kernel.compile_times().lower_seconds +
                           kernel.compile_times().jit_seconds;

  // Inputs are copied: a wrong kernel may write into its input blocks.
  std::vector<HostArray> arrays;  // every window's full array, in kernel order
  std::vector<mosaic::ArrayRole> roles;
  std::size_t next_input = 0;
  for (const TpuOperand& op : d.operands) {
    if (op.role == TpuOperand::Role::kInput) {
      arrays.push_back(d.inputs[next_input++]);
      roles.push_back(mosaic::ArrayRole::kInput);
    } else if (op.role == TpuOperand::Role::kOutput) {
      arrays.push_back(poisoned(op));
      roles.push_back(mosaic::ArrayRole::kOutput);
    }
  }
  std::vector<mosaic::WindowArray> windows;
  for (std::size_t k = 0; k < arrays.size(); ++k) windows.push_back({arrays[k].view(), roles[k]});

  mosaic::GridOptions grid;
  grid.sample = [&](const std::vector<int64_t>& index) { return d.sample.pairs.count({index[0], index[1]}) > 0; };
  const mosaic::GridStats stats = mosaic::run_grid(kernel, d.prefetch, windows, grid);
  result.steps_run = stats.steps_run;
  result.steps_skipped = stats.steps_skipped;
  result.document_steps = forward_document_steps(spec, d.plan, d.prefetch, [&](int64_t b, int64_t h) {
    return d.sample.pairs.count({b, h}) > 0;
  });
  result.run_seconds = stats.seconds;

  // Compare only the sampled rows; lse comes back lane-replicated, lane 0 is read.
  const HostArray* out = nullptr;
  const HostArray* lse = nullptr;
  std::size_t window = 0;
  for (const TpuOperand& op : d.operands) {
    if (op.role != TpuOperand::Role::kInput && op.role != TpuOperand::Role::kOutput) continue;
    if (op.name == "out") out = &arrays[window];
    if (op.name == "lse") lse = &arrays[window];
    ++window;
  }
  AttentionOutputs actual;
  for_each_sampled_row(d, [&](std::size_t row) {
    for (int64_t c = 0; c < spec.shape.head_dim_v; ++c)
      actual.out.push_back(widen(*out, row * static_cast<std::size_t>(spec.shape.head_dim_v) + static_cast<std::size_t>(c), spec.dtype));
    if (lse) actual.lse.push_back(widen(*lse, row * 128, DType::kFloat32));
  });
  result.comparison = compare_outputs(actual, d.expected);
  return result;
}

TpuVerifyResult verify_tpu_kernel(const Spec& spec, const std::string& module_text,
                                  const std::string& module_name, const TpuVerifyOptions& options) {
  return TpuVerification(spec, options).check(module_text, module_name);
}

}  // namespace kgen
