#!/usr/bin/env python3
"""The count check of a work-items sample (verify/cuda/emulate.py, --sample work-items): the q
blocks a sampled persistent run wrote must be exactly the work items its CTAs own. Planted: one
block too few (an item skipped), one too many (a CTA writing outside its items), no launch."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "verify", "cuda"))
import emulate  # noqa: E402


def launch(ctas_in_grid, ctas_run):
    return [{"kernel": "forward", "ctas_in_grid": ctas_in_grid, "ctas_run": ctas_run}]


class OwnedBlocks(unittest.TestCase):
    def test_the_items_of_the_first_ctas_are_counted_round_robin(self):
        # 1,024 items over 148 CTAs: CTA 0 walks 0, 148, ..., 888 (7 items), CTA 1 walks 7 too.
        self.assertTrue(emulate.owned_blocks_checked({"check": {"blocks_checked": 14}}, launch(148, 2), 1024))
        # 300 items: CTAs 0-3 own 3 each (0, 148, 296 ...), CTA 4 two.
        self.assertTrue(emulate.owned_blocks_checked({"check": {"blocks_checked": 14}}, launch(148, 5), 300))

    def test_a_missing_or_extra_block_fails(self):
        self.assertFalse(emulate.owned_blocks_checked({"check": {"blocks_checked": 13}}, launch(148, 2), 1024))
        self.assertFalse(emulate.owned_blocks_checked({"check": {"blocks_checked": 15}}, launch(148, 2), 1024))

    def test_a_run_without_the_forward_launch_or_the_count_fails(self):
        self.assertFalse(emulate.owned_blocks_checked({"check": {"blocks_checked": 14}}, [], 1024))
        self.assertFalse(emulate.owned_blocks_checked({}, launch(148, 2), 1024))


if __name__ == "__main__":
    unittest.main()
