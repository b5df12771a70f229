#include "tune_measure.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>

#include "receipts.h"
#include "text_files.h"

namespace kgen {
namespace {

// The program's whole stdout, or std::runtime_error with its status.
std::string read_command(const std::string& command) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot run " + command);
  std::string out;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int status = ::pclose(pipe);
  if (status != 0) throw std::runtime_error(command + " failed (status " + std::to_string(status) + ")");
  return out;
}

}  // namespace

std::string shell_command(const std::vector<std::string>& words) {
  std::string line;
  for (const std::string& word : words) {
    std::string quoted = "'";
    for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += (line.empty() ? "" : " ") + quoted + "'";
  }
  return line;
}

Measurer describe_measurer(std::vector<std::string> command, const std::string& root) {
  Measurer measurer{std::move(command), root, nullptr};
  std::vector<std::string> words = measurer.command;
  words.push_back("--describe");
  const std::string out = read_command("cd " + shell_command({root}) + " && " + shell_command(words));
  try {
    measurer.description = Json::parse(out);
  } catch (const Json::exception&) {
    throw std::runtime_error(shell_command(words) + " answered no JSON: " + out.substr(0, 200));
  }
  for (const char* key : {"measured_by", "cost_unit"})
    if (!measurer.description.contains(key) || !measurer.description[key].is_string())
      throw std::runtime_error(shell_command(words) + " did not say its \"" + key + "\"");
  return measurer;
}

std::string measurement_key(const Measurer& measurer, const std::string& inputs) {
  std::string text = measurer.description.dump() + "\n";
  if (measurer.description.contains("sources"))
    for (const Json& source : measurer.description["sources"]) {
      const std::optional<std::string> bytes = read_text_file(measurer.root + "/" + source.get<std::string>());
      text += source.get<std::string>() + "\n" + sha256_hex(bytes.value_or("(missing)")) + "\n";
    }
  return sha256_hex(text + inputs);
}

std::optional<std::string> tune_cache_folder() {
  if (const char* folder = std::getenv("KGEN_TUNE_CACHE")) {
    if (std::string(folder) == "off") return std::nullopt;
    return std::string(folder);
  }
  if (const char* home = std::getenv("HOME")) return std::string(home) + "/.cache/kgen/tune";
  return std::nullopt;
}

std::optional<Json> cached_measurement(const std::string& key) {
  const std::optional<std::string> folder = tune_cache_folder();
  if (!folder) return std::nullopt;
  const std::optional<std::string> text = read_text_file(*folder + "/" + key + ".json");
  if (!text) return std::nullopt;
  try {
    return Json::parse(*text);
  } catch (const Json::exception&) {
    return std::nullopt;  // a damaged entry is measured again
  }
}

void cache_measurement(const std::string& key, const Json& result) {
  const std::optional<std::string> folder = tune_cache_folder();
  if (!folder) return;
  std::error_code error;
  std::filesystem::create_directories(*folder, error);
  // Written under a temporary name and renamed: a concurrent reader sees all or nothing.
  const std::string path = *folder + "/" + key + ".json", temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary);
    out << result.dump() << "\n";
    if (!out) return;
  }
  std::filesystem::rename(temporary, path, error);
}

void run_measurer(const Measurer& measurer, const std::vector<Json>& jobs, int parallel, const std::string& scratch,
                  const std::function<void(const Json&)>& done) {
  if (jobs.empty()) return;
  const std::string jobs_file = scratch + "/jobs.jsonl";
  {
    std::ofstream out(jobs_file, std::ios::binary);
    for (const Json& job : jobs) out << job.dump() << "\n";
    if (!out) throw std::runtime_error("cannot write " + jobs_file);
  }
  std::vector<std::string> words = measurer.command;
  for (const std::string& word : {std::string("--jobs"), jobs_file, std::string("--parallel"), std::to_string(parallel)})
    words.push_back(word);
  const std::string command = "cd " + shell_command({measurer.root}) + " && " + shell_command(words);
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot run " + command);
  std::set<int64_t> answered;
  std::string line;
  for (int c; (c = std::fgetc(pipe)) != EOF;) {
    if (c != '\n') {
      line += static_cast<char>(c);
      continue;
    }
    // Lines that are not an answer (a tool's own chatter) are left out.
    if (!line.empty() && line.front() == '{') {
      try {
        const Json answer = Json::parse(line);
        if (answer.contains("id") && answer["id"].is_number_integer()) {
          answered.insert(answer["id"].get<int64_t>());
          done(answer);
        }
      } catch (const Json::exception&) {
      }
    }
    line.clear();
  }
  const int status = ::pclose(pipe);
  if (status != 0) throw std::runtime_error(shell_command(words) + " failed (status " + std::to_string(status) + ")");
  for (const Json& job : jobs)
    if (!answered.count(job["id"].get<int64_t>()))
      throw std::runtime_error(shell_command(words) + " gave no answer for job " + job["id"].dump());
}

}  // namespace kgen
