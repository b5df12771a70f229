// call: the callees kernels reach in practice are the CUDA runtime's __assertfail (a device
// assert() that failed, and CUTLASS's CUTE_INVALID_CONTROL_PATH) and vprintf (device printf).
// __assertfail is a finding naming the assertion, its file, line and function, read from the
// call's argument slots; vprintf prints each calling thread's line on stdout. Calls of anything
// else are refused at decode time: nvcc inlines device functions, so a call that remains is one
// the emulator would have to model.
#include <cstdio>
#include <cstring>
#include <string>

#include "core/decode.h"
#include "core/lanes.h"

namespace kgen::emu {
namespace {

// The NUL-terminated string at generic address `address` (module strings are global).
std::string read_string(const Warp& w, uint64_t address) {
  std::string s;
  for (uint64_t k = 0; k < 1024; ++k) {
    if (!w.cta->launch->globals->find(address + k, 1)) return s + "<unreadable>";
    const char c = *reinterpret_cast<const char*>(address + k);
    if (c == 0) break;
    s.push_back(c);
  }
  return s;
}

// The value a call argument slot holds: `slot` is a symbol of a body .param (kept in local).
uint64_t argument(Warp& w, const Decoded& d, const ptx::Operand& slot, uint32_t bytes, int lane) {
  const uint64_t offset = w.get(slot, lane, d);
  uint64_t v = 0;
  std::memcpy(&v, w.access(ptx::Space::local, offset, bytes, false, lane, d), bytes);
  return v;
}

// The call's argument list (the vector after the callee) and return slot (before it), if any.
const ptx::Operand& arguments(const Decoded& d) { return op(d, d.in->operands.size() - 1); }

// call{.uni} __assertfail, (message, file, line, function, char_size);
Step run_assertfail(Warp& w, const Decoded& d, uint32_t mask) {
  const int lane = __builtin_ctz(mask);
  const std::vector<ptx::Operand>& args = arguments(d).elements;
  std::string message = "device-side assert failed";
  if (args.size() >= 4) {
    message += ": " + read_string(w, argument(w, d, args[1], 8, lane)) + ":" +
               std::to_string(argument(w, d, args[2], 4, lane)) + ": " + read_string(w, argument(w, d, args[3], 8, lane)) +
               ": Assertion `" + read_string(w, argument(w, d, args[0], 8, lane)) + "` failed";
  }
  w.fail(d, message, lane);
}

// One conversion of a printf format with its argument, read from the packed argument buffer
// (each argument aligned to its size; floats arrive as double, as C varargs promote them).
std::string format_one(Warp& w, const Decoded& d, const std::string& spec, uint64_t& cursor, int lane) {
  const char conversion = spec.back();
  const bool wide = spec.find('l') != std::string::npos || conversion == 'p' || conversion == 's' ||
                    conversion == 'f' || conversion == 'e' || conversion == 'g' || conversion == 'E' ||
                    conversion == 'G' || conversion == 'a';
  const uint32_t bytes = wide ? 8 : 4;
  cursor = (cursor + bytes - 1) / bytes * bytes;
  uint64_t v = 0;
  std::memcpy(&v, w.access(ptx::Space::none, cursor, bytes, false, lane, d), bytes);
  cursor += bytes;
  char out[512];
  switch (conversion) {
    case 's': return read_string(w, v);
    case 'f': case 'e': case 'g': case 'E': case 'G': case 'a': {
      double x;
      std::memcpy(&x, &v, 8);
      std::snprintf(out, sizeof out, spec.c_str(), x);
      return out;
    }
    case 'p': std::snprintf(out, sizeof out, "%#llx", static_cast<unsigned long long>(v)); return out;
    default: {
      // Integers: print with the width the format names (%d reads 4 bytes, %ld / %lld 8).
      std::string ll = spec.substr(0, spec.find_first_of("hlqjzt") == std::string::npos ? spec.size() - 1
                                                                                       : spec.find_first_of("hlqjzt"));
      ll += "ll";
      ll += conversion;
      const long long value = wide ? static_cast<long long>(v) : conversion == 'd' || conversion == 'i'
                                                                     ? static_cast<long long>(static_cast<int32_t>(v))
                                                                     : static_cast<long long>(static_cast<uint32_t>(v));
      std::snprintf(out, sizeof out, ll.c_str(), value);
      return out;
    }
  }
}

// call{.uni} (ret), vprintf, (format, arguments);
Step run_vprintf(Warp& w, const Decoded& d, uint32_t mask) {
  const std::vector<ptx::Operand>& args = arguments(d).elements;
  if (args.size() != 2) w.fail(d, "vprintf takes a format and an argument buffer");
  for_each_lane(mask, [&](int lane) {
    const std::string format = read_string(w, argument(w, d, args[0], 8, lane));
    uint64_t cursor = argument(w, d, args[1], 8, lane);
    std::string line;
    for (size_t k = 0; k < format.size(); ++k) {
      if (format[k] != '%') {
        line.push_back(format[k]);
        continue;
      }
      if (k + 1 < format.size() && format[k + 1] == '%') {
        line.push_back('%');
        ++k;
        continue;
      }
      const size_t end = format.find_first_of("diouxXcspfeEgGaA", k + 1);
      if (end == std::string::npos) w.fail(d, "vprintf format '" + format + "' ends inside a conversion", lane);
      line += format_one(w, d, format.substr(k, end - k + 1), cursor, lane);
      k = end;
    }
    std::fwrite(line.data(), 1, line.size(), stdout);
    if (d.in->operands.size() == 3) {  // the return slot: characters printed
      const uint64_t slot = w.get(op(d, 0).elements.at(0), lane, d);
      const uint32_t n = static_cast<uint32_t>(line.size());
      std::memcpy(w.access(ptx::Space::local, slot, 4, true, lane, d), &n, 4);
    }
  });
  std::fflush(stdout);
  return Step::next;
}

}  // namespace

void decode_call(const ptx::Instruction& in, const Modifiers&, Decoded& d) {
  // call{.uni} {(ret),} function, (args);
  const ptx::Operand* callee = nullptr;
  for (const ptx::Operand& o : in.operands)
    if (o.kind == ptx::Operand::Kind::symbol && o.symbol.kind == ptx::Symbol::Kind::function) callee = &o;
  if (!callee) throw Unsupported{"indirect calls"};
  // The callee's name is only known through the module: check_call_target (from make_program)
  // refuses callees other than __assertfail and vprintf, and picks the handler (mode).
  const size_t at = static_cast<size_t>(callee - in.operands.data());
  if (at + 2 != in.operands.size() || in.operands.back().kind != ptx::Operand::Kind::vector ||
      (at == 1 && in.operands[0].kind != ptx::Operand::Kind::vector) || at > 1)
    throw Unsupported{"call forms other than call {(ret),} function, (args)"};
  d.run = run_assertfail;
}

void check_call_target(const ptx::Module& module, const ptx::Instruction& in, Decoded& d) {
  if (in.parts[0] != "call") return;
  for (const ptx::Operand& o : in.operands) {
    if (o.kind != ptx::Operand::Kind::symbol || o.symbol.kind != ptx::Symbol::Kind::function) continue;
    const std::string& name = module.functions[o.symbol.index].name;
    if (name == "vprintf") d.run = run_vprintf;
    else if (name != "__assertfail")
      throw EmulationError(module.origin + ":" + std::to_string(in.line) + ": instruction '" + in.opcode +
                           "' is not implemented by ptxemu: a call of " + name +
                           " (only __assertfail and vprintf are modelled; nvcc inlines device functions)");
  }
}

}  // namespace kgen::emu
