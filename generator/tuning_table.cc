#include "tuning_table.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "diagnostics.h"
#include "receipts.h"
#include "text_files.h"

namespace kgen {
namespace {

constexpr int kFormat = 1;
constexpr int64_t kMaxTileValue = int64_t{1} << 24;
constexpr const char* kAbout =
    "kgen tune's measured tilings (docs/tuning.md): per spec shape and pass, ranked by cost; \"auto\" tile "
    "fields read the first row that agrees with the fields a spec writes as numbers. Rewritten by make tune.";

// `digits` lowercase hex digits: a sha256 (64) or a tuning key (16).
bool is_lower_hex(const std::string& text, std::size_t digits) {
  return text.size() == digits &&
         std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

void collect_bits(const Mask& mask, Json& out) {
  if (mask.bits) out.push_back(sha256_hex(std::string(mask.bits->begin(), mask.bits->end())));
  for (const Mask& child : mask.children) collect_bits(child, out);
}

TileChoice read_tiles(const Json& value, const std::string& path) {
  const Json& object = expect_object(value, path);
  if (object.empty()) throw SpecError(path, "{}", "an object of tile fields");
  JsonFields fields(object, path);
  TileChoice tiles;
  for (const auto& [field, ignored] : object.items()) tiles[field] = fields.required_int(field, 1, kMaxTileValue);
  return tiles;
}

std::string tiles_json(const TileChoice& tiles) {
  Json object = Json::object();
  for (const auto& [field, value] : tiles) object[field] = value;
  return object.dump();
}

double read_cost(JsonFields& fields) {
  const std::optional<double> cost = fields.optional_positive_number("cost");
  if (!cost) throw SpecError(fields.path_of("cost"), "nothing", "a positive finite number");
  return *cost;
}

MeasuredTiling read_row(const Json& value, const std::string& path) {
  JsonFields fields(expect_object(value, path), path);
  MeasuredTiling row;
  row.tiles = read_tiles(fields.raw("tiles"), fields.path_of("tiles"));
  row.cost = read_cost(fields);
  fields.optional_int("live_tiles", 0, int64_t{1} << 50);
  fields.optional_int("memory_bytes", 0, int64_t{1} << 50);
  if (fields.has("gpu_time_s") && !fields.raw("gpu_time_s").is_null()) fields.optional_positive_number("gpu_time_s");
  if (fields.has("columns")) fields.required_object("columns");
  fields.reject_unknown({"tiles", "cost", "live_tiles", "memory_bytes", "gpu_time_s", "columns"});
  row.row = value;
  return row;
}

// Objects expanded down to the pass entries; rows and everything deeper on one line each.
std::string format_value(const Json& value, int depth, const std::string& key) {
  const std::string indent(static_cast<std::size_t>(2 * (depth + 1)), ' ');
  const std::string closing(static_cast<std::size_t>(2 * depth), ' ');
  const bool expand_object = value.is_object() && !value.empty() && (depth <= 2 || (depth == 3 && key != "fields"));
  if (expand_object) {
    std::string out = "{\n";
    std::size_t k = 0;
    for (const auto& [child_key, item] : value.items())
      out += indent + Json(child_key).dump() + ": " + format_value(item, depth + 1, child_key) +
             (++k < value.size() ? ",\n" : "\n");
    return out + closing + "}";
  }
  if (value.is_array() && !value.empty() && value.front().is_object()) {
    std::string out = "[\n";
    for (std::size_t k = 0; k < value.size(); ++k)
      out += indent + value[k].dump() + (k + 1 < value.size() ? ",\n" : "\n");
    return out + closing + "]";
  }
  return value.dump();
}

}  // namespace

Json tuning_fields(const Spec& spec) {
  const Shape& s = spec.shape;
  Json mask_bits = Json::array();
  for (const Mask& mask : spec.masks.unique) collect_bits(mask, mask_bits);
  Json decode = nullptr;
  if (spec.decode) decode = Json{{"page_size", spec.decode->page_size}, {"pages", spec.decode->pages}};
  return Json{
      {"kind", spec.kind},
      {"shape",
       {{"batch", s.batch}, {"q_heads", s.q_heads}, {"kv_heads", s.kv_heads}, {"q_len", s.q_len},
        {"kv_len", s.kv_len}, {"head_dim", s.head_dim}, {"head_dim_v", s.head_dim_v}}},
      {"dtype", dtype_name(spec.dtype)},
      {"mask", Json::parse(spec.mask_summary)},
      {"mask_bits", mask_bits},
      {"softcap", spec.softcap.has_value()},
      {"segment_ids", spec.segment_ids},
      {"sinks", spec.sinks},
      {"lse", spec.lse},
      {"backward", spec.backward},
      {"decode", decode},
  };
}

std::string tuning_key(const Json& fields) { return sha256_hex(fields.dump()).substr(0, 16); }

TuningEntry parse_tuning_entry(const Json& value, const std::string& path) {
  JsonFields fields(expect_object(value, path), path);
  TuningEntry entry;
  const Json& rows = fields.required_array("measured");
  if (rows.empty()) throw SpecError(fields.path_of("measured"), "[]", "at least one measured tiling");
  for (std::size_t k = 0; k < rows.size(); ++k) {
    entry.measured.push_back(read_row(rows[k], json_path(fields.path_of("measured"), k)));
    if (k > 0 && entry.measured[k].cost < entry.measured[k - 1].cost)
      throw SpecError(json_path(fields.path_of("measured"), k) + ".cost", Json(entry.measured[k].cost).dump(),
                      "rows ranked by cost, cheapest first (the row before costs " +
                          Json(entry.measured[k - 1].cost).dump() + ")");
  }
  const TileChoice chosen = read_tiles(fields.raw("chosen"), fields.path_of("chosen"));
  if (chosen != entry.measured.front().tiles)
    throw SpecError(fields.path_of("chosen"), tiles_json(chosen),
                    "the tiles of the first measured row, " + tiles_json(entry.measured.front().tiles));
  entry.legal_candidates = fields.required_int("legal_candidates", 1, int64_t{1} << 30);
  if (entry.legal_candidates < static_cast<int64_t>(rows.size()))
    throw SpecError(fields.path_of("legal_candidates"), std::to_string(entry.legal_candidates),
                    "at least the " + std::to_string(rows.size()) + " measured tilings");
  entry.candidates_digest = fields.required_string("candidates_digest");
  if (!is_lower_hex(entry.candidates_digest, 64))
    throw SpecError(fields.path_of("candidates_digest"), describe_value(fields.raw("candidates_digest")),
                    "64 lowercase hex digits (a sha256)");
  entry.measured_by = fields.required_string("measured_by");
  entry.cost_unit = fields.required_string("cost_unit");
  fields.required_object("tools");
  fields.optional_string("command");
  if (fields.has("budget") && !fields.raw("budget").is_null()) fields.optional_int("budget", 1, int64_t{1} << 30);
  if (fields.has("failed")) {
    const Json& failed = fields.required_array("failed");
    for (std::size_t k = 0; k < failed.size(); ++k) {
      const std::string at = json_path(fields.path_of("failed"), k);
      JsonFields row(expect_object(failed[k], at), at);
      read_tiles(row.raw("tiles"), row.path_of("tiles"));
      row.required_string("error");
      row.reject_unknown({"tiles", "error"});
    }
  }
  fields.reject_unknown({"chosen", "measured", "legal_candidates", "candidates_digest", "measured_by", "cost_unit",
                         "tools", "command", "budget", "failed"});
  return entry;
}

TuningTable TuningTable::read(const std::string& tuning_dir, const std::string& target, const std::string& device) {
  TuningTable table;
  table.target_ = target;
  table.device_ = device;
  table.file_ = tuning_dir + "/" + target + "/" + device + ".json";
  table.shown_ = "tuning/" + target + "/" + device + ".json";
  table.document_ = Json{{"about", kAbout}, {"format", kFormat}, {"target", target}, {"device", device},
                         {"entries", Json::object()}};
  if (!std::filesystem::exists(table.file_)) return table;
  const std::optional<std::string> text = read_text_file(table.file_);
  if (!text) throw SpecError(table.shown_ + ": cannot read this tuning table");
  try {
    Json document;
    try {
      document = Json::parse(*text);
    } catch (const Json::exception& error) {
      std::string what = error.what();
      const auto cut = what.find("] ");
      throw SpecError("not valid JSON: " + (cut == std::string::npos ? what : what.substr(cut + 2)));
    }
    JsonFields top(expect_object(document, ""), "");
    const int64_t format = top.required_int("format", 1, 1000);
    if (format != kFormat)
      throw SpecError("format", std::to_string(format), std::to_string(kFormat) + " (this kgen's table format)");
    if (top.required_string("target") != target)
      throw SpecError("target", describe_value(top.raw("target")), "\"" + target + "\" (the folder it lies in)");
    if (top.required_string("device") != device)
      throw SpecError("device", describe_value(top.raw("device")), "\"" + device + "\" (its file name)");
    top.optional_string("about");
    const Json& entries = top.required_object("entries");
    top.reject_unknown({"format", "target", "device", "about", "entries"});
    for (const auto& [key, value] : entries.items()) {
      const std::string path = json_path("entries", key);
      if (!is_lower_hex(key, 16))
        throw SpecError(path, Json(key).dump() + " as a key", "16 lowercase hex digits (tuning_key of the spec's fields)");
      JsonFields fields(expect_object(value, path), path);
      const Json& written_fields = fields.required_object("fields");
      if (tuning_key(written_fields) != key)
        throw SpecError(fields.path_of("fields"), "fields whose key is " + tuning_key(written_fields),
                        "the fields of key " + key + " (an entry edited by hand?)");
      const Json& specs = fields.required_array("specs");
      for (std::size_t k = 0; k < specs.size(); ++k)
        if (!specs[k].is_string())
          throw SpecError(json_path(fields.path_of("specs"), k), describe_value(specs[k]), "a string");
      for (TilePass pass : {TilePass::kForward, TilePass::kBackward, TilePass::kDecode})
        if (fields.has(tile_pass_name(pass)))
          table.entries_[{key, tile_pass_name(pass)}] =
              parse_tuning_entry(fields.raw(tile_pass_name(pass)), fields.path_of(tile_pass_name(pass)));
      fields.reject_unknown({"fields", "specs", "forward", "backward", "decode"});
    }
    table.document_ = document;
  } catch (const SpecError& error) {
    throw SpecError(table.shown_ + ": " + error.what());
  }
  return table;
}

std::optional<TuningEntry> TuningTable::entry(const std::string& key, TilePass pass) const {
  const auto found = entries_.find({key, tile_pass_name(pass)});
  if (found == entries_.end()) return std::nullopt;
  return found->second;
}

void TuningTable::put(const std::string& key, const Json& fields, const std::string& spec_source, TilePass pass,
                      Json pass_entry) {
  entries_[{key, tile_pass_name(pass)}] = parse_tuning_entry(pass_entry, json_path(json_path("entries", key), tile_pass_name(pass)));
  Json& entry = document_["entries"][key];
  entry["fields"] = fields;
  Json specs = entry.contains("specs") ? entry["specs"] : Json::array();
  if (std::find(specs.begin(), specs.end(), Json(spec_source)) == specs.end()) specs.push_back(spec_source);
  std::sort(specs.begin(), specs.end());
  entry["specs"] = specs;
  entry[tile_pass_name(pass)] = std::move(pass_entry);
}

std::string TuningTable::text() const { return format_value(document_, 0, "") + "\n"; }

void TuningTable::write() const {
  std::filesystem::create_directories(std::filesystem::path(file_).parent_path());
  // Written beside it and renamed: a reader sees the old table or the new one, never half.
  const std::string temporary = file_ + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary);
    out << text();
    if (!out) throw std::runtime_error("cannot write " + temporary);
  }
  std::filesystem::rename(temporary, file_);
}

}  // namespace kgen
