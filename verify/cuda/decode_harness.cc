#include "decode_harness.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <vector>

#include "compare.h"
#include "dense_reference.h"
#include "device_buffers.h"
#include "dtype_rounding.h"
#include "json_fields.h"
#include "kernel_names.h"
#include "verification_inputs.h"

namespace kgen::sm90a {
namespace {

// A tiny deterministic generator for the combine's partials.
struct Lcg {
  uint64_t state;
  double unit() {  // in [0, 1)
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(state >> 11) * 0x1.0p-53;
  }
};

struct Worst {
  double out = 0;
  double lse = 0;
  bool passed = true;
  void add(const Comparison& c, const Tolerance& tolerance) {
    out = std::max(out, c.out_error);
    lse = std::max(lse, c.lse_error);
    passed = passed && c.within(tolerance);
  }
};

template <typename T>
std::size_t bytes_of(int64_t count) {
  return static_cast<std::size_t>(std::max<int64_t>(count, 1)) * sizeof(T);
}

std::vector<double> widen_outputs(const GuardedBuffer& out, DType dtype) {
  return decode(out.read<uint16_t>(), dtype);
}

// The rows of the first `kv_heads` kv heads of every sequence, of outputs laid out
// [batch][q head][token] (x width): q head h belongs to kv head h / group.
std::vector<double> sampled_rows(const std::vector<double>& all, const Shape& s, int64_t kv_heads, int64_t width) {
  if (kv_heads >= s.kv_heads) return all;
  std::vector<double> kept;
  const int64_t row_width = s.q_len * width;  // one q head's rows
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < kv_heads * s.group(); ++h) {
      const auto first = all.begin() + (b * s.q_heads + h) * row_width;
      kept.insert(kept.end(), first, first + row_width);
    }
  return kept;
}

// Compares the sampled rows of out (and lse, when the spec has it) with the reference's.
Comparison compare_sampled(const Spec& spec, int64_t kv_heads, const GuardedBuffer& out, const GuardedBuffer& lse,
                           const AttentionOutputs& reference) {
  const Shape& s = spec.shape;
  AttentionOutputs actual, expected;
  actual.out = sampled_rows(widen_outputs(out, spec.dtype), s, kv_heads, s.head_dim_v);
  expected.out = sampled_rows(reference.out, s, kv_heads, s.head_dim_v);
  if (spec.lse) {
    std::vector<double> wide;
    for (float x : lse.read<float>()) wide.push_back(x);
    actual.lse = sampled_rows(wide, s, kv_heads, 1);
    expected.lse = sampled_rows(reference.lse, s, kv_heads, 1);
  }
  return compare_outputs(actual, expected);
}

}  // namespace

int run_decode_harness(const Spec& spec, const DecodeKernelFacts& facts, const DecodeLaunch& launch,
                       const DecodeHarnessOptions& options) {
  const Shape& s = spec.shape;
  const uint64_t seed = options.seed;
  const int64_t kv_heads = options.kv_heads > 0 ? std::min(options.kv_heads, s.kv_heads) : s.kv_heads;
  const std::vector<int32_t> lengths = decode_length_cases(spec, decode_length_edges(spec, facts.block_kv));
  std::size_t guard_damage = 0;
  double combine_out_error = -1, combine_lse_error = -1;
  const Tolerance tolerance = tolerance_for(spec.dtype);
  const int64_t rows = facts.rows, splits = facts.splits, dv = s.head_dim_v;
  const int64_t groups = s.batch * s.kv_heads;  // (batch, kv head) pairs
  Worst worst;
  bool failed = false;
  try {
    cudaStream_t stream = nullptr;
    check(cudaStreamCreate(&stream), "cudaStreamCreate");
    const int64_t cases = static_cast<int64_t>(lengths.size());
    const int64_t runs = (cases + s.batch - 1) / s.batch;
    std::printf("%s: %lld kv_lens cases over %lld run(s) of %lld sequence(s), %lld split(s), seed %llu; rows of kv "
                "heads 0-%lld of %lld compared\n",
                spec.name.c_str(), static_cast<long long>(cases), static_cast<long long>(runs),
                static_cast<long long>(s.batch), static_cast<long long>(splits), static_cast<unsigned long long>(seed),
                static_cast<long long>(kv_heads - 1), static_cast<long long>(s.kv_heads));

    for (int64_t run = 0; run < runs; ++run) {
      std::vector<int32_t> kv_lens(static_cast<std::size_t>(s.batch));
      for (int64_t b = 0; b < s.batch; ++b)
        kv_lens[static_cast<std::size_t>(b)] = lengths[static_cast<std::size_t>((run * s.batch + b) % cases)];
      DecodeInputs in = decode_verification_inputs(spec, kv_lens, seed + static_cast<uint64_t>(run));
      const AttentionOutputs reference = dense_decode(spec, in);
      poison_stale_values(spec, in);

      DeviceInput q(encode(in.q, spec.dtype)), k(encode(in.k, spec.dtype)), v(encode(in.v, spec.dtype));
      DeviceInput lens(in.kv_lens), table(in.page_table), sinks(in.sinks);
      GuardedBuffer out(bytes_of<uint16_t>(s.batch * s.q_heads * s.q_len * dv));
      GuardedBuffer lse(bytes_of<float>(spec.lse ? s.batch * s.q_heads * s.q_len : 0));
      GuardedBuffer out_s(bytes_of<float>(splits > 1 ? groups * splits * rows * dv : 0));
      GuardedBuffer lse_s(bytes_of<float>(splits > 1 ? groups * splits * rows : 0));
      DecodeDeviceTensors t;
      t.q = q.data;
      t.k = k.data;
      t.v = v.data;
      t.kv_lens = static_cast<const int32_t*>(lens.data);
      t.page_table = spec.decode->paged() ? static_cast<const int32_t*>(table.data) : nullptr;
      t.sinks = spec.sinks ? static_cast<const float*>(sinks.data) : nullptr;
      t.out = out.data();
      t.lse = spec.lse ? static_cast<float*>(lse.data()) : nullptr;
      t.out_s = splits > 1 ? static_cast<float*>(out_s.data()) : nullptr;
      t.lse_s = splits > 1 ? static_cast<float*>(lse_s.data()) : nullptr;
      const std::string refused = launch(t, stream, false);
      if (!refused.empty()) {
        std::printf("FAIL: the launcher refused: %s\n", refused.c_str());
        return 1;
      }
      check(cudaStreamSynchronize(stream), "the decode kernel");
      const std::size_t damage = out.guard_damage() + lse.guard_damage() + out_s.guard_damage() + lse_s.guard_damage();
      guard_damage += damage;
      if (damage) {
        std::printf("FAIL: writes outside the outputs: %zu guard bytes changed\n", damage);
        failed = true;
      }
      const Comparison c = compare_sampled(spec, kv_heads, out, lse, reference);
      worst.add(c, tolerance);
      std::string text;
      for (int32_t n : kv_lens) text += (text.empty() ? "" : " ") + std::to_string(n);
      std::printf("  run %lld, kv_lens [%s]: out error %.3g, lse error %.3g%s\n", static_cast<long long>(run),
                  text.c_str(), c.out_error, c.lse_error, c.within(tolerance) ? "" : "  <- outside the tolerance");
    }

    if (splits > 1) {
      // The combine alone, on partials no kernel run produces this plainly: splits that kept
      // nothing (-inf, out 0), rows no split kept, and lse values in [90, 100), past exp's f32
      // overflow at 88.7 (a combine without the max subtraction overflows), with the spec's sinks.
      SplitPartials partials{groups * rows, splits, dv, {}, {}, {}};
      Lcg random{seed * 0x9e3779b97f4a7c15ull + 1};
      const double minus_inf = -std::numeric_limits<double>::infinity();
      for (int64_t row = 0; row < partials.rows; ++row)
        for (int64_t part = 0; part < splits; ++part) {
          const bool empty = row % 7 == 0 || (row + part) % 3 == 0;
          partials.lse.push_back(empty ? minus_inf : round_to_dtype(90 + 10 * random.unit(), DType::kFloat32));
          for (int64_t c = 0; c < dv; ++c)
            partials.out.push_back(empty ? 0.0 : round_to_dtype(2 * random.unit() - 1, DType::kFloat32));
        }
      const DecodeInputs in =
          decode_verification_inputs(spec, std::vector<int32_t>(static_cast<std::size_t>(s.batch), int32_t(s.q_len)), seed);
      if (spec.sinks)
        for (int64_t row = 0; row < partials.rows; ++row) {
          const int64_t kv_head = row / rows % s.kv_heads;
          partials.sinks.push_back(in.sinks[static_cast<std::size_t>(kv_head * s.group() + row % rows / s.q_len)]);
        }
      const AttentionOutputs expected_all = dense_combine(partials);
      // [group][row][split] -> the kernel's [group][split][row].
      std::vector<float> out_s_host(static_cast<std::size_t>(groups * splits * rows * dv));
      std::vector<float> lse_s_host(static_cast<std::size_t>(groups * splits * rows));
      for (int64_t g = 0; g < groups; ++g)
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t part = 0; part < splits; ++part) {
            const std::size_t from = static_cast<std::size_t>((g * rows + r) * splits + part);
            const std::size_t to = static_cast<std::size_t>((g * splits + part) * rows + r);
            lse_s_host[to] = static_cast<float>(partials.lse[from]);
            for (int64_t c = 0; c < dv; ++c)
              out_s_host[to * static_cast<std::size_t>(dv) + static_cast<std::size_t>(c)] =
                  static_cast<float>(partials.out[from * static_cast<std::size_t>(dv) + static_cast<std::size_t>(c)]);
          }
      DeviceInput out_s(out_s_host), lse_s(lse_s_host), sinks(in.sinks);
      GuardedBuffer out(bytes_of<uint16_t>(groups * rows * dv));
      GuardedBuffer lse(bytes_of<float>(spec.lse ? groups * rows : 0));
      DecodeDeviceTensors t;
      t.sinks = spec.sinks ? static_cast<const float*>(sinks.data) : nullptr;
      t.out = out.data();
      t.lse = spec.lse ? static_cast<float*>(lse.data()) : nullptr;
      t.out_s = static_cast<float*>(out_s.data);
      t.lse_s = static_cast<float*>(lse_s.data);
      const std::string refused = launch(t, stream, true);
      if (!refused.empty()) {
        std::printf("FAIL: the launcher refused the combine: %s\n", refused.c_str());
        return 1;
      }
      check(cudaStreamSynchronize(stream), "the combine kernel");
      const Comparison c = compare_sampled(spec, kv_heads, out, lse, expected_all);
      worst.add(c, tolerance);
      combine_out_error = c.out_error;
      combine_lse_error = c.lse_error;
      std::printf("  the combine alone (lse_s in [90, 100), empty splits and rows): out error %.3g, lse error %.3g%s\n",
                  c.out_error, c.lse_error, c.within(tolerance) ? "" : "  <- outside the tolerance");
    }
    check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  } catch (const CudaError& e) {
    std::printf("FAIL: %s\n", e.what.c_str());
    return 1;
  }
  std::printf("worst out error %.3g (tolerance %.3g), worst lse error %.3g (tolerance %.3g)\n", worst.out,
              tolerance.out_relative, worst.lse, tolerance.lse_absolute);
  const bool pass = worst.passed && !failed;
  std::printf("%s\n", pass ? "PASS" : "FAIL");
  if (!options.receipt_path.empty()) {
    Json receipt = {{"spec", spec.source},
                    {"kernel", kernel_symbol(spec.name, "sm90a")},
                    {"command", options.command},
                    {"seed", seed},
                    {"check", {{"kv_lens_cases", lengths},
                               {"kv_heads_checked", kv_heads},
                               {"kv_heads_total", s.kv_heads},
                               {"out_error", worst.out},
                               {"out_tolerance", tolerance.out_relative},
                               {"lse_error", spec.lse ? Json(worst.lse) : Json()},
                               {"lse_tolerance", tolerance.lse_absolute},
                               {"guard_bytes_changed", guard_damage}}},
                    {"passed", pass}};
    if (splits > 1)
      receipt["check"]["combine_alone"] = {{"out_error", combine_out_error},
                                           {"lse_error", spec.lse ? Json(combine_lse_error) : Json()}};
    std::ofstream file(options.receipt_path);
    file << receipt.dump(2) << "\n";
    if (!file) {
      std::printf("FAIL: cannot write the receipt %s\n", options.receipt_path.c_str());
      return 1;
    }
  }
  return pass ? 0 : 1;
}

}  // namespace kgen::sm90a
