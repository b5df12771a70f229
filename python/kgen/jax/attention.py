"""`kgen.jax.load(folder)`: the generated forward, dq and dkv kernels of one spec as one
differentiable JAX function (docs/python.md); a decode spec's kernels as kgen.jax.decode's
Decode (docs/decode.md)."""
from __future__ import annotations

import pathlib

import jax
import jax.numpy as jnp

from kgen.arguments import ArgumentChecker
from kgen.errors import ArgumentError, GeneratedFolderError
from kgen.generated_folder import GeneratedFolder
from kgen.jax import cpu_executor
from kgen.jax.decode import Decode
from kgen.jax.kernel_call import KernelCall, block_ranges

LANES = 128     # the lane-replicated layouts of lse and of row-wise segment ids
SUBLANES = 8    # the sublane-replicated layouts of sinks and of column-wise segment ids
# The tpu kernels read BNTH; BTNH is transposed on the way in and out on the way back (and
# their gradients).
LAYOUT_COSTS = {
    "BNTH": "the kernels' own layout: no copy",
    "BTNH": "transposed to BNTH and back: one copy of q, k, v and out each way",
}


def load(folder: str | pathlib.Path) -> "Attention | Decode":
  """The kernels of `generated/<name>` (as `make gen` wrote them) as a JAX function: an
  Attention for a forward spec, a Decode for a decode spec."""
  generated = GeneratedFolder(folder)
  _require_tpu_kernel(generated)
  return Decode(generated) if generated.is_decode() else Attention(folder)


def _require_tpu_kernel(folder: GeneratedFolder) -> None:
  if not folder.has("tpu", "kernel"):
    raise GeneratedFolderError(
        f"{folder.path}: no tpu kernel; kgen.jax runs the tpu target's kernels (on TPU, "
        f"and on the CPU through kgen's executor): add \"tpu\" to the targets of "
        f"{folder.spec} and regenerate: {folder.regenerate}")


def _dtype_name(array) -> str:
  return jnp.dtype(array.dtype).name


def _segment_operand(ids, shape: tuple[int, ...]):
  """[batch, len] ids in the layout a kernel operand's shape says (docs/tpu-kernel.md):
  lane-replicated [batch, len, 128] or sublane-replicated [batch, 8, len]."""
  batch, length = ids.shape
  if shape == (batch, length, LANES):
    return jnp.broadcast_to(ids[:, :, None], shape)
  return jnp.broadcast_to(ids[:, None, :], shape)


class Attention:
  """`attention(q, k, v, *, segment_ids=None, sinks=None, return_lse=False, layout="BNTH")`.

  q [batch, q_heads, q_len, head_dim], k [batch, kv_heads, kv_len, head_dim] and
  v [batch, kv_heads, kv_len, head_dim_v] in the spec's dtype (layout "BTNH": length before
  heads); segment_ids: (q ids [batch, q_len], kv ids [batch, kv_len]), or one array when the
  lengths agree; sinks [q_heads]. Returns out (shaped like q, head_dim_v last) and, with
  return_lse, lse [batch, q_heads, q_len] in f32 ([batch, q_len, q_heads] for BTNH).
  Differentiable in q, k, v and sinks when the spec says "backward": true.
  """

  def __init__(self, folder: str | pathlib.Path):
    self.folder = GeneratedFolder(folder)
    self.signature = self.folder.signature
    _require_tpu_kernel(self.folder)
    if self.folder.is_decode():
      raise GeneratedFolderError(
          f"{self.folder.path}: decode kernels (kv_lens, pages, splits; docs/decode.md) are "
          "not an Attention; kgen.jax.load(folder) gives their front door, a Decode")
    cpu_executor.register()
    self.forward = KernelCall(self.folder, "")
    backward = self.signature.backward
    self.dq = KernelCall(self.folder, "dq") if backward else None
    self.dkv = KernelCall(self.folder, "dkv") if backward else None
    self._checker = ArgumentChecker(self.folder, f'kgen.jax attention "{self.folder.name}"',
                                    LAYOUT_COSTS)
    self._bnth = self._differentiable()

  def __repr__(self) -> str:
    return f"kgen.jax.load({str(self.folder.path)!r})"

  def __call__(self, q, k, v, *, segment_ids=None, sinks=None, return_lse: bool = False,
               layout: str = "BNTH"):
    pair = self._checker.check(q, k, v, segment_ids=segment_ids, sinks=sinks, layout=layout,
                               dtype_name=_dtype_name)
    if return_lse and not self.signature.lse:
      raise ArgumentError(
          f'kgen.jax attention "{self.folder.name}": return_lse: the spec writes no lse; set '
          f'"outputs": {{"lse": true}} in {self.folder.spec} and regenerate: '
          f"{self.folder.regenerate}")
    if layout == "BTNH":
      q, k, v = (jnp.swapaxes(x, 1, 2) for x in (q, k, v))
    q_ids, kv_ids = (None, None) if pair is None else (jnp.asarray(i, jnp.int32) for i in pair)
    sinks = None if sinks is None else jnp.asarray(sinks, jnp.float32)
    out, lse = self._bnth(q, k, v, q_ids, kv_ids, sinks)
    if layout == "BTNH":
      out = jnp.swapaxes(out, 1, 2)
      lse = None if lse is None else jnp.swapaxes(lse, 1, 2)
    return (out, lse) if return_lse else out

  # The kernels' operands besides their tensors: segment ids and sinks in the replicated
  # layouts the operands files give (docs/tpu-kernel.md, docs/backward.md), and the
  # forward's document ranges reduced from the ids.
  # The dkv kernel takes no sinks: they reach dk and dv only through lse.
  def _extras(self, call: KernelCall, q_ids, kv_ids, sinks) -> dict:
    extras = {}
    if q_ids is not None:
      extras["q_segment_ids"] = _segment_operand(q_ids, call.inputs["q_segment_ids"])
      extras["kv_segment_ids"] = _segment_operand(kv_ids, call.inputs["kv_segment_ids"])
      for name, ids in (("q_block_ranges", q_ids), ("kv_block_ranges", kv_ids)):
        if name in call.range_blocks:
          extras[name] = block_ranges(ids, call.range_blocks[name])
    if sinks is not None and "sinks" in call.inputs:
      extras["sinks"] = jnp.broadcast_to(sinks[None, :], call.inputs["sinks"])
    return extras

  def _run_forward(self, q, k, v, q_ids, kv_ids, sinks):
    outputs = self.forward(q=q, k=k, v=v, **self._extras(self.forward, q_ids, kv_ids, sinks))
    lse = outputs.get("lse")
    return outputs["out"], None if lse is None else lse[..., 0]

  def _run_backward(self, residuals, dout):
    q, k, v, q_ids, kv_ids, sinks, out, lse = residuals
    tensors = dict(q=q, k=k, v=v, out=out, dout=dout,
                   lse=jnp.broadcast_to(lse[..., None], (*lse.shape, LANES)))
    dq = self.dq(**tensors, **self._extras(self.dq, q_ids, kv_ids, sinks))
    dkv = self.dkv(**tensors, **self._extras(self.dkv, q_ids, kv_ids, sinks))
    dsinks = None
    if sinks is not None:
      # One (8, 128) tile of partials per (batch, head, q block), every element alike: summed
      # over batches and q blocks (docs/backward.md, "Calling them").
      dsinks = dq["dsinks"][:, :, ::SUBLANES, 0].sum(axis=(0, 2))
    return dq["dq"], dkv["dk"], dkv["dv"], dsinks

  def _differentiable(self):
    """attention on BNTH arrays as a custom_vjp: (q, k, v, q_ids, kv_ids, sinks) -> (out, lse)."""

    @jax.custom_vjp
    def attention(q, k, v, q_ids, kv_ids, sinks):
      return self._run_forward(q, k, v, q_ids, kv_ids, sinks)

    def forward(q, k, v, q_ids, kv_ids, sinks):
      q, k, v, q_ids, kv_ids, sinks = jax.tree.map(lambda p: p.value,
                                                   (q, k, v, q_ids, kv_ids, sinks))
      if not self.signature.backward:
        raise ArgumentError(
            f'kgen.jax attention "{self.folder.name}": no gradient: the spec generates no '
            f'backward kernels; set "backward": true in {self.folder.spec} and regenerate: '
            f"{self.folder.regenerate}")
      out, lse = self._run_forward(q, k, v, q_ids, kv_ids, sinks)
      return (out, lse), (q, k, v, q_ids, kv_ids, sinks, out, lse)

    def backward(residuals, cotangents):
      dout, dlse = cotangents
      if not isinstance(dlse, jax.custom_derivatives.SymbolicZero):
        # The backward kernels take dout only: lse's own gradient would enter as a change of
        # delta (ds = p (dp - delta + dlse)), which they compute in-kernel from out and dout.
        raise NotImplementedError(
            f'kgen.jax attention "{self.folder.name}": a loss that depends on lse is not '
            "differentiable through the generated backward kernels (they take the gradient "
            "of out only); use return_lse=False inside the differentiated function, or "
            "jax.lax.stop_gradient(lse)")
      out = residuals[6]
      if isinstance(dout, jax.custom_derivatives.SymbolicZero):
        dout = jnp.zeros(out.shape, out.dtype)
      dq, dk, dv, dsinks = self._run_backward(residuals, dout)
      return dq, dk, dv, None, None, dsinks

    attention.defvjp(forward, backward, symbolic_zeros=True)
    return attention
