// The audit's precompiled prelude (verify/audit/prelude_pch.h): which headers it holds, and
// that a PCH Clang cannot use, or cannot build, never changes what the audit finds.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "audit.h"
#include "prelude_pch.h"

namespace {

namespace fs = std::filesystem;

const fs::path kTestdata = KGEN_AUDIT_TESTDATA;
const fs::path kScratch = KGEN_AUDIT_SCRATCH;

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The PCHs under `dir` (one per pass).
std::vector<fs::path> pchs_in(const fs::path& dir) {
  std::vector<fs::path> found;
  if (!fs::exists(dir)) return found;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(dir))
    if (entry.path().filename() == "prelude.pch") found.push_back(entry.path());
  return found;
}

// A runtime tree whose sm90a headers include `headers`, and a toolchain that audits against
// it with its PCHs in a fresh folder.
kgen::audit::Toolchain toolchain_with_runtime(const std::string& test, const std::string& headers) {
  const fs::path root = kScratch / test;
  fs::remove_all(root);
  write(root / "runtime" / "sm90a" / "prelude_user.cuh", headers);
  kgen::audit::Toolchain tools = kgen::audit::default_toolchain();
  tools.runtime_include = (root / "runtime").string();
  tools.pch_dir = (root / "pch").string();
  return tools;
}

TEST(PreludeText, HoldsTheRuntimesThirdPartyHeadersOnceInPreprocessorOrder) {
  const fs::path root = kScratch / "prelude_text";
  fs::remove_all(root);
  const fs::path runtime = root / "runtime";
  // a.cuh includes b.cuh first, so b's headers come before a's own; "local.h" is no file.
  write(runtime / "sm90a" / "a.cuh",
        "#include <sm90a/b.cuh>\n#include <cute/atom/copy_atom.hpp>\n#include \"local.h\"\n#include \"c.cuh\"\n");
  write(runtime / "sm90a" / "b.cuh", "  #  include <cstdint>\n#include <cute/tensor.hpp>\n");
  write(runtime / "sm90a" / "c.cuh", "#include <cstdint>\n#include <cmath>\n");
  write(runtime / "sm90a" / "notes.md", "#include <not_a_header_file>\n");
  write(runtime / "sm100a" / "d.cuh", "#include <cute/arch/mma_sm100.hpp>\n");
  write(root / "k.cu", "// a kernel\n#include \"k.h\"\n#include <sm90a/a.cuh>\n");
  EXPECT_EQ(kgen::audit::prelude_text(runtime.string(), "sm90a", (root / "k.cu").string()),
            "#include <cstdint>\n#include <cute/tensor.hpp>\n#include <cute/atom/copy_atom.hpp>\n"
            "#include <cmath>\n");
  EXPECT_EQ(kgen::audit::prelude_text(runtime.string(), "sm100a", (root / "k.cu").string()),
            "#include <cute/arch/mma_sm100.hpp>\n");
  EXPECT_EQ(kgen::audit::prelude_text(runtime.string(), "sm120a", (root / "k.cu").string()), "");
}

TEST(PreludeText, StartsWithTheMacrosTheKernelSetsBeforeItsIncludes) {
  const fs::path root = kScratch / "prelude_macros";
  fs::remove_all(root);
  const fs::path runtime = root / "runtime";
  write(runtime / "sm90a" / "a.cuh", "#include <cute/tensor.hpp>\n");
  auto prelude = [&](const std::string& kernel) {
    write(root / "k.cu", kernel);
    return kgen::audit::prelude_text(runtime.string(), "sm90a", (root / "k.cu").string());
  };
  // CuTe's extended wgmma shapes, device pass only (as the sm90a template writes it).
  EXPECT_EQ(prelude("// why\n#if defined(__CUDA_ARCH__)\n#define WIDE 1\n#endif\n\n#include \"k.h\"\n"),
            "#if defined(__CUDA_ARCH__)\n#define WIDE 1\n#endif\n#include <cute/tensor.hpp>\n");
  // A PCH parsed before the file cannot follow a macro set between its includes, nor an
  // include under a condition.
  EXPECT_EQ(prelude("#include \"k.h\"\n#define WIDE 1\n#include <sm90a/a.cuh>\n"), "");
  EXPECT_EQ(prelude("#ifdef WIDE\n#include \"k.h\"\n#endif\n"), "");
  write(runtime / "sm90a" / "b.cuh", "#undef NDEBUG\n#include <cassert>\n");
  EXPECT_EQ(prelude("#include \"k.h\"\n"), "");
}

TEST(PreludePch, OneClangCannotLoadIsRebuiltAndTheAuditIsUnchanged) {
  const kgen::audit::Toolchain tools = toolchain_with_runtime("pch_stale", "#include <cstdint>\n");
  const kgen::audit::AuditReport first = kgen::audit::audit_generated(kTestdata.string(), "audit_sample", tools);
  EXPECT_TRUE(first.findings.empty()) << first.findings.front().str();
  const std::vector<fs::path> pchs = pchs_in(tools.pch_dir);
  ASSERT_EQ(pchs.size(), 2u) << "one PCH per pass (device, host)";

  for (const fs::path& pch : pchs) write(pch, "not a precompiled header");
  const kgen::audit::AuditReport second = kgen::audit::audit_generated(kTestdata.string(), "audit_sample", tools);
  EXPECT_TRUE(second.findings.empty()) << second.findings.front().str();
  for (const fs::path& pch : pchs) EXPECT_NE(read(pch), "not a precompiled header") << pch << " was not rebuilt";
}

TEST(PreludePch, OneClangCannotBuildLeavesTheAuditUnchanged) {
  const kgen::audit::Toolchain tools = toolchain_with_runtime("pch_unbuildable", "#include <no/such/header.h>\n");
  const kgen::audit::AuditReport report = kgen::audit::audit_generated(kTestdata.string(), "audit_sample", tools);
  EXPECT_TRUE(report.findings.empty()) << report.findings.front().str();
  EXPECT_TRUE(pchs_in(tools.pch_dir).empty());
  int failures = 0;  // one per pass: later passes do not try again
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(tools.pch_dir))
    failures += entry.path().filename() == "prelude.failed";
  EXPECT_EQ(failures, 2);
}

}  // namespace
