// bra exit ret trap brkpt nanosleep setmaxnreg griddepcontrol: control flow and the hints that
// change nothing a CPU can observe (setmaxnreg's operand is still checked).
#include "core/decode.h"
#include "core/lanes.h"

namespace kgen::emu {
namespace {

Step run_bra(Warp& w, const Decoded& d, uint32_t mask) {
  const ptx::Operand& target = op(d, 0);
  if (target.kind != ptx::Operand::Kind::label) w.fail(d, "indirect branches are not supported");
  w.move(mask, static_cast<uint32_t>(target.bits));
  return Step::jumped;
}

Step run_exit(Warp& w, const Decoded&, uint32_t mask) {
  w.exited |= mask;
  return Step::jumped;
}

Step run_trap(Warp& w, const Decoded& d, uint32_t) { w.fail(d, "the kernel executed trap"); }

Step run_nothing(Warp&, const Decoded&, uint32_t) { return Step::next; }

// setmaxnreg.{inc,dec}.sync.aligned.u32 imm: 24..256 in steps of 8.
Step run_setmaxnreg(Warp& w, const Decoded& d, uint32_t mask) {
  const uint64_t n = op(d, 0).bits;
  if (n < 24 || n > 256 || n % 8) w.fail(d, "setmaxnreg count " + std::to_string(n) + " is not in 24..256 in steps of 8");
  if (mask != w.live()) w.fail(d, "setmaxnreg executed by a diverged warp (.sync.aligned)");
  return Step::next;
}

}  // namespace

void decode_control(const ptx::Instruction& in, const Modifiers&, Decoded& d) {
  const std::string& name = in.parts[0];
  if (name == "bra") {
    d.run = run_bra;  // bra.uni promises no divergence; a divergent one is handled like bra
  } else if (name == "exit" || name == "ret") {
    d.run = run_exit;  // kernels call no functions here: ret leaves the kernel
  } else if (name == "trap" || name == "brkpt") {
    d.run = run_trap;
  } else if (name == "setmaxnreg") {
    if (in.operands.size() != 1 || in.operands[0].kind != ptx::Operand::Kind::imm) throw Unsupported{"operand"};
    d.run = run_setmaxnreg;
  } else {  // nanosleep, griddepcontrol.{wait,launch_dependents}: one kernel at a time here
    d.run = run_nothing;
  }
}

}  // namespace kgen::emu
