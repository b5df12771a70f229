#include "targets/sm90a/backward_plan.h"

#include <algorithm>
#include <map>

#include "kernel_names.h"
#include "mask_printers.h"
#include "memory_budget.h"
#include "targets/cuda/cuda_target.h"
#include "targets/cuda/source_text.h"
#include "targets/cuda/tile_tables.h"
#include "targets/sm90a/kernel_plan.h"

namespace kgen {
namespace {

// The backward's operands beyond q, k, v, out, dout, lse, dq, dk, dv and the workspace
// (source_text.h, PointerOperands).
Json optional_backward_operands(const Spec& spec, bool checked) {
  PointerOperands operands(checked);
  if (spec.segment_ids) {
    operands.add("q_segment_ids", "const int32_t*", "int32_t", "[batch][q_len], contiguous: the forward's");
    operands.add("kv_segment_ids", "const int32_t*", "int32_t", "[batch][kv_len], contiguous: the forward's");
  }
  if (spec.sinks) {
    operands.add("sinks", "const float*", "float", "[q_heads]: the forward's sinks");
    operands.add("dsinks", "float*", "float", "[q_heads]: d loss / d sinks, overwritten (summed over batch and rows)");
  }
  return operands.json();
}

}  // namespace

std::optional<std::string> sm90a_backward_unsupported(const Spec& spec) {
  const int64_t d = spec.shape.head_dim, dv = spec.shape.head_dim_v;
  auto whole_groups = [](int64_t n) { return n % 64 == 0 && n <= 256; };
  if (whole_groups(d) && whole_groups(dv) && (d + dv <= 256 || (d >= 128 && dv >= 128))) return std::nullopt;
  return "head_dim " + std::to_string(d) + " with head_dim_v " + std::to_string(dv) +
         ": the sm90a backward gives each consumer warpgroup whole 64-column groups of dK and dV, "
         "split over at most two warpgroups per 64 kv rows: head_dim and head_dim_v multiples of "
         "64 up to 256, both at least 128 when their sum exceeds 256 (docs/sm90a-backward.md)";
}

Sm90aBackwardParts sm90a_backward_parts(const Shape& shape) {
  const int64_t d = shape.head_dim, dv = shape.head_dim_v;
  if (d + dv <= 256) return {1, d, dv};
  auto half_in_groups = [](int64_t n) { return (n / 64 + 1) / 2 * 64; };
  return {2, half_in_groups(d), half_in_groups(dv)};
}

int64_t sm90a_default_backward_block_kv(const Shape& shape) {
  return 128 / sm90a_backward_parts(shape).count;
}

QBlockLists transpose_block_lists(const KvBlockLists& lists) {
  QBlockLists out;
  out.tiles = lists.tiles;
  out.rows = lists.rows;
  const int64_t q_blocks = lists.tiles.q_blocks(), kv_blocks = lists.tiles.kv_blocks();
  out.partial.resize(static_cast<std::size_t>(lists.rows * kv_blocks));
  out.full.resize(out.partial.size());
  for (int64_t r = 0; r < lists.rows; ++r)
    for (int64_t q = 0; q < q_blocks; ++q) {
      const std::size_t list = static_cast<std::size_t>(r * q_blocks + q);
      for (int32_t c : lists.partial[list]) out.partial[static_cast<std::size_t>(r * kv_blocks + c)].push_back(static_cast<int32_t>(q));
      for (int32_t c : lists.full[list]) out.full[static_cast<std::size_t>(r * kv_blocks + c)].push_back(static_cast<int32_t>(q));
    }
  return out;
}

TransposedMaskTable transposed_mask_table(const HeadMasks& masks, const QBlockLists& lists) {
  const TileShape& tiles = lists.tiles;
  TransposedMaskTable table;
  table.words_per_row = (tiles.block_q + 31) / 32;
  const int64_t kv_blocks = tiles.kv_blocks();
  std::map<std::vector<uint32_t>, int32_t> ids;
  for (int64_t r = 0; r < lists.rows; ++r) {
    const Mask& mask = masks.of_head(r);  // rows > 1 only when every head has its own row
    for (int64_t c = 0; c < kv_blocks; ++c) {
      const std::size_t list = static_cast<std::size_t>(r * kv_blocks + c);
      const int64_t first = c * tiles.block_kv;
      for (int32_t q : lists.partial[list]) {
        std::vector<uint32_t> block(static_cast<std::size_t>(tiles.block_kv * table.words_per_row), 0);
        for (int64_t row = 0; row < tiles.block_q; ++row) {
          const int64_t i = q * tiles.block_q + row;
          if (i >= tiles.q_len) break;
          for (const Interval& run : intersect(mask.row(i, tiles.kv_len), clipped_interval(first, first + tiles.block_kv, tiles.kv_len)))
            for (int64_t j = run.begin; j < run.end; ++j)
              block[static_cast<std::size_t>((j - first) * table.words_per_row + row / 32)] |= uint32_t{1} << (row % 32);
        }
        auto [it, inserted] = ids.emplace(std::move(block), static_cast<int32_t>(table.blocks));
        if (inserted) {
          table.bits.insert(table.bits.end(), it->first.begin(), it->first.end());
          ++table.blocks;
        }
        table.entry_block.push_back(it->second);
      }
      table.entry_block.insert(table.entry_block.end(), lists.full[list].size(), -1);
    }
  }
  return table;
}

MemoryBudget sm90a_backward_smem_budget(const Spec& spec, const GpuTarget& target) {
  const int64_t e = dtype_bytes(spec.dtype);
  const int64_t d = spec.shape.head_dim, dv = spec.shape.head_dim_v;
  // Every consumer warpgroup stores its own dS^T tile, also the two sharing a kv slot's columns.
  const int64_t consumers_per_slot = sm90a_backward_parts(spec.shape).count;
  MemoryBudget budget;
  budget.items = {
      {"k tile (reused for the dK store)", target.block_kv * d * e},
      {"v tile (reused for the dV store)", target.block_kv * dv * e},
      {"q ring", kGpuKvStages * target.block_q * d * e},
      {"dout ring", kGpuKvStages * target.block_q * dv * e},
      {"dS tiles", consumers_per_slot * target.block_kv * target.block_q * e},
      {"mbarriers", 1024},
  };
  return budget;
}

int64_t sm90a_backward_workspace_bytes(const Spec& spec, const GpuTarget& tiles) {
  const Shape& s = spec.shape;
  const int64_t q_padded = gpu_tile_shape(spec, tiles).q_blocks() * tiles.block_q;
  return s.batch * s.q_heads * q_padded * (s.head_dim + 2) * int64_t{sizeof(float)};
}

KernelPlan plan_sm90a_backward_kernel(const Spec& spec, const GpuTarget& tiling) {
  const Shape& s = spec.shape;
  const TileShape tiles = gpu_tile_shape(spec, tiling);
  const KvBlockLists forward_lists = build_kv_block_lists(spec.masks, s.q_heads, tiles);
  const QBlockLists lists = transpose_block_lists(forward_lists);
  const int64_t q_blocks = tiles.q_blocks(), kv_blocks = tiles.kv_blocks();
  const int64_t list_count = lists.rows * kv_blocks;
  const int64_t q_padded = q_blocks * tiling.block_q;
  const Sm90aBackwardParts parts = sm90a_backward_parts(s);
  const int64_t kv_slots = tiling.block_kv / kRowsPerConsumerWarpgroup;
  const int64_t consumers = kv_slots * parts.count;
  const Sm90aRegisterSplit registers = sm90a_register_split(consumers);
  const int64_t threads = 128 * (consumers + 1);
  const int64_t shared_bytes = sm90a_backward_smem_budget(spec, tiling).total();
  const std::string symbol = kernel_symbol(spec.name, "sm90a", "backward");
  const int64_t workspace_bytes = sm90a_backward_workspace_bytes(spec, tiling);

  // The lists, flattened: per list its partial q blocks, then its full ones. Launch order:
  // the kv blocks with the most steps (over every plan row, as a CTA walks every q head of
  // its group) first.
  const FlatTileLists flat = flatten_tile_lists(lists.partial, lists.full);
  std::vector<int64_t> steps_per_kv_block(static_cast<std::size_t>(kv_blocks), 0);
  for (int64_t list = 0; list < list_count; ++list)
    steps_per_kv_block[static_cast<std::size_t>(list % kv_blocks)] += flat.size(static_cast<std::size_t>(list));
  const std::vector<int64_t> order = heaviest_first(steps_per_kv_block);

  const PartialTileMask partial_mask = partial_tile_mask(spec.masks, forward_lists);
  const bool predicate = partial_mask == PartialTileMask::kPredicate;
  const bool bitmask = partial_mask == PartialTileMask::kBitmask;
  const std::string letters = dtype_info(spec.dtype).wgmma_letters;
  auto atom = [&](int64_t n, const char* operands, const char* a_major, const char* b_major) {
    return "cute::SM90_64x" + std::to_string(n) + "x16_F32" + letters + "_" + operands + "<cute::GMMA::Major::" +
           a_major + ", cute::GMMA::Major::" + b_major + ">";
  };
  const double log2e = 1.4426950408889634;

  Json context = {
      {"symbol", symbol},
      {"header_file", generated_file_name(spec.name, "sm90a", "h", "backward")},
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
      {"block_q", tiling.block_q},
      {"block_kv", tiling.block_kv},
      {"q_blocks", q_blocks},
      {"kv_blocks", kv_blocks},
      {"q_padded", q_padded},
      {"kv_slots", kv_slots},
      {"dim_parts", parts.count},
      {"dk_width", parts.dk_width},
      {"dv_width", parts.dv_width},
      {"consumers", consumers},
      {"threads", threads},
      {"stages", kGpuKvStages},
      {"producer_registers", registers.producer},
      {"consumer_registers", registers.consumer},
      {"plan_rows", lists.rows},
      {"live_tiles", forward_lists.live_tiles_per_batch},
      {"total_tiles", forward_lists.total_tiles_per_batch},
      {"smem_budget", shared_bytes},
      {"mask_summary", spec.mask_summary},
      {"mask_strategy", mask_strategy(partial_mask, spec.segment_ids, "transposed bitmask")},
      {"mma_sdp", atom(tiling.block_q, "SS", "K", "K")},
      {"mma_dk", atom(parts.dk_width, "RS", "K", "MN")},
      {"mma_dv", atom(parts.dv_width, "RS", "K", "MN")},
      {"mma_dq", atom(64, "SS", "MN", "MN")},
      {"softcap", spec.softcap.has_value()},
      {"score_domain", spec.softcap ? "tanh(scale * q.k / softcap)" : "q.k, unscaled"},
      {"exp2_scale", cuda_float_literal(spec.softcap ? *spec.softcap * log2e : spec.scale * log2e)},
      {"scale", cuda_float_literal(spec.scale)},
      {"score_mod", spec.softcap ? "kgen::cuda::Softcap<Config>" : "kgen::cuda::NoScoreMod"},
      {"mask_policy", cuda_mask_policy(partial_mask)},
      {"segment_mask", cuda_segment_mask_policy(spec.segment_ids)},
      {"sinks", spec.sinks ? "true" : "false"},
      {"has_sinks", spec.sinks},
      {"operands", optional_backward_operands(spec, true)},
      {"predicate_mask", predicate},
      {"bitmask", bitmask},
      {"preprocess_blocks", s.batch * s.q_heads * q_padded / 4},
      {"postprocess_blocks", (s.batch * s.q_heads * s.q_len * s.head_dim / 2 + 255) / 256},
      // The transposed block plan's tables.
      {"lists", list_count},
      {"lists_plus_one", list_count + 1},
      {"step_entries", static_cast<int64_t>(flat.entries.size())},
      {"step_begin", number_list(flat.begin)},
      {"step_partial_count", number_list(flat.partial_count)},
      {"step_q_size", std::max<int64_t>(1, static_cast<int64_t>(flat.entries.size()))},
      {"step_q", flat.entries.empty() ? std::string("0") : number_list(flat.entries)},
      {"kv_block_order", number_list(order)},
  };
  if (spec.softcap) context["tanh_scale"] = cuda_float_literal(spec.scale / *spec.softcap);
  if (predicate) {
    const bool kv_tail = s.kv_len % tiling.block_kv != 0;
    const std::optional<int64_t> tail = kv_tail ? std::optional<int64_t>(s.kv_len) : std::nullopt;
    context["mask_predicate"] = mask_cpp_expression(lower_mask(spec.masks.unique.front(), tail));
    context["kv_tail"] = kv_tail;
  }
  if (bitmask) {
    const TransposedMaskTable table = transposed_mask_table(spec.masks, lists);
    context["mask_words"] = table.words_per_row;
    context["mask_blocks"] = table.blocks;
    context["mask_bits_size"] = static_cast<int64_t>(table.bits.size());
    context["mask_bits"] = hex_number_list(table.bits);
    context["step_mask_index"] = number_list(table.entry_block);
  }

  Json header = {
      {"symbol", symbol},
      {"kernel_file", generated_file_name(spec.name, "sm90a", "cu", "backward")},
      {"forward_symbol", kernel_symbol(spec.name, "sm90a")},
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
      {"workspace_bytes", workspace_bytes},
      {"sinks", spec.sinks},
      {"operands", optional_backward_operands(spec, false)},
  };

  // What the kernel file promises (docs/audit.md): three entry points, each launched once by
  // the launcher with constant sizes; only the main kernel uses dynamic shared memory.
  const Json params = {{{"name", "params"}, {"type", "Params const"}, {"grid_constant", true}}};
  auto entry_point = [&](const std::string& name, Json grid, int64_t block, int64_t smem) {
    return Json{{"name", "kgen::" + symbol + "::" + name},
                {"params", params},
                {"launch_bounds", {{"max_threads", block}, {"min_blocks", 1}}},
                {"launch", {{"grid", std::move(grid)}, {"block", {block, 1, 1}}}},
                {"dynamic_smem_bytes", smem}};
  };
  Json interface = {
      {"entry_points",
       {entry_point("preprocess_kernel", {context["preprocess_blocks"], 1, 1}, 128, 0),
        entry_point("backward_kernel", {s.batch * s.kv_heads, kv_blocks, 1}, threads, shared_bytes),
        entry_point("postprocess_kernel", {context["postprocess_blocks"], 1, 1}, 256, 0)}}};

  KernelPlan kernel;
  kernel.target = "sm90a";
  kernel.extension = "cu";
  kernel.template_path = "sm90a/backward/kernel.cu.tmpl";
  kernel.symbol = symbol;
  kernel.pass = "backward";
  kernel.context = std::move(context);
  kernel.interface = std::move(interface);
  kernel.extra_files.push_back({"sm90a/backward/launcher.h.tmpl", "h", "launcher", std::move(header)});
  return kernel;
}

}  // namespace kgen
