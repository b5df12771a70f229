// PTX text -> tokens with their line numbers. Opcodes and directives are single tokens
// ("mbarrier.try_wait.parity.shared::cta.b64", ".reg", "%tid.x"); `::` stays inside a name,
// a single ':' ends a label.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kgen::emu::ptx {

struct Token {
  enum class Kind : uint8_t { name, number, string, punct, end };
  Kind kind = Kind::end;
  std::string text;
  uint32_t line = 0;
};

// Throws EmulationError for a character PTX does not use.
std::vector<Token> tokenize(const std::string& text, const std::string& origin);

}  // namespace kgen::emu::ptx
