#include "core/decode.h"

#include <algorithm>
#include <map>

namespace kgen::emu {

Type type_named(std::string_view s) {
  static const std::map<std::string, Type, std::less<>> table = {
      {"pred", Type::pred}, {"b8", Type::b8},     {"b16", Type::b16},       {"b32", Type::b32},   {"b64", Type::b64},
      {"b128", Type::b128}, {"u8", Type::u8},     {"u16", Type::u16},       {"u32", Type::u32},   {"u64", Type::u64},
      {"s8", Type::s8},     {"s16", Type::s16},   {"s32", Type::s32},       {"s64", Type::s64},   {"f16", Type::f16},
      {"f16x2", Type::f16x2}, {"bf16", Type::bf16}, {"bf16x2", Type::bf16x2}, {"f32", Type::f32}, {"f64", Type::f64},
      {"f32x2", Type::f32x2}, {"tf32", Type::tf32}, {"e4m3", Type::e4m3}, {"e5m2", Type::e5m2},
  };
  const auto it = table.find(s);
  return it == table.end() ? Type::none : it->second;
}

uint32_t type_bits(Type t) {
  switch (t) {
    case Type::pred: return 1;
    case Type::b8: case Type::u8: case Type::s8: case Type::e4m3: case Type::e5m2: return 8;
    case Type::b16: case Type::u16: case Type::s16: case Type::f16: case Type::bf16: return 16;
    case Type::b32: case Type::u32: case Type::s32: case Type::f32: case Type::f16x2: case Type::bf16x2: case Type::tf32: return 32;
    case Type::b64: case Type::u64: case Type::s64: case Type::f32x2: case Type::f64: return 64;
    case Type::b128: return 128;
    case Type::none: return 0;
  }
  return 0;
}

bool Modifiers::has(std::string_view word) const { return std::find(words.begin(), words.end(), word) != words.end(); }

Modifiers split_modifiers(const ptx::Instruction& in) {
  static const std::map<std::string, Rounding, std::less<>> roundings = {
      {"rn", Rounding::rn},   {"rz", Rounding::rz},   {"rm", Rounding::rm},   {"rp", Rounding::rp},  {"rni", Rounding::rni},
      {"rzi", Rounding::rzi}, {"rmi", Rounding::rmi}, {"rpi", Rounding::rpi}, {"rna", Rounding::rna}, {"rs", Rounding::rs},
  };
  static const std::map<std::string, ptx::Space, std::less<>> spaces = {
      {"global", ptx::Space::global}, {"shared", ptx::Space::shared}, {"shared::cta", ptx::Space::shared},
      {"shared::cluster", ptx::Space::shared}, {"local", ptx::Space::local}, {"param", ptx::Space::param},
      {"const", ptx::Space::const_},
  };
  Modifiers m;
  for (size_t k = 1; k < in.parts.size(); ++k) {
    const std::string& w = in.parts[k];
    if (const Type t = type_named(w); t != Type::none) m.types.push_back(t);
    else if (const auto r = roundings.find(w); r != roundings.end()) m.rounding = r->second;
    else if (w == "ftz") m.ftz = true;
    else if (w == "sat" || w == "satfinite") m.sat = true;
    else if (w == "approx") m.approx = true;
    else if (w == "full") m.full = true;
    else if (w == "v2") m.vector = 2;
    else if (w == "v4") m.vector = 4;
    else if (w == "v8") m.vector = 8;
    else if (const auto s = spaces.find(w); s != spaces.end() && m.space == ptx::Space::none) m.space = s->second;
    else m.words.push_back(w);
  }
  return m;
}

namespace {

const std::map<std::string, FamilyDecoder, std::less<>>& families() {
  static const std::map<std::string, FamilyDecoder, std::less<>> table = {
      {"add", decode_arith},   {"sub", decode_arith},   {"mul", decode_arith},    {"mad", decode_arith},
      {"div", decode_arith},   {"rem", decode_arith},   {"abs", decode_arith},    {"neg", decode_arith},
      {"min", decode_arith},   {"max", decode_arith},   {"and", decode_bits},    {"or", decode_bits},
      {"xor", decode_bits},   {"not", decode_bits},   {"shl", decode_bits},    {"shr", decode_bits},
      {"cnot", decode_bits},  {"popc", decode_bits},  {"clz", decode_bits},    {"brev", decode_bits},
      {"bfe", decode_bits},   {"bfi", decode_bits},   {"prmt", decode_bits},   {"shf", decode_bits},
      {"mul24", decode_arith}, {"mad24", decode_arith}, {"lop3", decode_bits},   {"bfind", decode_bits},
      {"fma", decode_arith},     {"ex2", decode_special_function},     {"lg2", decode_special_function},      {"rcp", decode_special_function},
      {"sqrt", decode_special_function},    {"rsqrt", decode_special_function},   {"sin", decode_special_function},      {"cos", decode_special_function},
      {"tanh", decode_special_function},    {"copysign", decode_arith}, {"testp", decode_special_function},
      {"setp", decode_compare},  {"selp", decode_compare},  {"set", decode_compare},    {"slct", decode_compare},
      {"cvt", decode_convert},   {"cvta", decode_convert},
      {"mov", decode_move},
      {"ld", decode_memory},     {"st", decode_memory},     {"prefetch", decode_memory}, {"prefetchu", decode_memory},
      {"atom", decode_atomic},   {"red", decode_atomic},
      {"bra", decode_control},   {"exit", decode_control},  {"ret", decode_control},    {"trap", decode_control},
      {"brkpt", decode_control}, {"nanosleep", decode_control}, {"setmaxnreg", decode_control},
      {"griddepcontrol", decode_control},
      {"shfl", decode_warp},     {"vote", decode_warp},     {"elect", decode_warp},     {"activemask", decode_warp},
      {"match", decode_warp},    {"redux", decode_warp},
      {"bar", decode_barrier},   {"barrier", decode_barrier},
      {"mbarrier", decode_mbarrier},
      {"fence", decode_fence},   {"membar", decode_fence},
      {"cp", decode_bulk},
      {"wgmma", decode_wgmma},
      {"tcgen05", decode_tcgen05},
      {"stmatrix", decode_matrix}, {"ldmatrix", decode_matrix},
      {"call", decode_call},       {"mapa", decode_cluster},
      {"clusterlaunchcontrol", decode_cluster_launch},
  };
  return table;
}

}  // namespace

Decoded decode(const ptx::Instruction& in, const std::string& origin) {
  Decoded d;
  d.in = &in;
  const auto family = families().find(in.parts[0]);
  const std::string where = origin + ":" + std::to_string(in.line) + ": ";
  if (family == families().end()) throw EmulationError(where + "instruction '" + in.opcode + "' is not implemented by ptxemu");
  const Modifiers m = split_modifiers(in);
  try {
    family->second(in, m, d);
  } catch (const Unsupported& u) {
    throw EmulationError(where + "instruction '" + in.opcode + "' is not implemented by ptxemu: " + u.why);
  }
  if (!d.run) throw EmulationError(where + "instruction '" + in.opcode + "' is not implemented by ptxemu");
  return d;
}

}  // namespace kgen::emu
