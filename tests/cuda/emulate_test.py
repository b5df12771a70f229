#!/usr/bin/env python3
"""emulate.py's own checks (verify/cuda/emulate.py). The count check of a work-items sample
(--sample work-items): the q blocks a sampled persistent run wrote must be exactly the work items
its CTAs own. Planted: one block too few (an item skipped), one too many (a CTA writing outside
its items), no launch. The harness must be newer than its kernel's sources. Planted: a kernel
written after the harness was linked."""

import os
import sys
import tempfile
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


class StaleHarness(unittest.TestCase):
    def test_a_kernel_written_after_its_harness_is_named(self):
        with tempfile.TemporaryDirectory() as folder:
            program, forward, backward = (os.path.join(folder, name) for name in ("run", "k.sm90a.cu", "k.sm90a.backward.cu"))
            for path in (program, forward, backward):
                open(path, "w", encoding="utf-8").close()
            os.utime(program, (1000, 1000))
            os.utime(forward, (900, 900))
            os.utime(backward, (900, 900))
            self.assertEqual(emulate.changed_since_built(program, [forward, backward]), [])
            os.utime(backward, (1100, 1100))  # make gen rewrote the backward after the link
            self.assertEqual(emulate.changed_since_built(program, [forward, backward]), [backward])

    def test_the_harness_sources_it_watches_exist(self):
        # A harness built before its inputs or checks changed is refused too; a renamed source
        # must not drop out of that unnoticed.
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
        for role, sources in emulate.HARNESS_SOURCES.items():
            for source in sources:
                self.assertTrue(os.path.exists(os.path.join(root, source)), f"{role}: {source}")


if __name__ == "__main__":
    unittest.main()
