// Tuning (docs/tuning.md): the candidate tilings and their order, the tuning tables and their
// checks, "auto" tile fields filled in from a table or by the default rule, and `kgen tune`,
// `kgen gen --check` and `kgen explain` through the real binary with a stand-in measurer.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "diagnostics.h"
#include "spec.h"
#include "targets/target.h"
#include "text_files.h"
#include "tiling_candidates.h"
#include "tuning_table.h"

namespace {

namespace fs = std::filesystem;
using kgen::Json;
using kgen::TileChoice;
using kgen::TilePass;

// A small tpu spec; `tiles` is its tpu section's tile fields (JSON members).
std::string spec_text(const std::string& tiles, int64_t q_len = 1024, const std::string& extra = "") {
  return R"({"name": "tune_case", "kind": "attention_forward",
    "shape": {"q_heads": 2, "kv_heads": 1, "q_len": )" +
         std::to_string(q_len) + R"(, "kv_len": 1024, "head_dim": 64},
    "dtype": "bfloat16", "mask": {"type": "causal"}, )" +
         extra + R"("targets": {"tpu": {"generation": "v5e", )" + tiles + "}}}";
}

const kgen::Target& tpu() { return *kgen::find_target("tpu"); }

std::string message_of(const std::string& text, const std::string& tuning_dir = "") {
  try {
    kgen::parse_spec(text, ".", tuning_dir);
  } catch (const kgen::SpecError& error) {
    return error.what();
  }
  return "(no error)";
}

// --- Candidates.

TEST(TilingCombinations, NearestThePreferredFirstThenLargerTiles) {
  kgen::TuningSpace space;
  space.axes = {{"block_q", {128, 256, 512}}, {"block_kv", {256, 512, 1024}}};
  space.preferred = {{"block_q", 256}, {"block_kv", 512}};
  const std::vector<TileChoice> all = kgen::tiling_combinations(space, {});
  ASSERT_EQ(all.size(), 9u);
  EXPECT_EQ(all[0], (TileChoice{{"block_q", 256}, {"block_kv", 512}}));
  // Four at distance 1: the larger tiles first; of two equal volumes, the larger value in
  // field order (block_kv before block_q).
  EXPECT_EQ(all[1], (TileChoice{{"block_q", 256}, {"block_kv", 1024}}));
  EXPECT_EQ(all[2], (TileChoice{{"block_q", 512}, {"block_kv", 512}}));
  EXPECT_EQ(all.back(), (TileChoice{{"block_q", 128}, {"block_kv", 256}}));
}

TEST(TilingCombinations, FixedFieldsAndSkippedOnesAreKeptOut) {
  kgen::TuningSpace space;
  space.axes = {{"block_q", {128, 256}}, {"block_kv", {256, 512}}};
  space.preferred = {{"block_q", 128}, {"block_kv", 256}};
  space.skip = [](const TileChoice& t) { return t.at("block_kv") == 512; };
  const std::vector<TileChoice> all = kgen::tiling_combinations(space, {{"block_q", 256}});
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0], (TileChoice{{"block_q", 256}, {"block_kv", 256}}));
  // A written value outside the axis is still the only choice for its field.
  EXPECT_EQ(kgen::tiling_combinations(space, {{"block_q", 96}}).front().at("block_q"), 96);
}

TEST(LegalTilings, ExactlyTheCombinationsKgenGensChecksAccept) {
  const kgen::Spec spec = kgen::parse_spec(spec_text(R"("block_q": 512, "block_kv": 512)", 1536), ".");
  const std::optional<kgen::TuningSpace> space = tpu().tuning_space(spec, TilePass::kForward);
  ASSERT_TRUE(space);
  const kgen::Candidates candidates = kgen::legal_tilings(spec, tpu(), TilePass::kForward, *space, {});
  ASSERT_FALSE(candidates.legal.empty());
  std::set<TileChoice> legal(candidates.legal.begin(), candidates.legal.end());
  int refused = 0;
  for (const TileChoice& tiles : kgen::tiling_combinations(*space, {})) {
    const bool accepted = !kgen::check_pass_tiles(spec, tpu(), TilePass::kForward, tiles);
    EXPECT_EQ(accepted, legal.count(tiles) > 0) << kgen::describe_tiles(tiles);
    refused += !accepted;
  }
  // q_len 1536: block_q 1024 divides it not, so check_tiling refuses those.
  EXPECT_GT(refused, 0);
  for (const TileChoice& tiles : candidates.legal) EXPECT_NE(tiles.at("block_q"), 1024);
  // The digest follows the legal set.
  std::vector<TileChoice> fewer = candidates.legal;
  fewer.pop_back();
  EXPECT_NE(kgen::candidates_digest(fewer), kgen::candidates_digest(candidates.legal));
}

TEST(LegalTilings, ADecodeTilingTheTargetWritesNoKernelForIsNoCandidate) {
  // sm90a's decode consumer holds a block of 256 positions at head_dim 128 in about 288
  // registers, above its 256: kgen gen writes no sm90a kernel for it (a note), so there is
  // nothing to measure and "auto" must not take it. 128 and below are candidates.
  const kgen::Spec spec = kgen::parse_spec(R"({"name": "decode_case", "kind": "attention_decode",
    "shape": {"batch": 2, "q_heads": 8, "kv_heads": 2, "q_len": 1, "kv_len": 4096, "head_dim": 128},
    "dtype": "bfloat16", "targets": {"sm90a": {"block_kv": 128}}})", ".");
  const kgen::Target& sm90a = *kgen::find_target("sm90a");
  const kgen::Candidates candidates =
      kgen::legal_tilings(spec, sm90a, TilePass::kDecode, *sm90a.tuning_space(spec, TilePass::kDecode), {});
  ASSERT_FALSE(candidates.legal.empty());
  for (const TileChoice& tiles : candidates.legal) EXPECT_LE(tiles.at("block_kv"), 128) << kgen::describe_tiles(tiles);
  const std::optional<kgen::TilingViolation> refused =
      kgen::check_pass_tiles(spec, sm90a, TilePass::kDecode, {{"block_kv", 256}, {"splits", 2}});
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->path, "targets.sm90a");
  EXPECT_NE(refused->expected.find("registers per consumer thread"), std::string::npos) << refused->expected;
}

// --- Tables.

class TuningTables : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kgen-tune-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "tpu");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A table for `spec` whose forward entry measured `rows` (tiles, cost), ranked as given.
  Json table_for(const kgen::Spec& spec, const std::vector<std::pair<TileChoice, double>>& rows,
                 const std::string& digest = "") {
    const Json fields = kgen::tuning_fields(spec);
    Json measured = Json::array();
    for (const auto& [tiles, cost] : rows) {
      Json object = Json::object();
      for (const auto& [field, value] : tiles) object[field] = value;
      measured.push_back(Json{{"tiles", object}, {"cost", cost}});
    }
    const kgen::TuningSpace space = *tpu().tuning_space(spec, TilePass::kForward);
    const std::string current = kgen::candidates_digest(kgen::legal_tilings(spec, tpu(), TilePass::kForward, space, {}).legal);
    Json entry{{"chosen", measured[0]["tiles"]}, {"measured", measured}, {"legal_candidates", 100},
               {"candidates_digest", digest.empty() ? current : digest}, {"measured_by", "hand"},
               {"cost_unit", "units"}, {"tools", Json::object()}};
    return Json{{"format", 1}, {"target", "tpu"}, {"device", "v5e"},
                {"entries", {{kgen::tuning_key(fields), {{"fields", fields}, {"specs", {"x.json"}}, {"forward", entry}}}}}};
  }
  void write(const Json& table) { std::ofstream(dir_ / "tpu" / "v5e.json") << table.dump(2); }
  kgen::Spec parse(const std::string& text) { return kgen::parse_spec(text, ".", dir_.string()); }

  fs::path dir_;
};

const TileChoice kGood{{"block_kv", 512}, {"block_kv_compute", 256}, {"block_q", 256}};
const TileChoice kSecond{{"block_kv", 1024}, {"block_kv_compute", 512}, {"block_q", 512}};
const std::string kAuto = R"("block_q": "auto", "block_kv": "auto")";

TEST_F(TuningTables, AutoTakesTheTunedEntry) {
  const kgen::Spec plain = parse(spec_text(R"("block_q": 512, "block_kv": 512)"));
  write(table_for(plain, {{kGood, 10}, {kSecond, 20}}));
  const kgen::Spec spec = parse(spec_text(kAuto));
  EXPECT_EQ(tpu().tiles_of(spec, TilePass::kForward), kGood);
  ASSERT_EQ(spec.tile_resolutions.size(), 1u);
  EXPECT_TRUE(spec.tile_resolutions[0].tuned);
  EXPECT_FALSE(spec.tile_resolutions[0].problem) << *spec.tile_resolutions[0].problem;
  EXPECT_NE(spec.tile_resolutions[0].why.find("rank 1 of 2"), std::string::npos) << spec.tile_resolutions[0].why;
}

TEST_F(TuningTables, FieldsWrittenAsNumbersPickTheBestRowThatAgrees) {
  const kgen::Spec plain = parse(spec_text(R"("block_q": 512, "block_kv": 512)"));
  write(table_for(plain, {{kGood, 10}, {kSecond, 20}}));
  const kgen::Spec spec = parse(spec_text(R"("block_q": 512, "block_kv": "auto")"));
  EXPECT_EQ(tpu().tiles_of(spec, TilePass::kForward), kSecond);
  EXPECT_NE(spec.tile_resolutions[0].why.find("rank 2 of 2"), std::string::npos);
}

TEST_F(TuningTables, WithoutAnEntryTheDefaultRuleChoosesAndSaysSo) {
  const kgen::Spec spec = parse(spec_text(kAuto));
  const kgen::TuningSpace space = *tpu().tuning_space(spec, TilePass::kForward);
  const TileChoice expected = kgen::legal_tilings(spec, tpu(), TilePass::kForward, space, {}).legal.front();
  EXPECT_EQ(tpu().tiles_of(spec, TilePass::kForward), expected);
  // v5e's preferred 512/512/256 is legal here, so it is the rule's choice.
  EXPECT_EQ(expected, (TileChoice{{"block_kv", 512}, {"block_kv_compute", 256}, {"block_q", 512}}));
  ASSERT_TRUE(spec.tile_resolutions[0].problem);
  EXPECT_NE(spec.tile_resolutions[0].problem->find("no forward entry"), std::string::npos);
  // Deterministic: the same choice from a second parse.
  EXPECT_EQ(tpu().tiles_of(parse(spec_text(kAuto)), TilePass::kForward), expected);
}

TEST_F(TuningTables, AnEntryMeasuredOverAnotherCandidateSetIsStale) {
  const kgen::Spec plain = parse(spec_text(R"("block_q": 512, "block_kv": 512)"));
  write(table_for(plain, {{kGood, 10}}, std::string(64, 'a')));
  const kgen::Spec spec = parse(spec_text(kAuto));
  EXPECT_EQ(tpu().tiles_of(spec, TilePass::kForward), kGood);  // still used, but flagged
  ASSERT_TRUE(spec.tile_resolutions[0].problem);
  EXPECT_NE(spec.tile_resolutions[0].problem->find("stale"), std::string::npos);
}

TEST_F(TuningTables, ARowNoLongerLegalIsPassedOver) {
  const kgen::Spec plain = parse(spec_text(R"("block_q": 512, "block_kv": 512)"));
  const TileChoice illegal{{"block_kv", 512}, {"block_kv_compute", 384}, {"block_q", 256}};
  write(table_for(plain, {{illegal, 5}, {kGood, 10}}));
  EXPECT_EQ(tpu().tiles_of(parse(spec_text(kAuto)), TilePass::kForward), kGood);
}

// Each planted defect of a table is refused with its JSON path, the value and the expectation.
TEST_F(TuningTables, MalformedTablesAreRefusedWithTheirPath) {
  const kgen::Spec plain = parse(spec_text(R"("block_q": 512, "block_kv": 512)"));
  const Json good = table_for(plain, {{kGood, 10}, {kSecond, 20}});
  const std::string key = kgen::tuning_key(kgen::tuning_fields(plain));
  const std::string entry = "entries." + key + ".forward";
  struct Plant {
    std::function<void(Json&)> change;
    std::vector<std::string> pieces;
  };
  const std::vector<Plant> plants = {
      {[&](Json& t) { t["format"] = 2; }, {"tuning/tpu/v5e.json: format: found 2", "expected 1"}},
      {[&](Json& t) { t["device"] = "v6e"; }, {"device: found \"v6e\"", "its file name"}},
      {[&](Json& t) { t["entries"][key]["forward"]["measured"][0]["tiles"]["block_q"] = "big"; },
       {entry + ".measured[0].tiles.block_q: found \"big\"", "expected an integer"}},
      {[&](Json& t) { t["entries"][key]["forward"]["measured"][1]["cost"] = 5; },
       {entry + ".measured[1].cost: found 5", "ranked by cost"}},
      {[&](Json& t) { t["entries"][key]["forward"]["chosen"] = t["entries"][key]["forward"]["measured"][1]["tiles"]; },
       {entry + ".chosen: found", "the tiles of the first measured row"}},
      {[&](Json& t) { t["entries"][key]["fields"]["shape"]["q_len"] = 2048; },
       {"entries." + key + ".fields: found fields whose key is", "edited by hand"}},
      {[&](Json& t) { t["entries"][key]["forward"]["candidates_digest"] = "xyz"; },
       {entry + ".candidates_digest: found \"xyz\"", "64 lowercase hex"}},
      {[&](Json& t) { t["entries"][key]["forward"]["measured"] = Json::array(); },
       {entry + ".measured: found []", "at least one measured tiling"}},
      {[&](Json& t) { t["entries"][key]["forward"]["speed"] = 1; }, {entry + ".speed: found 1", "no such key"}},
  };
  for (const Plant& plant : plants) {
    Json table = good;
    plant.change(table);
    write(table);
    const std::string message = message_of(spec_text(kAuto), dir_.string());
    for (const std::string& piece : plant.pieces) EXPECT_NE(message.find(piece), std::string::npos) << message;
  }
  std::ofstream(dir_ / "tpu" / "v5e.json") << "{ not json";
  EXPECT_NE(message_of(spec_text(kAuto), dir_.string()).find("tuning/tpu/v5e.json: not valid JSON"), std::string::npos);
}

TEST(AutoTiles, NoLegalCandidateIsABadSpec) {
  // q_len 1032 = 8 x 129: no multiple of 16 divides it, so no block_q is legal.
  const std::string message = message_of(spec_text(R"("block_q": "auto", "block_kv": 512)", 1032));
  EXPECT_NE(message.find("targets.tpu.block_q: found \"auto\""), std::string::npos) << message;
  EXPECT_NE(message.find("or a legal tiling for the default rule; none of its"), std::string::npos) << message;
}

TEST(AutoTiles, AStringOtherThanAutoIsRefused) {
  const std::string message = message_of(spec_text(R"("block_q": "big", "block_kv": 512)"));
  EXPECT_NE(message.find("targets.tpu.block_q: found \"big\", expected an integer in [1, 16384] or \"auto\""),
            std::string::npos)
      << message;
}

TEST(AutoTiles, BackwardFieldsResolveAfterTheForwards) {
  const kgen::Spec spec = kgen::parse_spec(
      spec_text(R"("block_q": "auto", "block_kv": 512, "backward": {"block_q": "auto", "block_kv": "auto"})", 1024,
                R"("backward": true, )"),
      ".");
  ASSERT_EQ(spec.tile_resolutions.size(), 2u);
  EXPECT_EQ(spec.tile_resolutions[0].pass, TilePass::kForward);
  EXPECT_EQ(spec.tile_resolutions[1].pass, TilePass::kBackward);
  EXPECT_FALSE(kgen::check_pass_tiles(spec, tpu(), TilePass::kBackward, tpu().tiles_of(spec, TilePass::kBackward)));
}

// --- Through the binary, with the stand-in measurer.

class TuneCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("kgen-tune-cli-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "specs");
    for (const char* folder : {"templates", "runtime"})
      fs::copy(fs::path(KGEN_SOURCE_DIR) / folder, root_ / folder, fs::copy_options::recursive);
    fs::create_directories(root_ / "tests" / "tune");
    fs::copy_file(fs::path(KGEN_SOURCE_DIR) / "tests/tune/fake_measure.py", root_ / "tests/tune/fake_measure.py");
    std::ofstream(root_ / "specs" / "tune_case.json") << spec_text(kAuto);
  }
  void TearDown() override { fs::remove_all(root_); }

  struct Result {
    int status;
    std::string out;
  };
  Result kgen(const std::string& arguments, const std::string& environment = "") {
    const std::string command = "cd '" + root_.string() + "' && KGEN_TUNE_CACHE='" + (root_ / "cache").string() +
                                "' FAKE_MEASURE_LOG='" + (root_ / "measured.log").string() + "' " + environment +
                                " '" KGEN_BINARY "' " + arguments + " 2>&1";
    Result result{0, ""};
    FILE* pipe = ::popen(command.c_str(), "r");
    char buffer[4096];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) result.out.append(buffer, n);
    const int status = ::pclose(pipe);
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
  }
  std::string tune_args(const std::string& extra = "") {
    return "tune specs/tune_case.json --target tpu --root . --measure 'python3 tests/tune/fake_measure.py' " + extra;
  }
  int measured_lines() {
    const std::optional<std::string> log = kgen::read_text_file((root_ / "measured.log").string());
    return log ? static_cast<int>(std::count(log->begin(), log->end(), '\n')) : 0;
  }

  fs::path root_;
};

TEST_F(TuneCommand, TunesRanksWritesTheTableAndCachesByContent) {
  const Result tuned = kgen(tune_args());
  ASSERT_EQ(tuned.status, 0) << tuned.out;
  // The fake cost is smallest at 256 everywhere.
  EXPECT_NE(tuned.out.find("   1  256/256/256"), std::string::npos) << tuned.out;
  EXPECT_NE(tuned.out.find("by the fake measurer of tests/tune (fake 1)"), std::string::npos) << tuned.out;
  const int first = measured_lines();
  EXPECT_GT(first, 10);
  const kgen::TuningTable table = kgen::TuningTable::read((root_ / "tuning").string(), "tpu", "v5e");
  const kgen::Spec spec = kgen::load_spec((root_ / "specs/tune_case.json").string(), root_.string());
  ASSERT_TRUE(spec.tile_resolutions.size() == 1 && spec.tile_resolutions[0].tuned);
  EXPECT_EQ(tpu().tiles_of(spec, TilePass::kForward),
            (TileChoice{{"block_kv", 256}, {"block_kv_compute", 256}, {"block_q", 256}}));
  EXPECT_EQ(static_cast<int>(table.entry(spec.tile_resolutions[0].key, TilePass::kForward)->measured.size()), first);
  // Everything again from the cache: nothing measured.
  const Result again = kgen(tune_args());
  ASSERT_EQ(again.status, 0) << again.out;
  EXPECT_EQ(measured_lines(), first);
  EXPECT_NE(again.out.find("(" + std::to_string(first) + " from the cache)"), std::string::npos) << again.out;
  // The table is the same bytes.
  EXPECT_EQ(kgen::read_text_file((root_ / "tuning/tpu/v5e.json").string()), table.text());
}

TEST_F(TuneCommand, CheckGeneratedFailsUntilTunedAndExplainSaysWhichAndWhy) {
  const Result before = kgen("gen --check specs/tune_case.json --root . --out generated");
  EXPECT_EQ(before.status, 1) << before.out;
  EXPECT_NE(before.out.find("no forward entry"), std::string::npos) << before.out;
  EXPECT_NE(before.out.find("make tune SPEC=specs/tune_case.json"), std::string::npos) << before.out;
  const Result rule = kgen("explain specs/tune_case.json --root .");
  EXPECT_NE(rule.out.find("the default rule: the legal tiling nearest"), std::string::npos) << rule.out;
  ASSERT_EQ(kgen(tune_args()).status, 0);
  ASSERT_EQ(kgen("gen specs/tune_case.json --root . --out generated").status, 0);
  const Result after = kgen("gen --check specs/tune_case.json --root . --out generated");
  EXPECT_EQ(after.status, 0) << after.out;
  const Result tuned = kgen("explain specs/tune_case.json --root .");
  EXPECT_NE(tuned.out.find("tuned: rank 1 of"), std::string::npos) << tuned.out;
  EXPECT_NE(tuned.out.find("block_kv 256, block_kv_compute 256, block_q 256"), std::string::npos) << tuned.out;
}

TEST_F(TuneCommand, BudgetListFailuresAndBadArguments) {
  const Result listed = kgen(tune_args("--list --budget 3"));
  ASSERT_EQ(listed.status, 0) << listed.out;
  const Json list = Json::parse(listed.out);
  EXPECT_EQ(list["to_measure"].size(), 3u);
  EXPECT_GT(list["legal"].size(), 3u);
  EXPECT_EQ(measured_lines(), 0);

  const Result failing = kgen(tune_args("--budget 5 --no-write"), "FAKE_MEASURE_FAIL_BLOCK_KV=512");
  EXPECT_EQ(failing.status, 0) << failing.out;
  EXPECT_NE(failing.out.find("failed  "), std::string::npos) << failing.out;
  EXPECT_NE(failing.out.find("planted failure"), std::string::npos) << failing.out;
  EXPECT_FALSE(fs::exists(root_ / "tuning"));
  EXPECT_EQ(measured_lines(), 5);

  for (const auto& [arguments, piece] : std::vector<std::pair<std::string, std::string>>{
           {tune_args("--pass dq"), "--pass: found \"dq\""},
           {tune_args("--budget 0"), "--budget: found \"0\""},
           {"tune specs/tune_case.json --target sm90a --root .", "--target: found \"sm90a\""},
           {"tune specs/tune_case.json --root .", "needs --target"}}) {
    const Result bad = kgen(arguments);
    EXPECT_EQ(bad.status, 2) << arguments << "\n" << bad.out;
    EXPECT_NE(bad.out.find(piece), std::string::npos) << bad.out;
  }
}

// make tune's command: --auto tunes the passes a spec writes "auto" (none for a spec without),
// after which check-generated passes; an entry planted stale makes it fail again.
TEST_F(TuneCommand, AutoTunesTheAutoPassesAndAPlantedStaleEntryFailsTheCheck) {
  std::ofstream(root_ / "specs" / "plain.json") << spec_text(R"("block_q": 256, "block_kv": 256)");
  const Result tuned = kgen("tune --auto specs/tune_case.json specs/plain.json --root . --measure "
                            "'python3 tests/tune/fake_measure.py'");
  ASSERT_EQ(tuned.status, 0) << tuned.out;
  EXPECT_NE(tuned.out.find("kgen tune specs/tune_case.json --target tpu --pass forward:"), std::string::npos) << tuned.out;
  EXPECT_NE(tuned.out.find("specs/plain.json: no \"auto\" tiles; nothing to tune"), std::string::npos) << tuned.out;
  ASSERT_EQ(kgen("gen specs/tune_case.json --root . --out generated").status, 0);
  const Result fresh = kgen("gen --check specs/tune_case.json --root . --out generated");
  EXPECT_EQ(fresh.status, 0) << fresh.out;

  // Plant: the entry's candidate digest as if it had been measured over another legal set.
  const fs::path file = root_ / "tuning/tpu/v5e.json";
  Json table = Json::parse(*kgen::read_text_file(file.string()));
  for (auto& [key, entry] : table["entries"].items()) entry["forward"]["candidates_digest"] = std::string(64, '0');
  std::ofstream(file) << table.dump(2);
  const Result stale = kgen("gen --check specs/tune_case.json --root . --out generated");
  EXPECT_EQ(stale.status, 1) << stale.out;
  EXPECT_NE(stale.out.find("is stale: the legal forward tilings changed since it was measured"), std::string::npos)
      << stale.out;
  EXPECT_NE(stale.out.find("Fix with: make tune SPEC=specs/tune_case.json"), std::string::npos) << stale.out;
}

TEST_F(TuneCommand, ADecodePassIsSkippedWhileTheTargetGeneratesNoDecodeKernel) {
  // tpu and sm90a generate decode kernels; sm100a does not yet (kgen gen writes the others with a note).
  std::ofstream(root_ / "specs" / "decode_case.json") << R"({"name": "decode_case", "kind": "attention_decode",
    "shape": {"batch": 2, "q_heads": 8, "kv_heads": 2, "q_len": 1, "kv_len": 4096, "head_dim": 128},
    "dtype": "bfloat16", "targets": {"tpu": {"generation": "v5e", "block_kv": 512}, "sm100a": {"block_kv": 128}}})";
  const Result skipped = kgen("tune specs/decode_case.json --target sm100a --pass decode --root . --measure "
                              "'python3 tests/tune/fake_measure.py'");
  EXPECT_EQ(skipped.status, 0) << skipped.out;
  EXPECT_NE(skipped.out.find("skipped --pass decode: target sm100a generates no decode kernel yet"), std::string::npos)
      << skipped.out;
  EXPECT_EQ(measured_lines(), 0);
  EXPECT_FALSE(fs::exists(root_ / "tuning"));
}

TEST_F(TuneCommand, AMalformedTableIsABadSpecForGenAndExplain) {
  fs::create_directories(root_ / "tuning/tpu");
  std::ofstream(root_ / "tuning/tpu/v5e.json") << R"({"format": 1, "target": "tpu", "device": "v5e", "entries": {"zz": {}}})";
  for (const char* command : {"gen specs/tune_case.json --root . --out generated", "explain specs/tune_case.json --root ."}) {
    const Result bad = kgen(command);
    EXPECT_EQ(bad.status, 2) << bad.out;
    EXPECT_NE(bad.out.find("tuning/tpu/v5e.json: entries.zz: found \"zz\" as a key, expected 16 lowercase hex digits"),
              std::string::npos)
        << bad.out;
  }
  EXPECT_FALSE(fs::exists(root_ / "generated"));
}

}  // namespace
