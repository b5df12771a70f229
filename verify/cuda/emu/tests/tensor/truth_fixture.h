// Skips a test, saying why, when this build has no CuTe truth (no nvcc or CUTLASS headers).
#pragma once

#include <gtest/gtest.h>

#include "cute_truth.h"

#define KGEN_REQUIRE_CUTE_TRUTH(name)                                 \
  std::string name##_why;                                             \
  const ::kgen::emu::test::CuteTruth* name = ::kgen::emu::test::cute_truth(&name##_why); \
  if (name == nullptr) GTEST_SKIP() << name##_why
