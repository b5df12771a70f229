#include "backward_harness.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <utility>
#include <vector>

#include "compare.h"
#include "dense_backward.h"
#include "device_buffers.h"
#include "gpu_timing.h"
#include "json_fields.h"
#include "kernel_names.h"
#include "verification_inputs.h"

namespace kgen::sm90a {

int run_backward_harness(const Spec& spec, const Launch& forward, const BackwardLaunch& backward,
                         std::size_t workspace_bytes, int64_t document_tiles_ints,
                         const BackwardHarnessOptions& options) {
  const Shape& s = spec.shape;
  try {
    cudaDeviceProp properties{};
    int device = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaGetDeviceProperties(&properties, device), "cudaGetDeviceProperties");
    std::printf("%s backward on %s, seed %llu\n", spec.name.c_str(), properties.name,
                static_cast<unsigned long long>(options.seed));
    Json receipt = {{"spec", spec.source},
                    {"kernel", kernel_symbol(spec.name, "sm90a", "backward")},
                    {"command", options.command},
                    {"device", properties.name},
                    {"seed", options.seed}};

    const AttentionInputs inputs = verification_inputs(spec, options.seed);
    const std::vector<double> dout_values = verification_dout(spec, options.seed);
    const std::size_t element = sizeof(uint16_t);
    const std::size_t q_rows = static_cast<std::size_t>(s.batch * s.q_heads * s.q_len);
    const std::size_t kv_rows = static_cast<std::size_t>(s.batch * s.kv_heads * s.kv_len);
    DeviceInput q(encode(inputs.q, spec.dtype)), k(encode(inputs.k, spec.dtype)), v(encode(inputs.v, spec.dtype));
    DeviceInput dout(encode(dout_values, spec.dtype));
    DeviceInput q_ids(inputs.q_segment_ids), kv_ids(inputs.kv_segment_ids), sinks(inputs.sinks);
    GuardedBuffer out(q_rows * static_cast<std::size_t>(s.head_dim_v) * element);
    GuardedBuffer lse(q_rows * sizeof(float));
    GuardedBuffer dq(q_rows * static_cast<std::size_t>(s.head_dim) * element);
    GuardedBuffer dk(kv_rows * static_cast<std::size_t>(s.head_dim) * element);
    GuardedBuffer dv(kv_rows * static_cast<std::size_t>(s.head_dim_v) * element);
    GuardedBuffer dsinks(spec.sinks ? static_cast<std::size_t>(s.q_heads) * sizeof(float) : 16);
    GuardedBuffer workspace(workspace_bytes);  // poisoned: the kernels must not read it unwritten
    // The forward's document pre-pass workspace (the forward's own harness checks what it holds).
    DeviceInput document_tiles(
        std::vector<int32_t>(static_cast<std::size_t>(document_tiles_ints), kDocumentTilesPoison));

    DeviceTensors f;
    f.q = q.data;
    f.k = k.data;
    f.v = v.data;
    f.out = out.data();
    f.lse = static_cast<float*>(lse.data());
    f.q_segment_ids = spec.segment_ids ? static_cast<const int32_t*>(q_ids.data) : nullptr;
    f.kv_segment_ids = spec.segment_ids ? static_cast<const int32_t*>(kv_ids.data) : nullptr;
    f.sinks = spec.sinks ? static_cast<const float*>(sinks.data) : nullptr;
    f.document_tiles = spec.segment_ids ? static_cast<int32_t*>(document_tiles.data) : nullptr;
    BackwardTensors b;
    b.q = q.data;
    b.k = k.data;
    b.v = v.data;
    b.out = out.data();
    b.lse = static_cast<const float*>(lse.data());
    b.dout = dout.data;
    b.dq = dq.data();
    b.dk = dk.data();
    b.dv = dv.data();
    b.workspace = workspace.data();
    b.q_segment_ids = f.q_segment_ids;
    b.kv_segment_ids = f.kv_segment_ids;
    b.sinks = f.sinks;
    b.dsinks = spec.sinks ? static_cast<float*>(dsinks.data()) : nullptr;

    cudaStream_t stream = nullptr;
    check(cudaStreamCreate(&stream), "cudaStreamCreate");
    std::string error = forward(f, stream);
    if (error.empty()) error = backward(b, stream);
    if (!error.empty()) {
      std::printf("FAIL: a launcher refused: %s\n", error.c_str());
      return 1;
    }
    check(cudaStreamSynchronize(stream), "the kernels");

    bool pass = true;
    std::size_t damage = dq.guard_damage() + dk.guard_damage() + dv.guard_damage() + workspace.guard_damage();
    if (spec.sinks) damage += dsinks.guard_damage();
    if (damage) {
      std::printf("FAIL: writes outside the outputs: %zu guard bytes changed\n", damage);
      pass = false;
    }

    // The reference from the forward kernel's own residuals, on the sampled rows.
    BackwardResiduals residuals;
    residuals.out = decode(out.read<uint16_t>(), spec.dtype);
    for (float value : lse.read<float>()) residuals.lse.push_back(value);
    residuals.dout = dout_values;
    std::set<std::pair<int64_t, int64_t>> groups = {{0, 0}, {s.batch - 1, s.kv_heads - 1}};
    if (options.first_group_only) groups = {{0, 0}};
    auto sampled_q = [&](int64_t i) { return i % options.row_stride == 0 || i >= s.q_len - 64; };
    auto sampled_kv = [&](int64_t j) { return j % options.row_stride == 0 || j >= s.kv_len - 64; };
    GradientRows only;
    only.dq = [&](int64_t batch, int64_t h, int64_t i) {
      return groups.count({batch, h / s.group()}) && sampled_q(i);
    };
    only.dkv = [&](int64_t batch, int64_t g, int64_t j) { return groups.count({batch, g}) && sampled_kv(j); };
    // dsinks[h] sums over every batch and row; with the first group only, its heads of batch 0.
    only.dsinks = [&](int64_t batch, int64_t h) {
      return !options.first_group_only || (batch == 0 && h < s.group());
    };
    const AttentionGradients expected = dense_attention_backward(spec, inputs, residuals, only);

    const std::vector<double> dq_got = decode(dq.read<uint16_t>(), spec.dtype);
    const std::vector<double> dk_got = decode(dk.read<uint16_t>(), spec.dtype);
    const std::vector<double> dv_got = decode(dv.read<uint16_t>(), spec.dtype);
    std::vector<double> dq_a, dq_e, dk_a, dk_e, dv_a, dv_e;
    auto take = [](const std::vector<double>& got, const std::vector<double>& ref, int64_t row, int64_t width,
                   std::vector<double>& a, std::vector<double>& e) {
      for (int64_t c = 0; c < width; ++c) {
        a.push_back(got[static_cast<std::size_t>(row * width + c)]);
        e.push_back(ref[static_cast<std::size_t>(row * width + c)]);
      }
    };
    for (const auto& [batch, g] : groups) {
      for (int64_t h = g * s.group(); h < (g + 1) * s.group(); ++h)
        for (int64_t i = 0; i < s.q_len; ++i)
          if (sampled_q(i)) take(dq_got, expected.dq, (batch * s.q_heads + h) * s.q_len + i, s.head_dim, dq_a, dq_e);
      for (int64_t j = 0; j < s.kv_len; ++j)
        if (sampled_kv(j)) {
          const int64_t row = (batch * s.kv_heads + g) * s.kv_len + j;
          take(dk_got, expected.dk, row, s.head_dim, dk_a, dk_e);
          take(dv_got, expected.dv, row, s.head_dim_v, dv_a, dv_e);
        }
    }
    const double tolerance = backward_tolerance(spec.dtype);
    Json errors = {{"dq", relative_out_error(dq_a, dq_e)},
                   {"dk", relative_out_error(dk_a, dk_e)},
                   {"dv", relative_out_error(dv_a, dv_e)}};
    if (spec.sinks) {
      std::vector<double> got, want;
      const std::vector<float> values = dsinks.read<float>();
      const int64_t heads = options.first_group_only ? s.group() : s.q_heads;
      for (int64_t h = 0; h < heads; ++h) {
        got.push_back(values[static_cast<std::size_t>(h)]);
        want.push_back(expected.dsinks[static_cast<std::size_t>(h)]);
      }
      errors["dsinks"] = relative_out_error(got, want);
    }
    for (const auto& [name, value] : errors.items()) {
      const double e = value.get<double>();
      std::printf("  %s: relative error %.3g (tolerance %.3g)\n", name.c_str(), e, tolerance);
      if (!(e <= tolerance)) pass = false;
    }
    receipt["check"] = {{"groups_checked", groups.size()},
                        {"row_stride", options.row_stride},
                        {"errors", errors},
                        {"tolerance", tolerance},
                        {"guard_bytes_changed", damage}};

    if (options.bench_iterations > 0) {
      const std::vector<float> ms =
          timed_runs_ms([&]() { backward(b, stream); }, options.bench_iterations, stream);
      std::printf("backward time: median %.4f ms of %d runs (min %.4f)\n", double(ms[ms.size() / 2]),
                  options.bench_iterations, double(ms.front()));
      receipt["time"] = {{"runs", options.bench_iterations}, {"median_ms", ms[ms.size() / 2]}, {"min_ms", ms.front()}};
    }
    cudaStreamDestroy(stream);
    receipt["passed"] = pass;
    if (!options.receipt_path.empty()) {
      std::ofstream file(options.receipt_path);
      file << receipt.dump(2) << "\n";
      if (!file) pass = false;
    }
    std::printf("%s\n", pass ? "PASS" : "FAIL");
    return pass ? 0 : 1;
  } catch (const CudaError& e) {
    std::printf("FAIL: %s\n", e.what.c_str());
    return 1;
  }
}

}  // namespace kgen::sm90a
