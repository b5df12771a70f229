#!/usr/bin/env python3
"""The synchronization mutation score of a CUDA kernel on ptxemu (verify/cuda/emu).

Runs the kernel's harness (an sm90a_emu_run_* or sm90a_emu_backward_run_* program: the GPU
harness linked with ptxemu's runtime stand-in) once to take the PTX of the module under test
(KGEN_EMU_DUMP_PTX), then once per mutant: a copy of that PTX with one synchronization
instruction removed or shifted, run in place of the original (KGEN_EMU_PTX). A mutant is killed
when the run fails: the emulator reports a hazard (a read of bytes a copy still writes, a missing
fence, an over-arrival, a deadlock...) or the outputs leave the float64 reference's tolerance. A
survivor is a synchronization the kernel did not need on this input, or one the emulator cannot
see the absence of; docs/cuda-emulation.md lists the expected ones with why they are benign.

The mutations, per PTX line:
  mbarrier.try_wait          the wait succeeds at once (its predicate set true)
  mbarrier.arrive            removed
  mbarrier.arrive.expect_tx  the arrival kept, its transaction bytes dropped
  mbarrier.expect_tx         removed
  wgmma.fence / commit_group removed
  wgmma.wait_group N         N + 1 (one group more may be in flight)
  fence.proxy.async          removed
  fence.mbarrier_init        removed
  bar.sync / bar.arrive      removed (barrier.* likewise)
  cp.async.bulk.commit_group removed
  cp.async.bulk.wait_group N N + 1
  tcgen05.wait / commit / fence::* removed

  sync_mutants.py HARNESS SPEC.json --module SUBSTRING [--min-score 0.9] [--report OUT.json]
                  [--timeout 120] [-j N]

--module picks the dumped module whose kernel name contains SUBSTRING (forward_kernel,
backward_kernel, ...). Exit status 0 when the score reaches --min-score, 1 otherwise, 2 for a
usage error or when the unmutated kernel fails.
"""

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

RULES = [
    # (name, pattern, replacement): the replacement is applied to the whole line.
    ("try_wait skipped", re.compile(r"^(\s*)mbarrier\.try_wait[^\s]*\s+([^,\s]+),.*$"), r"\1setp.eq.u32 \2, 0, 0;"),
    ("expect_tx dropped", re.compile(r"^(\s*)mbarrier\.arrive\.expect_tx(\.[^\s]*)\s+([^,]+),\s*(\[[^\]]+\]),.*;"),
     r"\1mbarrier.arrive\2 \3, \4;"),
    ("arrive removed", re.compile(r"^\s*mbarrier\.arrive(?!\.expect_tx)[^;]*;"), "// mutant: removed"),
    ("expect_tx removed", re.compile(r"^\s*mbarrier\.expect_tx[^;]*;"), "// mutant: removed"),
    ("wgmma.fence removed", re.compile(r"^\s*wgmma\.fence[^;]*;"), "// mutant: removed"),
    ("wgmma.commit_group removed", re.compile(r"^\s*wgmma\.commit_group[^;]*;"), "// mutant: removed"),
    ("wgmma.wait_group shifted", re.compile(r"^(\s*wgmma\.wait_group[^\s]*\s+)(\d+)\s*;"), None),
    ("fence.proxy.async removed", re.compile(r"^\s*fence\.proxy\.async[^;]*;"), "// mutant: removed"),
    ("fence.mbarrier_init removed", re.compile(r"^\s*fence\.mbarrier_init[^;]*;"), "// mutant: removed"),
    ("barrier removed", re.compile(r"^\s*(bar|barrier)\.(sync|arrive|cta\.sync|cta\.arrive)[^;]*;"), "// mutant: removed"),
    ("bulk commit_group removed", re.compile(r"^\s*cp\.async\.bulk\.commit_group[^;]*;"), "// mutant: removed"),
    ("bulk wait_group shifted", re.compile(r"^(\s*cp\.async\.bulk\.wait_group[^\s]*\s+)(\d+)\s*;"), None),
    ("tcgen05 sync removed", re.compile(r"^\s*tcgen05\.(wait|commit|fence)[^;]*;"), "// mutant: removed"),
]


def mutants(lines):
    """(line index, rule name, mutated line) for every synchronization site."""
    for index, line in enumerate(lines):
        for name, pattern, replacement in RULES:
            match = pattern.match(line)
            if not match:
                continue
            if replacement is None:  # a count shifted by one
                mutated = f"{match.group(1)}{int(match.group(2)) + 1};"
            else:
                mutated = pattern.sub(replacement, line)
            yield index, name, mutated
            break


def run(harness, spec, env_extra, timeout):
    env = dict(os.environ, **env_extra)
    try:
        done = subprocess.run([harness, spec], capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return "timeout", f"no result within {timeout} s"
    text = done.stdout + done.stderr
    finding = next((l for l in text.splitlines() if l.startswith("ptxemu:") or l.startswith("FAIL")), "")
    return ("pass" if done.returncode == 0 else "fail"), finding


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("harness")
    parser.add_argument("spec")
    parser.add_argument("--module", required=True)
    parser.add_argument("--min-score", type=float, default=0.9)
    parser.add_argument("--report")
    parser.add_argument("--timeout", type=int, default=120)
    parser.add_argument("-j", type=int, default=2)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        status, finding = run(args.harness, args.spec, {"KGEN_EMU_DUMP_PTX": folder}, args.timeout)
        if status != "pass":
            print(f"the unmutated kernel does not pass: {finding}")
            return 2
        modules = sorted(f for f in os.listdir(folder) if args.module in f)
        if len(modules) != 1:
            print(f"--module {args.module}: {len(modules)} dumped modules match ({', '.join(os.listdir(folder))})")
            return 2
        with open(os.path.join(folder, modules[0]), encoding="utf-8") as f:
            lines = f.read().split("\n")
        sites = list(mutants(lines))
        # Each mutant runs with a budget: a missing wait may turn a loop into a runaway one.
        budget = {"KGEN_EMU_MAX_INSTRUCTIONS": "200000000"}

        def one(site):
            index, rule, mutated = site
            copy = list(lines)
            copy[index] = mutated
            path = os.path.join(folder, f"mutant_{index}.ptx")
            with open(path, "w", encoding="utf-8") as f:
                f.write("\n".join(copy))
            status, finding = run(args.harness, args.spec, dict(budget, KGEN_EMU_PTX=path), args.timeout)
            os.remove(path)
            return {"line": index + 1, "rule": rule, "instruction": lines[index].strip(),
                    "killed": status != "pass", "finding": finding}

        with concurrent.futures.ThreadPoolExecutor(max_workers=args.j) as pool:
            results = list(pool.map(one, sites))

    killed = sum(r["killed"] for r in results)
    score = killed / len(results) if results else 0.0
    print(f"{killed} of {len(results)} synchronization mutants killed ({100 * score:.1f}%) in {modules[0]}")
    for r in results:
        if not r["killed"]:
            print(f"  survivor: PTX line {r['line']} ({r['rule']}): {r['instruction']}")
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            json.dump({"module": args.module, "killed": killed, "total": len(results), "score": score,
                       "mutants": results}, f, indent=1)
            f.write("\n")
    if score < args.min_score:
        print(f"FAIL: score {score:.3f} below {args.min_score}")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
