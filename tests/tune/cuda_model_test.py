#!/usr/bin/env python3
"""The CUDA tuning model's arithmetic (verify/cuda/tune_measure.py; docs/tuning.md): occupancy,
one tile's cycles, the dispatch of work items to CTA slots, the items of a block plan. No nvcc."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "verify", "cuda"))
import tune_measure as tm  # pylint: disable=wrong-import-position

H100 = tm.DEVICES["sm90a"]


class Occupancy(unittest.TestCase):
  def test_registers_and_shared_memory_each_limit(self):
    self.assertEqual(tm.ctas_per_sm(H100, 168, 384, 100_000), 1)       # 64,512 of 65,536 registers
    self.assertEqual(tm.ctas_per_sm(H100, 64, 256, 100 * 1024), 2)     # shared memory: 227 KiB / 100 KiB
    self.assertEqual(tm.ctas_per_sm(H100, 64, 256, 228 * 1024), 0)     # does not fit

  def test_a_tiling_with_no_resident_cta_is_an_error(self):
    facts = {"registers": 255, "threads": 384, "smem_bytes": 1024, "block_q": 128, "block_kv": 128,
             "d": 128, "dv": 128, "pass": "forward", "items": [1]}
    with self.assertRaisesRegex(ValueError, "no CTA fits an SM"):
      tm.model_cost(H100, facts)


class TileCycles(unittest.TestCase):
  def test_the_larger_of_tensor_and_exponential_time_plus_the_handoff(self):
    # 128 x 128 x (128 + 128) x 2 FLOPs at 4096 a cycle: 2048; 16,384 exponentials at 16: 1024.
    t = tm.tile_cycles(H100, 128, 128, 128, 128, "forward")
    self.assertEqual(t["tensor"], 2048)
    self.assertEqual(t["cycles"], 2048 + tm.HANDOFF_CYCLES)
    # head_dim 32: the exponentials bound it.
    self.assertEqual(tm.tile_cycles(H100, 128, 128, 32, 32, "forward")["cycles"], 1024 + tm.HANDOFF_CYCLES)
    # The backward's five matmuls: (3 d + 2 dv) per pair.
    self.assertEqual(tm.tile_cycles(H100, 64, 128, 128, 128, "backward")["tensor"], 2 * 64 * 128 * 640 / 4096)


class Dispatch(unittest.TestCase):
  def test_items_go_in_grid_order_to_the_first_free_slot(self):
    self.assertEqual(tm.makespan([3, 1, 1, 1], 2, 10), 30)
    # The long item last: not rescheduled (the hardware deals CTAs in order).
    self.assertEqual(tm.makespan([1, 1, 1, 3], 2, 10), 40)
    self.assertEqual(tm.makespan([2] * 264, 132, 5), 20)  # two full waves

  def test_co_resident_ctas_share_the_sm(self):
    base = {"threads": 128, "block_q": 64, "block_kv": 64, "d": 64, "dv": 64, "pass": "forward",
            "items": [4] * 264}
    one = tm.model_cost(H100, dict(base, registers=255, smem_bytes=150 * 1024))
    two = tm.model_cost(H100, dict(base, registers=128, smem_bytes=100 * 1024))
    self.assertEqual((one["ctas_per_sm"], two["ctas_per_sm"]), (1, 2))
    self.assertEqual(one["cost"], two["cost"])  # the same work on the same units


class BlockPlanItems(unittest.TestCase):
  def test_live_tiles_per_q_block_of_each_head(self):
    plan = {"grid": [2, 2, 3], "full_kv_blocks": [[[], [0], [0, 1]]], "partial_kv_blocks": [[[0], [1], [2]]]}
    self.assertEqual(tm.forward_items(plan), [1, 2, 3] * 4)
    per_head = {"grid": [1, 2, 2], "full_kv_blocks": [[[0], [0, 1]], [[], []]],
                "partial_kv_blocks": [[[], []], [[0], [1]]]}
    self.assertEqual(tm.forward_items(per_head), [1, 2, 1, 1])


class Decode(unittest.TestCase):
  # llama3_8b_decode's shape: 4 sequences x 8 kv heads, a q tile of 4 rows, d 128, bf16, 32k positions.
  BASE = {"registers": 255, "threads": 256, "smem_bytes": 100 * 1024, "d": 128, "dv": 128, "dtype_bytes": 2,
          "rows": 4}
  # One block of 128 positions: its K and V bytes at the SM's share of HBM (more than its matmuls'
  # 2 x 64 x 128 x 256 / 4096 = 1,024 cycles and its 512 cycles of exponentials).
  BLOCK = 128 * 256 * 2 / (3.35e12 / 1.83e9 / 132) + tm.HANDOFF_CYCLES

  def facts(self, splits, rows=4, q_tiles=1):
    return dict(self.BASE, block_kv=128, kv_blocks=256, splits=splits, ctas=32 * splits * q_tiles, rows=rows)

  def combine(self, partial_rows):
    return tm.LAUNCH_CYCLES + 2 * partial_rows * 129 * 4 / H100["hbm_bytes_per_cycle"]

  def test_unsplit_one_wave_walks_every_block(self):
    out = tm.decode_cost(H100, self.facts(1))
    self.assertEqual(out["tile_cycles"], round(self.BLOCK))
    self.assertAlmostEqual(out["cost"], (256 + 1) * self.BLOCK)  # 32 CTAs, no combine

  def test_splits_fill_the_chip_and_pay_a_combine(self):
    # 4 splits: 128 CTAs of 64 blocks, one wave; the combine reads 128 x 4 partial rows.
    self.assertAlmostEqual(tm.decode_cost(H100, self.facts(4))["cost"], 65 * self.BLOCK + self.combine(128 * 4))
    # 8 splits: 256 CTAs on 132 SMs, two waves of 32 blocks each.
    self.assertAlmostEqual(tm.decode_cost(H100, self.facts(8))["cost"], 2 * 33 * self.BLOCK + self.combine(256 * 4))
    costs = [tm.decode_cost(H100, self.facts(s))["cost"] for s in (1, 2, 4, 8)]
    self.assertEqual(min(range(4), key=costs.__getitem__), 2)  # 4 splits: the most SMs in one wave

  def test_a_q_tile_past_64_rows_is_another_cta_not_more_partial_rows(self):
    # 128 rows: two q tiles per (sequence, kv head, split), each with 64 of the rows.
    out = tm.decode_cost(H100, self.facts(2, rows=128, q_tiles=2))
    self.assertAlmostEqual(out["cost"], 129 * self.BLOCK + self.combine(64 * 128))


if __name__ == "__main__":
  unittest.main()
