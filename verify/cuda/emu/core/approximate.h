// Approximate instructions (ex2.approx, rcp.approx, div.approx/full, tanh.approx, ...): the
// exact value perturbed, by the launch seed, anywhere within the error bound the PTX ISA
// documents for the instruction. A kernel verified here therefore holds for every result the
// hardware may legally return, not for one lucky rounding.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/machine.h"

namespace kgen::emu {

// The documented bounds (PTX ISA, "Floating Point Instructions").
struct ErrorBound {
  double relative = 0;  // |result - exact| <= relative * |exact| ...
  double absolute = 0;  // ... + absolute
};
inline constexpr ErrorBound kEx2Approx{0x1p-22, 0};
inline constexpr ErrorBound kLg2Approx{0, 0x1p-22};
inline constexpr ErrorBound kRcpApprox{0x1p-23, 0};     // 1 ulp
inline constexpr ErrorBound kSqrtApprox{0x1p-23, 0};
inline constexpr ErrorBound kRsqrtApprox{0x1p-22, 0};
inline constexpr ErrorBound kDivApprox{0x1p-22, 0};     // 2 ulp
inline constexpr ErrorBound kTanhApprox{0x1p-11, 0};
inline constexpr ErrorBound kSinCosApprox{0, 0x1p-20};

// A deterministic value in [-1, 1] from the launch seed, the instruction and the thread.
inline double perturbation(const Warp& w, const Decoded& d, int lane) {
  uint64_t x = w.cta->launch->seed * 0x9e3779b97f4a7c15ull ^ (uint64_t{d.in->line} << 32) ^
               (uint64_t{w.cta->linear_id} << 12) ^ w.lane_thread(lane) ^ (w.instructions << 40);
  x = (x ^ (x >> 31)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 29)) * 0x94d049bb133111ebull;
  x ^= x >> 32;
  return static_cast<double>(x >> 11) * 0x1p-52 - 1.0;
}

inline float approximate(double exact, ErrorBound bound, const Warp& w, const Decoded& d, int lane) {
  if (!std::isfinite(exact)) return static_cast<float>(exact);
  const double error = bound.relative * std::fabs(exact) + bound.absolute;
  return static_cast<float>(exact + perturbation(w, d, lane) * error);
}

}  // namespace kgen::emu
