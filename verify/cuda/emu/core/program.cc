// A kernel made executable: every instruction decoded once, parameters laid out, and the
// shared and local variables given their addresses.
#include "core/decode.h"

namespace kgen::emu {

std::unique_ptr<Program> make_program(const ptx::Module& module, const ptx::Function& function,
                                      const std::vector<uint64_t>& variable_address, uint32_t module_shared_end,
                                      uint32_t extern_align) {
  auto p = std::make_unique<Program>();
  p->module = &module;
  p->function = &function;
  p->variable_address = variable_address;
  uint32_t offset = 0;
  for (const ptx::Param& param : function.params) {
    offset = (offset + param.align - 1) / param.align * param.align;
    p->param_offset.push_back(offset);
    offset += param.size;
  }
  p->param_bytes = offset;
  // Function-scope .shared variables (nvcc puts a kernel's static __shared__ arrays there)
  // follow the module's; .local ones sit in the thread's depot; the dynamic (.extern) shared
  // array comes after every static one, at the largest alignment its declarations ask.
  uint32_t shared = module_shared_end;
  uint64_t local = 0;
  for (const ptx::Variable& v : function.locals) {
    if (v.space == ptx::Space::shared) {
      shared = (shared + v.align - 1) / v.align * v.align;
      p->local_variable_address.push_back(shared);
      shared += static_cast<uint32_t>(v.size);
    } else {
      local = (local + v.align - 1) / v.align * v.align;
      p->local_variable_address.push_back(local);
      local += v.size;
    }
  }
  p->static_shared = shared - kSharedBase;
  p->dynamic_shared_address = (shared + extern_align - 1) / extern_align * extern_align;
  for (size_t k = 0; k < module.variables.size(); ++k)
    if (module.variables[k].space == ptx::Space::shared && module.variables[k].is_extern)
      p->variable_address[k] = p->dynamic_shared_address;
  p->code.reserve(function.body.size());
  for (const ptx::Instruction& in : function.body) {
    p->code.push_back(decode(in, module.origin));
    check_call_target(module, in, p->code.back());
  }
  return p;
}

}  // namespace kgen::emu
