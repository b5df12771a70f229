#include "harness.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include "compare.h"
#include "device_buffers.h"
#include "gpu_timing.h"
#include "dense_reference.h"
#include "document_tiles_check.h"
#include "dtype_rounding.h"
#include "json_fields.h"
#include "kernel_names.h"
#include "verification_inputs.h"
#include "reference_slices.h"

namespace kgen::sm90a {

int run_harness(const Spec& spec, const Launch& launch, const HarnessOptions& options) {
  const Shape& s = spec.shape;
  try {
    int device = 0;
    cudaDeviceProp properties{};
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaGetDeviceProperties(&properties, device), "cudaGetDeviceProperties");
    std::printf("%s on %s (%d SMs), seed %llu\n", spec.name.c_str(), properties.name, properties.multiProcessorCount,
                static_cast<unsigned long long>(options.seed));
    int driver = 0, runtime = 0;
    check(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
    check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
    Json receipt = {{"spec", spec.source},
                    {"kernel", kernel_symbol(spec.name, options.target)},
                    {"command", options.command},
                    {"device", {{"name", properties.name},
                                {"multiprocessors", properties.multiProcessorCount},
                                {"compute_capability", std::to_string(properties.major) + "." + std::to_string(properties.minor)},
                                {"cuda_driver", driver},
                                {"cuda_runtime", runtime}}},
                    {"seed", options.seed}};

    AttentionInputs inputs = verification_inputs(spec, options.seed);
    if (spec.segment_ids && options.document_length > 0) {
      for (std::size_t i = 0; i < inputs.q_segment_ids.size(); ++i)
        inputs.q_segment_ids[i] = static_cast<int32_t>(int64_t(i % s.q_len) / options.document_length);
      for (std::size_t j = 0; j < inputs.kv_segment_ids.size(); ++j)
        inputs.kv_segment_ids[j] = static_cast<int32_t>(int64_t(j % s.kv_len) / options.document_length);
    }
    DeviceInput q(encode(inputs.q, spec.dtype)), k(encode(inputs.k, spec.dtype)), v(encode(inputs.v, spec.dtype));
    const std::size_t element = sizeof(uint16_t);
    GuardedBuffer out(static_cast<std::size_t>(s.batch * s.q_heads * s.q_len * s.head_dim_v) * element);
    GuardedBuffer lse(spec.lse ? static_cast<std::size_t>(s.batch * s.q_heads * s.q_len) * sizeof(float) : 16);
    DeviceInput q_ids(inputs.q_segment_ids), kv_ids(inputs.kv_segment_ids), sinks(inputs.sinks);
    // The document pre-pass's workspace at the launcher's size, poisoned: every int it must
    // write is checked after the run, against the host's layout and rule.
    const DocumentTilesExpected documents =
        spec.segment_ids ? expected_document_tiles(spec, options.target, inputs.q_segment_ids, inputs.kv_segment_ids)
                         : DocumentTilesExpected{};
    DeviceInput document_tiles(
        std::vector<int32_t>(static_cast<std::size_t>(options.document_tiles_ints), kDocumentTilesPoison));

    DeviceTensors tensors;
    tensors.q = q.data;
    tensors.k = k.data;
    tensors.v = v.data;
    tensors.out = out.data();
    tensors.lse = spec.lse ? static_cast<float*>(lse.data()) : nullptr;
    tensors.q_segment_ids = spec.segment_ids ? static_cast<const int32_t*>(q_ids.data) : nullptr;
    tensors.kv_segment_ids = spec.segment_ids ? static_cast<const int32_t*>(kv_ids.data) : nullptr;
    tensors.sinks = spec.sinks ? static_cast<const float*>(sinks.data) : nullptr;
    tensors.document_tiles = spec.segment_ids ? static_cast<int32_t*>(document_tiles.data) : nullptr;

    cudaStream_t stream = nullptr;
    check(cudaStreamCreate(&stream), "cudaStreamCreate");
    const std::string launch_error = launch(tensors, stream);
    if (!launch_error.empty()) {
      std::printf("FAIL: the launcher refused: %s\n", launch_error.c_str());
      return 1;
    }
    check(cudaStreamSynchronize(stream), "the kernel");

    bool pass = true;
    const std::size_t out_damage = out.guard_damage(), lse_damage = spec.lse ? lse.guard_damage() : 0;
    if (out_damage || lse_damage) {
      std::printf("FAIL: writes outside the outputs: %zu guard bytes of out, %zu of lse changed\n", out_damage, lse_damage);
      pass = false;
    }
    if (spec.segment_ids) {
      std::vector<int32_t> written(documents.ints.size());
      check(cudaMemcpy(written.data(), document_tiles.data, written.size() * sizeof(int32_t), cudaMemcpyDeviceToHost),
            "cudaMemcpy (document tiles)");
      const std::string difference = compare_document_tiles(documents, written);
      const DocumentTileCounts& c = documents.counts;
      std::printf("document tiles: the CTAs walk %lld of the plan's %lld (%lld across documents skipped), %lld of "
                  "them inside one document without the id comparison\n",
                  static_cast<long long>(c.walked), static_cast<long long>(c.planned), static_cast<long long>(c.dead()),
                  static_cast<long long>(c.one_document));
      if (!difference.empty()) {
        std::printf("FAIL: the document pre-pass's lists differ from the rule's: %s\n", difference.c_str());
        pass = false;
      }
      receipt["document_tiles"] = {{"planned", c.planned},
                                   {"walked", c.walked},
                                   {"dead", c.dead()},
                                   {"one_document", c.one_document},
                                   {"lists_match_the_rule", difference.empty()}};
    }
    const std::vector<uint16_t> out_bits = out.read<uint16_t>();
    AttentionOutputs actual;
    actual.out = decode(out_bits, spec.dtype);
    if (spec.lse) {
      for (float value : lse.read<float>()) actual.lse.push_back(value);
    }

    // The reference, slice by slice, in parallel: every slice, the first max_slices, or, for a
    // sampled persistent grid, the slices of the q blocks the kernel touched, on those rows.
    std::vector<SliceId> slices = all_slices(spec);
    const std::size_t total_slices = slices.size();
    if (options.max_slices >= 0 && static_cast<int64_t>(slices.size()) > options.max_slices)
      slices.resize(static_cast<std::size_t>(options.max_slices));
    const bool sampled = options.touched_blocks_rows > 0;
    const int64_t block_rows = options.touched_blocks_rows;
    const int64_t q_blocks = sampled ? (s.q_len + block_rows - 1) / block_rows : 0;
    std::vector<char> block_touched(static_cast<std::size_t>(s.batch * s.q_heads * q_blocks), 0);
    std::size_t blocks_checked = 0;
    if (sampled) {
      constexpr uint16_t kPoison16 = uint16_t(kPoisonByte) * 0x0101;
      const int64_t width = s.head_dim_v;
      const std::vector<QBlock> blocks = touched_q_blocks(spec, block_rows, [&](int64_t row) {
        const auto first = out_bits.begin() + row * width;
        return std::any_of(first, first + width, [](uint16_t bits) { return bits != kPoison16; });
      });
      std::vector<SliceId> touched_slices;
      for (const QBlock& b : blocks) {
        block_touched[static_cast<std::size_t>((b.batch * s.q_heads + b.head) * q_blocks + b.q_block)] = 1;
        const SliceId slice{b.batch, b.head / s.group()};
        if (touched_slices.empty() || touched_slices.back().batch != slice.batch ||
            touched_slices.back().kv_head != slice.kv_head)
          touched_slices.push_back(slice);
      }
      slices = touched_slices;
      blocks_checked = blocks.size();
    }
    const int threads = options.threads > 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
    const Tolerance tolerance = tolerance_for(spec.dtype);
    std::atomic<std::size_t> next{0};
    std::mutex report_mutex;
    double worst_out = 0, worst_lse = 0;
    int failed_slices = 0;
    auto worker = [&]() {
      for (std::size_t index = next++; index < slices.size(); index = next++) {
        const SliceId& id = slices[index];
        const Spec sub = slice_spec(spec, id);
        // In a sampled run, the rows of the touched blocks (slice coordinates: a head of the group).
        const auto touched_row = [&](int64_t head, int64_t i) {
          const int64_t q_head = id.kv_head * s.group() + head;
          return block_touched[static_cast<std::size_t>((id.batch * s.q_heads + q_head) * q_blocks + i / block_rows)] != 0;
        };
        RowFilter only;
        if (sampled) only = [&](int64_t, int64_t head, int64_t i) { return touched_row(head, i); };
        AttentionOutputs reference = dense_attention(sub, slice_inputs(spec, inputs, id), only);
        if (!spec.lse) reference.lse.clear();
        AttentionOutputs got = slice_outputs(spec, actual, id);
        if (sampled) {
          reference = select_slice_rows(sub, reference, touched_row);
          got = select_slice_rows(sub, got, touched_row);
        }
        const Comparison c = compare_outputs(got, reference);
        std::lock_guard<std::mutex> lock(report_mutex);
        worst_out = std::max(worst_out, c.out_error);
        worst_lse = std::max(worst_lse, c.lse_error);
        if (!c.within(tolerance)) {
          ++failed_slices;
          std::printf("  slice batch %lld kv head %lld: out error %.3g (worst at %lld), lse error %.3g (worst at %lld)\n",
                      static_cast<long long>(id.batch), static_cast<long long>(id.kv_head), c.out_error,
                      static_cast<long long>(c.worst_out_index), c.lse_error, static_cast<long long>(c.worst_lse_index));
        }
      }
    };
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (std::thread& t : pool) t.join();
    if (sampled)
      std::printf("checked the %zu q blocks of %lld rows the sampled CTAs wrote, of %lld\n", blocks_checked,
                  static_cast<long long>(block_rows), static_cast<long long>(block_touched.size()));
    std::printf("checked %zu of %zu slices (batch x kv heads): worst out error %.3g (tolerance %.3g), worst lse "
                "error %.3g (tolerance %.3g)\n",
                slices.size(), total_slices, worst_out, tolerance.out_relative, worst_lse,
                tolerance.lse_absolute);
    if (failed_slices) {
      std::printf("FAIL: %d slice(s) outside the tolerances\n", failed_slices);
      pass = false;
    }
    receipt["check"] = {{"slices_checked", slices.size()},
                        {"slices_total", total_slices},
                        {"slices_failed", failed_slices},
                        {"out_error", worst_out},
                        {"out_tolerance", tolerance.out_relative},
                        {"lse_error", spec.lse ? Json(worst_lse) : Json()},
                        {"lse_tolerance", tolerance.lse_absolute},
                        {"guard_bytes_changed", out_damage + lse_damage}};
    if (sampled) {
      receipt["check"]["block_rows"] = block_rows;
      receipt["check"]["blocks_checked"] = blocks_checked;
      receipt["check"]["blocks_total"] = block_touched.size();
    }

    if (options.bench_iterations > 0) {
      const std::vector<float> ms =
          timed_runs_ms([&]() { launch(tensors, stream); }, options.bench_iterations, stream);
      const double median = ms[ms.size() / 2];
      const double flops = 2.0 * kgen::kept_pairs(spec, inputs.q_segment_ids, inputs.kv_segment_ids) *
                           double(s.head_dim + s.head_dim_v);
      std::printf("time: median %.4f ms of %d runs (min %.4f); %.1f effective TFLOP/s (kept pairs only)\n", median,
                  options.bench_iterations, double(ms.front()), flops / (median * 1e-3) / 1e12);
      receipt["time"] = {{"runs", options.bench_iterations},
                         {"median_ms", median},
                         {"min_ms", double(ms.front())},
                         {"effective_tflops", flops / (median * 1e-3) / 1e12}};
    }
    cudaStreamDestroy(stream);
    receipt["passed"] = pass;
    if (!options.receipt_path.empty()) {
      std::ofstream file(options.receipt_path);
      file << receipt.dump(2) << "\n";
      if (!file) {
        std::printf("FAIL: cannot write the receipt %s\n", options.receipt_path.c_str());
        pass = false;
      }
    }
    std::printf("%s\n", pass ? "PASS" : "FAIL");
    return pass ? 0 : 1;
  } catch (const CudaError& e) {
    std::printf("FAIL: %s\n", e.what.c_str());
    return 1;
  }
}

}  // namespace kgen::sm90a
