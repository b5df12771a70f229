#include "tile_choice.h"

namespace kgen {

const char* tile_pass_name(TilePass pass) {
  switch (pass) {
    case TilePass::kForward: return "forward";
    case TilePass::kBackward: return "backward";
    case TilePass::kDecode: return "decode";
  }
  return "?";
}

std::string describe_tiles(const TileChoice& choice) {
  std::string text;
  for (const auto& [field, value] : choice) text += (text.empty() ? "" : ", ") + field + " " + std::to_string(value);
  return text;
}

std::string compact_tiles(const TileChoice& choice) {
  std::string text;
  for (const auto& [field, value] : choice) text += (text.empty() ? "" : "/") + std::to_string(value);
  return text;
}

std::string compact_fields(const TileChoice& choice) {
  std::string text;
  for (const auto& [field, value] : choice) text += (text.empty() ? "" : "/") + field;
  return text;
}

}  // namespace kgen
