"""The tpu bundle gate (bench/tpu_static_cost.py --check) catches planted regressions.

Rows are shaped like the tool's own results; the gate must fail a kernel that takes more
than 2% more bundles per full step than recorded, or spills more, and pass one within.
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import tpu_static_cost as cost  # pylint: disable=wrong-import-position


def row(spec, bundles, spill_loads=100, spill_stores=90, kernel="kgen"):
  return {"spec": spec, "kernel": kernel, "bundles_per_step": {"full": bundles},
          "spills_per_step": {"full": {"loads": spill_loads, "stores": spill_stores}}}


RECORDED = cost.gate_figures([row("a", 1000), row("b", 2000)])


class BundleGate(unittest.TestCase):

  def test_recorded_figures_pass(self):
    self.assertEqual(cost.gate_failures([row("a", 1000), row("b", 2000)], RECORDED), [])

  def test_within_two_percent_passes(self):
    self.assertEqual(cost.gate_failures([row("a", 1020)], RECORDED), [])

  def test_faster_passes(self):
    self.assertEqual(cost.gate_failures([row("a", 800, 50, 40)], RECORDED), [])

  def test_slower_by_more_than_two_percent_fails(self):
    failures = cost.gate_failures([row("a", 1021), row("b", 2000)], RECORDED)
    self.assertEqual(len(failures), 1)
    self.assertIn("a: 1,021 bundles per full step, recorded 1,000", failures[0])

  def test_more_spill_loads_fail(self):
    failures = cost.gate_failures([row("b", 2000, spill_loads=101)], RECORDED)
    self.assertEqual(failures, ["b: full step spill loads 101, recorded 100"])

  def test_more_spill_stores_fail(self):
    failures = cost.gate_failures([row("b", 2000, spill_stores=91)], RECORDED)
    self.assertEqual(failures, ["b: full step spill stores 91, recorded 90"])

  def test_unrecorded_kernel_fails(self):
    failures = cost.gate_failures([row("c", 10)], RECORDED)
    self.assertIn("c: no recorded figures", failures[0])

  def test_splash_rows_are_not_gated(self):
    self.assertEqual(cost.gate_figures([row("a", 5000, kernel="splash")]), {})

  def test_a_plan_without_full_tiles_is_held_to_its_partial_step(self):
    only_partial = {"spec": "p", "kernel": "kgen", "gate_step": "partial",
                    "bundles_per_step": {"full": 700, "partial": 700},
                    "spills_per_step": {"full": {"loads": 5, "stores": 5},
                                        "partial": {"loads": 5, "stores": 5}}}
    recorded = cost.gate_figures([only_partial])
    self.assertEqual(recorded["p"]["step"], "partial")
    self.assertEqual(cost.gate_failures([only_partial], recorded), [])
    slower = dict(only_partial, bundles_per_step={"full": 700, "partial": 720})
    self.assertEqual(len(cost.gate_failures([slower], recorded)), 1)
    # A record of the full step no longer compares with a partial one: re-record.
    failures = cost.gate_failures([only_partial], cost.gate_figures([row("p", 710)]))
    self.assertEqual(len(failures), 1)
    self.assertIn("partial step measured", failures[0])


class DocumentSteps(unittest.TestCase):
  """The walk's document kinds (bench/tpu_static_cost.py DocumentSteps): the range tables a
  step reads as SMEM words (rows of 128), and each grid step's kind for packed documents,
  as generator/document_skips.h's document_step gives it."""

  OPERANDS = {"scalar_prefetch": [{"name": "data_next", "shape": [1, 4, 4]},
                                  {"name": "block_mask", "shape": [1, 4, 4]},
                                  {"name": "q_block_ranges", "shape": [1, 2, 4]},
                                  {"name": "kv_block_ranges", "shape": [1, 2, 4]}]}
  SPEC = {"shape": {"q_len": 1024, "kv_len": 1024}}
  # Causal over four blocks of 256: step j of q block i loads kv block j (j <= i).
  PLAN = {"block_q": 256, "block_kv": 256,
          "data_next": [[[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]]]}

  def test_tables_give_min_in_row_0_and_max_in_row_1(self):
    steps = cost.DocumentSteps(self.OPERANDS, self.PLAN, self.SPEC)
    for kind, ((q_min, q_max), (kv_min, kv_max)) in cost.DocumentSteps.KINDS.items():
      tables = steps.tables(kind)
      self.assertEqual((tables[2](3), tables[2](128 + 3)), (q_min, q_max), kind)
      self.assertEqual((tables[3](0), tables[3](128)), (kv_min, kv_max), kind)

  def test_kinds_of_packed_documents(self):
    # Documents of 384: blocks [0, 0], [0, 1], [1, 1], [2, 2].
    steps = cost.DocumentSteps(self.OPERANDS, self.PLAN, self.SPEC, [384])
    kinds = [[steps.kind(0, i, j) for j in range(i + 1)] for i in range(4)]
    self.assertEqual(kinds, [["one_document"], ["compare", "compare"],
                             ["dead", "compare", "one_document"],
                             ["dead", "dead", "dead", "one_document"]])

  def test_without_lengths_every_step_compares(self):
    steps = cost.DocumentSteps(self.OPERANDS, self.PLAN, self.SPEC)
    self.assertEqual(steps.kind(0, 3, 0), "compare")


if __name__ == "__main__":
  unittest.main()
