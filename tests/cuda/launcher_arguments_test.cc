// The generated launcher's argument checks (docs/sm90a-kernel.md, "The launcher API"): every
// bad argument is refused with kInvalidArgument and a message naming it, before any CUDA call,
// so these run on a machine without a GPU. The kernel is tests/cuda/specs/
// sm90a_launcher_checks.json (float16, lse, segment ids and sinks: every optional pointer, and
// the document pre-pass's workspace that segment ids bring).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include KGEN_SM90A_HEADER

namespace kernel = kgen::sm90a_launcher_checks_sm90a;

namespace {

// Stand-ins for device pointers: the checks look at nullness and alignment only.
alignas(256) unsigned char storage[9 * 256];

const void* at(int slot, int offset = 0) { return storage + 256 * slot + offset; }

kernel::Arguments valid_arguments() {
  kernel::Arguments args;
  args.q = at(0);
  args.k = at(1);
  args.v = at(2);
  args.out = const_cast<void*>(at(3));
  args.lse = static_cast<float*>(const_cast<void*>(at(4)));
  args.q_segment_ids = static_cast<const int32_t*>(at(5));
  args.kv_segment_ids = static_cast<const int32_t*>(at(6));
  args.sinks = static_cast<const float*>(at(7));
  args.document_tiles = static_cast<int32_t*>(const_cast<void*>(at(8)));
  return args;
}

// Fails unless launch() refuses `args` as an invalid argument with a message containing `what`.
void expect_refused(const kernel::Arguments& args, const std::string& what) {
  const kernel::Result result = kernel::launch(args, nullptr);
  EXPECT_FALSE(result);
  EXPECT_EQ(result.status, kernel::Status::kInvalidArgument);
  EXPECT_EQ(result.cuda_error, cudaSuccess);
  ASSERT_NE(result.message, nullptr);
  EXPECT_NE(std::string(result.message).find(what), std::string::npos) << "message: " << result.message;
}

bool have_device() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

TEST(LauncherArguments, ValidArgumentsPassTheChecks) {
  if (have_device()) GTEST_SKIP() << "a GPU is present: the harness (make verify-gpu) launches for real";
  // Without a device the first CUDA call fails: a CUDA error, not an argument error.
  const kernel::Result result = kernel::launch(valid_arguments(), nullptr);
  EXPECT_FALSE(result);
  EXPECT_EQ(result.status, kernel::Status::kCudaError) << result.message;
  EXPECT_NE(result.cuda_error, cudaSuccess);
}

TEST(LauncherArguments, NullTensors) {
  const char* what = "q, k, v and out must be device pointers, not null";
  for (int which = 0; which < 4; ++which) {
    kernel::Arguments args = valid_arguments();
    if (which == 0) args.q = nullptr;
    if (which == 1) args.k = nullptr;
    if (which == 2) args.v = nullptr;
    if (which == 3) args.out = nullptr;
    SCOPED_TRACE(which);
    expect_refused(args, what);
  }
}

TEST(LauncherArguments, TensorsNotAlignedForTma) {
  const char* what = "q, k, v and out must be 16-byte aligned (TMA)";
  for (int which = 0; which < 4; ++which) {
    kernel::Arguments args = valid_arguments();
    // 8 bytes: aligned for the elements, not for TMA.
    if (which == 0) args.q = at(0, 8);
    if (which == 1) args.k = at(1, 8);
    if (which == 2) args.v = at(2, 8);
    if (which == 3) args.out = const_cast<void*>(at(3, 8));
    SCOPED_TRACE(which);
    expect_refused(args, what);
  }
}

// Each stride of each tensor, set to a value TMA cannot use: not positive, not a multiple
// of 16 bytes (8 float16 elements), or 2^40 bytes or more.
TEST(LauncherArguments, StridesTmaCannotUse) {
  const int64_t bad_values[] = {0, -8, 4, 12, (int64_t{1} << 40) / 2};
  const char* names[] = {"q_strides", "k_strides", "v_strides", "out_strides"};
  for (int tensor = 0; tensor < 4; ++tensor) {
    for (int component = 0; component < 3; ++component) {
      for (int64_t bad : bad_values) {
        kernel::Arguments args = valid_arguments();
        kernel::Strides* strides[] = {&args.q_strides, &args.k_strides, &args.v_strides, &args.out_strides};
        int64_t* fields[] = {&strides[tensor]->batch, &strides[tensor]->head, &strides[tensor]->row};
        *fields[component] = bad;
        SCOPED_TRACE(std::string(names[tensor]) + " component " + std::to_string(component) + " = " +
                     std::to_string(bad));
        expect_refused(args, std::string(names[tensor]) + ": every stride must be a positive multiple of 8 elements");
      }
    }
  }
}

TEST(LauncherArguments, LargestUsableStrideIsAccepted) {
  if (have_device()) GTEST_SKIP() << "a GPU is present: fake pointers cannot be launched";
  kernel::Arguments args = valid_arguments();
  args.q_strides.batch = (int64_t{1} << 40) / 2 - 8;  // just under 2^40 bytes
  EXPECT_EQ(kernel::launch(args, nullptr).status, kernel::Status::kCudaError);
}

TEST(LauncherArguments, Lse) {
  kernel::Arguments args = valid_arguments();
  args.lse = nullptr;
  expect_refused(args, "lse must be a 4-byte aligned device pointer, not null");
  args.lse = static_cast<float*>(const_cast<void*>(at(4, 2)));
  expect_refused(args, "lse must be a 4-byte aligned device pointer, not null");
}

TEST(LauncherArguments, SegmentIds) {
  const char* q_what = "q_segment_ids must be a 4-byte aligned device pointer, not null";
  const char* kv_what = "kv_segment_ids must be a 4-byte aligned device pointer, not null";
  kernel::Arguments args = valid_arguments();
  args.q_segment_ids = nullptr;
  expect_refused(args, q_what);
  args = valid_arguments();
  args.kv_segment_ids = nullptr;
  expect_refused(args, kv_what);
  args = valid_arguments();
  args.q_segment_ids = static_cast<const int32_t*>(at(5, 2));
  expect_refused(args, q_what);
  args = valid_arguments();
  args.kv_segment_ids = static_cast<const int32_t*>(at(6, 1));
  expect_refused(args, kv_what);
}

TEST(LauncherArguments, Sinks) {
  kernel::Arguments args = valid_arguments();
  args.sinks = nullptr;
  expect_refused(args, "sinks must be a 4-byte aligned device pointer, not null");
  args.sinks = static_cast<const float*>(at(7, 2));
  expect_refused(args, "sinks must be a 4-byte aligned device pointer, not null");
}

TEST(LauncherArguments, DocumentTilesWorkspace) {
  static_assert(kernel::kDocumentTilesInts > 0, "segment ids bring the document pre-pass");
  kernel::Arguments args = valid_arguments();
  args.document_tiles = nullptr;
  expect_refused(args, "document_tiles must be a 4-byte aligned device pointer, not null");
  args.document_tiles = static_cast<int32_t*>(const_cast<void*>(at(8, 2)));
  expect_refused(args, "document_tiles must be a 4-byte aligned device pointer, not null");
}

}  // namespace
