#include "targets/cuda/source_text.h"

#include <cstdio>

namespace kgen {
namespace {

constexpr std::size_t kTableWidth = 94;

std::string lay_out(const std::vector<std::string>& items) {
  std::string out, line;
  for (std::size_t k = 0; k < items.size(); ++k) {
    const std::string item = items[k] + (k + 1 < items.size() ? "," : "");
    if (!line.empty() && line.size() + 1 + item.size() > kTableWidth) {
      out += line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + item;
  }
  return out + line;
}

template <typename T>
std::string decimal_list(const std::vector<T>& values) {
  std::vector<std::string> items;
  items.reserve(values.size());
  for (T value : values) items.push_back(std::to_string(value));
  return lay_out(items);
}

}  // namespace

std::string cuda_float_literal(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.8ef", static_cast<double>(static_cast<float>(value)));
  return buffer;
}

std::string short_number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", value);
  return buffer;
}

std::string score_formula(const Spec& spec) {
  if (!spec.softcap) return short_number(spec.scale) + " * q.k";
  return short_number(*spec.softcap) + " * tanh(" + short_number(spec.scale) + " * q.k / " +
         short_number(*spec.softcap) + ")";
}

std::string mask_strategy(PartialTileMask mask, bool segment_ids, const std::string& bitmask) {
  std::string strategy;
  switch (mask) {
    case PartialTileMask::kNone: strategy = "no partial tiles: no mask code; full tiles only"; break;
    case PartialTileMask::kPredicate:
      strategy = "partial tiles: the mask predicate, evaluated in the kernel; full tiles: no mask";
      break;
    case PartialTileMask::kBitmask: strategy = "partial tiles: a precomputed " + bitmask + " per tile; full tiles: no mask"; break;
  }
  if (segment_ids) strategy += "; segment ids tested on every tile";
  return strategy;
}

std::string cuda_mask_policy(PartialTileMask mask) {
  switch (mask) {
    case PartialTileMask::kNone: return "kgen::cuda::NoMask";
    case PartialTileMask::kPredicate: return "kgen::cuda::PredicateMask<Config>";
    case PartialTileMask::kBitmask: return "kgen::cuda::BitmaskMask<Config>";
  }
  return "";
}

std::string cuda_segment_mask_policy(bool segment_ids) {
  return segment_ids ? "kgen::cuda::SegmentMask<Config>" : "kgen::cuda::NoSegmentMask";
}

std::string number_list(const std::vector<int64_t>& values) { return decimal_list(values); }
std::string number_list(const std::vector<int32_t>& values) { return decimal_list(values); }

std::string hex_number_list(const std::vector<uint32_t>& values) {
  std::vector<std::string> items;
  items.reserve(values.size());
  for (uint32_t value : values) {
    char buffer[16];
    std::snprintf(buffer, sizeof buffer, "0x%08xu", static_cast<unsigned>(value));
    items.push_back(buffer);
  }
  return lay_out(items);
}

void PointerOperands::add(const char* name, const char* type, const char* element, const char* description) {
  Json operand = {{"name", name}, {"type", type}, {"description", description}};
  if (checked_) {
    operand["element"] = element;
    operand["alignment"] = 4;
  }
  operands_.push_back(std::move(operand));
}

}  // namespace kgen
