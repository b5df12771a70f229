// The PTX parser: module directives, variables, functions and their bodies (scoped register
// declarations and labels, as inline-asm blocks nest them). It fails closed: a construct it
// does not know is an error naming the line.
#include <algorithm>
#include <cstring>
#include <map>
#include <optional>

#include "core/device.h"
#include "ptx/lexer.h"
#include "ptx/module.h"

namespace kgen::emu::ptx {
namespace {

const std::map<std::string, Special, std::less<>>& specials() {
  static const std::map<std::string, Special, std::less<>> table = {
      {"%tid.x", Special::tid_x}, {"%tid.y", Special::tid_y}, {"%tid.z", Special::tid_z},
      {"%ntid.x", Special::ntid_x}, {"%ntid.y", Special::ntid_y}, {"%ntid.z", Special::ntid_z},
      {"%ctaid.x", Special::ctaid_x}, {"%ctaid.y", Special::ctaid_y}, {"%ctaid.z", Special::ctaid_z},
      {"%nctaid.x", Special::nctaid_x}, {"%nctaid.y", Special::nctaid_y}, {"%nctaid.z", Special::nctaid_z},
      {"%laneid", Special::laneid}, {"%warpid", Special::warpid}, {"%nwarpid", Special::nwarpid},
      {"%smid", Special::smid}, {"%nsmid", Special::nsmid}, {"%gridid", Special::gridid},
      {"%clock", Special::clock}, {"%clock64", Special::clock64}, {"%globaltimer", Special::globaltimer},
      {"%lanemask_eq", Special::lanemask_eq}, {"%lanemask_lt", Special::lanemask_lt},
      {"%lanemask_le", Special::lanemask_le}, {"%lanemask_gt", Special::lanemask_gt},
      {"%lanemask_ge", Special::lanemask_ge}, {"%dynamic_smem_size", Special::dynamic_smem_size},
      {"%total_smem_size", Special::total_smem_size}, {"%cluster_ctarank", Special::cluster_ctarank},
      {"%cluster_nctarank", Special::cluster_nctarank}, {"%clusterid.x", Special::clusterid_x},
      {"%clusterid.y", Special::clusterid_y}, {"%clusterid.z", Special::clusterid_z},
      {"%nclusterid.x", Special::nclusterid_x}, {"%nclusterid.y", Special::nclusterid_y},
      {"%nclusterid.z", Special::nclusterid_z}, {"%cluster_ctaid.x", Special::cluster_ctaid_x},
      {"%cluster_ctaid.y", Special::cluster_ctaid_y}, {"%cluster_ctaid.z", Special::cluster_ctaid_z},
      {"%cluster_nctaid.x", Special::cluster_nctaid_x}, {"%cluster_nctaid.y", Special::cluster_nctaid_y},
      {"%cluster_nctaid.z", Special::cluster_nctaid_z}, {"%is_explicit_cluster", Special::is_explicit_cluster},
  };
  return table;
}

// Bytes of a PTX fundamental type named by a directive token (".b32" -> 4).
std::optional<uint32_t> type_bytes(std::string_view type) {
  static const std::map<std::string, uint32_t, std::less<>> table = {
      {".b8", 1}, {".u8", 1}, {".s8", 1}, {".b16", 2}, {".u16", 2}, {".s16", 2}, {".f16", 2}, {".bf16", 2},
      {".b32", 4}, {".u32", 4}, {".s32", 4}, {".f32", 4}, {".f16x2", 4}, {".bf16x2", 4}, {".b64", 8},
      {".u64", 8}, {".s64", 8}, {".f64", 8}, {".b128", 16}, {".pred", 1},
  };
  const auto it = table.find(type);
  if (it == table.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> split_opcode(const std::string& opcode) {
  std::vector<std::string> parts;
  size_t begin = 0;
  for (size_t i = 0; i <= opcode.size(); ++i) {
    if (i == opcode.size() || opcode[i] == '.') {
      parts.push_back(opcode.substr(begin, i - begin));
      begin = i + 1;
    }
  }
  return parts;
}

class Parser {
 public:
  Parser(const std::string& text, const std::string& origin) : origin_(origin), tokens_(tokenize(text, origin)) {}

  Module parse() {
    module_.origin = origin_;
    while (!at_end()) parse_top_level();
    return std::move(module_);
  }

 private:
  // ---- tokens ----
  const Token& peek(size_t ahead = 0) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }
  bool at_end() const { return peek().kind == Token::Kind::end; }
  const Token& next() {
    const Token& t = peek();
    if (!at_end()) ++pos_;
    return t;
  }
  bool accept(std::string_view text) {
    if (peek().text == text && peek().kind != Token::Kind::string) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(std::string_view text) {
    if (!accept(text)) fail("expected '" + std::string(text) + "', found '" + peek().text + "'");
  }
  [[noreturn]] void fail(const std::string& message, uint32_t line = 0) const {
    throw EmulationError(origin_ + ":" + std::to_string(line ? line : peek().line) + ": " + message);
  }
  uint64_t parse_unsigned() {
    const Token& t = next();
    if (t.kind != Token::Kind::number) fail("expected a number, found '" + t.text + "'", t.line);
    return parse_integer_text(t.text, t.line);
  }
  uint64_t parse_integer_text(const std::string& text, uint32_t line) const {
    std::string digits = text;
    if (!digits.empty() && (digits.back() == 'U' || digits.back() == 'u')) digits.pop_back();
    try {
      const bool hex = digits.size() > 2 && (digits[1] == 'x' || digits[1] == 'X');
      const std::string body = hex ? digits.substr(2) : digits;
      size_t used = 0;
      const uint64_t value = std::stoull(body, &used, hex ? 16 : (body.size() > 1 && body[0] == '0' ? 8 : 10));
      if (used != body.size()) fail("malformed number '" + text + "'", line);
      return value;
    } catch (const std::logic_error&) {
      fail("malformed number '" + text + "'", line);
    }
  }
  // Skips the rest of a line-oriented directive (.loc, .file, .section ...).
  void skip_line() {
    const uint32_t line = peek().line;
    while (!at_end() && peek().line == line) next();
  }
  void skip_statement() {
    while (!at_end() && !accept(";")) next();
  }

  // ---- module level ----
  void parse_top_level() {
    const Token& t = peek();
    if (t.text == ".version") {
      next();
      module_.version = next().text;
    } else if (t.text == ".target") {
      next();
      module_.target = next().text;
      while (accept(",")) next();
    } else if (t.text == ".address_size") {
      next();
      if (parse_unsigned() != 64) fail("only .address_size 64 is supported");
    } else if (t.text == ".file" || t.text == ".section" || t.text == ".loc") {
      skip_line();
    } else if (t.text == ".pragma") {
      skip_statement();
    } else {
      parse_declaration();
    }
  }

  // [.visible|.extern|.weak|.common] then a variable or a function.
  void parse_declaration() {
    bool is_extern = false;
    for (;;) {
      if (accept(".visible") || accept(".weak") || accept(".common")) continue;
      if (accept(".extern")) {
        is_extern = true;
        continue;
      }
      break;
    }
    if (peek().text == ".entry" || peek().text == ".func") {
      parse_function();
      return;
    }
    Variable variable = parse_variable(is_extern);
    module_.variables.push_back(std::move(variable));
  }

  // .global|.shared|.const [.align N] .type name[size] [= {...}];
  Variable parse_variable(bool is_extern) {
    Variable v;
    v.is_extern = is_extern;
    const std::string space = next().text;
    if (space == ".global") v.space = Space::global;
    else if (space == ".shared") v.space = Space::shared;
    else if (space == ".const") v.space = Space::const_;
    else if (space == ".local") v.space = Space::local;
    else if (space == ".param" && function_) {
      v.space = Space::local;
      v.call_slot = true;
    } else fail("unexpected '" + space + "' at module scope");
    if (accept(".align")) v.align = static_cast<uint32_t>(parse_unsigned());
    // State-space qualifiers such as .shared::cta come as part of the token; types follow.
    const Token& type = next();
    const auto element = type_bytes(type.text);
    if (!element) fail("unknown variable type '" + type.text + "'", type.line);
    if (v.align == 1) v.align = *element;
    v.name = next().text;
    uint64_t count = 1;
    if (accept("[")) {
      if (accept("]")) {
        count = 0;
      } else {
        count = parse_unsigned();
        expect("]");
      }
    }
    v.size = count * *element;
    if (accept("=")) {
      expect("{");
      while (!accept("}")) {
        bool negative = accept("-");
        const Token& t = next();
        if (t.kind != Token::Kind::number) fail("only numeric initializers are supported, found '" + t.text + "'", t.line);
        uint64_t value = parse_integer_text(t.text, t.line);
        if (negative) value = ~value + 1;
        for (uint32_t b = 0; b < *element; ++b) v.init.push_back(static_cast<uint8_t>(value >> (8 * b)));
        accept(",");
      }
      if (v.init.size() < v.size) v.init.resize(v.size, 0);
    }
    expect(";");
    return v;
  }

  // .param [.align N] .type name[[size]]
  Param parse_param() {
    Param p;
    expect(".param");
    if (accept(".align")) p.align = static_cast<uint32_t>(parse_unsigned());
    const Token& type = next();
    const auto element = type_bytes(type.text);
    if (!element) fail("unknown parameter type '" + type.text + "'", type.line);
    if (p.align == 1) p.align = *element;
    // .ptr qualifiers of kernel pointer params: ".ptr .global .align 16"
    while (peek().text == ".ptr" || peek().text == ".global" || peek().text == ".shared" || peek().text == ".const" ||
           peek().text == ".local") {
      next();
      if (accept(".align")) parse_unsigned();
    }
    p.name = next().text;
    uint64_t count = 1;
    if (accept("[")) {
      count = parse_unsigned();
      expect("]");
    }
    p.size = static_cast<uint32_t>(count * *element);
    return p;
  }

  void parse_function() {
    Function f;
    f.is_entry = next().text == ".entry";
    if (!f.is_entry && accept("(")) {
      while (!accept(")")) {
        f.returns.push_back(parse_param());
        accept(",");
      }
    }
    f.name = next().text;
    if (accept("(")) {
      while (!accept(")")) {
        f.params.push_back(parse_param());
        accept(",");
      }
    }
    // Performance directives before the body.
    for (;;) {
      if (accept(".maxntid")) {
        for (int d = 0; d < 3; ++d) {
          f.max_threads[d] = static_cast<uint32_t>(parse_unsigned());
          if (!accept(",")) break;
        }
      } else if (accept(".reqntid")) {
        for (int d = 0; d < 3; ++d) {
          f.max_threads[d] = static_cast<uint32_t>(parse_unsigned());
          if (!accept(",")) break;
        }
      } else if (accept(".minnctapersm") || accept(".maxnreg") || accept(".maxnctapersm")) {
        parse_unsigned();
      } else if (accept(".noreturn")) {
      } else if (accept(".explicitcluster")) {
        f.explicit_cluster = true;
      } else if (accept(".reqnctapercluster")) {
        for (int d = 0; d < 3; ++d) {
          f.cluster_dims[d] = static_cast<uint32_t>(parse_unsigned());
          if (!accept(",")) break;
        }
        for (int d = 0; d < 3; ++d) f.cluster_dims[d] = std::max<uint32_t>(f.cluster_dims[d], 1);
      } else if (accept(".maxclusterrank")) {
        parse_unsigned();
      } else if (peek().text == ".pragma") {
        skip_statement();
      } else {
        break;
      }
    }
    const uint32_t index = static_cast<uint32_t>(module_.functions.size());
    const auto existing = module_.function_index.find(f.name);
    if (accept(";")) {  // a prototype: the definition (if any) comes later
      if (existing == module_.function_index.end()) {
        module_.function_index[f.name] = index;
        module_.functions.push_back(std::move(f));
      }
      return;
    }
    const uint32_t slot = existing == module_.function_index.end() ? index : existing->second;
    if (existing == module_.function_index.end()) {
      module_.function_index[f.name] = index;
      module_.functions.push_back(Function{});
    }
    function_ = &f;
    parse_body();
    function_ = nullptr;
    module_.functions[slot] = std::move(f);
  }

  // ---- function bodies ----
  struct Scope {
    int parent = -1;
    std::unordered_map<std::string, uint32_t> registers;
    std::unordered_map<std::string, uint32_t> labels;  // -> instruction index
  };
  struct PendingLabel {
    uint32_t instruction, operand;
    int element;  // -1: the operand itself
    int scope;
    std::string name;
    uint32_t line;
  };

  std::optional<uint32_t> find_register(const std::string& name) const {
    for (int s = scope_; s >= 0; s = scopes_[s].parent) {
      const auto it = scopes_[s].registers.find(name);
      if (it != scopes_[s].registers.end()) return it->second;
    }
    return std::nullopt;
  }

  uint32_t new_register(const std::string& name, uint32_t slots) {
    const uint32_t slot = function_->register_slots;
    function_->register_slots += slots;
    for (uint32_t k = 0; k < slots; ++k) function_->register_names.push_back(name);
    scopes_[scope_].registers[name] = slot;
    return slot;
  }

  void parse_body() {
    scopes_.clear();
    pending_.clear();
    expect("{");
    scopes_.push_back(Scope{});
    scope_ = 0;
    int depth = 1;
    while (depth > 0) {
      if (at_end()) fail("unterminated function body");
      const Token& t = peek();
      if (t.text == "{") {
        next();
        scopes_.push_back(Scope{scope_, {}, {}});
        scope_ = static_cast<int>(scopes_.size()) - 1;
        ++depth;
      } else if (t.text == "}") {
        next();
        scope_ = scopes_[scope_].parent;
        --depth;
      } else if (t.text == ".reg") {
        parse_register_declaration();
      } else if (t.text == ".local" || t.text == ".shared" || t.text == ".param") {
        // A .param in a body is a call's argument or return slot: per-thread storage that
        // the emulator keeps in the thread's local depot (Variable::call_slot).
        Variable v = parse_variable(false);
        if (v.space == Space::local) function_->local_bytes = (function_->local_bytes + v.align - 1) / v.align * v.align + v.size;
        function_->locals.push_back(std::move(v));
      } else if (t.text == ".loc" || t.text == ".file") {
        skip_line();
      } else if (t.text == ".pragma") {
        skip_statement();
      } else if (t.kind == Token::Kind::name && peek(1).text == ":") {
        next();
        next();
        scopes_[scope_].labels[t.text] = static_cast<uint32_t>(function_->body.size());
      } else {
        parse_instruction();
      }
    }
    resolve_labels();
  }

  // .reg .type %r<N>; | .reg .type a, b;
  void parse_register_declaration() {
    expect(".reg");
    const Token& type = next();
    const auto bytes = type_bytes(type.text);
    if (!bytes && type.text != ".v2" && type.text != ".v4") fail("unknown register type '" + type.text + "'", type.line);
    uint32_t slots = bytes && *bytes == 16 ? 2 : 1;
    if (type.text == ".v2" || type.text == ".v4") fail("vector registers are not supported", type.line);
    do {
      const std::string name = next().text;
      if (accept("<")) {
        const uint64_t count = parse_unsigned();
        expect(">");
        for (uint64_t k = 0; k < count; ++k) new_register(name + std::to_string(k), slots);
      } else {
        new_register(name, slots);
      }
    } while (accept(","));
    expect(";");
  }

  void parse_instruction() {
    Instruction in;
    in.line = peek().line;
    if (accept("@")) {
      in.guard_negated = accept("!");
      const Token& p = next();
      const auto slot = find_register(p.text);
      if (!slot) fail("unknown guard predicate '" + p.text + "'", p.line);
      in.guard = static_cast<int32_t>(*slot);
    }
    const Token& op = next();
    if (op.kind != Token::Kind::name) fail("expected an instruction, found '" + op.text + "'", op.line);
    in.opcode = op.text;
    in.parts = split_opcode(op.text);
    const uint32_t index = static_cast<uint32_t>(function_->body.size());
    if (!accept(";")) {
      do {
        in.operands.push_back(parse_operand(index, static_cast<uint32_t>(in.operands.size()), -1));
      } while (accept(","));
      expect(";");
    }
    function_->body.push_back(std::move(in));
  }

  Operand parse_operand(uint32_t instruction, uint32_t operand, int element) {
    Operand o;
    if (accept("{") || accept("(")) {
      const std::string close = tokens_[pos_ - 1].text == "{" ? "}" : ")";
      o.kind = Operand::Kind::vector;
      int e = 0;
      if (!accept(close)) {
        do {
          o.elements.push_back(parse_operand(instruction, operand, element < 0 ? e : element));
          ++e;
        } while (accept(","));
        expect(close);
      }
      return o;
    }
    if (accept("[")) {
      std::vector<Operand> items;
      do {
        items.push_back(parse_address_item(instruction, operand));
      } while (accept(","));
      expect("]");
      if (items.size() == 1) return items[0];
      o.kind = Operand::Kind::tuple;
      o.elements = std::move(items);
      return o;
    }
    if (accept("!")) {
      o = parse_operand(instruction, operand, element);
      if (o.kind != Operand::Kind::reg) fail("'!' applies to a predicate register");
      o.negate = true;
      return o;
    }
    const bool negative = accept("-");
    const Token& t = next();
    if (t.kind == Token::Kind::number) {
      o.kind = Operand::Kind::imm;
      o.bits = parse_immediate(t, &o.is_float);
      if (negative) {
        if (o.is_float) fail("negative float literal", t.line);
        o.bits = ~o.bits + 1;
      }
      return o;
    }
    if (negative || t.kind != Token::Kind::name) fail("unexpected '" + t.text + "' in an operand", t.line);
    if (t.text == "_") {
      o.kind = Operand::Kind::sink;
      return o;
    }
    if (const auto special = specials().find(t.text); special != specials().end()) {
      o.kind = Operand::Kind::special;
      o.special = special->second;
      return o;
    }
    if (const auto reg = find_register(t.text)) {
      o.kind = Operand::Kind::reg;
      o.reg = *reg;
      if (accept("|")) {
        const Token& p = next();
        const auto second = find_register(p.text);
        if (!second) fail("unknown register '" + p.text + "'", p.line);
        o.reg2 = static_cast<int32_t>(*second);
      }
      return o;
    }
    if (const auto symbol = find_symbol(t.text)) {
      o.kind = Operand::Kind::symbol;
      o.symbol = *symbol;
      return o;
    }
    // Otherwise a label, possibly defined further down: resolved when the body ends.
    o.kind = Operand::Kind::label;
    pending_.push_back(PendingLabel{instruction, operand, element, scope_, t.text, t.line});
    return o;
  }

  // One item inside [...]: reg[+off], symbol[+off], an absolute address, or a {vector}.
  Operand parse_address_item(uint32_t instruction, uint32_t operand) {
    if (peek().text == "{") return parse_operand(instruction, operand, -1);
    Operand o;
    o.kind = Operand::Kind::address;
    const Token& t = next();
    if (t.kind == Token::Kind::number) {
      o.base_kind = Operand::Kind::none;
      o.bits = parse_integer_text(t.text, t.line);
      return o;
    }
    if (const auto reg = find_register(t.text)) {
      o.base_kind = Operand::Kind::reg;
      o.reg = *reg;
    } else if (const auto symbol = find_symbol(t.text)) {
      o.base_kind = Operand::Kind::symbol;
      o.symbol = *symbol;
    } else {
      fail("unknown name '" + t.text + "' in an address", t.line);
    }
    if (accept("+")) {
      const bool negative = accept("-");
      const Token& n = next();
      uint64_t offset = parse_integer_text(n.text, n.line);
      o.bits = negative ? ~offset + 1 : offset;
    } else if (accept("-")) {
      const Token& n = next();
      o.bits = ~parse_integer_text(n.text, n.line) + 1;
    }
    return o;
  }

  uint64_t parse_immediate(const Token& t, bool* is_float) const {
    const std::string& s = t.text;
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'f' || s[1] == 'F' || s[1] == 'd' || s[1] == 'D')) {
      *is_float = true;
      return std::stoull(s.substr(2), nullptr, 16);
    }
    if (s.find('.') != std::string::npos) {
      *is_float = true;
      const double value = std::stod(s);
      uint64_t bits;
      std::memcpy(&bits, &value, 8);
      return bits;
    }
    return parse_integer_text(s, t.line);
  }

  std::optional<Symbol> find_symbol(const std::string& name) const {
    for (uint32_t k = 0; k < function_->params.size(); ++k)
      if (function_->params[k].name == name) return Symbol{Symbol::Kind::param, k};
    // The latest declaration first: call blocks ({ .param .b64 param0; ... call ...; }) declare
    // the same names one block after another.
    for (uint32_t k = static_cast<uint32_t>(function_->locals.size()); k-- > 0;)
      if (function_->locals[k].name == name) return Symbol{Symbol::Kind::variable, Symbol::kFunctionLocal | k};
    for (uint32_t k = 0; k < module_.variables.size(); ++k)
      if (module_.variables[k].name == name) return Symbol{Symbol::Kind::variable, k};
    if (const auto it = module_.function_index.find(name); it != module_.function_index.end())
      return Symbol{Symbol::Kind::function, it->second};
    return std::nullopt;
  }

  void resolve_labels() {
    for (const PendingLabel& p : pending_) {
      std::optional<uint32_t> target;
      for (int s = p.scope; s >= 0 && !target; s = scopes_[s].parent) {
        const auto it = scopes_[s].labels.find(p.name);
        if (it != scopes_[s].labels.end()) target = it->second;
      }
      if (!target) fail("unknown name '" + p.name + "'", p.line);
      Operand& o = function_->body[p.instruction].operands[p.operand];
      Operand& slot = p.element < 0 ? o : o.elements[p.element];
      slot.bits = *target;
    }
  }

  std::string origin_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  Module module_;
  Function* function_ = nullptr;
  std::vector<Scope> scopes_;
  int scope_ = -1;
  std::vector<PendingLabel> pending_;
};

}  // namespace

Module parse_module(const std::string& text, const std::string& origin) { return Parser(text, origin).parse(); }

}  // namespace kgen::emu::ptx
