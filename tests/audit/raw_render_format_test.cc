// The sm90a templates are written in their output shape (docs/template-engine.md, "Output
// shape"): every raw render of every spec in specs/ and tests/cuda/specs already equals its
// formatted self, so kgen writes templates' text as it is and a one-line template change is
// a one-line diff in every generated file. Tables are laid out by the plan, not the formatter.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cuda_format.h"
#include "runtime_files.h"
#include "spec.h"
#include "spec_outputs.h"
#include "template_engine.h"

namespace kgen {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> spec_files() {
  std::vector<std::string> files;
  for (const char* folder : {"specs", "tests/cuda/specs"})
    for (const auto& entry : fs::directory_iterator(fs::path(KGEN_SOURCE_DIR) / folder))
      if (entry.path().extension() == ".json") files.push_back(fs::relative(entry.path(), KGEN_SOURCE_DIR).string());
  std::sort(files.begin(), files.end());
  return files;
}

bool is_cuda(const std::string& path) {
  const std::string extension = fs::path(path).extension().string();
  return extension == ".cu" || extension == ".h";
}

TEST(RawRender, EveryCudaFileIsAlreadyFormatted) {
  TemplateEngine engine([](const std::string& path) {
    std::ifstream in(std::string(KGEN_SOURCE_DIR) + "/templates/" + path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  });
  const RuntimeDigests runtimes = runtime_digests(KGEN_SOURCE_DIR);
  int checked = 0;
  for (const std::string& file : spec_files()) {
    const Spec spec = load_spec(std::string(KGEN_SOURCE_DIR) + "/" + file, KGEN_SOURCE_DIR);
    for (const GeneratedFile& output : render_spec_outputs(spec, engine, runtimes)) {
      if (!is_cuda(output.path)) continue;
      ++checked;
      EXPECT_EQ(output.content, format_cuda(output.content))
          << output.path << " (from " << file << "): the template's text is not in kgen's CUDA format; "
          << "`kgen-format` on the generated file shows where";
    }
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace kgen
