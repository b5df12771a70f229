#!/usr/bin/env python3
"""Check a Mosaic TPU module against the REAL Mosaic dialect of the pinned jaxlib.

    check_real_mosaic.py MODULE.mlir --operands OPERANDS.json [--quiet] [--report FILE]

Exit 0 when every stage below passes; exit 1 (after printing what failed, with the MLIR
diagnostics) when one does; exit 2 on a usage error (missing file, malformed
OPERANDS.json). --report writes the outcome as JSON for the kernel's receipt
(docs/receipts.md): the stages, the jax/jaxlib versions, the failures.

Stages, in order (a failing stage stops the run):

  1. parse   -- the module text is parsed in an ir.Context where jaxlib's TPU dialect
                is registered and unregistered dialects are NOT allowed. This runs
                Mosaic's own parsers (custom assembly formats, #tpu.* attributes and
                enums, memory spaces) and, because MLIR verifies after parsing, every
                op verifier (tpu.matmul dimension numbers and types, vector.*, arith.*,
                ...). An unknown op, attribute or type is an error here.
  2. verify  -- the module verifier is run once more, explicitly.
  3. contract -- the kernel/OPERANDS.json contract. The dialect does not verify the
                func.func attributes Pallas hands to Mosaic (window_params,
                iteration_bounds, ...), and the tpu_custom_call never compares the
                kernel signature with its operands (that happens inside libtpu on a
                TPU). So this stage, which is kgen's own code (not Mosaic's), checks
                what Pallas' lowering guarantees: the kernel's arguments are
                (grid i32..., scalar prefetch SMEM memrefs, one VMEM block memref per
                input and output, scratch memrefs), with counts, shapes and dtypes as
                in OPERANDS.json; iteration_bounds == grid; the scalar_prefetch and
                scratch_operands attributes; one window_params entry per input/output
                with transform_indices naming a transform function of signature
                (grid i32..., scalar prefetch memrefs...) -> (i32 x array rank) and
                window_bounds equal to the block memref shape; the TPU block-shape
                rule (last two block dims divisible by 8 and 128, or equal to the
                array's).
  4. export  -- the module is wrapped with jax.experimental.mosaic.as_tpu_kernel
                (which runs Mosaic's serde pass: ops renamed to stable_mosaic.*,
                written as MLIR bytecode) and called inside
                jax.export.export(jax.jit(f), platforms=['tpu']) on ShapeDtypeStructs
                of the full operand shapes. The custom call's operands are
                (*scalar_prefetch, *inputs), its results the outputs.
  5. decode  -- the exported StableHLO must hold exactly one stablehlo.custom_call
                @tpu_custom_call with the expected operand and result types, whose
                backend_config JSON carries a base64 body that decodes to MLIR
                bytecode; the body is parsed, de-serialized with
                mosaic-serde{serialize=false} (what the TPU compiler does first),
                verified, and must print identically to the module of stage 1
                (apart from the stable_mosaic.version attribute serde adds).

OPERANDS.json (kgen writes one next to each module; unknown keys are errors):

    {
      "kernel": "splash_mha_fwd_no_residuals",   # optional: the kernel func's name
      "grid": [2, 4, 2],                         # iteration bounds
      "dimension_semantics": ["parallel", "arbitrary", "arbitrary"],   # optional
      "scalar_prefetch": [                       # SMEM, full arrays, in order
        {"name": "data_next", "shape": [1, 4, 2], "dtype": "int8"}
      ],
      "inputs": [                                # windowed (VMEM unless "memory_space"), in order
        {"name": "q", "shape": [2, 512, 128], "dtype": "bfloat16",
         "block": [1, 128, 128]}
      ],
      "outputs": [ ...same fields as inputs... ],
      # an input in "memory_space": "any" has no "block": the kernel copies from the whole
      # array itself (window_params {}), as a decode kernel's k and v (docs/decode.md)
      "scratch": [                               # kernel-only buffers, in order
        {"name": "m", "shape": [128, 128], "dtype": "float32",
         "memory_space": "vmem"}                 # "vmem" (default) or "smem"
      ]
    }

An optional "provenance" object (where kgen generated the file from) is not checked.
"shape" is always the full array shape (for scratch: the buffer shape); "block" the
window shape (size-1 entries for squeezed dims, as Pallas emits them). dtypes are
NumPy/JAX names (bfloat16, float32, float16, int32, int16, int8, uint32, uint16, uint8,
bool); their kernel-boundary MLIR types come from Pallas' own _dtype_to_ir_type (bool
crosses as i32, unsigned as signless). Lists that are empty may be omitted.

The script may also be imported: check(module_path, operands_path) returns a list of
failure messages (empty on success).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
from dataclasses import dataclass, field

# The checks never need an accelerator; keep JAX from probing for one.
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax._src.interpreters import mlir as jax_mlir  # noqa: E402
from jax._src.lib import tpu  # noqa: E402  (jaxlib.mosaic.python.tpu)
from jax._src.pallas.mosaic import lowering as pallas_mosaic_lowering  # noqa: E402
from jax.experimental import mosaic as jax_mosaic  # noqa: E402
from jaxlib.mlir import ir  # noqa: E402
from jaxlib.mlir import passmanager  # noqa: E402

MLIR_BYTECODE_MAGIC = b"ML\xefR"
SERDE_VERSION_ATTR = "stable_mosaic.version"
WINDOW_KEYS_REQUIRED = ("transform_indices", "window_bounds")
WINDOW_KEYS_OPTIONAL = ("pipeline_mode", "revisit_mode", "window_kind")
DIMENSION_SEMANTICS = ("parallel", "arbitrary", "core_parallel", "subcore_parallel")
DTYPES = ("bfloat16", "float32", "float16", "int32", "int16", "int8", "uint32",
          "uint16", "uint8", "bool")
# Scratch only: the DMA semaphores of a kernel that copies by hand (memory_space
# "semaphore_mem"), as Pallas's pltpu.SemaphoreType.DMA.
SEMAPHORE_DTYPE = "dma_semaphore"


class UsageError(Exception):
  """A missing file or a malformed OPERANDS.json (exit status 2)."""


class CheckFailed(Exception):
  """A stage failed; the message says which and why (exit status 1)."""


# ---------------------------------------------------------------------------------
# OPERANDS.json


@dataclass
class Operand:
  role: str  # scalar_prefetch | input | output | scratch
  index: int
  name: str
  shape: tuple[int, ...]
  dtype: str
  block: tuple[int, ...] | None = None
  memory_space: str = "vmem"

  def label(self) -> str:
    return f"{self.role} #{self.index} '{self.name}'"


@dataclass
class Operands:
  kernel: str | None
  grid: tuple[int, ...]
  dimension_semantics: tuple[str, ...] | None
  scalar_prefetch: list[Operand] = field(default_factory=list)
  inputs: list[Operand] = field(default_factory=list)
  outputs: list[Operand] = field(default_factory=list)
  scratch: list[Operand] = field(default_factory=list)

  def windowed(self) -> list[Operand]:
    return self.inputs + self.outputs


def _int_list(value, what: str, *, allow_empty: bool = False) -> tuple[int, ...]:
  if (not isinstance(value, list) or (not value and not allow_empty) or
      not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value)):
    raise UsageError(f"{what} must be a non-empty list of positive integers, got "
                     f"{json.dumps(value)}")
  return tuple(value)


def load_operands(path: str) -> Operands:
  try:
    with open(path, encoding="utf-8") as f:
      doc = json.load(f)
  except OSError as e:
    raise UsageError(f"cannot read {path}: {e}") from e
  except json.JSONDecodeError as e:
    raise UsageError(f"{path} is not JSON: {e}") from e
  if not isinstance(doc, dict):
    raise UsageError(f"{path}: the top level must be an object")
  known = {"kernel", "grid", "dimension_semantics", "scalar_prefetch", "inputs",
           "outputs", "scratch", "provenance"}
  unknown = sorted(set(doc) - known)
  if unknown:
    raise UsageError(f"{path}: unknown keys {unknown} (known: {sorted(known)})")
  kernel = doc.get("kernel")
  if kernel is not None and (not isinstance(kernel, str) or not kernel):
    raise UsageError(f"{path}: 'kernel' must be a non-empty string")
  if "grid" not in doc:
    raise UsageError(f"{path}: 'grid' is required")
  grid = _int_list(doc["grid"], f"{path}: 'grid'")
  sems = doc.get("dimension_semantics")
  if sems is not None:
    if (not isinstance(sems, list) or
        not all(isinstance(s, str) and s in DIMENSION_SEMANTICS for s in sems)):
      raise UsageError(f"{path}: 'dimension_semantics' must list entries of "
                       f"{list(DIMENSION_SEMANTICS)}")
    sems = tuple(sems)

  def entries(key: str, role: str, keys: set[str], required: set[str]) -> list[Operand]:
    items = doc.get(key, [])
    if not isinstance(items, list):
      raise UsageError(f"{path}: '{key}' must be a list")
    out = []
    for i, item in enumerate(items):
      where = f"{path}: {key}[{i}]"
      if not isinstance(item, dict):
        raise UsageError(f"{where} must be an object")
      bad = sorted(set(item) - keys)
      if bad:
        raise UsageError(f"{where}: unknown keys {bad} (known: {sorted(keys)})")
      missing = sorted(required - set(item))
      if missing:
        raise UsageError(f"{where}: missing keys {missing}")
      if not isinstance(item["name"], str) or not item["name"]:
        raise UsageError(f"{where}: 'name' must be a non-empty string")
      semaphore = role == "scratch" and item.get("memory_space") == "semaphore_mem"
      if semaphore != (item["dtype"] == SEMAPHORE_DTYPE):
        raise UsageError(f"{where}: dtype {SEMAPHORE_DTYPE!r} goes with memory_space "
                         "'semaphore_mem' (scratch only), and only there")
      if not semaphore and item["dtype"] not in DTYPES:
        raise UsageError(f"{where}: dtype {item['dtype']!r} is not one of {list(DTYPES)}")
      op = Operand(role=role, index=i, name=item["name"],
                   shape=_int_list(item["shape"], f"{where}: 'shape'"),
                   dtype=item["dtype"])
      if "block" in item:
        op.block = _int_list(item["block"], f"{where}: 'block'")
        if len(op.block) != len(op.shape):
          raise UsageError(f"{where}: 'block' {list(op.block)} and 'shape' "
                           f"{list(op.shape)} have different ranks")
      if "memory_space" in item:
        # "any": an input the kernel copies itself (no window, no block); "semaphore_mem":
        # scratch semaphores.
        spaces = {"input": ("vmem", "smem", "any"), "scratch": ("vmem", "smem", "semaphore_mem")}
        if item["memory_space"] not in spaces.get(role, ("vmem", "smem")):
          raise UsageError(f"{where}: memory_space must be one of {list(spaces.get(role, ('vmem', 'smem')))}")
        op.memory_space = item["memory_space"]
      if role == "input" and (op.memory_space == "any") == (op.block is not None):
        raise UsageError(f"{where}: an input has a 'block' exactly when it is not in memory_space 'any'")
      out.append(op)
    return out

  base = {"name", "shape", "dtype"}
  return Operands(
      kernel=kernel, grid=grid, dimension_semantics=sems,
      scalar_prefetch=entries("scalar_prefetch", "scalar_prefetch", base, base),
      inputs=entries("inputs", "input", base | {"block", "memory_space"}, base),
      outputs=entries("outputs", "output", base | {"block"}, base | {"block"}),
      scratch=entries("scratch", "scratch", base | {"memory_space"}, base))


# ---------------------------------------------------------------------------------
# MLIR helpers


def make_context() -> ir.Context:
  """An ir.Context like the one jax's tpu_custom_call uses, with the TPU dialect."""
  ctx = jax_mlir.make_ir_context()
  tpu.register_dialect(ctx)
  ctx.allow_unregistered_dialects = False
  return ctx


def format_mlir_error(e: ir.MLIRError) -> str:
  lines = [e.message]

  def add(diag, indent):
    lines.append(f"{indent}{diag.location}: {diag.message}")
    for note in diag.notes:
      add(note, indent + "  note: ")

  for diag in e.error_diagnostics:
    add(diag, "  ")
  return "\n".join(lines)


def boundary_type(dtype: str) -> ir.Type:
  """The MLIR element type Pallas gives a kernel-boundary operand of this dtype."""
  # pylint: disable=protected-access
  return pallas_mosaic_lowering._dtype_to_ir_type(jnp.dtype(dtype),
                                                  is_kernel_boundary=True)


def memref_type(shape, dtype: str, memory_space: str) -> ir.Type:
  element = (ir.Type.parse("!tpu.dma_semaphore") if dtype == SEMAPHORE_DTYPE
             else boundary_type(dtype))
  return ir.MemRefType.get(list(shape), element,
                           memory_space=ir.Attribute.parse(
                               f"#tpu.memory_space<{memory_space}>"))


def func_name(func: ir.Operation) -> str:
  return ir.StringAttr(func.attributes["sym_name"]).value


def func_type(func: ir.Operation) -> ir.FunctionType:
  return ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)


# ---------------------------------------------------------------------------------
# Stage 3: the kernel / OPERANDS.json contract (kgen's code, not Mosaic's)


def check_contract(module: ir.Module, spec: Operands) -> list[str]:
  errors: list[str] = []
  funcs = {}
  for op in module.body.operations:
    op = op.operation
    if op.name == "func.func":
      funcs[func_name(op)] = op
  kernels = [f for f in funcs.values() if "iteration_bounds" in f.attributes]
  if len(kernels) != 1:
    return [f"expected exactly one func.func with an iteration_bounds attribute (the "
            f"kernel), found {len(kernels)}: {[func_name(k) for k in kernels]}"]
  kernel = kernels[0]
  kname = func_name(kernel)
  where = f"kernel @{kname} ({kernel.location})"
  if spec.kernel is not None and spec.kernel != kname:
    errors.append(f"{where}: OPERANDS.json names the kernel '{spec.kernel}'")

  def attr(name, cls):
    if name not in kernel.attributes:
      errors.append(f"{where}: missing attribute '{name}'")
      return None
    try:
      return cls(kernel.attributes[name])
    except (ValueError, TypeError):
      errors.append(f"{where}: attribute '{name}' = {kernel.attributes[name]} is not "
                    f"a {cls.__name__}")
      return None

  bounds = attr("iteration_bounds", ir.DenseI64ArrayAttr)
  sems = attr("dimension_semantics", ir.ArrayAttr)
  n_prefetch = attr("scalar_prefetch", ir.IntegerAttr)
  n_scratch = attr("scratch_operands", ir.IntegerAttr)
  windows = attr("window_params", ir.ArrayAttr)
  if "tpu.core_type" in kernel.attributes:
    core = str(kernel.attributes["tpu.core_type"])
    if core != "#tpu.core_type<tc>":
      errors.append(f"{where}: tpu.core_type is {core}, kgen emits TensorCore "
                    f"kernels (#tpu.core_type<tc>)")

  g = len(spec.grid)
  if bounds is not None and tuple(bounds) != spec.grid:
    errors.append(f"{where}: iteration_bounds {list(bounds)} != OPERANDS.json grid "
                  f"{list(spec.grid)}")
  if sems is not None:
    sem_strs = [str(s) for s in sems]
    if len(sem_strs) != g:
      errors.append(f"{where}: dimension_semantics has {len(sem_strs)} entries, the "
                    f"grid has {g} dimensions")
    for s in sem_strs:
      if not s.startswith("#tpu.dimension_semantics<"):
        errors.append(f"{where}: dimension_semantics entry {s} is not a "
                      f"#tpu.dimension_semantics attribute")
    if spec.dimension_semantics is not None:
      want = [f"#tpu.dimension_semantics<{s}>" for s in spec.dimension_semantics]
      if sem_strs != want:
        errors.append(f"{where}: dimension_semantics {sem_strs} != OPERANDS.json "
                      f"{want}")
  if n_prefetch is not None and n_prefetch.value != len(spec.scalar_prefetch):
    errors.append(f"{where}: scalar_prefetch = {n_prefetch.value}, OPERANDS.json "
                  f"lists {len(spec.scalar_prefetch)} scalar prefetch operands")
  if n_scratch is not None and n_scratch.value != len(spec.scratch):
    errors.append(f"{where}: scratch_operands = {n_scratch.value}, OPERANDS.json "
                  f"lists {len(spec.scratch)} scratch operands")

  # The kernel signature.
  ftype = func_type(kernel)
  args = list(ftype.inputs)
  if ftype.results:
    errors.append(f"{where}: the kernel returns {len(ftype.results)} values; Mosaic "
                  f"kernels return nothing (outputs are memref arguments)")
  counts = [g, len(spec.scalar_prefetch), len(spec.inputs), len(spec.outputs),
            len(spec.scratch)]
  if len(args) != sum(counts):
    errors.append(
        f"{where}: the kernel has {len(args)} arguments, OPERANDS.json describes "
        f"{counts[0]} grid indices + {counts[1]} scalar prefetch + {counts[2]} inputs "
        f"+ {counts[3]} outputs + {counts[4]} scratch = {sum(counts)}")
    return errors  # argument positions are meaningless from here on
  i32 = ir.IntegerType.get_signless(32)
  for k in range(g):
    if args[k] != i32:
      errors.append(f"{where}: argument #{k} (grid index {k}) is {args[k]}, not i32")
  pos = g
  prefetch_types = []
  for op in spec.scalar_prefetch:
    want = memref_type(op.shape, op.dtype, "smem")
    prefetch_types.append(want)
    if args[pos] != want:
      errors.append(f"{where}: argument #{pos} ({op.label()}) is {args[pos]}, "
                    f"OPERANDS.json implies {want}")
    pos += 1
  window_args = []
  for op in spec.windowed():
    # An input in memory_space "any" is the whole array, which the kernel copies itself.
    want = memref_type(op.block or op.shape, op.dtype, op.memory_space)
    window_args.append(args[pos])
    if args[pos] != want:
      errors.append(f"{where}: argument #{pos} ({op.label()}) is {args[pos]}, "
                    f"OPERANDS.json implies the {'array' if op.block is None else 'block'} "
                    f"memref {want}")
    pos += 1
  for op in spec.scratch:
    want = memref_type(op.shape, op.dtype, op.memory_space)
    if args[pos] != want:
      errors.append(f"{where}: argument #{pos} ({op.label()}) is {args[pos]}, "
                    f"OPERANDS.json implies {want}")
    pos += 1

  # window_params and the transform functions.
  if windows is None:
    return errors
  if len(windows) != len(spec.windowed()):
    errors.append(f"{where}: window_params has {len(windows)} entries, OPERANDS.json "
                  f"lists {len(spec.inputs)} inputs + {len(spec.outputs)} outputs")
    return errors
  for k, (op, win) in enumerate(zip(spec.windowed(), windows)):
    wwhere = f"{where}: window_params[{k}] ({op.label()})"
    try:
      win = ir.DictAttr(win)
    except ValueError:
      errors.append(f"{wwhere} is {win}, not a dictionary")
      continue
    keys = [win[i].name for i in range(len(win))]
    if op.block is None:  # memory_space "any": no window, as Pallas writes it ({})
      if keys:
        errors.append(f"{wwhere}: an input in memory_space 'any' has no window, found {keys}")
      continue
    for key in WINDOW_KEYS_REQUIRED:
      if key not in keys:
        errors.append(f"{wwhere}: missing '{key}'")
    for key in keys:
      if key not in WINDOW_KEYS_REQUIRED + WINDOW_KEYS_OPTIONAL:
        errors.append(f"{wwhere}: unknown key '{key}'")
    if "pipeline_mode" in keys and not str(win["pipeline_mode"]).startswith(
        "#tpu.pipeline_mode<"):
      errors.append(f"{wwhere}: pipeline_mode {win['pipeline_mode']} is not a "
                    f"#tpu.pipeline_mode attribute")
    if "window_bounds" in keys:
      try:
        wb = tuple(ir.DenseI64ArrayAttr(win["window_bounds"]))
      except ValueError:
        errors.append(f"{wwhere}: window_bounds {win['window_bounds']} is not an "
                      f"array<i64: ...>")
        wb = None
      if wb is not None:
        if wb != op.block:
          errors.append(f"{wwhere}: window_bounds {list(wb)} != OPERANDS.json block "
                        f"{list(op.block)}")
        arg_shape = _memref_shape(window_args[k])
        if arg_shape is not None and arg_shape != wb:
          errors.append(f"{wwhere}: window_bounds {list(wb)} != the kernel's block "
                        f"memref shape {list(arg_shape)}")
    errors.extend(_block_rule(wwhere, op))
    if "transform_indices" not in keys:
      continue
    try:
      target = ir.FlatSymbolRefAttr(win["transform_indices"]).value
    except ValueError:
      errors.append(f"{wwhere}: transform_indices {win['transform_indices']} is not "
                    f"a symbol reference")
      continue
    if target not in funcs:
      errors.append(f"{wwhere}: transform_indices names @{target}, which is not a "
                    f"func.func of the module")
      continue
    ttype = func_type(funcs[target])
    want_inputs = [i32] * g + prefetch_types
    if list(ttype.inputs) != want_inputs:
      errors.append(f"{wwhere}: @{target} takes ({', '.join(map(str, ttype.inputs))}), "
                    f"expected (grid i32 x {g}, scalar prefetch memrefs) = "
                    f"({', '.join(map(str, want_inputs))})")
    want_results = [i32] * len(op.shape)
    if list(ttype.results) != want_results:
      errors.append(f"{wwhere}: @{target} returns "
                    f"({', '.join(map(str, ttype.results))}), expected one i32 block "
                    f"index per array dimension ({len(op.shape)})")
  return errors


def _memref_shape(t: ir.Type) -> tuple[int, ...] | None:
  try:
    return tuple(ir.MemRefType(t).shape)
  except ValueError:
    return None


def _block_rule(where: str, op: Operand) -> list[str]:
  """Pallas TPU's block-shape rule (lowering.py, _check_block_mappings)."""
  errors = []
  for d, (b, s) in enumerate(zip(op.block, op.shape)):
    if b > s:
      errors.append(f"{where}: block dim {d} is {b}, larger than the array's {s}")
  b0, s0 = op.block[-1], op.shape[-1]
  if len(op.block) >= 2:
    b1, s1 = op.block[-2], op.shape[-2]
    if not ((b0 == s0 or b0 % 128 == 0) and (b1 == s1 or b1 % 8 == 0)):
      errors.append(f"{where}: block {list(op.block)} of array {list(op.shape)}: the "
                    f"last two block dims must be divisible by 8 and 128 or equal "
                    f"the array's")
  else:
    bits = 32 if op.dtype == "bool" else jnp.dtype(op.dtype).itemsize * 8
    if not (b0 == s0 or b0 % 1024 == 0 or
            (b0 >= 128 * (32 // bits) and (b0 & (b0 - 1)) == 0)):
      errors.append(f"{where}: rank-1 block {b0} of array {s0}: must equal the array, "
                    f"be a multiple of 1024, or a power of 2 >= {128 * (32 // bits)}")
  return errors


# ---------------------------------------------------------------------------------
# Stages 4 and 5: as_tpu_kernel, jax.export, and decoding the custom call


def _sds(op: Operand) -> jax.ShapeDtypeStruct:
  return jax.ShapeDtypeStruct(op.shape, jnp.dtype(op.dtype))


def export_kernel(module: ir.Module, spec: Operands, kernel_name: str):
  out_type = tuple(_sds(o) for o in spec.outputs)
  kernel = jax_mosaic.as_tpu_kernel(module, out_type, kernel_name=kernel_name)

  def f(*args):
    return kernel(*args)

  args = [_sds(o) for o in spec.scalar_prefetch + spec.inputs]
  return jax.export.export(jax.jit(f), platforms=["tpu"])(*args)


def decode_custom_call(exported, spec: Operands, original_asm: str) -> str:
  """Returns a one-line summary; raises CheckFailed."""
  ctx = jax_mlir.make_ir_context()
  with ctx, ir.Location.unknown():
    hlo = ir.Module.parse(exported.mlir_module())
    calls = []

    def visit(op):
      if (op.name == "stablehlo.custom_call" and
          ir.StringAttr(op.attributes["call_target_name"]).value == "tpu_custom_call"):
        calls.append(op)
      return ir.WalkResult.ADVANCE

    hlo.operation.walk(visit)
    if len(calls) != 1:
      raise CheckFailed(f"decode: the exported module has {len(calls)} "
                        f"stablehlo.custom_call @tpu_custom_call, expected 1")
    call = calls[0]

    def tensor(op):
      return str(ir.RankedTensorType.get(list(op.shape),
                                         jax_mlir.dtype_to_ir_type(jnp.dtype(op.dtype))))

    got_in = [str(v.type) for v in call.operands]
    want_in = [tensor(o) for o in spec.scalar_prefetch + spec.inputs]
    got_out = [str(r.type) for r in call.results]
    want_out = [tensor(o) for o in spec.outputs]
    if got_in != want_in or got_out != want_out:
      raise CheckFailed(f"decode: tpu_custom_call is ({', '.join(got_in)}) -> "
                        f"({', '.join(got_out)}), expected ({', '.join(want_in)}) -> "
                        f"({', '.join(want_out)})")
    config_text = ir.StringAttr(call.attributes["backend_config"]).value
  try:
    config = json.loads(config_text)["custom_call_config"]
    body = base64.b64decode(config["body"], validate=True)
  except (ValueError, KeyError, TypeError) as e:
    raise CheckFailed(f"decode: backend_config has no decodable "
                      f"custom_call_config.body: {e}") from e
  if not body.startswith(MLIR_BYTECODE_MAGIC):
    raise CheckFailed(f"decode: the body is not MLIR bytecode (starts {body[:8]!r})")

  ctx = make_context()
  with ctx, ir.Location.unknown():
    ctx.allow_unregistered_dialects = True  # stable_mosaic.* until de-serialized
    try:
      decoded = ir.Module.parse(body)
      serde_version = decoded.operation.attributes[SERDE_VERSION_ATTR]
      passmanager.PassManager.parse(
          "builtin.module(mosaic-serde{serialize=false})").run(decoded.operation)
      ctx.allow_unregistered_dialects = False
      decoded.operation.verify()
    except ir.MLIRError as e:
      raise CheckFailed("decode: the custom call body does not load back:\n" +
                        format_mlir_error(e)) from e
    except KeyError as e:
      raise CheckFailed(f"decode: the body has no {SERDE_VERSION_ATTR} attribute") from e
    if SERDE_VERSION_ATTR in decoded.operation.attributes:
      del decoded.operation.attributes[SERDE_VERSION_ATTR]
    round_trip = decoded.operation.get_asm(enable_debug_info=False)
  if round_trip != original_asm:
    import difflib  # pylint: disable=import-outside-toplevel
    diff = "\n".join(list(difflib.unified_diff(
        original_asm.splitlines(), round_trip.splitlines(), "parsed", "decoded",
        lineterm=""))[:40])
    raise CheckFailed(f"decode: the decoded body differs from the module:\n{diff}")
  return (f"tpu_custom_call ({len(call.operands)} operands -> {len(call.results)} "
          f"results), body {len(body)} bytes of MLIR bytecode, serde version "
          f"{serde_version}, config {sorted(k for k in config if k != 'body')}")


# ---------------------------------------------------------------------------------


def check(module_path: str, operands_path: str, log=None) -> list[str]:
  """Runs all stages; returns failure messages (empty on success)."""
  log = log or (lambda _msg: None)
  spec = load_operands(operands_path)
  if not os.path.isfile(module_path):
    raise UsageError(f"cannot read {module_path}")
  ctx = make_context()
  with ctx, ir.Location.unknown():
    try:
      module = ir.Module.parseFile(module_path)
    except ir.MLIRError as e:
      return ["parse: the real Mosaic dialect rejects the module:\n" +
              format_mlir_error(e)]
    log("parse: ok (jaxlib TPU dialect registered, unregistered dialects refused)")
    try:
      module.operation.verify()
    except ir.MLIRError as e:
      return ["verify: the module verifier fails:\n" + format_mlir_error(e)]
    log("verify: ok")
    errors = check_contract(module, spec)
    if errors:
      return ["contract: " + e for e in errors]
    log("contract: ok")
    original_asm = module.operation.get_asm(enable_debug_info=False)
    kernel_name = next(func_name(op.operation) for op in module.body.operations
                       if op.operation.name == "func.func" and
                       "iteration_bounds" in op.operation.attributes)
    try:
      exported = export_kernel(module, spec, kernel_name)
    except ir.MLIRError as e:
      return ["export: as_tpu_kernel/jax.export failed:\n" + format_mlir_error(e)]
    except Exception as e:  # pylint: disable=broad-except
      return [f"export: as_tpu_kernel/jax.export failed: {type(e).__name__}: {e}"]
  log(f"export: ok (jax {jax.__version__}, platforms=['tpu'])")
  try:
    log("decode: ok: " + decode_custom_call(exported, spec, original_asm))
  except CheckFailed as e:
    return [str(e)]
  return []


STAGES = ("parse", "verify", "contract", "export", "decode")


def write_report(path: str, errors: list[str]) -> None:
  """The check's facts as JSON (no times: a rerun writes the same bytes)."""
  import jaxlib  # pylint: disable=import-outside-toplevel
  report = {"checker": "tests/mosaic_dialect/check_real_mosaic.py: jaxlib's real Mosaic TPU "
                       "dialect, OPERANDS.json contract, jax.export for TPU, custom-call decode",
            "jax": jax.__version__, "jaxlib": jaxlib.__version__, "stages": list(STAGES),
            "errors": errors, "passed": not errors}
  with open(path, "w", encoding="utf-8") as f:
    json.dump(report, f, indent=2)
    f.write("\n")


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(
      description="Check a Mosaic module with the real TPU dialect of the pinned "
                  "jaxlib and export it as a tpu_custom_call.")
  parser.add_argument("module", help="Mosaic MLIR text (.mlir)")
  parser.add_argument("--operands", required=True, help="OPERANDS.json")
  parser.add_argument("--quiet", action="store_true", help="print only failures")
  parser.add_argument("--report", help="write the outcome as JSON here (for receipts)")
  args = parser.parse_args(argv)
  log = (lambda _m: None) if args.quiet else (lambda m: print(m, flush=True))
  try:
    errors = check(args.module, args.operands, log)
  except UsageError as e:
    print(f"check_real_mosaic: usage error: {e}", file=sys.stderr)
    return 2
  if args.report:
    write_report(args.report, errors)
  if errors:
    print(f"check_real_mosaic: FAIL {args.module}", file=sys.stderr)
    for e in errors:
      print(e, file=sys.stderr)
    return 1
  if not args.quiet:
    print(f"check_real_mosaic: OK {args.module}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
