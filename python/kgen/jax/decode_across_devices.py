"""Decode over a KV cache sharded across devices (docs/decode.md, "Across devices").

Each device of a 1-D mesh axis holds a contiguous range of every sequence's cache positions:
device i of D holds positions [i·C, (i+1)·C), where C is the spec's kv_len (the spec
describes one device's kernel; the cache holds D·C positions). On its shard a device runs the
generated kernel with

    kv_lens_i[b] = clip(kv_lens[b] − i·C, 0, C)

(0: the sequence ends before the shard; C: it runs past it), producing partials out_s, lse_s
with no sink in them, and the devices merge them by a collective in f32:

    m   = max(pmax_devices(max_s lse_s), sink)
    out = psum(Σ_s exp(lse_s − m)·out_s) / l,  l = psum(Σ_s exp(lse_s − m)) + exp(sink − m)
    lse = m + log l

The sink enters once, after the psum; m is the same on every device, so every exp is at
most 1. A row no device kept (no sink) gets out 0, lse −inf.

Why this is exact only for causal decode with one new token: a kernel places new token t at
kv_lens_i − q_len + t and reads positions below kv_lens_i. A shard wholly before a
sequence's end must be read whole by every token; kv_lens_i = C says so only when q_len is
1 (with q_len > 1, token t would stop q_len − 1 − t positions short), and a window measured
from C rather than from the token's true position would keep the wrong keys. Specs with
q_len > 1 or a local window are refused by name.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec

from kgen.errors import ArgumentError
from kgen.jax.decode import Decode, from_bnth, to_bnth


def kv_lens_of_shard(kv_lens, shard, capacity: int):
  """The valid positions of each sequence within shard `shard` (positions
  [shard·capacity, (shard+1)·capacity)), in the shard's own coordinates."""
  return jnp.clip(jnp.asarray(kv_lens, jnp.int32) - shard * capacity, 0, capacity)


def merge_partials(out_s, lse_s, sinks, axis_name: str):
  """Merges every device's partials (out_s [parts, ...rows, dv], lse_s [parts, ...rows], f32)
  over `axis_name`; sinks (broadcastable to lse_s[0]) join once. Returns (out, lse), f32."""
  m = jax.lax.pmax(jnp.max(lse_s, axis=0), axis_name)
  if sinks is not None:
    m = jnp.maximum(m, sinks)
  m = jnp.where(jnp.isneginf(m), 0.0, m)  # a row nobody kept: every weight is exp(-inf) = 0
  weights = jnp.exp(lse_s - m)
  numerator, denominator = jax.lax.psum(
      (jnp.sum(weights[..., None] * out_s, axis=0), jnp.sum(weights, axis=0)), axis_name)
  if sinks is not None:
    denominator = denominator + jnp.exp(sinks - m)
  kept = denominator > 0
  out = jnp.where(kept[..., None], numerator / jnp.where(kept, denominator, 1.0)[..., None], 0.0)
  lse = jnp.where(kept, m + jnp.log(jnp.where(kept, denominator, 1.0)), -jnp.inf)
  return out, lse


def refusal(decode: Decode) -> str | None:
  """Why `decode`'s kernel cannot serve one shard of a sharded cache, or None."""
  signature = decode.signature
  regenerate = f"{decode.folder.spec}; regenerate: {decode.folder.regenerate}"
  if signature.shape.q_len != 1:
    return (f"q_len {signature.shape.q_len}: a shard before a sequence's end must be read whole "
            "by every new token, which kv_lens expresses for one new token only "
            "(docs/decode.md, \"Across devices\"); a spec with \"q_len\": 1 can be sharded")
  if signature.mask != {"type": "causal"}:
    return (f"mask {signature.mask}: a window is measured from kv_lens, which on a shard "
            "before the sequence's end is not the tokens' position (docs/decode.md, \"Across "
            "devices\"); only a causal spec can be sharded")
  if not decode.split and signature.sinks:
    return ("the spec is unsplit and has sinks: its kernel adds the sink itself, so every "
            f"device would add it; set \"splits\" of targets.tpu to 2 or more in {regenerate}")
  if not decode.split and not signature.lse:
    return ("the spec is unsplit and writes no lse, so its out cannot be weighed against the "
            f"other devices'; set \"outputs\": {{\"lse\": true}} in {regenerate}")
  return None


def across_devices(decode: Decode, q, k, v, kv_lens, *, axis_name: str, page_table=None,
                   sinks=None, return_lse: bool = False, layout: str = "BNTH"):
  """The body of a shard_map over `axis_name`: this device's shard of the cache (k, v and,
  paged, its page-table columns [batch, kv_len / page_size], naming pages of its own pool) and
  the replicated q, kv_lens [batch] (whole sequences' lengths) and sinks. Returns out (and lse),
  the same on every device."""
  why = refusal(decode)
  if why:
    raise ArgumentError(f"{decode.caller}: across devices: {why}")
  decode.check(q, k, v, kv_lens, page_table=page_table, sinks=sinks, layout=layout)
  decode.require_lse(return_lse)
  shard = jax.lax.axis_index(axis_name)
  local = kv_lens_of_shard(kv_lens, shard, decode.signature.shape.kv_len)
  out_s, lse_s = decode.partials_bnth(to_bnth(q, layout), k, v, local, page_table)
  sink_rows = None
  if sinks is not None:  # [q_heads] -> [batch, q_heads, q_len], as lse
    sink_rows = jnp.asarray(sinks, jnp.float32)[None, :, None]
  out, lse = merge_partials(out_s, lse_s, sink_rows, axis_name)
  out = from_bnth(out.astype(decode.signature.dtype), layout)
  return (out, from_bnth(lse, layout)) if return_lse else out


def partition_specs(decode: Decode, axis_name: str) -> tuple[PartitionSpec, ...]:
  """How `sharded`'s (q, k, v, kv_lens, page_table, sinks) lie over the mesh axis."""
  replicated = PartitionSpec()
  cache = (PartitionSpec(None, axis_name) if decode.paged
           else PartitionSpec(None, None, axis_name))
  return (replicated, cache, cache, replicated, PartitionSpec(None, axis_name), replicated)


def sharded(decode: Decode, mesh: jax.sharding.Mesh, axis_name: str, *,
            return_lse: bool = False, layout: str = "BNTH"):
  """`f(q, k, v, kv_lens, page_table=None, sinks=None)` over a cache of D·kv_len positions
  sharded over the mesh axis `axis_name` (D devices): a contiguous cache
  [batch, kv_heads, D·kv_len, d] split along positions; or D page pools side by side,
  [kv_heads, D·pages, page_size, d], and page_table [batch, D·kv_len / page_size] whose
  column n names a page of the pool of device n // (kv_len / page_size), counted within that
  pool. q, kv_lens and sinks are replicated; so is the result."""
  why = refusal(decode)
  if why:
    raise ArgumentError(f"{decode.caller}: across devices: {why}")
  specs = partition_specs(decode, axis_name)

  def body(q, k, v, kv_lens, page_table, sinks):
    return across_devices(decode, q, k, v, kv_lens, axis_name=axis_name, page_table=page_table,
                          sinks=sinks, return_lse=return_lse, layout=layout)

  def function(q, k, v, kv_lens, page_table=None, sinks=None):
    in_specs = tuple(None if arg is None else spec for arg, spec in
                     zip((q, k, v, kv_lens, page_table, sinks), specs))
    out_specs = (PartitionSpec(), PartitionSpec()) if return_lse else PartitionSpec()
    return jax.shard_map(body, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                         check_vma=False)(q, k, v, kv_lens, page_table, sinks)

  return function
