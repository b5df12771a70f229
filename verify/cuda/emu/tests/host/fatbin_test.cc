// Reading PTX out of fat binaries nvcc 13 really writes (built by CMake at build time):
// the uncompressed PTX-only binary nvcc-emu makes, one with two architectures, one with a
// cubin beside the PTX, and nvcc's default (compressed) one, which must be reported.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "../../host/fatbin.h"
#include "../../host/registry.h"

namespace {

using kgen::emu::FatbinContents;
using kgen::emu::FatbinError;
using kgen::emu::read_fatbin;

std::string file_bytes(const char* path) {
  std::ifstream file(path, std::ios::binary);
  EXPECT_TRUE(file.good()) << path;
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

TEST(Fatbin, TwoArchitecturesGiveTwoPtxImages) {
  std::string bytes = file_bytes(KGEN_TWO_ARCH_FATBIN);
  FatbinContents contents = read_fatbin(bytes.data());
  ASSERT_EQ(contents.ptx.size(), 2u);
  EXPECT_EQ(contents.ptx[0].target, "sm_90a");
  EXPECT_EQ(contents.ptx[0].arch, 90u);
  EXPECT_EQ(contents.ptx[1].target, "sm_100a");
  EXPECT_EQ(contents.ptx[1].arch, 100u);
  for (const auto& image : contents.ptx) {
    EXPECT_NE(image.text.find(".entry _Z3addPKfPfi"), std::string::npos);
    EXPECT_EQ(image.text.find('\0'), std::string::npos);
  }
  EXPECT_TRUE(contents.compressed_ptx_arches.empty());
}

TEST(Fatbin, CubinBesideUncompressedPtx) {
  std::string bytes = file_bytes(KGEN_WITH_CUBIN_FATBIN);
  FatbinContents contents = read_fatbin(bytes.data());
  ASSERT_EQ(contents.ptx.size(), 1u);
  EXPECT_EQ(contents.ptx[0].target, "sm_90a");
  ASSERT_EQ(contents.cubin_arches.size(), 1u);
  EXPECT_EQ(contents.cubin_arches[0], 90u);
}

TEST(Fatbin, CompressedPtxIsReportedNotRead) {
  std::string bytes = file_bytes(KGEN_COMPRESSED_FATBIN);
  FatbinContents contents = read_fatbin(bytes.data());
  EXPECT_TRUE(contents.ptx.empty());
  ASSERT_EQ(contents.compressed_ptx_arches.size(), 1u);
  EXPECT_EQ(contents.compressed_ptx_arches[0], 90u);
}

TEST(Fatbin, GarbageIsRefused) {
  std::string bytes(64, 'x');
  EXPECT_THROW(read_fatbin(bytes.data()), FatbinError);
  EXPECT_THROW(kgen::emu::read_fatbin_wrapper(bytes.data()), FatbinError);
}

TEST(Fatbin, TruncatedEntryIsRefused) {
  std::string bytes = file_bytes(KGEN_TWO_ARCH_FATBIN);
  // Claim a body that ends in the middle of the first entry's header.
  uint64_t short_body = 20;
  std::memcpy(bytes.data() + 8, &short_body, sizeof short_body);
  EXPECT_THROW(read_fatbin(bytes.data()), FatbinError);
}

TEST(Fatbin, PtxTarget) {
  EXPECT_EQ(kgen::emu::ptx_target(".version 9.0\n.target sm_100a\n.address_size 64\n"), "sm_100a");
  EXPECT_EQ(kgen::emu::ptx_target(".version 9.0\n"), "");
}

// The object nvcc-emu compiled for this test binary registered its fat binary before main:
// its PTX is there, uncompressed, for sm_90a.
TEST(Fatbin, RegisteredObjectCarriesItsPtx) {
  EXPECT_EQ(kgen::emu::Registry::get().target(), "sm_90a");
}

}  // namespace
