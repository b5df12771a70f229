"""kgen.jax's decode front door on one CPU device (docs/decode.md, "kgen.jax"): the generated
decode kernel, and a split spec's combine, run on kgen's executor through the XLA FFI
handler under jax.jit, against the float64 reference of §8 within §3's tolerances; the split
kernel's partials and the combine as callables of their own; the argument checks.

    KGEN_TEST_GENERATED=<build>/tests/python/generated python jax_decode_test.py

Specs (tests/python/specs): jax_decode_paged_sinks (paged, two pages per block, GQA, bf16,
sinks, two splits), jax_decode_contiguous (a contiguous cache, unsplit, f32, softcap),
jax_decode_window_mqa (MQA with three new tokens in one q tile, a window, blocks smaller than
a page, three splits, f16, head_dim_v != head_dim).
"""
import os
import pathlib
import sys
import unittest

import jax
import jax.numpy as jnp
import numpy as np

import kgen
import kgen.jax

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from decode_reference import dense_decode, logical_cache, to_pool  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
GENERATED = pathlib.Path(os.environ["KGEN_TEST_GENERATED"])
# docs/spec-format.md §3: max|out - ref| / max|ref|, max|lse - ref|.
TOLERANCE = {"float32": (1e-5, 1e-5), "bfloat16": (2e-2, 1e-3), "float16": (2e-2, 1e-3)}


def relative_error(x, ref):
  x, ref = np.asarray(x, np.float64), np.asarray(ref, np.float64)
  return np.max(np.abs(x - ref)) / np.max(np.abs(ref))


def absolute_error(x, ref):
  return np.max(np.abs(np.asarray(x, np.float64) - np.asarray(ref, np.float64)))


def in_dtype(x, dtype):
  """x rounded to the spec's dtype, and its float32 value (what the reference sees)."""
  rounded = jnp.asarray(x, dtype)
  return rounded, np.asarray(rounded.astype(jnp.float32))


class Case:
  """One decode call's inputs for `decode`'s spec: the lengths, rounded q and logical cache,
  the kernel's cache (a pool and page table, or the contiguous cache) and the sinks."""

  def __init__(self, decode, kv_lens, seed=0):
    signature, s = decode.signature, decode.signature.shape
    dtype = jnp.dtype(signature.dtype)
    self.kv_lens = np.asarray(kv_lens, np.int32)
    q, k, v = logical_cache(signature, s.kv_len, self.kv_lens, seed)
    self.q, self.q_ref = in_dtype(q, dtype)
    k, self.k_ref = in_dtype(k, dtype)
    v, self.v_ref = in_dtype(v, dtype)
    self.page_table = None
    if decode.paged:
      k_pool, self.page_table = to_pool(np.asarray(k), decode.page_size, seed + 1)
      v_pool, _ = to_pool(np.asarray(v), decode.page_size, seed + 1)
      k, v = jnp.asarray(k_pool), jnp.asarray(v_pool)
    self.k, self.v = k, v
    self.sinks = (np.linspace(-1.0, 3.0, s.q_heads).astype(np.float32) if signature.sinks
                  else None)
    self.reference = dense_decode(signature, self.q_ref, self.k_ref, self.v_ref, self.kv_lens,
                                  self.sinks)

  def arguments(self):
    return (self.q, self.k, self.v, self.kv_lens), dict(page_table=self.page_table,
                                                        sinks=self.sinks)


def edge_lengths(decode):
  """One length per sequence among q_len, a kv block's edge ± 1, a page's edge, capacity."""
  s = decode.signature.shape
  lengths = [s.q_len, decode.block_kv + 1, s.kv_len, decode.block_kv - 1,
             (decode.page_size or decode.block_kv) * 2, s.kv_len - 1]
  return lengths[:s.batch]


class DecodeAgainstReference(unittest.TestCase):

  SPECS = ("jax_decode_paged_sinks", "jax_decode_contiguous", "jax_decode_window_mqa")

  @classmethod
  def setUpClass(cls):
    cls.decodes = {name: kgen.jax.load(GENERATED / name) for name in cls.SPECS}
    cls.cases = {name: Case(d, edge_lengths(d)) for name, d in cls.decodes.items()}

  def test_load_gives_a_decode(self):
    for decode in self.decodes.values():
      self.assertIsInstance(decode, kgen.jax.Decode)
    self.assertEqual(self.decodes["jax_decode_paged_sinks"].splits, 2)
    self.assertFalse(self.decodes["jax_decode_contiguous"].split)
    self.assertTrue(self.decodes["jax_decode_window_mqa"].paged)

  def test_out_and_lse_match_the_float64_reference(self):
    for name, decode in self.decodes.items():
      with self.subTest(spec=name):
        case = self.cases[name]
        args, kwargs = case.arguments()
        out, lse = jax.jit(lambda *a, d=decode, **k: d(*a, **k, return_lse=True))(*args, **kwargs)
        ref_out, ref_lse = case.reference
        s = decode.signature.shape
        self.assertEqual(out.shape, (s.batch, s.q_heads, s.q_len, s.head_dim_v))
        self.assertEqual(out.dtype, jnp.dtype(decode.signature.dtype))
        self.assertEqual(lse.shape, (s.batch, s.q_heads, s.q_len))
        out_tolerance, lse_tolerance = TOLERANCE[decode.signature.dtype]
        self.assertLessEqual(relative_error(out, ref_out), out_tolerance)
        self.assertLessEqual(absolute_error(lse, ref_lse), lse_tolerance)

  def test_btnh_is_the_transposed_call(self):
    decode = self.decodes["jax_decode_window_mqa"]
    args, kwargs = self.cases["jax_decode_window_mqa"].arguments()
    out, lse = decode(*args, **kwargs, return_lse=True)
    q_btnh = jnp.swapaxes(args[0], 1, 2)
    out_t, lse_t = decode(q_btnh, *args[1:], **kwargs, return_lse=True, layout="BTNH")
    np.testing.assert_array_equal(np.asarray(jnp.swapaxes(out_t, 1, 2)), np.asarray(out))
    np.testing.assert_array_equal(np.asarray(jnp.swapaxes(lse_t, 1, 2)), np.asarray(lse))

  def test_partials_and_combine_are_the_call(self):
    for name in ("jax_decode_paged_sinks", "jax_decode_window_mqa"):
      with self.subTest(spec=name):
        decode = self.decodes[name]
        case = self.cases[name]
        args, kwargs = case.arguments()
        out_s, lse_s = decode.partials(*args, page_table=case.page_table)
        s = decode.signature.shape
        self.assertEqual(out_s.shape, (decode.splits, s.batch, s.q_heads, s.q_len, s.head_dim_v))
        self.assertEqual(lse_s.shape, (decode.splits, s.batch, s.q_heads, s.q_len))
        # Each part holds no sink: merged here in float64, with the sink once, they give
        # the reference.
        lse_s64 = np.asarray(lse_s, np.float64)
        logits = [lse_s64[i] for i in range(decode.splits)]
        if case.sinks is not None:
          logits.append(np.broadcast_to(case.sinks[None, :, None], lse_s64.shape[1:]))
        lse = np.logaddexp.reduce(np.stack(logits), axis=0)
        out = np.sum(np.exp(lse_s64 - lse)[..., None] * np.asarray(out_s, np.float64), axis=0)
        out_tolerance, lse_tolerance = TOLERANCE[decode.signature.dtype]
        self.assertLessEqual(relative_error(out, case.reference[0]), out_tolerance)
        self.assertLessEqual(absolute_error(lse, case.reference[1]), lse_tolerance)
        combined = decode.combine(out_s, lse_s, sinks=case.sinks, return_lse=True)
        called = decode(*args, **kwargs, return_lse=True)
        for got, want in zip(combined, called):
          np.testing.assert_array_equal(np.asarray(got), np.asarray(want))

  def test_an_unsplit_kernel_with_lse_gives_one_part(self):
    decode = self.decodes["jax_decode_contiguous"]
    args, kwargs = self.cases["jax_decode_contiguous"].arguments()
    out_s, lse_s = decode.partials(*args)
    out, lse = decode(*args, **kwargs, return_lse=True)
    np.testing.assert_array_equal(np.asarray(out_s[0]), np.asarray(out))
    np.testing.assert_array_equal(np.asarray(lse_s[0]), np.asarray(lse))
    with self.assertRaisesRegex(kgen.ArgumentError, "unsplit .* no combine kernel"):
      decode.combine(out_s, lse_s)

  def test_a_kernel_reading_past_kv_lens_would_fail(self):
    # The garbage past kv_lens (±1000 in k, NaN in v) reaches the result when read:
    # the reference over the garbage differs from the call.
    decode = self.decodes["jax_decode_contiguous"]
    case = self.cases["jax_decode_contiguous"]
    args, kwargs = case.arguments()
    out = decode(*args, **kwargs)
    capacity = np.full_like(case.kv_lens, decode.signature.shape.kv_len)
    read_past, _ = dense_decode(decode.signature, case.q_ref, case.k_ref,
                                np.nan_to_num(case.v_ref), capacity)
    self.assertGreater(relative_error(out, read_past), TOLERANCE["float32"][0])


class DecodeArguments(unittest.TestCase):
  """The checks, by jax.eval_shape (nothing runs)."""

  @classmethod
  def setUpClass(cls):
    cls.paged = kgen.jax.load(GENERATED / "jax_decode_paged_sinks")
    cls.contiguous = kgen.jax.load(GENERATED / "jax_decode_contiguous")

  @staticmethod
  def structs(decode, **changes):
    s = decode.signature.shape
    dtype = jnp.dtype(decode.signature.dtype)
    shapes = dict(q=((s.batch, s.q_heads, s.q_len, s.head_dim), dtype),
                  k=(decode.cache_shapes["k"], dtype), v=(decode.cache_shapes["v"], dtype),
                  kv_lens=((s.batch,), jnp.int32))
    shapes.update(changes)
    return [jax.ShapeDtypeStruct(*shapes[n]) for n in ("q", "k", "v", "kv_lens")]

  def refused(self, decode, pattern, *, changes=None, **kwargs):
    with self.assertRaisesRegex(kgen.ArgumentError, pattern):
      jax.eval_shape(lambda *a: decode(*a, **kwargs), *self.structs(decode, **(changes or {})))

  def test_errors_name_the_argument_and_the_spec(self):
    s = self.paged.signature.shape
    table = jax.ShapeDtypeStruct(self.paged.page_table_shape, jnp.int32)
    sinks = jax.ShapeDtypeStruct((s.q_heads,), jnp.float32)
    self.refused(self.paged, r"page_table: found none; the spec fixed \"paged\"", sinks=sinks)
    self.refused(self.paged, r"sinks: found none", page_table=table)
    self.refused(self.paged, r"k: found shape \(3, 2, 512, 64\); the kernel reads the page pool",
                 changes=dict(k=((3, 2, 512, 64), jnp.bfloat16)), page_table=table, sinks=sinks)
    self.refused(self.paged, r"kv_lens: found shape \(2,\); the spec fixed \(3,\) = \[batch\]",
                 changes=dict(kv_lens=((2,), jnp.int32)), page_table=table, sinks=sinks)
    self.refused(self.paged, r"kv_lens: found dtype float32; the kernels read int32",
                 changes=dict(kv_lens=((3,), jnp.float32)), page_table=table, sinks=sinks)
    self.refused(self.paged, r"page_table: found shape \(3, 4\); the spec fixed \(3, 8\)",
                 page_table=jax.ShapeDtypeStruct((3, 4), jnp.int32), sinks=sinks)
    self.refused(self.paged, r"q: found dtype float32; the spec fixed bfloat16",
                 changes=dict(q=((3, 8, 1, 64), jnp.float32)), page_table=table, sinks=sinks)
    self.refused(self.paged, r"That is the spec's shape in layout BTNH", changes=dict(
        q=((3, 1, 8, 64), jnp.bfloat16)), page_table=table, sinks=sinks)
    self.refused(self.contiguous, r"page_table: found an argument; the spec's cache is contiguous",
                 page_table=table)
    self.refused(self.contiguous, r"layout: found 'BHTD'", layout="BHTD")

  def test_return_lse_of_a_spec_without_lse_is_refused(self):
    mistral = kgen.jax.load(ROOT / "generated/mistral_7b_decode_sliding_window")
    s = mistral.signature.shape
    with self.assertRaisesRegex(kgen.ArgumentError, r"return_lse: the spec writes no lse"):
      jax.eval_shape(lambda q, k, v, kv_lens, table: mistral(q, k, v, kv_lens, page_table=table,
                                                             return_lse=True),
                     *self.structs(mistral),
                     jax.ShapeDtypeStruct(mistral.page_table_shape, jnp.int32))
    self.assertEqual(s.q_len, 2)
    # Nor can its unsplit kernel's finished out serve as a part: nothing to weigh it by.
    with self.assertRaisesRegex(kgen.ArgumentError, r"partials: the spec is unsplit .* without an "
                                r"lse to weigh it by; set \"splits\""):
      jax.eval_shape(lambda q, k, v, kv_lens, table: mistral.partials(q, k, v, kv_lens,
                                                                      page_table=table),
                     *self.structs(mistral),
                     jax.ShapeDtypeStruct(mistral.page_table_shape, jnp.int32))

  def test_every_checked_in_decode_spec_loads_as_a_decode(self):
    for name in ("gpt_oss_decode_sinks", "llama3_8b_decode", "long_context_128k_decode",
                 "mistral_7b_decode_sliding_window"):
      with self.subTest(spec=name):
        decode = kgen.jax.load(ROOT / "generated" / name)
        self.assertIsInstance(decode, kgen.jax.Decode)
        s = decode.signature.shape
        struct = jax.eval_shape(
            lambda *a, d=decode: d(*a[:4], page_table=a[4], sinks=a[5] if len(a) > 5 else None),
            *self.structs(decode), jax.ShapeDtypeStruct(decode.page_table_shape, jnp.int32),
            *([jax.ShapeDtypeStruct((s.q_heads,), jnp.float32)] if decode.signature.sinks else []))
        self.assertEqual(struct.shape, (s.batch, s.q_heads, s.q_len, s.head_dim_v))

  def test_a_decode_folder_is_not_an_attention(self):
    with self.assertRaisesRegex(kgen.GeneratedFolderError, "not an Attention; kgen.jax.load"):
      kgen.jax.Attention(ROOT / "generated/gpt_oss_decode_sinks")


if __name__ == "__main__":
  unittest.main()
