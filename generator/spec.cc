#include "spec.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "auto_tiles.h"
#include "diagnostics.h"
#include "targets/target.h"

namespace kgen {
namespace {

// Bounds that keep every size product far from int64 overflow, and every per-operand
// element count within what 32-bit grid and block indices can address.
constexpr int64_t kMaxBatch = 1 << 16;
constexpr int64_t kMaxHeads = 1 << 10;
constexpr int64_t kMaxSeqLen = 1 << 21;
constexpr int64_t kMaxHeadDim = 1 << 10;
constexpr int64_t kMaxOperandElements = int64_t{1} << 40;
constexpr std::size_t kMaxNameLength = 64;

// Where a SAX parse stands: one frame per open object or array, so that the errors
// found while parsing name a JSON path like every other spec error.
struct ParseFrame {
  bool is_array = false;
  std::size_t elements = 0;     // arrays: elements begun so far
  std::string key;              // objects: the key last read
  std::set<std::string> keys;   // objects: every key read
};

// The path of the value being read. With `pending`, the innermost array's next element
// (one the parser failed on before it began), else its last begun one.
std::string path_of_frames(const std::vector<ParseFrame>& frames, bool pending) {
  std::string path;
  for (std::size_t k = 0; k < frames.size(); ++k) {
    const ParseFrame& frame = frames[k];
    if (!frame.is_array)
      path = json_path(path, frame.key);
    else
      path = json_path(path, pending && k + 1 == frames.size() ? frame.elements
                                                                : frame.elements - 1);
  }
  return path;
}

// JSON with a repeated key is refused: nlohmann would silently keep the last value.
Json parse_json_strictly(const std::string& text) {
  std::vector<ParseFrame> frames;
  std::string duplicate, duplicate_key;  // the first repeated key and its path
  auto begin_value = [&] {
    if (!frames.empty() && frames.back().is_array) ++frames.back().elements;
  };
  auto on_event = [&](int /*depth*/, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        begin_value();
        frames.emplace_back();
        frames.back().is_array = event == Json::parse_event_t::array_start;
        break;
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        frames.pop_back();
        break;
      case Json::parse_event_t::key:
        frames.back().key = parsed.get<std::string>();
        if (!frames.back().keys.insert(frames.back().key).second && duplicate.empty()) {
          duplicate = path_of_frames(frames, false);
          duplicate_key = frames.back().key;
        }
        break;
      case Json::parse_event_t::value:
        begin_value();
        break;
    }
    return true;
  };
  Json root;
  try {
    root = Json::parse(text, on_event);
  } catch (const Json::parse_error& error) {
    // nlohmann's message carries line and column; strip its "[json.exception...]" prefix.
    std::string what = error.what();
    const auto cut = what.find("] ");
    throw SpecError("not valid JSON: " +
                    (cut == std::string::npos ? what : what.substr(cut + 2)));
  } catch (const Json::out_of_range& error) {
    // Valid syntax, but no double holds it (1e400): an out-of-range value like any other.
    // nlohmann's message quotes the literal: "number overflow parsing '1e400'".
    const std::string what = error.what();
    const auto open = what.find('\''), close = what.rfind('\'');
    std::string literal =
        open != std::string::npos && open < close ? what.substr(open + 1, close - open - 1) : what;
    if (literal.size() > 60) literal = literal.substr(0, 57) + "...";
    throw SpecError(printable_path(path_of_frames(frames, true)), literal,
                    "a number within the range of a double");
  }
  if (!duplicate.empty())
    throw SpecError(duplicate, Json(duplicate_key).dump() + " twice in one object",
                    "each key once");
  return root;
}

DType parse_dtype(JsonFields& root) {
  const DTypeInfo* info = find_dtype_by_spec_name(root.required_string("dtype"));
  if (!info) throw SpecError("dtype", describe_value(root.raw("dtype")), dtype_spec_names());
  return info->dtype;
}

Shape parse_shape(JsonFields& root) {
  JsonFields fields(root.required_object("shape"), "shape");
  Shape shape;
  shape.batch = fields.optional_int("batch", 1, kMaxBatch).value_or(1);
  shape.q_heads = fields.required_int("q_heads", 1, kMaxHeads);
  shape.kv_heads = fields.optional_int("kv_heads", 1, kMaxHeads).value_or(shape.q_heads);
  if (shape.q_heads % shape.kv_heads != 0)
    throw SpecError("shape.kv_heads", std::to_string(shape.kv_heads),
                    "a divisor of q_heads = " + std::to_string(shape.q_heads));
  shape.q_len = fields.required_int("q_len", 1, kMaxSeqLen);
  shape.kv_len = fields.optional_int("kv_len", 1, kMaxSeqLen).value_or(shape.q_len);
  shape.head_dim = fields.required_int("head_dim", 1, kMaxHeadDim);
  shape.head_dim_v = fields.optional_int("head_dim_v", 1, kMaxHeadDim).value_or(shape.head_dim);
  fields.reject_unknown({"batch", "q_heads", "kv_heads", "q_len", "kv_len", "head_dim",
                         "head_dim_v"});

  const int64_t widest = std::max(shape.head_dim, shape.head_dim_v);
  const int64_t longest = std::max(shape.q_len, shape.kv_len);
  if (shape.batch * shape.q_heads * longest * widest > kMaxOperandElements)
    throw SpecError("shape", "batch * q_heads * max(q_len, kv_len) * max(head_dim, head_dim_v) = " +
                                 std::to_string(shape.batch * shape.q_heads * longest * widest),
                    "at most 2^40 elements per operand");
  return shape;
}

std::string parse_name(JsonFields& root) {
  const std::string name = root.required_string("name");
  const auto lower = [](char c) { return c >= 'a' && c <= 'z'; };
  const bool pattern = !name.empty() && lower(name[0]) && std::all_of(name.begin(), name.end(), [&](char c) {
    return lower(c) || (c >= '0' && c <= '9') || c == '_';
  });  // [a-z][a-z0-9_]*
  if (name.size() > kMaxNameLength || !pattern)
    throw SpecError("name", describe_value(root.raw("name")),
                    "[a-z][a-z0-9_]* of at most 64 characters");
  return name;
}

// With backward, the forward always writes lse (the backward's residual); saying otherwise
// is a contradiction, not a preference.
void parse_outputs(JsonFields& root, Spec& spec) {
  spec.lse = spec.backward;
  if (!root.has("outputs")) return;
  JsonFields fields(root.required_object("outputs"), "outputs");
  spec.lse = fields.optional_bool("lse", spec.backward);
  fields.reject_unknown({"lse"});
  if (spec.backward && !spec.lse)
    throw SpecError("outputs.lse", "false", "true or absent when \"backward\" is true (the backward reads lse)");
}

// docs/spec-format.md §8: what a decode spec may say beyond the forward's rules. Called after
// the shape, before the mask and the targets.
constexpr int64_t kMaxDecodeTokens = 16;

void parse_decode(JsonFields& root, Spec& spec) {
  const Shape& s = spec.shape;
  if (s.q_len > kMaxDecodeTokens)
    throw SpecError("shape.q_len", std::to_string(s.q_len),
                    "1 to " + std::to_string(kMaxDecodeTokens) + " new tokens per sequence (\"kind\": \"attention_decode\")");
  if (s.kv_len < s.q_len)
    throw SpecError("shape.kv_len", std::to_string(s.kv_len),
                    "at least q_len = " + std::to_string(s.q_len) + " (the cache holds the new tokens)");
  if (spec.segment_ids)
    throw SpecError("segment_ids", "true", "false or absent: a decode kernel takes no segment ids");
  if (spec.backward)
    throw SpecError("backward", "true", "false or absent: decode kernels have no backward");
  DecodeSpec decode;
  if (root.has("paged")) {
    JsonFields paged(root.required_object("paged"), "paged");
    decode.page_size = paged.required_int("page_size", 1, s.kv_len);
    if (s.kv_len % decode.page_size != 0)
      throw SpecError("paged.page_size", std::to_string(decode.page_size),
                      "a divisor of kv_len = " + std::to_string(s.kv_len) +
                          " (page_table has kv_len / page_size entries per sequence)");
    const int64_t per_sequence = s.kv_len / decode.page_size;
    const int64_t max_pages = kMaxOperandElements / (s.kv_heads * decode.page_size * std::max(s.head_dim, s.head_dim_v));
    decode.pages = paged.optional_int("pages", 1, max_pages).value_or(std::min(s.batch * per_sequence, max_pages));
    paged.reject_unknown({"page_size", "pages"});
  }
  spec.decode = decode;
}

// A decode spec's mask is causal or a local window ending at the token itself, evaluated at
// the new tokens' positions; absent, causal.
void check_decode_mask(const Json& mask, const Spec& spec) {
  const std::string expected =
      "causal, or local with \"right\": 0 (a decode kernel's new tokens attend the cache up to their own position)";
  if (!spec.masks.shared() || spec.masks.unique[0].kind == Mask::Kind::kFull ||
      (spec.masks.unique[0].kind != Mask::Kind::kCausal && spec.masks.unique[0].kind != Mask::Kind::kLocal))
    throw SpecError("mask.type", describe_value(mask.is_object() && mask.contains("type") ? mask["type"] : mask), expected);
  const Mask& m = spec.masks.unique[0];
  if (m.offset != 0)
    throw SpecError("mask.offset", std::to_string(m.offset), "0 or absent: a new token's position comes from kv_lens");
  if (m.kind == Mask::Kind::kLocal && m.right != 0)
    throw SpecError("mask.right", m.right ? std::to_string(*m.right) : "null", expected);
}

void parse_targets(JsonFields& root, Spec& spec) {
  JsonFields fields(root.required_object("targets"), "targets");
  std::vector<std::string> names;
  for (const Target* target : targets()) {
    names.push_back(target->name());
    if (fields.has(target->name()))
      target->parse(fields.required_object(target->name()), "targets." + names.back(), spec);
  }
  fields.reject_unknown(names);
  if (spec.target_names().empty()) {
    std::string list;
    for (std::size_t k = 0; k < names.size(); ++k) list += (k ? ", " : "") + names[k];
    throw SpecError("targets", "{}", "at least one of " + list);
  }
}

}  // namespace

std::vector<std::string> Spec::target_names() const {
  std::vector<std::string> names;
  for (const Target* target : targets())
    if (target->named_by(*this)) names.push_back(target->name());
  return names;
}

Spec parse_spec(const std::string& text, const std::string& spec_dir, const std::string& tuning_dir) {
  const Json document = parse_json_strictly(text);
  JsonFields root(document, "");
  Spec spec;
  spec.name = parse_name(root);
  spec.kind = root.required_string("kind");
  if (spec.kind != "attention_forward" && spec.kind != "attention_decode")
    throw SpecError("kind", describe_value(root.raw("kind")),
                    "\"attention_forward\" or \"attention_decode\" (a forward spec adds its backward with "
                    "\"backward\": true)");
  root.optional_string("comment");  // free text for the reader of the spec
  spec.shape = parse_shape(root);
  spec.dtype = parse_dtype(root);
  spec.scale = root.optional_positive_number("scale")
                   .value_or(1.0 / std::sqrt(static_cast<double>(spec.shape.head_dim)));
  spec.softcap = root.optional_positive_number("softcap");
  spec.segment_ids = root.optional_bool("segment_ids", false);
  spec.sinks = root.optional_bool("sinks", false);
  spec.backward = root.optional_bool("backward", false);
  parse_outputs(root, spec);
  const bool decode = spec.kind == "attention_decode";
  if (decode)
    parse_decode(root, spec);
  else if (root.has("paged"))
    throw SpecError("paged", describe_value(root.raw("paged")), "absent: pages are for \"kind\": \"attention_decode\"");

  // Both branches are lvalues, so `mask` refers to the document rather than a copy:
  // copying (like dumping) recurses once per level, and the mask's depth is only bounded
  // once parse_head_masks has checked it. Absent, the mask is full (decode: causal).
  static const Json kNoMask;
  static const Json kCausal = Json{{"type", "causal"}};
  const Json& mask = root.has("mask") ? root.required_object("mask") : decode ? kCausal : kNoMask;
  MaskContext ctx{spec.shape.q_heads, spec.shape.q_len, spec.shape.kv_len, spec_dir,
                  &spec.mask_files};
  spec.masks = parse_head_masks(mask, "mask", ctx);
  spec.mask_summary = mask.is_null() ? "{\"type\":\"full\"}" : mask.dump();
  if (decode) check_decode_mask(mask, spec);

  parse_targets(root, spec);
  root.reject_unknown({"name", "kind", "comment", "shape", "dtype", "scale", "softcap",
                       "segment_ids", "sinks", "backward", "paged", "mask", "outputs", "targets"});
  resolve_auto_tiles(spec, tuning_dir);
  check_target_constraints(spec);
  return spec;
}

Spec load_spec(const std::string& file, const std::string& project_root) {
  namespace fs = std::filesystem;
  std::ifstream in(file, std::ios::binary);
  if (!in || std::filesystem::is_directory(file))
    throw SpecError(file + ": cannot read this spec file");
  std::ostringstream text;
  text << in.rdbuf();

  const fs::path absolute = fs::weakly_canonical(fs::absolute(file));
  const fs::path root = fs::weakly_canonical(fs::absolute(project_root));
  const fs::path relative = absolute.lexically_relative(root);
  const bool inside = !relative.empty() && *relative.begin() != "..";
  Spec spec;
  try {
    spec = parse_spec(text.str(), absolute.parent_path().string(), (root / "tuning").string());
  } catch (const SpecError& error) {
    throw SpecError(file + ": " + error.what());
  }
  spec.source = inside ? relative.generic_string() : absolute.filename().string();
  return spec;
}

}  // namespace kgen
