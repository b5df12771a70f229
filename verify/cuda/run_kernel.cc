// One generated sm90a kernel's GPU check: `sm90a_run_<name> SPEC.json [--seed N]
// [--slices N] [--threads N] [--bench N] [--document-length N] [--touched-blocks ROWS]
// [--receipt FILE]` (harness.h says what each option does). Built per
// kernel by verify/cuda/CMakeLists.txt with KGEN_SM90A_HEADER (the generated launcher
// header), KGEN_SM90A_NAMESPACE and KGEN_TARGET (sm90a, or sm100a for the same harness around
// an sm100a kernel).
#include <cstdio>
#include <cstdlib>
#include <string>

#include KGEN_SM90A_HEADER

#include "diagnostics.h"
#include "harness.h"
#include "launch_arguments.h"
#include "spec.h"

namespace kernel = KGEN_SM90A_NAMESPACE;

namespace {

std::string launch(const kgen::sm90a::DeviceTensors& t, cudaStream_t stream) {
  kernel::Arguments args;
  kgen::sm90a::set_forward_arguments(args, t);
  const kernel::Result result = kernel::launch(args, stream);
  return result ? std::string() : std::string(result.message);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s SPEC.json [--seed N] [--slices N] [--threads N] [--bench N] [--document-length N] "
                 "[--touched-blocks ROWS] [--receipt FILE]\n",
                 argv[0]);
    return 2;
  }
  kgen::sm90a::HarnessOptions options;
  options.command = argv[0];
  options.target = KGEN_TARGET;
  options.document_tiles_ints = kernel::kDocumentTilesInts;
  for (int k = 1; k < argc; ++k) options.command += std::string(" ") + argv[k];
  for (int k = 2; k + 1 < argc; k += 2) {
    const std::string flag = argv[k];
    const long long value = std::atoll(argv[k + 1]);
    if (flag == "--receipt") options.receipt_path = argv[k + 1];
    else if (flag == "--seed") options.seed = static_cast<uint64_t>(value);
    else if (flag == "--slices") options.max_slices = value;
    else if (flag == "--threads") options.threads = static_cast<int>(value);
    else if (flag == "--bench") options.bench_iterations = static_cast<int>(value);
    else if (flag == "--document-length") options.document_length = value;
    else if (flag == "--touched-blocks") options.touched_blocks_rows = value;
    else {
      std::fprintf(stderr, "unknown option %s\n", flag.c_str());
      return 2;
    }
  }
  try {
    const kgen::Spec spec = kgen::load_spec(argv[1], ".");
    const kgen::Shape& s = spec.shape;
    if (s.batch != kernel::kBatch || s.q_heads != kernel::kQHeads || s.kv_heads != kernel::kKvHeads ||
        s.q_len != kernel::kQLen || s.kv_len != kernel::kKvLen || s.head_dim != kernel::kHeadDim ||
        s.head_dim_v != kernel::kHeadDimV || std::string(kgen::dtype_name(spec.dtype)) != kernel::kDType) {
      std::fprintf(stderr, "%s does not describe the kernel this harness was built with\n", argv[1]);
      return 2;
    }
    return kgen::sm90a::run_harness(spec, launch, options);
  } catch (const kgen::SpecError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
