#include "dense_reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace kgen {
namespace {

std::string dims(std::initializer_list<int64_t> extents) {
  std::string out;
  for (int64_t e : extents) out += "[" + std::to_string(e) + "]";
  return out;
}

template <typename T>
void require_size(const std::vector<T>& array, const char* name, const char* layout,
                  std::initializer_list<int64_t> extents) {
  int64_t expected = 1;
  for (int64_t e : extents) expected *= e;
  if (static_cast<int64_t>(array.size()) != expected)
    throw std::invalid_argument(std::string(name) + ": expected " + std::to_string(expected) +
                                " values " + layout + " = " + dims(extents) + ", got " +
                                std::to_string(array.size()));
}

template <typename T>
void require_absent(const std::vector<T>& array, const char* name, const char* flag) {
  if (!array.empty())
    throw std::invalid_argument(std::string(name) + ": given " + std::to_string(array.size()) +
                                " values, but the spec has " + flag + " false");
}

// Everything one query row (b, h, i) of docs/spec-format.md §3 reads.
struct Row {
  int64_t i;
  const Mask* mask;               // the head's own mask, evaluated per element
  const int32_t* kv_segments;     // [kv_len] of batch b; null without segment ids
  int32_t q_segment;
  const double* q;                // [head_dim]
  const double* k;                // [kv_len][head_dim] of the head's kv head
  const double* v;                // [kv_len][head_dim_v]
  const float* sink;              // null without sinks

  bool allowed(int64_t j) const {
    return mask->allowed(i, j) && (!kv_segments || kv_segments[j] == q_segment);
  }
};

// Adds the row's output into `out` (zeroed by the caller) and returns its lse. `keep` and
// `s` are kv_len entries of scratch, reused across rows.
double attend_row(const Spec& spec, const Row& row, std::vector<char>& keep,
                  std::vector<double>& s, double* out) {
  const int64_t d = spec.shape.head_dim, dv = spec.shape.head_dim_v;
  bool any = false;
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t j = 0; j < spec.shape.kv_len; ++j) {
    keep[j] = row.allowed(j);
    if (!keep[j]) continue;
    double dot = 0;
    for (int64_t c = 0; c < d; ++c) dot += row.q[c] * row.k[j * d + c];
    s[j] = spec.scale * dot;
    if (spec.softcap) s[j] = *spec.softcap * std::tanh(s[j] / *spec.softcap);
    m = any ? std::max(m, s[j]) : s[j];
    any = true;
  }
  if (row.sink) m = any ? std::max(m, double{*row.sink}) : double{*row.sink};
  if (!any && !row.sink) return -std::numeric_limits<double>::infinity();  // out stays 0

  // Subtracting the row max keeps every exponent <= 0, so nothing overflows.
  double l = row.sink ? std::exp(double{*row.sink} - m) : 0.0;
  for (int64_t j = 0; j < spec.shape.kv_len; ++j) {
    if (!keep[j]) continue;
    const double p = std::exp(s[j] - m);
    l += p;
    for (int64_t c = 0; c < dv; ++c) out[c] += p * row.v[j * dv + c];
  }
  for (int64_t c = 0; c < dv; ++c) out[c] /= l;
  return m + std::log(l);
}

}  // namespace

void check_attention_inputs(const Spec& spec, const AttentionInputs& in) {
  const Shape& sh = spec.shape;
  if (sh.batch < 1 || sh.q_heads < 1 || sh.kv_heads < 1 || sh.q_heads % sh.kv_heads != 0 ||
      sh.q_len < 1 || sh.kv_len < 1 || sh.head_dim < 1 || sh.head_dim_v < 1)
    throw std::invalid_argument("spec.shape: every extent must be positive and kv_heads must "
                                "divide q_heads");
  if (static_cast<int64_t>(spec.masks.head_to_unique.size()) != sh.q_heads)
    throw std::invalid_argument("spec.masks: expected one mask index per query head (" +
                                std::to_string(sh.q_heads) + "), got " +
                                std::to_string(spec.masks.head_to_unique.size()));
  for (int index : spec.masks.head_to_unique)
    if (index < 0 || index >= static_cast<int>(spec.masks.unique.size()))
      throw std::invalid_argument("spec.masks: head mask index " + std::to_string(index) +
                                  " outside the " + std::to_string(spec.masks.unique.size()) +
                                  " masks");
  require_size(in.q, "q", "[batch][q_heads][q_len][head_dim]",
               {sh.batch, sh.q_heads, sh.q_len, sh.head_dim});
  require_size(in.k, "k", "[batch][kv_heads][kv_len][head_dim]",
               {sh.batch, sh.kv_heads, sh.kv_len, sh.head_dim});
  require_size(in.v, "v", "[batch][kv_heads][kv_len][head_dim_v]",
               {sh.batch, sh.kv_heads, sh.kv_len, sh.head_dim_v});
  if (spec.segment_ids) {
    require_size(in.q_segment_ids, "q_segment_ids", "[batch][q_len]", {sh.batch, sh.q_len});
    require_size(in.kv_segment_ids, "kv_segment_ids", "[batch][kv_len]", {sh.batch, sh.kv_len});
  } else {
    require_absent(in.q_segment_ids, "q_segment_ids", "segment_ids");
    require_absent(in.kv_segment_ids, "kv_segment_ids", "segment_ids");
  }
  if (spec.sinks)
    require_size(in.sinks, "sinks", "[q_heads]", {sh.q_heads});
  else
    require_absent(in.sinks, "sinks", "sinks");
}

AttentionOutputs dense_attention(const Spec& spec, const AttentionInputs& in, const RowFilter& only) {
  check_attention_inputs(spec, in);
  const Shape& sh = spec.shape;
  AttentionOutputs result;
  result.out.assign(
      static_cast<std::size_t>(sh.batch * sh.q_heads * sh.q_len * sh.head_dim_v), 0.0);
  result.lse.assign(static_cast<std::size_t>(sh.batch * sh.q_heads * sh.q_len), 0.0);
  std::vector<char> keep(static_cast<std::size_t>(sh.kv_len));
  std::vector<double> s(static_cast<std::size_t>(sh.kv_len));

  for (int64_t b = 0; b < sh.batch; ++b) {
    const int32_t* kv_segments =
        spec.segment_ids ? in.kv_segment_ids.data() + b * sh.kv_len : nullptr;
    for (int64_t h = 0; h < sh.q_heads; ++h) {
      const int64_t g = h / sh.group();
      const Mask& mask = spec.masks.of_head(h);
      for (int64_t i = 0; i < sh.q_len; ++i) {
        if (only && !only(b, h, i)) continue;
        const int64_t row_index = (b * sh.q_heads + h) * sh.q_len + i;
        const int32_t q_segment = kv_segments ? in.q_segment_ids[b * sh.q_len + i] : 0;
        const Row row{i,
                      &mask,
                      kv_segments,
                      q_segment,
                      in.q.data() + row_index * sh.head_dim,
                      in.k.data() + (b * sh.kv_heads + g) * sh.kv_len * sh.head_dim,
                      in.v.data() + (b * sh.kv_heads + g) * sh.kv_len * sh.head_dim_v,
                      spec.sinks ? &in.sinks[h] : nullptr};
        result.lse[row_index] =
            attend_row(spec, row, keep, s, result.out.data() + row_index * sh.head_dim_v);
      }
    }
  }
  return result;
}

void check_decode_inputs(const Spec& spec, const DecodeInputs& in) {
  if (!spec.decode) throw std::invalid_argument("spec: not a decode spec (kind attention_decode)");
  const Shape& sh = spec.shape;
  require_size(in.q, "q", "[batch][q_heads][q_len][head_dim]", {sh.batch, sh.q_heads, sh.q_len, sh.head_dim});
  const DecodeSpec& decode = *spec.decode;
  if (decode.paged()) {
    require_size(in.k, "k", "[kv_heads][pages][page_size][head_dim]",
                 {sh.kv_heads, decode.pages, decode.page_size, sh.head_dim});
    require_size(in.v, "v", "[kv_heads][pages][page_size][head_dim_v]",
                 {sh.kv_heads, decode.pages, decode.page_size, sh.head_dim_v});
    require_size(in.page_table, "page_table", "[batch][kv_len / page_size]", {sh.batch, sh.kv_len / decode.page_size});
    for (std::size_t k = 0; k < in.page_table.size(); ++k)
      if (in.page_table[k] < 0 || in.page_table[k] >= decode.pages)
        throw std::invalid_argument("page_table[" + std::to_string(k) + "]: " + std::to_string(in.page_table[k]) +
                                    " is outside the pool of " + std::to_string(decode.pages) + " pages");
  } else {
    require_size(in.k, "k", "[batch][kv_heads][kv_len][head_dim]", {sh.batch, sh.kv_heads, sh.kv_len, sh.head_dim});
    require_size(in.v, "v", "[batch][kv_heads][kv_len][head_dim_v]", {sh.batch, sh.kv_heads, sh.kv_len, sh.head_dim_v});
    require_absent(in.page_table, "page_table", "paged");
  }
  require_size(in.kv_lens, "kv_lens", "[batch]", {sh.batch});
  for (std::size_t b = 0; b < in.kv_lens.size(); ++b)
    if (in.kv_lens[b] < sh.q_len || in.kv_lens[b] > sh.kv_len)
      throw std::invalid_argument("kv_lens[" + std::to_string(b) + "]: " + std::to_string(in.kv_lens[b]) +
                                  " is outside [q_len, kv_len] = [" + std::to_string(sh.q_len) + ", " +
                                  std::to_string(sh.kv_len) + "]");
  if (spec.sinks)
    require_size(in.sinks, "sinks", "[q_heads]", {sh.q_heads});
  else
    require_absent(in.sinks, "sinks", "sinks");
}

AttentionOutputs dense_decode(const Spec& spec, const DecodeInputs& in) {
  check_decode_inputs(spec, in);
  const Shape& sh = spec.shape;
  const DecodeSpec& decode = *spec.decode;
  AttentionOutputs result;
  result.out.assign(static_cast<std::size_t>(sh.batch * sh.q_heads * sh.q_len * sh.head_dim_v), 0.0);
  result.lse.assign(static_cast<std::size_t>(sh.batch * sh.q_heads * sh.q_len), 0.0);
  std::vector<char> keep(static_cast<std::size_t>(sh.kv_len));
  std::vector<double> s(static_cast<std::size_t>(sh.kv_len));
  // One sequence's cache of one kv head, gathered through the page table: positions in order.
  std::vector<double> k(static_cast<std::size_t>(sh.kv_len * sh.head_dim));
  std::vector<double> v(static_cast<std::size_t>(sh.kv_len * sh.head_dim_v));
  auto gather = [&](const std::vector<double>& pool, int64_t b, int64_t g, int64_t width, std::vector<double>& into) {
    for (int64_t p = 0; p < sh.kv_len; ++p) {
      const double* from =
          decode.paged()
              ? pool.data() + ((g * decode.pages + in.page_table[b * (sh.kv_len / decode.page_size) + p / decode.page_size]) *
                                   decode.page_size + p % decode.page_size) * width
              : pool.data() + ((b * sh.kv_heads + g) * sh.kv_len + p) * width;
      std::copy(from, from + width, into.begin() + p * width);
    }
  };
  const Mask& mask = spec.masks.unique[0];  // decode specs have one mask: causal or local
  for (int64_t b = 0; b < sh.batch; ++b) {
    for (int64_t g = 0; g < sh.kv_heads; ++g) {
      gather(in.k, b, g, sh.head_dim, k);
      gather(in.v, b, g, sh.head_dim_v, v);
      for (int64_t h = g * sh.group(); h < (g + 1) * sh.group(); ++h) {
        for (int64_t t = 0; t < sh.q_len; ++t) {
          const int64_t row_index = (b * sh.q_heads + h) * sh.q_len + t;
          // The mask at the token's position keeps no position past it, so none past kv_lens[b].
          const Row row{in.kv_lens[b] - sh.q_len + t, &mask, nullptr, 0, in.q.data() + row_index * sh.head_dim,
                        k.data(), v.data(), spec.sinks ? &in.sinks[h] : nullptr};
          result.lse[row_index] = attend_row(spec, row, keep, s, result.out.data() + row_index * sh.head_dim_v);
        }
      }
    }
  }
  return result;
}

AttentionOutputs dense_combine(const SplitPartials& p) {
  const double minus_inf = -std::numeric_limits<double>::infinity();
  AttentionOutputs result;
  result.out.assign(static_cast<std::size_t>(p.rows * p.head_dim_v), 0.0);
  result.lse.assign(static_cast<std::size_t>(p.rows), minus_inf);
  for (int64_t r = 0; r < p.rows; ++r) {
    auto lse_of = [&](int64_t s) { return p.lse[static_cast<std::size_t>(r * p.splits + s)]; };
    double m = p.sinks.empty() ? minus_inf : p.sinks[static_cast<std::size_t>(r)];
    for (int64_t s = 0; s < p.splits; ++s) m = std::max(m, lse_of(s));
    if (m == minus_inf) continue;
    double l = p.sinks.empty() ? 0.0 : std::exp(p.sinks[static_cast<std::size_t>(r)] - m);
    for (int64_t s = 0; s < p.splits; ++s) l += std::exp(lse_of(s) - m);
    for (int64_t s = 0; s < p.splits; ++s) {
      const double weight = std::exp(lse_of(s) - m) / l;
      for (int64_t c = 0; c < p.head_dim_v; ++c)
        result.out[static_cast<std::size_t>(r * p.head_dim_v + c)] +=
            weight * p.out[static_cast<std::size_t>((r * p.splits + s) * p.head_dim_v + c)];
    }
    result.lse[static_cast<std::size_t>(r)] = m + std::log(l);
  }
  return result;
}

}  // namespace kgen
