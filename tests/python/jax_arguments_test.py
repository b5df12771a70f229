"""kgen.jax's argument errors (docs/python.md, "Errors"): every bad argument is refused
before anything runs, with a message naming the argument, what was found, what the spec
fixed, and the make gen command; folders that are missing files or stale are refused when
loaded. Nothing here executes a kernel (jax.eval_shape traces only).

    KGEN_TEST_GENERATED=<build>/tests/python/generated python jax_arguments_test.py
"""
import os
import pathlib
import shutil
import tempfile
import unittest

import jax
import jax.numpy as jnp

import kgen
import kgen.jax

ROOT = pathlib.Path(__file__).resolve().parents[2]
GENERATED = pathlib.Path(os.environ["KGEN_TEST_GENERATED"])
BF16, F32, I32 = jnp.bfloat16, jnp.float32, jnp.int32


def sds(shape, dtype):
  return jax.ShapeDtypeStruct(shape, dtype)


class SplashArguments(unittest.TestCase):
  """generated/splash: q [1, 16, 4096, 128], k and v [1, 4, 4096, 128], bfloat16."""

  @classmethod
  def setUpClass(cls):
    cls.attention = kgen.jax.load(ROOT / "generated/splash")
    cls.q = sds((1, 16, 4096, 128), BF16)
    cls.kv = sds((1, 4, 4096, 128), BF16)

  def refused(self, *args, **kwargs) -> str:
    with self.assertRaises(kgen.ArgumentError) as caught:
      jax.eval_shape(lambda *a: self.attention(*a, **kwargs), *args)
    return str(caught.exception)

  def test_valid_arguments_trace(self):
    out = jax.eval_shape(self.attention, self.q, self.kv, self.kv)
    self.assertEqual((out.shape, out.dtype), ((1, 16, 4096, 128), BF16))
    btnh = jax.eval_shape(lambda *a: self.attention(*a, layout="BTNH"),
                          sds((1, 4096, 16, 128), BF16), sds((1, 4096, 4, 128), BF16),
                          sds((1, 4096, 4, 128), BF16))
    self.assertEqual(btnh.shape, (1, 4096, 16, 128))

  def test_shape_error_names_the_argument_the_spec_and_the_command(self):
    message = self.refused(sds((1, 16, 2048, 128), BF16), self.kv, self.kv)
    self.assertIn('kgen.jax attention "splash": q: found shape (1, 16, 2048, 128); the spec fixed '
                  "(1, 16, 4096, 128) = [batch, q_heads, q_len, head_dim] in layout BNTH "
                  "(specs/splash.json)", message)
    self.assertIn('change "shape" in specs/splash.json and regenerate: '
                  "make gen SPEC=specs/splash.json", message)
    message = self.refused(self.q, self.kv, sds((1, 4, 4096, 64), BF16))
    self.assertIn("v: found shape (1, 4, 4096, 64); the spec fixed (1, 4, 4096, 128) = "
                  "[batch, kv_heads, kv_len, head_dim_v]", message)
    self.assertIn("k: found shape (16, 4096, 128)",
                  self.refused(self.q, sds((16, 4096, 128), BF16), self.kv))

  def test_the_other_layout_is_named(self):
    message = self.refused(sds((1, 4096, 16, 128), BF16), self.kv, self.kv)
    self.assertIn("That is the spec's shape in layout BTNH: pass layout=\"BTNH\"", message)
    message = self.refused(self.q, self.kv, self.kv, layout="BTNH")
    self.assertIn("q: found shape (1, 16, 4096, 128); the spec fixed (1, 4096, 16, 128) = "
                  "[batch, q_len, q_heads, head_dim] in layout BTNH", message)
    self.assertIn('pass layout="BNTH"', message)
    message = self.refused(self.q, self.kv, self.kv, layout="BHTD")
    self.assertIn("layout: found 'BHTD'; expected \"BNTH\" (the kernels' own layout: no copy) or "
                  "\"BTNH\" (transposed", message)

  def test_dtype_error(self):
    message = self.refused(self.q, sds((1, 4, 4096, 128), F32), self.kv)
    self.assertIn("k: found dtype float32; the spec fixed bfloat16 (\"dtype\" in specs/splash.json)",
                  message)
    self.assertIn("make gen SPEC=specs/splash.json", message)

  def test_arguments_the_spec_does_not_take(self):
    ids = sds((1, 4096), I32)
    self.assertIn("segment_ids: found an argument; the spec has none (specs/splash.json)",
                  self.refused(self.q, self.kv, self.kv, segment_ids=ids))
    self.assertIn("sinks: found an argument; the spec has none",
                  self.refused(self.q, self.kv, self.kv, sinks=sds((16,), F32)))

  def test_a_loss_of_lse_is_refused(self):
    def loss(q, k, v):
      out, lse = self.attention(q, k, v, return_lse=True)
      return jnp.sum(out.astype(F32)) + jnp.sum(lse)
    with self.assertRaisesRegex(NotImplementedError, "a loss that depends on lse"):
      jax.eval_shape(jax.grad(loss), self.q, self.kv, self.kv)

    def loss_of_out(q, k, v):  # lse returned but not differentiated: fine
      out, lse = self.attention(q, k, v, return_lse=True)
      return jnp.sum(out.astype(F32)) + jnp.sum(jax.lax.stop_gradient(lse))
    self.assertEqual(jax.eval_shape(jax.grad(loss_of_out), self.q, self.kv, self.kv).shape,
                     self.q.shape)


class FeatureArguments(unittest.TestCase):
  """jax_features: segment ids and sinks; q [2, 4, 256, 128], k and v [2, 1, 256, 128]."""

  @classmethod
  def setUpClass(cls):
    cls.attention = kgen.jax.load(GENERATED / "jax_features")
    cls.tensors = (sds((2, 4, 256, 128), BF16), sds((2, 1, 256, 128), BF16),
                   sds((2, 1, 256, 128), BF16))

  def refused(self, **kwargs) -> str:
    with self.assertRaises(kgen.ArgumentError) as caught:
      jax.eval_shape(lambda *a: self.attention(*a, **kwargs), *self.tensors)
    return str(caught.exception)

  def test_missing_and_misshapen_segment_ids_and_sinks(self):
    sinks = sds((4,), F32)
    ids = sds((2, 256), I32)
    self.assertIn('segment_ids: found none; the spec fixed "segment_ids": true',
                  self.refused(sinks=sinks))
    self.assertIn('sinks: found none; the spec fixed "sinks": true', self.refused(segment_ids=ids))
    self.assertIn("segment_ids: kv_segment_ids has shape (2, 128); the spec fixed (2, 256) = "
                  "[batch, kv_len]", self.refused(segment_ids=(ids, sds((2, 128), I32)), sinks=sinks))
    self.assertIn("q_segment_ids has dtype float32",
                  self.refused(segment_ids=sds((2, 256), F32), sinks=sinks))
    self.assertIn("sinks: found shape (8,); the spec fixed (4,) = [q_heads]",
                  self.refused(segment_ids=ids, sinks=sds((8,), F32)))
    out = jax.eval_shape(lambda q, k, v, i, s: self.attention(q, k, v, segment_ids=i, sinks=s),
                         *self.tensors, ids, sinks)
    self.assertEqual(out.shape, (2, 4, 256, 128))


class FolderErrors(unittest.TestCase):

  def test_forward_only_specs_refuse_gradients_and_lse(self):
    attention = kgen.jax.load(GENERATED / "jax_forward_only")
    q = sds((1, 2, 256, 128), F32)
    self.assertEqual(jax.eval_shape(attention, q, q, q).shape, q.shape)
    with self.assertRaisesRegex(kgen.ArgumentError, 'no gradient: the spec generates no backward '
                                'kernels; set "backward": true in .*jax_forward_only.json and '
                                "regenerate: make gen SPEC="):
      jax.eval_shape(jax.grad(lambda *a: jnp.sum(attention(*a))), q, q, q)
    with self.assertRaisesRegex(kgen.ArgumentError, 'return_lse: the spec writes no lse; set '
                                '"outputs": {"lse": true}'):
      jax.eval_shape(lambda *a: attention(*a, return_lse=True), q, q, q)

  def test_a_kernel_changed_after_tracing_is_refused_by_the_cpu_executor(self):
    with tempfile.TemporaryDirectory() as temporary:
      copy = pathlib.Path(temporary) / "jax_forward_only"
      shutil.copytree(GENERATED / "jax_forward_only", copy)
      attention = kgen.jax.load(copy)
      kernel = copy / "jax_forward_only.tpu.mlir"
      kernel.write_text(kernel.read_text() + "\n")
      zeros = jnp.zeros((1, 2, 256, 128), F32)
      with self.assertRaisesRegex(Exception, "jax_forward_only.tpu.mlir changed after this function "
                                  "was traced .*: load it again with kgen.jax.load"):
        jax.block_until_ready(attention(zeros, zeros, zeros))

  def test_missing_and_stale_files(self):
    with self.assertRaisesRegex(kgen.GeneratedFolderError, "no MANIFEST.json"):
      kgen.jax.load(ROOT / "specs")
    # A decode folder (docs/decode.md) loads as a Decode (jax_decode_test.py), never as an
    # Attention.
    with self.assertRaisesRegex(kgen.GeneratedFolderError, "decode kernels .* not an Attention"):
      kgen.jax.Attention(ROOT / "generated/gpt_oss_decode_sinks")
    with tempfile.TemporaryDirectory() as temporary:
      copy = pathlib.Path(temporary) / "jax_features"
      shutil.copytree(GENERATED / "jax_features", copy)
      kernel = copy / "jax_features.tpu.dq.mlir"
      text = kernel.read_text()
      kernel.write_text(text + "\n")
      with self.assertRaisesRegex(kgen.GeneratedFolderError,
                                  "jax_features.tpu.dq.custom_call.json was written for another "
                                  "jax_features.tpu.dq.mlir"):
        kgen.jax.load(copy)
      kernel.write_text(text)
      (copy / "jax_features.tpu.dkv.plan.json").unlink()
      with self.assertRaisesRegex(kgen.GeneratedFolderError,
                                  r"jax_features.tpu.dkv.plan.json: missing \(the tpu dkv plan file\); "
                                  "write it with: make gen SPEC="):
        kgen.jax.load(copy)


if __name__ == "__main__":
  unittest.main()
