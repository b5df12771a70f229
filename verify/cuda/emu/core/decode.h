// Opcode decoding: each instruction family owns the mnemonics it implements (one file each),
// reads the modifiers it understands and refuses the rest, so an instruction nobody implements
// is an error naming the opcode and the PTX line, never a silent skip.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/machine.h"

namespace kgen::emu {

// The opcode's suffixes sorted into what most families share; `words` keeps the others in
// order for the family to interpret.
struct Modifiers {
  std::vector<Type> types;
  Rounding rounding = Rounding::none;
  bool ftz = false, sat = false, approx = false, full = false;
  ptx::Space space = ptx::Space::none;
  uint8_t vector = 1;
  std::vector<std::string> words;

  bool has(std::string_view word) const;
  Type last_type() const { return types.empty() ? Type::none : types.back(); }
};
Modifiers split_modifiers(const ptx::Instruction& in);

// Thrown by decoders for an unsupported form: decode() adds opcode and line.
struct Unsupported {
  std::string why;
};

// A family: fills `d` (handler and fields) for the mnemonics it owns.
using FamilyDecoder = void (*)(const ptx::Instruction&, const Modifiers&, Decoded&);

void decode_arith(const ptx::Instruction&, const Modifiers&, Decoded&);      // exec_arith.cc
void decode_bits(const ptx::Instruction&, const Modifiers&, Decoded&);       // exec_bits.cc
void decode_special_function(const ptx::Instruction&, const Modifiers&, Decoded&);  // exec_special_function.cc
void decode_compare(const ptx::Instruction&, const Modifiers&, Decoded&);    // exec_compare.cc
void decode_convert(const ptx::Instruction&, const Modifiers&, Decoded&);    // exec_convert.cc
void decode_move(const ptx::Instruction&, const Modifiers&, Decoded&);       // exec_move.cc
void decode_memory(const ptx::Instruction&, const Modifiers&, Decoded&);     // exec_memory.cc
void decode_atomic(const ptx::Instruction&, const Modifiers&, Decoded&);     // exec_memory.cc
void decode_control(const ptx::Instruction&, const Modifiers&, Decoded&);    // exec_control.cc
void decode_warp(const ptx::Instruction&, const Modifiers&, Decoded&);       // exec_warp.cc
void decode_barrier(const ptx::Instruction&, const Modifiers&, Decoded&);    // exec_barrier.cc
void decode_mbarrier(const ptx::Instruction&, const Modifiers&, Decoded&);   // exec_mbarrier.cc
void decode_fence(const ptx::Instruction&, const Modifiers&, Decoded&);      // exec_fence.cc
void decode_bulk(const ptx::Instruction&, const Modifiers&, Decoded&);       // exec_bulk.cc
void decode_wgmma(const ptx::Instruction&, const Modifiers&, Decoded&);      // exec_wgmma.cc
void decode_matrix(const ptx::Instruction&, const Modifiers&, Decoded&);     // exec_matrix.cc
void decode_tcgen05(const ptx::Instruction&, const Modifiers&, Decoded&);    // exec_tcgen05.cc
void decode_call(const ptx::Instruction&, const Modifiers&, Decoded&);       // exec_call.cc
void decode_cp_async(const ptx::Instruction&, const Modifiers&, Decoded&);   // exec_cp_async.cc (non-bulk cp.async)
void decode_cluster(const ptx::Instruction&, const Modifiers&, Decoded&);    // exec_cluster.cc (mapa, barrier.cluster)
void decode_cluster_launch(const ptx::Instruction&, const Modifiers&, Decoded&);  // exec_cluster_launch.cc
// For a call (decoded as one of __assertfail): picks the handler the callee's name asks for
// (the name needs the module), refusing callees other than __assertfail and vprintf.
void check_call_target(const ptx::Module& module, const ptx::Instruction& in, Decoded& d);  // exec_call.cc

// The whole decode: family lookup by mnemonic, then the family.
Decoded decode(const ptx::Instruction& in, const std::string& origin);

}  // namespace kgen::emu
