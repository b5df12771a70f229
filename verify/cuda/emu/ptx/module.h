// A parsed PTX module: what nvcc 13 emits for a .cu file, as the executor needs it. The
// parser resolves every name (registers to slots, labels to instruction indices, symbols to
// module variables or kernel parameters) so that executing an instruction never looks a name
// up; the executor decodes opcodes (core/decode.cc).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace kgen::emu::ptx {

// Special registers (%tid.x, ...), read by mov.
enum class Special : uint8_t {
  tid_x, tid_y, tid_z, ntid_x, ntid_y, ntid_z, ctaid_x, ctaid_y, ctaid_z, nctaid_x, nctaid_y, nctaid_z,
  laneid, warpid, nwarpid, smid, nsmid, gridid, clock, clock64, globaltimer, lanemask_eq, lanemask_lt,
  lanemask_le, lanemask_gt, lanemask_ge, dynamic_smem_size, total_smem_size, cluster_ctarank,
  cluster_nctarank, clusterid_x, clusterid_y, clusterid_z, nclusterid_x, nclusterid_y, nclusterid_z,
  cluster_ctaid_x, cluster_ctaid_y, cluster_ctaid_z, cluster_nctaid_x, cluster_nctaid_y, cluster_nctaid_z,
  is_explicit_cluster,
};

enum class Space : uint8_t { none, global, shared, local, param, const_ };

// A name an operand refers to that is not a register: a module variable or a kernel parameter.
struct Symbol {
  // The index of a variable declared in a function body (Function::locals) carries this bit.
  static constexpr uint32_t kFunctionLocal = 0x80000000u;
  enum class Kind : uint8_t { variable, param, function };
  Kind kind = Kind::variable;
  uint32_t index = 0;  // into Module::variables, Function::params or Module::functions
};

struct Operand {
  enum class Kind : uint8_t {
    none,
    reg,      // reg (and, for `%r|%p`, reg2); `negate` for `!%p`
    imm,      // integer or float bits (bits), `is_float` for 0f/0d forms
    special,  // special register
    symbol,   // the address of a symbol (mov %rd, sym)
    address,  // [base + offset]: base_kind reg, symbol or none (absolute)
    vector,   // {a, b, ...}: elements
    tuple,    // [a, {b, c}]: a bracket holding several operands (tensor-map coordinates)
    sink,     // _
    label,    // a branch target: target (instruction index)
  };
  Kind kind = Kind::none;
  bool negate = false;
  bool is_float = false;
  uint32_t reg = 0;
  int32_t reg2 = -1;
  uint64_t bits = 0;    // imm bits; address offset (signed); label target
  Special special{};
  Symbol symbol{};
  Kind base_kind = Kind::none;  // for address: reg, symbol or none
  std::vector<Operand> elements;  // vector and tuple
};

struct Instruction {
  std::string opcode;              // "mbarrier.try_wait.parity.shared::cta.b64"
  std::vector<std::string> parts;  // the opcode split at '.': {"mbarrier", "try_wait", ...}
  int32_t guard = -1;              // predicate register slot, or -1
  bool guard_negated = false;
  std::vector<Operand> operands;
  uint32_t line = 0;               // line in the PTX text
};

struct Variable {
  std::string name;
  Space space = Space::none;
  uint32_t align = 1;
  uint64_t size = 0;          // bytes; 0 with is_extern: the dynamic shared array
  bool is_extern = false;
  std::vector<uint8_t> init;  // initial bytes (global/const); empty: zero
  bool call_slot = false;     // a .param declared in a body (a call's argument), kept as .local
};

struct Param {
  std::string name;
  uint32_t size = 0;
  uint32_t align = 1;
};

struct Function {
  std::string name;
  bool is_entry = false;
  std::vector<Param> params;
  std::vector<Param> returns;  // .func return parameters
  uint32_t register_slots = 0;
  uint32_t max_threads[3] = {0, 0, 0};  // .maxntid
  uint32_t cluster_dims[3] = {0, 0, 0};  // .reqnctapercluster (__cluster_dims__); 0: none declared
  bool explicit_cluster = false;         // .explicitcluster: must be launched as a cluster
  uint64_t local_bytes = 0;             // .local depot arrays, per thread
  std::vector<Variable> locals;         // .local/.shared declared in the body
  std::vector<Instruction> body;
  // Register slot -> its declared name, for reports.
  std::vector<std::string> register_names;
};

struct Module {
  std::string origin;  // what reports call it (a file name)
  std::string version;
  std::string target;  // "sm_90a"
  std::vector<Variable> variables;
  std::vector<Function> functions;
  std::unordered_map<std::string, uint32_t> function_index;
};

// Parses nvcc's PTX. Throws EmulationError ("ORIGIN:LINE: message") for anything it does not
// understand: it never guesses.
Module parse_module(const std::string& text, const std::string& origin);

}  // namespace kgen::emu::ptx
