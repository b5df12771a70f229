// stmatrix / ldmatrix .m8n8 .x1/.x2/.x4 {.trans} .b16: lane 8 i + r gives the address of row r
// of matrix i; register i of each lane holds two 16-bit elements of matrix i (tensor/ldmatrix.h).
#include <cstring>

#include "core/decode.h"
#include "core/lanes.h"
#include "tensor/ldmatrix.h"

namespace kgen::emu {
namespace {

Step run_matrix(Warp& w, const Decoded& d, uint32_t mask) {
  if (mask != w.live() || w.valid != 0xffffffffu) w.fail(d, "stmatrix/ldmatrix executed by a diverged warp (.sync.aligned)");
  const bool store = d.mode == 1, trans = d.mode2 == 1;
  const int matrices = static_cast<int>(d.imm);
  const ptx::Operand& address = op(d, store ? 0 : 1);
  const ptx::Operand& regs = op(d, store ? 1 : 0);
  uint64_t row_address[32];
  for (int m = 0; m < matrices; ++m)
    for (int r = 0; r < 8; ++r) {
      const int lane = ldmatrix_address_lane(m, r);
      uint64_t a = w.address(address, lane, d);
      if (d.space == ptx::Space::none) a -= kSharedWindow;
      row_address[lane] = a;
    }
  for (int lane = 0; lane < 32; ++lane) {
    for (int m = 0; m < matrices; ++m) {
      const ptx::Operand& reg = regs.kind == ptx::Operand::Kind::vector ? regs.elements[static_cast<size_t>(m)] : regs;
      uint64_t value = store ? w.get(reg, lane, d) : 0;
      for (int part = 0; part < 2; ++part) {
        const LdmatrixElement e = ldmatrix_element(lane, m, part, trans);
        const uint64_t a = row_address[ldmatrix_address_lane(e.matrix, e.row)] + 2 * static_cast<uint64_t>(e.col);
        uint8_t* p = w.access(ptx::Space::shared, a, 2, store, lane, d);
        uint16_t h;
        if (store) {
          h = static_cast<uint16_t>(value >> (16 * part));
          std::memcpy(p, &h, 2);
        } else {
          std::memcpy(&h, p, 2);
          value |= uint64_t{h} << (16 * part);
        }
      }
      if (!store) w.set(reg, lane, value, d);
    }
  }
  return Step::next;
}

}  // namespace

void decode_matrix(const ptx::Instruction& in, const Modifiers& m, Decoded& d) {
  d.mode = in.parts[0] == "stmatrix";
  d.mode2 = m.has("trans");
  d.space = m.space;
  d.imm = m.has("x4") ? 4 : m.has("x2") ? 2 : 1;
  if (!m.has("m8n8") || m.last_type() != Type::b16) throw Unsupported{"shapes other than m8n8.b16"};
  d.run = run_matrix;
}

}  // namespace kgen::emu
