// The receipt logic without files: hashing, merging a check's facts, and judging a receipt
// against the files as they are (docs/receipts.md).
#include "receipts.h"

#include <gtest/gtest.h>

namespace kgen {
namespace {

const ReceiptRule kTpu = *receipt_rule("tpu");
const ReceiptHeader kHeader{"splash", "tpu", "specs/splash.json"};
const FileHashes kOld{{"splash.tpu.mlir", "aa"}, {"splash.tpu.operands.json", "bb"}};
const FileHashes kNew{{"splash.tpu.mlir", "cc"}, {"splash.tpu.operands.json", "bb"}};

Json facts(bool passed) { return {{"passed", passed}, {"seed", 1}}; }

// A receipt with every required tpu check, run on `files`.
Json complete(const FileHashes& files) {
  Json receipt;
  for (const std::string& check : kTpu.required) receipt = with_check(receipt, kHeader, files, check, facts(true));
  return receipt;
}

TEST(Receipts, Sha256IsLlvmsOfTheBytes) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Receipts, RulesCoverKernelAndCompanionFiles) {
  EXPECT_EQ(kTpu.file_suffixes, (std::vector<std::string>{".tpu.mlir", ".tpu.operands.json"}));
  EXPECT_EQ(kTpu.backward_file_suffixes, (std::vector<std::string>{".tpu.dq.mlir", ".tpu.dq.operands.json", ".tpu.dkv.mlir",
                                                                   ".tpu.dkv.operands.json"}));
  EXPECT_EQ(receipt_rule("sm90a")->file_suffixes, (std::vector<std::string>{".sm90a.cu", ".sm90a.h"}));
  EXPECT_EQ(receipt_rule("sm90a")->backward_file_suffixes,
            (std::vector<std::string>{".sm90a.backward.cu", ".sm90a.backward.h"}));
  EXPECT_EQ(receipt_rule("sm90a")->required, (std::vector<std::string>{"nvcc_sass", "cpu_emulation"}));
  EXPECT_EQ(receipt_rule("sm90a")->optional, std::vector<std::string>{"gpu"});
  // No Blackwell GPU exists here: an sm100a kernel is compiled, and run on ptxemu.
  EXPECT_EQ(receipt_rule("sm100a")->file_suffixes, (std::vector<std::string>{".sm100a.cu", ".sm100a.h"}));
  EXPECT_EQ(receipt_rule("sm100a")->required, (std::vector<std::string>{"nvcc_sass", "cpu_emulation"}));
  EXPECT_TRUE(receipt_rule("sm100a")->optional.empty());
  EXPECT_EQ(receipt_rule("sm100a")->runtime, (std::vector<std::string>{"cuda", "sm100a"}));
}

TEST(Receipts, AddingACheckRecordsTheBytesItRanOn) {
  const Json receipt = with_check(Json(), kHeader, kOld, "cpu_execution", facts(true));
  EXPECT_EQ(receipt["files"], Json(kOld));
  EXPECT_EQ(receipt["checks"]["cpu_execution"]["files"], Json(kOld));
  EXPECT_EQ(receipt["checks"]["cpu_execution"]["seed"], 1);
  EXPECT_EQ(receipt["regenerate"], "make verify SPEC=specs/splash.json");
  EXPECT_EQ(receipt["kernel"], "splash");
  EXPECT_EQ(receipt["target"], "tpu");
}

TEST(Receipts, ChecksOfTheSameBytesAreKeptAndReplacedByName) {
  Json receipt = with_check(Json(), kHeader, kOld, "cpu_execution", facts(true));
  receipt = with_check(receipt, kHeader, kOld, "mosaic_dialect", facts(true));
  receipt = with_check(receipt, kHeader, kOld, "cpu_execution", facts(false));
  EXPECT_EQ(receipt["checks"].size(), 2u);
  EXPECT_FALSE(receipt["checks"]["cpu_execution"]["passed"].get<bool>());
}

TEST(Receipts, ACheckOfNewBytesDropsTheChecksOfOldOnes) {
  const Json receipt = with_check(complete(kOld), kHeader, kNew, "libtpu_compile", facts(true));
  EXPECT_EQ(receipt["files"], Json(kNew));
  ASSERT_EQ(receipt["checks"].size(), 1u);
  EXPECT_TRUE(receipt["checks"].contains("libtpu_compile"));
}

TEST(Receipts, MergingIsDeterministic) {
  EXPECT_EQ(receipt_text(complete(kOld)), receipt_text(with_check(complete(kOld), kHeader, kOld, "cpu_execution",
                                                                  facts(true))));
}

TEST(Receipts, CompleteReceiptOfTheCurrentBytesIsCurrent) {
  const ReceiptStatus status = receipt_status(complete(kOld), kOld, kTpu);
  EXPECT_EQ(status.kind, ReceiptStatus::kCurrent) << testing::PrintToString(status.reasons);
  EXPECT_EQ(status.checks, (std::vector<std::string>{"cpu_execution passed", "libtpu_compile passed",
                                                     "mosaic_dialect passed"}));
}

TEST(Receipts, NoReceiptIsMissing) {
  EXPECT_EQ(receipt_status(std::nullopt, kOld, kTpu).kind, ReceiptStatus::kMissing);
}

TEST(Receipts, AChangedFileMakesTheReceiptStaleNamingTheFile) {
  const ReceiptStatus status = receipt_status(complete(kOld), kNew, kTpu);
  EXPECT_EQ(status.kind, ReceiptStatus::kStale);
  ASSERT_EQ(status.reasons.size(), 1u);
  EXPECT_NE(status.reasons[0].find("splash.tpu.mlir changed"), std::string::npos) << status.reasons[0];
}

TEST(Receipts, AFileAddedOrRemovedMakesTheReceiptStale) {
  FileHashes more = kOld;
  more["splash.extra"] = "dd";
  EXPECT_EQ(receipt_status(complete(kOld), more, kTpu).kind, ReceiptStatus::kStale);
  FileHashes fewer = kOld;
  fewer.erase("splash.tpu.operands.json");
  EXPECT_EQ(receipt_status(complete(kOld), fewer, kTpu).kind, ReceiptStatus::kStale);
}

TEST(Receipts, ACheckEditedToOtherBytesMakesTheReceiptStale) {
  Json receipt = complete(kOld);
  receipt["checks"]["mosaic_dialect"]["files"]["splash.tpu.mlir"] = "cc";
  const ReceiptStatus status = receipt_status(receipt, kOld, kTpu);
  EXPECT_EQ(status.kind, ReceiptStatus::kStale);
  EXPECT_NE(status.reasons.at(0).find("mosaic_dialect"), std::string::npos);
}

TEST(Receipts, AMissingRequiredCheckIsIncomplete) {
  const Json receipt = with_check(Json(), kHeader, kOld, "cpu_execution", facts(true));
  const ReceiptStatus status = receipt_status(receipt, kOld, kTpu);
  EXPECT_EQ(status.kind, ReceiptStatus::kIncomplete);
  EXPECT_EQ(status.reasons, (std::vector<std::string>{"no mosaic_dialect check", "no libtpu_compile check"}));
}

TEST(Receipts, AFailedCheckIsShownAsFailed) {
  const Json receipt = with_check(complete(kOld), kHeader, kOld, "cpu_execution", facts(false));
  EXPECT_EQ(receipt_status(receipt, kOld, kTpu).checks.front(), "cpu_execution FAILED");
}

TEST(Receipts, SomethingElseIsInvalid) {
  EXPECT_EQ(receipt_status(Json::array(), kOld, kTpu).kind, ReceiptStatus::kInvalid);
  EXPECT_EQ(receipt_status(Json{{"files", Json::object()}}, kOld, kTpu).kind, ReceiptStatus::kInvalid);
}

}  // namespace
}  // namespace kgen
