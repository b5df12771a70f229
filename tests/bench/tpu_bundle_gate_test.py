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


if __name__ == "__main__":
  unittest.main()
