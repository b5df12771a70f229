"""One generated tpu kernel (the forward, dq, dkv, decode or decode combine) as a JAX function
of its inputs: a
`tpu_custom_call` on TPU, kgen's CPU executor on the CPU, chosen by
`jax.lax.platform_dependent` when the program is lowered.

Everything a call needs was written by `make gen` beside the kernel (docs/python.md):
`<kernel>.operands.json` (operand order, shapes, dtypes), `<kernel>.plan.json` (a forward
or backward kernel's block plan: the scalar-prefetch tables and the partial mask blocks;
nothing is planned at call time; a decode kernel's scalar prefetch, kv_lens and the page
table, are the caller's run-time arrays instead) and `<kernel>.custom_call.json` (the tpu_custom_call backend config, with the sha256 of
the `.mlir` it was serialized from)."""
from __future__ import annotations

import hashlib
import json

import jax
import jax.numpy as jnp
import numpy as np

from kgen.errors import GeneratedFolderError
from kgen.generated_folder import GeneratedFolder
from kgen.jax import cpu_executor


def _tables(plan: dict | None) -> dict[str, np.ndarray]:
  """The plan's arrays under the kernel operands' names, as int32 (none for a decode plan,
  whose kernels take kv_lens and the page table from the caller, or a kernel without one)."""
  if plan is None or "data_next" not in plan:
    return {}
  tables = {name: np.asarray(plan[name], np.int32) for name in ("data_next", "block_mask")}
  if plan.get("mask_next") is not None:
    tables["mask_next"] = np.asarray(plan["mask_next"], np.int32)
    # Rows of '0'/'1' characters, one string per row of a block (already transposed for dkv).
    tables["partial_mask_blocks"] = np.asarray(
        [[[bit == "1" for bit in row] for row in block] for block in plan["partial_blocks"]],
        np.int32)
  return tables


def block_ranges(ids, block: int):
  """[batch, len] segment ids -> int32 [batch, 2, ceil(len / block)]: row 0 each block's
  smallest id, row 1 its largest, the tpu forward's q_block_ranges and kv_block_ranges
  (docs/tpu-kernel.md); a partial last block reduces over the positions it has (its last id
  repeated to fill it, which changes neither)."""
  ids = jnp.asarray(ids, jnp.int32)
  batch, length = ids.shape
  blocks = -(-length // block)
  filled = jnp.pad(ids, ((0, 0), (0, blocks * block - length)), mode="edge")
  per_block = filled.reshape(batch, blocks, block)
  return jnp.stack([per_block.min(axis=2), per_block.max(axis=2)], axis=1)


class KernelCall:
  """Calls one kernel: `kernel_call(q=..., k=..., ...)` returns its outputs by name."""

  def __init__(self, folder: GeneratedFolder, pass_: str = ""):
    mlir = folder.file("tpu", "kernel", pass_)
    self.sha256 = hashlib.sha256(mlir.read_bytes()).hexdigest()
    self.kernel_path = str(mlir.resolve())
    operands = json.loads(folder.file("tpu", "operands", pass_).read_text())
    custom_call = json.loads(folder.file("tpu", "custom_call", pass_).read_text())
    if custom_call.get("kernel_sha256") != self.sha256:
      raise GeneratedFolderError(
          f"{folder.file('tpu', 'custom_call', pass_)} was written for another {mlir.name} "
          f"(sha256 {custom_call.get('kernel_sha256')}, the file has {self.sha256}); "
          f"regenerate: {folder.regenerate}")
    self.backend_config: str = custom_call["backend_config"]
    plan = (json.loads(folder.file("tpu", "plan", pass_).read_text())
            if folder.has("tpu", "plan", pass_) else None)
    tables = _tables(plan)
    for op in operands["scalar_prefetch"] + operands["inputs"]:
      if op["name"] in tables and list(tables[op["name"]].shape) != op["shape"]:
        raise GeneratedFolderError(
            f"{folder.path}: the plan's {op['name']} has shape {list(tables[op['name']].shape)}, "
            f"the kernel takes {op['shape']}; regenerate: {folder.regenerate}")
    # The plan's tables; a scalar-prefetch operand the plan has no table for is an argument.
    self.prefetch = {op["name"]: tables.get(op["name"]) for op in operands["scalar_prefetch"]}
    # The forward's document ranges (docs/block-plan.md, "Tiles skipped across documents"):
    # arguments reduced from the run-time segment ids at the plan's own blocks.
    self.range_blocks = {name: plan[block] for name, block in
                         (("q_block_ranges", "block_q"), ("kv_block_ranges", "block_kv"))
                         if name in self.prefetch}
    self.constants = {name: table for name, table in tables.items()
                      if name in {op["name"] for op in operands["inputs"]}}
    self.inputs = {op["name"]: tuple(op["shape"]) for op in operands["inputs"]}
    self.outputs = [(op["name"], jax.ShapeDtypeStruct(tuple(op["shape"]), jnp.dtype(op["dtype"])))
                    for op in operands["outputs"]]

  def __call__(self, **arrays) -> dict[str, jax.Array]:
    arrays = {**self.constants, **{name: table for name, table in self.prefetch.items()
                                   if table is not None}, **arrays}
    missing = [name for name in (*self.prefetch, *self.inputs) if name not in arrays]
    if missing:
      raise ValueError(f"{self.kernel_path}: no value for input(s) {missing}")
    operands = ([jnp.asarray(arrays[name], jnp.int32) for name in self.prefetch] +
                [arrays[name] for name in self.inputs])
    results = jax.lax.platform_dependent(*operands, tpu=self._on_tpu, cpu=self._on_cpu)
    return {name: result for (name, _), result in zip(self.outputs, results)}

  def _result_types(self):
    return [shape for _, shape in self.outputs]

  # vmap_method "sequential": under jax.vmap each kernel runs once per element of the mapped
  # axis; its grid, fixed by the spec, cannot take the extra dimension.
  def _on_tpu(self, *operands):
    return jax.ffi.ffi_call(
        "tpu_custom_call", self._result_types(), custom_call_api_version=1,
        legacy_backend_config=self.backend_config, vmap_method="sequential")(*operands)

  def _on_cpu(self, *operands):
    return jax.ffi.ffi_call(cpu_executor.TARGET, self._result_types(), vmap_method="sequential")(
        *operands, kernel=self.kernel_path, sha256=self.sha256)
