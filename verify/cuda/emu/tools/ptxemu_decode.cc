// ptxemu-decode FILE.ptx...: parses each module and decodes every kernel's instructions, as a
// launch would; exits 1 naming the first instruction ptxemu does not implement. The gate that
// makes a generated kernel using an unimplemented instruction fail in make test.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/device.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE.ptx...\n", argv[0]);
    return 2;
  }
  for (int k = 1; k < argc; ++k) {
    std::ifstream in(argv[k]);
    if (!in) {
      std::fprintf(stderr, "%s: cannot read\n", argv[k]);
      return 2;
    }
    std::stringstream text;
    text << in.rdbuf();
    try {
      kgen::emu::Device::get().load_ptx(text.str(), argv[k]);
      const int kernels = kgen::emu::Device::get().decode_all(argv[k]);
      std::printf("%s: %d kernels decoded\n", argv[k], kernels);
    } catch (const kgen::emu::EmulationError& e) {
      std::fprintf(stderr, "ptxemu: %s\n", e.what());
      return 1;
    }
  }
  return 0;
}
