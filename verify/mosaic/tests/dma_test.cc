// A kernel's own DMAs (tpu.enqueue_dma / tpu.wait_dma2) on the CPU, as dma_runtime.h gives them
// meaning: the bytes land at the wait, the target is undefined (NaN) in between, and every
// misuse a TPU would hang or race on is an error naming the grid step.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "grid_driver.h"
#include "mosaic_error.h"
#include "mosaic_kernel.h"
#include "test_util.h"

namespace kgen::mosaic {
namespace {

// Grid (i) = (3). x is a (4, 8, 128) array in memory space any; step i copies row ROW of x
// (i, by default) into a VMEM buffer by hand, waits (WAIT), and writes the buffer to o's block
// i. Each test plants one misuse through the placeholders: PRELUDE before the copy, BETWEEN
// after its start, LATE after the buffer was read.
struct CopyKernel {
  std::string prelude = "";
  std::string row = "%i";
  std::string between = "";
  std::string wait = "WAIT_ON(%sem)";
  std::string late = "";
};

std::string wait_on(const std::string& semaphore) {
  return "tpu.wait_dma2 semaphore(" + semaphore + " : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) "
         "src(%src : memref<8x128xf32, #tpu.memory_space<any>>) dst(%buf : memref<8x128xf32, #tpu.memory_space<vmem>>)";
}

std::string copy_kernel(const CopyKernel& k = {}) {
  std::string text = R"mlir(
module {
  func.func @copy(%i: i32,
                  %x: memref<4x8x128xf32, #tpu.memory_space<any>>,
                  %o: memref<1x8x128xf32, #tpu.memory_space<vmem>>,
                  %buf: memref<8x128xf32, #tpu.memory_space<vmem>>,
                  %sems: memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) attributes {
      dimension_semantics = [#tpu.dimension_semantics<arbitrary>],
      iteration_bounds = array<i64: 3>, scalar_prefetch = 0 : i64, scratch_operands = 2 : i64,
      tpu.core_type = #tpu.core_type<tc>,
      window_params = [{}, {transform_indices = @transform_1, window_bounds = array<i64: 1, 8, 128>}]} {
    %c0 = arith.constant 0 : index
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    PRELUDE
    %src3 = tpu.memref_slice %x[ROW, %c0_i32, %c0_i32] : memref<4x8x128xf32, #tpu.memory_space<any>> -> memref<1x8x128xf32, #tpu.memory_space<any>>
    %src = tpu.memref_squeeze %src3 : memref<1x8x128xf32, #tpu.memory_space<any>> -> memref<8x128xf32, #tpu.memory_space<any>>
    %sem1 = tpu.memref_slice %sems[%c0_i32] : memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    %sem = tpu.memref_squeeze %sem1 : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    %other1 = tpu.memref_slice %sems[%c1_i32] : memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    %other = tpu.memref_squeeze %other1 : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    tpu.enqueue_dma source(%src : memref<8x128xf32, #tpu.memory_space<any>>) target(%buf : memref<8x128xf32, #tpu.memory_space<vmem>>) target_semaphore(%sem : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
    BETWEEN
    WAIT
    %v = vector.load %buf[%c0, %c0] : memref<8x128xf32, #tpu.memory_space<vmem>>, vector<8x128xf32>
    %v3 = vector.shape_cast %v : vector<8x128xf32> to vector<1x8x128xf32>
    tpu.vector_store %o[%c0, %c0, %c0], %v3 {strides = array<i32>} : memref<1x8x128xf32, #tpu.memory_space<vmem>>, vector<1x8x128xf32>,
    LATE
    return
  }
  func.func @transform_1(%i: i32) -> (i32, i32, i32) {
    %c0 = arith.constant 0 : i32
    return %i, %c0, %c0 : i32, i32, i32
  }
}
)mlir";
  auto put = [&](const std::string& tag, std::string value) {
    if (value.rfind("WAIT_ON(", 0) == 0) value = wait_on(value.substr(8, value.size() - 9));
    text.replace(text.find(tag), tag.size(), value);
  };
  put("PRELUDE", k.prelude);
  put("ROW", k.row);
  put("BETWEEN", k.between);
  put("WAIT", k.wait);
  put("LATE", k.late);
  return text;
}

struct Outcome {
  GridStats stats;
  std::vector<float> out;
};

Outcome run(const std::string& kernel_text) {
  MosaicKernel kernel(kernel_text);
  std::vector<float> values(4 * 8 * 128);
  for (std::size_t e = 0; e < values.size(); ++e) values[e] = static_cast<float>(e);
  HostArray x = testing::f32_array({4, 8, 128}, values);
  HostArray o({3, 8, 128}, DType::kF32);
  Outcome result;
  result.stats = run_grid(kernel, {}, {{x.view(), ArrayRole::kInput}, {o.view(), ArrayRole::kOutput}});
  const float* out = testing::data_of<float>(o);
  result.out.assign(out, out + 3 * 8 * 128);
  return result;
}

std::string error_of(const std::string& kernel_text) {
  try {
    run(kernel_text);
  } catch (const MosaicError& error) {
    return error.what();
  }
  return "";
}

TEST(Dma, CopiesLandAtTheWaitAndAreCountedPerSourceArray) {
  const Outcome result = run(copy_kernel());
  for (int64_t e = 0; e < 3 * 8 * 128; ++e) ASSERT_EQ(result.out[e], static_cast<float>(e)) << e;
  ASSERT_EQ(result.stats.window_dmas.size(), 2u);
  EXPECT_EQ(result.stats.window_dmas[0], 3);  // one copy of x per step
  EXPECT_EQ(result.stats.window_dma_bytes[0], 3 * 8 * 128 * 4);
  EXPECT_EQ(result.stats.window_dmas[1], 0);
}

TEST(Dma, AReadBeforeTheWaitSeesNaN) {
  // The buffer is read into o before the wait: the copy has not landed.
  const Outcome result = run(copy_kernel({.wait = "", .late = "WAIT_ON(%sem)"}));
  EXPECT_TRUE(std::isnan(result.out[0]));
}

TEST(Dma, AWaitOnAnotherSemaphoreWouldNeverReturn) {
  EXPECT_NE(error_of(copy_kernel({.wait = "WAIT_ON(%other)"})).find("never started on this semaphore"), std::string::npos);
}

TEST(Dma, ACopyNeverWaitedForIsAnError) {
  // The last step's copy is left in flight when the grid ends.
  const std::string wait_unless_last = "%c2_i32 = arith.constant 2 : i32\n    %not_last = arith.cmpi slt, %i, %c2_i32 : i32\n"
                                       "    scf.if %not_last {\n      " + wait_on("%sem") + "\n    }";
  EXPECT_NE(error_of(copy_kernel({.wait = wait_unless_last})).find("never waited for"), std::string::npos);
}

TEST(Dma, ACopyFromOutsideTheArrayIsAnErrorNotAStrayRead) {
  // Row i + 2 runs past x's 4 rows at step 2.
  const std::string error = error_of(copy_kernel(
      {.prelude = "%c2_i32 = arith.constant 2 : i32\n    %row = arith.addi %i, %c2_i32 : i32", .row = "%row"}));
  EXPECT_NE(error.find("grid step (2)"), std::string::npos) << error;
  EXPECT_NE(error.find("outside every array"), std::string::npos) << error;
}

TEST(Dma, TwoCopiesInFlightIntoOneBufferRace) {
  const std::string second =
      "tpu.enqueue_dma source(%src : memref<8x128xf32, #tpu.memory_space<any>>) target(%buf : memref<8x128xf32, "
      "#tpu.memory_space<vmem>>) target_semaphore(%other : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)";
  EXPECT_NE(error_of(copy_kernel({.between = second})).find("race"), std::string::npos);
}

}  // namespace
}  // namespace kgen::mosaic
