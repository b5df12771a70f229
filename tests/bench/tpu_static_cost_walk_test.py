"""The walk of a grid step (bench/tpu_static_cost.py) on a hand-written bundle listing.

The listing is a grid loop of 10 steps whose step counter lives in a spill slot, stored once
before the loop (0) and again at the end of every step (counter + 1), and whose body is guarded
by the software pipeline's `step >= 1 && step < 9` (kgen's dkv at 512/1024/256 compiles to
this shape). A step in the middle of the grid runs the body: the walk must not read the slot
at its pre-loop store, which would send every step down the empty path (the 2026-11-28 bug
behind a backward full step at "200% of the MXU floor").
"""

import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import tpu_static_cost as cost  # pylint: disable=wrong-import-position

FILLER = "%s{n}_s9 = smov {n}"
# (instruction, note after the bundle), one bundle each; the delay slots of a branch are
# the 4 bundles after it.
BUNDLES = [
    ("%s1_s1 = smov 0", ""),
    ("%2 = sst [smem:[#allocation7_spill]] %s1_s1", ""),
    ("%s3_s3 = sld [smem:[#allocation7_spill]]", "/* Start region 1 */"),  # the grid loop
    ("%p4_p0 = scmp.ge.s32.totalorder %s3_s3, 1", ""),
    ("%p5_p1 = scmp.lt.s32.totalorder %s3_s3, 9", ""),
    ("%p6_p2 = pnand %p4_p0, %p5_p1", ""),
    ("%7 = sbr.rel (%p6_p2) target = $region3", ""),  # not a middle step: skip the body
] + [(FILLER.format(n=100 + k), "") for k in range(4)] + [  # delay slots
    (FILLER.format(n=200 + k), "") for k in range(10)] + [  # the body
    ("%s30_s9 = sadd.s32 1, %s3_s3", "/* Start region 3 */"),
    ("%31 = sst [smem:[#allocation7_spill]] %s30_s9", ""),
    ("%p32_p3 = scmp.ge.s32.totalorder %s30_s9, 10 /* loop exit test */", ""),
    ("%33 = sbr.rel (!%p32_p3) target = $region1", ""),
] + [(FILLER.format(n=300 + k), "") for k in range(4)] + [("%s40_s9 = smov 0", "")]

BODY_AND_EDGES = 9 + 10 + 8  # loop top to the guard's delay slots, the body, the step's end


class SpilledStepCounter(unittest.TestCase):
    def test_a_middle_step_walks_the_body(self):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "kernel-final_bundles.txt")
            with open(path, "w", encoding="utf-8") as f:
                for addr, (instruction, note) in enumerate(BUNDLES):
                    f.write(f"   {hex(addr)}   :  {{ {instruction} }} {note}\n")
            listing = cost.Listing(path, None)
            self.assertEqual(cost.grid_loop(listing), (2, 24, 10))
            walked = cost.walk(listing, {"grid": {}, "tile": 2, "mask_operand": 0})
            self.assertEqual(walked["bundles"], BODY_AND_EDGES)
            # The guard reads the step counter, unknown at a middle step: said, not guessed.
            self.assertEqual(walked["branches"], [(6, "unresolved")])


if __name__ == "__main__":
    unittest.main()
