// The tpu templates read like the MLIR they produce: one op, or one attribute group, per
// line. 120 columns holds an op with its types (the longest, a vector_store, is ~115)
// while a line of the old one-line attribute dictionary (545) or matmul (214) fails.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace {

constexpr std::size_t kMaxTemplateColumns = 120;

TEST(TemplateLines, TpuTemplatesFitInTheLineLimit) {
  const std::filesystem::path dir = std::filesystem::path(KGEN_SOURCE_DIR) / "templates" / "tpu";
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.path().extension() != ".tmpl") continue;
    ++files;
    std::ifstream in(entry.path());
    int number = 0;
    for (std::string line; std::getline(in, line);) {
      ++number;
      EXPECT_LE(line.size(), kMaxTemplateColumns) << entry.path().string() << ":" << number;
    }
  }
  EXPECT_GT(files, 0);
}

}  // namespace
