// `kgen receipt` and `kgen explain`'s receipt lines, driven through the real binary on a
// copy of one generated kernel folder: receipts that are current pass the check; a kernel
// with one byte changed, a receipt with a wrong hash, a missing receipt and an orphan fail
// it, naming the receipt and the command that regenerates it (docs/receipts.md).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "receipts.h"
#include "run_kgen.h"
#include "text_files.h"

namespace {

namespace fs = std::filesystem;

using Result = kgen::testing::KgenRun;
Result run(const fs::path& cwd, const std::string& arguments) { return kgen::testing::run_kgen(cwd.string(), arguments); }

void write(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// A project in a temporary folder: specs/splash.json, generated/splash/ and docs/receipts/
// holding receipts with every required check of each target, recorded by kgen receipt add.
class ReceiptCli : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("kgen-receipt-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "specs");
    fs::create_directories(root_ / "generated");
    fs::copy_file(fs::path(KGEN_SOURCE_DIR) / "specs/splash.json", root_ / "specs/splash.json");
    fs::copy(fs::path(KGEN_SOURCE_DIR) / "generated/splash", root_ / "generated/splash");
    write(root_ / "facts.json", R"({"passed": true, "note": "planted"})");
    for (const char* target : {"tpu", "sm90a", "sm100a"}) {
      const kgen::ReceiptRule rule = kgen::receipt_rule(target).value();
      for (const std::string& check : rule.required) add(target, check);
    }
  }
  void TearDown() override { fs::remove_all(root_); }

  void add(const std::string& target, const std::string& check) {
    const Result result = run(root_, "receipt add specs/splash.json --root . --target " + target + " --check " + check +
                                         " --facts facts.json");
    ASSERT_EQ(result.status, 0) << result.output;
  }
  Result check() { return run(root_, "receipt check"); }
  // Changes one byte of a file.
  void flip(const fs::path& path) {
    std::string text = kgen::read_text_file(path.string()).value();
    text[text.size() / 2] ^= 1;
    write(path, text);
  }

  fs::path root_;
};

TEST_F(ReceiptCli, CurrentReceiptsPass) {
  const Result result = check();
  EXPECT_EQ(result.status, 0) << result.output;
  EXPECT_NE(result.output.find("3 receipts current"), std::string::npos) << result.output;
}

TEST_F(ReceiptCli, AddingTheSameFactsAgainRewritesNothing) {
  const std::string before = kgen::read_text_file((root_ / "docs/receipts/splash.tpu.json").string()).value();
  add("tpu", "cpu_execution");
  EXPECT_EQ(kgen::read_text_file((root_ / "docs/receipts/splash.tpu.json").string()).value(), before);
}

TEST_F(ReceiptCli, AGpuRunIsRecordedBesideTheCompileCheckAndTheEmulation) {
  add("sm90a", "gpu");  // optional: only when a GPU was lent
  EXPECT_EQ(check().status, 0);
  const kgen::Json receipt = kgen::read_receipt((root_ / "docs/receipts/splash.sm90a.json").string()).value();
  EXPECT_EQ(receipt["checks"].size(), 3u) << receipt.dump(2);
}

TEST_F(ReceiptCli, AnSm90aReceiptCoversTheBackwardFiles) {
  const kgen::Json receipt = kgen::read_receipt((root_ / "docs/receipts/splash.sm90a.json").string()).value();
  EXPECT_TRUE(receipt["files"].contains("splash.sm90a.backward.cu")) << receipt.dump(2);
  EXPECT_TRUE(receipt["files"].contains("splash.sm90a.backward.h")) << receipt.dump(2);
}

TEST_F(ReceiptCli, AKernelWithOneByteChangedIsStale) {
  flip(root_ / "generated/splash/splash.tpu.mlir");
  const Result result = check();
  EXPECT_EQ(result.status, 1) << result.output;
  EXPECT_NE(result.output.find("docs/receipts/splash.tpu.json: stale"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("splash.tpu.mlir changed since the receipt was written"), std::string::npos);
  EXPECT_NE(result.output.find("regenerate with: make verify SPEC=specs/splash.json"), std::string::npos);
  EXPECT_EQ(result.output.find("splash.sm90a.json"), std::string::npos) << "only the tpu receipt is stale";
}

TEST_F(ReceiptCli, AChangedLauncherHeaderMakesTheSm90aReceiptStale) {
  flip(root_ / "generated/splash/splash.sm90a.h");
  const Result result = check();
  EXPECT_EQ(result.status, 1) << result.output;
  EXPECT_NE(result.output.find("docs/receipts/splash.sm90a.json: stale"), std::string::npos) << result.output;
}

// A decode kernel includes runtime/decode/ beside its target's folders; its receipt covers the
// folders its MANIFEST.json entry names (runtime_files.h), so a change there makes it stale.
TEST_F(ReceiptCli, AReceiptCoversTheRuntimeFoldersItsKernelWasRenderedWith) {
  fs::create_directories(root_ / "runtime/sm90a");
  fs::create_directories(root_ / "runtime/decode/sm90a");
  write(root_ / "runtime/sm90a/kernel.cuh", "// the target's runtime\n");
  write(root_ / "runtime/decode/sm90a/walk.cuh", "// the decode runtime\n");
  const fs::path manifest_path = root_ / "generated/splash/MANIFEST.json";
  kgen::Json manifest = kgen::Json::parse(kgen::read_text_file(manifest_path.string()).value());
  manifest["files"]["splash.sm90a.cu"]["runtime"]["folders"] = {"runtime/sm90a", "runtime/decode/sm90a"};
  write(manifest_path, manifest.dump(2));
  for (const char* target : {"sm90a", "sm100a"}) {
    const kgen::ReceiptRule rule = kgen::receipt_rule(target).value();
    for (const std::string& check : rule.required) add(target, check);
  }
  ASSERT_EQ(check().status, 0) << check().output;
  const kgen::Json receipt = kgen::read_receipt((root_ / "docs/receipts/splash.sm90a.json").string()).value();
  EXPECT_TRUE(receipt["files"].contains("runtime/decode/sm90a/walk.cuh")) << receipt.dump(2);
  EXPECT_TRUE(receipt["files"].contains("runtime/sm90a/kernel.cuh")) << receipt.dump(2);

  write(root_ / "runtime/decode/sm90a/walk.cuh", "// the decode runtime, changed\n");
  const Result result = check();
  EXPECT_EQ(result.status, 1) << result.output;
  EXPECT_NE(result.output.find("docs/receipts/splash.sm90a.json: stale"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("runtime/decode/sm90a/walk.cuh changed"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("splash.sm100a.json"), std::string::npos) << "sm100a names no decode runtime";
}

TEST_F(ReceiptCli, AReceiptWithAWrongHashFails) {
  const fs::path receipt = root_ / "docs/receipts/splash.sm90a.json";
  std::string text = kgen::read_text_file(receipt.string()).value();
  const std::string hash = kgen::sha256_hex(kgen::read_text_file((root_ / "generated/splash/splash.sm90a.cu").string()).value());
  const std::size_t at = text.find(hash);
  ASSERT_NE(at, std::string::npos);
  text[at] = text[at] == '0' ? '1' : '0';
  write(receipt, text);
  const Result result = check();
  EXPECT_EQ(result.status, 1) << result.output;
  EXPECT_NE(result.output.find("docs/receipts/splash.sm90a.json: stale"), std::string::npos) << result.output;
}

TEST_F(ReceiptCli, MissingIncompleteAndOrphanReceiptsFail) {
  fs::remove(root_ / "docs/receipts/splash.tpu.json");
  add("tpu", "cpu_execution");  // one of three required checks
  fs::copy_file(root_ / "docs/receipts/splash.sm90a.json", root_ / "docs/receipts/gone.sm90a.json");
  const Result result = check();
  EXPECT_EQ(result.status, 1) << result.output;
  EXPECT_NE(result.output.find("splash.tpu.json: incomplete"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("no libtpu_compile check"), std::string::npos);
  EXPECT_NE(result.output.find("gone.sm90a.json: orphan"), std::string::npos);
  fs::remove(root_ / "docs/receipts/splash.tpu.json");
  EXPECT_NE(check().output.find("splash.tpu.json: missing"), std::string::npos);
}

TEST_F(ReceiptCli, ExplainShowsEachKernelsReceiptStatus) {
  flip(root_ / "generated/splash/splash.sm90a.cu");
  const Result result = run(root_, "explain specs/splash.json --root .");
  ASSERT_EQ(result.status, 0) << result.output;
  EXPECT_NE(result.output.find("    tpu: current (cpu_execution passed, libtpu_compile passed, mosaic_dialect passed)"),
            std::string::npos) << result.output;
  EXPECT_NE(result.output.find("    sm90a: stale (cpu_emulation passed, nvcc_sass passed); splash.sm90a.cu changed"),
            std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("    sm100a: current (cpu_emulation passed, nvcc_sass passed)"), std::string::npos) << result.output;
}

TEST_F(ReceiptCli, BadArgumentsExitWith2) {
  for (const std::string arguments :
       {"receipt", "receipt frobnicate", "receipt add specs/splash.json --target tpu --check cpu_execution",
        "receipt add specs/splash.json --target tpu --check speed --facts facts.json",
        "receipt add specs/splash.json --target sm100a --check gpu --facts facts.json",
        "receipt add specs/splash.json --target tpu --check cpu_execution --facts missing.json",
        "receipt check specs/splash.json", "receipt check --target tpu",
        "verify specs/splash.json --target sm90a --gpu --report r.json"}) {
    const Result result = run(root_, arguments + " --root .");
    EXPECT_EQ(result.status, 2) << arguments << "\n" << result.output;
  }
  write(root_ / "list.json", "[1, 2]");
  const Result not_object = run(root_, "receipt add specs/splash.json --root . --target tpu --check cpu_execution --facts list.json");
  EXPECT_EQ(not_object.status, 2) << not_object.output;
}

}  // namespace
