// One generated sm90a decode kernel's check: `sm90a_emu_decode_run_<name> SPEC.json [--seed N]
// [--kv-heads N] [--receipt FILE]` (decode_harness.h says what each option does). Built per kernel by verify/cuda/CMakeLists.txt with KGEN_SM90A_HEADER
// (the generated launcher header) and KGEN_SM90A_NAMESPACE; the numbers of the kernel (q tile
// rows, splits, block_kv) come from that header, which kgen's plan wrote.
#include <cstdio>
#include <cstdlib>
#include <string>

#include KGEN_SM90A_HEADER

#include "decode_harness.h"
#include "diagnostics.h"
#include "spec.h"

namespace kernel = KGEN_SM90A_NAMESPACE;

namespace {

std::string launch(const kgen::sm90a::DecodeDeviceTensors& t, cudaStream_t stream, bool combine_only) {
  kernel::Arguments args;
  args.q = t.q;
  args.k = t.k;
  args.v = t.v;
  args.kv_lens = t.kv_lens;
  args.page_table = t.page_table;
  args.sinks = t.sinks;
  args.out = t.out;
  args.lse = t.lse;
  args.out_s = t.out_s;
  args.lse_s = t.lse_s;
  const kernel::Result result = combine_only ? kernel::launch_combine(args, stream) : kernel::launch(args, stream);
  return result ? std::string() : std::string(result.message);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc % 2 != 0) {
    std::fprintf(stderr, "usage: %s SPEC.json [--seed N] [--kv-heads N] [--receipt FILE]\n", argv[0]);
    return 2;
  }
  kgen::sm90a::DecodeHarnessOptions options;
  options.command = argv[0];
  for (int k = 1; k < argc; ++k) options.command += std::string(" ") + argv[k];
  for (int k = 2; k + 1 < argc; k += 2) {
    const std::string flag = argv[k];
    if (flag == "--seed") options.seed = static_cast<uint64_t>(std::atoll(argv[k + 1]));
    else if (flag == "--kv-heads") options.kv_heads = std::atoll(argv[k + 1]);
    else if (flag == "--receipt") options.receipt_path = argv[k + 1];
    else {
      std::fprintf(stderr, "unknown option %s\n", flag.c_str());
      return 2;
    }
  }
  try {
    const kgen::Spec spec = kgen::load_spec(argv[1], ".");
    const kgen::Shape& s = spec.shape;
    if (!spec.decode || s.batch != kernel::kBatch || s.q_heads != kernel::kQHeads || s.kv_heads != kernel::kKvHeads ||
        s.q_len != kernel::kQLen || s.kv_len != kernel::kKvLen || s.head_dim != kernel::kHeadDim ||
        s.head_dim_v != kernel::kHeadDimV || spec.decode->page_size != kernel::kPageSize ||
        spec.lse != kernel::kLse || spec.sinks != kernel::kSinks ||
        std::string(kgen::dtype_name(spec.dtype)) != kernel::kDType) {
      std::fprintf(stderr, "%s does not describe the kernel this harness was built with\n", argv[1]);
      return 2;
    }
    const kgen::sm90a::DecodeKernelFacts facts{kernel::kRows, kernel::kSplits, kernel::kBlockKv};
    return kgen::sm90a::run_decode_harness(spec, facts, launch, options);
  } catch (const kgen::SpecError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
