#include "tpu_backward_verifier.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "compare.h"
#include "dense_backward.h"
#include "grid_driver.h"
#include "targets/target.h"
#include "targets/tpu/backward_plan.h"
#include "targets/tpu/generations.h"
#include "targets/tpu/kernel_plan.h"
#include "tpu_arrays.h"
#include "verification_inputs.h"

namespace kgen {
namespace {

using mosaic::HostArray;

// A large spec's dk/dv rows cost a pass over every q row of the group each, so fewer rows
// are spread than the forward's 256; the block edges are always all there.
constexpr int64_t kSpreadRows = 128;

// Which (batch, kv head) groups run, with every q head of each (dk and dv sum over the
// group), and which rows of dq and of dk/dv are compared. A small spec runs every group when
// its (batch, head) pairs are within max_pairs, else its first and last; a large one (dense
// cost over the row budget) its last only, where index maps that ignore the batch or kv
// head, or forget to divide the head by the group, go wrong.
struct Sample {
  std::set<std::pair<int64_t, int64_t>> groups;  // (b, kv head)
  std::set<int64_t> q_rows, kv_rows;             // empty: every row
  std::string description;

  bool pair(const Spec& spec, int64_t b, int64_t h) const { return groups.count({b, h / spec.shape.group()}) > 0; }
};

Sample choose_sample(const Spec& spec, const Tiling& tiles, const TpuVerifyOptions& options) {
  const Shape& s = spec.shape;
  Sample sample;
  const int64_t dense_cost = s.q_len * s.kv_len * (s.head_dim + s.head_dim_v);
  const bool large = dense_cost > options.dense_row_budget;
  if (!large && s.batch * s.q_heads <= options.max_pairs) {
    for (int64_t b = 0; b < s.batch; ++b)
      for (int64_t g = 0; g < s.kv_heads; ++g) sample.groups.insert({b, g});
  } else {
    if (!large) sample.groups.insert({0, 0});
    sample.groups.insert({s.batch - 1, s.kv_heads - 1});
  }
  std::string groups;
  for (const auto& [b, g] : sample.groups)
    groups += (groups.empty() ? "" : ", ") + std::string("(") + std::to_string(b) + ", " + std::to_string(g) + ")";
  sample.description = std::to_string(sample.groups.size()) + " of " + std::to_string(s.batch * s.kv_heads) +
                       " (batch, kv head) groups [" + groups + "] with all " + std::to_string(s.group()) +
                       " q heads each, every grid step of both kernels";
  if (large) {
    sample.q_rows = spread_rows(s.q_len, tiles.block_q, kSpreadRows).rows;
    sample.kv_rows = spread_rows(s.kv_len, tiles.block_kv, kSpreadRows).rows;
    sample.description += "; reference rows: " + std::to_string(sample.q_rows.size()) + " of " + std::to_string(s.q_len) +
                         " dq rows, " + std::to_string(sample.kv_rows.size()) + " of " + std::to_string(s.kv_len) +
                         " dk/dv rows (edges and middle of each block, and a stride between)";
  } else {
    sample.description += "; reference rows: all";
  }
  return sample;
}

mosaic::MosaicKernel compile(const std::string& text, const std::string& name, int opt_level) {
  mosaic::CompileOptions options;
  options.source_name = name;
  options.llvm_opt_level = opt_level;
  return mosaic::MosaicKernel(text, options);
}

double seconds_of(const mosaic::MosaicKernel& kernel) {
  const auto& t = kernel.compile_times();
  return t.parse_seconds + t.lower_seconds + t.jit_seconds;
}

// Every windowed operand's full array, in kernel order: inputs from `input_of`, outputs poisoned.
struct Windows {
  std::vector<HostArray> arrays;
  std::vector<mosaic::ArrayRole> roles;
  std::vector<std::string> names;

  template <typename InputOf>
  Windows(const std::vector<TpuOperand>& operands, InputOf input_of) {
    for (const TpuOperand& op : operands) {
      if (op.role == TpuOperand::Role::kInput) {
        arrays.push_back(input_of(op));
        roles.push_back(mosaic::ArrayRole::kInput);
      } else if (op.role == TpuOperand::Role::kOutput) {
        arrays.push_back(poisoned(op));
        roles.push_back(mosaic::ArrayRole::kOutput);
      } else {
        continue;
      }
      names.push_back(op.name);
    }
  }
  std::vector<mosaic::WindowArray> views() {
    std::vector<mosaic::WindowArray> views;
    for (std::size_t k = 0; k < arrays.size(); ++k) views.push_back({arrays[k].view(), roles[k]});
    return views;
  }
  const HostArray& operator[](const std::string& name) const {
    const auto found = std::find(names.begin(), names.end(), name);
    if (found == names.end()) throw std::runtime_error("the kernel has no operand '" + name + "'");
    return arrays[static_cast<std::size_t>(found - names.begin())];
  }
};

}  // namespace

struct TpuBackwardVerification::Data {
  Spec spec;
  int llvm_opt_level = 0;
  Tiling tiles;
  Sample sample;
  TpuBackwardKernel dq, dkv;
  AttentionInputs inputs;
  HostArray out, dout, lse;  // the residuals, as the forward kernel wrote them (sampled heads)
  AttentionGradients expected;
  double forward_seconds = 0;
};

TpuBackwardVerification::TpuBackwardVerification(const Spec& spec, const std::string& forward_module,
                                                 const TpuVerifyOptions& options)
    : data_(std::make_unique<Data>()) {
  Data& d = *data_;
  const Shape& s = spec.shape;
  d.spec = spec;
  d.llvm_opt_level = options.llvm_opt_level;
  d.tiles = find_target("tpu")->backward_tiling(spec);
  d.sample = choose_sample(spec, d.tiles, options);
  d.dq = tpu_backward_kernel(spec, d.tiles, PlanPass::kDq);
  d.dkv = tpu_backward_kernel(spec, d.tiles, PlanPass::kDkv);
  d.inputs = verification_inputs(spec, options.seed);

  // The forward kernel on the sampled heads writes the residuals.
  const SplashPlan forward_plan = tpu_splash_plan(spec);
  const std::vector<TpuOperand> forward_operands = tpu_operands(spec, forward_plan);
  Windows forward(forward_operands, [&](const TpuOperand& op) { return input_array(op, spec, d.inputs, forward_plan); });
  const mosaic::MosaicKernel kernel = compile(forward_module, spec.name + ".tpu.mlir", d.llvm_opt_level);
  mosaic::GridOptions grid;
  grid.sample = [&](const std::vector<int64_t>& index) { return d.sample.pair(spec, index[0], index[1]); };
  d.forward_seconds = mosaic::run_grid(kernel, forward_prefetch_tables(spec, forward_plan, d.inputs), forward.views(), grid).seconds;
  d.out = forward["out"];
  d.lse = forward["lse"];
  const TpuOperand* out_operand = nullptr;
  for (const TpuOperand& op : forward_operands)
    if (op.name == "out") out_operand = &op;
  d.dout = element_array(*out_operand, verification_dout(spec, options.seed), spec.dtype);

  // The reference reads the same residuals; heads outside the sample hold NaN and are never read.
  BackwardResiduals residuals;
  const std::size_t rows = static_cast<std::size_t>(s.batch * s.q_heads * s.q_len);
  for (std::size_t row = 0; row < rows; ++row) {
    residuals.lse.push_back(widen(d.lse, row * kTpuLanes, DType::kFloat32));
    for (int64_t c = 0; c < s.head_dim_v; ++c) {
      const std::size_t at = row * static_cast<std::size_t>(s.head_dim_v) + static_cast<std::size_t>(c);
      residuals.out.push_back(widen(d.out, at, spec.dtype));
      residuals.dout.push_back(widen(d.dout, at, spec.dtype));
    }
  }
  const Sample& sample = d.sample;
  GradientRows only;
  only.dq = [&](int64_t b, int64_t h, int64_t i) {
    return sample.pair(spec, b, h) && (sample.q_rows.empty() || sample.q_rows.count(i));
  };
  only.dkv = [&](int64_t b, int64_t g, int64_t j) {
    return sample.groups.count({b, g}) && (sample.kv_rows.empty() || sample.kv_rows.count(j));
  };
  only.dsinks = [&](int64_t b, int64_t h) { return sample.pair(spec, b, h); };
  d.expected = dense_attention_backward(spec, d.inputs, residuals, only);
}

TpuBackwardVerification::~TpuBackwardVerification() = default;
TpuBackwardVerification::TpuBackwardVerification(TpuBackwardVerification&&) noexcept = default;

TpuBackwardResult TpuBackwardVerification::check(const std::string& dq_module, const std::string& dkv_module) const {
  const Data& d = *data_;
  const Spec& spec = d.spec;
  const Shape& s = spec.shape;
  TpuBackwardResult result;
  result.tolerance = backward_tolerance(spec.dtype);
  result.sample = d.sample.description;
  result.run_seconds = d.forward_seconds;

  auto input_of = [&](const TpuBackwardKernel& kernel) {
    return [&](const TpuOperand& op) {
      if (op.name == "out") return d.out;
      if (op.name == "dout") return d.dout;
      if (op.name == "lse") return d.lse;
      return input_array(op, spec, d.inputs, kernel.plan);
    };
  };
  auto run = [&](const TpuBackwardKernel& kernel, const std::string& text, const std::string& pass,
                 int batch_dim, int head_dim) {
    const mosaic::MosaicKernel compiled = compile(text, spec.name + ".tpu." + pass + ".mlir", d.llvm_opt_level);
    result.compile_seconds += seconds_of(compiled);
    Windows windows(kernel.operands, input_of(kernel));
    mosaic::GridOptions grid;
    grid.sample = [&](const std::vector<int64_t>& index) {
      return d.sample.pair(spec, index[static_cast<std::size_t>(batch_dim)], index[static_cast<std::size_t>(head_dim)]);
    };
    const mosaic::GridStats stats = mosaic::run_grid(compiled, prefetch_tables(kernel.plan), windows.views(), grid);
    result.steps_run += stats.steps_run;
    result.run_seconds += stats.seconds;
    return windows;
  };
  const Windows dq = run(d.dq, dq_module, "dq", 0, 1);
  const Windows dkv = run(d.dkv, dkv_module, "dkv", 0, 2);

  // The sampled rows of each gradient, kernel and reference side by side.
  std::vector<double> dq_actual, dq_expected, dk_actual, dk_expected, dv_actual, dv_expected;
  auto take = [&](const HostArray& array, const std::vector<double>& reference, int64_t row, int64_t width,
                  std::vector<double>& actual, std::vector<double>& expected) {
    for (int64_t c = 0; c < width; ++c) {
      const std::size_t at = static_cast<std::size_t>(row * width + c);
      actual.push_back(widen(array, at, spec.dtype));
      expected.push_back(reference[at]);
    }
  };
  for (const auto& [b, g] : d.sample.groups) {
    for (int64_t h = g * s.group(); h < (g + 1) * s.group(); ++h)
      for (int64_t i = 0; i < s.q_len; ++i)
        if (d.sample.q_rows.empty() || d.sample.q_rows.count(i))
          take(dq["dq"], d.expected.dq, (b * s.q_heads + h) * s.q_len + i, s.head_dim, dq_actual, dq_expected);
    for (int64_t j = 0; j < s.kv_len; ++j)
      if (d.sample.kv_rows.empty() || d.sample.kv_rows.count(j)) {
        const int64_t row = (b * s.kv_heads + g) * s.kv_len + j;
        take(dkv["dk"], d.expected.dk, row, s.head_dim, dk_actual, dk_expected);
        take(dkv["dv"], d.expected.dv, row, s.head_dim_v, dv_actual, dv_expected);
      }
  }
  result.dq_error = relative_out_error(dq_actual, dq_expected);
  result.dk_error = relative_out_error(dk_actual, dk_expected);
  result.dv_error = relative_out_error(dv_actual, dv_expected);
  if (spec.sinks) {
    // Each q block's share sits replicated in its (8, 128) tile; the caller's sum over q
    // blocks and batches, here over the sampled batches of each head.
    std::vector<double> actual(static_cast<std::size_t>(s.q_heads), 0.0);
    const HostArray& partials = dq["dsinks"];
    const int64_t tiles = d.dq.plan.block_mask.q_blocks;
    std::vector<double> expected;
    std::vector<double> compared;
    for (int64_t h = 0; h < s.q_heads; ++h) {
      bool sampled = false;
      for (int64_t b = 0; b < s.batch; ++b) {
        if (!d.sample.pair(spec, b, h)) continue;
        sampled = true;
        for (int64_t t = 0; t < tiles; ++t)
          actual[h] += widen(partials, static_cast<std::size_t>(((b * s.q_heads + h) * tiles + t) * 8 * kTpuLanes), DType::kFloat32);
      }
      if (!sampled) continue;
      compared.push_back(actual[h]);
      expected.push_back(d.expected.dsinks[h]);
    }
    result.dsinks_error = relative_out_error(compared, expected);
  }
  return result;
}

}  // namespace kgen
