#include "targets/cuda/forward_plan.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "kernel_names.h"
#include "mask_printers.h"
#include "memory_budget.h"
#include "targets/cuda/cuda_target.h"
#include "targets/cuda/source_text.h"
#include "targets/cuda/tile_tables.h"

namespace kgen {
namespace {

// The spec's optional operands (source_text.h, PointerOperands).
Json optional_operands(const Spec& spec, bool checked) {
  PointerOperands operands(checked);
  if (spec.lse) operands.add("lse", "float*", "float", "[batch][q_heads][q_len], contiguous; natural log, -inf on empty rows");
  if (spec.segment_ids) {
    operands.add("q_segment_ids", "const int32_t*", "int32_t", "[batch][q_len], contiguous");
    operands.add("kv_segment_ids", "const int32_t*", "int32_t", "[batch][kv_len], contiguous");
  }
  if (spec.sinks) operands.add("sinks", "const float*", "float", "[q_heads]: one extra logit per head, with no value row");
  if (spec.segment_ids)
    operands.add("document_tiles", "int32_t*", "int32_t",
                 "kDocumentTilesInts of workspace: each launch rewrites it (one per launch in flight)");
  return operands.json();
}

}  // namespace

CudaMaskTable cuda_mask_table(const HeadMasks& masks, const KvBlockLists& lists) {
  const TileShape& tiles = lists.tiles;
  CudaMaskTable table;
  table.words_per_row = (tiles.block_kv + 31) / 32;
  const int64_t block_words = tiles.block_q * table.words_per_row;
  std::map<std::vector<uint32_t>, int32_t> ids;
  const int64_t q_blocks = tiles.q_blocks();
  for (int64_t r = 0; r < lists.rows; ++r) {
    const Mask& mask = masks.of_head(r);  // rows > 1 only when every head has its own row
    for (int64_t q = 0; q < q_blocks; ++q) {
      const std::size_t list = static_cast<std::size_t>(r * q_blocks + q);
      const std::vector<int32_t>& partial = lists.partial[list];
      std::vector<std::vector<uint32_t>> blocks(partial.size(), std::vector<uint32_t>(static_cast<std::size_t>(block_words), 0));
      for (int64_t row = 0; row < tiles.block_q; ++row) {
        const int64_t i = q * tiles.block_q + row;
        if (i >= tiles.q_len || partial.empty()) break;
        const IntervalSet allowed = mask.row(i, tiles.kv_len);
        for (std::size_t p = 0; p < partial.size(); ++p) {
          const int64_t first = int64_t{partial[p]} * tiles.block_kv;
          for (const Interval& run : intersect(allowed, clipped_interval(first, first + tiles.block_kv, tiles.kv_len)))
            for (int64_t j = run.begin; j < run.end; ++j) {
              const int64_t column = j - first;
              blocks[p][static_cast<std::size_t>(row * table.words_per_row + column / 32)] |= uint32_t{1} << (column % 32);
            }
        }
      }
      for (std::vector<uint32_t>& block : blocks) {
        auto [it, inserted] = ids.emplace(std::move(block), static_cast<int32_t>(table.blocks));
        if (inserted) {
          table.bits.insert(table.bits.end(), it->first.begin(), it->first.end());
          ++table.blocks;
          if (static_cast<int64_t>(table.bits.size()) > kCudaMaxMaskWords) {
            table.too_large = true;  // check_tiling refuses the tiling; stop here
            return table;
          }
        }
        table.tile_block.push_back(it->second);
      }
      table.tile_block.insert(table.tile_block.end(), lists.full[list].size(), -1);
    }
  }
  return table;
}

int64_t cuda_tile_entries(const KvBlockLists& lists) {
  int64_t entries = 0;
  for (std::size_t list = 0; list < lists.partial.size(); ++list)
    entries += static_cast<int64_t>(lists.partial[list].size() + lists.full[list].size());
  return entries;
}

void add_forward_table_rules(const Spec& spec, const Tiling& tiling, TilingRules& rules) {
  const KvBlockLists lists = build_kv_block_lists(spec.masks, spec.shape.q_heads,
                                                  gpu_tile_shape(spec, gpu_tiles(tiling)));
  const int64_t entries = cuda_tile_entries(lists);
  const std::string blocks = std::to_string(tiling.block_kv) + " with block_q " + std::to_string(tiling.block_q);
  rules.at_most("block_q", entries, kCudaMaxTileEntries,
                std::to_string(tiling.block_q) + " with block_kv " + std::to_string(tiling.block_kv) + " (" +
                    std::to_string(entries) + " live tiles in the block plan)",
                "tiles whose block plan lists at most " + std::to_string(kCudaMaxTileEntries) +
                    " live tiles (the tables are source text of the generated kernel)");
  if (partial_tile_mask(spec.masks, lists) == PartialTileMask::kBitmask)
    rules.require(!cuda_mask_table(spec.masks, lists).too_large, "block_kv",
                  blocks + " (more than " + std::to_string(kCudaMaxMaskWords * 4 / (1 << 20)) +
                      " MiB of distinct partial-tile bits)",
                  "tiles whose distinct partial blocks fit the mask table");
}

int64_t cuda_products_per_tile(int64_t head_dim, int64_t block_kv) { return head_dim / 16 + block_kv / 16; }

int64_t cuda_tma_boxes_per_tile(int64_t features, DType dtype) {
  constexpr int64_t kSwizzleBytes = 128;
  return (features * dtype_bytes(dtype) + kSwizzleBytes - 1) / kSwizzleBytes;
}

void promise_whole_tile_loads(KernelPlan& kernel, const Spec& spec) {
  if (kernel.schedule.is_null()) return;
  kernel.schedule["max_tma_per_k_tile"] = cuda_tma_boxes_per_tile(spec.shape.head_dim, spec.dtype);
  kernel.schedule["max_tma_per_v_tile"] = cuda_tma_boxes_per_tile(spec.shape.head_dim_v, spec.dtype);
}

KernelPlan plan_cuda_forward(const Spec& spec, const GpuTarget& gpu, const CudaDevice& device, int64_t threads,
                             int64_t shared_bytes) {
  const Shape& s = spec.shape;
  const TileShape tiles = gpu_tile_shape(spec, gpu);
  const KvBlockLists lists = build_kv_block_lists(spec.masks, s.q_heads, tiles);
  const int64_t q_blocks = tiles.q_blocks();
  const int64_t list_count = lists.rows * q_blocks;
  const std::string symbol = kernel_symbol(spec.name, device.target);

  // The tile lists, flattened: per list its partial kv blocks, then its full ones. Launch
  // order: the q blocks with the most live tiles (over all plan rows) first.
  const FlatTileLists flat = flatten_tile_lists(lists.partial, lists.full);
  std::vector<int64_t> live_per_q_block(static_cast<std::size_t>(q_blocks), 0);
  for (int64_t list = 0; list < list_count; ++list)
    live_per_q_block[static_cast<std::size_t>(list % q_blocks)] += flat.size(static_cast<std::size_t>(list));
  const std::vector<int64_t> order = heaviest_first(live_per_q_block);

  const PartialTileMask partial_mask = partial_tile_mask(spec.masks, lists);
  const bool predicate = partial_mask == PartialTileMask::kPredicate;
  const bool bitmask = partial_mask == PartialTileMask::kBitmask;
  const bool kv_tail = s.kv_len % gpu.block_kv != 0;
  const double log2e = 1.4426950408889634;

  Json context = {
      {"symbol", symbol},
      {"header_file", generated_file_name(spec.name, device.target, "h")},
      {"dtype", dtype_name(spec.dtype)},
      {"element_type", dtype_info(spec.dtype).cutlass_type},
      {"batch", s.batch},
      {"q_heads", s.q_heads},
      {"kv_heads", s.kv_heads},
      {"group", s.group()},
      {"q_len", s.q_len},
      {"kv_len", s.kv_len},
      {"head_dim", s.head_dim},
      {"head_dim_v", s.head_dim_v},
      {"block_q", gpu.block_q},
      {"block_kv", gpu.block_kv},
      {"q_blocks", q_blocks},
      {"kv_blocks", tiles.kv_blocks()},
      {"threads", threads},
      {"stages", kGpuKvStages},
      {"plan_rows", lists.rows},
      {"live_tiles", lists.live_tiles_per_batch},
      {"total_tiles", lists.total_tiles_per_batch},
      {"smem_budget", shared_bytes},
      {"mask_summary", spec.mask_summary},
      {"mask_strategy", mask_strategy(partial_mask, spec.segment_ids, "bitmask")},
      {"softcap", spec.softcap.has_value()},
      {"score_domain", spec.softcap ? "tanh(scale * q.k / softcap)" : "q.k, unscaled"},
      {"exp2_scale", cuda_float_literal(spec.softcap ? *spec.softcap * log2e : spec.scale * log2e)},
      // The runtime's policies (runtime/cuda/score_mods.cuh, masks.cuh).
      {"score_mod", spec.softcap ? "kgen::cuda::Softcap<Config>" : "kgen::cuda::NoScoreMod"},
      {"mask_policy", cuda_mask_policy(partial_mask)},
      {"segment_mask", cuda_segment_mask_policy(spec.segment_ids)},
      {"lse", spec.lse ? "true" : "false"},
      {"sinks", spec.sinks ? "true" : "false"},
      {"operands", optional_operands(spec, true)},
      {"predicate_mask", predicate},
      {"bitmask", bitmask},
      {"stride_alignment", 16 / dtype_bytes(spec.dtype)},
      // The launch (templates/cuda/forward/launch.cu.tmpl).
      {"device", device.device},
      {"device_major", device.major},
      {"device_minor", device.minor},
      // The block plan's tables.
      {"lists", list_count},
      {"lists_plus_one", list_count + 1},
      {"tile_entries", static_cast<int64_t>(flat.entries.size())},
      {"tile_begin", number_list(flat.begin)},
      {"tile_partial_count", number_list(flat.partial_count)},
      {"tile_kv_size", std::max<int64_t>(1, static_cast<int64_t>(flat.entries.size()))},
      {"tile_kv", flat.entries.empty() ? std::string("0") : number_list(flat.entries)},
      {"q_block_order", number_list(order)},
      {"document_skips", spec.segment_ids},
  };
  if (spec.softcap) context["tanh_scale"] = cuda_float_literal(spec.scale / *spec.softcap);
  if (predicate) {
    const std::optional<int64_t> tail = kv_tail ? std::optional<int64_t>(s.kv_len) : std::nullopt;
    context["mask_predicate"] = mask_cpp_expression(lower_mask(spec.masks.unique.front(), tail));
    context["kv_tail"] = kv_tail;
  }
  if (bitmask) {
    const CudaMaskTable table = cuda_mask_table(spec.masks, lists);
    context["mask_words"] = table.words_per_row;
    context["mask_blocks"] = table.blocks;
    context["mask_bits_size"] = static_cast<int64_t>(table.bits.size());
    context["mask_bits"] = hex_number_list(table.bits);
    context["tile_mask_index"] = number_list(table.tile_block);
  }

  Json header = {
      {"symbol", symbol},
      {"kernel_file", generated_file_name(spec.name, device.target, "cu")},
      {"architecture", device.architecture},
      {"device_major", device.major},
      {"device_minor", device.minor},
      {"group", s.group()},
      {"score_formula", score_formula(spec)},
      {"mask_summary", spec.mask_summary},
      {"batch", s.batch},
      {"q_heads", s.q_heads},
      {"kv_heads", s.kv_heads},
      {"q_len", s.q_len},
      {"kv_len", s.kv_len},
      {"head_dim", s.head_dim},
      {"head_dim_v", s.head_dim_v},
      {"dtype", dtype_name(spec.dtype)},
      {"cuda_type", dtype_info(spec.dtype).cuda_spelling},
      {"stride_alignment", 16 / dtype_bytes(spec.dtype)},
      {"operands", optional_operands(spec, false)},
      // The pre-pass's workspace (runtime/cuda/document_tiles.cuh): per batch row three counts
      // per list, then every entry of the lists.
      {"document_tiles_ints",
       spec.segment_ids ? s.batch * (3 * list_count + static_cast<int64_t>(flat.entries.size())) : 0},
  };

  // What the kernel file promises, checked by kgen audit against what Clang sees
  // (docs/audit.md): the template declares exactly this kernel and launches it with
  // sizeof(SharedStorage), which its static_assert holds to the budget. The launch is the
  // one the kernel is built for: one CTA per (batch, head) and q block (the kernel decodes
  // blockIdx that way), `threads` threads, the same number as its __launch_bounds__.
  const Json grid = {s.batch * s.q_heads, q_blocks, 1};
  context["grid"] = "kBatch * kQHeads, Config::kQBlocks, 1";  // as the interface's grid
  context["persistent"] = false;
  const Json block = {threads, 1, 1};
  Json interface = {{"entry_points",
                     {{{"name", "kgen::" + symbol + "::forward_kernel"},
                       {"params", {{{"name", "params"}, {"type", "Params const"}, {"grid_constant", true}}}},
                       {"launch_bounds", {{"max_threads", threads}, {"min_blocks", 1}}},
                       {"launch", {{"grid", grid}, {"block", block}}},
                       {"dynamic_smem_bytes", shared_bytes}}}}};
  if (spec.segment_ids)  // its pre-pass: one CTA of 128 threads per (list, batch row)
    interface["entry_points"].push_back(
        {{"name", "kgen::" + symbol + "::document_tiles_kernel"},
         {"params", {{{"name", "params"}, {"type", "Params const"}, {"grid_constant", true}}}},
         {"launch_bounds", {{"max_threads", 128}, {"min_blocks", 1}}},
         {"launch", {{"grid", Json::array({list_count, s.batch, 1})}, {"block", Json::array({128, 1, 1})}}},
         {"dynamic_smem_bytes", 0}});

  KernelPlan kernel;
  kernel.target = device.target;
  kernel.extension = "cu";
  kernel.symbol = symbol;
  kernel.context = std::move(context);
  kernel.interface = std::move(interface);
  if (lists.live_tiles_per_batch > 0)
    kernel.schedule = {{"mma_per_iteration", cuda_products_per_tile(s.head_dim, gpu.block_kv)}};
  promise_whole_tile_loads(kernel, spec);
  kernel.extra_files.push_back({"cuda/forward/launcher.h.tmpl", "h", "launcher", std::move(header)});
  return kernel;
}

}  // namespace kgen
