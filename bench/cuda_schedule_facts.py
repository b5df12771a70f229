#!/usr/bin/env python3
"""The schedule facts of every generated sm90a (forward, backward, decode) and sm100a kernel, as the
table of docs/benchmarks.md: each kernel through verify/cuda/compile_check.py (nvcc's output
comes from its content cache when the kernel is unchanged: seconds a kernel), its report's
"schedule" (verify/cuda/sass_schedule.py) in one row. Read from the SASS; nothing runs.

  bench/cuda_schedule_facts.py [--generated DIR] [--jobs N]
"""
import argparse
import concurrent.futures
import glob
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "verify", "cuda"))

import tune_measure  # noqa: E402  pylint: disable=wrong-import-position  (the tools' paths)


def check(kernel, folder):
    tools = tune_measure.tools()
    report = os.path.join(folder, os.path.basename(kernel) + ".json")
    arch = "sm_100a" if kernel.endswith(".sm100a.cu") else "sm_90a"
    run = subprocess.run([sys.executable, os.path.join(ROOT, "verify", "cuda", "compile_check.py"), kernel,
                          "--arch", arch, "--nvcc", tools["nvcc"], "--cutlass-include", tools["cutlass_include"],
                          "--cuobjdump", tools["cuobjdump"], "--runtime-include", tools["runtime_include"],
                          "--report", report], capture_output=True, text=True)
    if not os.path.isfile(report):
        raise RuntimeError(f"{kernel}: no report\n{run.stdout}{run.stderr}")
    with open(report, encoding="utf-8") as f:
        return json.load(f)


def row(report):
    s = report["schedule"]
    name = report["kernel"].removesuffix(".cu")
    tile = s["exponentials_per_tile"]
    if s["mma"] == "HGMMA" and tile is not None:
        fewest, most = s["ex2_between_waits"], s["ex2_between_waits_most"]
        between = "none" if fewest is None else (str(fewest) if fewest == most else f"{fewest}-{most}")
        between = f"{between} / {tile}"
    else:
        between = "—"
    ex2 = f"{s['ex2_per_iteration']}" + (f" / {tile}" if tile is not None else "")
    if s["tma_per_k_tile"] is not None or s["tma_per_v_tile"] is not None:
        tma = f"{s['tma_per_k_tile']} / {s['tma_per_v_tile']}"
    else:
        tma = "per group: " + " / ".join(str(v) for v in s["tma_groups"].values())
    registers = f"{report['registers']} ({'/'.join(str(n) for n in s['setmaxnreg'])})"
    barriers = f"{s['bar_sync']} / {s['bar_arv']} ({s['bar_sync_in_main_loop']} / {s['bar_arv_in_main_loop']})"
    return (f"| {name} | {between} | {ex2} | {tma} | {s['mma']} {s['mma_per_iteration']} | {registers} | "
            f"{barriers} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--generated", default=os.path.join(ROOT, "generated"))
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    kernels = sorted(glob.glob(os.path.join(args.generated, "*", "*.sm90a.cu")) +
                     glob.glob(os.path.join(args.generated, "*", "*.sm90a.backward.cu")) +
                     glob.glob(os.path.join(args.generated, "*", "*.sm100a.cu")))
    with tempfile.TemporaryDirectory() as folder, concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        reports = list(pool.map(lambda k: check(k, folder), kernels))
    print("| kernel | EX2 between the waits / tile's per thread | MUFU.EX2 per iteration / tile's | "
          "UTMALDG per K / V tile | products per iteration | registers (setmaxnreg) | "
          "named BAR.SYNC / BAR.ARV (in the main loop) |")
    print("|---|---|---|---|---|---|---|")
    for report in reports:
        print(row(report))
    failed = [r["kernel"] for r in reports if not r["passed"]]
    if failed:
        print("failed: " + ", ".join(failed), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
