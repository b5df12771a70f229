// The bad-spec catalog (docs/spec-format.md §1, §6): every spec in this folder has
// exactly one defect, and expected.json lists what kgen's message about it must contain
// (the JSON path, the value found, what was expected). For each, kgen gen, plan and
// explain must exit with status 2, say so on stderr, and write nothing. Bad command lines
// likewise.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const fs::path kCatalogDir = KGEN_BAD_SPECS_DIR;

// A small valid spec: the base every catalog case was derived from.
const std::string kGoodSpec = R"({
  "name": "good_case",
  "kind": "attention_forward",
  "shape": {"batch": 1, "q_heads": 4, "kv_heads": 2, "q_len": 512, "kv_len": 512, "head_dim": 64},
  "dtype": "bfloat16",
  "mask": {"type": "causal"},
  "targets": {
    "tpu": {"generation": "v5e", "block_q": 128, "block_kv": 128},
    "sm90a": {"block_q": 128, "block_kv": 64}
  }
}
)";

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

struct Catalog {
  std::vector<std::pair<std::string, std::vector<std::string>>> cases;  // in file order
  std::string error;                                                    // why it is unusable
};

const Catalog& catalog() {
  static const Catalog loaded = [] {
    Catalog result;
    try {
      const Json json = Json::parse(read(kCatalogDir / "expected.json"));
      for (const auto& [name, expected] : json.items())
        result.cases.emplace_back(name, expected.get<std::vector<std::string>>());
    } catch (const std::exception& error) {
      result.error = error.what();
    }
    return result;
  }();
  return loaded;
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const auto& entry : catalog().cases) names.push_back(entry.first);
  return names;
}

const std::vector<std::string>& expected_of(const std::string& name) {
  for (const auto& entry : catalog().cases)
    if (entry.first == name) return entry.second;
  static const std::vector<std::string> none;
  return none;
}

struct Result {
  bool exited = false;
  int status = -1;  // exit status, or the signal that killed kgen
  std::string out, err;
};

std::string describe(const Result& result) {
  return (result.exited ? "exit status " : "killed by signal ") + std::to_string(result.status) +
         "\nstdout: " + result.out + "\nstderr: " + result.err;
}

// Runs kgen with exactly these arguments (no shell) in `cwd`; its stdout and stderr go
// to files in `scratch`, which must lie outside `cwd`, so that `cwd` shows what kgen wrote.
Result run_kgen(const std::vector<std::string>& args, const fs::path& cwd, const fs::path& scratch) {
  const fs::path out_file = scratch / "stdout", err_file = scratch / "stderr";
  const pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> argv;
    std::string binary = KGEN_BINARY;
    argv.push_back(binary.data());
    std::vector<std::string> copies = args;
    for (std::string& arg : copies) argv.push_back(arg.data());
    argv.push_back(nullptr);
    const int out = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || err < 0 || ::chdir(cwd.c_str()) != 0) ::_exit(127);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  Result result;
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return result;
  result.exited = WIFEXITED(status);
  result.status = result.exited ? WEXITSTATUS(status) : WTERMSIG(status);
  result.out = read(out_file);
  result.err = read(err_file);
  return result;
}

// Every file and folder under `dir`, relative to it.
std::set<std::string> tree(const fs::path& dir) {
  std::set<std::string> entries;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    entries.insert(fs::relative(entry.path(), dir).generic_string());
  return entries;
}

// A fresh folder `work` for kgen to run in, and `scratch` beside it for its output.
class BadSpecTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/kgen-bad-specs-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    root_ = pattern;
    work_ = root_ / "work";
    scratch_ = root_ / "scratch";
    fs::create_directories(work_);
    fs::create_directories(scratch_);
  }
  void TearDown() override {
    if (!root_.empty()) fs::remove_all(root_);
  }

  Result kgen(const std::vector<std::string>& args) { return run_kgen(args, work_, scratch_); }

  // Exit status exactly 2, every expected piece on stderr, nothing on stdout, and the
  // work folder exactly as it was: no output folder, no stray or temporary file.
  void expect_refused(const std::vector<std::string>& args, const std::vector<std::string>& expected) {
    const std::set<std::string> before = tree(work_);
    const Result result = kgen(args);
    std::string command = "kgen";
    for (const std::string& arg : args) command += " " + arg;
    SCOPED_TRACE(command);
    EXPECT_TRUE(result.exited && result.status == 2) << describe(result);
    EXPECT_EQ(result.err.rfind("kgen: ", 0), 0u) << describe(result);
    for (const std::string& piece : expected)
      EXPECT_NE(result.err.find(piece), std::string::npos)
          << "stderr lacks \"" << piece << "\"\n" << describe(result);
    EXPECT_EQ(result.out, "") << describe(result);
    EXPECT_EQ(tree(work_), before);
  }

  fs::path root_, work_, scratch_;
};

// --- The catalog.

class CatalogCase : public BadSpecTest, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override {
    BadSpecTest::SetUp();
    // The spec and every .npy file of the folder, as a user would have them side by side.
    fs::copy_file(kCatalogDir / (GetParam() + ".json"), work_ / (GetParam() + ".json"));
    for (const auto& entry : fs::directory_iterator(kCatalogDir))
      if (entry.path().extension() == ".npy") fs::copy_file(entry.path(), work_ / entry.path().filename());
  }
  std::string spec() const { return GetParam() + ".json"; }
  // The catalog's pieces, and the spec file as named on the command line: "x.json: ".
  std::vector<std::string> expected(const std::string& named_as) const {
    std::vector<std::string> pieces = expected_of(GetParam());
    pieces.push_back(named_as + ": ");
    return pieces;
  }
};

TEST_P(CatalogCase, GenRefusesAndWritesNothing) {
  expect_refused({"gen", spec(), "--out", "out"}, expected(spec()));
  EXPECT_FALSE(fs::exists(work_ / "out"));
}

TEST_P(CatalogCase, GenWithTheDefaultOutputFolderWritesNothing) {
  expect_refused({"gen", spec()}, expected(spec()));
  EXPECT_FALSE(fs::exists(work_ / "generated"));
}

TEST_P(CatalogCase, GenWithAnAbsoluteSpecPathRefuses) {
  expect_refused({"gen", (work_ / spec()).string(), "--out", (work_ / "out").string()},
                 expected((work_ / spec()).string()));
}

TEST_P(CatalogCase, PlanRefuses) {
  expect_refused({"plan", spec(), "--target", "tpu"}, expected(spec()));
}

TEST_P(CatalogCase, ExplainRefuses) { expect_refused({"explain", spec()}, expected(spec())); }

TEST_P(CatalogCase, AValidSpecBesideItIsNotWrittenEither) {
  write(work_ / "good.json", kGoodSpec);
  expect_refused({"gen", "good.json", spec(), "--out", "out"}, expected(spec()));
  expect_refused({"gen", spec(), "good.json", "--out", "out"}, expected(spec()));
  EXPECT_FALSE(fs::exists(work_ / "out"));
}

INSTANTIATE_TEST_SUITE_P(Catalog, CatalogCase, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CatalogCase);

TEST(CatalogFolder, EverySpecFileHasAnEntryAndEveryEntryAFile) {
  ASSERT_EQ(catalog().error, "") << "expected.json cannot be read";
  std::set<std::string> files, entries;
  for (const auto& entry : fs::directory_iterator(kCatalogDir))
    if (entry.path().extension() == ".json" && entry.path().filename() != "expected.json")
      files.insert(entry.path().stem().string());
  for (const auto& [name, expected] : catalog().cases) {
    EXPECT_TRUE(entries.insert(name).second) << name << " is listed twice";
    // The JSON path, the value found and what was expected: at least three pieces.
    EXPECT_GE(expected.size(), 3u) << name;
    for (const std::string& piece : expected) EXPECT_FALSE(piece.empty()) << name;
  }
  for (const std::string& name : files)
    EXPECT_TRUE(entries.count(name)) << name << ".json has no entry in expected.json";
  for (const std::string& name : entries)
    EXPECT_TRUE(files.count(name)) << "expected.json lists " << name << " but " << name << ".json is missing";
  EXPECT_GE(entries.size(), 36u);
}

TEST(CatalogFolder, EveryNpyFileIsUsedByACase) {
  std::string specs;
  for (const auto& entry : fs::directory_iterator(kCatalogDir))
    if (entry.path().extension() == ".json") specs += read(entry.path());
  for (const auto& entry : fs::directory_iterator(kCatalogDir)) {
    if (entry.path().extension() != ".npy") continue;
    EXPECT_NE(specs.find("\"" + entry.path().filename().string() + "\""), std::string::npos)
        << entry.path().filename() << " is referenced by no spec";
  }
}

// --- The valid base, so that every catalog case has exactly its own defect to blame.

TEST_F(BadSpecTest, TheBaseSpecIsValid) {
  write(work_ / "good.json", kGoodSpec);
  const Result result = kgen({"gen", "good.json", "--out", "out"});
  EXPECT_TRUE(result.exited && result.status == 0) << describe(result);
  EXPECT_TRUE(fs::exists(work_ / "out/good_case/MANIFEST.json"));
  for (const std::string target : {"tpu", "sm90a"}) {
    const Result plan = kgen({"plan", "good.json", "--target", target});
    EXPECT_TRUE(plan.exited && plan.status == 0) << describe(plan);
  }
}

TEST_F(BadSpecTest, TwoSpecsWithOneNameWriteNothing) {
  write(work_ / "good.json", kGoodSpec);
  write(work_ / "twin.json", kGoodSpec);
  expect_refused({"gen", "good.json", "twin.json", "--out", "out"}, {"twin.json", "name", "good_case"});
}

// --- Masks nested far beyond any real composition: refused by path, without a crash.

std::string nested_mask_spec(int depth) {
  std::string mask;
  for (int k = 0; k < depth; ++k) mask += R"({"type":"and","masks":[)";
  mask += R"({"type":"causal"})";
  for (int k = 0; k < depth; ++k) mask += "]}";
  std::string spec = kGoodSpec;
  const std::string causal = R"("mask": {"type": "causal"})";
  spec.replace(spec.find(causal), causal.size(), "\"mask\": " + mask);
  return spec;
}

TEST_F(BadSpecTest, MaskNested5000LevelsDeepIsRefused) {
  write(work_ / "deep.json", nested_mask_spec(5000));
  expect_refused({"gen", "deep.json", "--out", "out"}, {"deep.json: mask.masks[0].masks[0]", "levels"});
}

TEST_F(BadSpecTest, MaskNested100000LevelsDeepIsRefused) {
  write(work_ / "deep.json", nested_mask_spec(100000));
  expect_refused({"gen", "deep.json", "--out", "out"}, {"deep.json: mask.masks[0].masks[0]", "levels"});
  expect_refused({"plan", "deep.json", "--target", "tpu"}, {"deep.json: mask.masks[0]"});
  expect_refused({"explain", "deep.json"}, {"deep.json: mask.masks[0]"});
}

TEST_F(BadSpecTest, DeepValuesAnywhereAreRefusedByPath) {
  const std::string deep_array = std::string(100000, '[') + std::string(100000, ']');
  std::string spec = kGoodSpec;
  spec.replace(spec.find("\"bfloat16\""), 10, deep_array);
  write(work_ / "dtype.json", spec);
  expect_refused({"gen", "dtype.json", "--out", "out"}, {"dtype: found [[[[", "a string"});

  spec = kGoodSpec;
  spec.replace(spec.find("\"dtype\""), 0, "\"extra\": " + deep_array + ",\n  ");
  write(work_ / "extra.json", spec);
  expect_refused({"gen", "extra.json", "--out", "out"}, {"extra: found [[[[", "no such key"});
}

// --- Bad command lines.

class BadCommandLine : public BadSpecTest {
 protected:
  void SetUp() override {
    BadSpecTest::SetUp();
    write(work_ / "good.json", kGoodSpec);
  }
};

TEST_F(BadCommandLine, NoCommand) { expect_refused({}, {"no command", "usage"}); }

TEST_F(BadCommandLine, UnknownCommand) {
  expect_refused({"generate", "good.json"}, {"unknown command 'generate'", "usage"});
}

TEST_F(BadCommandLine, UnknownOption) {
  expect_refused({"gen", "good.json", "--force", "--out", "out"}, {"unknown option '--force'"});
  expect_refused({"plan", "good.json", "--target", "tpu", "-v"}, {"unknown option '-v'"});
}

TEST_F(BadCommandLine, OptionWithoutItsValue) {
  expect_refused({"gen", "good.json", "--out"}, {"--out needs a value"});
}

TEST_F(BadCommandLine, NoSpec) {
  expect_refused({"gen", "--out", "out"}, {"needs a spec file"});
  expect_refused({"explain"}, {"needs a spec file"});
}

TEST_F(BadCommandLine, PlanWithoutTarget) {
  expect_refused({"plan", "good.json"}, {"plan needs --target"});
}

TEST_F(BadCommandLine, PlanForATargetTheSpecLacks) {
  expect_refused({"plan", "good.json", "--target", "sm100a"}, {"--target", "\"sm100a\"", "a target the spec names"});
  expect_refused({"plan", "good.json", "--target", "sm80"}, {"--target", "\"sm80\"", "a target the spec names"});
}

TEST_F(BadCommandLine, OptionsOfAnotherCommand) {
  expect_refused({"gen", "good.json", "--target", "tpu", "--out", "out"}, {"--target belongs to kgen plan"});
  expect_refused({"explain", "good.json", "--out", "out"}, {"--out belongs to kgen gen"});
}

TEST_F(BadCommandLine, TooManySpecs) {
  expect_refused({"explain", "good.json", "good.json"}, {"exactly one spec"});
}

TEST_F(BadCommandLine, MissingSpecFile) {
  expect_refused({"gen", "absent.json", "--out", "out"}, {"absent.json", "cannot read"});
  expect_refused({"gen", "good.json", "absent.json", "--out", "out"}, {"absent.json", "cannot read"});
  expect_refused({"plan", "absent.json", "--target", "tpu"}, {"absent.json", "cannot read"});
  expect_refused({"explain", "absent.json"}, {"absent.json", "cannot read"});
}

TEST_F(BadCommandLine, SpecPathIsAFolder) {
  fs::create_directories(work_ / "folder.json");
  expect_refused({"gen", "folder.json", "--out", "out"}, {"folder.json", "cannot read"});
}

}  // namespace
