// One generated sm90a backward's GPU check: `sm90a_backward_run_<name> SPEC.json [--seed N]
// [--row-stride N] [--bench N] [--receipt FILE]`. Built per backward kernel by
// verify/cuda/CMakeLists.txt with the forward's and the backward's launcher headers and
// namespaces (KGEN_SM90A_HEADER, KGEN_SM90A_NAMESPACE, KGEN_SM90A_BACKWARD_HEADER,
// KGEN_SM90A_BACKWARD_NAMESPACE): the forward writes the residuals the backward reads.
#include <cstdio>
#include <cstdlib>
#include <string>

#include KGEN_SM90A_HEADER
#include KGEN_SM90A_BACKWARD_HEADER

#include "backward_harness.h"
#include "diagnostics.h"
#include "launch_arguments.h"
#include "spec.h"

namespace forward_kernel = KGEN_SM90A_NAMESPACE;
namespace backward_kernel = KGEN_SM90A_BACKWARD_NAMESPACE;

namespace {

std::string launch_forward(const kgen::sm90a::DeviceTensors& t, cudaStream_t stream) {
  forward_kernel::Arguments args;
  kgen::sm90a::set_forward_arguments(args, t);
  const forward_kernel::Result result = forward_kernel::launch(args, stream);
  return result ? std::string() : std::string(result.message);
}

std::string launch_backward(const kgen::sm90a::BackwardTensors& t, cudaStream_t stream) {
  backward_kernel::Arguments args;
  kgen::sm90a::set_backward_arguments(args, t);
  const backward_kernel::Result result = backward_kernel::launch(args, stream);
  return result ? std::string() : std::string(result.message);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s SPEC.json [--seed N] [--row-stride N] [--first-group 1] [--bench N] [--receipt FILE]\n",
                 argv[0]);
    return 2;
  }
  kgen::sm90a::BackwardHarnessOptions options;
  options.command = argv[0];
  for (int k = 1; k < argc; ++k) options.command += std::string(" ") + argv[k];
  for (int k = 2; k + 1 < argc; k += 2) {
    const std::string flag = argv[k];
    const long long value = std::atoll(argv[k + 1]);
    if (flag == "--receipt") options.receipt_path = argv[k + 1];
    else if (flag == "--seed") options.seed = static_cast<uint64_t>(value);
    else if (flag == "--row-stride" && value > 0) options.row_stride = value;
    else if (flag == "--first-group") options.first_group_only = value != 0;
    else if (flag == "--bench") options.bench_iterations = static_cast<int>(value);
    else {
      std::fprintf(stderr, "unknown option %s\n", flag.c_str());
      return 2;
    }
  }
  try {
    const kgen::Spec spec = kgen::load_spec(argv[1], ".");
    const kgen::Shape& s = spec.shape;
    if (s.batch != backward_kernel::kBatch || s.q_heads != backward_kernel::kQHeads ||
        s.kv_heads != backward_kernel::kKvHeads || s.q_len != backward_kernel::kQLen ||
        s.kv_len != backward_kernel::kKvLen || s.head_dim != backward_kernel::kHeadDim ||
        s.head_dim_v != backward_kernel::kHeadDimV ||
        std::string(kgen::dtype_name(spec.dtype)) != backward_kernel::kDType) {
      std::fprintf(stderr, "%s does not describe the kernels this harness was built with\n", argv[1]);
      return 2;
    }
    return kgen::sm90a::run_backward_harness(spec, launch_forward, launch_backward, backward_kernel::kWorkspaceBytes,
                                             forward_kernel::kDocumentTilesInts, options);
  } catch (const kgen::SpecError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
