#include "tune_command.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "diagnostics.h"
#include "exit_status.h"
#include "kernel_names.h"
#include "receipts.h"
#include "runtime_files.h"
#include "spec.h"
#include "spec_outputs.h"
#include "targets/target.h"
#include "template_engine.h"
#include "text_files.h"
#include "tiling_candidates.h"
#include "tune_measure.h"
#include "tuning_table.h"

namespace kgen {
namespace {

namespace fs = std::filesystem;

const char* kUsage =
    "usage: kgen tune SPEC --target T [--pass forward|dq|dkv|backward|decode] [--budget N] [--jobs N]\n"
    "                 [--measure CMD] [--tables DIR] [--no-write] [--list] [--root DIR]\n"
    "       kgen tune --auto SPEC... [--target T] [--budget N] [--jobs N] [--measure CMD] [--tables DIR]\n"
    "  measures every legal tiling of one pass (the nearest N to the default rule's with --budget),\n"
    "  prints them ranked and writes the spec's entry into DIR/<target>/<device>.json (default\n"
    "  <root>/tuning); --list prints the legal tilings as JSON and measures nothing; --auto tunes\n"
    "  each pass whose tiles a spec writes \"auto\" (make tune; docs/tuning.md)\n";

struct TuneArguments {
  std::string spec_file, target, pass = "", measure, tables, root;
  std::vector<std::string> auto_specs;  // --auto: every spec named
  std::optional<int64_t> budget;
  int jobs = 0;
  bool write = true, list = false, auto_passes = false;
};

int64_t positive_option(const std::string& option, const std::string& value) {
  try {
    std::size_t used = 0;
    const long long parsed = std::stoll(value, &used);
    if (used == value.size() && parsed >= 1 && parsed <= (1 << 20)) return parsed;
  } catch (const std::exception&) {
  }
  throw SpecError(option, "\"" + value + "\"", "a whole number from 1 to 1048576");
}

TuneArguments parse_tune_arguments(int argc, char** argv, const std::string& root) {
  TuneArguments args;
  args.root = root;
  std::set<std::string> seen;
  for (int k = 2; k < argc; ++k) {
    const std::string arg = argv[k];
    if (arg == "--no-write" || arg == "--list" || arg == "--auto") {
      if (arg == "--no-write") args.write = false;
      if (arg == "--list") args.list = true;
      if (arg == "--auto") args.auto_passes = true;
      continue;
    }
    static const std::set<std::string> valued = {"--target", "--pass", "--budget", "--jobs", "--measure", "--tables", "--root"};
    if (valued.count(arg)) {
      if (k + 1 >= argc) throw SpecError("option " + arg + " needs a value\n" + kUsage);
      if (!seen.insert(arg).second) throw SpecError("option " + arg + " given twice\n" + kUsage);
      const std::string value = argv[++k];
      if (arg == "--target") args.target = value;
      if (arg == "--pass") args.pass = value;
      if (arg == "--budget") args.budget = positive_option(arg, value);
      if (arg == "--jobs") args.jobs = static_cast<int>(std::min<int64_t>(positive_option(arg, value), 256));
      if (arg == "--measure") args.measure = value;
      if (arg == "--tables") args.tables = value;
      if (arg == "--root") args.root = value;
    } else if (!arg.empty() && arg[0] == '-') {
      throw SpecError("unknown option '" + arg + "' for kgen tune\n" + kUsage);
    } else {
      args.auto_specs.push_back(arg);
    }
  }
  if (args.auto_specs.empty()) throw SpecError(std::string("kgen tune needs a spec file\n") + kUsage);
  if (args.auto_passes) {
    if (args.list || !args.pass.empty())
      throw SpecError("kgen tune --auto takes no --list or --pass: it tunes each \"auto\" pass\n" + std::string(kUsage));
  } else {
    if (args.auto_specs.size() > 1) throw SpecError("kgen tune takes exactly one spec (or --auto)\n" + std::string(kUsage));
    args.spec_file = args.auto_specs.front();
    if (args.target.empty()) throw SpecError(std::string("kgen tune needs --target tpu|sm90a|sm100a\n") + kUsage);
  }
  if (args.tables.empty()) args.tables = args.root + "/tuning";
  if (args.jobs == 0) args.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return args;
}

// The tile pass of --pass, and which kernel's cost ranks the printed table ("" the pass's total).
std::pair<TilePass, std::string> tune_pass(const Spec& spec, const std::string& pass) {
  const std::string chosen = pass.empty() ? (spec.decode ? "decode" : "forward") : pass;
  if (spec.decode) {
    if (chosen != "decode")
      throw SpecError("--pass", "\"" + chosen + "\"", "decode (the spec's kind is attention_decode)");
    return {TilePass::kDecode, ""};
  }
  if (chosen == "forward") return {TilePass::kForward, ""};
  if (chosen == "backward") return {TilePass::kBackward, ""};
  if (chosen == "dq" || chosen == "dkv") return {TilePass::kBackward, chosen};
  throw SpecError("--pass", "\"" + chosen + "\"", "forward, dq, dkv or backward (dq and dkv share the backward's tiles)");
}

std::string thousands(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.0f", value);
  std::string digits = buffer, out;
  const std::size_t start = digits[0] == '-' ? 1 : 0;
  for (std::size_t k = 0; k < digits.size(); ++k) {
    if (k > start && (digits.size() - k) % 3 == 0) out += ',';
    out += digits[k];
  }
  return out;
}

std::string cost_text(double cost) {
  if (cost >= 1000) return thousands(cost);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.4g", cost);
  return buffer;
}

std::string mib(int64_t bytes) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buffer;
}

// The candidate's spec file: the spec as written, every "auto" field replaced by its value and
// the pass's fields by the candidate's, beside links to the spec's mask files.
std::string write_candidate_spec(const TuneArguments& args, const Spec& spec, const Target& target,
                                 const TileChoice& tiles, const fs::path& folder) {
  Json document = Json::parse(*read_text_file(args.spec_file));
  auto set = [&](const std::string& target_name, const std::string& field, int64_t value) {
    Json& section = document["targets"][target_name];
    if (field.rfind("backward.", 0) == 0)
      section["backward"][field.substr(9)] = value;
    else
      section[field] = value;
  };
  for (const TileResolution& resolution : spec.tile_resolutions)
    for (const auto& [field, value] : resolution.chosen) set(resolution.target, field, value);
  for (const auto& [field, value] : tiles) set(target.name(), field, value);
  fs::create_directories(folder);
  const fs::path spec_dir = fs::absolute(args.spec_file).parent_path();
  for (const std::string& mask : spec.mask_files) {
    fs::create_directories((folder / mask).parent_path());
    fs::create_symlink(spec_dir / mask, folder / mask);
  }
  const fs::path file = folder / fs::path(args.spec_file).filename();
  std::ofstream(file, std::ios::binary) << document.dump(2) << "\n";
  return file.string();
}

struct Row {
  TileChoice tiles;
  Json result;  // the measurer's answer
  TilingFacts facts;
  bool cached = false;
};

double row_cost(const Row& row, const std::string& rank_by) {
  if (!rank_by.empty() && row.result.contains("columns") && row.result["columns"].contains(rank_by))
    return row.result["columns"][rank_by].get<double>();
  return row.result["cost"].get<double>();
}

// The measurer's extra columns for `pass`: [[key, heading], ...], for every pass or per pass name.
Json measurer_columns(const Measurer& measurer, TilePass pass) {
  const Json& columns = measurer.description.value("columns", Json::array());
  if (columns.is_object()) return columns.value(tile_pass_name(pass), Json::array());
  return columns.is_array() ? columns : Json::array();
}

void print_table(std::ostream& out, const std::vector<Row>& ranked, const std::vector<Row>& failed,
                 const Measurer& measurer, TilePass pass, const std::string& rank_by, const std::string& header) {
  out << header << "\n";
  if (ranked.empty()) {
    out << "no tiling was measured\n";
  } else {
    const Json columns = measurer_columns(measurer, pass);
    const std::string memory = ranked.front().facts.memory.empty() ? "memory" : ranked.front().facts.memory;
    const std::string fields = compact_fields(ranked.front().tiles);
    const double best = row_cost(ranked.front(), rank_by);
    std::ostringstream line;
    auto cell = [&](const std::string& text, int width) {
      line << std::string(static_cast<std::size_t>(std::max<int>(0, width - static_cast<int>(text.size()))), ' ') << text;
    };
    line << "rank  " << fields << std::string(static_cast<std::size_t>(std::max<int>(2, 24 - static_cast<int>(fields.size()))), ' ');
    cell(rank_by.empty() ? "cost" : rank_by + " cost", 14);
    cell("vs best", 9);
    for (const Json& column : columns) cell(column[1].get<std::string>(), 14);
    cell("live tiles", 12);
    cell(memory, 16);
    cell("GPU time", 10);
    out << line.str() << "\n";
    for (std::size_t k = 0; k < ranked.size(); ++k) {
      const Row& row = ranked[k];
      line.str("");
      const std::string tiles = compact_tiles(row.tiles);
      cell(std::to_string(k + 1), 4);
      line << "  " << tiles << std::string(static_cast<std::size_t>(std::max<int>(2, static_cast<int>(std::max<std::size_t>(fields.size(), 22)) + 2 - static_cast<int>(tiles.size()))), ' ');
      const double cost = row_cost(row, rank_by);
      cell(cost_text(cost), 14);
      char ratio[32];
      std::snprintf(ratio, sizeof ratio, "%.2fx", cost / best);
      cell(ratio, 9);
      for (const Json& column : columns) {
        const std::string name = column[0].get<std::string>();
        const Json& values = row.result.contains("columns") ? row.result["columns"] : Json::object();
        const Json value = values.value(name, Json());
        cell(value.is_number()   ? (value.get<double>() < 10 ? cost_text(value.get<double>()) : thousands(value.get<double>()))
             : value.is_string() ? value.get<std::string>()
             : value.is_null()   ? "-"
                                 : value.dump(),
             14);
      }
      cell(std::to_string(row.facts.live_tiles), 12);
      cell(row.facts.memory_bytes ? mib(row.facts.memory_bytes) : "-", 16);
      const Json gpu = row.result.value("gpu_time_s", Json());
      cell(gpu.is_number() ? cost_text(gpu.get<double>() * 1e6) + " us" : "-", 10);
      out << line.str() << "\n";
    }
  }
  for (const Row& row : failed)
    out << "failed  " << compact_tiles(row.tiles) << ": " << row.result.value("error", std::string("?")) << "\n";
}

Json tiles_object(const TileChoice& tiles) {
  Json object = Json::object();
  for (const auto& [field, value] : tiles) object[field] = value;
  return object;
}

int tune(const TuneArguments& args, const std::string& self) {
  const Spec spec = load_spec(args.spec_file, args.root);
  const Target& target = named_target(spec, args.target);
  const auto [pass, rank_by] = tune_pass(spec, args.pass);
  const std::optional<TuningSpace> space = target.tuning_space(spec, pass);
  if (!space)
    throw SpecError("--pass", "\"" + (args.pass.empty() ? std::string(tile_pass_name(pass)) : args.pass) + "\"",
                    "a pass target " + args.target + " generates a kernel of for this spec");
  const Candidates candidates = legal_tilings(spec, target, pass, *space, {});
  // A decode spec's tiles are tuned where the target generates its kernel at some tiling (kgen
  // gen writes the other targets' until then): skipped, not measured, nothing written.
  if (pass == TilePass::kDecode && candidates.legal.empty())
    if (const std::optional<std::string> why = target.decode_unsupported(spec)) {
      std::cerr << "kgen tune: " << args.spec_file << ": skipped --pass decode: " << *why
                << " (docs/decode.md); nothing measured or written\n";
      return 0;
    }
  if (candidates.legal.empty()) {
    std::string why = "a spec with at least one legal " + std::string(tile_pass_name(pass)) + " tiling for target " +
                      args.target + "; none of " + std::to_string(candidates.combinations) + " is";
    if (candidates.first_refusal)
      why += " (the nearest: " + candidates.first_refusal->path + ": found " + candidates.first_refusal->found +
             ", expected " + candidates.first_refusal->expected + ")";
    throw SpecError("--target", "\"" + args.target + "\"", why);
  }
  std::vector<TileChoice> chosen = candidates.legal;
  if (args.budget && static_cast<int64_t>(chosen.size()) > *args.budget) chosen.resize(static_cast<std::size_t>(*args.budget));
  const std::string digest = candidates_digest(candidates.legal);
  if (args.list) {
    Json legal = Json::array(), measured = Json::array();
    for (const TileChoice& tiles : candidates.legal) legal.push_back(tiles_object(tiles));
    for (const TileChoice& tiles : chosen) measured.push_back(tiles_object(tiles));
    std::cout << Json{{"target", args.target}, {"pass", tile_pass_name(pass)}, {"key", tuning_key(tuning_fields(spec))},
                      {"device", target.tuning_device(spec)}, {"combinations", candidates.combinations},
                      {"candidates_digest", digest}, {"legal", legal}, {"to_measure", measured}}
                     .dump()
              << "\n";
    return 0;
  }

  std::vector<std::string> command;
  if (!args.measure.empty()) {
    std::istringstream words(args.measure);
    for (std::string word; words >> word;) command.push_back(word);
  } else {
    const TuningMeasurer measurer = target.tuning_measurer();
    if (measurer.script.empty()) throw std::runtime_error("target " + args.target + " has no measurer");
    const std::string python = args.root + "/" + measurer.python;
    if (!fs::exists(python))
      throw std::runtime_error(python + " is missing: its measurer needs it (" +
                               (measurer.python.find("libtpu") != std::string::npos ? "deps/install.sh libtpu"
                                                                                     : "make deps") +
                               ")");
    command = {python, args.root + "/" + measurer.script};
  }
  const Measurer measurer = describe_measurer(command, args.root);

  char pattern[] = "/tmp/kgen-tune-XXXXXX";
  if (!::mkdtemp(pattern)) throw std::runtime_error("cannot make a scratch folder under /tmp");
  const fs::path scratch = pattern;
  TemplateEngine engine([root = args.root](const std::string& path) {
    const std::optional<std::string> text = read_text_file(root + "/templates/" + path);
    if (!text) throw TemplateError("templates/" + path + ": cannot read this template");
    return *text;
  });
  const RuntimeDigests runtimes = runtime_digests(args.root);

  std::vector<Row> rows(chosen.size());
  std::vector<std::string> keys(chosen.size());
  std::vector<Json> jobs;
  for (std::size_t k = 0; k < chosen.size(); ++k) {
    Row& row = rows[k];
    row.tiles = chosen[k];
    const Spec candidate = with_tiles(spec, target, pass, chosen[k]);
    row.facts = target.tiling_facts(candidate, pass);
    std::string inputs = std::string(target.name()) + "\n" + tile_pass_name(pass) + "\n";
    std::vector<GeneratedFile> files;
    try {
      files = render_spec_outputs(candidate, engine, runtimes);
    } catch (const std::exception& error) {
      row.result = Json{{"error", std::string("kgen gen failed: ") + error.what()}};
      continue;
    }
    for (const GeneratedFile& file : files) {
      const std::optional<GeneratedName> name = parse_generated_file_name(fs::path(file.path).filename().string());
      if (name && name->target == target.name()) inputs += file.path + "\n" + sha256_hex(file.content) + "\n";
    }
    for (PlanPass plan_pass : {PlanPass::kForward, PlanPass::kDq, PlanPass::kDkv, PlanPass::kDecode}) {
      try {
        inputs += target.plan_json(candidate, plan_pass).dump() + "\n";
      } catch (const SpecError&) {
      }
    }
    keys[k] = measurement_key(measurer, inputs);
    if (const std::optional<Json> cached = cached_measurement(keys[k])) {
      row.result = *cached;
      row.cached = true;
      continue;
    }
    const fs::path folder = scratch / std::to_string(k);
    const std::string spec_path = write_candidate_spec(args, spec, target, chosen[k], folder);
    for (const GeneratedFile& file : files) {
      const fs::path path = folder / "generated" / file.path;
      fs::create_directories(path.parent_path());
      std::ofstream(path, std::ios::binary) << file.content;
    }
    jobs.push_back(Json{{"id", k}, {"spec", spec_path}, {"generated", (folder / "generated").string()},
                        {"name", spec.name}, {"target", target.name()}, {"pass", tile_pass_name(pass)},
                        {"kgen", self}, {"root", fs::absolute(args.root).string()},
                        {"live_tiles", row.facts.live_tiles}, {"total_tiles", row.facts.total_tiles},
                        {"memory_bytes", row.facts.memory_bytes}});
  }

  const bool tty = ::isatty(2);
  const std::size_t from_cache = rows.size() - jobs.size();
  std::size_t finished = 0;
  std::cerr << "kgen tune: " << chosen.size() << " of " << candidates.legal.size() << " legal tilings to measure, "
            << from_cache << " from the cache; " << measurer.description["measured_by"].get<std::string>() << ", "
            << args.jobs << " at a time\n";
  run_measurer(measurer, jobs, args.jobs, scratch.string(), [&](const Json& answer) {
    const std::size_t k = answer["id"].get<std::size_t>();
    if (k >= rows.size()) return;
    Json result = answer;
    result.erase("id");
    rows[k].result = result;
    if (!result.contains("error") && result.contains("cost") && result["cost"].is_number()) cache_measurement(keys[k], result);
    ++finished;
    std::string status = "kgen tune: [" + std::to_string(finished) + "/" + std::to_string(jobs.size()) + "] " +
                         compact_tiles(rows[k].tiles) + ": " +
                         (result.contains("error") ? "failed"
                                                   : cost_text(result.value("cost", 0.0)) + " " +
                                                         measurer.description["cost_unit"].get<std::string>());
    std::cerr << (tty ? "\r\033[K" : "") << status << (tty ? "" : "\n") << std::flush;
  });
  if (tty && finished) std::cerr << "\n";
  std::error_code ignored;
  fs::remove_all(scratch, ignored);

  std::vector<Row> ranked, failed;
  for (Row& row : rows) {
    const bool ok = !row.result.contains("error") && row.result.contains("cost") && row.result["cost"].is_number() &&
                    row.result["cost"].get<double>() > 0;
    if (!ok && !row.result.contains("error")) row.result = Json{{"error", "the measurer answered no positive cost"}};
    (ok ? ranked : failed).push_back(row);
  }
  auto by = [&](const std::string& what) {
    std::vector<Row> sorted = ranked;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [&](const Row& a, const Row& b) { return row_cost(a, what) < row_cost(b, what); });
    return sorted;
  };
  const std::string command_line = "kgen tune " + spec.source + " --target " + args.target + " --pass " +
                                   (args.pass.empty() ? tile_pass_name(pass) : args.pass) +
                                   (args.budget ? " --budget " + std::to_string(*args.budget) : "");
  std::string tools;
  if (measurer.description.contains("tools"))
    for (const auto& [tool, version] : measurer.description["tools"].items())
      tools += (tools.empty() ? "" : ", ") + tool + " " + (version.is_string() ? version.get<std::string>() : version.dump());
  const std::string header = command_line + ": " + std::to_string(candidates.legal.size()) + " legal tilings of " +
                             std::to_string(candidates.combinations) + " combinations, " + std::to_string(ranked.size()) +
                             " measured (" + std::to_string(from_cache) + " from the cache); cost: " +
                             measurer.description["cost_unit"].get<std::string>() + ", by " +
                             measurer.description["measured_by"].get<std::string>() + (tools.empty() ? "" : " (" + tools + ")");
  print_table(std::cout, by(rank_by), failed, measurer, pass, rank_by, header);

  if (args.write && !ranked.empty()) {
    Json measured = Json::array(), failures = Json::array();
    for (const Row& row : by("")) {
      Json line{{"tiles", tiles_object(row.tiles)}, {"cost", row.result["cost"]}, {"live_tiles", row.facts.live_tiles},
                {"memory_bytes", row.facts.memory_bytes}, {"gpu_time_s", row.result.value("gpu_time_s", Json())}};
      if (row.result.contains("columns")) line["columns"] = row.result["columns"];
      measured.push_back(line);
    }
    for (const Row& row : failed) failures.push_back(Json{{"tiles", tiles_object(row.tiles)}, {"error", row.result["error"]}});
    Json entry{{"chosen", measured.front()["tiles"]},
               {"measured", measured},
               {"legal_candidates", candidates.legal.size()},
               {"candidates_digest", digest},
               {"measured_by", measurer.description["measured_by"]},
               {"cost_unit", measurer.description["cost_unit"]},
               {"tools", measurer.description.value("tools", Json::object())},
               {"command", command_line},
               {"budget", args.budget ? Json(*args.budget) : Json()}};
    if (!failures.empty()) entry["failed"] = failures;
    TuningTable table = TuningTable::read(args.tables, target.name(), target.tuning_device(spec));
    const Json fields = tuning_fields(spec);
    table.put(tuning_key(fields), fields, spec.source, pass, entry);
    table.write();
    std::cerr << "kgen tune: wrote " << tile_pass_name(pass) << " entry " << tuning_key(fields) << " of "
              << args.tables << "/" << target.name() << "/" << target.tuning_device(spec) << ".json\n";
  }
  return ranked.empty() ? 1 : 0;
}

// One pass of one spec; errors name the spec file.
int tune_named(const TuneArguments& args, const std::string& self) {
  try {
    return tune(args, self);
  } catch (const SpecError& error) {
    const std::string what = error.what();
    if (what.rfind(args.spec_file + ":", 0) == 0) throw;
    throw SpecError(args.spec_file + ": " + what);
  }
}

// --auto: each (target, pass) whose tiles a spec writes "auto", in the order kgen gen
// resolves them; a spec without "auto" tiles is named and passed over. The first failure
// stops the run (its status is the run's).
int tune_auto_passes(const TuneArguments& args, const std::string& self) {
  for (const std::string& file : args.auto_specs) {
    Spec spec;
    try {
      spec = load_spec(file, args.root);
    } catch (const SpecError& error) {
      const std::string what = error.what();
      throw SpecError(what.rfind(file + ":", 0) == 0 ? what : file + ": " + what);
    }
    int tuned = 0;
    for (const TileResolution& resolution : spec.tile_resolutions) {
      if (!args.target.empty() && resolution.target != args.target) continue;
      TuneArguments one = args;
      one.spec_file = file;
      one.target = resolution.target;
      one.pass = tile_pass_name(resolution.pass);
      if (const int status = tune_named(one, self)) return status;
      ++tuned;
    }
    if (!tuned) std::cerr << "kgen tune: " << file << ": no \"auto\" tiles" << (args.target.empty() ? "" : " for target " + args.target) << "; nothing to tune\n";
  }
  return 0;
}

}  // namespace

int run_tune_command(int argc, char** argv, const std::string& root, const std::string& self) {
  return exit_status_of("kgen tune", [&] {
    const TuneArguments args = parse_tune_arguments(argc, argv, root);
    return args.auto_passes ? tune_auto_passes(args, self) : tune_named(args, self);
  });
}

}  // namespace kgen
