// The name grammar of docs/naming.md (generator/kernel_names.h), and every name under
// generated/: folders, files, manifest symbols and the symbols inside the files parse back to
// the spec they came from and a target that spec names.
#include <filesystem>
#include <map>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kernel_names.h"
#include "text_files.h"

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using kgen::GeneratedName;

const fs::path kSource = KGEN_SOURCE_DIR;

// The file's text; a missing file fails the test (std::bad_optional_access).
std::string read(const fs::path& path) { return kgen::read_text_file(path.string()).value(); }

bool same(const std::optional<GeneratedName>& parsed, const std::string& name, const std::string& target,
          const std::string& suffix, const std::string& pass = "") {
  return parsed && parsed->spec_name == name && parsed->target == target && parsed->suffix == suffix &&
         parsed->pass == pass;
}

TEST(NameGrammar, FileNamesRoundTrip) {
  for (const char* name : {"splash", "llama3_8b_causal", "a", "x_tpu", "y_sm90a_", "gpt_oss_sinks_sliding_window"})
    for (const std::string& target : kgen::generated_targets())
      for (const std::string& suffix : kgen::generated_suffixes()) {
        const std::string file = kgen::generated_file_name(name, target, suffix);
        EXPECT_TRUE(same(kgen::parse_generated_file_name(file), name, target, suffix)) << file;
        for (const std::string& pass : kgen::generated_passes()) {
          const std::string backward = kgen::generated_file_name(name, target, suffix, pass);
          EXPECT_TRUE(same(kgen::parse_generated_file_name(backward), name, target, suffix, pass)) << backward;
        }
      }
}

TEST(NameGrammar, SymbolsAndNamespacesRoundTrip) {
  for (const char* name : {"splash", "llama3_8b_causal", "x_tpu", "y_sm90a_", "z_sm100a_tpu", "w_tpu_dq", "v_dkv", "u_backward"})
    for (const std::string& target : kgen::generated_targets()) {
      const std::string symbol = kgen::kernel_symbol(name, target);
      EXPECT_TRUE(same(kgen::parse_kernel_symbol(symbol), name, target, "")) << symbol;
      for (const std::string& pass : kgen::generated_passes()) {
        const std::string backward = kgen::kernel_symbol(name, target, pass);
        EXPECT_TRUE(same(kgen::parse_kernel_symbol(backward), name, target, "", pass)) << backward;
        EXPECT_TRUE(same(kgen::parse_kernel_namespace(kgen::kernel_namespace(name, target, pass)), name, target, "",
                         pass));
      }
      EXPECT_TRUE(same(kgen::parse_kernel_namespace(kgen::kernel_namespace(name, target)), name, target, ""));
    }
}

TEST(NameGrammar, RejectsWhatIsNotInTheGrammar) {
  for (const char* file : {"Splash.sm90a.cu", "splash.sm80.cu", "splash.sm90a", "splash.sm90a.cpp",
                                  "splash.tpu.json", "splash..cu", ".sm90a.cu", "9lives.tpu.mlir", "splash.SM90A.cu",
                                  "spl-ash.tpu.mlir", "splash.sm90a.cu.orig", "MANIFEST.json", "splash.tpu.dk.mlir",
                                  "splash.tpu.dkv", "splash.dkv.tpu.mlir"})
    EXPECT_FALSE(kgen::parse_generated_file_name(file)) << file;
  for (const char* symbol : {"splash", "splash_", "_sm90a", "splash_sm80", "Splash_tpu", "splash-sm90a",
                                    "splash_tpu_", "splash_dkv", "splash_tpu_dkv_dq", "splash_dkv_tpu_"})
    EXPECT_FALSE(kgen::parse_kernel_symbol(symbol)) << symbol;
  EXPECT_FALSE(kgen::parse_kernel_namespace("splash_sm90a"));
  EXPECT_FALSE(kgen::parse_kernel_namespace("other::splash_sm90a"));
  EXPECT_FALSE(kgen::parse_kernel_namespace("kgen::splash_sm90a::forward_kernel"));
  EXPECT_FALSE(kgen::is_spec_name(std::string(65, 'a')));
  EXPECT_TRUE(kgen::is_spec_name(std::string(64, 'a')));
}

// spec name -> the targets it names, from specs/*.json.
std::map<std::string, std::set<std::string>> spec_targets() {
  std::map<std::string, std::set<std::string>> specs;
  for (const auto& entry : fs::directory_iterator(kSource / "specs")) {
    if (entry.path().extension() != ".json") continue;
    const Json spec = Json::parse(read(entry.path()));
    std::set<std::string>& targets = specs[spec.at("name").get<std::string>()];
    for (const auto& [target, options] : spec.at("targets").items()) targets.insert(target);
  }
  return specs;
}

TEST(GeneratedNames, EveryNameParsesBackToItsSpecAndTarget) {
  const auto specs = spec_targets();
  std::size_t checked = 0;
  for (const auto& folder : fs::directory_iterator(kSource / "generated")) {
    if (!folder.is_directory()) continue;
    const std::string name = folder.path().filename().string();
    ASSERT_TRUE(kgen::is_spec_name(name)) << folder.path();
    ASSERT_TRUE(specs.count(name)) << "generated/" << name << " has no spec in specs/";
    const std::set<std::string>& targets = specs.at(name);
    const Json manifest = Json::parse(read(folder.path() / "MANIFEST.json"));
    for (const auto& file : fs::directory_iterator(folder.path())) {
      const std::string file_name = file.path().filename().string();
      if (file_name == "MANIFEST.json") continue;
      const std::optional<GeneratedName> parsed = kgen::parse_generated_file_name(file_name);
      ASSERT_TRUE(parsed) << "generated/" << name << "/" << file_name << " is not <name>.<target>.<suffix> (docs/naming.md)";
      EXPECT_EQ(parsed->spec_name, name) << file_name;
      EXPECT_TRUE(targets.count(parsed->target)) << file_name << ": the spec names no target " << parsed->target;
      ASSERT_TRUE(manifest["files"].contains(file_name)) << file_name;
      const Json& entry = manifest["files"][file_name];
      EXPECT_EQ(entry.at("target"), parsed->target) << file_name;
      const std::string text = read(file.path());
      if (entry.contains("symbol")) {
        const std::string symbol = entry["symbol"];
        const std::optional<GeneratedName> from_symbol = kgen::parse_kernel_symbol(symbol);
        ASSERT_TRUE(from_symbol) << file_name << ": symbol " << symbol << " is not <name>_<target>";
        EXPECT_EQ(from_symbol->spec_name, name) << symbol;
        EXPECT_EQ(from_symbol->target, parsed->target) << symbol;
        EXPECT_EQ(from_symbol->pass, parsed->pass) << symbol;
        // The symbol as the file spells it: an MLIR function, or a C++ namespace inside kgen.
        if (parsed->suffix == "mlir") {
          EXPECT_NE(text.find("func.func @" + symbol + "("), std::string::npos) << file_name;
        }
        if (parsed->suffix == "cu") {
          EXPECT_NE(text.find("namespace " + symbol + " {"), std::string::npos) << file_name;
        }
      }
      if (parsed->suffix == "h") {  // a launcher: its API lives in kgen::<symbol>
        EXPECT_NE(text.find("namespace " + kgen::kernel_symbol(name, parsed->target, parsed->pass) + " {"),
                  std::string::npos)
            << file_name;
      }
      if (parsed->suffix == "operands.json") {
        const Json operands = Json::parse(text);
        if (operands.contains("kernel")) {
          EXPECT_TRUE(same(kgen::parse_kernel_symbol(operands["kernel"]), name, parsed->target, "", parsed->pass))
              << file_name;
        }
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 0u);
}

}  // namespace
