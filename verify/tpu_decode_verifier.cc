#include "tpu_decode_verifier.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include "dense_reference.h"
#include "dtype_rounding.h"
#include "grid_driver.h"
#include "targets/target.h"
#include "targets/tpu/decode_plan.h"
#include "tpu_arrays.h"
#include "verification_inputs.h"
#include "decode_splits.h"

namespace kgen {
namespace {

using mosaic::HostArray;

// The lengths a check covers (docs/decode.md "Checking"), for the tpu kernel's block_kv.
std::vector<int32_t> length_cases(const Spec& spec, const TpuDecodeShape& shape) {
  return decode_length_cases(spec, decode_length_edges(spec, shape.block_kv));
}

// The kv blocks a sequence of length `len` reads, by docs/spec-format.md §8 itself: from the
// block of the first position its first token attends to the block of position len - 1.
int64_t live_blocks(const Spec& spec, int64_t block_kv, int64_t len) {
  const Mask& mask = spec.masks.unique.front();
  const int64_t first = mask.kind == Mask::Kind::kLocal && mask.left
                            ? std::max<int64_t>(0, len - spec.shape.q_len - *mask.left)
                            : 0;
  return (len - 1) / block_kv - first / block_kv + 1;
}

// The live kv blocks [begin, end) of split `split` of a sequence of length `len`, by
// docs/spec-format.md §8 and decode_splits.h's split rule.
BlockRange split_range(const Spec& spec, const TpuDecodeShape& shape, int64_t len, int64_t split) {
  const Mask& mask = spec.masks.unique.front();
  const int64_t first = mask.kind == Mask::Kind::kLocal && mask.left ? std::max<int64_t>(0, len - spec.shape.q_len - *mask.left) : 0;
  const int64_t lo = first / shape.block_kv, hi = (len - 1) / shape.block_kv + 1;
  const BlockRange part = split_blocks(hi - lo, shape.splits, split);
  return {lo + part.begin, lo + part.end};
}

// The DMAs each program of the grid (in grid order, those of the sampled kv heads) starts: one
// per piece of k and of v for each block it walks but the first, for its first block unless the
// program before started it, and (on one TensorCore) for the next program's first block.
std::vector<int64_t> expected_dma_starts(const Spec& spec, const TpuDecodeShape& shape, const std::vector<int32_t>& kv_lens,
                                         const std::set<int64_t>& kv_heads) {
  std::vector<int64_t> blocks;  // per program, in grid order
  for (int64_t b = 0; b < shape.batch; ++b)
    for (int64_t g = 0; g < shape.kv_heads; ++g)
      for (int64_t s = 0; s < shape.splits; ++s) {
        const BlockRange r = split_range(spec, shape, kv_lens[static_cast<std::size_t>(b)], s);
        blocks.push_back(r.end - r.begin);
      }
  const int64_t per_block = 2 * shape.dmas_per_block();
  std::vector<int64_t> starts;
  for (std::size_t p = 0; p < blocks.size(); ++p) {
    const int64_t g = static_cast<int64_t>(p) / shape.splits % shape.kv_heads;
    if (!kv_heads.count(g)) continue;
    if (blocks[p] == 0) {
      starts.push_back(0);
      continue;
    }
    const bool started_before = shape.cross_program && p > 0 && blocks[p - 1] > 0;
    const bool starts_next = shape.cross_program && p + 1 < blocks.size() && blocks[p + 1] > 0;
    starts.push_back(per_block * ((started_before ? 0 : 1) + blocks[p] - 1 + (starts_next ? 1 : 0)));
  }
  return starts;
}

// Sinks row-replicated for a q tile: [kv heads][rows][128], row r of kv head g holding the sink
// of q head g * group + r / q_len.
std::vector<double> sink_rows(const Spec& spec, const std::vector<float>& sinks) {
  const Shape& s = spec.shape;
  const int64_t rows = s.group() * s.q_len;
  std::vector<double> out;
  for (int64_t g = 0; g < s.kv_heads; ++g)
    for (int64_t r = 0; r < rows; ++r)
      out.insert(out.end(), 128, sinks[static_cast<std::size_t>(g * s.group() + r / s.q_len)]);
  return out;
}

std::string join(const std::vector<int32_t>& values) {
  std::string text;
  for (int32_t v : values) text += (text.empty() ? "" : ", ") + std::to_string(v);
  return text;
}

// A tiny deterministic generator for the combine's partials (independent of the library's).
struct Lcg {
  uint64_t state;
  double unit() {  // in [0, 1)
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(state >> 11) * 0x1.0p-53;
  }
};

}  // namespace

struct TpuDecodeVerification::Data {
  Spec spec;
  TpuVerifyOptions options;
  TpuDecodeShape shape;
  std::vector<TpuOperand> operands;
  std::vector<TpuOperand> combine_operands;
  std::set<int64_t> kv_heads;  // sampled
  std::vector<int32_t> lengths;
  std::string sample;

  bool sampled(int64_t g) const { return kv_heads.count(g) > 0; }
};

TpuDecodeVerification::TpuDecodeVerification(const Spec& spec, const TpuVerifyOptions& options)
    : data_(std::make_unique<Data>()) {
  if (!spec.decode) throw std::invalid_argument(spec.name + ": not a decode spec");
  Data& d = *data_;
  d.spec = spec;
  d.options = options;
  d.shape = tpu_decode_shape(spec, named_target(spec, "tpu").decode_split(spec).splits);
  d.operands = tpu_decode_operands(spec, d.shape);
  if (d.shape.splits > 1) d.combine_operands = tpu_combine_operands(spec, d.shape);
  const int64_t kv_heads = spec.shape.kv_heads;
  // A kernel whose programs start each other's copies runs whole: a program left out would
  // leave the next one's first block unstarted.
  if (kv_heads <= options.max_pairs || d.shape.cross_program) {
    for (int64_t g = 0; g < kv_heads; ++g) d.kv_heads.insert(g);
  } else {
    for (int64_t g : {int64_t{0}, kv_heads - 1, kv_heads / 2})
      if (static_cast<int>(d.kv_heads.size()) < std::max(1, options.max_pairs)) d.kv_heads.insert(g);
  }
  d.lengths = length_cases(spec, d.shape);
  std::string heads;
  for (int64_t g : d.kv_heads) heads += (heads.empty() ? "" : ", ") + std::to_string(g);
  const int64_t runs = (static_cast<int64_t>(d.lengths.size()) + spec.shape.batch - 1) / spec.shape.batch;
  d.sample = "kv heads [" + heads + "] of " + std::to_string(kv_heads) + ", every sequence, split and kv step; " +
             std::to_string(d.lengths.size()) + " kv_lens cases [" + join(d.lengths) + "] over " +
             std::to_string(runs) + " run(s) of " + std::to_string(spec.shape.batch) + " sequence(s)" +
             (spec.decode->paged() ? ", page tables permuted" : "") + "; every row of the sampled heads";
}

TpuDecodeVerification::~TpuDecodeVerification() = default;
TpuDecodeVerification::TpuDecodeVerification(TpuDecodeVerification&&) noexcept = default;

int64_t TpuDecodeVerification::splits() const { return data_->shape.splits; }

mosaic::MosaicKernel TpuDecodeVerification::compile(const std::string& module_text, const std::string& module_name) const {
  mosaic::CompileOptions options;
  options.source_name = module_name;
  options.llvm_opt_level = data_->options.llvm_opt_level;
  return mosaic::MosaicKernel(module_text, options);
}

TpuDecodeVerifyResult TpuDecodeVerification::check(const std::string& kernel_text, const std::string& kernel_name,
                                                   const std::string& combine_text,
                                                   const std::string& combine_name) const {
  const mosaic::MosaicKernel kernel = compile(kernel_text, kernel_name);
  if (splits() > 1 && combine_text.empty())
    throw std::runtime_error(kernel_name + ": a kernel of " + std::to_string(splits()) + " splits needs its combine");
  std::optional<mosaic::MosaicKernel> combine;
  if (splits() > 1) combine.emplace(compile(combine_text, combine_name));
  return run(kernel, combine ? &*combine : nullptr);
}

TpuDecodeVerifyResult TpuDecodeVerification::run(const mosaic::MosaicKernel& kernel,
                                                 const mosaic::MosaicKernel* combine) const {
  const Data& d = *data_;
  const Spec& spec = d.spec;
  const Shape& s = spec.shape;
  const int64_t rows = d.shape.rows, dv = s.head_dim_v;
  const bool split = d.shape.splits > 1;
  if (split != (combine != nullptr))
    throw std::runtime_error(split ? "a split kernel needs its combine" : "an unsplit kernel has no combine");
  TpuDecodeVerifyResult result;
  result.tolerance = tolerance_for(spec.dtype);
  result.sample = d.sample;
  result.lengths = d.lengths;
  auto add_compile = [&](const mosaic::MosaicKernel& k) {
    const mosaic::CompileTimes& t = k.compile_times();
    result.compile_seconds += t.parse_seconds + t.lower_seconds + t.jit_seconds;
  };
  add_compile(kernel);
  if (combine) add_compile(*combine);
  mosaic::GridOptions grid;
  grid.sample = [&](const std::vector<int64_t>& index) { return d.sampled(index[1]); };

  const int64_t cases = static_cast<int64_t>(d.lengths.size());
  std::map<std::size_t, int64_t> kv_copies;  // per k or v window, over every run
  result.runs = (cases + s.batch - 1) / s.batch;
  for (int64_t run = 0; run < result.runs; ++run) {
    std::vector<int32_t> kv_lens(static_cast<std::size_t>(s.batch));
    for (int64_t b = 0; b < s.batch; ++b) kv_lens[static_cast<std::size_t>(b)] = d.lengths[static_cast<std::size_t>((run * s.batch + b) % cases)];
    DecodeInputs in = decode_verification_inputs(spec, kv_lens, d.options.seed + static_cast<uint64_t>(run));
    const AttentionOutputs reference = dense_decode(spec, in);
    poison_stale_values(spec, in);

    // The caller's arrays (a pool viewed by several page windows is built once), the outputs.
    std::map<std::string, HostArray> inputs;
    for (const TpuOperand& op : d.operands) {
      if (op.role != TpuOperand::Role::kInput || inputs.count(op.name)) continue;
      const std::string name = op.name;
      if (name == "q") inputs.emplace(name, element_array(op, in.q, spec.dtype));
      else if (name == "k") inputs.emplace(name, element_array(op, in.k, spec.dtype));
      else if (name == "v") inputs.emplace(name, element_array(op, in.v, spec.dtype));
      else if (name == "sinks") inputs.emplace(name, element_array(op, sink_rows(spec, in.sinks), spec.dtype));
      else throw std::runtime_error("the decode verifier has no data for kernel input '" + name + "'");
    }
    std::map<std::string, HostArray> outputs;
    std::vector<mosaic::WindowArray> windows;
    for (const TpuOperand& op : d.operands) {
      if (op.role == TpuOperand::Role::kInput) windows.push_back({inputs.at(op.name).view(), mosaic::ArrayRole::kInput});
      if (op.role == TpuOperand::Role::kOutput) {
        outputs.emplace(op.name, poisoned(op));
        windows.push_back({outputs.at(op.name).view(), mosaic::ArrayRole::kOutput});
      }
    }
    std::vector<std::vector<int32_t>> prefetch = {kv_lens};
    if (spec.decode->paged()) prefetch.push_back(in.page_table);
    const mosaic::GridStats stats = mosaic::run_grid(kernel, prefetch, windows, grid);
    result.steps_run += stats.steps_run;
    result.steps_skipped += stats.steps_skipped;
    result.run_seconds += stats.seconds;

    // DMAs: k and v may each be read only by one DMA per page (or block) of the sampled
    // sequences' live blocks.
    int64_t allowed = 0;
    for (int64_t b = 0; b < s.batch; ++b)
      allowed += static_cast<int64_t>(d.kv_heads.size()) * d.shape.dmas_per_block() *
                 live_blocks(spec, d.shape.block_kv, kv_lens[static_cast<std::size_t>(b)]);
    result.kv_copies_allowed += allowed;
    const std::vector<int64_t> schedule = expected_dma_starts(spec, d.shape, kv_lens, d.kv_heads);
    for (std::size_t step = 0; step < schedule.size() && result.schedule_mismatch.empty(); ++step) {
      const int64_t started = step < stats.step_dma_starts.size() ? stats.step_dma_starts[step] : -1;
      if (started != schedule[step])
        result.schedule_mismatch = "run " + std::to_string(run) + ", program " + std::to_string(step) + " of the sample: " +
                                   std::to_string(started) + " DMAs started, the schedule says " + std::to_string(schedule[step]);
    }
    std::size_t window = 0;
    for (const TpuOperand& op : d.operands) {
      if (op.role != TpuOperand::Role::kInput && op.role != TpuOperand::Role::kOutput) continue;
      if (op.name == "k" || op.name == "v") kv_copies[window] += stats.window_dmas[window];
      ++window;
    }

    const HostArray* out = outputs.count("out") ? &outputs.at("out") : nullptr;
    const HostArray* lse = outputs.count("lse") ? &outputs.at("lse") : nullptr;
    std::map<std::string, HostArray> combined;
    if (combine) {
      // The combine reads the partials the kernel wrote and the sinks.
      std::vector<mosaic::WindowArray> parts;
      for (const TpuOperand& op : d.combine_operands) {
        if (op.role == TpuOperand::Role::kInput)
          parts.push_back({op.name == "sinks" ? inputs.emplace("sinks", element_array(op, sink_rows(spec, in.sinks), spec.dtype)).first->second.view()
                                              : outputs.at(op.name).view(),
                           mosaic::ArrayRole::kInput});
        if (op.role == TpuOperand::Role::kOutput) {
          combined.emplace(op.name, poisoned(op));
          parts.push_back({combined.at(op.name).view(), mosaic::ArrayRole::kOutput});
        }
      }
      const mosaic::GridStats combine_stats = mosaic::run_grid(*combine, {}, parts, grid);
      result.steps_run += combine_stats.steps_run;
      result.steps_skipped += combine_stats.steps_skipped;
      result.run_seconds += combine_stats.seconds;
      out = &combined.at("out");
      lse = combined.count("lse") ? &combined.at("lse") : nullptr;
    }

    // The sampled kv heads' rows: the kernel's [b][kv head][row] is the reference's [b][q head][token].
    AttentionOutputs actual, expected;
    for (int64_t b = 0; b < s.batch; ++b)
      for (int64_t g : d.kv_heads)
        for (int64_t r = 0; r < rows; ++r) {
          const std::size_t row = static_cast<std::size_t>((b * s.kv_heads + g) * rows + r);
          for (int64_t c = 0; c < dv; ++c) {
            actual.out.push_back(widen(*out, row * static_cast<std::size_t>(dv) + static_cast<std::size_t>(c), spec.dtype));
            expected.out.push_back(reference.out[row * static_cast<std::size_t>(dv) + static_cast<std::size_t>(c)]);
          }
          if (spec.lse) {
            actual.lse.push_back(widen(*lse, row * 128, DType::kFloat32));
            expected.lse.push_back(reference.lse[row]);
          }
        }
    const Comparison comparison = compare_outputs(actual, expected);
    result.comparison.out_error = std::max(result.comparison.out_error, comparison.out_error);
    result.comparison.lse_error = std::max(result.comparison.lse_error, comparison.lse_error);
  }

  for (const auto& [window, copies] : kv_copies) result.kv_copies = std::max(result.kv_copies, copies);

  if (combine) {
    // The combine alone, on partials no kernel run produces this plainly: parts that kept
    // nothing (-inf, out 0), rows no part kept, and lse values past exp's f32 range (a combine
    // without the max subtraction overflows), with the spec's sinks.
    const int64_t parts = d.shape.splits;
    SplitPartials partials{s.batch * s.kv_heads * rows, parts, dv, {}, {}, {}};
    Lcg random{d.options.seed * 0x9e3779b97f4a7c15ull + 1};
    const double minus_inf = -std::numeric_limits<double>::infinity();
    for (int64_t row = 0; row < partials.rows; ++row)
      for (int64_t part = 0; part < parts; ++part) {
        const bool empty = row % 7 == 0 || (row + part) % 3 == 0;
        // In [90, 100): past exp's f32 overflow at 88.7, and f32 differences stay exact.
        partials.lse.push_back(empty ? minus_inf : round_to_dtype(90 + 10 * random.unit(), DType::kFloat32));
        for (int64_t c = 0; c < dv; ++c) partials.out.push_back(empty ? 0.0 : round_to_dtype(2 * random.unit() - 1, DType::kFloat32));
      }
    std::vector<double> sinks;
    if (spec.sinks) {
      const DecodeInputs in = decode_verification_inputs(spec, std::vector<int32_t>(static_cast<std::size_t>(s.batch), s.q_len), d.options.seed);
      sinks = sink_rows(spec, in.sinks);
      for (int64_t row = 0; row < partials.rows; ++row)
        partials.sinks.push_back(sinks[static_cast<std::size_t>((row % (s.kv_heads * rows)) * 128)]);
    }
    const AttentionOutputs expected_all = dense_combine(partials);
    std::map<std::string, HostArray> arrays;
    std::vector<mosaic::WindowArray> windows;
    for (const TpuOperand& op : d.combine_operands) {
      if (op.role == TpuOperand::Role::kInput) {
        std::vector<double> values;
        if (op.name == "out_s") {
          values = partials.out;  // [b][g][row][part][dv] -> [b][g][part][row][dv]
          for (int64_t bg = 0; bg < s.batch * s.kv_heads; ++bg)
            for (int64_t r = 0; r < rows; ++r)
              for (int64_t part = 0; part < parts; ++part)
                std::copy_n(partials.out.begin() + ((bg * rows + r) * parts + part) * dv, dv,
                            values.begin() + ((bg * parts + part) * rows + r) * dv);
        } else if (op.name == "lse_s") {
          values.assign(static_cast<std::size_t>(s.batch * s.kv_heads * parts * rows * 128), 0.0);
          for (int64_t bg = 0; bg < s.batch * s.kv_heads; ++bg)
            for (int64_t r = 0; r < rows; ++r)
              for (int64_t part = 0; part < parts; ++part)
                std::fill_n(values.begin() + ((bg * parts + part) * rows + r) * 128, 128,
                            partials.lse[static_cast<std::size_t>((bg * rows + r) * parts + part)]);
        } else {
          values = sinks;
        }
        arrays.emplace(op.name, element_array(op, values, spec.dtype));
      } else {
        arrays.emplace(op.name, poisoned(op));
      }
      windows.push_back({arrays.at(op.name).view(),
                         op.role == TpuOperand::Role::kInput ? mosaic::ArrayRole::kInput : mosaic::ArrayRole::kOutput});
    }
    const mosaic::GridStats stats = mosaic::run_grid(*combine, {}, windows);
    result.steps_run += stats.steps_run;
    result.run_seconds += stats.seconds;
    AttentionOutputs actual;
    for (std::size_t k = 0; k < expected_all.out.size(); ++k) actual.out.push_back(widen(arrays.at("out"), k, spec.dtype));
    AttentionOutputs expected{expected_all.out, {}};
    if (spec.lse) {
      for (int64_t row = 0; row < partials.rows; ++row) actual.lse.push_back(widen(arrays.at("lse"), static_cast<std::size_t>(row * 128), DType::kFloat32));
      expected.lse = expected_all.lse;
    }
    result.combine = compare_outputs(actual, expected);
  }
  return result;
}

}  // namespace kgen
