#!/usr/bin/env python3
"""Runs a generated CUDA kernel on ptxemu (verify/cuda/emu) against the float64 reference.

The programs are kgen's GPU harnesses, unmodified, linked with ptxemu's CUDA runtime stand-in
(built as <target>_emu_run_<name> and sm90a_emu_backward_run_<name>, verify/cuda/CMakeLists.txt):
the kernel executes on the CPU from its own PTX. This script picks what to run, runs the forward
and (where the spec has one) the backward, and writes the facts of the receipt's cpu_emulation
check (docs/receipts.md): what ran, with which seed, how many CTAs and instructions, the errors
against the tolerances, pass or fail. Nothing here is a hardware run, and the facts say so.

Small grids run whole. A larger sm90a grid runs a sample of CTAs that produces the first
(batch, kv head) slice completely -- every output the harness then compares, including dq,
which the backward accumulates across every kv block of the slice -- through KGEN_EMU_CTAS
filters on the grid layouts of runtime/cuda/work.cuh, runtime/sm90a/backward/work.cuh and
runtime/sm90a/backward/preprocess.cuh. A filter that missed a CTA leaves its outputs at the
harness's NaN poison, so a wrong sample fails; it cannot pass silently.

A decode spec's sm90a kernel (and its combine) runs in sm90a_emu_decode_run_<name>, the decode
harness, over every kv_lens case (verify/cuda/decode_harness.h). A larger decode grid runs the CTAs
of kv head 0 of every sequence -- every split and q tile of them, and their combine -- and the
harness compares those rows only (--kv-heads 1); a missed CTA leaves its rows at the poison.

An sm100a kernel is persistent: each CTA walks work items (q blocks) of every slice, so no CTA
subset completes a slice. A larger sm100a grid runs its first SM100A_SAMPLED_CTAS CTAs
("work-items"), whose items are q blocks written whole; the harness compares the q blocks the
kernel touched (--touched-blocks), and this script holds their count to the items those CTAs
own (every item writes its block, an item with no tile its zeros): a block written partly, or
one too few or too many, fails.

  emulate.py SPEC.json --target sm90a|sm100a --harness-dir DIR --generated DIR
             [--seed N] [--sample auto|all|first-slice|work-items|first-kv-head] [--report FACTS.json]

Exit status: 0 every run passed, 1 one failed, 2 usage error or a missing harness.
"""

import argparse
import glob
import json
import math
import os
import re
import subprocess
import sys
import tempfile

# A grid of more forward CTAs than this runs the first slice only (with --sample auto).
WHOLE_GRID_CTAS = 64
# An sm100a kernel with more work items than this runs a sample of CTAs with --sample auto
# (splash's 512 take about 5 minutes whole; the next checked-in spec has 1,024).
SM100A_MAX_WORK_ITEMS = 768
# The CTAs of an sm100a work-items sample: the first two, which take the heaviest q blocks first.
SM100A_SAMPLED_CTAS = 2
STATEMENT = "executed on the CPU from the kernel's PTX by ptxemu (verify/cuda/emu); not a hardware run"


def read_stats(path):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def kernel_role(mangled):
    for role in ("preprocess_kernel", "postprocess_kernel", "backward_kernel", "forward_kernel", "decode_kernel",
                 "combine_kernel"):
        if role in mangled:
            return role[: -len("_kernel")]
    return mangled


def run(program, spec, args, env_extra, harness_dir):
    """Runs one harness; returns (passed, its receipt facts, per-kernel stats, output)."""
    with tempfile.TemporaryDirectory() as folder:
        receipt, stats = os.path.join(folder, "receipt.json"), os.path.join(folder, "stats.jsonl")
        env = dict(os.environ, KGEN_EMU_STATS=stats, **env_extra)
        done = subprocess.run([program, spec, "--receipt", receipt] + args, capture_output=True, text=True, env=env)
        output = done.stdout + done.stderr
        facts = json.load(open(receipt, encoding="utf-8")) if os.path.exists(receipt) else {}
        kernels = [
            {"kernel": kernel_role(s["kernel"]), "ctas_run": s["ctas_run"], "ctas_in_grid": s["ctas_in_grid"],
             "warp_instructions": s["warp_instructions"], "thread_instructions": s["thread_instructions"],
             "seconds": s["seconds"]}
            for s in read_stats(stats)
        ]
    # The harness's own record, less what depends on this machine.
    facts.pop("device", None)
    facts.pop("time", None)
    facts["command"] = " ".join([os.path.relpath(program, harness_dir)] + [spec] + args)
    return done.returncode == 0, facts, kernels, output


def runtime_constant(name):
    """An integer constant of runtime/sm90a/backward/preprocess.cuh."""
    header = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "runtime", "sm90a", "backward",
                          "preprocess.cuh")
    with open(header, encoding="utf-8") as f:
        return int(re.search(r"constexpr int " + name + r" = (\d+);", f.read()).group(1))


def backward_filters(spec, generated, group):
    """KGEN_EMU_CTAS entries producing the first (batch, kv head) group of the backward."""
    name, shape = spec["name"], spec["shape"]
    source = os.path.join(generated, name, f"{name}.sm90a.backward.cu")
    with open(source, encoding="utf-8") as f:
        q_padded = int(re.search(r"kQPadded = (\d+);", f.read()).group(1))
    # The runtime owns the block sizes: a warp per row in the preprocess, a column pair per
    # thread in the postprocess.
    preprocess_rows_per_cta = runtime_constant("kPreprocessThreads") // 32
    postprocess_threads = runtime_constant("kPostprocessThreads")
    pairs = shape["head_dim"] // 2
    preprocess_ctas = group * q_padded // preprocess_rows_per_cta
    postprocess_ctas = math.ceil(group * shape["q_len"] * pairs / postprocess_threads)
    return [f"preprocess_kernel:x=0-{preprocess_ctas - 1}", f"postprocess_kernel:x=0-{postprocess_ctas - 1}",
            "backward_kernel:x=0-0", f"forward_kernel:x=0-{group - 1}"]


def decode_plan(spec, generated, sample):
    """What runs for a decode spec: the decode harness on the whole grid or on kv head 0."""
    name, shape = spec["name"], spec["shape"]
    kv_heads = shape.get("kv_heads", shape["q_heads"])
    # The grid the plan launches, as the kernel's MANIFEST.json entry records it.
    with open(os.path.join(generated, name, "MANIFEST.json"), encoding="utf-8") as f:
        entries = json.load(f)["files"][f"{name}.sm90a.cu"]["interface"]["entry_points"]
    grid = next(e["launch"]["grid"] for e in entries if e["name"].endswith("::decode_kernel"))
    if sample == "auto":
        sample = "all" if math.prod(grid) <= WHOLE_GRID_CTAS or kv_heads == 1 else "first-kv-head"
    if sample == "all":
        return sample, [], {}
    # The decode grid is (split x q tile, kv head, batch); the combine's (kv head, batch).
    return sample, ["--kv-heads", "1"], {"KGEN_EMU_CTAS": "decode_kernel:y=0-0;combine_kernel:x=0-0"}


def owned_blocks_checked(facts, kernels, work_items):
    """Whether a work-items sample compared exactly the q blocks its CTAs own: CTA c walks items
    c, c + ctas, ... (runtime/sm100a/forward/schedule.cuh), and each writes its block whole."""
    launch = next((k for k in kernels if k["kernel"] == "forward"), None)
    if launch is None:
        print("FAIL: the emulator recorded no forward launch")
        return False
    ctas, ran = launch["ctas_in_grid"], launch["ctas_run"]
    owned = sum(len(range(c, work_items, ctas)) for c in range(ran))
    checked = facts.get("check", {}).get("blocks_checked")
    if checked != owned:
        print(f"FAIL: the {ran} sampled CTAs of {ctas} own {owned} work items, but {checked} q blocks were written")
        return False
    print(f"the {ran} sampled CTAs of {ctas} wrote the {owned} q blocks of the work items they own")
    return True


# What each role's harness program is built from besides its kernel (verify/cuda/CMakeLists.txt):
# the inputs it draws and the checks it makes (a harness older than these would run the old
# inputs or checks). The forward and backward programs link one library of all three harnesses.
_HARNESS_LIBRARY = ["verify/verification_inputs.cc", "verify/cuda/harness.cc", "verify/cuda/backward_harness.cc",
                    "verify/cuda/document_tiles_check.cc"]
HARNESS_SOURCES = {"forward": _HARNESS_LIBRARY, "backward": _HARNESS_LIBRARY,
                   "decode": ["verify/verification_inputs.cc", "verify/cuda/decode_harness.cc"]}


def changed_since_built(program, sources):
    """The kernel and harness sources written after the harness program was linked: a harness
    built before its kernel last changed would emulate the old kernel's PTX, one built before its
    own sources changed the old inputs or checks (a receipt would record either)."""
    built = os.path.getmtime(program)
    return sorted(source for source in sources if os.path.getmtime(source) > built)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("spec")
    parser.add_argument("--target", required=True, choices=["sm90a", "sm100a"])
    parser.add_argument("--harness-dir", required=True)
    parser.add_argument("--generated", required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sample", default="auto", choices=["auto", "all", "first-slice", "work-items", "first-kv-head"])
    parser.add_argument("--report")
    args = parser.parse_args()

    spec = json.load(open(args.spec, encoding="utf-8"))
    name, shape, target = spec["name"], spec["shape"], args.target
    kv_heads = shape.get("kv_heads", shape["q_heads"])
    group = shape["q_heads"] // kv_heads
    block_q = spec["targets"][target].get("block_q", 128)
    forward_ctas = shape.get("batch", 1) * shape["q_heads"] * math.ceil(shape["q_len"] / block_q)
    sample = args.sample
    decode = spec.get("kind") == "attention_decode"
    if decode:
        if target != "sm90a" or sample in ("first-slice", "work-items"):
            parser.error("a decode kernel runs on sm90a, whole or on --sample first-kv-head")
        sample, options, extra = decode_plan(spec, args.generated, sample)
    elif sample == "first-kv-head":
        parser.error("--sample first-kv-head is for decode kernels")
    elif target == "sm100a":
        # forward_ctas counts the work items here: persistent CTAs walk them.
        if sample == "first-slice":
            parser.error("an sm100a kernel's persistent CTAs complete no slice: use --sample work-items")
        if sample == "auto":
            sample = "all" if forward_ctas <= SM100A_MAX_WORK_ITEMS else "work-items"
    elif sample == "work-items":
        parser.error("--sample work-items is for the persistent sm100a kernels")
    elif sample == "auto":
        sample = "all" if forward_ctas <= WHOLE_GRID_CTAS else "first-slice"

    seed_env = {"KGEN_EMU_SEED": str(args.seed)}
    runs = {}
    passed = True
    forward = os.path.join(args.harness_dir, f"{target}_emu_run_{name}")
    backward = os.path.join(args.harness_dir, f"sm90a_emu_backward_run_{name}")
    plan = [("forward", forward, [], {})]
    if decode:
        plan = [("decode", os.path.join(args.harness_dir, f"sm90a_emu_decode_run_{name}"), options, extra)]
    if sample == "first-slice":
        plan[0] = ("forward", forward, ["--slices", "1"], {"KGEN_EMU_CTAS": f"forward_kernel:x=0-{group - 1}"})
    if sample == "work-items":
        plan[0] = ("forward", forward, ["--touched-blocks", str(block_q)],
                   {"KGEN_EMU_CTAS": f"forward_kernel:x=0-{SM100A_SAMPLED_CTAS - 1}"})
    if target == "sm90a" and spec.get("backward") and not decode:
        extra = {}
        options = []
        if sample == "first-slice":
            extra = {"KGEN_EMU_CTAS": ";".join(backward_filters(spec, args.generated, group))}
            options = ["--first-group", "1"]
        plan.append(("backward", backward, options, extra))
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    sources = glob.glob(os.path.join(args.generated, name, f"{name}.{target}*.cu"))
    for role, program, options, extra in plan:
        if not os.path.exists(program):
            print(f"{program} does not exist: make verify builds the emulated harnesses (target {target}_emu_harnesses)")
            return 2
        stale = changed_since_built(program, sources + [os.path.normpath(os.path.join(root, source))
                                                        for source in HARNESS_SOURCES[role]])
        if stale:
            print(f"{program} is older than {', '.join(stale)}: rebuild it first (make verify builds "
                  f"the emulated harnesses, target {target}_emu_harnesses)")
            return 2
        ok, facts, kernels, output = run(program, args.spec, ["--seed", str(args.seed)] + options,
                                         dict(seed_env, **extra), args.harness_dir)
        sys.stdout.write(output)
        if sample == "work-items" and role == "forward":
            ok = ok and owned_blocks_checked(facts, kernels, forward_ctas)
        passed = passed and ok
        facts["passed"] = ok
        facts["kernels"] = kernels
        if "KGEN_EMU_CTAS" in extra:
            facts["cta_sample"] = extra["KGEN_EMU_CTAS"]
        runs[role] = facts
        if not ok and role == "forward":
            break  # the backward runs on the forward's residuals

    if args.report:
        for facts in runs.values():  # times differ from run to run: the receipt keeps counts
            for k in facts["kernels"]:
                k.pop("seconds", None)
        report = {"executed": STATEMENT, "emulator": "ptxemu", "seed": args.seed, "sample": sample,
                  "device_model": "H100 (sm_90a, 132 SMs)" if target == "sm90a" else "B200 (sm_100a, 148 SMs)",
                  "runs": runs, "passed": passed}
        with open(args.report, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2, sort_keys=True)
            f.write("\n")
    print(f"{name} {target} on ptxemu: {'PASS' if passed else 'FAIL'} ({sample})")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
