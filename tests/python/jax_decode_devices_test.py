"""kgen.jax's decode across devices (docs/decode.md, "Across devices") on a 4-device CPU mesh:
each device holds a contiguous quarter of every sequence's cache positions, runs the generated
kernel on it through kgen's CPU executor, and the partials are merged by pmax and psum under
jax.shard_map. The result equals the float64 reference of §8 and the single-device result of
the same kernel, within §3's tolerances, for lengths that leave shards empty, end mid-block
and end on a shard's edge; the planted bugs (the sink added on every device, the merge without
its max subtraction, a device's kv_lens not shifted to its shard) fail.

    KGEN_TEST_GENERATED=<build>/tests/python/generated python jax_decode_devices_test.py

A process of its own: the four CPU devices must be asked for before jax is imported.
"""
import os

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                           " --xla_force_host_platform_device_count=4").strip()

import pathlib  # noqa: E402
import sys  # noqa: E402
import unittest  # noqa: E402
from unittest import mock  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh  # noqa: E402

import kgen  # noqa: E402
import kgen.jax  # noqa: E402
from kgen.jax import decode_across_devices  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from decode_reference import dense_decode, logical_cache, to_pool  # noqa: E402
from jax_decode_test import TOLERANCE, absolute_error, in_dtype, relative_error  # noqa: E402

GENERATED = pathlib.Path(os.environ["KGEN_TEST_GENERATED"])
DEVICES = 4
AXIS = "kv"


class ShardedCase:
  """A cache of DEVICES·kv_len positions per sequence, laid out as `sharded` takes it: a
  contiguous cache split along positions, or one page pool per device side by side with a
  page table whose columns name pages of their own device's pool."""

  def __init__(self, decode, kv_lens, *, seed=0, big=0.0, sinks=None):
    signature, s = decode.signature, decode.signature.shape
    dtype = jnp.dtype(signature.dtype)
    self.capacity = s.kv_len
    self.kv_lens = np.asarray(kv_lens, np.int32)
    q, k, v = logical_cache(signature, DEVICES * s.kv_len, self.kv_lens, seed, big=big)
    self.q, self.q_ref = in_dtype(q, dtype)
    k, self.k_ref = in_dtype(k, dtype)
    v, self.v_ref = in_dtype(v, dtype)
    self.sinks = sinks
    self.shards = []  # per device: (k, v, page table) as one device's kernel reads them
    for i in range(DEVICES):
      k_i, v_i = (np.asarray(x[:, :, i * s.kv_len:(i + 1) * s.kv_len]) for x in (k, v))
      table = None
      if decode.paged:
        k_i, table = to_pool(k_i, decode.page_size, seed + 10 + i)
        v_i, _ = to_pool(v_i, decode.page_size, seed + 10 + i)
      self.shards.append((jnp.asarray(k_i), jnp.asarray(v_i), table))
    axis = 1 if decode.paged else 2  # pools side by side, or positions
    self.k = jnp.concatenate([shard[0] for shard in self.shards], axis)
    self.v = jnp.concatenate([shard[1] for shard in self.shards], axis)
    self.page_table = (np.concatenate([shard[2] for shard in self.shards], 1) if decode.paged
                       else None)
    self.reference = dense_decode(signature, self.q_ref, self.k_ref, self.v_ref, self.kv_lens,
                                  sinks)

  def sharded(self, decode):
    mesh = Mesh(np.array(jax.devices()[:DEVICES]), (AXIS,))
    function = decode_across_devices.sharded(decode, mesh, AXIS, return_lse=True)
    return jax.jit(function)(self.q, self.k, self.v, self.kv_lens, self.page_table, self.sinks)

  def single_device(self, decode):
    """The same kernel on one device, shard after shard (each with its own kv_lens), its
    partials merged in float64 by §8's formula, the sink once."""
    partials = jax.jit(lambda q, k, v, lens, table: decode.partials(q, k, v, lens,
                                                                    page_table=table))
    outs, lses = [], []
    for i, (k, v, table) in enumerate(self.shards):
      lens = np.clip(self.kv_lens - i * self.capacity, 0, self.capacity).astype(np.int32)
      out_s, lse_s = partials(self.q, k, v, lens, table)
      outs.append(np.asarray(out_s, np.float64))
      lses.append(np.asarray(lse_s, np.float64))
    out_s, lse_s = np.concatenate(outs), np.concatenate(lses)
    logits = list(lse_s)
    if self.sinks is not None:
      logits.append(np.broadcast_to(self.sinks[None, :, None], lse_s.shape[1:]))
    lse = np.logaddexp.reduce(np.stack(logits), axis=0)
    with np.errstate(invalid="ignore"):
      weights = np.where(np.isneginf(lse_s), 0.0, np.exp(lse_s - lse))
    return np.sum(weights[..., None] * out_s, axis=0), lse


# Lengths over a cache of 4 shards of C positions: sequence 0 ends mid-block in shard 1 (so
# shards 2 and 3 are empty), sequence 1 fills three shards and ends one position into the
# fourth, sequence 2 ends exactly on shard 2's last position (shard 3 empty).
def lengths(decode):
  c, block = decode.signature.shape.kv_len, decode.block_kv
  return [c + block + block // 2 + 3, 3 * c + 1, 3 * c, 4 * c][:decode.signature.shape.batch]


def merge_with_the_sink_on_every_device(out_s, lse_s, sinks, axis_name):
  """Planted: each device adds the sink to its own sum before the psum."""
  m = jnp.maximum(jax.lax.pmax(jnp.max(lse_s, axis=0), axis_name), sinks)
  weights = jnp.exp(lse_s - m)
  numerator, denominator = jax.lax.psum(
      (jnp.sum(weights[..., None] * out_s, axis=0),
       jnp.sum(weights, axis=0) + jnp.exp(sinks - m)), axis_name)
  return numerator / denominator[..., None], m + jnp.log(denominator)


def merge_without_the_max(out_s, lse_s, sinks, axis_name):
  """Planted: exp(lse_s) unshifted, which overflows f32 for lse past 88.7."""
  weights = jnp.exp(lse_s)
  numerator, denominator = jax.lax.psum(
      (jnp.sum(weights[..., None] * out_s, axis=0), jnp.sum(weights, axis=0)), axis_name)
  if sinks is not None:
    denominator = denominator + jnp.exp(sinks)
  return numerator / denominator[..., None], jnp.log(denominator)


def kv_lens_not_shifted(kv_lens, shard, capacity):
  """Planted: every device reads its shard as if it held the sequence's first positions."""
  del shard
  return jnp.clip(jnp.asarray(kv_lens, jnp.int32), 0, capacity)


class AcrossFourDevices(unittest.TestCase):

  @classmethod
  def setUpClass(cls):
    assert len(jax.devices()) == DEVICES, jax.devices()
    cls.paged = kgen.jax.load(GENERATED / "jax_decode_paged_sinks")
    cls.contiguous = kgen.jax.load(GENERATED / "jax_decode_contiguous")
    # Sinks near the rows' lse (about 8 here), so that a sink counted four times shows in out.
    sinks = np.linspace(2.0, 9.0, cls.paged.signature.shape.q_heads).astype(np.float32)
    cls.cases = {
        "paged_sinks": (cls.paged, ShardedCase(cls.paged, lengths(cls.paged), sinks=sinks)),
        "contiguous_unsplit": (cls.contiguous,
                               ShardedCase(cls.contiguous, lengths(cls.contiguous))),
    }
    # Logits of about 0.125 · 30² = 112: exp overflows f32 without the max subtraction.
    cls.large = ShardedCase(cls.paged, lengths(cls.paged), big=30.0, seed=5,
                            sinks=np.full(cls.paged.signature.shape.q_heads, 100.0, np.float32))

  def assert_matches(self, decode, case, result, reference):
    out, lse = result
    out_tolerance, lse_tolerance = TOLERANCE[decode.signature.dtype]
    self.assertTrue(np.all(np.isfinite(np.asarray(out, np.float32))))
    self.assertLessEqual(relative_error(out, reference[0]), out_tolerance)
    self.assertLessEqual(absolute_error(lse, reference[1]), lse_tolerance)
    del case

  def test_the_lengths_cover_empty_shards_and_mid_block_ends(self):
    decode, case = self.cases["paged_sinks"]
    per_shard = [decode_across_devices.kv_lens_of_shard(case.kv_lens, i, case.capacity)
                 for i in range(DEVICES)]
    per_shard = np.asarray(per_shard)  # [device, batch]
    self.assertIn(0, per_shard[:, 0])  # a sequence for which some shard is empty
    self.assertTrue(np.any((per_shard > 0) & (per_shard < case.capacity) &
                           (per_shard % decode.block_kv != 0)))  # one that ends mid-block
    self.assertEqual(list(per_shard[:, 1]), [case.capacity] * 3 + [1])

  def test_sharded_equals_the_reference_and_the_single_device_result(self):
    for name, (decode, case) in self.cases.items():
      with self.subTest(case=name):
        result = case.sharded(decode)
        s = decode.signature.shape
        self.assertEqual(result[0].shape, (s.batch, s.q_heads, s.q_len, s.head_dim_v))
        self.assertEqual(result[0].dtype, jnp.dtype(decode.signature.dtype))
        self.assert_matches(decode, case, result, case.reference)
        self.assert_matches(decode, case, result, case.single_device(decode))

  def test_large_logits_stay_finite(self):
    result = self.large.sharded(self.paged)
    self.assertGreater(np.min(self.large.reference[1]), 90.0)
    self.assert_matches(self.paged, self.large, result, self.large.reference)

  def test_a_cache_on_one_device_equals_the_single_device_call(self):
    decode = self.paged
    sinks = self.cases["paged_sinks"][1].sinks
    case = ShardedCase(decode, [1, decode.block_kv + 1, decode.signature.shape.kv_len],
                       sinks=sinks, seed=3)
    k, v, table = case.shards[0]
    single = decode(case.q, k, v, case.kv_lens, page_table=table, sinks=sinks, return_lse=True)
    self.assert_matches(decode, case, case.sharded(decode), single)
    self.assert_matches(decode, case, single, case.reference)

  def test_planted_bugs_fail(self):
    decode, case = self.cases["paged_sinks"]
    plants = [("sink added on every device", "merge_partials",
               merge_with_the_sink_on_every_device, case),
              ("merge without the max subtraction", "merge_partials", merge_without_the_max,
               self.large),
              ("kv_lens not shifted to the shard", "kv_lens_of_shard", kv_lens_not_shifted, case)]
    for what, name, planted, planted_case in plants:
      with self.subTest(plant=what), mock.patch.object(decode_across_devices, name, planted):
        with self.assertRaises(AssertionError):
          self.assert_matches(decode, planted_case, planted_case.sharded(decode),
                              planted_case.reference)

  def test_specs_it_cannot_shard_are_refused(self):
    window = kgen.jax.load(GENERATED / "jax_decode_window_mqa")
    mesh = Mesh(np.array(jax.devices()), (AXIS,))
    with self.assertRaisesRegex(kgen.ArgumentError, "across devices: q_len 3: a shard before"):
      decode_across_devices.sharded(window, mesh, AXIS)
    gpt_oss = kgen.jax.load(pathlib.Path(__file__).resolve().parents[2] /
                            "generated/gpt_oss_decode_sinks")
    with self.assertRaisesRegex(kgen.ArgumentError, "across devices: mask .* a window"):
      decode_across_devices.sharded(gpt_oss, mesh, AXIS)


if __name__ == "__main__":
  unittest.main()
