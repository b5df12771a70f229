// ex2 lg2 rcp sqrt rsqrt sin cos tanh (and testp): exact where PTX asks for IEEE rounding
// (.rn), and within the documented error, perturbed by the seed, where it says .approx.
#include <cmath>

#include "core/approximate.h"
#include "core/decode.h"
#include "core/lanes.h"

namespace kgen::emu {
namespace {

enum Function : uint8_t { kEx2, kLg2, kRcp, kSqrt, kRsqrt, kSin, kCos, kTanh, kTestp };

double exact(Function f, double x) {
  switch (f) {
    case kEx2: return std::exp2(x);
    case kLg2: return std::log2(x);
    case kRcp: return 1.0 / x;
    case kSqrt: return std::sqrt(x);
    case kRsqrt: return 1.0 / std::sqrt(x);
    case kSin: return std::sin(x);
    case kCos: return std::cos(x);
    case kTanh: return std::tanh(x);
    default: return 0;
  }
}

ErrorBound bound(Function f) {
  switch (f) {
    case kEx2: return kEx2Approx;
    case kLg2: return kLg2Approx;
    case kRcp: return kRcpApprox;
    case kSqrt: return kSqrtApprox;
    case kRsqrt: return kRsqrtApprox;
    case kSin: case kCos: return kSinCosApprox;
    case kTanh: return kTanhApprox;
    default: return {};
  }
}

Step run_function(Warp& w, const Decoded& d, uint32_t mask) {
  const Function f = static_cast<Function>(d.mode);
  for_each_lane(mask, [&](int lane) {
    const uint64_t a = w.get(op(d, 1), lane, d);
    uint64_t result;
    if (d.type == Type::f64) {
      result = bits(exact(f, f64(a)));
    } else if (d.type == Type::f32) {
      float x = f32(a);
      if (d.ftz) x = flush(x);
      float r;
      if (d.approx) {
        const double e = exact(f, x);
        // Special values are exact: infinities, zeros and NaN come out as IEEE says.
        r = std::isfinite(e) && e != 0 ? approximate(e, bound(f), w, d, lane) : static_cast<float>(e);
        if (f == kTanh) r = std::clamp(r, -1.0f, 1.0f);
      } else {
        r = to_f32(exact(f, x), d.rounding == Rounding::none ? Rounding::rn : d.rounding);
        if (f == kRcp) r = to_f32(1.0 / double{x}, d.rounding);  // correctly rounded
        if (f == kSqrt) r = std::sqrt(x);
      }
      if (d.ftz) r = flush(r);
      result = bits(r);
    } else if (d.type == Type::f16 || d.type == Type::bf16 || d.type == Type::f16x2 || d.type == Type::bf16x2) {
      const bool brain = d.type == Type::bf16 || d.type == Type::bf16x2;
      const int halves = d.type == Type::f16x2 || d.type == Type::bf16x2 ? 2 : 1;
      result = 0;
      for (int h = 0; h < halves; ++h) {
        const uint16_t v = static_cast<uint16_t>(a >> (16 * h));
        const double e = exact(f, brain ? from_bf16(v) : from_f16(v));
        const float r = approximate(e, {0x1p-10, 0}, w, d, lane);
        result |= uint64_t{brain ? to_bf16(r) : to_f16(r)} << (16 * h);
      }
    } else {
      w.fail(d, "unsupported type");
    }
    w.set(op(d, 0), lane, result, d);
  });
  return Step::next;
}

// testp.op.f32 p, a: finite, infinite, number, notanumber, normal, subnormal.
Step run_testp(Warp& w, const Decoded& d, uint32_t mask) {
  for_each_lane(mask, [&](int lane) {
    const double x = d.type == Type::f64 ? f64(w.get(op(d, 1), lane, d)) : f32(w.get(op(d, 1), lane, d));
    bool r = false;
    switch (d.mode2) {
      case 0: r = std::isfinite(x); break;
      case 1: r = std::isinf(x); break;
      case 2: r = !std::isnan(x); break;
      case 3: r = std::isnan(x); break;
      case 4: r = std::fpclassify(d.type == Type::f64 ? x : static_cast<float>(x)) == FP_NORMAL; break;
      case 5: r = std::fpclassify(d.type == Type::f64 ? x : static_cast<float>(x)) == FP_SUBNORMAL; break;
    }
    w.set(op(d, 0), lane, r, d);
  });
  return Step::next;
}

}  // namespace

void decode_special_function(const ptx::Instruction& in, const Modifiers& m, Decoded& d) {
  static const std::pair<const char*, Function> names[] = {
      {"ex2", kEx2}, {"lg2", kLg2}, {"rcp", kRcp}, {"sqrt", kSqrt}, {"rsqrt", kRsqrt},
      {"sin", kSin}, {"cos", kCos}, {"tanh", kTanh}, {"testp", kTestp},
  };
  for (const auto& [name, f] : names)
    if (in.parts[0] == name) d.mode = f;
  d.type = m.last_type();
  d.ftz = m.ftz;
  d.approx = m.approx;
  d.rounding = m.rounding;
  if (d.mode == kTestp) {
    static const char* ops[] = {"finite", "infinite", "number", "notanumber", "normal", "subnormal"};
    bool found = false;
    for (uint8_t k = 0; k < 6; ++k)
      if (m.has(ops[k])) d.mode2 = k, found = true;
    if (!found) throw Unsupported{"testp operation"};
    d.run = run_testp;
    return;
  }
  if (!m.words.empty()) throw Unsupported{"modifier ." + m.words[0]};
  if (d.type == Type::f32 && !d.approx && d.mode != kRcp && d.mode != kSqrt)
    throw Unsupported{"only .approx forms of this function exist for f32"};
  d.run = run_function;
}

}  // namespace kgen::emu
