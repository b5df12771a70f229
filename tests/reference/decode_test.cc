// The decode reference (docs/spec-format.md §8) against the forward's, which is hand-checked
// elsewhere: new token t of sequence b is forward query row kv_lens[b] - q_len + t over the
// sequence's first kv_lens[b] positions, and a paged cache read through its table equals the
// contiguous one. Also the decode verification inputs (docs/verification.md, "Decode").
#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include <gtest/gtest.h>

#include "dense_reference.h"
#include "tiny_spec.h"
#include "verification_inputs.h"

namespace kgen {
namespace {

// batch 3, GQA 4/2, 3 new tokens, a cache of 48; softcap and sinks so every feature is in play.
Spec decode_spec(const std::string& mask, int64_t page_size) {
  Spec spec = testing::tiny_spec({.batch = 3, .q_heads = 4, .kv_heads = 2, .q_len = 3, .kv_len = 48,
                                  .head_dim = 16, .head_dim_v = 8}, mask);
  spec.kind = "attention_decode";
  spec.scale = 0.25;
  spec.softcap = 30.0;
  spec.sinks = true;
  DecodeSpec decode;
  if (page_size) {
    decode.page_size = page_size;
    decode.pages = 3 * 48 / page_size + 5;  // spare pages the table never names
  }
  spec.decode = decode;
  return spec;
}

// The forward reference of one sequence's new tokens: a spec of batch 1, q_len new tokens,
// kv_len = kv_lens[b], the mask's offset placing row t at position kv_lens[b] - q_len + t.
AttentionOutputs forward_of_sequence(const Spec& decode, const DecodeInputs& in, int64_t b, const std::string& mask) {
  const Shape& s = decode.shape;
  const int64_t length = in.kv_lens[static_cast<std::size_t>(b)];
  Spec forward = testing::tiny_spec({.batch = 1, .q_heads = s.q_heads, .kv_heads = s.kv_heads, .q_len = s.q_len,
                                     .kv_len = length, .head_dim = s.head_dim, .head_dim_v = s.head_dim_v}, mask);
  forward.scale = decode.scale;
  forward.softcap = decode.softcap;
  forward.sinks = decode.sinks;
  for (Mask& m : forward.masks.unique) m.offset = length - s.q_len;
  AttentionInputs f;
  f.q.assign(in.q.begin() + b * s.q_heads * s.q_len * s.head_dim, in.q.begin() + (b + 1) * s.q_heads * s.q_len * s.head_dim);
  for (int64_t g = 0; g < s.kv_heads; ++g) {
    const auto k = in.k.begin() + (b * s.kv_heads + g) * s.kv_len * s.head_dim;
    f.k.insert(f.k.end(), k, k + length * s.head_dim);
    const auto v = in.v.begin() + (b * s.kv_heads + g) * s.kv_len * s.head_dim_v;
    f.v.insert(f.v.end(), v, v + length * s.head_dim_v);
  }
  f.sinks = in.sinks;
  return dense_attention(forward, f);
}

void expect_decode_equals_forward(const std::string& mask) {
  const Spec spec = decode_spec(mask, 0);
  const std::vector<int32_t> lengths = {3, 17, 48};
  const DecodeInputs in = decode_verification_inputs(spec, lengths, 5);
  const AttentionOutputs got = dense_decode(spec, in);
  const Shape& s = spec.shape;
  for (int64_t b = 0; b < s.batch; ++b) {
    const AttentionOutputs want = forward_of_sequence(spec, in, b, mask);
    for (std::size_t k = 0; k < want.out.size(); ++k)
      ASSERT_NEAR(got.out[b * want.out.size() + k], want.out[k], 1e-12) << mask << " batch " << b;
    for (std::size_t k = 0; k < want.lse.size(); ++k)
      ASSERT_NEAR(got.lse[b * want.lse.size() + k], want.lse[k], 1e-12) << mask << " batch " << b;
  }
}

TEST(Decode, NewTokensAreForwardRowsAtTheEndOfTheirSequence) {
  expect_decode_equals_forward(R"({"type": "causal"})");
  expect_decode_equals_forward(R"({"type": "local", "left": 5, "right": 0})");
}

TEST(Decode, APagedCacheReadsAsTheContiguousOne) {
  const std::vector<int32_t> lengths = {48, 3, 21};
  const AttentionOutputs contiguous = dense_decode(decode_spec(R"({"type": "causal"})", 0),
                                                   decode_verification_inputs(decode_spec(R"({"type": "causal"})", 0), lengths, 9));
  for (int64_t page : {1, 4, 16, 48}) {
    const Spec paged = decode_spec(R"({"type": "causal"})", page);
    const DecodeInputs in = decode_verification_inputs(paged, lengths, 9);
    const AttentionOutputs got = dense_decode(paged, in);
    EXPECT_EQ(got.out, contiguous.out) << "page " << page;
    EXPECT_EQ(got.lse, contiguous.lse) << "page " << page;
  }
}

TEST(Decode, TheVerificationPageTableIsScatteredAndNamesEachLivePageOnce) {
  const Spec spec = decode_spec(R"({"type": "causal"})", 4);
  const DecodeInputs in = decode_verification_inputs(spec, {48, 5, 9}, 2);
  const int64_t per_sequence = 48 / 4;
  std::set<int32_t> live;
  int in_order = 0;
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t n = 0; n * 4 < in.kv_lens[static_cast<std::size_t>(b)]; ++n) {
      const int32_t page = in.page_table[static_cast<std::size_t>(b * per_sequence + n)];
      EXPECT_TRUE(live.insert(page).second) << "page " << page << " named twice";
      if (n > 0) in_order += page == in.page_table[static_cast<std::size_t>(b * per_sequence + n - 1)] + 1;
    }
  EXPECT_EQ(live.size(), 12u + 2u + 3u);
  EXPECT_LT(in_order, 3);  // a permutation, not the identity
}

// A kernel that reads past kv_lens without masking sees values of 1000 there.
TEST(Decode, TheCachePastEachLengthIsLargeGarbage) {
  const Spec spec = decode_spec(R"({"type": "causal"})", 0);
  const DecodeInputs in = decode_verification_inputs(spec, {3, 20, 48}, 1);
  const Shape& s = spec.shape;
  for (int64_t b = 0; b < 2; ++b) {
    const int64_t past = (b * s.kv_heads + 1) * s.kv_len + in.kv_lens[static_cast<std::size_t>(b)];
    EXPECT_EQ(in.k[past * s.head_dim], 1000.0);
    EXPECT_EQ(in.v[past * s.head_dim_v], -1000.0);
    EXPECT_LT(std::abs(in.k[(past - 1) * s.head_dim]), 100.0);
  }
}

TEST(Decode, InputsOutsideTheContractAreRefused) {
  const Spec spec = decode_spec(R"({"type": "causal"})", 4);
  DecodeInputs in = decode_verification_inputs(spec, {48, 3, 21}, 3);
  DecodeInputs short_length = in;
  short_length.kv_lens[1] = 2;  // below q_len: the new tokens would not fit
  EXPECT_THROW(dense_decode(spec, short_length), std::invalid_argument);
  DecodeInputs long_length = in;
  long_length.kv_lens[0] = 49;
  EXPECT_THROW(dense_decode(spec, long_length), std::invalid_argument);
  DecodeInputs bad_page = in;
  bad_page.page_table[4] = static_cast<int32_t>(spec.decode->pages);
  EXPECT_THROW(dense_decode(spec, bad_page), std::invalid_argument);
  Spec small_pool = spec;
  small_pool.decode->pages = 10;
  EXPECT_THROW(decode_verification_inputs(small_pool, {48, 3, 21}, 3), std::invalid_argument);
}

TEST(Decode, TheLengthCasesCoverOneTokenTheEdgesAndTheCapacity) {
  const Spec spec = decode_spec(R"({"type": "causal"})", 0);
  EXPECT_EQ(decode_length_cases(spec, {16, 32}), (std::vector<int32_t>{3, 15, 16, 17, 31, 32, 33, 48}));
  EXPECT_EQ(decode_length_cases(spec, {2, 48}), (std::vector<int32_t>{3, 47, 48}));
}

}  // namespace
}  // namespace kgen
