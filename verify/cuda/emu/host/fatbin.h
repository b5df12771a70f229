// Reading PTX out of the fat binary nvcc embeds in a host object.
//
// What nvcc's host stub hands __cudaRegisterFatBinary is a __fatBinC_Wrapper_t
// (fatbinary_section.h: magic 0x466243B1, version, pointer to the data). The data is a fat
// binary: a 16-byte header (magic 0xBA55ED50, version 1, header size 16, size of what
// follows) and entries back to back, each an entry header (kind 1 = PTX, 2 = ELF cubin; its
// own header size; payload size; the architecture number; flags) followed by its payload.
// The layout is not documented by NVIDIA; these facts were read off fat binaries nvcc 13.0
// writes (tests/host/fatbin_test.cc checks them against a real object on every build).
//
// A payload may be compressed (flag 0x8000, zstd for nvcc 13): nvcc-emu passes --no-compress
// so that it never is; a compressed PTX entry is reported, never guessed at.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace kgen::emu {

class FatbinError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct PtxImage {
  uint32_t arch = 0;    // the entry header's architecture number: 90, 100
  std::string target;   // the PTX's own .target, e.g. "sm_90a" (empty if it has none)
  std::string text;     // the PTX, without the payload's trailing padding
};

struct FatbinContents {
  std::vector<PtxImage> ptx;
  // Architectures of the entries that carry PTX we cannot read (compressed), and of the
  // cubins (SASS is never executed): reported when no usable PTX is left.
  std::vector<uint32_t> compressed_ptx_arches;
  std::vector<uint32_t> cubin_arches;
};

// Reads every PTX entry of the fat binary at `data` (starting with its 16-byte header).
// Throws FatbinError for anything that is not a fat binary as described above.
FatbinContents read_fatbin(const void* data);

// The same, from what __cudaRegisterFatBinary receives (a __fatBinC_Wrapper_t).
FatbinContents read_fatbin_wrapper(const void* wrapper);

// The argument of the PTX's ".target" directive's first target ("sm_90a"), or "".
std::string ptx_target(const std::string& ptx);

}  // namespace kgen::emu
