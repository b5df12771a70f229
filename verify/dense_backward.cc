#include "dense_backward.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace kgen {
namespace {

void require_size(const std::vector<double>& array, const char* name, int64_t expected) {
  if (static_cast<int64_t>(array.size()) != expected)
    throw std::invalid_argument(std::string(name) + ": expected " + std::to_string(expected) + " values, got " +
                                std::to_string(array.size()));
}

double dot(const double* a, const double* b, int64_t n) {
  double sum = 0;
  for (int64_t c = 0; c < n; ++c) sum += a[c] * b[c];
  return sum;
}

}  // namespace

AttentionGradients dense_attention_backward(const Spec& spec, const AttentionInputs& in,
                                            const BackwardResiduals& res, const GradientRows& only) {
  check_attention_inputs(spec, in);
  const Shape& sh = spec.shape;
  const int64_t d = sh.head_dim, dv = sh.head_dim_v;
  const int64_t rows = sh.batch * sh.q_heads * sh.q_len;
  require_size(res.out, "out", rows * dv);
  require_size(res.dout, "dout", rows * dv);
  require_size(res.lse, "lse", rows);

  AttentionGradients grad;
  grad.dq.assign(static_cast<std::size_t>(rows * d), 0.0);
  grad.dk.assign(static_cast<std::size_t>(sh.batch * sh.kv_heads * sh.kv_len * d), 0.0);
  grad.dv.assign(static_cast<std::size_t>(sh.batch * sh.kv_heads * sh.kv_len * dv), 0.0);
  if (spec.sinks) grad.dsinks.assign(static_cast<std::size_t>(sh.q_heads), 0.0);

  auto row_of = [&](int64_t b, int64_t h, int64_t i) { return (b * sh.q_heads + h) * sh.q_len + i; };
  auto attended = [&](int64_t row) { return !(std::isinf(res.lse[row]) && res.lse[row] < 0); };
  auto delta = [&](int64_t row) { return dot(res.dout.data() + row * dv, res.out.data() + row * dv, dv); };
  // p[i][j] and ds[i][j] of §7 for a kept (i, j) of an attended row; false when not kept.
  auto entry = [&](int64_t b, int64_t h, int64_t i, int64_t j, double delta_i, double& p, double& ds) {
    if (!spec.masks.of_head(h).allowed(i, j)) return false;
    if (spec.segment_ids && in.q_segment_ids[b * sh.q_len + i] != in.kv_segment_ids[b * sh.kv_len + j]) return false;
    const int64_t row = row_of(b, h, i), kv_row = (b * sh.kv_heads + h / sh.group()) * sh.kv_len + j;
    const double s_raw = spec.scale * dot(in.q.data() + row * d, in.k.data() + kv_row * d, d);
    const double t = spec.softcap ? std::tanh(s_raw / *spec.softcap) : 0.0;
    const double s = spec.softcap ? *spec.softcap * t : s_raw;
    p = std::exp(s - res.lse[row]);
    const double dp = dot(res.dout.data() + row * dv, in.v.data() + kv_row * dv, dv);
    ds = p * (dp - delta_i) * (spec.softcap ? 1.0 - t * t : 1.0);
    return true;
  };

  // dq and dsinks, row by row.
  for (int64_t b = 0; b < sh.batch; ++b) {
    for (int64_t h = 0; h < sh.q_heads; ++h) {
      const bool sums_sink = spec.sinks && (!only.dsinks || only.dsinks(b, h));
      const int64_t kv_row0 = (b * sh.kv_heads + h / sh.group()) * sh.kv_len;
      for (int64_t i = 0; i < sh.q_len; ++i) {
        const int64_t row = row_of(b, h, i);
        const bool wants_dq = !only.dq || only.dq(b, h, i);
        if ((!wants_dq && !sums_sink) || !attended(row)) continue;  // nothing attended: no gradient flows
        const double delta_i = delta(row);
        if (sums_sink) grad.dsinks[h] -= std::exp(double{in.sinks[h]} - res.lse[row]) * delta_i;
        if (!wants_dq) continue;
        double* dq = grad.dq.data() + row * d;
        for (int64_t j = 0; j < sh.kv_len; ++j) {
          double p, ds;
          if (!entry(b, h, i, j, delta_i, p, ds)) continue;
          const double* k = in.k.data() + (kv_row0 + j) * d;
          for (int64_t c = 0; c < d; ++c) dq[c] += spec.scale * ds * k[c];
        }
      }
    }
  }

  // dk and dv, kv row by kv row, summed over every q head of the group.
  for (int64_t b = 0; b < sh.batch; ++b) {
    for (int64_t g = 0; g < sh.kv_heads; ++g) {
      std::vector<int64_t> wanted;
      for (int64_t j = 0; j < sh.kv_len; ++j)
        if (!only.dkv || only.dkv(b, g, j)) wanted.push_back(j);
      if (wanted.empty()) continue;
      for (int64_t h = g * sh.group(); h < (g + 1) * sh.group(); ++h) {
        for (int64_t i = 0; i < sh.q_len; ++i) {
          const int64_t row = row_of(b, h, i);
          if (!attended(row)) continue;
          const double delta_i = delta(row);
          const double* q = in.q.data() + row * d;
          const double* dout = res.dout.data() + row * dv;
          for (int64_t j : wanted) {
            double p, ds;
            if (!entry(b, h, i, j, delta_i, p, ds)) continue;
            const int64_t kv_row = (b * sh.kv_heads + g) * sh.kv_len + j;
            double* dk = grad.dk.data() + kv_row * d;
            double* dvj = grad.dv.data() + kv_row * dv;
            for (int64_t c = 0; c < d; ++c) dk[c] += spec.scale * ds * q[c];
            for (int64_t c = 0; c < dv; ++c) dvj[c] += p * dout[c];
          }
        }
      }
    }
  }
  return grad;
}

}  // namespace kgen
