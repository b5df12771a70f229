"""The float64 reference of a decode spec (docs/spec-format.md §8) in numpy, and the inputs of
kgen.jax's decode tests: a logical cache per sequence, laid into a contiguous cache or a page
pool the way a spec's kernel reads it.

New token t of sequence b sits at position kv_lens[b] − q_len + t and attends to the positions
at or before it (and, with a local window, at most `left` before it) below kv_lens[b]; the
scale multiplies q·k, the softcap follows, the sink is one more logit with no value row.
This is verify/dense_reference.cc's dense_decode, written again in numpy for the Python tests
(tests/python), which cannot call the C++ one.
"""
from __future__ import annotations

import numpy as np


def dense_decode(signature, q, k, v, kv_lens, sinks=None):
  """q [batch, q_heads, q_len, d]; k, v the logical caches [batch, kv_heads, positions, d]
  (any number of positions ≥ max kv_lens); returns (out [batch, q_heads, q_len, dv],
  lse [batch, q_heads, q_len]) in float64. A row that keeps no key and has no sink gets out 0
  and lse −inf."""
  q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
  s = signature.shape
  group = s.q_heads // s.kv_heads
  left = signature.mask.get("left") if signature.mask.get("type") == "local" else None
  out = np.zeros((s.batch, s.q_heads, s.q_len, v.shape[-1]))
  lse = np.full((s.batch, s.q_heads, s.q_len), -np.inf)
  for b in range(s.batch):
    length = int(kv_lens[b])
    for h in range(s.q_heads):
      keys, values = k[b, h // group, :length], v[b, h // group, :length]
      for t in range(s.q_len):
        position = length - s.q_len + t
        first = 0 if left is None else max(0, position - left)
        logits = signature.scale * (keys[first:position + 1] @ q[b, h, t])
        if signature.softcap is not None:
          logits = signature.softcap * np.tanh(logits / signature.softcap)
        every = logits if sinks is None else np.append(logits, float(sinks[h]))
        if every.size == 0:
          continue
        top = every.max()
        total = np.exp(every - top).sum()
        lse[b, h, t] = top + np.log(total)
        out[b, h, t] = np.exp(logits - lse[b, h, t]) @ values[first:position + 1]
  return out, lse


def logical_cache(signature, positions: int, kv_lens, seed: int, *, big: float = 0.0):
  """q [batch, q_heads, q_len, d] and k, v [batch, kv_heads, positions, d] (float32 values the
  spec's dtype holds exactly enough), with every position at or past kv_lens[b] garbage
  (±1000 in k, NaN in v), so a kernel that reads past a sequence's length fails. `big` is
  added to the first component of every q and k: logits of about scale·big² (past exp's f32
  range for big ≥ 30 at scale 1/8)."""
  s = signature.shape
  rng = np.random.default_rng(seed)
  q = 2.0 * rng.standard_normal((s.batch, s.q_heads, s.q_len, s.head_dim))
  k = rng.standard_normal((s.batch, s.kv_heads, positions, s.head_dim))
  v = rng.standard_normal((s.batch, s.kv_heads, positions, s.head_dim_v))
  q[..., 0] += big
  k[..., 0] += big
  for b, length in enumerate(kv_lens):
    k[b, :, length:] = 1000.0 * rng.choice([-1.0, 1.0], k[b, :, length:].shape)
    v[b, :, length:] = np.nan
  return q, k, v


def to_pool(cache, page_size: int, seed: int):
  """A logical cache [batch, kv_heads, positions, d] laid into a page pool
  [kv_heads, batch·positions/page_size, page_size, d] through a seeded permutation (no
  sequence's pages in order); returns (pool, page_table [batch, positions/page_size])."""
  batch, heads, positions, d = cache.shape
  per_sequence = positions // page_size
  order = np.random.default_rng(seed).permutation(batch * per_sequence)
  pages = cache.reshape(batch, heads, per_sequence, page_size, d)
  pool = np.empty((heads, batch * per_sequence, page_size, d), cache.dtype)
  table = order.reshape(batch, per_sequence).astype(np.int32)
  for b in range(batch):
    for n in range(per_sequence):
      pool[:, table[b, n]] = pages[b, :, n]
  return pool, table
