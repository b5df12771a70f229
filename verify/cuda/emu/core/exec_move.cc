// mov: registers, immediates, special registers, symbol addresses, and the vector forms that
// pack registers into a wider one or unpack it ({%r1, %r2} <-> %rd1).
#include "core/decode.h"
#include "core/lanes.h"

namespace kgen::emu {
namespace {

uint32_t element_bits(const ptx::Operand& v, uint32_t total) {
  return total / static_cast<uint32_t>(v.elements.size());
}

Step run_mov(Warp& w, const Decoded& d, uint32_t mask) {
  const ptx::Operand& dst = op(d, 0);
  const ptx::Operand& src = op(d, 1);
  const uint32_t width = type_bits(d.type);
  for_each_lane(mask, [&](int lane) {
    if (src.kind == ptx::Operand::Kind::vector) {  // pack
      const uint32_t each = element_bits(src, width);
      uint64_t v = 0;
      for (size_t k = 0; k < src.elements.size(); ++k)
        v |= truncate(w.get(src.elements[k], lane, d), each) << (each * k);
      w.set(dst, lane, v, d);
    } else if (dst.kind == ptx::Operand::Kind::vector) {  // unpack
      const uint32_t each = element_bits(dst, width);
      const uint64_t v = w.get(src, lane, d);
      for (size_t k = 0; k < dst.elements.size(); ++k) w.set(dst.elements[k], lane, truncate(v >> (each * k), each), d);
    } else {
      w.set(dst, lane, d.type == Type::pred ? w.get(src, lane, d) != 0 : truncate(w.get(src, lane, d), width), d);
    }
  });
  return Step::next;
}

}  // namespace

void decode_move(const ptx::Instruction&, const Modifiers& m, Decoded& d) {
  if (!m.words.empty()) throw Unsupported{"modifier ." + m.words[0]};
  d.type = m.last_type();
  if (d.type == Type::none) throw Unsupported{"no type suffix"};
  d.run = run_mov;
}

}  // namespace kgen::emu
