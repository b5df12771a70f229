"""kgen.jax on the CPU: the generated forward, dq and dkv kernels run on kgen's executor
through the XLA FFI handler, under jax.jit, jax.grad and jax.vmap, against
jax.nn.dot_product_attention (jax_causal_gqa) and a jax.numpy transcription of
docs/spec-format.md §3 (jax_features: segment ids, sinks, softcap, sliding window), within
the spec's tolerances (§3: out, lse; §7: gradients).

    KGEN_TEST_GENERATED=<build>/tests/python/generated python jax_attention_test.py
"""
import os
import pathlib
import unittest

import jax
import jax.numpy as jnp
import numpy as np

import kgen.jax

GENERATED = pathlib.Path(os.environ["KGEN_TEST_GENERATED"])
# docs/spec-format.md §3 and §7: max|x - ref| / max|ref| (lse: absolute)
TOLERANCE = {"float32": dict(out=1e-5, lse=1e-5, grad=1e-4),
             "bfloat16": dict(out=2e-2, lse=1e-3, grad=3e-2)}


def relative_error(x, ref):
  x, ref = np.asarray(x, np.float64), np.asarray(ref, np.float64)
  return np.max(np.abs(x - ref)) / np.max(np.abs(ref))


def absolute_error(x, ref):
  return np.max(np.abs(np.asarray(x, np.float64) - np.asarray(ref, np.float64)))


def random_inputs(signature, seed):
  shape, dtype = signature.shape, jnp.dtype(signature.dtype)
  keys = jax.random.split(jax.random.key(seed), 4)
  q = jax.random.normal(keys[0], (shape.batch, shape.q_heads, shape.q_len, shape.head_dim))
  k = jax.random.normal(keys[1], (shape.batch, shape.kv_heads, shape.kv_len, shape.head_dim))
  v = jax.random.normal(keys[2], (shape.batch, shape.kv_heads, shape.kv_len, shape.head_dim_v))
  # Logits of several units, so that the softmax is far from uniform.
  q = 2.0 * q
  weights = jax.random.normal(keys[3], (shape.batch, shape.q_heads, shape.q_len, shape.head_dim_v))
  return q.astype(dtype), k.astype(dtype), v.astype(dtype), weights


class CausalGqaAgainstJaxNn(unittest.TestCase):
  """jax_causal_gqa (float32) against jax.nn.dot_product_attention(is_causal=True)."""

  @classmethod
  def setUpClass(cls):
    cls.attention = kgen.jax.load(GENERATED / "jax_causal_gqa")
    cls.q, cls.k, cls.v, cls.weights = random_inputs(cls.attention.signature, seed=0)
    cls.tolerance = TOLERANCE["float32"]

  @staticmethod
  def reference(q, k, v):  # BNTH in, BNTH out; jax.nn takes BTNH
    out, lse = jax.nn.dot_product_attention(
        *(jnp.swapaxes(x, 1, 2) for x in (q, k, v)), is_causal=True, implementation="xla",
        return_residual=True)
    return jnp.swapaxes(out, 1, 2), jnp.swapaxes(lse, 1, 2)

  def test_forward_and_lse_match_jax_nn(self):
    out, lse = jax.jit(lambda *a: self.attention(*a, return_lse=True))(self.q, self.k, self.v)
    ref_out, ref_lse = self.reference(self.q, self.k, self.v)
    self.assertEqual(out.shape, ref_out.shape)
    self.assertLessEqual(relative_error(out, ref_out), self.tolerance["out"])
    self.assertLessEqual(absolute_error(lse, ref_lse), self.tolerance["lse"])

  def test_grad_matches_jax_nn(self):
    def loss(attend):
      return lambda q, k, v: jnp.sum(attend(q, k, v) * self.weights)
    grads = jax.jit(jax.grad(loss(self.attention), argnums=(0, 1, 2)))(self.q, self.k, self.v)
    ref = jax.grad(loss(lambda *a: self.reference(*a)[0]), argnums=(0, 1, 2))(
        self.q, self.k, self.v)
    for name, got, want in zip(("dq", "dk", "dv"), grads, ref):
      with self.subTest(name):
        self.assertEqual(got.shape, want.shape)
        self.assertLessEqual(relative_error(got, want), self.tolerance["grad"])

  def test_btnh_layout_is_the_transposed_call(self):
    btnh = [jnp.swapaxes(x, 1, 2) for x in (self.q, self.k, self.v)]
    out, lse = self.attention(*btnh, layout="BTNH", return_lse=True)
    want_out, want_lse = self.attention(self.q, self.k, self.v, return_lse=True)
    np.testing.assert_array_equal(out, jnp.swapaxes(want_out, 1, 2))
    np.testing.assert_array_equal(lse, jnp.swapaxes(want_lse, 1, 2))

  def test_vmap_over_a_batch_of_calls(self):
    second = random_inputs(self.attention.signature, seed=1)[:3]
    stacked = [jnp.stack(pair) for pair in zip((self.q, self.k, self.v), second)]
    outs = jax.jit(jax.vmap(self.attention))(*stacked)
    np.testing.assert_array_equal(outs[0], self.attention(self.q, self.k, self.v))
    np.testing.assert_array_equal(outs[1], self.attention(*second))
    dq = jax.vmap(jax.grad(lambda q, k, v: jnp.sum(self.attention(q, k, v) * self.weights)))(
        *stacked)
    np.testing.assert_array_equal(
        dq[1], jax.grad(lambda q: jnp.sum(self.attention(q, *second[1:]) * self.weights))(second[0]))


def features_reference(signature, q, k, v, q_ids, kv_ids, sinks):
  """docs/spec-format.md §3 in jax.numpy (f32 from the dtype-rounded inputs), BNTH: softcap
  after the scale, the sliding window ANDed with equal segment ids, one sink logit per head
  joining the softmax with no value row."""
  q, k, v = (x.astype(jnp.float32) for x in (q, k, v))
  group = signature.shape.q_heads // signature.shape.kv_heads
  k, v = jnp.repeat(k, group, axis=1), jnp.repeat(v, group, axis=1)
  s = signature.scale * jnp.einsum("bhid,bhjd->bhij", q, k)
  s = signature.softcap * jnp.tanh(s / signature.softcap)
  i = jnp.arange(signature.shape.q_len)[:, None]
  j = jnp.arange(signature.shape.kv_len)[None, :]
  mask = signature.mask
  allowed = (j <= i + mask["right"]) & (j >= i - mask["left"])
  allowed = allowed[None, None] & (q_ids[:, None, :, None] == kv_ids[:, None, None, :])
  s = jnp.where(allowed, s, -jnp.inf)
  sink = jnp.broadcast_to(sinks[None, :, None, None], (*s.shape[:3], 1))
  logits = jnp.concatenate([s, sink], axis=-1)
  lse = jax.nn.logsumexp(logits, axis=-1)
  p = jnp.exp(s - lse[..., None])
  return jnp.einsum("bhij,bhjd->bhid", p, v), lse


class FeaturesAgainstTheSpec(unittest.TestCase):
  """jax_features (bfloat16; segment ids, sinks, softcap, window) against §3 in jax.numpy."""

  @classmethod
  def setUpClass(cls):
    cls.attention = kgen.jax.load(GENERATED / "jax_features")
    signature = cls.attention.signature
    cls.q, cls.k, cls.v, cls.weights = random_inputs(signature, seed=2)
    batch, length = signature.shape.batch, signature.shape.q_len
    documents = np.repeat(np.arange(4), [100, 56, 80, 20])  # 256 positions
    cls.kv_ids = jnp.asarray(np.stack([documents, documents[::-1]]), jnp.int32)
    q_ids = np.array(cls.kv_ids)
    q_ids[:, 120:130] = 9  # rows that keep no key: out 0 and lse = the sink (§3)
    cls.q_ids = jnp.asarray(q_ids)
    cls.sinks = jax.random.normal(jax.random.key(3), (signature.shape.q_heads,)) * 2.0
    cls.tolerance = TOLERANCE[signature.dtype]
    assert cls.kv_ids.shape == (batch, length)

  def call(self, q, k, v, sinks, **kw):
    return self.attention(q, k, v, segment_ids=(self.q_ids, self.kv_ids), sinks=sinks, **kw)

  def reference(self, q, k, v, sinks):
    return features_reference(self.attention.signature, q, k, v, self.q_ids, self.kv_ids, sinks)

  def test_forward_and_lse(self):
    out, lse = jax.jit(lambda *a: self.call(*a, return_lse=True))(self.q, self.k, self.v, self.sinks)
    ref_out, ref_lse = self.reference(self.q, self.k, self.v, self.sinks)
    self.assertLessEqual(relative_error(out, ref_out), self.tolerance["out"])
    self.assertLessEqual(absolute_error(lse, ref_lse), self.tolerance["lse"])
    np.testing.assert_array_equal(out[:, :, 120:130], 0)

  def test_grads_of_q_k_v_and_sinks(self):
    def loss(attend):
      return lambda *a: jnp.sum(attend(*a).astype(jnp.float32) * self.weights)
    args = (self.q, self.k, self.v, self.sinks)
    grads = jax.jit(jax.grad(loss(self.call), argnums=(0, 1, 2, 3)))(*args)
    ref = jax.grad(loss(lambda *a: self.reference(*a)[0]), argnums=(0, 1, 2, 3))(*args)
    for name, got, want in zip(("dq", "dk", "dv", "dsinks"), grads, ref):
      with self.subTest(name):
        self.assertEqual(got.shape, want.shape)
        self.assertLessEqual(relative_error(got, want), self.tolerance["grad"])


class DocumentRanges(unittest.TestCase):
  """The forward's document ranges (docs/block-plan.md, "Tiles skipped across documents"):
  block_ranges against a numpy reduction, and jax_features on documents whose blocks make
  dead steps, steps inside one document and steps that compare ids, against §3."""

  def test_block_ranges_are_the_numpy_reduction(self):
    ids = np.random.default_rng(4).integers(0, 50, size=(3, 300)).astype(np.int32)
    for block in (128, 100, 300, 7):
      blocks = -(-300 // block)
      want = np.stack([np.stack([[row[k * block:(k + 1) * block].min() for k in range(blocks)],
                                 [row[k * block:(k + 1) * block].max() for k in range(blocks)]])
                       for row in ids])
      with self.subTest(block=block):
        np.testing.assert_array_equal(kgen.jax.kernel_call.block_ranges(ids, block), want)

  def test_outputs_with_dead_and_one_document_steps(self):
    attention = kgen.jax.load(GENERATED / "jax_features")
    signature = attention.signature
    self.assertEqual(attention.forward.range_blocks, {"q_block_ranges": 128, "kv_block_ranges": 128})
    q, k, v, _ = random_inputs(signature, seed=5)
    # Documents of 60 and 68 positions fill block 0, one of 128 block 1: the window (95 to
    # the left) plans q block 1 against kv block 0, whose ids [0, 1] lie below block 1's
    # [2, 2]: dead; block 1 against itself lies inside one document; block 0 compares.
    documents = np.repeat(np.arange(3), [60, 68, 128]).astype(np.int32)
    ids = jnp.asarray(np.stack([documents, documents]))
    ranges = np.asarray(kgen.jax.kernel_call.block_ranges(ids, 128))
    np.testing.assert_array_equal(ranges[0], [[0, 2], [1, 2]])
    sinks = jnp.zeros((signature.shape.q_heads,), jnp.float32)
    out, lse = jax.jit(lambda *a: attention(*a, segment_ids=(ids, ids), sinks=sinks, return_lse=True))(q, k, v)
    ref_out, ref_lse = features_reference(signature, q, k, v, ids, ids, sinks)
    tolerance = TOLERANCE[signature.dtype]
    self.assertLessEqual(relative_error(out, ref_out), tolerance["out"])
    self.assertLessEqual(absolute_error(lse, ref_lse), tolerance["lse"])


if __name__ == "__main__":
  unittest.main()
