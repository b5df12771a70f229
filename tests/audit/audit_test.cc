// kgen-audit on a hand-written sample kernel (testdata/audit_sample/: CuTe tensors, dynamic
// shared memory, a launcher, a MANIFEST.json interface). The clean sample passes; each test
// plants one kind of violation in a copy and expects exactly the findings it causes, each
// with its rule and file:line. Every test parses the copy with Clang twice (device and host
// pass) against the CUDA and CUTLASS headers.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include <gtest/gtest.h>

#include "audit.h"

namespace {

namespace fs = std::filesystem;
namespace rule = kgen::audit::rule;

const fs::path kTestdata = KGEN_AUDIT_TESTDATA;
const fs::path kScratch = KGEN_AUDIT_SCRATCH;
const char* const kKernel = "audit_sample.sm90a.cu";
const char* const kHeader = "audit_sample.sm90a.h";
const char* const kManifest = "MANIFEST.json";

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// A text edit of one file of the copy: the first occurrence of `find` becomes `replace`.
struct Edit {
  std::string file;
  std::string find;
  std::string replace;
};

// An expected finding: `rule` on the line of the copy's `file` where `needle` first occurs
// (line 1 when the needle is empty).
struct Expect {
  std::string rule;
  std::string file;
  std::string needle;
};

struct Plant {
  std::string name;
  std::vector<Edit> edits;
  std::vector<Expect> expect;
};

// Test names and failure messages show the plant's name, not its bytes.
void PrintTo(const Plant& plant, std::ostream* out) { *out << plant.name; }

unsigned line_of(const std::string& text, const std::string& needle) {
  const std::size_t at = text.find(needle);
  if (at == std::string::npos) return 0;
  return 1 + static_cast<unsigned>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
}

// A fresh copy of the sample: <scratch>/<test>/audit_sample/.
fs::path copy_sample(const std::string& test) {
  const fs::path root = kScratch / test;
  fs::remove_all(root);
  fs::create_directories(root);
  fs::copy(kTestdata / "audit_sample", root / "audit_sample", fs::copy_options::recursive);
  return root;
}

using Key = std::tuple<std::string, std::string, unsigned>;  // rule, file name, line

std::string describe(const std::set<Key>& keys) {
  std::string text;
  for (const auto& [rule_id, file, line] : keys) text += "  " + file + ":" + std::to_string(line) + " [" + rule_id + "]\n";
  return text.empty() ? "  (none)\n" : text;
}

// Applies the plant's edits to the copy under `root` and checks the audit's findings.
void check_plant(const Plant& plant, const fs::path& root, kgen::audit::ParseCache* cache) {
  SCOPED_TRACE("plant " + plant.name);
  const fs::path folder = root / "audit_sample";
  for (const Edit& edit : plant.edits) {
    std::string text = read(folder / edit.file);
    const std::size_t at = text.find(edit.find);
    ASSERT_NE(at, std::string::npos) << "the sample no longer contains: " << edit.find;
    text.replace(at, edit.find.size(), edit.replace);
    write(folder / edit.file, text);
  }
  std::set<Key> expected;
  for (const Expect& expect : plant.expect) {
    const unsigned line = expect.needle.empty() ? 1 : line_of(read(folder / expect.file), expect.needle);
    ASSERT_NE(line, 0u) << expect.file << " has no line with: " << expect.needle;
    expected.insert({expect.rule, expect.file, line});
  }

  const kgen::audit::AuditReport report =
      kgen::audit::audit_generated(root.string(), "audit_sample", kgen::audit::default_toolchain(), cache);
  std::set<Key> found;
  std::string messages;
  for (const kgen::audit::Finding& finding : report.findings) {
    EXPECT_EQ(fs::path(finding.file).parent_path(), folder) << finding.str();
    found.insert({finding.rule, fs::path(finding.file).filename().string(), finding.line});
    messages += "  " + finding.str() + "\n";
  }
  EXPECT_EQ(found, expected) << "expected:\n" << describe(expected) << "found:\n" << messages;
  EXPECT_EQ(report.audited.size(), 1u);
}

class PlantedViolation : public ::testing::TestWithParam<Plant> {};

TEST_P(PlantedViolation, IsFoundWithItsRuleAndLine) {
  const fs::path root = copy_sample(GetParam().name);
  check_plant(GetParam(), root, nullptr);
  if (!HasFailure()) fs::remove_all(root);
}

const std::string kKernelDeclaration = "softmax_kernel(const Element* __restrict__ in";
const std::string kLaunch = "softmax_kernel<<<";
const std::string kLaunchStatement =
    "  softmax_kernel<<<grid, kThreads, kSharedBytes, stream>>>(\n"
    "      static_cast<const Element*>(args.in), static_cast<Element*>(args.out), args.lse, kRows);\n";
const std::string kSetAttribute = "cudaFuncSetAttribute(\n      softmax_kernel";
const std::string kCast = "reinterpret_cast<SharedStorage*>(shared_memory)";
const std::string kGuard = "  if (row >= rows) return;\n";

const std::vector<Plant> kPlants = {
    {"clean", {}, {}},
    // -- the interface
    {"entry_point_not_in_interface",
     {{kKernel, "}  // namespace\n\nResult launch",
       "__global__ void __launch_bounds__(32) stray_kernel(float* __restrict__ x) { x[threadIdx.x] = 0.f; }\n\n"
       "}  // namespace\n\nResult launch"}},
     {{rule::kEntryPoints, kKernel, "stray_kernel(float*"}}},
    {"param_type_differs",
     {{kKernel, "float* __restrict__ lse, int rows) {", "float* __restrict__ lse, int64_t rows) {"}},
     {{rule::kKernelParams, kKernel, "int64_t rows) {"}}},
    {"launch_bounds_differ",
     {{kKernel, "__launch_bounds__(kThreads, 1)", "__launch_bounds__(kThreads, 2)"}},
     {{rule::kLaunchBounds, kKernel, kKernelDeclaration}}},
    {"launch_bounds_missing",
     {{kKernel, "__global__ void __launch_bounds__(kThreads, 1)", "__global__ void"}},
     {{rule::kLaunchBounds, kKernel, kKernelDeclaration}}},
    {"kernel_needs_more_than_the_interface_declares",
     {{kKernel, "  float warp_sum[kWarps];\n", "  float warp_sum[kWarps];\n  float spare[64];\n"}},
     {{rule::kDynamicSmem, kKernel, kCast},
      {rule::kLaunchSmem, kKernel, kSetAttribute},
      {rule::kLaunchSmem, kKernel, kLaunch}}},
    // -- the launch: grid, threads per block and shared memory against the interface's "launch"
    {"launch_threads_256_where_384_needed",  // issue 9's case
     {{kKernel, "<<<grid, kThreads, kSharedBytes, stream>>>", "<<<grid, 256, kSharedBytes, stream>>>"}},
     {{rule::kLaunchThreads, kKernel, kLaunch}}},
    {"launch_grid_differs",
     {{kKernel, "const dim3 grid(kRows, 1, 1);", "const dim3 grid(kRows / 2, 1, 1);"}},
     {{rule::kLaunchGrid, kKernel, kLaunch}}},
    {"launch_block_not_constant",
     {{kKernel, "<<<grid, kThreads,", "<<<grid, kThreads - (args.lse ? 0 : 128),"}},
     {{rule::kLaunchNotConstant, kKernel, kLaunch}}},
    {"launch_missing",
     {{kKernel, kLaunchStatement, ""}},
     {{rule::kLaunchMissing, kKernel, kKernelDeclaration}}},
    {"launch_kernel_ex_with_256_threads",
     {{kKernel, kLaunchStatement,
       "  cudaLaunchConfig_t config = {};\n  config.gridDim = grid;\n  config.blockDim = 256;\n"
       "  config.dynamicSmemBytes = kSharedBytes;\n  config.stream = stream;\n"
       "  error = cudaLaunchKernelEx(&config, softmax_kernel, static_cast<const Element*>(args.in),\n"
       "                             static_cast<Element*>(args.out), args.lse, kRows);\n"}},
     {{rule::kLaunchThreads, kKernel, "cudaLaunchKernelEx(&config"}}},
    {"cuda_launch_kernel_with_another_grid",
     {{kKernel, kLaunchStatement,
       "  const void* in = args.in;\n  void* out = args.out;\n  int rows = kRows;\n"
       "  void* kernel_args[] = {&in, &out, const_cast<float**>(&args.lse), &rows};\n"
       "  error = cudaLaunchKernel(softmax_kernel, dim3(kRows, 2), kThreads, kernel_args, kSharedBytes, stream);\n"}},
     {{rule::kLaunchGrid, kKernel, "cudaLaunchKernel(softmax_kernel"}}},
    {"launch_requests_less_than_the_kernel_needs",
     {{kKernel, "<<<grid, kThreads, kSharedBytes, stream>>>", "<<<grid, kThreads, kSharedBytes - 64, stream>>>"}},
     {{rule::kLaunchSmem, kKernel, kLaunch}}},
    {"launch_requests_more_than_the_interface_declares",
     {{kKernel, "<<<grid, kThreads, kSharedBytes, stream>>>", "<<<grid, kThreads, kSharedBytes + 128, stream>>>"}},
     {{rule::kLaunchSmem, kKernel, kLaunch}}},
    {"launch_above_48k_without_opt_in",
     {{kKernel, "cudaFuncSetAttribute(\n      softmax_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes)",
       "cudaSuccess"}},
     {{rule::kLaunchSmem, kKernel, kLaunch}}},
    {"smem_attribute_differs",
     {{kKernel, "cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes)",
       "cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024)"}},
     {{rule::kLaunchSmem, kKernel, kSetAttribute}}},
    // -- names and families
    {"second_kernel_family",
     {{kKernel, "}  // namespace audit_sample_sm90a\n",
       "}  // namespace audit_sample_sm90a\n\nnamespace other_sm90a {\n"
       "__global__ void __launch_bounds__(32) other_kernel(float* __restrict__ x) { x[threadIdx.x] = 0.f; }\n"
       "}  // namespace other_sm90a\n"}},
     {{rule::kKernelFamilies, kKernel, "other_kernel(float*"},
      {rule::kKernelNamespace, kKernel, "other_kernel(float*"},
      {rule::kEntryPoints, kKernel, "other_kernel(float*"}}},
    // -- lint rules
    {"local_array_dynamic_index",
     {{kKernel, "partial[v % 2] += values[v];", "partial[lane % 2] += values[v];"}},
     {{rule::kLocalArrayIndex, kKernel, "partial[lane % 2]"}}},
    {"local_array_in_a_loop_not_unrolled",
     {{kKernel, "  CUTE_UNROLL\n  for (int v = 0; v < kValues; ++v) {\n    values[v] = float(",
       "  for (int v = 0; v < kValues; ++v) {\n    values[v] = float("}},
     {{rule::kLocalArrayIndex, kKernel, "values[v] = float("},
      {rule::kLocalArrayIndex, kKernel, "local_max = fmaxf(local_max, values[v]);"}}},
    {"local_array_in_an_unrolled_loop_with_runtime_bounds",
     {{kKernel, "  for (int v = 0; v < kValues; ++v) {\n    values[v] = expf(",
       "  for (int v = 0; v < kValues - (rows & 1); ++v) {\n    values[v] = expf("}},
     {{rule::kLocalArrayIndex, kKernel, "values[v] = expf("},
      {rule::kLocalArrayIndex, kKernel, "partial[v % 2] += values[v];"},
      {rule::kLocalArrayIndex, kKernel, "s_row(thread + kThreads * v) = values[v];"}}},
    {"double_arithmetic",
     {{kKernel, "float(g_in(thread + kThreads * v)) * kScale;", "float(g_in(thread + kThreads * v)) * 0.125;"}},
     {{rule::kDoubleArithmetic, kKernel, "* 0.125;"}}},
    {"double_math_call",
     {{kKernel, "lse[row] = row_max + logf(total);", "lse[row] = row_max + float(log(double(total)));"}},
     {{rule::kDoubleMathCall, kKernel, "float(log(double(total)))"},
      {rule::kDoubleArithmetic, kKernel, "float(log(double(total)))"}}},
    {"double_in_the_launcher_header",
     {{kHeader, "inline constexpr int kCols = 12288;\n",
       "inline constexpr int kCols = 12288;\n\n__device__ inline float twice(float x) { return x * 2.0; }\n"}},
     {{rule::kDoubleArithmetic, kHeader, "return x * 2.0;"}}},
    {"device_printf",
     {{kKernel, kGuard, kGuard + "  if (threadIdx.x == 0) printf(\"row %d\\n\", row);\n"}},
     {{rule::kDevicePrintf, kKernel, "printf(\"row"}}},
    {"device_malloc",
     {{kKernel, kGuard, kGuard + "  float* scratch = static_cast<float*>(malloc(64));\n  free(scratch);\n"}},
     {{rule::kDeviceMalloc, kKernel, "malloc(64)"}, {rule::kDeviceMalloc, kKernel, "free(scratch)"}}},
    {"device_new",
     {{kKernel, kGuard, kGuard + "  float* scratch = new float[16];\n  delete[] scratch;\n"}},
     {{rule::kDeviceNew, kKernel, "new float[16]"}, {rule::kDeviceNew, kKernel, "delete[] scratch"}}},
    {"pointer_without_restrict",
     {{kKernel, "float* __restrict__ lse,", "float* lse,"}},
     {{rule::kRestrictPointer, kKernel, "float* lse, int rows) {"},
      {rule::kKernelParams, kKernel, "float* lse, int rows) {"}}},
    {"compile_error",
     {{kKernel, "const int warp = thread / 32;", "const int warp = thread / ;"}},
     {{rule::kCompileError, kKernel, "const int warp = thread / ;"}}},
};

INSTANTIATE_TEST_SUITE_P(Sample, PlantedViolation, ::testing::ValuesIn(kPlants),
                         [](const ::testing::TestParamInfo<Plant>& info) { return info.param.name; });

// Plants that change only MANIFEST.json: one copy and one parse serve them all.
const std::vector<Plant> kManifestPlants = {
    {"interface_entry_point_not_defined",
     {{kManifest, "\"kgen::audit_sample_sm90a::softmax_kernel\"", "\"kgen::audit_sample_sm90a::softmax\""}},
     {{rule::kEntryPoints, kKernel, ""}, {rule::kEntryPoints, kKernel, kKernelDeclaration}}},
    {"param_name_differs",
     {{kManifest, "{\"name\": \"rows\", \"type\": \"int\"}", "{\"name\": \"row_count\", \"type\": \"int\"}"}},
     {{rule::kKernelParams, kKernel, "int rows) {"}}},
    {"param_grid_constant_differs",
     {{kManifest, "{\"name\": \"rows\", \"type\": \"int\"}", "{\"grid_constant\": true, \"name\": \"rows\", \"type\": \"int\"}"}},
     {{rule::kKernelParams, kKernel, "int rows) {"}}},
    {"interface_missing",
     {{kManifest, "\"interface\": {", "\"not_an_interface\": {"}},
     {{rule::kInterface, kKernel, ""}}},
    {"interface_launch_threads_differ",
     {{kManifest, "\"block\": [384, 1, 1]", "\"block\": [256, 1, 1]"}},
     {{rule::kLaunchThreads, kKernel, kLaunch}}},
    {"interface_launch_grid_differs",
     {{kManifest, "\"grid\": [4096, 1, 1]", "\"grid\": [4096, 2, 1]"}},
     {{rule::kLaunchGrid, kKernel, kLaunch}}},
    {"interface_without_launch",
     {{kManifest, "\"launch\": {\"block\": [384, 1, 1], \"grid\": [4096, 1, 1]},\n", ""}},
     {{rule::kInterface, kManifest, "\"interface\""}}},
    {"interface_malformed",
     {{kManifest, "\"dynamic_smem_bytes\": 49280", "\"dynamic_smem_bytes\": \"49280\""}},
     {{rule::kInterface, kManifest, "\"interface\""}}},
    {"manifest_symbol_wrong",
     {{kManifest, "\"symbol\": \"audit_sample_sm90a\"", "\"symbol\": \"audit_sample\""}},
     {{rule::kManifest, kManifest, "\"audit_sample.sm90a.cu\""}}},
};

TEST(ManifestVariants, AreFoundWithOneParse) {
  const fs::path root = copy_sample("manifest_variants");
  const fs::path manifest = root / "audit_sample" / kManifest;
  const std::string original = read(manifest);
  kgen::audit::ParseCache cache;
  check_plant({"clean", {}, {}}, root, &cache);
  for (const Plant& plant : kManifestPlants) {
    write(manifest, original);
    check_plant(plant, root, &cache);
  }
  EXPECT_EQ(cache.parses(), 1) << "the kernel was parsed again although only MANIFEST.json changed";
  if (!HasFailure()) fs::remove_all(root);
}

// ---- The command line, as `kgen audit` and make test run it.

struct CommandResult {
  int status;
  std::string output;
};

CommandResult run(const std::string& command) {
  CommandResult result{-1, ""};
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  const int status = ::pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string audit_command(const fs::path& generated) {
  return std::string("'") + KGEN_AUDIT_BINARY + "' '" + (kTestdata / "audit_sample.json").string() +
         "' --generated '" + generated.string() + "'";
}

TEST(AuditCommand, CleanSampleExitsZero) {
  const CommandResult result = run(audit_command(kTestdata));
  EXPECT_EQ(result.status, 0) << result.output;
  EXPECT_NE(result.output.find("audited 1 file(s), 0 finding(s)"), std::string::npos)
      << result.output;
}

TEST(AuditCommand, FindingExitsOneAndNamesFileLineAndRule) {
  const fs::path root = copy_sample("command_finding");
  const fs::path kernel = root / "audit_sample" / kKernel;
  std::string text = read(kernel);
  text.replace(text.find(kGuard), kGuard.size(), kGuard + "  printf(\"%d\\n\", row);\n");
  write(kernel, text);
  const CommandResult result = run(audit_command(root));
  EXPECT_EQ(result.status, 1) << result.output;
  const std::string expected = (root / "audit_sample" / kKernel).lexically_normal().generic_string() + ":" +
                               std::to_string(line_of(text, "printf(")) + ": [device-printf] ";
  EXPECT_NE(result.output.find(expected), std::string::npos) << "expected " << expected << " in\n" << result.output;
  fs::remove_all(root);
}

// Issue 9's case on a real generated kernel, through the command: its launcher launches 256
// threads per block where the kernel is built for 384.
TEST(AuditCommand, GeneratedLaunchOfTooFewThreadsIsCaught) {
  const fs::path root = kScratch / "command_generated_launch_threads";
  fs::remove_all(root);
  fs::create_directories(root);
  fs::copy(fs::path(KGEN_SOURCE_DIR) / "generated" / "prefix_lm", root / "prefix_lm", fs::copy_options::recursive);
  const fs::path kernel = root / "prefix_lm" / "prefix_lm.sm90a.cu";
  std::string text = read(kernel);
  const std::string launch = "forward_kernel<<<grid, Config::kThreads, Traits::kSharedBytes, stream>>>";
  const std::size_t at = text.find(launch);
  ASSERT_NE(at, std::string::npos) << "the generated launcher no longer contains: " << launch;
  text.replace(at, launch.size(), "forward_kernel<<<grid, 256, Traits::kSharedBytes, stream>>>");
  write(kernel, text);
  const CommandResult result = run(std::string("'") + KGEN_AUDIT_BINARY + "' '" KGEN_SOURCE_DIR "/specs/prefix_lm.json' " +
                                   "--generated '" + root.string() + "'");
  EXPECT_EQ(result.status, 1) << result.output;
  const std::string expected = kernel.lexically_normal().generic_string() + ":" +
                               std::to_string(line_of(text, "forward_kernel<<<")) +
                               ": [launch-threads] the launch of 'kgen::prefix_lm_sm90a::forward_kernel' has block "
                               "(256, 1, 1), 256 threads; the interface says (384, 1, 1), 384 threads";
  EXPECT_NE(result.output.find(expected), std::string::npos) << "expected " << expected << " in\n" << result.output;
  EXPECT_NE(result.output.find(", 1 finding(s)"), std::string::npos) << result.output;
  if (!HasFailure()) fs::remove_all(root);
}

// A spec with no CUDA kernel (a tpu-only spec) audits nothing: passed, or the skip code.
TEST(AuditCommand, NoCudaKernelAuditsNothing) {
  const fs::path root = kScratch / "command_no_cuda_kernel";
  fs::remove_all(root);
  fs::create_directories(root / "audit_sample");
  write(root / "audit_sample" / kManifest,
        R"({"files": {"audit_sample.tpu.mlir": {"role": "kernel", "status": "generated",
            "symbol": "audit_sample_tpu", "target": "tpu"}}, "name": "audit_sample"})");
  const CommandResult result = run(audit_command(root));
  EXPECT_EQ(result.status, 0) << result.output;
  EXPECT_NE(result.output.find("audited 0 file(s), 0 finding(s)"), std::string::npos) << result.output;
  EXPECT_EQ(run(audit_command(root) + " --skip-code 77").status, 77);  // how ctest runs it
  fs::remove_all(root);
}

// ctest's mode: a kernel file without an interface yet is skipped, unless a rule fails it.
TEST(AuditCommand, PendingInterfaceSkipsButFindingsStillFail) {
  const fs::path root = copy_sample("command_pending_interface");
  const fs::path manifest = root / "audit_sample" / kManifest;
  std::string text = read(manifest);
  const std::string key = "\"interface\": {";
  text.replace(text.find(key), key.size(), "\"pending\": {");
  write(manifest, text);
  CommandResult result = run(audit_command(root) + " --skip-code 77");
  EXPECT_EQ(result.status, 77) << result.output;
  EXPECT_NE(result.output.find("gives no interface yet"), std::string::npos) << result.output;
  EXPECT_EQ(run(audit_command(root)).status, 1);  // by default it is a finding
  const fs::path kernel = root / "audit_sample" / kKernel;
  std::string code = read(kernel);
  code.replace(code.find(kGuard), kGuard.size(), kGuard + "  printf(\"%d\\n\", row);\n");
  write(kernel, code);
  result = run(audit_command(root) + " --skip-code 77");
  EXPECT_EQ(result.status, 1) << result.output;
  EXPECT_NE(result.output.find("[device-printf]"), std::string::npos) << result.output;
  fs::remove_all(root);
}

TEST(AuditCommand, BadArgumentsExitTwo) {
  EXPECT_EQ(run(std::string("'") + KGEN_AUDIT_BINARY + "'").status, 2);
  EXPECT_EQ(run(std::string("'") + KGEN_AUDIT_BINARY + "' /nonexistent/spec.json").status, 2);
  EXPECT_EQ(run(std::string("'") + KGEN_AUDIT_BINARY + "' --bogus").status, 2);
}

TEST(AuditCommand, MissingManifestIsAFinding) {
  const fs::path root = kScratch / "command_no_manifest";
  fs::remove_all(root);
  fs::create_directories(root);
  const CommandResult result = run(audit_command(root));
  EXPECT_EQ(result.status, 1) << result.output;
  EXPECT_NE(result.output.find("MANIFEST.json:1: [manifest]"), std::string::npos) << result.output;
  fs::remove_all(root);
}

}  // namespace
