// The sm90a kernel plans (generator/targets/sm90a/kernel_plan.cc, backward_plan.cc,
// decode_plan.cc): the mask
// predicate they write into kernels, the bitmask tables of partial tiles (the backward's
// transposed), the tile lists and launch order, and the rules of the target
// (generator/targets/sm90a/target.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "block_plan.h"
#include "diagnostics.h"
#include "kernel_plans.h"
#include "targets/cuda/forward_plan.h"
#include "targets/sm90a/backward_plan.h"
#include "targets/sm90a/decode_plan.h"
#include "targets/sm90a/kernel_plan.h"
#include "spec.h"

namespace kgen {
namespace {

Spec spec_with(const std::string& mask, const std::string& extra = "", int64_t q_len = 300, int64_t kv_len = 333,
               const std::string& target = R"({"block_q": 128, "block_kv": 64})", int64_t q_heads = 4) {
  return parse_spec(R"({"name": "plan", "kind": "attention_forward",
    "shape": {"q_heads": )" + std::to_string(q_heads) + R"(, "kv_heads": 1, "q_len": )" + std::to_string(q_len) +
                        R"(, "kv_len": )" + std::to_string(kv_len) + R"(, "head_dim": 128},
    "dtype": "bfloat16", )" + extra + R"("mask": )" + mask + R"(, "targets": {"sm90a": )" + target + "}}",
                    ".");
}

std::vector<int64_t> numbers(const std::string& text) {
  std::vector<int64_t> out;
  std::string cleaned = text;
  std::replace(cleaned.begin(), cleaned.end(), ',', ' ');
  std::istringstream in(cleaned);
  for (std::string word; in >> word;) out.push_back(std::stoll(word, nullptr, 0));
  return out;
}

TEST(Sm90aPlan, BitmaskTableHoldsExactlyTheMaskOfEveryPartialTile) {
  const Spec spec = spec_with(R"({"type": "per_head", "masks": [{"type": "causal"},
      {"type": "local", "left": 20, "right": 5}, {"type": "chunked_causal", "chunk": 50},
      {"type": "prefix_lm", "prefix": 70}]})");
  const TileShape tiles{spec.shape.q_len, spec.shape.kv_len, 128, 64};
  const KvBlockLists lists = build_kv_block_lists(spec.masks, spec.shape.q_heads, tiles);
  const CudaMaskTable table = cuda_mask_table(spec.masks, lists);
  ASSERT_EQ(table.words_per_row, 2);
  std::size_t entry = 0;
  int64_t partial_tiles = 0;
  for (int64_t r = 0; r < lists.rows; ++r) {
    for (int64_t q = 0; q < tiles.q_blocks(); ++q) {
      const std::size_t list = static_cast<std::size_t>(r * tiles.q_blocks() + q);
      for (int32_t kv : lists.partial[list]) {
        ++partial_tiles;
        const int32_t block = table.tile_block[entry++];
        ASSERT_GE(block, 0);
        for (int64_t row = 0; row < 128; ++row) {
          for (int64_t column = 0; column < 64; ++column) {
            const int64_t i = q * 128 + row, j = int64_t{kv} * 64 + column;
            const bool expected = i < tiles.q_len && j < tiles.kv_len && spec.masks.of_head(r).allowed(i, j);
            const uint32_t word = table.bits[static_cast<std::size_t>((block * 128 + row) * 2 + column / 32)];
            ASSERT_EQ(((word >> (column % 32)) & 1u) != 0, expected)
                << "head " << r << " q block " << q << " kv block " << kv << " (" << i << ", " << j << ")";
          }
        }
      }
      for (std::size_t k = 0; k < lists.full[list].size(); ++k) EXPECT_EQ(table.tile_block[entry++], -1);
    }
  }
  EXPECT_EQ(entry, table.tile_block.size());
  EXPECT_LT(table.blocks, partial_tiles);  // equal tiles (e.g. causal diagonals) are stored once
  EXPECT_EQ(static_cast<int64_t>(table.bits.size()), table.blocks * 128 * 2);
}

TEST(Sm90aPlan, TileListsArePartialThenFullAndLaunchOrderIsHeaviestFirst) {
  const Spec spec = spec_with(R"({"type": "causal"})", "", 512, 512, R"({"block_q": 128, "block_kv": 128})");
  const KernelPlan plan = plan_sm90a_kernel(spec);
  const Json& c = plan.context;
  const std::vector<int64_t> begin = numbers(c["tile_begin"]), partial = numbers(c["tile_partial_count"]);
  const std::vector<int64_t> kv = numbers(c["tile_kv"]), order = numbers(c["q_block_order"]);
  ASSERT_EQ(begin, (std::vector<int64_t>{0, 1, 3, 6, 10}));
  EXPECT_EQ(partial, (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(kv, (std::vector<int64_t>{0, 1, 0, 2, 0, 1, 3, 0, 1, 2}));  // the diagonal first
  EXPECT_EQ(order, (std::vector<int64_t>{3, 2, 1, 0}));
  EXPECT_TRUE(c["predicate_mask"].get<bool>());
  EXPECT_FALSE(c["bitmask"].get<bool>());
  EXPECT_EQ(c["mask_predicate"], "j <= i");
  EXPECT_EQ(c["consumers"], 2);
  ASSERT_EQ(plan.extra_files.size(), 1u);
  EXPECT_EQ(plan.extra_files[0].extension, "h");
}

TEST(Sm90aPlan, RaggedKeysAddTheTailToThePredicate) {
  const KernelPlan plan = plan_sm90a_kernel(spec_with(R"({"type": "full"})", "", 128, 100));
  EXPECT_EQ(plan.context["mask_predicate"], "j < 100");
  const KernelPlan aligned = plan_sm90a_kernel(spec_with(R"({"type": "full"})", "", 128, 128));
  EXPECT_EQ(aligned.context["mask_policy"], "kgen::cuda::NoMask");
  EXPECT_FALSE(aligned.context.contains("mask_predicate"));
}

TEST(Sm90aPlan, AtomsAndRegisterSplitFollowTheTiles) {
  const KernelPlan plan = plan_sm90a_kernel(
      spec_with(R"({"type": "causal"})", "", 300, 300, R"({"block_q": 192, "block_kv": 80})"));
  EXPECT_EQ(plan.context["mma_qk"], "cute::SM90_64x80x16_F32BF16BF16_SS<cute::GMMA::Major::K, cute::GMMA::Major::K>");
  EXPECT_EQ(plan.context["mma_pv"], "cute::SM90_64x128x16_F32BF16BF16_RS<cute::GMMA::Major::K, cute::GMMA::Major::MN>");
  EXPECT_TRUE(plan.context["extended_mma_shapes"].get<bool>());
  EXPECT_EQ(plan.context["threads"], 512);
  EXPECT_EQ(plan.context["producer_registers"], 32);
  EXPECT_EQ(plan.context["consumer_registers"], 160);
  // 128 * producer + 128 * consumers * consumer <= 65536 for every split.
  for (int consumers = 1; consumers <= 3; ++consumers) {
    const Sm90aRegisterSplit split = sm90a_register_split(consumers);
    EXPECT_LE(128 * split.producer + 128 * consumers * split.consumer, 65536);
  }
}

// The launch the kernel file promises (kgen audit holds the generated launcher to it): one CTA
// per (batch, head) and q block, the kernel's thread count (that of its launch bounds), the
// plan's shared-memory budget.
TEST(Sm90aPlan, InterfaceLaunchIsThePlansGridThreadsAndBudget) {
  Spec spec = spec_with(R"({"type": "causal"})", "", 300, 333, R"({"block_q": 192, "block_kv": 64})");
  spec.shape.batch = 2;
  const KernelPlan plan = plan_sm90a_kernel(spec);
  const Json& entry = plan.interface["entry_points"][0];
  EXPECT_EQ(entry["launch"]["grid"], Json::parse("[8, 2, 1]"));  // 2 * 4 heads, ceil(300 / 192)
  EXPECT_EQ(entry["launch"]["block"], Json::parse("[512, 1, 1]"));
  EXPECT_EQ(entry["launch_bounds"]["max_threads"], plan.context["threads"]);
  EXPECT_EQ(entry["launch"]["block"][0], plan.context["threads"]);
  EXPECT_EQ(entry["dynamic_smem_bytes"], plan.context["smem_budget"]);
}

TEST(Sm90aPlan, TilesBeyondTheConsumerRegistersAreSpecErrors) {
  try {
    spec_with(R"({"type": "causal"})", "", 512, 512, R"({"block_q": 192, "block_kv": 128})");
    FAIL() << "expected a SpecError";
  } catch (const SpecError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("targets.sm90a.block_kv: found 128 with block_q 192 and head_dim_v 128"), std::string::npos)
        << message;
    EXPECT_NE(message.find("160 registers"), std::string::npos) << message;
  }
}

TEST(Sm90aPlan, SegmentIdsCountTowardsTheRegisters) {
  // 128 x 176 tiles fit two consumers' 240 registers (228), but not with a tile's key
  // segment ids on top (280): ptxas 13.0 spills that configuration.
  const std::string target = R"({"block_q": 128, "block_kv": 176})";
  EXPECT_NO_THROW(spec_with(R"({"type": "causal"})", "", 512, 512, target));
  EXPECT_THROW(spec_with(R"({"type": "causal"})", R"("segment_ids": true, )", 512, 512, target), SpecError);
  EXPECT_EQ(sm90a_consumer_register_estimate(176, 128, false), 228);
  EXPECT_EQ(sm90a_consumer_register_estimate(176, 128, true), 280);
}

// The backward walks the forward's tiles per kv block: every live tile exactly once, its
// partial q blocks first, and the transposed bitmask holds mask(i, j) at kv row j, q column i.
TEST(Sm90aBackwardPlan, TransposedListsAndBitmaskHoldTheForwardsTiles) {
  const Spec spec = spec_with(R"({"type": "per_head", "masks": [{"type": "causal"},
      {"type": "local", "left": 20, "right": 5}, {"type": "chunked_causal", "chunk": 50},
      {"type": "prefix_lm", "prefix": 70}]})");
  const TileShape tiles{spec.shape.q_len, spec.shape.kv_len, 64, 128};
  const KvBlockLists forward = build_kv_block_lists(spec.masks, spec.shape.q_heads, tiles);
  const QBlockLists lists = transpose_block_lists(forward);
  ASSERT_EQ(lists.rows, 4);
  const TransposedMaskTable table = transposed_mask_table(spec.masks, lists);
  ASSERT_EQ(table.words_per_row, 2);
  std::size_t entry = 0;
  int64_t live = 0;
  for (int64_t r = 0; r < lists.rows; ++r) {
    for (int64_t c = 0; c < tiles.kv_blocks(); ++c) {
      const std::size_t list = static_cast<std::size_t>(r * tiles.kv_blocks() + c);
      EXPECT_TRUE(std::is_sorted(lists.partial[list].begin(), lists.partial[list].end()));
      EXPECT_TRUE(std::is_sorted(lists.full[list].begin(), lists.full[list].end()));
      for (int32_t q : lists.partial[list]) {
        const auto& forward_partial = forward.partial[static_cast<std::size_t>(r * tiles.q_blocks() + q)];
        EXPECT_NE(std::find(forward_partial.begin(), forward_partial.end(), c), forward_partial.end());
        const int32_t block = table.entry_block[entry++];
        ASSERT_GE(block, 0);
        for (int64_t row = 0; row < 128; ++row)
          for (int64_t column = 0; column < 64; ++column) {
            const int64_t j = c * 128 + row, i = int64_t{q} * 64 + column;
            const bool expected = i < tiles.q_len && j < tiles.kv_len && spec.masks.of_head(r).allowed(i, j);
            const uint32_t word = table.bits[static_cast<std::size_t>((block * 128 + row) * 2 + column / 32)];
            ASSERT_EQ(((word >> (column % 32)) & 1u) != 0, expected) << "row " << r << " tile (" << q << ", " << c
                                                                       << ") i " << i << " j " << j;
          }
      }
      for (std::size_t f = 0; f < lists.full[list].size(); ++f) EXPECT_EQ(table.entry_block[entry++], -1);
      live += static_cast<int64_t>(lists.partial[list].size() + lists.full[list].size());
    }
  }
  EXPECT_EQ(entry, table.entry_block.size());
  EXPECT_EQ(live, forward.live_tiles_per_batch);
}

TEST(Sm90aBackwardPlan, OneFileOfThreeKernelsAtTheDefaultTiles) {
  const Spec spec = parse_spec(R"({"name": "bwd", "kind": "attention_forward", "backward": true,
    "shape": {"q_heads": 8, "kv_heads": 2, "q_len": 300, "kv_len": 300, "head_dim": 64},
    "dtype": "bfloat16", "mask": {"type": "causal"}, "targets": {"sm90a": {"block_q": 128, "block_kv": 128}}})",
                               ".");
  const std::vector<KernelPlan> plans = plan_kernels(spec);
  ASSERT_EQ(plans.size(), 2u);
  const KernelPlan& backward = plans[1];
  EXPECT_EQ(backward.pass, "backward");
  EXPECT_EQ(backward.symbol, "bwd_sm90a_backward");
  EXPECT_EQ(backward.context["block_q"], 64);
  EXPECT_EQ(backward.context["block_kv"], 128);
  EXPECT_EQ(backward.context["q_padded"], 320);
  const Json& entry_points = backward.interface["entry_points"];
  ASSERT_EQ(entry_points.size(), 3u);
  EXPECT_EQ(entry_points[1]["name"], "kgen::bwd_sm90a_backward::backward_kernel");
  EXPECT_EQ(entry_points[1]["launch"]["grid"], Json({2, 3, 1}));  // batch * kv heads, kv blocks
  EXPECT_EQ(entry_points[1]["launch"]["block"], Json({384, 1, 1}));
  EXPECT_EQ(entry_points[0]["dynamic_smem_bytes"], 0);
  EXPECT_EQ(entry_points[0]["launch"]["grid"], Json({8 * 320 / 4, 1, 1}));
  // Every q head's dkv steps are in its group's CTA: the kv block order lists each block once.
  EXPECT_EQ(numbers(backward.context["kv_block_order"].get<std::string>()), (std::vector<int64_t>{0, 1, 2}));
}

Spec backward_spec(int64_t head_dim, int64_t head_dim_v, const std::string& backward_tiles = "") {
  return parse_spec(R"({"name": "bwd", "kind": "attention_forward", "backward": true,
    "shape": {"q_heads": 2, "q_len": 256, "head_dim": )" + std::to_string(head_dim) +
                        R"(, "head_dim_v": )" + std::to_string(head_dim_v) + R"(},
    "dtype": "bfloat16", "mask": {"type": "causal"}, "targets": {"sm90a": {"block_q": 64, "block_kv": 64)" +
                        backward_tiles + "}}}",
                    ".");
}

// Above 256 columns of dK and dV together, two consumer warpgroups share a 64-row kv slot,
// each over a window of whole 64-column groups: part 0's from column 0, part 1's against the
// right edge, both as wide as the larger half.
TEST(Sm90aBackwardPlan, HeadDimsAbove128SplitEachKvSlotOverTwoConsumers) {
  struct Case {
    int64_t d, dv, parts, dk_width, dv_width;
  };
  for (const Case& c : {Case{64, 64, 1, 64, 64}, Case{128, 128, 1, 128, 128}, Case{192, 128, 2, 128, 64},
                        Case{192, 192, 2, 128, 128}, Case{256, 256, 2, 128, 128}}) {
    const Spec spec = backward_spec(c.d, c.dv);
    const std::vector<KernelPlan> plans = plan_kernels(spec);
    ASSERT_EQ(plans.size(), 2u) << c.d << "/" << c.dv;
    const Json& context = plans[1].context;
    EXPECT_EQ(context["dim_parts"], c.parts) << c.d << "/" << c.dv;
    EXPECT_EQ(context["dk_width"], c.dk_width) << c.d << "/" << c.dv;
    EXPECT_EQ(context["dv_width"], c.dv_width) << c.d << "/" << c.dv;
    // The default tiles keep two consumer warpgroups: 128 kv rows of one part, or 64 of two.
    EXPECT_EQ(context["block_kv"], 128 / c.parts) << c.d << "/" << c.dv;
    EXPECT_EQ(context["consumers"], 2) << c.d << "/" << c.dv;
    EXPECT_EQ(context["mma_dk"], "cute::SM90_64x" + std::to_string(c.dk_width) +
                                     "x16_F32BF16BF16_RS<cute::GMMA::Major::K, cute::GMMA::Major::MN>");
    EXPECT_TRUE(targets_without_backward(spec).empty());
  }
}

TEST(Sm90aBackwardPlan, TwoPartsPerKvSlotRefuseWiderKvBlocks) {
  try {
    backward_spec(256, 256, R"(, "backward": {"block_q": 64, "block_kv": 128})");
    FAIL() << "expected a SpecError";
  } catch (const SpecError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("targets.sm90a.backward.block_kv: found 128, expected 64 at head_dim 256"),
              std::string::npos)
        << message;
  }
}

// Head dims the windows cannot split (no sm90a forward takes them today either) are refused
// by name, not planned.
TEST(Sm90aBackwardPlan, HeadDimsItCannotSplitAreNamed) {
  Spec spec = backward_spec(256, 256);
  EXPECT_EQ(sm90a_backward_unsupported(spec), std::nullopt);
  spec.shape.head_dim_v = 64;
  const std::optional<std::string> why = sm90a_backward_unsupported(spec);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("head_dim 256 with head_dim_v 64"), std::string::npos) << *why;
  spec.shape.head_dim = spec.shape.head_dim_v = 96;
  EXPECT_TRUE(sm90a_backward_unsupported(spec).has_value());
}

Spec decode_spec_with(int64_t q_heads, int64_t q_len, const std::string& paged, const std::string& target) {
  return parse_spec(R"({"name": "decode", "kind": "attention_decode",
    "shape": {"batch": 3, "q_heads": )" + std::to_string(q_heads) + R"(, "kv_heads": 2, "q_len": )" +
                        std::to_string(q_len) + R"(, "kv_len": 1024, "head_dim": 128},
    "dtype": "bfloat16", )" + paged + R"("targets": {"sm90a": )" + target + "}}",
                    ".");
}

TEST(Sm90aDecodePlan, QTilesPagesAndGridFollowTheSpec) {
  // A group of 8 with 16 new tokens: 128 rows, two 64-row tiles per (batch, kv head).
  const Sm90aDecodeShape big = sm90a_decode_shape(
      decode_spec_with(16, 16, R"("paged": {"page_size": 128}, )", R"({"block_kv": 64, "splits": 3})"));
  EXPECT_EQ(big.rows, 128);
  EXPECT_EQ(big.q_tiles, 2);
  EXPECT_EQ(big.blocks_per_page, 2);
  EXPECT_EQ(big.pages_per_block, 0);
  EXPECT_EQ(big.grid(), (std::vector<int64_t>{6, 2, 3}));  // splits x q tiles, kv heads, batch
  // Pages of 16 in blocks of 64: four pages a block, loaded page by page.
  const Sm90aDecodeShape small = sm90a_decode_shape(
      decode_spec_with(8, 1, R"("paged": {"page_size": 16}, )", R"({"block_kv": 64, "splits": 1})"));
  EXPECT_EQ(small.rows, 4);
  EXPECT_EQ(small.q_tiles, 1);
  EXPECT_EQ(small.blocks_per_page, 0);
  EXPECT_EQ(small.pages_per_block, 4);
  EXPECT_FALSE(small.split());
  EXPECT_FALSE(sm90a_decode_unsupported(decode_spec_with(8, 1, R"("paged": {"page_size": 16}, )", R"({"block_kv": 64})")));
}

TEST(Sm90aDecodePlan, PagesOfNoWholeSwizzlePeriodInABlockOfSeveralAreNotGenerated) {
  const Spec spec = decode_spec_with(8, 1, R"("paged": {"page_size": 4}, )", R"({"block_kv": 64})");
  const std::optional<std::string> why = sm90a_decode_unsupported(spec);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("multiple of 8 positions"), std::string::npos) << *why;
}

TEST(Sm90aDecodePlan, InterfaceHasTheCombineOnlyWhenSplit) {
  const KernelPlan split = plan_sm90a_decode_kernel(
      decode_spec_with(8, 1, R"("paged": {"page_size": 128}, )", R"({"block_kv": 128, "splits": 2})"));
  ASSERT_EQ(split.interface["entry_points"].size(), 2u);
  EXPECT_NE(split.interface["entry_points"][1]["name"].get<std::string>().find("combine_kernel"), std::string::npos);
  EXPECT_EQ(split.interface["entry_points"][1]["launch"]["grid"], (Json{2, 3, 1}));  // kv heads, batch
  const KernelPlan unsplit = plan_sm90a_decode_kernel(
      decode_spec_with(8, 1, "", R"({"block_kv": 128, "splits": 1})"));
  EXPECT_EQ(unsplit.interface["entry_points"].size(), 1u);
  EXPECT_EQ(unsplit.interface["entry_points"][0]["launch"]["grid"], (Json{1, 2, 3}));
  EXPECT_EQ(unsplit.context["blocks_per_page"], 0);
}

}  // namespace
}  // namespace kgen
