#include "ptx/lexer.h"

#include <cctype>

#include "core/device.h"

namespace kgen::emu::ptx {
namespace {

bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%' || c == '.'; }
bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.'; }

}  // namespace

std::vector<Token> tokenize(const std::string& text, const std::string& origin) {
  std::vector<Token> tokens;
  uint32_t line = 1;
  size_t i = 0;
  const size_t n = text.size();
  auto push = [&](Token::Kind kind, size_t begin, size_t end) {
    tokens.push_back(Token{kind, text.substr(begin, end - begin), line});
  };
  while (i < n) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      ++i;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '/' && i + 1 < n && text[i + 1] == '/') {
      while (i < n && text[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < n && text[i + 1] == '*') {
      i += 2;
      while (i + 1 < n && !(text[i] == '*' && text[i + 1] == '/')) {
        if (text[i] == '\n') ++line;
        ++i;
      }
      i += 2;
    } else if (c == '"') {
      const size_t begin = i++;
      while (i < n && text[i] != '"') ++i;
      ++i;
      push(Token::Kind::string, begin, i);
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      // Integers (decimal, 0x hex, optional U), 0f/0d float bit patterns, decimal floats.
      const size_t begin = i;
      while (i < n && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
      push(Token::Kind::number, begin, i);
    } else if (name_start(c)) {
      const size_t begin = i++;
      while (i < n && (name_char(text[i]) || (text[i] == ':' && i + 1 < n && text[i + 1] == ':'))) {
        i += text[i] == ':' ? 2 : 1;
      }
      push(Token::Kind::name, begin, i);
    } else if (std::string_view("{}[]()<>,;:+-|!@=").find(c) != std::string_view::npos) {
      push(Token::Kind::punct, i, i + 1);
      ++i;
    } else {
      throw EmulationError(origin + ":" + std::to_string(line) + ": unexpected character '" + std::string(1, c) +
                           "' in PTX");
    }
  }
  tokens.push_back(Token{Token::Kind::end, "", line});
  return tokens;
}

}  // namespace kgen::emu::ptx
