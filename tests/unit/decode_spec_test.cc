// Decode specs (docs/spec-format.md §8, docs/decode.md): what parse_spec fills in, the split rule
// and what each target's `kgen plan` says of the split. The refusals are in tests/bad_specs.
#include <string>

#include <gtest/gtest.h>

#include "decode_splits.h"
#include "diagnostics.h"
#include "spec.h"
#include "targets/target.h"

namespace kgen {
namespace {

std::string decode_spec(const std::string& extra, const std::string& targets) {
  return R"({"name": "decode", "kind": "attention_decode",
    "shape": {"batch": 2, "q_heads": 32, "kv_heads": 8, "q_len": 2, "kv_len": 8192, "head_dim": 128},
    "dtype": "bfloat16", )" + extra + R"("targets": )" + targets + "}";
}

TEST(DecodeSpec, DefaultsAreCausalContiguousAndSplitsChosen) {
  const Spec spec = parse_spec(decode_spec("", R"({"sm90a": {"block_kv": 128}})"), ".");
  ASSERT_TRUE(spec.decode);
  EXPECT_FALSE(spec.decode->paged());
  EXPECT_EQ(spec.masks.unique[0].kind, Mask::Kind::kCausal);
  EXPECT_EQ(spec.mask_summary, R"({"type":"causal"})");
  EXPECT_FALSE(spec.sm90a->splits);
  EXPECT_EQ(find_target("sm90a")->tiling(spec).block_q, 4 * 2);  // group 4 x 2 new tokens
  EXPECT_TRUE(find_target("sm90a")->decode_split(spec).chosen);
}

TEST(DecodeSpec, PagesAndWrittenSplitsAreKept) {
  const Spec spec = parse_spec(decode_spec(R"("paged": {"page_size": 256}, "mask": {"type": "local", "left": 1023, "right": 0}, )",
                                           R"({"tpu": {"generation": "v5p", "block_kv": 512, "splits": 3}})"),
                               ".");
  EXPECT_EQ(spec.decode->page_size, 256);
  EXPECT_EQ(spec.decode->pages, 2 * 8192 / 256);  // every sequence at capacity
  EXPECT_EQ(*spec.tpu->splits, 3);
  const DecodeSplits split = find_target("tpu")->decode_split(spec);
  EXPECT_EQ(split.splits, 3);
  EXPECT_FALSE(split.chosen);
  // The window of 1023 + 2 positions spans at most 3 blocks of 512, plus one it straddles.
  EXPECT_EQ(find_target("tpu")->plan_json(spec, PlanPass::kDecode)["kv_blocks"], 4);
}

TEST(DecodeSpec, AForwardPassOfADecodeSpecAndADecodePassOfAForwardSpecAreRefused) {
  const Spec decode = parse_spec(decode_spec("", R"({"sm90a": {"block_kv": 128}})"), ".");
  EXPECT_THROW(find_target("sm90a")->plan_json(decode, PlanPass::kForward), SpecError);
  const Spec forward = parse_spec(R"({"name": "f", "kind": "attention_forward",
    "shape": {"q_heads": 2, "q_len": 256, "head_dim": 64}, "dtype": "bfloat16",
    "targets": {"sm90a": {"block_q": 128, "block_kv": 128}}})", ".");
  EXPECT_FALSE(forward.decode);
  EXPECT_THROW(find_target("sm90a")->plan_json(forward, PlanPass::kDecode), SpecError);
}

// The rule: the fewest splits of least critical path (waves of split units x (blocks per split
// + 1)), and none once the units fill the chip.
TEST(DecodeSplits, SplitOnlyWhatTheChipCannotFillAlready) {
  // 16 units on 132 SMs, 256 blocks: 8 splits fill 128 SMs with 32 blocks each; 9 would need a
  // second wave, and so would 16, whose blocks per split halve.
  EXPECT_EQ(decode_splits(DecodeWork{16, 256, 132}, std::nullopt).splits, 8);
  EXPECT_EQ(decode_split_cost(DecodeWork{16, 256, 132}, 8), 33);
  EXPECT_EQ(decode_split_cost(DecodeWork{16, 256, 132}, 9), 2 * 30);
  EXPECT_EQ(decode_split_cost(DecodeWork{16, 256, 132}, 16), 2 * 17);
  // Units that fill the chip: no split, no combine.
  EXPECT_EQ(decode_splits(DecodeWork{512, 256, 132}, std::nullopt).splits, 1);
  EXPECT_EQ(decode_splits(DecodeWork{132, 4096, 132}, std::nullopt).splits, 1);
  // One TensorCore runs the units one after another: splitting gains nothing there.
  EXPECT_EQ(decode_splits(DecodeWork{1, 64, 1}, std::nullopt).splits, 1);
  // Megacore: one unit is split across its two cores.
  EXPECT_EQ(decode_splits(DecodeWork{1, 64, 2}, std::nullopt).splits, 2);
  // Never more splits than blocks, nor than kMaxDecodeSplits.
  EXPECT_EQ(decode_splits(DecodeWork{1, 3, 132}, std::nullopt).splits, 3);
  EXPECT_EQ(decode_splits(DecodeWork{1, 100000, 1000}, std::nullopt).splits, kMaxDecodeSplits);
  EXPECT_EQ(decode_splits(DecodeWork{1, 64, 132}, 5).splits, 5);
}

TEST(DecodeSplits, BlocksAreDealtEvenlyAndNoSplitIsEmpty) {
  for (int64_t blocks : {1, 7, 64, 1000})
    for (int64_t splits = 1; splits <= std::min<int64_t>(blocks, 9); ++splits) {
      int64_t next = 0;
      for (int64_t s = 0; s < splits; ++s) {
        const BlockRange range = split_blocks(blocks, splits, s);
        EXPECT_EQ(range.begin, next);
        EXPECT_GE(range.end - range.begin, blocks / splits);
        EXPECT_LE(range.end - range.begin, blocks / splits + 1);
        next = range.end;
      }
      EXPECT_EQ(next, blocks);
    }
}

}  // namespace
}  // namespace kgen
