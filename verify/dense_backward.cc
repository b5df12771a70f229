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
                                            const BackwardResiduals& res) {
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

  for (int64_t b = 0; b < sh.batch; ++b) {
    for (int64_t h = 0; h < sh.q_heads; ++h) {
      const int64_t g = h / sh.group();
      const Mask& mask = spec.masks.of_head(h);
      const int64_t kv_row0 = (b * sh.kv_heads + g) * sh.kv_len;
      for (int64_t i = 0; i < sh.q_len; ++i) {
        const int64_t row = (b * sh.q_heads + h) * sh.q_len + i;
        const double lse = res.lse[row];
        if (std::isinf(lse) && lse < 0) continue;  // nothing attended: no gradient flows
        const double* q = in.q.data() + row * d;
        const double* dout = res.dout.data() + row * dv;
        const double delta = dot(dout, res.out.data() + row * dv, dv);
        if (spec.sinks) grad.dsinks[h] -= std::exp(double{in.sinks[h]} - lse) * delta;
        for (int64_t j = 0; j < sh.kv_len; ++j) {
          if (!mask.allowed(i, j)) continue;
          if (spec.segment_ids && in.q_segment_ids[b * sh.q_len + i] != in.kv_segment_ids[b * sh.kv_len + j]) continue;
          const double* k = in.k.data() + (kv_row0 + j) * d;
          const double* v = in.v.data() + (kv_row0 + j) * dv;
          const double s_raw = spec.scale * dot(q, k, d);
          const double t = spec.softcap ? std::tanh(s_raw / *spec.softcap) : 0.0;
          const double s = spec.softcap ? *spec.softcap * t : s_raw;
          const double p = std::exp(s - lse);
          const double dp = dot(dout, v, dv);
          const double ds = p * (dp - delta) * (spec.softcap ? 1.0 - t * t : 1.0);
          double* dq = grad.dq.data() + row * d;
          double* dk = grad.dk.data() + (kv_row0 + j) * d;
          double* dvj = grad.dv.data() + (kv_row0 + j) * dv;
          for (int64_t c = 0; c < d; ++c) {
            dq[c] += spec.scale * ds * k[c];
            dk[c] += spec.scale * ds * q[c];
          }
          for (int64_t c = 0; c < dv; ++c) dvj[c] += p * dout[c];
        }
      }
    }
  }
  return grad;
}

}  // namespace kgen
