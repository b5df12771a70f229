#!/usr/bin/env python3
"""verify/cuda/sass_schedule.py on SASS hand-reduced from a real kernel (sass_fixtures/) and on
small listings written here: the facts it reads, and the schedule promises it holds a kernel to
(a promised overlap that the SASS lacks fails; the same promise on SASS that has it passes)."""
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "verify", "cuda"))

import compile_check  # noqa: E402  pylint: disable=wrong-import-position
import sass_schedule  # noqa: E402  pylint: disable=wrong-import-position

PROMISE = {"min_ex2_between_waits": 4, "max_tma_per_v_tile": 2}


def fixture(name):
    with open(os.path.join(HERE, "sass_fixtures", name), encoding="utf-8") as f:
        return f.read()


def listing(*lines):
    """A one-function cuobjdump listing of these instructions at 0x0, 0x10, ..."""
    body = "\n".join(f"        /*{16 * k:04x}*/      {line} ;" for k, line in enumerate(lines))
    return "\tcode for sm_90a\n\t\tFunction : kernel\n" + body + "\n"


class Fixtures(unittest.TestCase):
    def test_missing_overlap_is_read_and_fails_the_promise(self):
        facts = sass_schedule.schedule_facts(fixture("sm90a_overlap_missing.sass"), exponentials_per_tile=4)
        self.assertEqual(facts["ex2_between_waits"], 0)
        self.assertEqual(facts["ex2_per_iteration"], 6)  # 4 of the tile, 2 rescale factors
        self.assertEqual(facts["mma_per_iteration"], 4)
        self.assertEqual((facts["tma_per_k_tile"], facts["tma_per_v_tile"]), (2, 4))
        failures = sass_schedule.promise_failures(facts, PROMISE)
        self.assertEqual(len(failures), 2, failures)
        self.assertIn("0 softmax exponentials (MUFU.EX2) between the wgmma waits", failures[1])
        self.assertIn("4 UTMALDG per V tile, the plan promises at most 2", failures[0])

    def test_present_overlap_passes_the_same_promise(self):
        facts = sass_schedule.schedule_facts(fixture("sm90a_overlap_present.sass"), exponentials_per_tile=4)
        self.assertEqual((facts["ex2_between_waits"], facts["ex2_between_waits_most"]), (4, 4))
        self.assertEqual((facts["tma_per_k_tile"], facts["tma_per_v_tile"]), (2, 2))
        self.assertEqual(sass_schedule.promise_failures(facts, PROMISE), [])

    def test_plans_promise_whole_tile_v_loads(self):
        # The promise kgen gen writes for d128 kernels (generated/: an sm90a forward and decode,
        # an sm100a forward): V in as many boxes as K, two. A V tile cut into more boxes (the
        # old layout, its features tiled first, took 32; the fixture's planted group 4) fails it.
        generated = os.path.join(HERE, "..", "..", "generated")
        missing = sass_schedule.schedule_facts(fixture("sm90a_overlap_missing.sass"))
        present = sass_schedule.schedule_facts(fixture("sm90a_overlap_present.sass"))
        for name, kernel in (("llama3_8b_causal", "sm90a"), ("llama3_8b_decode", "sm90a"), ("splash", "sm100a")):
            promise = compile_check.schedule_promise(os.path.join(generated, name, f"{name}.{kernel}.cu"))
            loads = {key: promise[key] for key in ("max_tma_per_k_tile", "max_tma_per_v_tile")}
            self.assertEqual(loads, {"max_tma_per_k_tile": 2, "max_tma_per_v_tile": 2}, name)
            self.assertEqual(sass_schedule.promise_failures(missing, loads),
                             ["schedule: 4 UTMALDG per V tile, the plan promises at most 2"], name)
            self.assertEqual(sass_schedule.promise_failures(present, loads), [], name)

    def test_no_promise_no_failure(self):
        facts = sass_schedule.schedule_facts(fixture("sm90a_overlap_missing.sass"))
        self.assertEqual(sass_schedule.promise_failures(facts, None), [])

    def test_retry_stub_jumping_back_is_not_a_loop(self):
        # The loops: the consumer's, the producer's and the stub's own spin loop; the stub's
        # jump back into the consumer's loop (BRA 0x50) is no back edge.
        code = sass_schedule.parse_functions(fixture("sm90a_overlap_missing.sass"))["fixture_forward_kernel"]
        flow = sass_schedule.ControlFlow(code)
        headers = [code[flow.blocks[h][0]].address for h, _ in flow.loops]
        self.assertEqual(headers, [0x30, 0x1d0, 0x290])

    def test_cli_exit_status(self):
        import subprocess
        script = os.path.join(HERE, "..", "..", "verify", "cuda", "sass_schedule.py")
        for name, status in (("sm90a_overlap_missing.sass", 1), ("sm90a_overlap_present.sass", 0)):
            run = subprocess.run([sys.executable, script, os.path.join(HERE, "sass_fixtures", name),
                                  "--promise", json.dumps(PROMISE)], capture_output=True, text=True)
            self.assertEqual(run.returncode, status, run.stdout + run.stderr)


class Listings(unittest.TestCase):
    def test_fewest_and_most_on_the_paths_between_the_waits(self):
        # Two exponentials only on the path that skips the branch: fewest 0, most 2.
        sass = listing("HGMMA.64x64x16.F32.BF16 R24, gdesc[UR8], RZ, !UPT, gsb0",   # 0x00 loop head
                       "WARPGROUP.DEPBAR.LE gsb0, 0x1",
                       "@P0 BRA 0x50",
                       "MUFU.EX2 R24, R24",
                       "MUFU.EX2 R25, R25",
                       "WARPGROUP.DEPBAR.LE gsb0, 0x0",                               # 0x50
                       "MUFU.EX2 R26, R26",
                       "@P1 BRA 0x0",
                       "EXIT")
        facts = sass_schedule.schedule_facts(sass)
        self.assertEqual((facts["ex2_between_waits"], facts["ex2_between_waits_most"]), (0, 2))
        self.assertEqual(facts["ex2_per_iteration"], 3)
        self.assertEqual(sass_schedule.promise_failures(facts, {"min_ex2_between_waits": 1}),
                         ["schedule: 0 softmax exponentials (MUFU.EX2) between the wgmma waits of the main "
                          "loop (fewest on a path), the plan promises at least 1"])

    def test_softcap_tanh_is_not_a_softmax_exponential(self):
        # A softcap's tanh is one MUFU.EX2 and one MUFU.RCP per score (score_mods.cuh): two
        # tanh and one softmax exponential between the waits count 1.
        sass = listing("HGMMA.64x64x16.F32.BF16 R24, gdesc[UR8], RZ, !UPT, gsb0",
                       "WARPGROUP.DEPBAR.LE gsb0, 0x1",
                       "MUFU.EX2 R24, R24",
                       "MUFU.EX2 R25, R25",
                       "MUFU.RCP R24, R24",
                       "MUFU.RCP R25, R25",
                       "MUFU.EX2 R26, R26",
                       "WARPGROUP.DEPBAR.LE gsb0, 0x0",
                       "MUFU.EX2 R27, R27",
                       "@P1 BRA 0x0",
                       "EXIT")
        facts = sass_schedule.schedule_facts(sass)
        self.assertEqual(facts["ex2_between_waits"], 1)
        self.assertEqual((facts["ex2_per_iteration"], facts["rcp_per_iteration"]), (2, 2))

    def test_waits_serialized_have_no_between(self):
        # Only waits for all (ptxas serialized the products): no pair, the promise fails.
        sass = listing("HGMMA.64x64x16.F32.BF16 R24, gdesc[UR8], RZ, !UPT, gsb0",
                       "WARPGROUP.DEPBAR.LE gsb0, 0x0",
                       "MUFU.EX2 R24, R24",
                       "@P1 BRA 0x0",
                       "EXIT")
        facts = sass_schedule.schedule_facts(sass)
        self.assertIsNone(facts["ex2_between_waits"])
        self.assertTrue(sass_schedule.promise_failures(facts, {"min_ex2_between_waits": 0}))

    def test_uniform_predicate_branch_falls_through(self):
        # BRA.U !UP0, target is conditional: the block after it is reachable and in the loop.
        sass = listing("UTCHMMA gdesc[UR12], gdesc[UR10], tmem[UR15], tmem[UR38], idesc[UR39], !UPT",
                       "BRA.U !UP0, 0x30",
                       "UTCHMMA tmem[UR20], gdesc[UR10], tmem[UR30], tmem[UR38], idesc[UR39], UP0",
                       "@P0 BRA 0x0",
                       "EXIT")
        facts = sass_schedule.schedule_facts(sass)
        self.assertEqual((facts["mma"], facts["mma_per_iteration"]), ("UTCHMMA", 2))

    def test_named_barriers_exclude_barrier_zero(self):
        sass = listing("BAR.SYNC.DEFER_BLOCKING 0x0",
                       "HGMMA.64x64x16.F32.BF16 R24, gdesc[UR8], RZ, !UPT, gsb0",
                       "BAR.ARV 0x2, 0x100",
                       "BAR.SYNC.DEFER_BLOCKING 0x1, 0x100",
                       "@P1 BRA 0x10",
                       "BAR.SYNC.DEFER_BLOCKING R12, 0x80",
                       "EXIT")
        facts = sass_schedule.schedule_facts(sass)
        self.assertEqual((facts["bar_sync"], facts["bar_arv"]), (2, 1))
        self.assertEqual((facts["bar_sync_in_main_loop"], facts["bar_arv_in_main_loop"]), (1, 1))
        self.assertEqual(sass_schedule.promise_failures(facts, {"min_bar_sync_in_main_loop": 2}),
                         ["schedule: 1 named BAR.SYNC in the main loop, the plan promises at least 2"])

    def test_v_waited_before_k_is_still_v(self):
        # The sm90a decode's order: wait V(t-1), wait K(t), S = Q K^T, O += P V. K's wait is
        # the last before P V; V's barrier is the last other one (2 boxes for K, 4 for V).
        sass = listing("SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [R9+UR20+0x24028], R8",
                       "SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [R9+UR20+0x24008], R8",
                       "HGMMA.64x128x16.F32.BF16 R24, gdesc[UR8], RZ, !UPT, gsb0",
                       "HGMMA.64x128x16.F32.BF16 R88, R180, gdesc[UR12].tnspB, R88, gsb0",
                       "WARPGROUP.DEPBAR.LE gsb0, 0x1",
                       "WARPGROUP.DEPBAR.LE gsb0, 0x0",
                       "@P1 BRA 0x0",
                       "SYNCS.ARRIVE.TRANS64 RZ, [R5+UR8+0x24008], R2",
                       "UTMALDG.4D [UR32], [UR10], desc[UR24]",
                       "UTMALDG.4D [UR16], [UR10], desc[UR24]",
                       "SYNCS.ARRIVE.TRANS64 RZ, [R5+UR8+0x24028], R2",
                       "UTMALDG.4D [UR16], [UR10], desc[UR12]",
                       "UTMALDG.4D [UR24], [UR10], desc[UR12]",
                       "UTMALDG.4D [UR32], [UR10], desc[UR12]",
                       "UTMALDG.4D [UR40], [UR10], desc[UR12]",
                       "@P2 BRA 0x70",
                       "EXIT")
        facts = sass_schedule.schedule_facts(sass)
        self.assertEqual(facts["tma_groups"], {"0x24008": 2, "0x24028": 4})
        self.assertEqual((facts["tma_per_k_tile"], facts["tma_per_v_tile"]), (2, 4))

    def test_unknown_promise_fails(self):
        facts = sass_schedule.schedule_facts(listing("EXIT"))
        self.assertIn("unknown schedule promise 'min_ex2_between_wait'",
                      sass_schedule.promise_failures(facts, {"min_ex2_between_wait": 1})[0])


class PlanSide(unittest.TestCase):
    CONFIG = """struct Config {
  static constexpr int kBlockQ = 128;
  static constexpr int kBlockKv = 176;
  static constexpr int kConsumers = 2;
};"""

    def test_exponentials_per_tile_from_the_config(self):
        # sm_90a: 2 warpgroups of 64 rows, 64 x 176 / 128 threads; sm_100a: a row per thread.
        self.assertEqual(compile_check.exponentials_per_tile(self.CONFIG, blackwell=False), 88)
        self.assertEqual(compile_check.exponentials_per_tile(self.CONFIG, blackwell=True), 176)
        self.assertIsNone(compile_check.exponentials_per_tile("__global__ void k() {}", blackwell=False))

    def test_exponentials_per_tile_through_the_launcher_header(self):
        # The sm90a decode's Config names kBlockKv from its launcher header's namespace.
        with tempfile.TemporaryDirectory() as folder:
            kernel = os.path.join(folder, "x.sm90a.cu")
            with open(os.path.join(folder, "x.sm90a.h"), "w", encoding="utf-8") as f:
                f.write("namespace x_sm90a {\ninline constexpr int kBlockKv = 128;\n}\n")
            text = ('#include "x.sm90a.h"\nstruct Config {\n  static constexpr int kBlockKv = x_sm90a::kBlockKv;\n'
                    '  static constexpr int kBlockQ = 64;\n  static constexpr int kConsumers = 1;\n};')
            self.assertIsNone(compile_check.exponentials_per_tile(text, blackwell=False))
            self.assertEqual(compile_check.exponentials_per_tile(compile_check.with_own_headers(kernel, text),
                                                                 blackwell=False), 64)
            # The kernel's own value comes before the header's.
            own = text.replace("x_sm90a::kBlockKv", "176")
            self.assertEqual(compile_check.exponentials_per_tile(compile_check.with_own_headers(kernel, own),
                                                                 blackwell=False), 88)

    def test_promise_read_from_the_manifest(self):
        with tempfile.TemporaryDirectory() as folder:
            kernel = os.path.join(folder, "x.sm90a.cu")
            self.assertIsNone(compile_check.schedule_promise(kernel))  # no MANIFEST.json
            with open(os.path.join(folder, "MANIFEST.json"), "w", encoding="utf-8") as f:
                json.dump({"files": {"x.sm90a.cu": {"role": "kernel", "schedule": PROMISE},
                                     "x.sm90a.h": {"role": "launcher"}}}, f)
            self.assertEqual(compile_check.schedule_promise(kernel), PROMISE)
            self.assertIsNone(compile_check.schedule_promise(os.path.join(folder, "x.sm90a.h")))


if __name__ == "__main__":
    unittest.main()
