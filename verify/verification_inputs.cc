#include "verification_inputs.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>

#include "dtype_rounding.h"

namespace kgen {
namespace {

// Built on mt19937_64's raw output, whose sequence the standard fixes; the std
// distributions are left to each library and would break determinism across machines.
class Draws {
 public:
  explicit Draws(uint64_t seed) : engine_(seed) {}

  // Odd multiples of 2^-53 minus 1: uniform in (-1, 1), exact, and never 0.
  double signed_unit() {
    const double odd = static_cast<double>(2 * (engine_() >> 11) + 1);
    return odd * 0x1p-53 - 1.0;
  }
  double unit() { return 0.5 * (signed_unit() + 1.0); }  // in (0, 1)

  // In [0, n); the modulo bias is irrelevant for test data.
  int64_t below(int64_t n) { return static_cast<int64_t>(engine_() % static_cast<uint64_t>(n)); }

 private:
  std::mt19937_64 engine_;
};

constexpr double kSixteenBitSpan = 120;  // exp(120) overflows f32 (max ~ exp(88.7))
constexpr double kFloat32Span = 12;
constexpr double kSinkSpread = 3;

using Direction = std::vector<double>;

// `rows` vectors: uniform noise plus `amplitude(row) * direction(row)`.
template <typename Amplitude, typename DirectionOf>
std::vector<double> structured(Draws& draws, int64_t rows, int64_t dim, Amplitude amplitude, DirectionOf direction) {
  std::vector<double> values(static_cast<std::size_t>(rows * dim));
  for (int64_t row = 0; row < rows; ++row) {
    const double a = amplitude(row);
    const Direction& w = direction(row);
    for (int64_t c = 0; c < dim; ++c) values[row * dim + c] = draws.signed_unit() + a * w[c];
  }
  return values;
}

// Document lengths log-uniform in [1, longest], appended until they fill `length`.
void append_documents(Draws& draws, int64_t length, int64_t longest, std::vector<int64_t>& lengths) {
  for (int64_t used = 0; used < length;) {
    const int64_t draw = std::llround(std::exp(draws.unit() * std::log(static_cast<double>(longest))));
    const int64_t next = std::min(length - used, std::max<int64_t>(1, draw));
    lengths.push_back(next);
    used += next;
  }
}

// The first part of a row packs many short documents, then two long documents fill it:
// boundaries inside the first tiles, a document longer than any local window, and all three
// kinds of step the tpu forward tells apart across documents (docs/block-plan.md): a q block
// of a later document against a kv block before it is dead, two blocks inside one long
// document lie in one document, and the others compare ids. The boundaries fall inside
// blocks rather than on block edges, so a q block that begins in one document and ends in the
// next meets kv blocks of either alone. Even batch rows end the short documents at 5/16 of the
// row and the second at 17/32, odd rows at 1/3 and 25/32: a local window's edge then falls
// inside a long document both on steps inside one document and on steps that compare ids.
std::vector<int64_t> document_lengths(Draws& draws, int64_t length, const InputDesign& design, int64_t row) {
  std::vector<int64_t> lengths;
  const bool odd = row % 2 == 1;
  const int64_t packed = odd ? length / 3 : length * 5 / 16;
  const int64_t second_end = odd ? length * 25 / 32 : length * 17 / 32;
  append_documents(draws, packed, design.short_document, lengths);
  for (const int64_t part : {second_end - packed, length - second_end})
    if (part > 0) lengths.push_back(part);
  return lengths;
}

void append_runs(const std::vector<int64_t>& lengths, const std::vector<int32_t>& ids, std::vector<int32_t>& out) {
  for (std::size_t d = 0; d < lengths.size(); ++d) out.insert(out.end(), static_cast<std::size_t>(lengths[d]), ids[d]);
}

// The kv side of one batch row: the q documents' boundaries (scaled when the lengths
// differ), some moved by a few tokens, some documents absent.
std::vector<int64_t> kv_lengths_for(Draws& draws, const std::vector<int64_t>& q_lengths, int64_t q_len, int64_t kv_len) {
  std::vector<int64_t> ends;  // exclusive end of each kv document
  int64_t q_end = 0;
  for (int64_t length : q_lengths) {
    q_end += length;
    int64_t end = q_end * kv_len / q_len;
    if (draws.below(6) == 0) end += draws.below(17) - 8;
    ends.push_back(std::clamp<int64_t>(end, ends.empty() ? 0 : ends.back(), kv_len));
  }
  ends.back() = kv_len;
  std::vector<int64_t> lengths;
  int64_t start = 0;
  for (int64_t end : ends) {
    lengths.push_back(end - start);
    start = end;
  }
  return lengths;
}

}  // namespace

InputDesign input_design(const Spec& spec) {
  InputDesign design;
  if (spec.softcap)
    design.span = 6 * *spec.softcap;
  else
    design.span = spec.dtype == DType::kFloat32 ? kFloat32Span : kSixteenBitSpan;
  design.sink_center = std::log(static_cast<double>(spec.shape.kv_len)) + 1;
  design.short_document = std::clamp<int64_t>(spec.shape.q_len / 8, 1, 64);
  return design;
}

AttentionInputs verification_inputs(const Spec& spec, uint64_t seed) {
  const Shape& sh = spec.shape;
  const InputDesign design = input_design(spec);
  Draws draws(seed);

  // One ±1 direction per (batch, kv head), shared by its q heads: a kernel that pairs q
  // with another batch's or head's keys loses the structure. scale * (a w).(c w) =
  // a c scale head_dim, so a row amplitude of span / (scale head_dim) puts the structured
  // logits in [-span, span] as c_j ramps over [-1, 1].
  std::vector<Direction> directions(static_cast<std::size_t>(sh.batch * sh.kv_heads), Direction(static_cast<std::size_t>(sh.head_dim)));
  for (Direction& w : directions)
    for (double& sign : w) sign = draws.below(2) ? 1.0 : -1.0;
  const double unit_amplitude = design.span / (spec.scale * static_cast<double>(sh.head_dim));

  AttentionInputs in;
  const int64_t q_rows_per_kv_head = sh.group() * sh.q_len;  // q is [b][h][i], h = g * group + r
  in.q = structured(
      draws, sh.batch * sh.q_heads * sh.q_len, sh.head_dim,
      [&](int64_t) {
        switch (draws.below(3)) {
          case 0: return 0.0;                                            // flat
          case 1: return unit_amplitude * (0.5 + 0.5 * draws.unit());    // rising
          default: return -unit_amplitude * (0.5 + 0.5 * draws.unit());  // falling
        }
      },
      [&](int64_t row) -> const Direction& { return directions[static_cast<std::size_t>(row / q_rows_per_kv_head)]; });
  in.k = structured(
      draws, sh.batch * sh.kv_heads * sh.kv_len, sh.head_dim,
      [&](int64_t row) {
        const int64_t j = row % sh.kv_len;
        return -1.0 + 2.0 * (static_cast<double>(j) + 0.5) / static_cast<double>(sh.kv_len);
      },
      [&](int64_t row) -> const Direction& { return directions[static_cast<std::size_t>(row / sh.kv_len)]; });
  const Direction none(static_cast<std::size_t>(sh.head_dim_v));
  in.v = structured(draws, sh.batch * sh.kv_heads * sh.kv_len, sh.head_dim_v, [](int64_t) { return 0.0; },
                    [&](int64_t) -> const Direction& { return none; });
  round_inputs(in, spec.dtype);

  if (spec.segment_ids) {
    for (int64_t b = 0; b < sh.batch; ++b) {
      const std::vector<int64_t> q_lengths = document_lengths(draws, sh.q_len, design, b);
      const std::vector<int64_t> kv_lengths = kv_lengths_for(draws, q_lengths, sh.q_len, sh.kv_len);
      std::vector<int32_t> q_ids, kv_ids;
      // Document n has id 2n on both sides, or 2n + 1 on the kv side when it is absent there
      // (an id no q row carries): ids grow along the row on both sides, so each block's
      // (min, max) range is as narrow as its documents.
      for (std::size_t d = 0; d < q_lengths.size(); ++d) {
        q_ids.push_back(static_cast<int32_t>(2 * d));
        const bool absent = d + 2 < q_lengths.size() && draws.below(8) == 0;  // never the two long ones
        kv_ids.push_back(static_cast<int32_t>(2 * d + (absent ? 1 : 0)));
      }
      append_runs(q_lengths, q_ids, in.q_segment_ids);
      append_runs(kv_lengths, kv_ids, in.kv_segment_ids);
    }
  }
  if (spec.sinks) {
    in.sinks.resize(static_cast<std::size_t>(sh.q_heads));
    for (float& sink : in.sinks) sink = static_cast<float>(design.sink_center + kSinkSpread * draws.signed_unit());
  }
  return in;
}

std::vector<double> verification_dout(const Spec& spec, uint64_t seed) {
  const Shape& sh = spec.shape;
  Draws draws(~seed);  // not the stream q, k and v came from
  std::vector<double> dout(static_cast<std::size_t>(sh.batch * sh.q_heads * sh.q_len * sh.head_dim_v));
  for (double& value : dout) value = round_to_dtype(draws.signed_unit(), spec.dtype);
  return dout;
}

DecodeInputs decode_verification_inputs(const Spec& spec, const std::vector<int32_t>& kv_lens, uint64_t seed) {
  const Shape& sh = spec.shape;
  AttentionInputs dense = verification_inputs(spec, seed);
  DecodeInputs in;
  in.q = std::move(dense.q);
  in.sinks = std::move(dense.sinks);
  in.kv_lens = kv_lens;
  // Past a sequence's length the cache holds whatever an earlier sequence left: here a value
  // large enough that reading it unmasked ruins the result.
  const double garbage = round_to_dtype(1000.0, spec.dtype);
  for (int64_t b = 0; b < sh.batch; ++b)
    for (int64_t g = 0; g < sh.kv_heads; ++g)
      for (int64_t p = kv_lens[static_cast<std::size_t>(b)]; p < sh.kv_len; ++p) {
        const int64_t row = (b * sh.kv_heads + g) * sh.kv_len + p;
        std::fill_n(dense.k.begin() + row * sh.head_dim, sh.head_dim, garbage);
        std::fill_n(dense.v.begin() + row * sh.head_dim_v, sh.head_dim_v, -garbage);
      }
  if (!spec.decode->paged()) {
    in.k = std::move(dense.k);
    in.v = std::move(dense.v);
    return in;
  }
  const int64_t page = spec.decode->page_size, pages = spec.decode->pages;
  const int64_t per_sequence = sh.kv_len / page;
  // The pages that hold positions below kv_lens come from a seeded permutation of the pool, each
  // once; the table's entries past a sequence's length name any page (the kernel must not read
  // them, as a serving system's stale entries).
  std::vector<int32_t> order(static_cast<std::size_t>(pages));
  for (int64_t k = 0; k < pages; ++k) order[static_cast<std::size_t>(k)] = static_cast<int32_t>(k);
  Draws draws(seed ^ 0x5eed'9a9e'5ull);
  for (int64_t k = pages - 1; k > 0; --k) std::swap(order[static_cast<std::size_t>(k)], order[static_cast<std::size_t>(draws.below(k + 1))]);
  in.page_table.resize(static_cast<std::size_t>(sh.batch * per_sequence));
  std::size_t used = 0;
  for (int64_t b = 0; b < sh.batch; ++b)
    for (int64_t n = 0; n < per_sequence; ++n) {
      int32_t& entry = in.page_table[static_cast<std::size_t>(b * per_sequence + n)];
      if (n * page >= kv_lens[static_cast<std::size_t>(b)]) {
        entry = static_cast<int32_t>(draws.below(pages));
        continue;
      }
      if (used == order.size())
        throw std::invalid_argument("paged.pages: the pool's " + std::to_string(pages) +
                                    " pages cannot hold the cache of kv_lens " + std::to_string(kv_lens[static_cast<std::size_t>(b)]) +
                                    " and the sequences before it");
      entry = order[used++];
    }
  in.k.assign(static_cast<std::size_t>(sh.kv_heads * pages * page * sh.head_dim), garbage);
  in.v.assign(static_cast<std::size_t>(sh.kv_heads * pages * page * sh.head_dim_v), -garbage);
  for (int64_t b = 0; b < sh.batch; ++b)
    for (int64_t g = 0; g < sh.kv_heads; ++g)
      for (int64_t p = 0; p < (kv_lens[static_cast<std::size_t>(b)] + page - 1) / page * page; ++p) {
        const int64_t from = (b * sh.kv_heads + g) * sh.kv_len + p;
        const int64_t to = (g * pages + in.page_table[static_cast<std::size_t>(b * per_sequence + p / page)]) * page + p % page;
        std::copy_n(dense.k.begin() + from * sh.head_dim, sh.head_dim, in.k.begin() + to * sh.head_dim);
        std::copy_n(dense.v.begin() + from * sh.head_dim_v, sh.head_dim_v, in.v.begin() + to * sh.head_dim_v);
      }
  return in;
}

std::vector<int32_t> decode_length_cases(const Spec& spec, const std::vector<int64_t>& edges) {
  const int64_t lo = spec.shape.q_len, hi = spec.shape.kv_len;
  std::vector<int64_t> lengths = {lo, hi};
  for (int64_t edge : edges)
    for (int64_t length : {edge - 1, edge, edge + 1}) lengths.push_back(length);
  std::vector<int32_t> cases;
  for (int64_t length : lengths)
    if (length >= lo && length <= hi) cases.push_back(static_cast<int32_t>(length));
  std::sort(cases.begin(), cases.end());
  cases.erase(std::unique(cases.begin(), cases.end()), cases.end());
  return cases;
}

}  // namespace kgen

namespace kgen {

std::vector<int64_t> decode_length_edges(const Spec& spec, int64_t block_kv) {
  const Shape& s = spec.shape;
  std::vector<int64_t> edges = {block_kv, 2 * block_kv, s.kv_len - block_kv};
  if (spec.decode->paged()) edges.insert(edges.end(), {spec.decode->page_size, 2 * spec.decode->page_size});
  const Mask& mask = spec.masks.unique.front();
  if (mask.kind == Mask::Kind::kLocal && mask.left) edges.push_back(block_kv + s.q_len + *mask.left);
  return edges;
}

void poison_stale_values(const Spec& spec, DecodeInputs& in) {
  const Shape& s = spec.shape;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const int64_t dv = s.head_dim_v;
  if (!spec.decode->paged()) {
    for (int64_t b = 0; b < s.batch; ++b)
      for (int64_t g = 0; g < s.kv_heads; ++g)
        for (int64_t p = in.kv_lens[static_cast<std::size_t>(b)]; p < s.kv_len; ++p)
          std::fill_n(in.v.begin() + ((b * s.kv_heads + g) * s.kv_len + p) * dv, dv, nan);
    return;
  }
  const int64_t page = spec.decode->page_size, pages = spec.decode->pages, per_sequence = s.kv_len / page;
  // A pool row is live when some sequence reads it below its length.
  std::vector<char> live(static_cast<std::size_t>(pages * page), 0);
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t p = 0; p < in.kv_lens[static_cast<std::size_t>(b)]; ++p)
      live[static_cast<std::size_t>(in.page_table[static_cast<std::size_t>(b * per_sequence + p / page)] * page + p % page)] = 1;
  for (int64_t g = 0; g < s.kv_heads; ++g)
    for (int64_t row = 0; row < pages * page; ++row)
      if (!live[static_cast<std::size_t>(row)]) std::fill_n(in.v.begin() + (g * pages * page + row) * dv, dv, nan);
}

}  // namespace kgen
